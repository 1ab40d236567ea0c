"""`contree` on a numeric target (issue 47): the least weighted sum of squared errors
(SSE; + a cost per leaf, a share of the root's SSE) over the trees of bounded depth
whose tests are thresholds on the numeric features, exactly: against exhaustive
enumeration on tiny tables (ties, weights, least leaf weights, costs per leaf, depths
1-3), against pystreed's cost-complexity regression trees on every mid-point threshold
as a 0/1 feature, against the greedy tree, through `train`, under a time limit, and on
a prepared table with missing cells."""

import functools
import warnings

import numpy as np
import pytest
from test_regression import house_table

from engine.data.csv_reader import read_table
from engine.data.dataset import Dataset, PrepReport
from engine.data.features import NUM, Feature
from engine.data.preprocessing import Preprocessing
from engine.errors import DataError, ParameterError
from engine.featurize import prepare
from engine.solvers import solvers_for
from engine.solvers.contree import ConTree
from engine.solvers.monitor import Monitor
from engine.solvers.protocol import Status, error_scale
from engine.training import train
from engine.vocabulary import REGRESSION

N_CASES = 150


# ------------------------------------------------------------------ data
def numeric_data(X, y, w=None) -> Dataset:
    """A regression Dataset straight from numeric features X, targets y, weights w."""
    X = np.asarray(X, dtype=np.float64)
    features = [Feature(f"x{j}", NUM) for j in range(X.shape[1])]
    prep = Preprocessing("y", [], [], features, task=REGRESSION)
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=np.float64)
    return Dataset(X, np.asarray(y, dtype=np.float64), w, prep, PrepReport())


def sse(y, w) -> float:
    """Weighted squared error of a leaf predicting the weighted mean (two passes)."""
    W = float(w.sum())
    if W <= 0:
        return 0.0
    mean = float(w @ y) / W
    return float(w @ (y - mean) ** 2)


def brute_force(X, y, w, depth, penalty, least) -> float:
    """The least SSE + penalty x leaves over every tree of depth <= `depth` whose
    tests are mid-points between consecutive distinct values of a node's rows, each
    leaf of a split weighing at least `least`: every threshold and every shape."""
    @functools.lru_cache(maxsize=None)
    def best(rows: tuple, d: int) -> float:
        r = np.array(rows)
        value = sse(y[r], w[r]) + penalty
        if d == 0:
            return value
        for f in range(X.shape[1]):
            values = np.unique(X[r, f])
            for a, b in zip(values[:-1], values[1:]):
                go = X[r, f] <= (a + b) / 2
                left, right = r[go], r[~go]
                if w[left].sum() < least or w[right].sum() < least:
                    continue
                value = min(value, best(tuple(left), d - 1) + best(tuple(right), d - 1))
        return value
    return best(tuple(range(len(y))), depth)


def random_case(seed):
    """5-25 rows of 1-3 numeric features with ties (few distinct values, or reals
    rounded to one decimal), real targets of any scale and offset (or a few integer
    values), unit, integer or fractional weights."""
    rng = np.random.default_rng(seed)
    n, F = int(rng.integers(5, 26)), int(rng.integers(1, 4))
    if rng.random() < 0.6:
        X = rng.integers(0, rng.integers(2, 8), size=(n, F)) + rng.choice([0.0, 0.5])
    else:
        X = rng.normal(size=(n, F)).round(1)
    X = X.astype(np.float64)
    if rng.random() < 0.2:
        y = rng.integers(0, 3, n).astype(np.float64)
    else:
        scale = rng.choice([0.01, 1.0, 100.0])
        y = (X[:, 0] * rng.random() * 3 + rng.normal(size=n)) * scale + rng.choice([0.0, 1e3])
    kind = rng.random()
    if kind < 0.5:
        w = np.ones(n)
    elif kind < 0.8:
        w = rng.integers(1, 4, n).astype(np.float64)
    else:
        w = rng.random(n) * 2 + 0.05
    return X, y, w


def solve(data, params, time_limit=None):
    solver = ConTree()
    return solver.solve(data, solver.resolve(params), Monitor(time_limit))


