"""`blossom` with a least leaf weight (`min_leaf`): the least error (+ penalty x leaves
with a `leaf_cost`) among trees whose every split leaves at least that weight on both
sides, exactly, against the exhaustive search and pystreed's `min_leaf_node_size`;
never worse than greedy under the same constraint; anytime runs keep it."""

import itertools
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
LEASTS = (2, 3, 5, 8)


@pytest.fixture(scope="module", autouse=True)
def compiled():
    """Compile (or load) both kernel specialisations before any clock starts."""
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]] * 3)
    for w in ([1, 2, 1, 1] * 3, [0.5, 1.5, 1, 1] * 3):
        train(dataset_from_arrays(X, [0, 1, 1, 0] * 3, w, 2), "blossom",
              {"depth": 3, "min_leaf": 2})


def alone(data, params, limit=None):
    """The solver alone (no warm start): what its own search proves."""
    solver = get_solver("blossom")
    return solver().solve(data, solver.resolve(params), Monitor(limit))


def same(a, b):
    return abs(a - b) <= RELATIVE * max(1.0, abs(a), abs(b))


def leaf_weights(tree) -> np.ndarray:
    return tree.value[tree.feature < 0].sum(axis=1)


def check_leaves(tree, least, where):
    """Every leaf weighs >= least, unless the tree is a single leaf."""
    if tree.n_nodes > 1:
        weights = leaf_weights(tree)
        assert weights.min() >= least - 1e-9 * weights.sum(), (where, weights)


def check_optimal(result, data, expected, penalty, depth, least, where):
    tree = result.tree
    assert result.optimal and result.status == Status.OPTIMAL, where
    assert result.train_error == tree.error(data.X, data.y, data.w), where
    assert same(result.objective, result.train_error + penalty * tree.n_leaves), where
    assert same(result.objective, expected), (where, result.objective, expected)
    assert result.lower_bound == result.objective, where
    assert tree.depth <= depth, where
    check_leaves(tree, least, where)
    values = [e for _, e, _ in result.incumbents]
    assert all(a >= b for a, b in itertools.pairwise(values)), (where, values)


# ------------------------------------------------------------------ brute force
def test_least_objective_equals_the_exhaustive_search():
    """200 random cases (unit, integer, zero and fractional weights), every least leaf
    weight of LEASTS, a cost per leaf on a third of them, depths 1-4, one and two
    threads, with and without preprocessing."""
    cases = binding = 0
    for seed in range(50):
        X, y, w, K = random_binary_case(5000 + seed)
        data = dataset_from_arrays(X, y, w, K)
        for i, least in enumerate(LEASTS):
            depth = 1 + (seed + i) % 4
            threads = 1 + (seed + i) % 2
            alpha = (0.0, 0.0, 0.01, 0.05)[(seed + 2 * i) % 4] if seed % 3 == 0 else 0.0
            penalty = leaf_penalty({"leaf_cost": alpha}, w.sum())
            expected = exhaustive(X, y, w, K, depth, min_support=least,
                                  leaf_penalty=penalty)
            free = exhaustive(X, y, w, K, depth, leaf_penalty=penalty)
            binding += not same(expected, free)
            result = alone(data, {"depth": depth, "min_leaf": least, "leaf_cost": alpha,
                                  "threads": threads, "preprocess": (seed + i) % 3 != 0})
            where = (seed, least, alpha, depth, threads)
            check_optimal(result, data, expected, penalty, depth, least, where)
            cases += 1
    assert cases == 200
    assert binding > 50   # the constraint changes the optimum in many cases


