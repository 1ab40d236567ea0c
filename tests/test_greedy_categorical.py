"""Categorical (subset) splits of the greedy kernel, against brute force in Python.

A split's cost is W_L * gini(L) + W_R * gini(R). With two classes the kernel's
subset is the best one (Breiman) as long as `min_leaf_weight` does not bind; with a
binding minimum it is the best valid prefix of the share order, and with more
classes the best of its heuristic candidates (see the kernel's module docstring).
"""

import hashlib
import itertools

import numpy as np
import pytest

from engine.solvers.greedy.kernel import NO_TARGET, grow_tree

NO_STOP = np.zeros(1)
MARGIN = 1e-9  # relative cost gap below which two splits count as equally good


def _grow(X, y, w, n_classes, max_depth, min_leaf_weight, n_categories, dtype=np.float64):
    return grow_tree(
        np.ascontiguousarray(X, dtype=dtype),
        np.asarray(y, dtype=np.int64),
        np.asarray(w, dtype=np.float64),
        n_classes,
        max_depth,
        float(min_leaf_weight),
        NO_STOP,
        np.asarray(n_categories, dtype=np.int64),
        NO_TARGET,
    )


def _class_weights(y, w, n_classes):
    out = np.zeros(n_classes)
    for label, weight in zip(y, w):
        out[label] += weight
    return out


def _cost(*children):
    """sum over children of W * gini, each child given by its class weights."""
    total = 0.0
    for counts in children:
        weight = counts.sum()
        if weight > 0:
            total += weight - (counts**2).sum() / weight
    return total


def _category_counts(codes, y, w, n_cat, n_classes):
    counts = np.zeros((n_cat, n_classes))
    for v, label, weight in zip(codes, y, w):
        counts[int(v), label] += weight
    return counts


def _share_order(counts, c):
    """Present categories (positive weight) by increasing share of class c, ties by code."""
    totals = counts.sum(axis=1)
    present = [v for v in range(len(counts)) if totals[v] > 0]
    return sorted(present, key=lambda v: (counts[v, c] / totals[v], v))


def _subset_cost(counts, subset):
    """(cost, W_L, W_R) of sending the categories in `subset` left."""
    mask = np.zeros(len(counts), dtype=bool)
    mask[list(subset)] = True
    left, right = counts[mask].sum(axis=0), counts[~mask].sum(axis=0)
    return _cost(left, right), left.sum(), right.sum()


def _best_over(counts, subsets, min_leaf):
    """Least cost over the valid subsets (np.inf when none is valid)."""
    best = np.inf
    for subset in subsets:
        cost, w_left, w_right = _subset_cost(counts, subset)
        if w_left >= min_leaf and w_right >= min_leaf and w_left > 0 and w_right > 0:
            best = min(best, cost)
    return best


def _all_subsets(present):
    """Every non-trivial subset of `present` up to complement (the first one is left out)."""
    rest = present[1:]
    for size in range(len(rest) + 1):
        for chosen in itertools.combinations(rest, size):
            if size < len(rest):
                yield (present[0],) + chosen  # its complement is the same split


def _prefixes(order):
    return [tuple(order[:length]) for length in range(1, len(order))]


def _random_categorical(rng, n_classes, max_categories=7):
    n_cat = int(rng.integers(2, max_categories + 1))
    n = int(rng.integers(2, 31))
    codes = rng.integers(0, n_cat, n)
    bias = rng.dirichlet(np.ones(n_cat * n_classes)).reshape(n_cat, n_classes)
    y = np.array([rng.choice(n_classes, p=bias[v] / bias[v].sum()) for v in codes])
    if rng.random() < 0.5:
        w = rng.choice([0.0, 0.5, 1.0, 2.0, 3.0], n)
    else:
        w = np.round(rng.random(n) * 3, 3)
    return codes, y, w, n_cat


def _root_split(tree):
    """(is split, cost from the children's values, subset of the root)."""
    feature, _, left, right, value, subset, _ = tree
    if feature[0] < 0:
        return False, None, None
    return True, _cost(value[left[0]], value[right[0]]), set(np.flatnonzero(subset[0]))


def _check_reported_side(subset, present, orders):
    """The subset holds present categories only, is the smaller side, and is a prefix of
    one of `orders` (its complement is then the winning prefix) or, at equal sizes,
    exactly a prefix."""
    assert subset and subset <= set(present)
    rest = set(present) - subset
    assert len(subset) <= len(rest)
    ok = False
    for order in orders:
        prefix, suffix = set(order[: len(subset)]), set(order[len(order) - len(subset):])
        if subset == prefix or (len(subset) < len(rest) and subset == suffix):
            ok = True
    return ok