def check_tree(result, data):
    """The tree predicts with its own thresholds what its nodes say: each node holds
    the weight, weighted mean and SSE of the rows reaching it, and `train_error` is the
    SSE of the tree's predictions."""
    tree = result.tree
    assert tree.regression and tree.value.shape[1] == 3
    for node in range(tree.n_nodes):
        rows = tree.reaches(data.X, node)
        W = float(data.w[rows].sum())
        assert tree.value[node, 0] == pytest.approx(W, rel=1e-12)
        if W > 0:
            assert tree.value[node, 1] == pytest.approx(
                float(data.w[rows] @ data.y[rows]) / W, rel=1e-9, abs=1e-9)
            assert tree.value[node, 2] == pytest.approx(
                sse(data.y[rows], data.w[rows]), rel=1e-9, abs=1e-9)
    predicted = tree.predict(data.X)
    assert result.train_error == pytest.approx(
        float(data.w @ (data.y - predicted) ** 2), rel=1e-12, abs=1e-12)
    assert result.objective == pytest.approx(
        result.train_error + result.leaf_penalty * tree.n_leaves, rel=1e-12)


# ------------------------------------------------------------------ brute force
@pytest.mark.parametrize("seed", range(N_CASES))
def test_the_optimum_equals_exhaustive_enumeration(seed):
    X, y, w = random_case(seed)
    rng = np.random.default_rng(10_000 + seed)
    depth = 1 + seed % 3
    min_leaf = int(rng.choice([1, 1, 2, 3, 5]))
    leaf_cost = float(rng.choice([0.0, 0.0, 0.01, 0.05, 0.3]))
    data = numeric_data(X, y, w)
    result = solve(data, {"depth": depth, "min_leaf": min_leaf, "leaf_cost": leaf_cost})
    penalty = leaf_cost * error_scale(data)
    expected = brute_force(X, y, w, depth, penalty, min_leaf if min_leaf > 1 else 0)
    assert result.optimal and result.status == Status.OPTIMAL
    assert result.leaf_penalty == pytest.approx(penalty)
    assert result.objective == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert result.lower_bound == result.objective
    assert result.tree.depth <= depth
    check_tree(result, data)
    if min_leaf > 1 and result.tree.n_leaves > 1:
        assert (result.tree.value[result.tree.feature < 0, 0] >= min_leaf).all()


# ------------------------------------------------------------------ pystreed
def binarised(X):
    """Every mid-point threshold t of every column as a 0/1 feature x <= t."""
    columns = []
    for f in range(X.shape[1]):
        values = np.unique(X[:, f])
        for a, b in zip(values[:-1], values[1:]):
            columns.append((X[:, f] <= (a + b) / 2).astype(np.int64))
    return np.column_stack(columns)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("depth", [2, 3])
def test_pystreed_finds_the_same_optimum_on_the_same_thresholds(seed, depth):
    """pystreed's `cost_complexity` is a cost per branching node as a share of the
    root's SSE (cost_complex_regression.cpp: branching_cost = cost_complexity x (sum
    y^2 - (sum y)^2 / n)); a tree has one leaf more than branching nodes, so with
    leaf_cost = cost_complexity our objective is pystreed's plus one leaf's cost.  Its
    default 'kmeans' task bound prunes optimal trees when cost_complexity > 0 (it adds
    the k-means bound to the equivalent-points bound: "lb.solution += bound.first",
    found larger than the optimum on some of these tables), so the reference runs with
    the 'equivalent' bound, which is sound; the default's answers can only be worse."""
    pystreed = pytest.importorskip("pystreed")
    rng = np.random.default_rng(seed)
    n, F = 200, 2 + seed % 2
    X = rng.normal(size=(n, F)).round(1)
    y = 2.0 * (X[:, 0] > 0) + X[:, 1] * X[:, -1] + rng.normal(0, 0.5, n)
    B = binarised(X)
    data = numeric_data(X, y)
    root = error_scale(data)
    for cost in (0.0, 0.01, 0.05):
        for min_leaf in (1, 5):
            ours = solve(data, {"depth": depth, "leaf_cost": cost, "min_leaf": min_leaf})
            assert ours.optimal
            check_tree(ours, data)
            for bound in ("equivalent", "kmeans"):
                model = pystreed.STreeDRegressor(
                    optimization_task="cost-complex-regression", max_depth=depth,
                    cost_complexity=cost, min_leaf_node_size=min_leaf,
                    regression_lower_bound=bound, time_limit=120)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model.fit(B, y)
                theirs = float(((y - model.predict(B)) ** 2).sum()) \
                    + cost * root * (model.get_n_leaves() - 1)
                mine = ours.objective - ours.leaf_penalty
                if bound == "equivalent":
                    assert mine == pytest.approx(theirs, rel=1e-9)
                else:
                    assert mine <= theirs * (1 + 1e-9)