def test_branches_reached_in_several_orders_keep_the_optimum():
    """Structured rows at depths 3-5 (the cache at work), with each of the cache, the
    lower bound and preprocessing switched off, two threads."""
    rng = np.random.default_rng(47)
    hits = binding = 0
    for trial in range(12):
        X, y, w, K, depth = structured_binary_case(rng, trial)
        data = dataset_from_arrays(X, y, w, K)
        least = LEASTS[trial % 4] + 2 * (trial % 3)
        alpha = (0.0, 0.01)[trial % 2]
        penalty = leaf_penalty({"leaf_cost": alpha}, w.sum())
        expected = exhaustive(X, y, w, K, depth, min_support=least, leaf_penalty=penalty)
        binding += not same(expected, exhaustive(X, y, w, K, depth, leaf_penalty=penalty))
        for params in ({"threads": 1}, {"threads": 1, "cache": False},
                       {"threads": 1, "lower_bound": False},
                       {"threads": 1, "preprocess": False}, {"threads": 2}):
            result = alone(data, {"depth": depth, "min_leaf": least, "leaf_cost": alpha,
                                  **params})
            check_optimal(result, data, expected, penalty, depth, least, (trial, params))
            hits += result.stats["cache_hits"]
            # the similarity bound derives one branch's bound from another's rows
            assert result.stats["similarity_bounds"] == 0, (trial, params)
    assert hits > 50 and binding >= 6


def test_no_bound_of_one_branch_from_another_branchs_rows():
    """Cases where MurTree's similarity bound (opt(c) >= opt(c') - weight(c' minus c))
    is wrong under a least leaf weight (c's optimal tree need not be a valid tree on
    c''s rows), so blossom would miss the optimum if it used it."""
    for seed in (1178, 2118, 2304):
        rng = np.random.default_rng(seed)
        n, F = int(rng.integers(12, 40)), int(rng.integers(3, 6))
        X = (rng.random((n, F)) < rng.uniform(0.3, 0.7)).astype(np.uint8)
        y = ((X[:, 0] & X[:, 1]) | (X[:, 2] ^ X[:, -1])).astype(np.int64)
        noisy = rng.random(n) < 0.25
        y[noisy] = 1 - y[noisy]
        least = int(rng.integers(2, 7))
        data = dataset_from_arrays(X, y, np.ones(n), 2)
        expected = exhaustive(X, y, np.ones(n), 2, 3, min_support=least)
        for threads in (1, 2):
            result = alone(data, {"depth": 3, "min_leaf": least, "threads": threads})
            check_optimal(result, data, expected, 0.0, 3, least, (seed, threads))


def test_min_leaf_one_is_no_constraint():
    for seed in range(10):
        X, y, w, K = random_binary_case(6000 + seed)
        data = dataset_from_arrays(X, y, w, K)
        plain = alone(data, {"depth": 3, "threads": 1})
        one = alone(data, {"depth": 3, "threads": 1, "min_leaf": 1})
        assert one.train_error == plain.train_error
        assert np.array_equal(one.tree.feature, plain.tree.feature)
        assert one.stats["expansions"] == plain.stats["expansions"]


def test_rows_too_light_to_split_give_a_leaf():
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0], [1, 0]])
    y = np.array([0, 1, 1, 0, 1])
    data = dataset_from_arrays(X, y, np.ones(5), 2)
    for depth in (1, 2, 3):
        result = alone(data, {"depth": depth, "min_leaf": 3})
        assert result.optimal and result.tree.n_nodes == 1 and result.train_error == 2
        assert alone(data, {"depth": depth, "min_leaf": 2}).train_error == 0


def test_through_training_with_the_warm_start():
    """train() adds the greedy tree grown under the same least leaf: same optimum, never
    worse than that greedy tree."""
    for seed in range(24):
        X, y, w, K = random_binary_case(7000 + seed)
        data = dataset_from_arrays(X, y, w, K)
        least = LEASTS[seed % 4]
        alpha = 0.01 if seed % 3 == 0 else 0.0
        penalty = leaf_penalty({"leaf_cost": alpha}, w.sum())
        depth = 2 + seed % 3
        params = {"depth": depth, "min_leaf": least, "leaf_cost": alpha}
        expected = exhaustive(X, y, w, K, depth, min_support=least, leaf_penalty=penalty)
        result = train(data, "blossom", {**params, "threads": 1 + seed % 2})
        check_optimal(result, data, expected, penalty, depth, least, seed)
        greedy = train(data, "greedy", params)
        assert result.objective <= greedy.objective + RELATIVE * max(1.0, w.sum()), seed
        values = [e for _, e, _ in result.incumbents]
        assert values and same(values[-1], result.objective), seed


