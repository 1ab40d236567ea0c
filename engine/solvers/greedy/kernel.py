"""Numba kernel of Orchard's greedy (CART-like) baseline tree.

Why it mirrors scikit-learn
---------------------------
The greedy baseline is what a practitioner would get from
``sklearn.tree.DecisionTreeClassifier(criterion="gini", splitter="best")``;
optimal trees are judged against it, so the kernel reproduces that algorithm
rather than inventing a variant:

* depth-first growth with nodes numbered in preorder (parent, left subtree,
  right subtree), as scikit-learn's depth-first builder does;
* a node is a leaf when its depth equals ``max_depth``, it is pure (weighted
  Gini <= 1e-12), its total weight is below ``2 * min_leaf_weight``, or no valid
  split exists;
* candidate thresholds are midpoints ``a / 2 + b / 2`` between consecutive
  distinct values ``a < b`` of a feature on the node's rows (``a`` when the
  midpoint rounds to ``b``); a split is valid when both children keep a total
  weight >= ``min_leaf_weight``;
* the chosen split minimises ``W_L * gini(L) + W_R * gini(R)`` and is made even
  when it does not decrease impurity.

Tie-breaking
------------
Features are scanned in increasing index order and, within a feature,
thresholds in increasing order. A candidate replaces the incumbent only if its
cost is lower by more than ``1e-12 * W`` where ``W`` is the node's total weight
(the cost lies in ``[0, W]``, so the tolerance is relative to its scale). Exact
and rounding-level ties therefore go to the smallest feature index, then to the
smallest threshold. scikit-learn breaks such ties by a random feature order
instead, so the two agree whenever the best split of every node is unique.

Other differences from scikit-learn: values are compared in float64 and any two
distinct values are distinct (scikit-learn casts ``X`` to float32 and treats
values closer than 1e-7 as equal), and the build can be interrupted through
``control``.
"""

import numpy as np
from numba import njit

from engine.solvers import kernel_support as ks

PURE_TOLERANCE = 1e-12
TIE_TOLERANCE = 1e-12


@njit(cache=True, nogil=True)
def _gini(counts, total):
    """Gini impurity of a node with class weights `counts` summing to `total`."""
    if total <= 0.0:
        return 0.0
    sum_sq = 0.0
    for c in counts:
        sum_sq += (c / total) ** 2
    return 1.0 - sum_sq


@njit(cache=True, nogil=True)
def _proxy(left, node_total, w_left, w_right, n_classes, min_leaf_weight):
    """sum_k L_k^2 / W_L + sum_k R_k^2 / W_R, or -inf when a child is too light."""
    if w_left < min_leaf_weight or w_right < min_leaf_weight or w_left <= 0.0 \
            or w_right <= 0.0:
        return -np.inf
    proxy = 0.0
    for k in range(n_classes):
        r = node_total[k] - left[k]
        proxy += left[k] * left[k] / w_left + r * r / w_right
    return proxy


@njit(cache=True, nogil=True)
def _best_split(Xt, binary, y, w, rows, total, n_classes, min_leaf_weight):
    """Best (feature, threshold) for the node holding `rows`; feature -1 if none.

    Minimising W_L * gini(L) + W_R * gini(R) = W - (sum_k L_k^2 / W_L + sum_k R_k^2 / W_R)
    is done by maximising the bracketed "proxy", which is exact and cheaper.
    A 0/1 feature (`binary[j]`) has the single candidate 0.5, found by one counting
    pass instead of a sort.
    """
    n = rows.shape[0]
    values = np.empty(n)
    left = np.empty(n_classes)
    right_total = np.zeros(n_classes)
    for i in rows:
        right_total[y[i]] += w[i]
    best_feature = -1
    best_threshold = 0.0
    best_proxy = -np.inf
    tolerance = TIE_TOLERANCE * total
    for j in range(Xt.shape[0]):
        xj = Xt[j]
        if binary[j]:
            left[:] = 0.0
            w_left = 0.0
            for i in rows:
                if xj[i] == 0.0:
                    left[y[i]] += w[i]
                    w_left += w[i]
            proxy = _proxy(left, right_total, w_left, total - w_left, n_classes,
                           min_leaf_weight)
            if proxy > best_proxy + tolerance:
                best_proxy, best_feature, best_threshold = proxy, j, 0.5
            continue
        for p in range(n):
            values[p] = xj[rows[p]]
        order = np.argsort(values, kind="mergesort")
        if values[order[0]] == values[order[n - 1]]:
            continue
        left[:] = 0.0
        w_left = 0.0
        for p in range(n - 1):
            i = rows[order[p]]
            left[y[i]] += w[i]
            w_left += w[i]
            a = values[order[p]]
            b = values[order[p + 1]]
            if a == b:
                continue
            proxy = _proxy(left, right_total, w_left, total - w_left, n_classes,
                           min_leaf_weight)
            if proxy > best_proxy + tolerance:
                best_proxy = proxy
                best_feature = j
                best_threshold = a / 2.0 + b / 2.0
                if best_threshold == b or np.isinf(best_threshold):
                    best_threshold = a
    return best_feature, best_threshold


