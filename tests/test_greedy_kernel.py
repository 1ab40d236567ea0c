"""Tests of the greedy CART kernel, mostly differential against scikit-learn.

scikit-learn breaks exact ties between equally good splits by a random feature
order while the kernel takes the smallest feature index, and with unit weights
exact ties are common in small nodes (the Gini cost depends only on the class
counts of the two children). The differential tests therefore compare against
scikit-learn only on datasets whose scikit-learn tree has a unique best split at
every node; tied datasets are covered by `_assert_greedy`, which checks each
split against a brute-force reference that applies the documented tie rule.

Continuous data is rounded to 6 decimals: scikit-learn casts X to float32 and
treats values closer than 1e-7 as equal, which would otherwise make its
candidate thresholds differ from the kernel's on rare draws.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.tree import DecisionTreeClassifier

from engine.solvers.greedy.kernel import NO_TARGET, grow_tree

NO_STOP = np.zeros(1)
TIE_MARGIN = 1e-9  # relative cost gap below which two candidate splits count as tied


def _grow(X, y, n_classes, max_depth, min_leaf_weight=1.0, w=None, control=NO_STOP):
    if w is None:
        w = np.ones(len(y))
    tree = grow_tree(
        np.asarray(X, dtype=np.float64),
        np.asarray(y, dtype=np.int64),
        np.asarray(w, dtype=np.float64),
        n_classes,
        max_depth,
        float(min_leaf_weight),
        control,
        np.zeros(np.shape(X)[1], dtype=np.int64),  # no categorical feature
        NO_TARGET,
    )
    assert not tree[5].any()  # so no node has a subset
    return tree[:5] + tree[6:]  # (feature, threshold, left, right, value, stopped)


def _predict(tree, X):
    feature, threshold, left, right, value, _ = tree
    out = np.empty(len(X), dtype=np.int64)
    for r, x in enumerate(X):
        node = 0
        while feature[node] >= 0:
            node = left[node] if x[feature[node]] <= threshold[node] else right[node]
        out[r] = np.argmax(value[node])
    return out


def _node_masks(tree, X):
    """Boolean matrix [n_rows, n_nodes]: which training rows reach which node."""
    feature, threshold, left, right, _, _ = tree
    masks = np.zeros((len(X), len(feature)), dtype=bool)
    masks[:, 0] = True
    for node in range(len(feature)):  # preorder: parents are filled before children
        if feature[node] >= 0:
            goes_left = X[:, feature[node]] <= threshold[node]
            masks[:, left[node]] = masks[:, node] & goes_left
            masks[:, right[node]] = masks[:, node] & ~goes_left
    return masks


def _depths(tree):
    feature, _, left, right, _, _ = tree
    depth = np.zeros(len(feature), dtype=np.int64)
    for node in range(len(feature)):
        if feature[node] >= 0:
            depth[left[node]] = depth[right[node]] = depth[node] + 1
    return depth


def _candidates(X, y, w, n_classes, min_leaf_weight):
    """Every valid split of the rows, in (feature, threshold) order.

    Returns (cost, feature, a, b) arrays: splitting between consecutive distinct
    values a < b of `feature` costs W_L * gini(L) + W_R * gini(R).
    """
    weighted = np.eye(n_classes)[y] * w[:, None]
    total = weighted.sum(axis=0)
    costs, features, lows, highs = [], [], [], []
    for j in range(X.shape[1]):
        order = np.argsort(X[:, j], kind="stable")
        xs = X[order, j]
        boundary = xs[:-1] < xs[1:]
        left = np.cumsum(weighted[order], axis=0)[:-1][boundary]
        right = total - left
        w_left, w_right = left.sum(axis=1), right.sum(axis=1)
        valid = (w_left >= min_leaf_weight) & (w_right >= min_leaf_weight)
        left, right, w_left, w_right = left[valid], right[valid], w_left[valid], w_right[valid]
        costs.append(
            w_left - (left**2).sum(axis=1) / w_left + w_right - (right**2).sum(axis=1) / w_right
        )
        features.append(np.full(len(w_left), j))
        lows.append(xs[:-1][boundary][valid])
        highs.append(xs[1:][boundary][valid])
    return tuple(np.concatenate(a) for a in (costs, features, lows, highs))


def _assert_greedy(tree, X, y, w, n_classes, max_depth, min_leaf_weight):
    """Check every node of `tree` against the rules of the module docstring."""
    feature, threshold, left, right, value, stopped = tree
    assert not stopped
    masks = _node_masks(tree, X)
    depth = _depths(tree)
    for node in range(len(feature)):
        rows = masks[:, node]
        np.testing.assert_allclose(
            value[node], np.bincount(y[rows], weights=w[rows], minlength=n_classes)
        )
        total = value[node].sum()
        costs, features, lows, highs = _candidates(
            X[rows], y[rows], w[rows], n_classes, min_leaf_weight
        )
        pure = np.count_nonzero(value[node]) <= 1
        if feature[node] < 0:
            assert left[node] == right[node] == -1 and threshold[node] == 0.0
            assert (
                depth[node] == max_depth
                or pure
                or total < 2 * min_leaf_weight
                or len(costs) == 0
            )
        else:
            assert depth[node] < max_depth and not pure
            assert value[left[node]].sum() >= min_leaf_weight
            assert value[right[node]].sum() >= min_leaf_weight
            # First candidate (smallest feature, then threshold) within the tie margin.
            best = np.flatnonzero(costs <= costs.min() + TIE_MARGIN * total)[0]
            assert feature[node] == features[best]
            assert lows[best] <= threshold[node] < highs[best]


def _has_tie(clf, X, y, n_classes, min_leaf_weight):
    """True when some split node of the fitted scikit-learn tree had tied best candidates."""
    masks = clf.decision_path(X).toarray().astype(bool)
    tree = clf.tree_
    for node in np.flatnonzero(tree.children_left >= 0):
        rows = masks[:, node]
        costs = np.sort(
            _candidates(X[rows], y[rows], np.ones(rows.sum()), n_classes, min_leaf_weight)[0]
        )
        if len(costs) > 1 and costs[1] - costs[0] <= TIE_MARGIN * rows.sum():
            return True
    return False


def _tie_free_case(seed, max_depth, min_leaf):
    """First random dataset drawn from `seed` whose scikit-learn tree has no tie."""
    rng = np.random.default_rng(seed)
    for _ in range(200):
        n = int(rng.integers(30, 301))
        f = int(rng.integers(1, 7))
        n_classes = int(rng.integers(2, 5))
        X = np.round(rng.random((n, f)), 6)
        y = rng.integers(0, n_classes, n)
        clf = DecisionTreeClassifier(
            max_depth=max_depth, min_samples_leaf=min_leaf, random_state=0
        ).fit(X, y)
        if not _has_tie(clf, X, y, n_classes, min_leaf):
            return X, y, n_classes, clf
    raise AssertionError("no tie-free dataset found")


def _assert_same_as_sklearn(tree, clf, X, y):
    feature, threshold, left, right, value, stopped = tree
    sk = clf.tree_
    assert not stopped
    assert len(feature) == sk.node_count
    np.testing.assert_array_equal(feature, np.where(sk.feature < 0, -1, sk.feature))
    np.testing.assert_array_equal(left, sk.children_left)
    np.testing.assert_array_equal(right, sk.children_right)
    internal = feature >= 0
    # scikit-learn computes midpoints of float32 values.
    np.testing.assert_allclose(threshold[internal], sk.threshold[internal], atol=1e-6)
    np.testing.assert_allclose(
        value[:, clf.classes_], sk.value[:, 0, :] * sk.weighted_n_node_samples[:, None]
    )
    predictions = _predict(tree, X)
    np.testing.assert_array_equal(predictions, clf.predict(X))
    leaves = ~internal
    training_error = (value[leaves].sum(axis=1) - value[leaves].max(axis=1)).sum()
    assert training_error == np.count_nonzero(clf.predict(X) != y)
    assert training_error == np.count_nonzero(predictions != y)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("max_depth", range(1, 6))
def test_matches_sklearn(max_depth, seed):
    X, y, n_classes, clf = _tie_free_case(seed, max_depth, min_leaf=1)
    tree = _grow(X, y, n_classes, max_depth)
    _assert_same_as_sklearn(tree, clf, X, y)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("min_leaf", [2, 3, 5, 10])
def test_matches_sklearn_min_samples_leaf(min_leaf, seed):
    max_depth = 1 + seed
    X, y, n_classes, clf = _tie_free_case(100 + seed, max_depth, min_leaf)
    tree = _grow(X, y, n_classes, max_depth, min_leaf_weight=min_leaf)
    _assert_same_as_sklearn(tree, clf, X, y)
    feature, value = tree[0], tree[4]
    assert value[feature < 0].sum(axis=1).min() >= min_leaf


@pytest.mark.parametrize("seed", range(20))
def test_greedy_on_tied_continuous_data(seed):
    """Data drawn without filtering ties: each split is the documented greedy choice."""
    rng = np.random.default_rng(seed)
    n, f, n_classes = int(rng.integers(30, 301)), int(rng.integers(1, 7)), int(rng.integers(2, 5))
    X, y = np.round(rng.random((n, f)), 6), rng.integers(0, n_classes, n)
    w = np.ones(n)
    tree = _grow(X, y, n_classes, 5)
    _assert_greedy(tree, X, y, w, n_classes, 5, 1.0)


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    n=st.integers(1, 60),
    f=st.integers(1, 5),
    n_classes=st.integers(1, 3),
    max_depth=st.integers(0, 6),
)
def test_binary_data_structure(data, n, f, n_classes, max_depth):
    X = data.draw(arrays(np.float64, (n, f), elements=st.sampled_from([0.0, 1.0])))
    y = data.draw(arrays(np.int64, n, elements=st.integers(0, n_classes - 1)))
    w = np.ones(n)
    tree = _grow(X, y, n_classes, max_depth)
    feature, threshold, left, right, value, _ = tree
    internal = feature >= 0
    assert np.all(threshold[internal] == 0.5)
    np.testing.assert_array_equal(value[internal], value[left[internal]] + value[right[internal]])
    _assert_greedy(tree, X, y, w, n_classes, max_depth, 1.0)


@settings(max_examples=40, deadline=None)
@given(
    data=st.data(),
    n=st.integers(2, 60),
    max_depth=st.integers(0, 5),
    min_leaf_weight=st.sampled_from([0.5, 1.0, 2.5, 4.0]),
)
def test_weighted_rows(data, n, max_depth, min_leaf_weight):
    """Fractional weights: value sums, min_leaf_weight and greedy choices all hold."""
    X = data.draw(arrays(np.float64, (n, 3), elements=st.integers(0, 4).map(float)))
    y = data.draw(arrays(np.int64, n, elements=st.integers(0, 2)))
    w = data.draw(arrays(np.float64, n, elements=st.sampled_from([0.25, 0.5, 1.0, 3.0])))
    tree = _grow(X, y, 3, max_depth, min_leaf_weight=min_leaf_weight, w=w)
    _assert_greedy(tree, X, y, w, 3, max_depth, min_leaf_weight)


@pytest.mark.parametrize("seed", range(10))
def test_duplicated_rows_equal_weight_two(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 120))
    X = np.round(rng.random((n, 4)), 2)
    y = rng.integers(0, 3, n)
    doubled = rng.random(n) < 0.3
    w = np.where(doubled, 2.0, 1.0)
    min_leaf = float(rng.integers(1, 4))
    weighted = _grow(X, y, 3, 4, min_leaf_weight=min_leaf, w=w)
    duplicated = _grow(
        np.vstack([X, X[doubled]]), np.concatenate([y, y[doubled]]), 3, 4, min_leaf_weight=min_leaf
    )
    for a, b in zip(weighted, duplicated):
        np.testing.assert_array_equal(a, b)


def test_stop_before_call_returns_root_leaf():
    X = np.array([[0.0], [1.0], [2.0]])
    feature, threshold, left, right, value, stopped = _grow(
        X, [0, 1, 1], 2, 3, control=np.array([1.0])
    )
    assert stopped
    np.testing.assert_array_equal(feature, [-1])
    np.testing.assert_array_equal(left, [-1])
    np.testing.assert_array_equal(right, [-1])
    np.testing.assert_array_equal(threshold, [0.0])
    np.testing.assert_array_equal(value, [[1.0, 2.0]])


def test_max_depth_zero_is_single_leaf():
    X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    feature, threshold, left, right, value, stopped = _grow(
        X, [0, 2, 2], 3, 0, w=[1.5, 1.0, 2.0]
    )
    assert not stopped
    np.testing.assert_array_equal(feature, [-1])
    np.testing.assert_array_equal(value, [[1.5, 0.0, 3.0]])


def test_unbounded_depth_grows_to_purity():
    rng = np.random.default_rng(0)
    X = np.round(rng.random((80, 3)), 3)
    y = rng.integers(0, 3, 80)
    tree = _grow(X, y, 3, 10**9)
    feature, value = tree[0], tree[4]
    assert np.all(np.count_nonzero(value[feature < 0], axis=1) == 1)
    _assert_greedy(tree, X, y, np.ones(80), 3, 10**9, 1.0)


def test_empty_and_constant_data_give_a_leaf():
    feature, _, _, _, value, _ = _grow(np.empty((0, 2)), np.empty(0, dtype=np.int64), 2, 3)
    np.testing.assert_array_equal(feature, [-1])
    np.testing.assert_array_equal(value, [[0.0, 0.0]])
    feature, _, _, _, value, _ = _grow(np.ones((4, 2)), [0, 1, 0, 1], 2, 3)
    np.testing.assert_array_equal(feature, [-1])
    np.testing.assert_array_equal(value, [[2.0, 2.0]])


def test_hand_made_tree():
    # Root: x0 <= 2.5 isolates the two class-0 rows (cost 1; x0 <= 1.5 costs 2.5,
    # x0 <= 3.5 costs 1.5, x1 <= 5.5 costs 7/3). The right node {1, 2} is split
    # perfectly by both x0 <= 3.5 and x1 <= 5.5: the tie goes to feature 0.
    X = np.array([[1.0, 5.0], [2.0, 6.0], [3.0, 5.0], [4.0, 6.0]])
    feature, threshold, left, right, value, stopped = _grow(
        X, [0, 0, 1, 2], 3, 2, w=[1.0, 2.0, 1.0, 1.0]
    )
    assert not stopped
    np.testing.assert_array_equal(feature, [0, -1, 0, -1, -1])
    np.testing.assert_array_equal(threshold, [2.5, 0.0, 3.5, 0.0, 0.0])
    np.testing.assert_array_equal(left, [1, -1, 3, -1, -1])
    np.testing.assert_array_equal(right, [2, -1, 4, -1, -1])
    np.testing.assert_array_equal(
        value, [[3, 1, 1], [3, 0, 0], [0, 1, 1], [0, 1, 0], [0, 0, 1]]
    )


def test_tie_between_thresholds_takes_smallest():
    # x0 <= 0.5 and x0 <= 2.5 both cost 4/3 (x0 <= 1.5 costs 2); x1 duplicates x0.
    X = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    feature, threshold, _, _, _, _ = _grow(X, [0, 1, 1, 0], 2, 1)
    np.testing.assert_array_equal(feature, [0, -1, -1])
    np.testing.assert_array_equal(threshold, [0.5, 0.0, 0.0])


def test_large_values_threshold_is_finite():
    # The midpoint of huge values is computed as a / 2 + b / 2, which cannot overflow.
    X = np.array([[1.5e308], [1.7e308]])
    feature, threshold, _, _, _, _ = _grow(X, [0, 1], 2, 1)
    assert feature[0] == 0 and 1.5e308 < threshold[0] < 1.7e308


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n=st.integers(2, 60), max_depth=st.integers(1, 4))
def test_missing_values_go_right_as_a_value_above_all_others(data, n, max_depth):
    """NaN cells sort last and fail every `x <= t`: the tree is the one grown with
    each NaN replaced by a number above every other value (same splits, children and
    counts), its thresholds are numbers, and a split between the largest number and
    the NaN cells is `x <= that number`."""
    X = data.draw(arrays(np.float64, (n, 3),
                         elements=st.sampled_from([0.0, 1.0, 2.5, 7.0, np.nan])))
    y = data.draw(arrays(np.int64, n, elements=st.integers(0, 2)))
    above = np.where(np.isnan(X), 100.0, X)
    feature, threshold, left, right, value, stopped = _grow(X, y, 3, max_depth)
    expected = _grow(above, y, 3, max_depth)
    np.testing.assert_array_equal(feature, expected[0])
    np.testing.assert_array_equal(left, expected[2])
    np.testing.assert_array_equal(right, expected[3])
    np.testing.assert_array_equal(value, expected[4])
    internal = feature >= 0
    assert not np.isnan(threshold).any()
    mid = expected[1][internal]   # a / 2 + b / 2; b = 100 stands for NaN: a = 2 mid - 100
    np.testing.assert_array_equal(threshold[internal], np.where(mid > 7.0, 2 * mid - 100, mid))
