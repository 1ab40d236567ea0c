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

Categorical features (subset splits)
------------------------------------
scikit-learn's trees have no categorical splits; these follow Breiman et al.
(CART, 1984) and are an addition. A feature with ``n_categories[j] = V > 0`` holds
category codes ``0 .. V-1`` (never treated as 0/1, even with two codes) and is
split by a subset ``S`` of its categories: rows whose code is in ``S`` go left.
Only the categories *present* at the node (positive total weight there) take
part; the others are never in ``S`` and go right.

The *share order* of class ``c`` lists the present categories by increasing
weighted share of class ``c`` (``weight of class c / weight of the category``),
equal shares by increasing code (`class_share_orders` uses the same rule and
lists absent categories last). The candidates of a categorical feature are the
prefixes of share orders, scanned by increasing length with the same ``_proxy``
cost, validity rule and tie tolerance as thresholds:

* 2 classes: the share order of class 1 only. With two classes the best subset
  for Gini is a prefix of it (Breiman's theorem), so the split is exact as long
  as ``min_leaf_weight`` does not bind; when it does, the best *valid prefix* is
  taken, which can miss a valid non-prefix subset (e.g. a heavy middle category
  alone versus two light ones at the extremes).
* K > 2 classes: the share order of every class present at the node, in
  increasing class order, then every one-category-versus-rest split, in
  increasing code order (a category can sit in the middle of every share
  order). This is a heuristic (the exact problem is exponential in V): it holds
  the Breiman split of each class against the others and every single category
  against the rest, but not every subset.

Of the winning candidate (a prefix or a single category) and its complement
among the present categories, the side with fewer categories is reported as
``S`` (the candidate itself on equal counts); both give the same cost. Cost per
node and categorical feature: O(rows + V K) to count and scan the single
categories, plus O(V log V + V K) per share order scanned (one for 2 classes, at
most K otherwise), in arrays allocated once per tree.

Categorical features take their turn in the feature-index scan like any other,
and every candidate, within a feature in the order listed above, replaces the
incumbent only if it is cheaper by more than the tolerance: exact and
rounding-level ties go to the smaller feature index, then to the earlier
candidate.
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
def _sort_codes(codes, scratch, key, n):
    """Sort codes[:n] in place by (key[code], code), increasing: a bottom-up merge
    sort, O(n log n) without allocation (`scratch` holds at least n entries)."""
    src = codes
    dst = scratch
    passes = 0
    width = 1
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            a = lo
            b = mid
            k = lo
            while a < mid and b < hi:
                u = src[a]
                v = src[b]
                if key[v] < key[u] or (key[v] == key[u] and v < u):
                    dst[k] = v
                    b += 1
                else:
                    dst[k] = u
                    a += 1
                k += 1
            while a < mid:
                dst[k] = src[a]
                a += 1
                k += 1
            while b < hi:
                dst[k] = src[b]
                b += 1
                k += 1
            lo += 2 * width
        src, dst = dst, src
        passes += 1
        width *= 2
    if passes % 2 == 1:
        ks.copy_prefix(codes, scratch, n)


@njit(cache=True, nogil=True)
def _count_categories(xj, y, w, rows, n_cat, n_classes, cat_counts, cat_total, present):
    """Weighted class counts cat_counts[v, k] and totals cat_total[v] of the categories
    v < n_cat over `rows`; present[:p] = the codes of positive total weight,
    increasing. Returns p."""
    for v in range(n_cat):
        cat_total[v] = 0.0
        for k in range(n_classes):
            cat_counts[v, k] = 0.0
    for i in rows:
        v = int(xj[i])
        cat_counts[v, y[i]] += w[i]
        cat_total[v] += w[i]
    n_present = 0
    for v in range(n_cat):
        if cat_total[v] > 0.0:
            present[n_present] = v
            n_present += 1
    return n_present


@njit(cache=True, nogil=True)
def _share_order(cat_counts, cat_total, c, present, n_present, order, scratch, key):
    """order[:n_present] = the codes present[:n_present] by increasing share of class
    c, equal shares by increasing code (the share order of the module docstring)."""
    for p in range(n_present):
        v = present[p]
        key[v] = cat_counts[v, c] / cat_total[v]
        order[p] = v
    _sort_codes(order, scratch, key, n_present)


@njit(cache=True, nogil=True)
def class_share_orders(codes, y, w, n_cat, n_classes, max_orders):
    """Share orders of a categorical column, by the splitter's rule (`_share_order`).

    codes: category codes in [0, n_cat) (float64 or uint8), y: int64 classes in
    [0, n_classes), w: float64 weights >= 0.

    Returns (orders int64[k, n_cat], totals float64[n_cat]). totals[v] is the weight
    of category v. Row r of `orders` lists the categories of positive weight by
    increasing weighted share of class c_r (ties by increasing code), then those of
    zero weight by increasing code. With at most 2 classes k = 1 and c_0 is the last
    class (class 1, the splitter's only order for 2 classes); otherwise
    k = min(max(max_orders, 1), n_classes) and c_0, c_1, ... are the classes of
    largest total weight, heaviest first (equal weights by increasing class),
    whereas the splitter scans every class present at the node.
    """
    n = codes.shape[0]
    cat_counts = np.zeros((n_cat, n_classes))
    cat_total = np.zeros(n_cat)
    present = np.empty(n_cat, dtype=np.int64)
    order = np.empty(n_cat, dtype=np.int64)
    scratch = np.empty(max(n_cat, n_classes), dtype=np.int64)
    key = np.empty(max(n_cat, n_classes))
    n_present = _count_categories(codes, y, w, np.arange(n), n_cat, n_classes,
                                  cat_counts, cat_total, present)
    if n_classes <= 2:
        k = 1
        classes = np.full(1, max(n_classes - 1, 0), dtype=np.int64)
    else:
        k = min(max(max_orders, 1), n_classes)
        classes = np.arange(n_classes)
        for c in range(n_classes):
            key[c] = 0.0
        for i in range(n):
            key[y[i]] -= w[i]           # heaviest first: increasing minus weight
        _sort_codes(classes, scratch, key, n_classes)
    orders = np.empty((k, n_cat), dtype=np.int64)
    for r in range(k):
        _share_order(cat_counts, cat_total, classes[r], present, n_present, order,
                     scratch, key)
        for p in range(n_present):
            orders[r, p] = order[p]
        p = n_present
        for v in range(n_cat):
            if cat_total[v] <= 0.0:
                orders[r, p] = v
                p += 1
    return orders, cat_total


@njit(cache=True, nogil=True)
def _best_subset(xj, n_cat, y, w, rows, node_total, total, n_classes, min_leaf_weight,
                 best_proxy, tolerance, left, cat_counts, cat_total, present, order,
                 scratch, key, best_subset):
    """Scan the categorical feature `xj` (see the module docstring) against the
    incumbent `best_proxy`. Returns (proxy, improved); when improved,
    best_subset[:n_cat] marks the categories of the reported (smaller) left side."""
    n_present = _count_categories(xj, y, w, rows, n_cat, n_classes, cat_counts,
                                  cat_total, present)
    improved = False
    if n_present < 2:
        return best_proxy, improved
    first = 1 if n_classes == 2 else 0
    for c in range(first, n_classes):
        if node_total[c] <= 0.0:
            continue
        _share_order(cat_counts, cat_total, c, present, n_present, order, scratch, key)
        for k in range(n_classes):
            left[k] = 0.0
        w_left = 0.0
        best_length = 0
        for p in range(n_present - 1):
            v = order[p]
            for k in range(n_classes):
                left[k] += cat_counts[v, k]
            w_left += cat_total[v]
            proxy = _proxy(left, node_total, w_left, total - w_left, n_classes,
                           min_leaf_weight)
            if proxy > best_proxy + tolerance:
                best_proxy = proxy
                best_length = p + 1
        if best_length > 0:
            improved = True
            for v in range(n_cat):
                best_subset[v] = 0
            if best_length <= n_present - best_length:
                for p in range(best_length):
                    best_subset[order[p]] = 1
            else:
                for p in range(best_length, n_present):
                    best_subset[order[p]] = 1
    if n_classes > 2:
        # One category versus the rest (not always a prefix of a share order).
        best_single = -1
        for p in range(n_present):
            v = present[p]
            for k in range(n_classes):
                left[k] = cat_counts[v, k]
            proxy = _proxy(left, node_total, cat_total[v], total - cat_total[v],
                           n_classes, min_leaf_weight)
            if proxy > best_proxy + tolerance:
                best_proxy = proxy
                best_single = v
        if best_single >= 0:
            improved = True
            for v in range(n_cat):
                best_subset[v] = 0
            best_subset[best_single] = 1
    return best_proxy, improved


@njit(cache=True, nogil=True)
def _best_split(Xt, binary, n_categories, y, w, rows, total, n_classes, min_leaf_weight,
                cat_counts, cat_total, present, order, scratch, key, best_subset):
    """Best (feature, threshold) for the node holding `rows`; feature -1 if none.

    Minimising W_L * gini(L) + W_R * gini(R) = W - (sum_k L_k^2 / W_L + sum_k R_k^2 / W_R)
    is done by maximising the bracketed "proxy", which is exact and cheaper.
    A 0/1 feature (`binary[j]`) has the single candidate 0.5, found by one counting
    pass instead of a sort. A categorical feature (`n_categories[j] > 0`) is split
    by `_best_subset`; when it wins, best_subset[:n_categories[feature]] holds the
    left side and the threshold is 0.5.
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
        if n_categories[j] > 0:
            best_proxy, improved = _best_subset(
                xj, n_categories[j], y, w, rows, right_total, total, n_classes,
                min_leaf_weight, best_proxy, tolerance, left, cat_counts, cat_total,
                present, order, scratch, key, best_subset)
            if improved:
                best_feature, best_threshold = j, 0.5
            continue
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
def grow_tree(X, y, w, n_classes, max_depth, min_leaf_weight, control, n_categories):
    """Grow a greedy Gini tree (see the module docstring for the rules).

    X: float64[n, f] (0/1, continuous or category codes) or uint8[n, f] (0/1 or
    category codes), y: int64[n] classes in [0, n_classes), w: float64[n] >= 0
    instance weights, max_depth >= 0, min_leaf_weight: minimum total weight of each
    child of a split, control: float64[k], polled once per node; control[0] != 0
    stops growth and turns every pending node into a leaf. n_categories: int64[f],
    0 for an ordinary feature, V > 0 for a categorical one whose column holds the
    codes 0 .. V-1 (not checked: another value is undefined behaviour).

    Returns (feature int32[m], threshold float64[m], left int32[m], right int32[m],
    value float64[m, n_classes], subset uint8[m, Vmax], stopped bool), with
    Vmax = max(1, max(n_categories)). Node 0 is the root and nodes are numbered in
    preorder. A leaf has feature == left == right == -1 and threshold 0.0. An
    internal node on an ordinary feature sends rows with X[i, feature] <= threshold
    to `left`, the others to `right`; one on a categorical feature has threshold
    0.5 and sends rows with subset[node, X[i, feature]] == 1 to `left`, the others
    to `right`. subset rows of the other nodes are zero. value[node, k] is the
    total weight of class k among the training rows reaching the node, for every
    node.
    """
    n = X.shape[0]
    Xt = np.ascontiguousarray(X.T)
    n_features = Xt.shape[0]
    if n_categories.shape[0] != n_features:
        raise ValueError("n_categories needs one entry per feature")
    v_max = 1
    for j in range(n_features):
        v_max = max(v_max, n_categories[j])
    binary = np.ones(n_features, dtype=np.bool_)
    for j in range(n_features):
        if n_categories[j] > 0:
            binary[j] = False
            continue
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
    subset = np.zeros((capacity, v_max), dtype=np.uint8)
    # Scratch of the categorical splits, allocated once.
    cat_counts = np.empty((v_max, n_classes))
    cat_total = np.empty(v_max)
    present = np.empty(v_max, dtype=np.int64)
    order = np.empty(v_max, dtype=np.int64)
    scratch = np.empty(v_max, dtype=np.int64)
    key = np.empty(v_max)
    best_subset = np.zeros(v_max, dtype=np.uint8)

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
            Xt, binary, n_categories, y, w, segment, total, n_classes, min_leaf_weight,
            cat_counts, cat_total, present, order, scratch, key, best_subset
        )
        if best_feature < 0:
            continue
        feature[node] = best_feature
        threshold[node] = best_threshold
        n_cat = n_categories[best_feature]
        for v in range(n_cat):
            subset[node, v] = best_subset[v]

        # Stable partition: rows going left first, then rows going right.
        xj = Xt[best_feature]
        n_left = 0
        n_right = 0
        for i in segment:
            if n_cat > 0:
                goes_left = subset[node, int(xj[i])] != 0
            else:
                goes_left = xj[i] <= best_threshold
            if goes_left:
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
        subset[:m].copy(),
        stopped,
    )
