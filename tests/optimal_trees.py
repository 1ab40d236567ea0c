"""What the exact solvers' tests compare against, written once for all of them.

The reference answers come from searches that share no code with the engine: an
exhaustive search over every feature and threshold (memoised on the set of rows, no
bound, no pruning) and, for the smallest cases, an explicit enumeration of every tree
that checks the exhaustive search itself.  Binary features are the special case of a
single threshold 0.5 between 0 and 1.  The anytime checks (time limit, cancel) are
the same for every solver, so they live here too.
"""

from __future__ import annotations

import itertools
import threading
import time

import numpy as np
import pytest
from conftest import DATASETS

from engine.data.csv_reader import read_table
from engine.data.dataset import Dataset, PrepOptions, PrepReport
from engine.featurize import prepare
from engine.data.features import EQ, NUM, Feature
from engine.data.preprocessing import Preprocessing
from engine.solvers import get_solver
from engine.solvers.monitor import Monitor
from engine.solvers.protocol import Status
from engine.training import train


# ------------------------------------------------------------------ data
def dataset_from_arrays(X, y, w, n_classes, binary=True):
    """A Dataset straight from arrays: 0/1 features f0, f1, ... (what binarisation
    produces) or, with binary=False, numeric features x0, x1, ..."""
    if binary:
        X = np.asarray(X, dtype=np.uint8)
        features = [Feature(f"f{j}", EQ, "1") for j in range(X.shape[1])]
    else:
        X = np.asarray(X, dtype=np.float64)
        features = [Feature(f"x{j}", NUM) for j in range(X.shape[1])]
    prep = Preprocessing("class", [f"c{k}" for k in range(n_classes)], [], features)
    return Dataset(X, np.asarray(y, dtype=np.int64), np.asarray(w, dtype=np.float64), prep,
                   PrepReport())


def shared_dataset(relative, **options):
    """A file of shared/datasets prepared with PrepOptions(**options); the test is
    skipped when the shared folder is absent."""
    path = DATASETS / relative
    if not path.exists():
        pytest.skip("the shared datasets folder is absent")
    return prepare(read_table(path), PrepOptions(**options))


def random_weights(rng, n):
    """Unit weights mostly; else integer, partly zero or fractional weights."""
    kind = rng.random()
    if kind < 0.3:
        return rng.integers(1, 5, n).astype(float)
    if kind < 0.4:
        return rng.integers(0, 3, n).astype(float)    # some rows weigh nothing
    if kind < 0.5:
        return rng.random(n) * 3                      # fractional weights
    return np.ones(n)


def random_binary_case(seed):
    """Up to 40 rows of 1-6 binary features (sometimes an equal or complementary
    feature, sometimes duplicated rows), 2-3 classes, random weights."""
    rng = np.random.default_rng(seed)
    n, F, K = int(rng.integers(1, 41)), int(rng.integers(1, 7)), int(rng.integers(2, 4))
    X = (rng.random((n, F)) < rng.uniform(0.2, 0.8)).astype(np.uint8)
    if F > 1 and rng.random() < 0.3:
        X[:, -1] = X[:, 0] if rng.random() < 0.5 else 1 - X[:, 0]
    if rng.random() < 0.3:
        X = X[rng.integers(0, n, n)]
    y = rng.integers(0, K, n)
    return X, y, random_weights(rng, n), K


def structured_binary_case(rng, trial):
    """Binary rows whose class follows (x0 and x1) or (x2 xor x3) with 25% noise, so
    that branches of depth D-2 recur in several orders (blossom's cache): depth 3-5 by
    trial, sized for the exhaustive search; every fourth trial has fractional weights.
    Returns (X, y, w, K, depth)."""
    depth = 3 + trial % 3
    n = int(rng.integers(20, 70 if depth < 5 else 45))
    F = int(rng.integers(4, 8 if depth < 5 else 6))
    K = int(rng.integers(2, 4))
    X = (rng.random((n, F)) < rng.uniform(0.3, 0.7)).astype(np.uint8)
    y = ((X[:, 0] & X[:, 1]) | (X[:, 2] ^ X[:, 3])).astype(np.int64) % K
    noisy = rng.random(n) < 0.25
    y[noisy] = rng.integers(0, K, noisy.sum())
    w = rng.integers(1, 4, n).astype(float)
    if trial % 4 == 3:
        w = w * rng.uniform(0.3, 1.7, n)
    return X, y, w, K, depth


# ------------------------------------------------------------------ reference optima
def thresholds(values):
    """Mid-points between consecutive distinct values."""
    u = np.unique(values)
    return (u[:-1] + u[1:]) / 2


def leaf_error(y, w, rows, n_classes):
    weights = np.bincount(y[rows], weights=w[rows], minlength=n_classes)
    return weights.sum() - weights.max()


