"""The large-neighbourhood search of `odd` (odd.lns) and the model surgery it uses.

The LNS must never return a worse diagram than it was given, must report the
objective its diagram really has on the training data, must stop promptly, and,
with the full MILP after it, must reach the optimum the full MILP alone reaches.
"""

import time

import numpy as np
import pytest
from cancel_timing import cancelled_after
from conftest import DATASETS

from engine.data.csv_reader import parse_text, read_table
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.model.diagram import Diagram
from engine.solvers.odd.common import SideConstraints, Skeleton
from engine.solvers.odd.heuristic import OddHeuristic
from engine.solvers.odd.lns import OddLns, neighbourhoods
from engine.solvers.odd.milp import FIXED, OPEN, REWIRED, SHIFTED, OddMilp, wait_idle
from engine.solvers.protocol import Status
from engine.training import train


@pytest.fixture(scope="module")
def wine():
    path = DATASETS / "odd" / "wine.csv"
    if not path.exists():
        pytest.skip("the shared datasets folder is absent")
    return prepare(read_table(path), PrepOptions())


def built_milp(data, text, alpha=0.01, multivariate=False, tree=False) -> OddMilp:
    milp = OddMilp(data.X, data.y, data.w, data.n_classes, Skeleton.parse(text, 0, tree),
                   alpha, multivariate, SideConstraints())
    milp.build()
    return milp


def objective_of(milp: OddMilp):
    """Objective (18) of a diagram, recomputed on the training data."""
    return lambda d: (d.error(milp.X, milp.y, milp.w)
                      + milp.penalty * max(d.n_internal - 1, 0))


def poor_stump(data, feature: int) -> Diagram:
    """A root splitting `feature` at its median, its sides to classes 0 and 1."""
    return Diagram.build([0], [feature], np.zeros((1, data.n_features)),
                         [float(np.median(data.X[:, feature]))], [1], [2], data.prep,
                         data.X, data.y, data.w)


# ------------------------------------------------------- neighbourhoods
def test_neighbourhoods_open_windows_and_rewire_the_layer_above():
    hoods = neighbourhoods(Skeleton((1, 2, 2), False))
    assert hoods[0].tolist() == [SHIFTED] * 5
    assert [h.tolist() for h in hoods[1:]] == [
        [FIXED, REWIRED, REWIRED, OPEN, OPEN], [REWIRED, OPEN, OPEN, FIXED, FIXED],
        [OPEN, FIXED, FIXED, FIXED, FIXED], [REWIRED, OPEN, OPEN, OPEN, OPEN],
        [OPEN, OPEN, OPEN, FIXED, FIXED]]


def test_restrict_keeps_the_start_feasible_and_release_restores_the_model(wine):
    heuristic = OddHeuristic(wine.X, wine.y, wine.w, wine.n_classes,
                             Skeleton.parse("1-2-2", 0, False), 0.01, SideConstraints(), 0)
    diagram, _, _ = heuristic.run(wine.prep, 5, 60, lambda: False)
    milp = built_milp(wine, "1-2-2")
    start = milp.warm_start(diagram)
    original = milp.highs.getLp()
    for freedom in neighbourhoods(milp.skeleton):
        milp.restrict(start, freedom)
        lp = milp.highs.getLp()
        assert np.all(np.asarray(lp.col_lower_) <= start + 1e-12)
        assert np.all(start <= np.asarray(lp.col_upper_) + 1e-12)
        assert np.all(np.asarray(lp.row_upper_)[milp.symmetry_rows] == np.inf)
        milp.release()
    restored = milp.highs.getLp()
    for name in ("col_lower_", "col_upper_", "row_lower_", "row_upper_"):
        np.testing.assert_array_equal(getattr(restored, name), getattr(original, name))


def test_warm_start_encodes_decoded_multivariate_diagrams(wine):
    milp = built_milp(wine, "1-2", multivariate=True)
    outcome = milp.solve(5, lambda: False)
    diagram = milp.decode(outcome.values, wine.prep)
    assert any(diagram.terms(k) for k in range(diagram.n_internal))
    start = milp.warm_start(diagram)
    assert start is not None
    assert float(milp.cost @ start) == pytest.approx(objective_of(milp)(diagram), abs=1e-9)
    wait_idle(30)


