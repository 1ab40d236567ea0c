"""A cost per leaf (`leaf_cost`): the greedy tree pruned for it, ConTree's exact
optimum of error + cost x leaves against the exhaustive search and pycontree's
`complexity_cost`, and the warm start compared on that objective."""

import itertools

import numpy as np
import pytest
from optimal_trees import (
    cancelled_from_another_thread,
    dataset_from_arrays,
    exhaustive,
    enumerated,
    random_weights,
    shared_dataset,
    stopped_by_time_limit,
)

from engine.errors import ParameterError
from engine.solvers import get_solver
from engine.solvers.monitor import Monitor
from engine.training import train

COSTS = (0.0, 0.001, 0.02, 0.07, 0.2, 1.0)


def numeric_case(seed, max_rows=24):
    """Tiny numeric data with ties, 2-3 classes, various weights."""
    rng = np.random.default_rng(seed)
    n, F, K = int(rng.integers(2, max_rows + 1)), int(rng.integers(1, 4)), int(rng.integers(2, 4))
    X = rng.integers(0, int(rng.integers(2, 7)), (n, F)).astype(float)
    y = rng.integers(0, K, n)
    w = random_weights(rng, n)
    if w.sum() == 0:
        w = np.ones(n)
    return X, y, w, K, rng


def objective(tree, data, penalty):
    return tree.error(data.X, data.y, data.w) + penalty * tree.n_leaves


# ------------------------------------------------------------------ pruning
def prunings(tree, node=0):
    """Every pruning of the subtree under `node`: (error, leaves) pairs."""
    weights = tree.value[node]
    as_leaf = (weights.sum() - weights[tree.label[node]], 1)
    if tree.is_leaf(node):
        return [as_leaf]
    return [as_leaf] + [(a[0] + b[0], a[1] + b[1])
                        for a, b in itertools.product(prunings(tree, tree.left[node]),
                                                      prunings(tree, tree.right[node]))]


def test_pruning_keeps_the_least_cost_among_every_pruning():
    for seed in range(40):
        X, y, w, K, rng = numeric_case(seed, 60)
        data = dataset_from_arrays(X, y, w, K, binary=False)
        grown = train(data, "greedy", {"depth": 4}).tree
        for cost in COSTS:
            penalty = cost * w.sum()
            best = min(e + penalty * leaves for e, leaves in prunings(grown))
            pruned = grown.pruned(penalty)
            assert objective(pruned, data, penalty) == pytest.approx(best, abs=1e-9)
            # a pruning: every kept test is the grown tree's, predictions on its leaves
            assert pruned.n_leaves <= grown.n_leaves
            assert set(pruned.feature[pruned.feature >= 0]) <= set(grown.feature)
        assert grown.pruned(0.0).n_leaves <= grown.n_leaves
        assert grown.pruned(w.sum() + 1).n_leaves == 1


def test_greedy_with_a_leaf_cost_reports_the_objective():
    X, y, w, K, _ = numeric_case(7, 200)
    data = dataset_from_arrays(X, y, w, K, binary=False)
    result = train(data, "greedy", {"depth": 4, "leaf_cost": 0.05})
    assert result.leaf_penalty == pytest.approx(0.05 * w.sum())
    assert result.objective == pytest.approx(objective(result.tree, data, result.leaf_penalty))
    assert result.incumbents[-1][1] == pytest.approx(result.objective)


def test_the_leaf_cost_is_a_share_between_zero_and_one():
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ParameterError):
            get_solver("contree").resolve({"leaf_cost": bad})


# ------------------------------------------------------------------ contree exact
def test_the_exhaustive_reference_with_a_penalty_is_the_enumeration():
    for seed in range(60):
        X, y, w, K, rng = numeric_case(seed, 8)
        for cost in COSTS:
            P = cost * w.sum()
            for depth in (1, 2):
                assert exhaustive(X, y, w, K, depth, leaf_penalty=P) == pytest.approx(
                    enumerated(X, y, w, K, depth, leaf_penalty=P))


