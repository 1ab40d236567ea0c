"""`sat-depth` and `sat-size` (Avellaneda, AAAI-20): the clauses mean what they should,
the trees are consistent and minimal against an exhaustive search, the incremental
loop uses few rows, bad data is refused, stops are honoured, and the CLI runs them.

Size is counted as in the paper: every node, internal ones and leaves (2L - 1 for a
tree with L leaves), among the trees of minimum depth.
"""

import itertools
import json
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from optimal_trees import all_trees, cancelled_from_another_thread, dataset_from_arrays
from pysat.solvers import Solver as SatSolver

from engine.cli import main
from engine.errors import DataError
from engine.solvers import get_solver
from engine.solvers.monitor import Monitor
from engine.solvers.protocol import Status
from engine.solvers.sat.encoding import (
    LeafCounter,
    PerfectTree,
    counter_clauses,
    example_clauses,
    node_clauses,
)
from engine.training import default_binarization, train
from engine.warmup import warm_up

INF = float("inf")


# ------------------------------------------------------------------ reference answers
def least_leaves(X, y, depth):
    """Fewest leaves of a tree of depth <= `depth` classifying every row correctly
    (inf if none): a leaf when the rows are pure, else every feature at this node with
    the best subtrees of both sides; memoised on the set of rows."""
    memo = {}

    def best(rows, d):
        key = (rows.tobytes(), d)
        if key not in memo:
            if len(np.unique(y[rows])) <= 1:
                memo[key] = 1
            elif d == 0:
                memo[key] = INF
            else:
                memo[key] = min(best(rows[X[rows, f] == 0], d - 1)
                                + best(rows[X[rows, f] == 1], d - 1)
                                for f in range(X.shape[1]))
        return memo[key]

    return best(np.arange(len(y)), depth)


def minimum_depth_and_size(X, y):
    """(least depth of a consistent tree, least nodes of one at that depth)."""
    for depth in itertools.count():
        leaves = least_leaves(X, y, depth)
        if leaves < INF:
            return depth, 2 * leaves - 1


def enumerated_least_leaves(X, y, depth):
    """The same figure from the explicit list of every tree (tiny cases only)."""
    def leaves(tree, rows):
        if tree is None:
            return 1 if len(np.unique(y[rows])) <= 1 else INF
        f, t, left, right = tree
        go = X[rows, f] <= t
        return leaves(left, rows[go]) + leaves(right, rows[~go])

    rows = np.arange(len(y))
    return min(leaves(tree, rows) for tree in all_trees(X, depth))


def consistent_case(seed, rows=(6, 21), features=(3, 6), classes=(2, 4)):
    """Random 0/1 rows whose class is a function of the row (so consistent)."""
    rng = np.random.default_rng(seed)
    n, m, K = (int(rng.integers(*r)) for r in (rows, features, classes))
    X = (rng.random((n, m)) < rng.uniform(0.3, 0.7)).astype(np.uint8)
    _, group = np.unique(X, axis=0, return_inverse=True)
    y = rng.integers(0, K, group.max() + 1)[group.ravel()]
    return X, y, K


def test_the_exhaustive_search_is_what_enumerating_every_tree_gives():
    for seed in range(25):
        X, y, _ = consistent_case(seed, rows=(4, 9), features=(2, 4))
        for depth in (0, 1, 2):
            assert least_leaves(X, y, depth) == enumerated_least_leaves(X, y, depth), seed


# ------------------------------------------------------------------ the clauses
def satisfied(clauses, true_vars):
    return all(any((lit > 0) == (abs(lit) in true_vars) for lit in c) for c in clauses)


def assignment(tree, features, labels, x_vars, leaf):
    """True variables of a perfect tree (node q tests features[q-1], leaf v has class
    labels[v]) with one example placed at `leaf`."""
    true = {tree.f(q, int(features[q - 1])) for q in range(1, tree.n_nodes + 1)}
    true |= {tree.c(v, int(a)) for v, a in enumerate(labels) if a >= 0}
    bits = [(leaf >> (tree.depth - 1 - j)) & 1 for j in range(tree.depth)]
    return true | {int(x) for x, b in zip(x_vars, bits) if b}


