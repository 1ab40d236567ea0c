"""The `odd` solver: heuristic, MILP (checked against enumeration), guard rails, CLI.

The MILP's optimum is compared with an exhaustive search over every diagram with
univariate splits on small skeletons and tiny 0/1 data, so a wrong constraint or
an invalid symmetry breaking (which would cut off the optimum) makes a test fail.
"""

import itertools
import json
import subprocess
import sys
import threading
import time
from functools import cache

import numpy as np
import pytest
from cancel_timing import cancelled_after
from conftest import DATASETS, ROOT

from engine.cli import main
from engine.data.columns import ColumnKind
from engine.data.csv_reader import parse_text, read_table
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.data.features import EQ, NUM, Feature
from engine.data.preprocessing import InputColumn, Preprocessing
from engine.errors import ParameterError
from engine.model import load_model
from engine.solvers import get_solver
from engine.solvers.monitor import Monitor
from engine.solvers.odd import milp as odd_milp
from engine.solvers.odd import parity_groups
from engine.solvers.odd.adapter import milp_seconds
from engine.solvers.odd.common import SideConstraints, Skeleton
from engine.solvers.odd.heuristic import OddHeuristic
from engine.solvers.odd.milp import OddMilp, wait_idle
from engine.solvers.protocol import Status
from engine.training import train
from engine.warmup import tiny_dataset


# ------------------------------------------------------------ enumeration
def brute_force(X, y, n_classes, widths, alpha, tree=False) -> float:
    """Least objective (18) (in rows) of any diagram with univariate splits.

    Layer by layer, every active node picks a split (`x_j <= t` for a threshold
    between two values of feature j, either way round, or everything to one side)
    and a distinct target for each side among the next layer's nodes (its heap
    children in a tree) and the class terminals.  An empty side goes to a terminal:
    an empty node only adds cost.
    """
    n, F = X.shape
    D, m = len(widths), sum(widths)
    starts = np.concatenate([[0], np.cumsum(widths)])
    penalty = alpha * n / (m - 1) if m > 1 else 0.0
    below_rows = [sum(1 << i for i in range(n) if X[i, j] <= t)
                  for j in range(F) for t in np.unique(X[:, j])[:-1]]
    class_rows = [sum(1 << i for i in range(n) if y[i] == c) for c in range(n_classes)]

    def wrong(rows, c):
        return (rows & ~class_rows[c]).bit_count()

    def targets(u, layer, side):
        terminals = [("t", c) for c in range(n_classes)]
        if layer == D - 1:
            return terminals
        if tree:
            return [("n", 2 * u + 1 + side)] + terminals
        return [("n", v) for v in range(starts[layer + 1], starts[layer + 2])] + terminals

    def options(u, layer, rows):
        sides = {(rows, 0)}
        for below in below_rows:
            a, b = rows & below, rows & ~below
            sides |= {(a, b), (b, a)}
        out = []
        for a, b in sides:
            for ta, tb in itertools.product(targets(u, layer, 0), targets(u, layer, 1)):
                if ta == tb or (a == 0 and ta[0] == "n") or (b == 0 and tb[0] == "n"):
                    continue
                cost, below = 0, {}
                for rows_side, t in ((a, ta), (b, tb)):
                    if t[0] == "t":
                        cost += wrong(rows_side, t[1])
                    else:
                        below[t[1]] = rows_side
                out.append((cost, below))
        return out

    @cache
    def solve(layer, incoming):
        if layer == D - 1:
            return sum(min(c for c, _ in options(u, layer, rows)) for u, rows in incoming)
        best = np.inf
        for combo in itertools.product(*[options(u, layer, rows) for u, rows in incoming]):
            cost, below = 0, {}
            for c, contributions in combo:
                cost += c
                for v, rows in contributions.items():
                    below[v] = below.get(v, 0) | rows
            cost += penalty * len(below)
            if cost < best:
                rest = solve(layer + 1, tuple(sorted(below.items()))) if below else 0
                best = min(best, cost + rest)
        return best

    return solve(0, ((0, (1 << n) - 1),))