# ------------------------------------------------------------------ greedy, train
def signal_table(n, F, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, F)).round(2)
    y = 3.0 * (X[:, 0] > 0.3) + 2.0 * (X[:, 1] > -0.5) * (X[:, 0] <= 0.3) + X[:, 2] \
        + rng.normal(0, 1, n)
    return X, y


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_greedy_is_never_better_and_train_keeps_the_optimum(depth):
    X, y = signal_table(600, 4, depth)
    w = np.random.default_rng(depth).integers(1, 4, len(y)).astype(np.float64)
    data = numeric_data(X, y, w)
    greedy = train(data, "greedy", {"depth": depth})
    result = train(data, "contree", {"depth": depth})
    assert result.optimal and result.status == Status.OPTIMAL
    assert result.tree.regression
    assert greedy.train_error >= result.train_error * (1 - 1e-12)
    check_tree(result, data)
    # the search's own sums and the tree's SSE on the data agree
    assert result.stats["kernel_error"] == pytest.approx(result.train_error, rel=1e-9)
    if depth >= 2:
        assert result.train_error < greedy.train_error   # this table rewards lookahead
    cheap = train(data, "contree", {"depth": depth, "leaf_cost": 0.02})
    assert cheap.leaf_penalty == pytest.approx(0.02 * error_scale(data))
    greedy_cheap = train(data, "greedy", {"depth": depth, "leaf_cost": 0.02})
    assert greedy_cheap.objective >= cheap.objective * (1 - 1e-12)


def test_a_prepared_table_with_missing_cells(tmp_path):
    """Missing cells are routed (stand-in values) by preparation: the search runs on
    them like on any number, from the table to the tree's predictions."""
    data = prepare(read_table(house_table(tmp_path / "house.csv", rows=400)))
    assert data.regression and np.isfinite(data.X).all()
    assert "contree" in solvers_for(REGRESSION)
    result = train(data, "contree", {"depth": 2})
    greedy = train(data, "greedy", {"depth": 2})
    assert result.optimal and result.train_error <= greedy.train_error * (1 + 1e-12)
    check_tree(result, data)


def test_what_regression_does_not_take_is_said():
    X, y = signal_table(50, 3, 0)
    data = numeric_data(X, y)
    with pytest.raises(ParameterError, match="max_gap .* classification only"):
        solve(data, {"depth": 2, "max_gap": 0.1})
    X[3, 1] = np.nan
    with pytest.raises(DataError, match="finite feature values"):
        solve(numeric_data(X, y), {"depth": 2})
    # threads: the same answer (the regression search uses one)
    X, y = signal_table(300, 3, 1)
    data = numeric_data(X, y)
    one = solve(data, {"depth": 2, "threads": 1})
    two = solve(data, {"depth": 2, "threads": 2})
    assert one.objective == two.objective and two.stats["threads"] == 1


def test_a_search_that_does_not_fit_its_memory_keeps_a_leaf():
    X, y = signal_table(20_000, 5, 4)
    result = solve(numeric_data(X, y), {"depth": 2, "memory_mb": 1})
    assert result.status == Status.MEMORY_LIMIT and not result.optimal
    assert result.tree.n_leaves == 1 and result.stats["memory_needed_mb"] > 1
    assert result.train_error == pytest.approx(sse(y, np.ones(len(y))))