@pytest.mark.parametrize("seed", range(30))
def test_an_example_satisfies_its_clauses_exactly_at_its_own_leaf(seed):
    rng = np.random.default_rng(seed)
    depth, m, K = int(rng.integers(0, 4)), int(rng.integers(1, 6)), int(rng.integers(2, 4))
    tree = PerfectTree(depth, m, K)
    features = rng.integers(0, m, tree.n_nodes)
    labels = rng.integers(-1, K, tree.n_leaves)
    row = rng.integers(0, 2, m)
    node = 1
    for _ in range(depth):
        node = 2 * node + int(row[features[node - 1]])
    reached = node - tree.n_leaves
    x_vars = np.arange(tree.first_free, tree.first_free + depth)
    cls = int(rng.integers(0, K))
    clauses = node_clauses(tree) + example_clauses(tree, x_vars, row, cls)
    assert len(clauses) - len(node_clauses(tree)) == tree.n_nodes * m + tree.n_leaves * K
    for leaf in range(tree.n_leaves):
        holds = satisfied(clauses, assignment(tree, features, labels, x_vars, leaf))
        assert holds == (leaf == reached and labels[reached] == cls), (leaf, reached)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_the_leaf_counter_allows_exactly_the_labelled_leaves(depth):
    rng = np.random.default_rng(depth)
    tree = PerfectTree(depth, 2, 3)
    counter = LeafCounter(tree, tree.first_free, tree.n_leaves)
    for _ in range(5):
        labels = rng.integers(-1, 3, tree.n_leaves)
        units = [[tree.c(v, a) if a == labels[v] else -tree.c(v, a)] for v in
                 range(tree.n_leaves) for a in range(3)]
        with SatSolver(name="minisat22", bootstrap_with=counter_clauses(counter) + units) as s:
            for bound in range(tree.n_leaves + 1):
                assert s.solve(assumptions=[counter.at_most(bound)]) == (
                    bound >= (labels >= 0).sum())


# ------------------------------------------------------------------ minimal trees
def check_consistent(result, data):
    """Error 0 on every row, and compacted: no leaf without rows or with rows of two
    classes, no split with an empty side, none between two leaves of one class."""
    tree = result.tree
    assert result.train_error == 0.0 and result.lower_bound == 0.0
    assert (tree.predict(data.X) == data.y).all()
    np.testing.assert_allclose(tree.value[0], np.bincount(data.y, weights=data.w,
                                                          minlength=data.n_classes))
    leaf = tree.feature < 0
    assert ((tree.value[leaf] > 0).sum(axis=1) == 1).all()
    for node in np.flatnonzero(~leaf):
        left, right = tree.left[node], tree.right[node]
        assert tree.value[left].sum() > 0 and tree.value[right].sum() > 0
        assert not (leaf[left] and leaf[right] and tree.label[left] == tree.label[right])


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6))
def test_sat_depth_finds_the_least_depth(seed):
    X, y, K = consistent_case(seed)
    data = dataset_from_arrays(X, y, np.ones(len(y)), K)
    depth, _ = minimum_depth_and_size(X, y)
    result = train(data, "sat-depth")
    check_consistent(result, data)
    assert result.status == Status.OPTIMAL and result.optimal
    assert result.tree.depth == depth == result.stats["depth_lower_bound"]
    assert 0 < result.stats["examples_used"] <= len(np.unique(X, axis=0)) or depth == 0


@pytest.mark.parametrize("size_solver, size_search", [("minisat22", "descending"),
                                                      ("maplesat", "binary")])