def prep_for(X: np.ndarray, n_classes: int) -> Preprocessing:
    """Columns f0, f1, ...: 0/1 features when X is binary, else numeric ones."""
    binary = bool(np.isin(X, (0.0, 1.0)).all())
    kind = ColumnKind.BINARY if binary else ColumnKind.NUMERIC
    return Preprocessing("class", [f"c{k}" for k in range(n_classes)],
                         [InputColumn(f"f{j}", kind, 0.0) for j in range(X.shape[1])],
                         [Feature(f"f{j}", EQ, 1.0) if binary else Feature(f"f{j}", NUM)
                          for j in range(X.shape[1])])


def objective(diagram, X, y, w, skeleton, alpha) -> float:
    return (diagram.error(X, y, w)
            + skeleton.penalty(alpha, w.sum()) * max(diagram.n_internal - 1, 0))


CASES = [  # (seed, rows, features, values per feature, classes, widths, tree, alpha)
    (0, 10, 3, 2, 2, (1, 2), False, 0.0),
    (1, 10, 2, 2, 2, (1, 2, 2), False, 0.1),
    (2, 12, 2, 2, 2, (1, 2, 2), False, 0.0),
    (3, 10, 2, 2, 2, (1, 2, 4), True, 0.1),
    (4, 9, 2, 2, 3, (1, 2, 2), False, 0.5),
    (5, 10, 3, 2, 3, (1, 2), False, 0.1),
    (1, 10, 2, 5, 2, (1, 2, 2), False, 0.1),   # thresholds inside [0, 1]
    (16, 10, 2, 5, 2, (1, 2, 2), False, 0.1),
]


def check_against_enumeration(X, y, K, widths, tree, alpha) -> None:
    w = np.ones(len(y))
    skeleton = Skeleton(widths, tree)
    milp = OddMilp(X, y, w, K, skeleton, alpha, False, SideConstraints())
    milp.build()
    outcome = milp.solve(None, lambda: False)
    expected = brute_force(X, y, K, widths, alpha, tree)
    assert outcome.status == "optimal"
    assert outcome.objective == pytest.approx(expected, abs=1e-6)
    prep = prep_for(X, K)
    diagram = milp.decode(outcome.values, prep)
    assert objective(diagram, X, y, w, skeleton, alpha) == pytest.approx(expected, abs=1e-6)
    # the decoded diagram routes every row where the MILP's flows send it
    np.testing.assert_array_equal(diagram.predict(X), milp.terminal_classes(outcome.values))


@pytest.mark.parametrize("seed,n,F,levels,K,widths,tree,alpha", CASES)
def test_milp_optimum_equals_enumeration(seed, n, F, levels, K, widths, tree, alpha):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, (n, F)) / (levels - 1)
    y = rng.integers(0, K, n)
    check_against_enumeration(X, y, K, widths, tree, alpha)


def test_tree_optimum_with_one_subtree_under_each_child():
    """Every optimal tree here has one internal child under each child of the root.

    y = (f0 and f1 and f2) or (not f0 and f3 and not f2): a symmetry breaking that
    ordered tree nodes by in-degree, as (12) does for diagrams, would cut it off.
    """
    X = np.array(list(itertools.product([0, 1], repeat=4)), dtype=float)
    f = X.astype(bool)
    y = ((f[:, 0] & f[:, 1] & f[:, 2]) | (~f[:, 0] & f[:, 3] & ~f[:, 2])).astype(int)
    check_against_enumeration(X, y, 2, (1, 2, 4), True, 0.01)


def test_a_diagram_shares_nodes_where_a_tree_cannot():
    """Parity of three bits: 5 nodes in a 1-2-2 diagram, 7 in a tree."""
    X = np.array(list(itertools.product([0, 1], repeat=3)), dtype=float)
    y = (X.sum(axis=1) % 2).astype(int)
    w = np.ones(len(y))
    budget = SideConstraints(max_active=5)
    errors = {}
    for widths, tree in (((1, 2, 2), False), ((1, 2, 4), True)):
        milp = OddMilp(X, y, w, 2, Skeleton(widths, tree), 0.0, False, budget)
        milp.build()
        outcome = milp.solve(None, lambda: False)
        assert outcome.status == "optimal"
        errors[tree] = milp.decode(outcome.values, prep_for(X, 2)).error(X, y, w)
    assert errors[False] == 0 and errors[True] >= 1


