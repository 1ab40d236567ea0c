"""The greedy kernel's regression trees (a numeric `target`): scikit-learn's
`DecisionTreeRegressor` node for node, every split the best by brute force, and value
groups whose best subset no other subset beats."""

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeRegressor

from engine.solvers.greedy.kernel import grow_tree

NO_STOP = np.zeros(1)


def _grow(X, target, max_depth, min_leaf_weight=1.0, w=None, n_categories=None):
    X = np.asarray(X, dtype=np.float64)
    n, f = X.shape
    w = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
    n_categories = np.zeros(f, np.int64) if n_categories is None else \
        np.asarray(n_categories, dtype=np.int64)
    return grow_tree(X, np.zeros(n, np.int64), w, 1, max_depth, float(min_leaf_weight),
                     NO_STOP, n_categories, np.asarray(target, dtype=np.float64))


def _leaf_of(tree, x):
    feature, threshold, left, right, _, subset, _ = tree
    node = 0
    while feature[node] >= 0:
        j = feature[node]
        if subset[node].any():
            goes_left = subset[node][int(x[j])] != 0
        else:
            goes_left = x[j] <= threshold[node]
        node = left[node] if goes_left else right[node]
    return node


def _sse(tree, X, target, w):
    value = tree[4]
    leaves = np.array([_leaf_of(tree, x) for x in X])
    means = value[leaves, 1]
    return float((w * (target - means) ** 2).sum())