@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6))
def test_sat_size_finds_the_least_nodes_at_the_least_depth(size_solver, size_search, seed):
    """With the size search on its own solver (the default) or on the depth search's
    formula (same solver), descending or by halves, the size is the brute-force
    minimum."""
    X, y, K = consistent_case(seed)
    data = dataset_from_arrays(X, y, np.ones(len(y)), K)
    depth, nodes = minimum_depth_and_size(X, y)
    streamed = []
    monitor = Monitor(on_incumbent=lambda tree, t, e, lb: streamed.append((tree, e)))
    result = train(data, "sat-size", {"size_sat_solver": size_solver,
                                      "size_search": size_search}, monitor=monitor)
    assert result.stats["size_sat_solver"] == size_solver
    assert result.stats["size_search"] == size_search
    check_consistent(result, data)
    assert result.status == Status.OPTIMAL and result.optimal
    assert result.tree.depth == depth
    assert result.tree.n_nodes == nodes == result.stats["size_lower_bound"]
    assert streamed and streamed[-1][0] is result.tree
    sizes = [tree.n_nodes for tree, _ in streamed]
    assert all(a > b for a, b in itertools.pairwise(sizes))
    assert all(error == 0 and (tree.predict(X) == y).all() for tree, error in streamed)


def test_several_classes_need_their_own_leaves():
    """Four classes on two features: the XOR-like layout needs depth 2 and 7 nodes."""
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 3)
    y = np.array([0, 1, 2, 3] * 3)
    data = dataset_from_arrays(X, y, np.ones(12), 4)
    for algorithm in ("sat-depth", "sat-size"):
        result = train(data, algorithm)
        check_consistent(result, data)
        assert result.tree.depth == 2 and result.tree.n_nodes == 7


def test_weights_duplicates_and_redundant_features():
    """Weightless rows are ignored, duplicates count once, copies of a feature and
    constant features are never needed; the tree still reads the original columns."""
    X = np.array([[0, 1, 1, 0], [1, 0, 1, 1], [1, 0, 1, 1], [0, 0, 1, 0], [1, 1, 1, 1]])
    y = np.array([0, 1, 1, 1, 1])
    w = np.array([1.0, 2.0, 1.0, 0.0, 3.0])
    data = dataset_from_arrays(X, y, w, 2)
    result = train(data, "sat-size")
    assert result.stats["features_used"] == 2 and result.stats["distinct_rows"] == 3
    assert result.tree.depth == 1 and result.tree.error(X, y, w) == 0.0
    np.testing.assert_allclose(result.tree.value[0], [1.0, 6.0])