# -------------------------------------------------------- model size
@pytest.mark.parametrize("split", ["univariate", "multivariate"])
@pytest.mark.parametrize("text,tree", [("1-2", False), ("1-2-3", False), ("1-2-4", True)])
def test_size_estimate_is_the_built_model(split, text, tree):
    data = tiny_dataset("none")
    group = data.X[:, 0] > np.median(data.X[:, 0])
    for constraints in (SideConstraints(), SideConstraints(3.0, 4, group, 0.1)):
        milp = OddMilp(data.X, data.y, data.w, 2, Skeleton.parse(text, 0, tree), 0.01,
                       split == "multivariate", constraints)
        size = milp.size()
        milp.build()
        lp = milp.highs.getLp()
        assert (size.columns, size.rows, size.nonzeros) == (
            lp.num_col_, lp.num_row_, len(lp.a_matrix_.value_))


# ---------------------------------------------------------- heuristic
def _heuristic(data, text="1-2-4", tree=False, constraints=None, seed=3):
    return OddHeuristic(data.X, data.y, data.w, data.n_classes,
                        Skeleton.parse(text, 0, tree), 0.01,
                        constraints or SideConstraints(), seed)


@pytest.fixture(scope="module")
def wine():
    path = DATASETS / "odd" / "wine.csv"
    if not path.exists():
        pytest.skip("the shared datasets folder is absent")
    return prepare(read_table(path), PrepOptions())


def test_heuristic_is_seeded_and_respects_the_skeleton(wine):
    runs = [_heuristic(wine, "1-2-2-2", seed=s).run(wine.prep, 20, 60, lambda: False)
            for s in (5, 5, 6)]
    assert runs[0][0].to_dict() == runs[1][0].to_dict()
    assert runs[0][2] == 20
    for diagram, value, _ in runs:
        assert [len(nodes) for nodes in diagram.layers] <= [1, 2, 2, 2][:diagram.depth]
        assert all(a != b for a, b in zip(diagram.left, diagram.right))
        assert value == pytest.approx(diagram.error(wine.X, wine.y, wine.w)
                                      + 0.01 * wine.w.sum() / 6 * (diagram.n_internal - 1))


def test_heuristic_tree_mode_never_shares_children(wine):
    diagram, _, _ = _heuristic(wine, "1-2-4-8", tree=True).run(wine.prep, 5, 60, lambda: False)
    heads = np.concatenate([diagram.left, diagram.right])
    internal = heads[heads < diagram.n_internal]
    assert len(internal) == len(set(internal.tolist()))


def test_heuristic_honours_min_flow_and_node_budget(wine):
    constraints = SideConstraints(min_flow=30, max_active=3)
    diagram, _, _ = _heuristic(wine, "1-2-4-4", constraints=constraints).run(
        wine.prep, 10, 60, lambda: False)
    assert constraints.violations(diagram, wine.X, wine.w) == []
    assert diagram.n_internal <= 3


def test_warm_start_is_feasible_and_costs_the_heuristic_objective(wine):
    for text, tree in (("1-2-2", False), ("1-2-4", True)):
        heuristic = _heuristic(wine, text, tree)
        diagram, value, _ = heuristic.run(wine.prep, 5, 60, lambda: False)
        milp = OddMilp(wine.X, wine.y, wine.w, wine.n_classes, heuristic.skeleton, 0.01,
                       False, SideConstraints())
        milp.build()
        start = milp.warm_start(diagram)
        assert start is not None and milp.violation(start) == 0.0
        assert float(milp.cost @ start) == pytest.approx(value)
        np.testing.assert_array_equal(milp.terminal_classes(start), diagram.predict(wine.X))


# ------------------------------------------------------------ solver
def test_result_is_never_worse_than_the_heuristic(wine):
    result = train(wine, "odd", {"depth": 3, "heuristic_time": 0.5}, time_limit=3)
    stats = result.stats
    assert stats["warm_start"] == "used"
    assert stats["objective"] <= stats["heuristic_objective"] + 1e-9
    assert result.train_error == result.tree.error(wine.X, wine.y, wine.w)
    assert 0 <= result.lower_bound <= result.train_error
    assert result.status in (Status.OPTIMAL, Status.TIME_LIMIT)


def test_time_limit_is_respected(wine):
    started = time.monotonic()
    result = train(wine, "odd", {"skeleton": "1-2-4-8", "heuristic_time": 0.3}, time_limit=1.5)
    assert time.monotonic() - started < 1.5 + 0.4
    assert result.status == Status.TIME_LIMIT and not result.optimal
    wait_idle(30)