# -------------------------------------------------------------- search
@pytest.mark.parametrize("multivariate", [False, True])
def test_lns_improves_a_poor_diagram_and_reports_its_true_objective(wine, multivariate):
    milp = built_milp(wine, "1-2", multivariate=multivariate)
    objective = objective_of(milp)
    start = poor_stump(wine, 0)
    published = []
    outcome = OddLns(milp, wine.prep, objective).run(start, 4, lambda: False,
                                                     published.append)
    assert outcome.improvements >= 1 and published
    assert outcome.objective < objective(start) - 1
    assert outcome.objective == pytest.approx(objective(outcome.diagram), abs=1e-9)
    values = [objective(d) for d in published]
    assert values == sorted(values, reverse=True) and values[-1] == outcome.objective
    assert milp.warm_start(outcome.diagram) is not None
    wait_idle(30)


def test_solver_lns_is_never_worse_than_the_heuristic(wine):
    """10 s: with 4 s, a loaded fresh-clone run once spent them all before the MILP
    step (no LNS solve at all)."""
    result = train(wine, "odd", {"depth": 3, "heuristic_time": 0.5, "milp_mode": "lns"},
                   time_limit=10)
    stats = result.stats
    assert stats.get("lns_solves", 0) >= 1, stats.get("milp_status")
    assert stats["lns_objective"] <= stats["heuristic_objective"] + 1e-9
    assert stats["objective"] <= stats["lns_objective"] + 1e-9
    penalty = Skeleton.parse("", 3, False).penalty(0.01, wine.w.sum())
    assert stats["objective"] == pytest.approx(
        result.tree.error(wine.X, wine.y, wine.w) + penalty * (result.tree.n_internal - 1))
    assert result.train_error == result.tree.error(wine.X, wine.y, wine.w)
    assert result.status in (Status.OPTIMAL, Status.TIME_LIMIT)
    wait_idle(30)


def test_a_stop_during_the_lns_returns_within_half_a_second(wine):
    milp = built_milp(wine, "1-2-4-8")
    stop_at = time.monotonic() + 0.6
    outcome = OddLns(milp, wine.prep, objective_of(milp)).run(
        poor_stump(wine, 0), None, lambda: time.monotonic() >= stop_at, lambda d: None)
    assert time.monotonic() - stop_at < 0.5
    assert outcome.stopped
    assert outcome.objective == pytest.approx(objective_of(milp)(outcome.diagram), abs=1e-9)
    wait_idle(30)


def test_cancel_during_the_lns_gives_a_valid_diagram(wine):
    result, late, where = cancelled_after(1.5, lambda monitor: train(
        wine, "odd", {"skeleton": "1-2-4-8", "heuristic_time": 0.3, "milp_mode": "lns"},
        monitor=monitor))
    assert late < 0.5, where
    assert result.status == Status.CANCELLED and not result.optimal
    assert result.stats["milp_status"].startswith("not run")
    assert result.tree.error(wine.X, wine.y, wine.w) == result.train_error
    wait_idle(30)


def tiny_table(seed: int, rows: int) -> str:
    rng = np.random.default_rng(seed)
    lines = ["f0,f1,f2,label"]
    for values, label in zip(rng.integers(0, 4, (rows, 3)), rng.integers(0, 2, rows)):
        lines.append(",".join(map(str, values)) + f",c{label}")
    return "\n".join(lines)


@pytest.mark.parametrize("seed,rows,skeleton,tree,alpha", [
    (0, 8, "1-2", False, 0.1), (1, 10, "1-2", False, 0.0), (2, 12, "1-2", False, 0.5),
    (3, 10, "1-2", True, 0.1), (4, 12, "1-2", False, 0.01)])
def test_lns_then_full_milp_reaches_the_full_milps_optimum(seed, rows, skeleton, tree, alpha):
    data = prepare(parse_text(tiny_table(seed, rows)), PrepOptions(target="label"))
    objectives = {}
    for mode in ("full", "lns"):   # with a time limit: the default budget may be short
        result = train(data, "odd", {"skeleton": skeleton, "tree": tree, "alpha": alpha,
                                     "restarts": 1, "milp_mode": mode}, time_limit=60)
        assert result.optimal and result.status == Status.OPTIMAL
        objectives[mode] = result.stats["objective"]
    assert objectives["lns"] == pytest.approx(objectives["full"], abs=1e-6)