@njit(cache=True, nogil=True)
def _push(stack, top, start, end, depth, parent, is_left):
    """stack[top] = (start, end, depth, parent, is_left), element by element: assigning
    a tuple to an array row compiles a shape check that costs over a second."""
    stack[top, 0] = start
    stack[top, 1] = end
    stack[top, 2] = depth
    stack[top, 3] = parent
    stack[top, 4] = is_left


@njit(cache=True, nogil=True)
def grow_tree(X, y, w, n_classes, max_depth, min_leaf_weight, control):
    """Grow a greedy Gini tree (see the module docstring for the rules).

    X: float64[n, f] (0/1 or continuous) or uint8[n, f] (0/1), y: int64[n] classes in [0, n_classes),
    w: float64[n] >= 0 instance weights, max_depth >= 0, min_leaf_weight: minimum
    total weight of each child of a split, control: float64[k], polled once per
    node; control[0] != 0 stops growth and turns every pending node into a leaf.

    Returns (feature int32[m], threshold float64[m], left int32[m], right int32[m],
    value float64[m, n_classes], stopped bool). Node 0 is the root and nodes are
    numbered in preorder. A leaf has feature == left == right == -1 and threshold
    0.0; an internal node sends rows with X[i, feature] <= threshold to `left`,
    the others to `right`. value[node, k] is the total weight of class k among
    the training rows reaching the node, for every node.
    """
    n = X.shape[0]
    Xt = np.ascontiguousarray(X.T)
    binary = np.ones(Xt.shape[0], dtype=np.bool_)
    for j in range(Xt.shape[0]):
        for i in range(n):
            if Xt[j, i] != 0.0 and Xt[j, i] != 1.0:
                binary[j] = False
                break
    # A split leaves at least one row on each side, so there are at most n leaves.
    capacity = max(2 * n - 1, 1)
    if max_depth < 62:
        capacity = min(capacity, (1 << (max_depth + 1)) - 1)
    feature = np.full(capacity, -1, dtype=np.int32)
    threshold = np.zeros(capacity)
    left = np.full(capacity, -1, dtype=np.int32)
    right = np.full(capacity, -1, dtype=np.int32)
    value = np.zeros((capacity, n_classes))

    # Each node owns the segment rows[start:end]; splitting partitions it in place.
    rows = np.arange(n)
    buffer = np.empty(n, dtype=np.int64)
    # Pending nodes: (start, end, depth, parent, is_left child of parent).
    stack = np.empty((capacity + 1, 5), dtype=np.int64)
    _push(stack, 0, 0, n, 0, -1, 0)
    top = 1
    m = 0
    stopped = False
    while top > 0:
        top -= 1
        start, end, depth, parent, is_left = stack[top]
        node = m
        m += 1
        if parent >= 0:
            if is_left:
                left[parent] = node
            else:
                right[parent] = node
        segment = rows[start:end]
        counts = value[node]
        for i in segment:
            counts[y[i]] += w[i]
        total = counts.sum()

        if not stopped and control[0] != 0.0:
            stopped = True
        if (
            stopped
            or depth >= max_depth
            or total < 2.0 * min_leaf_weight
            or _gini(counts, total) <= PURE_TOLERANCE
        ):
            continue
        best_feature, best_threshold = _best_split(
            Xt, binary, y, w, segment, total, n_classes, min_leaf_weight
        )
        if best_feature < 0:
            continue
        feature[node] = best_feature
        threshold[node] = best_threshold

        # Stable partition: rows going left first, then rows going right.
        xj = Xt[best_feature]
        n_left = 0
        n_right = 0
        for i in segment:
            if xj[i] <= best_threshold:
                segment[n_left] = i
                n_left += 1
            else:
                buffer[n_right] = i
                n_right += 1
        ks.copy_prefix(segment[n_left:], buffer, n_right)

        # Push the right child first so the left subtree is numbered first.
        _push(stack, top, start + n_left, end, depth + 1, node, 0)
        _push(stack, top + 1, start, start + n_left, depth + 1, node, 1)
        top += 2

    return (
        feature[:m].copy(),
        threshold[:m].copy(),
        left[:m].copy(),
        right[:m].copy(),
        value[:m].copy(),
        stopped,
    )