def test_cancel_is_honoured_within_a_fifth_of_a_second(wine):
    """The solver's own latency (see `cancel_timing`): alone the test takes
    0.005-0.03 s."""
    result, late, where = cancelled_after(1.0, lambda monitor: train(
        wine, "odd", {"skeleton": "1-2-4-8", "heuristic_time": 0.3}, monitor=monitor))
    assert late < 0.2, where
    assert result.status == Status.CANCELLED
    assert result.tree.error(wine.X, wine.y, wine.w) == result.train_error
    wait_idle(30)


def random_milp(rows: int, depth: int) -> OddMilp:
    """The MILP of `rows` random rows (4 features, 3 classes): HiGHS proves nothing
    soon, and its presolve (which ignores interrupts) takes a fraction of a second."""
    rng = np.random.default_rng(0)
    milp = OddMilp(rng.random((rows, 4)).round(2), rng.integers(0, 3, rows), np.ones(rows),
                   3, Skeleton.parse("", depth, False), 0.01, False, SideConstraints())
    milp.build()
    return milp


def test_without_a_time_limit_the_milp_step_has_a_default_budget():
    """Without a time limit the MILP ran until HiGHS's proof: iris's fit never ended."""
    assert milp_seconds(1000, None) == 5 and milp_seconds(1000, 60.0) == float("inf")
    assert milp_seconds(10, None) == 1.5 and milp_seconds(10**6, None) == 30
    rng = np.random.default_rng(1)
    lines = ["a,b,c,label"] + [",".join(f"{v:.2f}" for v in row) + f",k{rng.integers(3)}"
                               for row in rng.random((100, 3))]
    data = prepare(parse_text("\n".join(lines)), PrepOptions())
    monitor = Monitor(None)
    timer = threading.Timer(30, monitor.cancel)   # ends the run if the default does not
    timer.start()
    result = train(data, "odd", {"depth": 3}, monitor=monitor)
    timer.cancel()
    assert result.status == Status.TIME_LIMIT and not result.optimal
    assert "default budget of 1.5 s" in result.stats["message"]
    assert monitor.elapsed() < 15 and result.stats["lns_seconds"] < 2
    assert result.train_error == result.tree.error(data.X, data.y, data.w)
    wait_idle(30)


def test_an_exception_during_the_milp_stops_highs():
    """A callback's exception (or Ctrl-C) used to leave HiGHS running, unstopped."""
    milp = random_milp(100, 3)

    def fail(values, objective, bound):
        raise RuntimeError("callback failed")

    with pytest.raises(RuntimeError):
        milp.solve(None, lambda: False, on_solution=fail)
    assert odd_milp._RUNNING and wait_idle(30)


LINGERING_HIGHS = """
import sys
import time
sys.path.insert(0, "tests")
from test_odd import odd_milp, random_milp

# Stopped at once, HiGHS goes on through its presolve after `solve` has returned.
assert random_milp(100, 3).solve(None, lambda: True).status == "interrupted"
assert odd_milp._RUNNING


class Finalizing:
    # Deleted while the interpreter finalizes (when `Thread.is_alive` no longer
    # tells): waits there for HiGHS to return into Python, if nothing joined it.
    def __del__(self, joined=odd_milp._RUNNING, clock=time.monotonic, sleep=time.sleep):
        deadline = clock() + 10
        while joined and clock() < deadline:
            sleep(0.02)


finalizing = Finalizing()
"""