def test_small_and_degenerate_inputs():
    X, y = signal_table(30, 3, 2)
    data = numeric_data(X, y)
    leaf = solve(data, {"depth": 0})
    assert leaf.optimal and leaf.tree.n_leaves == 1
    assert leaf.train_error == pytest.approx(sse(y, np.ones(len(y))))
    constant = solve(numeric_data(X, np.full(len(y), 7.5)), {"depth": 3})
    assert constant.optimal and constant.tree.n_leaves == 1 and constant.train_error == 0
    one_value = solve(numeric_data(np.ones((30, 3)), y), {"depth": 2})
    assert one_value.optimal and one_value.tree.n_leaves == 1
    # rows of weight 0 are left out of the search, not out of the tree's figures
    w = np.ones(len(y))
    w[:5] = 0.0
    weighted = solve(numeric_data(X, y, w), {"depth": 2})
    kept = solve(numeric_data(X[5:], y[5:]), {"depth": 2})
    assert weighted.objective == pytest.approx(kept.objective, rel=1e-12)
    # a least leaf weight above half the rows: only the leaf
    assert solve(data, {"depth": 2, "min_leaf": 16}).tree.n_leaves == 1


# ------------------------------------------------------------------ anytime
def test_a_stopped_search_returns_its_best_tree_and_a_sound_bound():
    X, y = signal_table(3000, 6, 3)
    data = numeric_data(X, y)
    exact = solve(data, {"depth": 3})
    assert exact.optimal
    # a tenth of the whole search's time (sorting the rows takes about a hundredth)
    stopped = solve(data, {"depth": 3}, time_limit=max(exact.time_s / 10, 0.002))
    assert stopped.status == Status.TIME_LIMIT and not stopped.optimal
    check_tree(stopped, data)
    assert stopped.objective >= exact.objective * (1 - 1e-12)
    assert 0.0 <= stopped.lower_bound <= exact.objective * (1 + 1e-12)
    assert stopped.lower_bound <= stopped.objective
    assert stopped.incumbents and stopped.incumbents[-1][1] == pytest.approx(
        stopped.objective, rel=1e-9)


def every_split_point_at_depth_two(data, least, penalty):
    """The depth-two optimum by evaluating every root split point of every feature
    (each side's best depth-one tree by brute force over its thresholds)."""
    X, y, w = data.X, data.y, data.w

    def best_one(rows):
        value = sse(y[rows], w[rows]) + penalty
        for f in range(X.shape[1]):
            order = rows[np.argsort(X[rows, f], kind="stable")]
            xs, ws, ys = X[order, f], w[order], y[order]
            for k in range(1, len(order)):
                if xs[k] != xs[k - 1] and ws[:k].sum() >= least and ws[k:].sum() >= least:
                    value = min(value, sse(ys[:k], ws[:k]) + sse(ys[k:], ws[k:])
                                + 2 * penalty)
        return value

    rows = np.arange(len(y))
    best = best_one(rows)
    for f in range(X.shape[1]):
        for t in np.unique(X[:, f])[:-1]:
            go = X[:, f] <= t
            if w[go].sum() >= least and w[~go].sum() >= least:
                best = min(best, best_one(rows[go]) + best_one(rows[~go]))
    return best


@pytest.mark.parametrize("seed", range(3))
def test_depth_two_equals_every_split_point_on_larger_tables(seed):
    """The interval pruning of a depth-two search on 120 rows drops most root split
    points; evaluating all of them gives the same optimum."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(120, 3)).round(seed)   # 0 decimals: many ties
    y = np.sign(X[:, 0]) * 2 + X[:, 1] + rng.normal(0, 0.7, 120)
    w = rng.integers(1, 4, 120).astype(np.float64) if seed else np.ones(120)
    data = numeric_data(X, y, w)
    for min_leaf, cost in ((1, 0.0), (6, 0.0), (1, 0.02)):
        result = solve(data, {"depth": 2, "min_leaf": min_leaf, "leaf_cost": cost})
        expected = every_split_point_at_depth_two(data, min_leaf if min_leaf > 1 else 0,
                                                  cost * error_scale(data))
        assert result.optimal
        assert result.objective == pytest.approx(expected, rel=1e-9)