def test_two_classes_is_the_best_subset():
    """Depth 1, one categorical feature: the kernel's cost is the brute-force optimum
    over all subsets of the present categories when every category can stand alone,
    else the best valid prefix of the share order (never better than the optimum)."""
    rng = np.random.default_rng(7)
    splits = 0
    for case in range(400):
        codes, y, w, n_cat = _random_categorical(rng, 2)
        counts = _category_counts(codes, y, w, n_cat, 2)
        totals = counts.sum(axis=1)
        present = [v for v in range(n_cat) if totals[v] > 0]
        binding = case % 2 == 1
        lightest = totals[present].min() if present else 1.0
        min_leaf = rng.choice([0.5, 1.0, 2.5, 4.0]) if binding else lightest * rng.random()
        tree = _grow(codes[:, None], y, w, 2, 1, min_leaf, [n_cat])
        is_split, cost, subset = _root_split(tree)
        node = counts.sum(axis=0)
        W = node.sum()
        order = _share_order(counts, 1)
        best = _best_over(counts, _all_subsets(present), min_leaf) if present else np.inf
        best_prefix = _best_over(counts, _prefixes(order), min_leaf)
        if np.count_nonzero(node) <= 1 or W < 2 * min_leaf:
            assert not is_split, case
            continue
        if not binding:
            assert best_prefix <= best + MARGIN * W, case   # Breiman's theorem
        if not is_split:
            assert best_prefix == np.inf, case
            continue
        splits += 1
        assert tree[1][0] == 0.5 and tree[0][0] == 0
        assert abs(cost - best_prefix) <= MARGIN * W, (case, cost, best_prefix)
        assert cost >= best - MARGIN * W
        if not binding:
            assert abs(cost - best) <= MARGIN * W, (case, cost, best)
        assert _subset_cost(counts, subset)[0] == pytest.approx(cost, abs=MARGIN * W)
        assert _check_reported_side(subset, present, [order]), (case, subset, order)
    assert splits > 200


@pytest.mark.parametrize("n_classes", [3, 4])
def test_many_classes_beat_every_single_and_share_prefix(n_classes):
    """Depth 1, K > 2: the kernel's split is at least as good as every one-category-
    versus-rest split and every prefix of every present class's share order."""
    rng = np.random.default_rng(n_classes)
    splits = 0
    for case in range(300):
        codes, y, w, n_cat = _random_categorical(rng, n_classes)
        counts = _category_counts(codes, y, w, n_cat, n_classes)
        totals = counts.sum(axis=1)
        present = [v for v in range(n_cat) if totals[v] > 0]
        min_leaf = rng.choice([0.25, 1.0, 2.0, 4.0])
        tree = _grow(codes[:, None], y, w, n_classes, 1, min_leaf, [n_cat])
        is_split, cost, subset = _root_split(tree)
        node = counts.sum(axis=0)
        W = node.sum()
        orders = [_share_order(counts, c) for c in range(n_classes) if node[c] > 0]
        candidates = [(v,) for v in present] + [p for o in orders for p in _prefixes(o)]
        best_heuristic = _best_over(counts, candidates, min_leaf)
        if np.count_nonzero(node) <= 1 or W < 2 * min_leaf:
            assert not is_split, case
            continue
        if not is_split:
            assert best_heuristic == np.inf, case
            continue
        splits += 1
        assert cost <= best_heuristic + MARGIN * W, (case, cost, best_heuristic)
        assert cost >= _best_over(counts, _all_subsets(present), min_leaf) - MARGIN * W
        assert _subset_cost(counts, subset)[0] == pytest.approx(cost, abs=MARGIN * W)
        assert subset and subset <= set(present)
        assert len(subset) == 1 or _check_reported_side(subset, present, orders), case
        assert len(subset) <= len(present) - len(subset)
    assert splits > 150


def test_middle_category_alone():
    """Category 0 (shares 3/4, 0, 1/4) is in the middle of both share orders, whose
    prefixes all leave a side lighter than min_leaf_weight = 4: only {0} versus the
    rest is valid, and the kernel finds it."""
    codes = np.array([0, 0, 0, 0, 1, 1, 2, 2, 2])
    y = np.array([0, 0, 0, 2, 0, 2, 0, 0, 0])
    tree = _grow(codes[:, None], y, np.ones(9), 3, 1, 4.0, [3])
    feature, _, left, right, value, subset, _ = tree
    assert feature[0] == 0
    np.testing.assert_array_equal(subset[0], [1, 0, 0])
    np.testing.assert_array_equal(value[left[0]], [3, 0, 1])
    np.testing.assert_array_equal(value[right[0]], [4, 0, 1])