def test_a_stopped_highs_run_never_aborts_the_process_at_exit():
    """`orchard fit --algo odd` died of SIGABRT ("terminate called without an active
    exception", exit 134) after printing its result when the time limit stopped a
    sub-MILP of the LNS: HiGHS, still ending, returned into Python while the
    interpreter finalized.  Here it does so whatever the timing, unless something
    waits for it before the finalization."""
    done = subprocess.run([sys.executable, "-c", LINGERING_HIGHS], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == "" and "terminate" not in done.stderr


def test_size_guard_returns_the_heuristic(wine):
    result = train(wine, "odd", {"depth": 3, "max_milp_nonzeros": 1000, "restarts": 3})
    assert "milp_skipped" in result.stats and "1,000" in result.stats["milp_skipped"]
    assert result.status == Status.FINISHED and not result.optimal
    assert result.train_error == result.stats["heuristic_error"]
    assert result.stats["milp_size"]["nonzeros"] > 1000


def best_stump_with_parity(data, group, tolerance) -> float:
    """Least error of a single split (or none) whose classes meet the parity bound."""
    constraints = SideConstraints(group=group, tolerance=tolerance)
    best = np.inf
    for j in range(data.n_features):
        values = np.unique(data.X[:, j])
        for t in np.concatenate([(values[:-1] + values[1:]) / 2, [values[-1]]]):
            left = data.X[:, j] <= t
            for a, b in itertools.permutations(range(data.n_classes), 2):
                predicted = np.where(left, a, b)
                if constraints.parity_gap(predicted, data.w, data.n_classes) <= tolerance + 1e-9:
                    best = min(best, data.w[predicted != data.y].sum())
    return best


@pytest.mark.parametrize("tolerance", [0.0, 0.2, 1.0])
def test_parity_constraint_gives_the_best_fair_split(tolerance):
    data = tiny_dataset("none")
    group = parity_groups(data, "member = yes")
    result = train(data, "odd", {"skeleton": "1", "parity_column": "member = yes",
                                 "parity_tolerance": tolerance})
    assert result.optimal and result.stats["constraints_met"]
    assert result.train_error == best_stump_with_parity(data, group, tolerance)
    assert SideConstraints(group=group, tolerance=tolerance).violations(
        result.tree, data.X, data.w) == []


def test_min_flow_and_node_budget_hold_in_the_milp_optimum():
    data = tiny_dataset("none")
    result = train(data, "odd", {"depth": 2, "min_flow": 10, "max_active_nodes": 2})
    assert result.optimal and result.stats["constraints_met"]
    diagram = result.tree
    assert diagram.n_internal <= 2
    assert all(diagram.value[k].sum() >= 10 for k in range(1, diagram.n_internal))


def test_parity_column_must_name_one_two_valued_feature():
    data = tiny_dataset("none")
    assert parity_groups(data, "member").sum() == 13  # the column gives one feature
    for bad in ("colour", "spend", "nothing"):
        with pytest.raises(ParameterError):
            parity_groups(data, bad)


def test_skeleton_text_and_defaults():
    assert Skeleton.parse("", 4, False).widths == (1, 2, 4, 8)
    assert Skeleton.parse("", 5, False).widths == (1, 2, 4, 8, 8)
    assert Skeleton.parse("", 5, True).widths == (1, 2, 4, 8, 16)
    assert Skeleton.parse(" 1-2-3-3 ", 9, False).widths == (1, 2, 3, 3)
    for bad in ("2-4", "1-4", "1-x", "1-2-0", "-"):
        with pytest.raises(ParameterError):
            Skeleton.parse(bad, 3, False)
    with pytest.raises(ParameterError):
        Skeleton.parse("1-2-2", 3, True)


def test_schema_and_warm_up_friendliness():
    odd = get_solver("odd")
    assert odd.proves_optimality and odd.needs == "any"
    assert odd.param("skeleton").kind == "text"
    started = time.monotonic()
    for binarize in ("none", "quantile:4"):
        assert train(tiny_dataset(binarize), "odd", {"depth": 2}).optimal
    assert time.monotonic() - started < 5


# ------------------------------------------------------------------ CLI
def test_cli_fit_and_predict_end_to_end(capsys, tmp_path, wine):
    path = DATASETS / "odd" / "wine.csv"
    model = tmp_path / "m.json"
    code = main(["fit", str(path), "--algo", "odd", "--depth", "2", "--time-limit", "5",
                 "--json", "--out", str(model), "--python", str(tmp_path / "m.py"),
                 "--sql", str(tmp_path / "m.sql"), "--rules", str(tmp_path / "r.txt"),
                 "--dot", str(tmp_path / "m.dot")])
    out, err = capsys.readouterr()
    assert code == 0, err
    summary = json.loads(out)
    assert summary["algorithm"] == "odd" and summary["depth"] <= 2
    assert summary["n_leaves"] >= 2 and summary["status"] in ("optimal", "time_limit")
    assert summary["incumbents"] and summary["incumbents"][-1][1] == summary["train_error"]
    assert "Rules, one per path" in (tmp_path / "r.txt").read_text()
    diagram = load_model(model)
    assert diagram.depth == summary["depth"]
    code = main(["predict", str(model), str(path), "--json"])
    prediction = json.loads(capsys.readouterr()[0])
    assert code == 0
    assert prediction["accuracy"] == pytest.approx(summary["train_accuracy"])
    wait_idle(30)