def _data(seed, n=200, f=4):
    """Continuous features and target, exact in float32 (scikit-learn's dtype for X),
    so the best split of every node is unique."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, f)).astype(np.float32).astype(np.float64)
    target = X[:, 0] * 3 + np.sin(X[:, 1] * 2) + rng.normal(scale=0.3, size=n)
    return X, target


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("max_depth, min_leaf", [(1, 1), (3, 1), (5, 1), (4, 7), (8, 3)])
def test_matches_sklearn_regressor(seed, max_depth, min_leaf):
    """Node for node down to depth 4; deeper, nodes of a few rows tie (several features
    split them alike, which scikit-learn settles at random): the same training
    predictions and number of nodes."""
    X, target = _data(seed)
    ours = _grow(X, target, max_depth, min_leaf)
    model = DecisionTreeRegressor(max_depth=max_depth, min_samples_leaf=min_leaf,
                                  random_state=0).fit(X, target)
    reference = model.tree_
    feature, threshold, left, right, value, _, stopped = ours
    assert not stopped
    assert len(feature) == reference.node_count
    leaves = np.array([_leaf_of(ours, x) for x in X])
    np.testing.assert_allclose(value[leaves, 1], model.predict(X))
    if max_depth > 4:
        return
    internal = reference.children_left >= 0
    np.testing.assert_array_equal(np.where(internal, reference.feature, -1), feature)
    np.testing.assert_allclose(threshold[internal], reference.threshold[internal])
    np.testing.assert_array_equal(np.where(internal, reference.children_left, -1), left)
    np.testing.assert_array_equal(np.where(internal, reference.children_right, -1), right)
    np.testing.assert_allclose(value[:, 0], reference.weighted_n_node_samples)
    np.testing.assert_allclose(value[:, 1], reference.value[:, 0, 0])
    np.testing.assert_allclose(value[:, 2] / value[:, 0], reference.impurity, atol=1e-12)


def test_a_target_far_from_zero_gives_the_same_tree():
    """The kernel centres the target: squared sums of values near a million would
    otherwise swamp the squared errors (nodes taken for pure, ties everywhere)."""
    X, target = _data(11)
    far = _grow(X, target + 1e6, 4)
    near = _grow(X, target, 4)
    np.testing.assert_array_equal(far[0], near[0])
    np.testing.assert_allclose(far[1], near[1])
    np.testing.assert_allclose(far[4][:, 1], near[4][:, 1] + 1e6)
    np.testing.assert_allclose(far[4][:, 2], near[4][:, 2], rtol=1e-6)


def _best_split_sse(X, target, w, min_leaf):
    """The least summed squared error of the two sides of any valid threshold split."""
    best = np.inf
    for j in range(X.shape[1]):
        values = np.unique(X[:, j])
        for a, b in zip(values[:-1], values[1:]):
            goes_left = X[:, j] <= a / 2 + b / 2
            cost = 0.0
            for side in (goes_left, ~goes_left):
                weight = w[side].sum()
                if weight < min_leaf:
                    cost = np.inf
                    break
                mean = (w[side] * target[side]).sum() / weight
                cost += (w[side] * (target[side] - mean) ** 2).sum()
            best = min(best, cost)
    return best


@settings(max_examples=60, deadline=None)
@given(st.data(), st.integers(2, 30), st.integers(1, 3), st.integers(1, 4),
       st.sampled_from([1.0, 2.0, 3.5]))
def test_every_split_is_the_best_one(data, n, f, max_depth, min_leaf):
    """Each internal node's split has the least squared error of all valid splits of its
    rows (ties within rounding), on integer-valued columns full of ties, with weights."""
    X = np.array(data.draw(st.lists(st.lists(st.integers(0, 3), min_size=f, max_size=f),
                                    min_size=n, max_size=n)), dtype=np.float64)
    target = np.array(data.draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n)),
                      dtype=np.float64) * 1.5
    w = np.array(data.draw(st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=n,
                                    max_size=n)))
    tree = _grow(X, target, max_depth, min_leaf, w)
    feature, threshold, left, right, value, _, _ = tree
    reach = np.zeros((len(feature), n), dtype=bool)
    reach[0] = True
    for node in range(len(feature)):
        rows = reach[node]
        mean = (w * target)[rows].sum() / w[rows].sum()
        np.testing.assert_allclose(value[node], [w[rows].sum(), mean,
                                                 (w * (target - mean) ** 2)[rows].sum()],
                                   atol=1e-9)
        if feature[node] < 0:
            continue
        goes_left = X[:, feature[node]] <= threshold[node]
        reach[left[node]] = rows & goes_left
        reach[right[node]] = rows & ~goes_left
        split = sum((w[side] * (target[side] - (w[side] * target[side]).sum()
                                / w[side].sum()) ** 2).sum()
                    for side in (rows & goes_left, rows & ~goes_left))
        assert split <= _best_split_sse(X[rows], target[rows], w[rows], min_leaf) + 1e-9


def test_a_node_of_one_value_is_a_leaf():
    X = np.arange(8, dtype=np.float64).reshape(-1, 1)
    target = np.array([1, 1, 1, 1, 5, 5, 5, 5], dtype=np.float64)
    feature, threshold, *_ = _grow(X, target, 5)
    assert list(feature) == [0, -1, -1]
    assert threshold[0] == 3.5


def test_value_groups_take_the_best_subset():
    """A text column's split (mean-ordered prefix) equals the best of all its subsets."""
    rng = np.random.default_rng(3)
    for _ in range(40):
        V = int(rng.integers(2, 7))
        n = int(rng.integers(V, 40))
        codes = rng.integers(0, V, size=n).astype(np.float64)
        target = rng.normal(size=n).round(1) + codes % 3
        feature, threshold, _, _, value, subset, _ = _grow(codes[:, None], target, 1,
                                                           n_categories=[V])
        if feature[0] < 0:
            assert len(np.unique(codes)) < 2 or np.ptp(target) == 0
            continue
        goes_left = subset[0][codes.astype(int)] != 0
        ours = sum(((target[s] - target[s].mean()) ** 2).sum()
                   for s in (goes_left, ~goes_left))
        present = np.unique(codes).astype(int)
        best = np.inf
        for size in range(1, len(present)):
            for members in combinations(present, size):
                side = np.isin(codes, members)
                best = min(best, sum(((target[s] - target[s].mean()) ** 2).sum()
                                     for s in (side, ~side)))
        assert ours <= best + 1e-9


def test_missing_cells_sort_above_every_number():
    X = np.array([[1.0], [2.0], [np.nan], [np.nan], [3.0]])
    target = np.array([0.0, 0.0, 10.0, 10.0, 0.0])
    feature, threshold, left, right, value, _, _ = _grow(X, target, 1)
    assert feature[0] == 0 and threshold[0] == 3.0
    np.testing.assert_allclose(value[right[0]], [2.0, 10.0, 0.0])