def exhaustive(X, y, w, n_classes, depth, min_support=0.0, leaf_penalty=0.0):
    """Least error of any tree of depth <= `depth` whose tests are `x_f <= t`, t any
    mid-point between consecutive distinct values of the rows at the node, and whose
    both sides weigh at least `min_support`: a leaf, or for every feature and threshold
    the best subtrees of both sides; memoised on the set of rows.  With `leaf_penalty`
    each leaf costs that much more (the least error + leaf_penalty x leaves)."""
    memo = {}

    def best(rows, d):
        key = (rows.tobytes(), d)
        if key not in memo:
            value = leaf_error(y, w, rows, n_classes) + leaf_penalty
            if d > 0:
                for f in range(X.shape[1]):
                    for t in thresholds(X[rows, f]):
                        left = X[rows, f] <= t
                        if min(w[rows[left]].sum(), w[rows[~left]].sum()) < min_support:
                            continue
                        value = min(value, best(rows[left], d - 1) + best(rows[~left], d - 1))
            memo[key] = value
        return memo[key]

    return best(np.arange(len(y)), depth)


def all_trees(X, depth):
    """Every tree of depth <= depth with thresholds at the mid-points of all of X's
    values (nested tuples (feature, threshold, left, right), None = leaf)."""
    if depth == 0:
        return [None]
    smaller = all_trees(X, depth - 1)
    return [None] + [(f, t, a, b) for f in range(X.shape[1]) for t in thresholds(X[:, f])
                     for a in smaller for b in smaller]


def enumerated(X, y, w, n_classes, depth, leaf_penalty=0.0):
    """Least error (+ leaf_penalty x leaves) over the explicit list of every tree
    (small cases only)."""
    def error(tree, rows):
        if tree is None:
            return leaf_error(y, w, rows, n_classes) + leaf_penalty
        f, t, left, right = tree
        go = X[rows, f] <= t
        return error(left, rows[go]) + error(right, rows[~go])

    rows = np.arange(len(y))
    return min(error(tree, rows) for tree in all_trees(X, depth))


# ------------------------------------------------------------------ anytime behaviour
def stopped_by_time_limit(data, algorithm, params, limit):
    """Run with a time limit the search cannot finish in and check what every anytime
    solver promises: back within 0.2 s of the limit, status time_limit, strictly
    improving incumbents whose trees (streamed to the live view) have the value they
    claim (the error, plus the leaves' cost with a `leaf_cost`), starting with the
    greedy tree (the warm start), the last one returned.  Returns the result for
    solver-specific checks."""
    streamed = []
    monitor = Monitor(limit, on_incumbent=lambda tree, t, e, lb: streamed.append((tree, e, lb)))
    start = time.monotonic()
    result = train(data, algorithm, params, monitor=monitor)
    assert time.monotonic() - start < limit + 0.2
    assert result.status == Status.TIME_LIMIT and not result.optimal
    assert result.tree.depth <= params["depth"]
    assert result.tree.error(data.X, data.y, data.w) == result.train_error
    assert result.lower_bound <= result.objective
    penalty = result.leaf_penalty

    def value(tree):
        return tree.error(data.X, data.y, data.w) + penalty * tree.n_leaves

    values = [e for _, e, _ in result.incumbents]
    assert values and all(a > b for a, b in itertools.pairwise(values))
    assert values[-1] == pytest.approx(result.objective, rel=1e-12)
    if not penalty:
        assert values[0] == result.stats["warm_start_error"] >= values[-1]
    assert streamed and streamed[-1][1] == values[-1]
    for tree, claimed, lower_bound in streamed:
        assert value(tree) == pytest.approx(claimed, rel=1e-12)
        assert lower_bound <= claimed
    return result


def without_warm_start(data, algorithm, params, limit):
    """The solver alone, as its kernel publishes, without `train`'s greedy warm start."""
    solver = get_solver(algorithm)
    return solver().solve(data, solver.resolve(params), Monitor(limit))


def cancelled_from_another_thread(data, algorithm, params, after):
    """Cancel from a timer thread `after` seconds in: back within 0.2 s, status
    cancelled, with a complete tree that has the error it claims."""
    monitor = Monitor()
    timer = threading.Timer(after, monitor.cancel)
    start = time.monotonic()
    timer.start()
    result = train(data, algorithm, params, monitor=monitor)
    assert time.monotonic() - start < after + 0.2
    assert result.status == Status.CANCELLED and not result.optimal
    assert result.tree.error(data.X, data.y, data.w) == result.train_error
    return result


def cp4im(name):
    """A CP4IM set (0/1 features, class in the first column)."""
    return shared_dataset(f"cp4im/{name}.txt", target="first")


def path_to_leaf(tree, x) -> list[int]:
    """The nodes one row of features `x` visits, root to leaf (the model's arrays
    read directly, as the checks of drawings and paths need)."""
    node, path = 0, [0]
    while tree.feature[node] >= 0:
        node = int(tree.left[node] if x[tree.feature[node]] <= tree.threshold[node]
                   else tree.right[node])
        path.append(node)
    return path