# ------------------------------------------------------------------ anytime
@pytest.mark.parametrize("threads", [1, 2])
def test_time_limit_returns_a_valid_tree(threads):
    data = cp4im("splice-1")
    limit, least = 0.6, 10
    streamed = []
    monitor = Monitor(limit, on_incumbent=lambda tree, t, e, lb: streamed.append(tree))
    start = time.monotonic()
    result = train(data, "blossom", {"depth": 5, "min_leaf": least, "threads": threads},
                   monitor=monitor)
    assert time.monotonic() - start < limit + 0.2
    assert result.status == Status.TIME_LIMIT and not result.optimal
    assert result.tree.depth <= 5
    assert result.train_error == result.tree.error(data.X, data.y, data.w)
    assert result.lower_bound <= result.objective
    check_leaves(result.tree, least, threads)
    for tree in streamed:
        check_leaves(tree, least, threads)
    greedy = train(data, "greedy", {"depth": 5, "min_leaf": least})
    assert result.objective <= greedy.objective


def test_optimal_on_a_cp4im_set_and_a_larger_least_leaf_costs_error():
    data = cp4im("anneal")
    errors = []
    for least in (1, 5, 20, 60):
        result = alone(data, {"depth": 3, "min_leaf": least, "threads": 1})
        assert result.optimal and result.lower_bound == result.objective
        check_leaves(result.tree, least, least)
        errors.append(result.train_error)
    assert errors == sorted(errors) and errors[-1] > errors[0]


# ------------------------------------------------------------------ pystreed
def _streed_errors(X, y, depth, least):
    """pystreed's optimal training errors with min_leaf_node_size (rows in every leaf;
    the "accuracy" task honours it), None unless proven optimal.  Without its
    specialised depth-two solver, which can miss the optimum under a least leaf size
    (found with ConTree's tests)."""
    streed = pytest.importorskip("pystreed")
    clf = streed.STreeDClassifier(optimization_task="accuracy", max_depth=depth,
                                  min_leaf_node_size=least, time_limit=60,
                                  use_terminal_solver=False)
    clf.fit(X.astype(np.int64), y)
    if not clf.fit_result.is_optimal():
        return None
    return float((clf.predict(X.astype(np.int64)) != y).sum())


@pytest.mark.parametrize("name", ["zoo-1", "hepatitis", "lymph", "vote", "tic-tac-toe"])
def test_same_errors_as_pystreed_on_cp4im(name):
    pytest.importorskip("pystreed")
    data = cp4im(name)
    assert np.all(data.w == 1)
    for depth, least in ((2, 5), (3, 3), (3, 15), (4, 8)):
        expected = _streed_errors(data.X, data.y, depth, least)
        result = train(data, "blossom", {"depth": depth, "min_leaf": least},
                       time_limit=60)
        assert result.optimal and expected is not None, (name, depth, least)
        assert result.train_error == expected, (name, depth, least, result.train_error,
                                                expected)
        check_leaves(result.tree, least, (name, depth, least))


def test_same_errors_as_pystreed_on_random_tables():
    pytest.importorskip("pystreed")
    rng = np.random.default_rng(19)
    for trial in range(12):
        n, F = int(rng.integers(30, 200)), int(rng.integers(3, 10))
        X = (rng.random((n, F)) < rng.uniform(0.3, 0.7)).astype(np.uint8)
        y = ((X[:, 0] & X[:, 1]) | (X[:, 2] ^ X[:, -1])).astype(np.int64)
        noisy = rng.random(n) < 0.2
        y[noisy] = 1 - y[noisy]
        depth = 2 + trial % 3
        least = (2, 5, 10, 20)[trial % 4]
        expected = _streed_errors(X, y, depth, least)
        result = alone(dataset_from_arrays(X, y, np.ones(n), 2),
                       {"depth": depth, "min_leaf": least, "threads": 1 + trial % 2})
        assert result.optimal and expected is not None, trial
        assert result.train_error == expected, (trial, result.train_error, expected)