def _node_rows(tree, X, n_categories):
    """Boolean matrix [n_rows, n_nodes] of the rows reaching each node, applying the
    tree in Python (numeric: x <= threshold left; categorical: subset[code] left)."""
    feature, threshold, left, right, _, subset, _ = tree
    masks = np.zeros((len(X), len(feature)), dtype=bool)
    masks[:, 0] = True
    for node in range(len(feature)):  # preorder: parents come first
        j = feature[node]
        if j < 0:
            continue
        if n_categories[j] > 0:
            goes_left = subset[node][X[:, j].astype(np.int64)] == 1
        else:
            goes_left = X[:, j] <= threshold[node]
        masks[:, left[node]] = masks[:, node] & goes_left
        masks[:, right[node]] = masks[:, node] & ~goes_left
    return masks


def _feature_best_costs(X, y, w, n_classes, n_categories, min_leaf):
    """Least valid split cost of each feature on these rows (all subsets for a
    categorical feature, all thresholds for the others); np.inf when none."""
    best = []
    for j in range(X.shape[1]):
        if n_categories[j] > 0:
            counts = _category_counts(X[:, j], y, w, n_categories[j], n_classes)
            present = [v for v in range(n_categories[j]) if counts[v].sum() > 0]
            best.append(_best_over(counts, _all_subsets(present), min_leaf))
            continue
        cost = np.inf
        for t in np.unique(X[:, j])[:-1]:
            goes_left = X[:, j] <= t
            L = _class_weights(y[goes_left], w[goes_left], n_classes)
            R = _class_weights(y[~goes_left], w[~goes_left], n_classes)
            if min(L.sum(), R.sum()) >= min_leaf and L.sum() > 0 and R.sum() > 0:
                cost = min(cost, _cost(L, R))
        best.append(cost)
    return np.array(best)


def _mixed_case(rng, n_classes):
    n = int(rng.integers(20, 60))
    n_cat = [0, 0, 5, 0, 2, 4]
    X = np.column_stack([
        np.round(rng.random(n), 2),            # numeric
        rng.integers(0, 2, n),                 # 0/1
        rng.integers(0, 5, n),                 # categorical, 5 codes
        rng.integers(0, 3, n),                 # numeric with few values
        rng.integers(0, 2, n),                 # categorical with codes 0/1
        rng.integers(0, 4, n),                 # categorical, 4 codes
    ]).astype(np.float64)
    y = (X[:, 2] % 2 + (X[:, 0] > 0.5) + (X[:, 5] == 1) + rng.integers(0, 2, n)) % n_classes
    w = rng.choice([1.0, 2.0, 3.0], n)
    return X, y.astype(np.int64), w, n_cat


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("dtype", [np.float64, np.uint8])
def test_mixed_depth_three_tree(n_classes, dtype):
    """Values are the class weights of the rows reaching each node under the
    documented routing; subsets are the smaller side among the node's categories;
    with 2 classes (every subset valid: weights >= min_leaf) each node takes the
    cheapest split, on the first feature reaching it."""
    rng = np.random.default_rng(10 * n_classes + (dtype == np.uint8))
    categorical_nodes = 0
    for case in range(15):
        X, y, w, n_cat = _mixed_case(rng, n_classes)
        if dtype == np.uint8:
            X[:, 0] = np.round(X[:, 0] * 9)          # small integers fit in uint8
        tree = _grow(X, y, w, n_classes, 3, 1.0, n_cat, dtype=dtype)
        feature, threshold, left, right, value, subset, stopped = tree
        assert not stopped and subset.shape == (len(feature), 5)
        masks = _node_rows(tree, X, n_cat)
        for node in range(len(feature)):
            rows = masks[:, node]
            np.testing.assert_allclose(value[node], _class_weights(y[rows], w[rows], n_classes))
            j = feature[node]
            if j < 0 or n_cat[j] == 0:
                assert not subset[node].any()
            if j < 0:
                continue
            assert value[left[node]].sum() >= 1.0 and value[right[node]].sum() >= 1.0
            if n_cat[j] > 0:
                categorical_nodes += 1
                assert threshold[node] == 0.5
                present = set(np.unique(X[rows & (w > 0), j]).astype(int))
                chosen = set(np.flatnonzero(subset[node]))
                assert chosen and chosen <= present
                assert len(chosen) <= len(present - chosen)
            if n_classes == 2:
                costs = _feature_best_costs(X[rows], y[rows], w[rows], 2, n_cat, 1.0)
                W = value[node].sum()
                cost = _cost(value[left[node]], value[right[node]])
                assert abs(cost - costs.min()) <= MARGIN * W, (case, node)
                assert j == np.flatnonzero(costs <= costs.min() + MARGIN * W)[0], (case, node)
    assert categorical_nodes >= 10