def test_incremental_inference_uses_a_fraction_of_the_rows():
    """Rows generated by a depth-2 tree: a handful of them pin it down."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 2, (300, 8))
    y = np.where(X[:, 2] == 1, X[:, 5], 2 * (1 - X[:, 7]))
    data = dataset_from_arrays(X, y, np.ones(300), 3)
    result = train(data, "sat-size")
    check_consistent(result, data)
    assert result.tree.depth == 2 and result.tree.n_nodes == 7
    assert result.stats["examples_used"] < 40 < result.stats["distinct_rows"]


# ------------------------------------------------------------------ bad data, limits
def test_inconsistent_rows_are_refused_with_their_count():
    X = np.array([[0, 1], [0, 1], [0, 1], [1, 1], [1, 1], [1, 1], [0, 0]])
    y = np.array([0, 0, 1, 0, 1, 2, 1])
    data = dataset_from_arrays(X, y, np.ones(7), 3)
    for algorithm in ("sat-depth", "sat-size"):
        with pytest.raises(DataError, match=r"^3 rows .*--drop-inconsistent"):
            train(data, algorithm)


def test_inconsistent_rows_end_a_direct_call_as_infeasible():
    X = np.array([[0, 1, 0], [0, 1, 0], [1, 1, 0], [1, 0, 1]])
    data = dataset_from_arrays(X, [0, 1, 0, 1], np.ones(4), 2)
    result = get_solver("sat-depth")().solve(data, {"depth": 20, "sat_solver": "minisat22"},
                                            Monitor(5.0))
    assert result.status == Status.INFEASIBLE and not result.optimal
    assert "identical features" in result.stats["message"]


def test_a_depth_too_small_is_infeasible_with_a_majority_leaf():
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [1, 1]])
    y = np.array([0, 1, 1, 0, 0])
    data = dataset_from_arrays(X, y, np.ones(5), 2)
    result = train(data, "sat-size", {"depth": 1})
    assert result.status == Status.INFEASIBLE and not result.optimal
    assert result.tree.n_nodes == 1 and result.tree.label[0] == 0
    assert result.train_error == 2.0
    assert result.stats["depth_lower_bound"] == 2
    assert "depth at most 1" in result.stats["message"]
    assert result.incumbents == []


def hard_case():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (600, 20))
    _, group = np.unique(X, axis=0, return_inverse=True)
    y = rng.integers(0, 2, group.max() + 1)[group.ravel()]
    return dataset_from_arrays(X, y, np.ones(len(y)), 2)


@pytest.mark.parametrize("algorithm", ["sat-depth", "sat-size"])
def test_the_time_limit_is_honoured(algorithm):
    data = hard_case()
    start = time.monotonic()
    result = train(data, algorithm, time_limit=0.3)
    assert time.monotonic() - start < 0.5
    assert result.status == Status.TIME_LIMIT and not result.optimal
    assert result.tree.error(data.X, data.y, data.w) == result.train_error
    assert result.stats["depth_lower_bound"] >= 1


def test_cancel_is_honoured():
    result = cancelled_from_another_thread(hard_case(), "sat-depth", {}, 0.3)
    assert result.tree.n_nodes == 1


def test_sat_solvers_default_to_every_midpoint_and_warm_up():
    assert default_binarization("sat-depth") == default_binarization("sat-size") == "midpoints"
    assert default_binarization("blossom") == "guided"
    report = warm_up(["sat-depth", "sat-size"])
    assert report.errors == {} and set(report.timings) == {"sat-depth", "sat-size"}


# ------------------------------------------------------------------ command line
TABLE = "\n".join(["x,z,colour,label"] + [
    f"{x},{z},{c},{'in' if (x > 3 and z < 5) or c == 'red' else 'out'}"
    for x, z, c in itertools.product(range(7), range(0, 9, 2), ("red", "blue"))])


def run_cli(capsys, *argv):
    code = main([*map(str, argv), "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else None), err


@pytest.mark.parametrize("algorithm", ["sat-depth", "sat-size"])
def test_cli_fit_runs_end_to_end(capsys, tmp_path, algorithm):
    path = tmp_path / "points.csv"
    path.write_text(TABLE + "\n")
    code, summary, err = run_cli(capsys, "fit", path, "--algo", algorithm,
                                 "--out", tmp_path / "m.json")
    assert code == 0, err
    assert summary["binarize"] == "midpoints" and summary["max_depth"] == 10
    assert summary["status"] == "optimal" and summary["optimal"] is True
    assert summary["train_error"] == 0 and summary["train_accuracy"] == 1.0
    assert summary["depth"] == summary["stats"]["depth_lower_bound"] == 3
    assert 0 < summary["stats"]["examples_used"] <= summary["n_rows"] == 70
    assert summary["incumbents"] and summary["incumbents"][-1][1] == 0
    code, prediction, err = run_cli(capsys, "predict", tmp_path / "m.json", path)
    assert code == 0 and prediction["accuracy"] == 1.0


def test_cli_explains_inconsistent_rows_and_drops_them_when_asked(capsys, tmp_path):
    path = tmp_path / "clash.csv"
    path.write_text(TABLE + "\n2,2,red,out\n2,2,red,out\n")
    assert main(["fit", str(path), "--algo", "sat-depth", "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "1 row has the same features" in err
    assert "--drop-inconsistent" in err and "Traceback" not in err
    code, summary, err = run_cli(capsys, "fit", path, "--algo", "sat-depth",
                                 "--drop-inconsistent")
    assert code == 0, err
    assert summary["status"] == "optimal" and summary["train_error"] == 0
    assert any("contradicting" in line for line in summary["preparation"])


def test_cli_reports_a_depth_bound_too_small(capsys, tmp_path):
    path = tmp_path / "points.csv"
    path.write_text(TABLE + "\n")
    code, summary, err = run_cli(capsys, "fit", path, "--algo", "sat-depth", "--depth", 1)
    assert code == 0, err
    assert summary["status"] == "infeasible" and summary["optimal"] is False
    assert "depth at most 1" in summary["stats"]["message"]
