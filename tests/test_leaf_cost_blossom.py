"""`blossom` with a cost per leaf (`leaf_cost`): the least error + penalty x leaves,
exactly, against the exhaustive search and pystreed; anytime runs stream objectives."""

import itertools
import threading
import time

import numpy as np
import pytest
from optimal_trees import (
    cp4im,
    dataset_from_arrays,
    exhaustive,
    random_binary_case,
    structured_binary_case,
)

from engine.solvers import get_solver
from engine.solvers.monitor import Monitor
from engine.solvers.protocol import Status, leaf_penalty
from engine.training import train

RELATIVE = 1e-9


@pytest.fixture(scope="module", autouse=True)
def compiled():
    """Compile (or load) both kernel specialisations before any clock starts."""
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]])
    for w in ([1, 2, 1, 1], [0.5, 1.5, 1, 1]):
        train(dataset_from_arrays(X, [0, 1, 1, 0], w, 2), "blossom",
              {"depth": 2, "leaf_cost": 0.01})


def alone(data, params):
    """The solver alone (no warm start): what its own search proves."""
    solver = get_solver("blossom")
    return solver().solve(data, solver.resolve(params), Monitor())


def same(a, b):
    return abs(a - b) <= RELATIVE * max(1.0, abs(a), abs(b))


def check_optimal(result, data, expected, penalty, depth, where):
    tree = result.tree
    assert result.optimal and result.status == Status.OPTIMAL, where
    assert result.leaf_penalty == penalty, where
    assert result.train_error == tree.error(data.X, data.y, data.w), where
    assert same(result.objective, result.train_error + penalty * tree.n_leaves), where
    assert same(result.objective, expected), (where, result.objective, expected)
    assert result.lower_bound == result.objective, where
    assert tree.depth <= depth, where
    values = [e for _, e, _ in result.incumbents]
    assert all(a >= b for a, b in itertools.pairwise(values)), (where, values)


def penalties(n, W):
    """0, tiny (1e-3 of the weight), about one row, several rows, all the weight."""
    rows = max(n, 1)
    return [(alpha, leaf_penalty({"leaf_cost": alpha}, W))
            for alpha in (0.0, 1e-3, 1 / rows, min(3.5 / rows, 1.0), 1.0)]


# ------------------------------------------------------------------ brute force
def test_least_objective_equals_the_exhaustive_search():
    """~200 random cases (unit, integer, zero and fractional weights), every penalty
    from none to the whole weight, depths 1-4, one and two threads, with and without
    preprocessing."""
    cases = 0
    for seed in range(40):
        X, y, w, K = random_binary_case(1000 + seed)
        data = dataset_from_arrays(X, y, w, K)
        W = float(w.sum())
        for i, (alpha, penalty) in enumerate(penalties(len(y), W)):
            depth = 1 + (seed + i) % 4
            threads = 1 + (seed + i) % 2
            expected = exhaustive(X, y, w, K, depth, leaf_penalty=penalty)
            result = alone(data, {"depth": depth, "leaf_cost": alpha, "threads": threads,
                                  "preprocess": seed % 3 != 0})
            where = (seed, alpha, depth, threads)
            check_optimal(result, data, expected, penalty, depth, where)
            if alpha == 1.0 and W > 0:   # a split costs more than any leaf
                assert result.tree.n_leaves == 1, where
            cases += 1
    assert cases == 200


def test_branches_reached_in_several_orders_keep_the_optimum():
    """Structured rows at depths 3-5 (the cache and the similarity bound at work), with
    each of the cache, the lower bound and preprocessing switched off, two threads."""
    rng = np.random.default_rng(31)
    similar = hits = 0
    for trial in range(15):
        X, y, w, K, depth = structured_binary_case(rng, trial)
        data = dataset_from_arrays(X, y, w, K)
        alpha = (0.002, 0.01, 0.03)[trial % 3]
        penalty = leaf_penalty({"leaf_cost": alpha}, w.sum())
        expected = exhaustive(X, y, w, K, depth, leaf_penalty=penalty)
        for params in ({"threads": 1}, {"threads": 1, "cache": False},
                       {"threads": 1, "lower_bound": False},
                       {"threads": 1, "preprocess": False}, {"threads": 2}):
            result = alone(data, {"depth": depth, "leaf_cost": alpha, **params})
            check_optimal(result, data, expected, penalty, depth, (trial, params))
            similar += result.stats["similarity_bounds"]
            hits += result.stats["cache_hits"]
    assert hits > 100 and similar > 10


def test_leaf_cost_zero_is_the_least_error():
    for seed in range(10):
        X, y, w, K = random_binary_case(2000 + seed)
        data = dataset_from_arrays(X, y, w, K)
        plain = alone(data, {"depth": 3, "threads": 1})
        zero = alone(data, {"depth": 3, "threads": 1, "leaf_cost": 0.0})
        assert zero.leaf_penalty == 0.0 and zero.objective == zero.train_error
        assert zero.train_error == plain.train_error
        assert np.array_equal(zero.tree.feature, plain.tree.feature)


def test_through_training_with_the_warm_start():
    for seed in range(24):
        X, y, w, K = random_binary_case(3000 + seed)
        data = dataset_from_arrays(X, y, w, K)
        alpha = (1e-3, 0.02, 0.05, 0.2)[seed % 4]
        penalty = leaf_penalty({"leaf_cost": alpha}, w.sum())
        depth = 2 + seed % 3
        expected = exhaustive(X, y, w, K, depth, leaf_penalty=penalty)
        result = train(data, "blossom", {"depth": depth, "leaf_cost": alpha,
                                         "threads": 1 + seed % 2})
        check_optimal(result, data, expected, penalty, depth, seed)
        values = [e for _, e, _ in result.incumbents]
        assert values and same(values[-1], result.objective), seed