def _canonical(tree, node=0):
    """The subtree at `node` with each node's children as an unordered pair."""
    feature, _, left, right, value, _, _ = tree
    here = (int(feature[node]), tuple(np.round(value[node], 9)))
    if feature[node] < 0:
        return here
    return here + tuple(sorted((_canonical(tree, left[node]), _canonical(tree, right[node]))))


@pytest.mark.parametrize("seed", range(6))
def test_two_category_feature_splits_like_its_0_1_column(seed):
    """A categorical feature with V = 2 makes the same splits, at the same costs, as
    the same column read as 0/1 (its children may come in the other order)."""
    rng = np.random.default_rng(seed)
    for _ in range(10):
        n, f, k = int(rng.integers(10, 60)), int(rng.integers(1, 5)), int(rng.integers(2, 5))
        X = rng.integers(0, 2, (n, f)).astype(np.float64)
        X[:, 0] = np.round(rng.random(n), 2)
        y = rng.integers(0, k, n)
        w = rng.choice([0.5, 1.0, 2.0], n)
        plain = _grow(X, y, w, k, 4, 1.0, np.zeros(f))
        for j in range(1, f):
            n_cat = np.zeros(f)
            n_cat[j] = 2
            coded = _grow(X, y, w, k, 4, 1.0, n_cat)
            assert _canonical(coded) == _canonical(plain)


def _golden_case(seed):
    rng = np.random.default_rng(1000 + seed)
    n = int(rng.integers(15, 80))
    f = int(rng.integers(1, 6))
    k = int(rng.integers(2, 5))
    cols = []
    for _ in range(f):
        kind = rng.integers(0, 3)
        if kind == 0:
            cols.append(np.round(rng.random(n), 1))
        elif kind == 1:
            cols.append(rng.integers(0, 2, n).astype(float))
        else:
            cols.append(rng.integers(0, 6, n).astype(float))
    X = np.column_stack(cols)
    y = rng.integers(0, k, n)
    w = rng.choice([0.5, 1.0, 1.0, 1.0, 2.0], n)   # mostly 1: tied splits are common
    depth = int(rng.integers(2, 7))
    min_leaf = float(rng.choice([0.5, 1.0, 2.0]))
    return X, y, w, k, depth, min_leaf


def _fingerprint(tree):
    digest = hashlib.sha256()
    for a in tree:
        digest.update(np.ascontiguousarray(a).tobytes())
    return digest.hexdigest()[:16]


# SHA-256 prefixes of (feature, threshold, left, right, value, [stopped]) as the kernel
# returned them before categorical features existed (same seeds, same cases).
GOLDEN = [
    "fe4cdea54f34a949", "14e9285a8e988597", "206e8ec8cd4d7dcd", "33c66c9fcdcdc75f",
    "8fe80371f89886ee", "e86f2f2d7528d1ba", "d96b2b40a75814bb", "68d655d9f1298c86",
    "8f0a85f385306202", "2419261038dd396b", "8c96f95fad6b3bf7", "62ec44d26043a6ba",
    "e73c37a0596ffb77", "8d5da1e975789c3d", "451389559c78514f", "1b15cdd76a9f83eb",
    "8a37f16f2e08ed82", "2c05c2b142ff1b1b", "99e15be5886f2d9c", "2a6a4762301b058b",
    "e0b4822f25c76605", "74226e04b1969830", "8290fb892b8a8eec", "0f73b38729e81410",
]
GOLDEN_UINT8 = [
    "5769a8007c0a6132", "9fe37249af84f6cd", "206e8ec8cd4d7dcd", "40201b3f0c8fa8b1",
    "7d4b4008f75e4d5f", "e2f77cc5fb994a83",
]


def test_no_categorical_feature_is_the_old_kernel():
    """With n_categories all zero, trees are bit for bit those of the kernel before
    categorical splits (float64 and uint8 matrices), and no node has a subset."""
    for seed, expected in enumerate(GOLDEN):
        X, y, w, k, depth, min_leaf = _golden_case(seed)
        tree = _grow(X, y, w, k, depth, min_leaf, np.zeros(X.shape[1]))
        assert tree[5].shape == (len(tree[0]), 1) and not tree[5].any()
        assert _fingerprint(tree[:5] + (np.array([tree[6]]),)) == expected, seed
    for seed, expected in enumerate(GOLDEN_UINT8):
        X, y, w, k, depth, min_leaf = _golden_case(seed)
        Xb = np.ascontiguousarray(X > np.median(X, axis=0), dtype=np.uint8)
        tree = _grow(Xb, y, w, k, depth, min_leaf, np.zeros(X.shape[1]), np.uint8)
        assert _fingerprint(tree[:5] + (np.array([tree[6]]),)) == expected, seed