def test_contree_minimises_error_plus_leaf_cost_exactly():
    solver = get_solver("contree")
    for seed in range(240):
        X, y, w, K, rng = numeric_case(seed)
        data = dataset_from_arrays(X, y, w, K, binary=False)
        depth = int(rng.integers(1, 4))
        cost = float(rng.choice(COSTS))
        threads = int(rng.integers(1, 3))
        P = cost * w.sum()
        result = solver().solve(data, solver.resolve(
            {"depth": depth, "leaf_cost": cost, "threads": threads}), Monitor())
        expected = exhaustive(X, y, w, K, depth, leaf_penalty=P)
        tol = 1e-9 * max(1.0, w.sum())
        assert result.optimal, seed
        assert result.objective == pytest.approx(expected, abs=tol), (seed, depth, cost)
        assert result.lower_bound == pytest.approx(result.objective, abs=tol)
        assert result.train_error == result.tree.error(data.X, data.y, data.w)


def test_contree_with_a_leaf_cost_through_the_warm_start():
    """`train` starts from the greedy tree pruned for the same cost and compares the two
    on the objective: the optimum stays the optimum, and a cost of a whole leaf's
    weight leaves a single leaf."""
    for seed in range(60):
        X, y, w, K, rng = numeric_case(500 + seed, 40)
        data = dataset_from_arrays(X, y, w, K, binary=False)
        cost = float(rng.choice(COSTS[1:]))
        result = train(data, "contree", {"depth": 3, "leaf_cost": cost})
        expected = exhaustive(X, y, w, K, 3, leaf_penalty=cost * w.sum())
        assert result.objective == pytest.approx(expected, abs=1e-9 * w.sum())
        greedy = train(data, "greedy", {"depth": 3, "leaf_cost": cost})
        assert result.objective <= greedy.objective + 1e-9 * w.sum()
    assert train(data, "contree", {"depth": 3, "leaf_cost": 1.0}).tree.n_leaves == 1


def test_a_leaf_cost_gives_smaller_trees_on_a_real_table():
    data = shared_dataset("contree/bank.txt", target="first")
    leaves = []
    for cost in (0.0, 0.002, 0.01, 0.05):
        result = train(data, "contree", {"depth": 3, "leaf_cost": cost})
        assert result.optimal
        leaves.append(result.tree.n_leaves)
    assert leaves == sorted(leaves, reverse=True) and leaves[-1] < leaves[0]


# ------------------------------------------------------------------ pycontree
def test_same_optimum_as_pycontree_with_a_complexity_cost():
    """pycontree's complexity_cost is a cost per branch node as a share of the rows;
    leaves = branches + 1, so its optimal trees are ours: the same objective."""
    pycontree = pytest.importorskip("pycontree")
    rng = np.random.default_rng(11)
    compared = 0
    for trial in range(30):
        n, F, K = int(rng.integers(20, 250)), int(rng.integers(2, 6)), int(rng.integers(2, 4))
        X = rng.integers(0, int(rng.integers(3, 40)), (n, F)).astype(float) / 4
        y = ((X[:, 0] > X[:, 0].mean()).astype(int) + (X[:, 1] > np.median(X[:, 1]))
             + (rng.random(n) < 0.3) * rng.integers(0, K, n)) % K
        if len(np.unique(y)) < 2:
            continue
        data = dataset_from_arrays(X, y, np.ones(n), K, binary=False)
        for cost in (0.005, 0.02, 0.1):
            depth = int(rng.integers(1, 5))
            theirs = pycontree.ConTree(max_depth=depth, max_gap=0, complexity_cost=cost,
                                       time_limit=60).fit(X, y.astype(np.int32))
            their_objective = (theirs.predict(X) != y).sum() + cost * n * \
                theirs.get_num_leaf_nodes()
            ours = train(data, "contree", {"depth": depth, "leaf_cost": cost})
            assert ours.optimal
            assert ours.objective == pytest.approx(their_objective, abs=1e-6), (trial, cost)
            compared += 1
    assert compared >= 60


# ------------------------------------------------------------------ anytime
@pytest.fixture(scope="module")
def magic():
    return shared_dataset("contree/magic.txt", target="first")


def test_time_limit_with_a_leaf_cost_streams_objectives(magic):
    result = stopped_by_time_limit(magic, "contree", {"depth": 4, "leaf_cost": 0.001}, 0.5)
    assert result.leaf_penalty == pytest.approx(0.001 * magic.w.sum())
    assert result.lower_bound >= result.leaf_penalty


def test_cancel_with_a_leaf_cost(magic):
    cancelled_from_another_thread(magic, "contree", {"depth": 4, "leaf_cost": 0.001}, 0.4)