# ------------------------------------------------------------------ anytime
def _streamed_runs(data, params, stop):
    """train() with the Monitor `stop(monitor)` makes; returns the result, what was
    streamed (tree, value, lower bound) and the seconds taken."""
    streamed = []
    monitor = Monitor(params.pop("time_limit", None),
                      on_incumbent=lambda tree, t, e, lb: streamed.append((tree, e, lb)))
    stop(monitor)
    start = time.monotonic()
    result = train(data, "blossom", params, monitor=monitor)
    return result, streamed, time.monotonic() - start


def _check_streamed(result, streamed, data):
    penalty = result.leaf_penalty
    assert penalty > 0
    assert result.train_error == result.tree.error(data.X, data.y, data.w)
    assert result.lower_bound <= result.objective
    values = [e for _, e, _ in result.incumbents]
    assert len(values) >= 2 and all(a > b for a, b in itertools.pairwise(values))
    assert same(values[-1], result.objective)
    assert streamed and same(streamed[-1][1], result.objective)
    for tree, value, lower_bound in streamed:
        objective = tree.error(data.X, data.y, data.w) + penalty * tree.n_leaves
        assert abs(objective - value) <= 1e-12 * value, (objective, value)
        assert lower_bound <= value


@pytest.mark.parametrize("threads", [1, 2])
def test_time_limit_on_a_bigger_set_streams_objectives(threads):
    data = cp4im("splice-1")
    limit = 0.6
    result, streamed, took = _streamed_runs(
        data, {"depth": 5, "leaf_cost": 0.001, "threads": threads, "time_limit": limit},
        lambda monitor: None)
    assert took < limit + 0.2
    assert result.status == Status.TIME_LIMIT and not result.optimal
    assert result.tree.depth <= 5
    _check_streamed(result, streamed, data)
    assert result.lower_bound >= 0.001 * float(data.w.sum())   # one leaf at least


def test_cancel_returns_promptly_with_objectives():
    data = cp4im("splice-1")
    result, streamed, took = _streamed_runs(
        data, {"depth": 5, "leaf_cost": 0.002, "threads": 2},
        lambda monitor: threading.Timer(0.5, monitor.cancel).start())
    assert took < 0.5 + 0.2
    assert result.status == Status.CANCELLED and not result.optimal
    _check_streamed(result, streamed, data)


def test_the_kernel_publishes_objectives_without_the_warm_start():
    data = cp4im("anneal")
    streamed = []
    solver = get_solver("blossom")
    monitor = Monitor(on_incumbent=lambda tree, t, e, lb: streamed.append((tree, e, lb)))
    result = solver().solve(data, solver.resolve({"depth": 4, "leaf_cost": 0.002,
                                                  "threads": 1}), monitor)
    assert result.optimal and result.lower_bound == result.objective
    _check_streamed(result, streamed, data)


# ------------------------------------------------------------------ pystreed
def _streed_objective(X, y, depth, alpha):
    """pystreed's optimum for cost_complexity alpha (a cost per branch node of alpha x
    rows; leaves = branches + 1, so the same optimal trees), as our objective: its
    misclassified rows + alpha x rows x its leaves.  None unless proven optimal.
    (Its default task, "accuracy", ignores cost_complexity.)"""
    streed = pytest.importorskip("pystreed")
    clf = streed.STreeDClassifier(optimization_task="cost-complex-accuracy",
                                  max_depth=depth, min_leaf_node_size=1, time_limit=60,
                                  cost_complexity=alpha)
    clf.fit(X.astype(np.int64), y)
    if not clf.fit_result.is_optimal():
        return None
    errors = float((clf.predict(X.astype(np.int64)) != y).sum())
    return errors + alpha * len(y) * clf.get_n_leaves()


@pytest.mark.parametrize("name", ["zoo-1", "hepatitis", "lymph", "vote", "tic-tac-toe"])
def test_same_objective_as_pystreed_on_cp4im(name):
    pytest.importorskip("pystreed")
    data = cp4im(name)
    assert np.all(data.w == 1)
    for depth, alpha in ((2, 0.01), (3, 0.005), (3, 0.03), (4, 0.01)):
        expected = _streed_objective(data.X, data.y, depth, alpha)
        result = train(data, "blossom", {"depth": depth, "leaf_cost": alpha},
                       time_limit=60)
        assert result.optimal and expected is not None, (name, depth, alpha)
        assert same(result.objective, expected), (name, depth, alpha, result.objective,
                                                  expected)


def test_same_objective_as_pystreed_on_random_tables():
    pytest.importorskip("pystreed")
    rng = np.random.default_rng(11)
    for trial in range(12):
        n, F = int(rng.integers(30, 200)), int(rng.integers(3, 10))
        X = (rng.random((n, F)) < rng.uniform(0.3, 0.7)).astype(np.uint8)
        y = ((X[:, 0] & X[:, 1]) | (X[:, 2] ^ X[:, -1])).astype(np.int64)
        noisy = rng.random(n) < 0.2
        y[noisy] = 1 - y[noisy]
        depth = 2 + trial % 3
        alpha = (0.004, 0.01, 0.03, 0.08)[trial % 4]
        expected = _streed_objective(X, y, depth, alpha)
        result = alone(dataset_from_arrays(X, y, np.ones(n), 2),
                       {"depth": depth, "leaf_cost": alpha, "threads": 1 + trial % 2})
        assert result.optimal and expected is not None, trial
        assert same(result.objective, expected), (trial, result.objective, expected)
