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
  weight >= ``min_leaf_weight``; a NaN cell sorts above every number and fails
  every ``x <= t``, so it is one value above the others (``a`` is the threshold
  between the largest number and NaN, and NaN cells are never split apart);
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

Regression
----------
Given a numeric ``target`` the kernel grows scikit-learn's
``DecisionTreeRegressor(criterion="squared_error")`` instead, by the same code: a
row's single "class" (``n_classes`` 1) adds ``w * target`` instead of ``w``, so the
Gini proxy above becomes ``S_L^2 / W_L + S_R^2 / W_R`` (``S`` the weighted sum of
the target), the proxy whose maximum minimises the children's summed squared error.
A node is pure when its squared error is a rounding of its targets' squared sum
(which also scales the tie tolerance). The share order of a categorical feature is
then the order of its categories' mean targets, and a prefix of it is the best
subset for squared error (Fisher, 1958) under the same ``min_leaf_weight`` caveat.

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
equal shares by increasing code. The candidates of a categorical feature are the
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

Data layout and cost
--------------------
The kernel first splits X by kind of feature: the 0/1 features into a uint8
matrix, row by row (one pass over a node's rows counts the left side of every 0/1
feature at once), the others into a float64 matrix, column by column.

Each continuous feature (neither 0/1 nor categorical) is sorted once, at the root,
by (value, row index), -0.0 with 0.0 and NaN last: the order in which a stable sort
of a node's values puts the node's rows, since every node keeps its rows in
increasing index order. A split partitions each feature's sorted segment stably
between its children (the classic presorted CART; skipped when the children are
at the maximum depth), so a node scans every feature in sorted order without
sorting, in O(rows) per feature, and adds up the weights in exactly the order a
per-node sort would. The sorted rows take 4 bytes per row and continuous feature
(int32: at most 2^31 - 1 rows); the sign bit of an entry marks a change of value,
so a scan reads values only where it evaluates a threshold. The sort is an LSD
radix sort on order-preserving 64-bit keys, or on the ranks of the keys for a
column of at most 2^16 distinct values.
"""

import numpy as np
from numba import njit

from engine.solvers import kernel_support as ks

PURE_TOLERANCE = 1e-12
TIE_TOLERANCE = 1e-12
NO_TARGET = np.zeros(0)   # grow_tree's `target` for a classification tree


def target_arguments(y: np.ndarray, n_classes: int) -> tuple:
    """grow_tree's (y, n_classes, target) for class indices `y` of `n_classes` classes,
    or for a regression's numbers `y` (`n_classes` 0)."""
    if n_classes == 0:
        return (np.zeros(len(y), dtype=np.int64), 1,
                np.ascontiguousarray(y, dtype=np.float64))
    return np.ascontiguousarray(y, dtype=np.int64), n_classes, NO_TARGET


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
def _count_categories(xj, y, w, target, rows, n_cat, n_classes, cat_counts, cat_total,
                      present):
    """Weighted class counts cat_counts[v, k] (regression: the weighted sum of the
    target, cat_counts[v, 0]) and totals cat_total[v] of the categories v < n_cat over
    `rows`; present[:p] = the codes of positive total weight, increasing. Returns p."""
    for v in range(n_cat):
        cat_total[v] = 0.0
        for k in range(n_classes):
            cat_counts[v, k] = 0.0
    regression = target.shape[0] > 0
    for i in rows:
        v = int(xj[i])
        if regression:
            cat_counts[v, 0] += w[i] * target[i]
        else:
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
def _best_subset(xj, n_cat, y, w, target, rows, node_total, total, n_classes,
                 min_leaf_weight, best_proxy, tolerance, left, cat_counts, cat_total,
                 present, order, scratch, key, best_subset):
    """Scan the categorical feature `xj` (see the module docstring) against the
    incumbent `best_proxy`. Returns (proxy, improved); when improved,
    best_subset[:n_cat] marks the categories of the reported (smaller) left side."""
    n_present = _count_categories(xj, y, w, target, rows, n_cat, n_classes, cat_counts,
                                  cat_total, present)
    regression = target.shape[0] > 0
    improved = False
    if n_present < 2:
        return best_proxy, improved
    first = 1 if n_classes == 2 else 0
    for c in range(first, n_classes):
        if node_total[c] <= 0.0 and not regression:
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


RADIX_BITS = 11         # digit of the presort's radix sort
RADIX_PASSES = 6        # ceil(64 / RADIX_BITS)
DISTINCT_MAX = 1 << 16  # the presort ranks a column of at most this many values
HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
# An entry of the presorted rows is the row (< 2^31) in its low 31 bits; its sign bit
# says that its value differs (`not ==`) from the value of the entry before it.
ROW = 0x7FFFFFFF
NEW_VALUE = np.int32(-0x80000000)


@njit(cache=True, nogil=True)
def _radix_sort(source, target, source_rows, target_rows, digits, histogram, control):
    """Stable LSD radix sort of the uint64 keys `source` with their int32 payloads
    `source_rows`, on their lowest `digits` digits of RADIX_BITS (the others must
    be 0), skipping the digits all keys share; `target`, `target_rows` (as long)
    and `histogram` (int64[RADIX_PASSES, 2^RADIX_BITS]) are scratch. Returns the
    number of passes made: the sorted pairs are in (source, source_rows) when it is
    even, in (target, target_rows) when it is odd; -1 once control[0] is nonzero
    (polled before each pass)."""
    n = source.shape[0]
    mask = np.uint64((1 << RADIX_BITS) - 1)
    histogram[:, :] = 0
    for i in range(n):
        key = source[i]
        for d in range(digits):
            histogram[d, (key >> np.uint64(d * RADIX_BITS)) & mask] += 1
    passes = 0
    for d in range(digits):
        if control[0] != 0.0:
            return -1
        shift = np.uint64(d * RADIX_BITS)
        if n == 0 or histogram[d, (source[0] >> shift) & mask] == n:
            continue                            # one digit for all: order kept
        position = 0
        for digit in range(1 << RADIX_BITS):
            count = histogram[d, digit]
            histogram[d, digit] = position
            position += count
        for i in range(n):
            key = source[i]
            digit = (key >> shift) & mask
            p = histogram[d, digit]
            histogram[d, digit] = p + 1
            target[p] = key
            target_rows[p] = source_rows[i]
        source, target = target, source
        source_rows, target_rows = target_rows, source_rows
        passes += 1
    return passes


@njit(cache=True, nogil=True)
def _presort(xj, out, keys, keys2, rows2, histogram, table_key, table_id, values,
             codes, scratch, control):
    """out[:n] = the rows 0 .. n-1 by increasing (xj[i], i), -0.0 equal to 0.0 and
    NaN last, equal to each other: the order of numba's and numpy's stable argsort
    of xj; each entry but the first carries NEW_VALUE (its sign bit) when its value
    is not == to the previous entry's (`row = entry & ROW`).

    The rows are sorted by `_radix_sort` of an order-preserving 64-bit key of their
    values or, when the column has at most values.shape[0] distinct values (found
    with the hash table table_key (int64), table_id (int32) of twice that size, a
    power of two), of the ranks of their values, which takes one or two passes
    instead of six. keys, keys2 (float64[n]), rows2 (int32[n]), histogram, values
    (float64[m]), codes and scratch (int64[m]) are scratch. Polls control[0] between passes and returns
    False, `out` undefined, once it is nonzero."""
    n = xj.shape[0]
    for i in range(n):
        value = xj[i]
        if value != value:
            value = np.nan                          # one NaN
        keys[i] = 0.0 if value == 0.0 else value    # -0.0 sorts with 0.0
    source = keys.view(np.uint64)
    nan_key = ~np.uint64(0)                         # the key of NaN, above +inf
    digits = RADIX_PASSES

    # The distinct values, numbered by first occurrence into rows2, while they fit.
    hash_keys = table_key.view(np.uint64)
    size = table_id.shape[0]
    limit = values.shape[0]
    hash_bits = 0
    while (1 << hash_bits) < size:
        hash_bits += 1
    hash_shift = np.uint64(64 - hash_bits)
    size_mask = np.uint64(size - 1)
    for h in range(size):
        table_id[h] = -1
    n_distinct = 0
    fits = True
    for i in range(n):
        key = source[i]
        h = (key * HASH_MULTIPLIER) >> hash_shift
        number = table_id[h]
        while number >= 0 and hash_keys[h] != key:
            h = (h + np.uint64(1)) & size_mask
            number = table_id[h]
        if number < 0:
            if n_distinct == limit:
                fits = False
                break
            number = n_distinct
            table_id[h] = number
            hash_keys[h] = key
            values[number] = keys[i]
            n_distinct += 1
        rows2[i] = number
    if control[0] != 0.0:
        return False
    if fits:
        # Rank the distinct values (NaN last), then key each row by its rank.
        n_numbers = np.int64(0)     # not a literal 0: _sort_codes compiled once
        nan_number = -1
        for v in range(n_distinct):
            if values[v] != values[v]:
                nan_number = v
            else:
                codes[n_numbers] = v
                n_numbers += 1
        _sort_codes(codes, scratch, values, n_numbers)
        rank = scratch                              # by number
        for r in range(n_numbers):
            rank[codes[r]] = r
        if nan_number >= 0:
            rank[nan_number] = n_numbers
            nan_key = np.uint64(n_numbers)
        for i in range(n):
            source[i] = rank[rows2[i]]
        digits = 1
        while n_distinct > 1 << (digits * RADIX_BITS):
            digits += 1
    else:
        sign = np.uint64(1) << np.uint64(63)
        for i in range(n):
            if keys[i] != keys[i]:
                source[i] = nan_key
            else:
                key = source[i]
                source[i] = ~key if key & sign else key | sign
    for i in range(n):
        out[i] = i
    target = keys2.view(np.uint64)
    passes = _radix_sort(source, target, out, rows2, digits, histogram, control)
    if passes < 0:
        return False
    if passes % 2 == 1:
        for i in range(n):
            out[i] = rows2[i]
        source = target
    for p in range(1, n):                       # source: the sorted keys
        if source[p] != source[p - 1] or source[p] == nan_key:
            out[p] |= NEW_VALUE                 # (NaN != NaN)
    return True


@njit(cache=True, nogil=True)
def _columns(X, n_categories, binary, column, control):
    """Split X by kind of feature: binary[j] = feature j is 0/1 (only 0.0 and 1.0
    and not categorical), Xv (float64[features not 0/1, n]) holds the others
    transposed and B (uint8[n, 0/1 features]) holds the 0/1 ones, as 0 and 1;
    column[j] = the row of Xv or the column of B of feature j. Returns (Xv, B, done),
    done False (Xv and B incomplete) when it saw control[0] != 0 (polled every
    2^16 rows of each pass).

    X is read by blocks of rows: a transposed copy walking X column by column would
    take a cache line per element."""
    n, n_features = X.shape
    block = 256
    candidates = 0
    for j in range(n_features):
        binary[j] = n_categories[j] == 0
        candidates += binary[j]
    i0 = 0
    while i0 < n and candidates > 0:
        if i0 % 65536 == 0 and control[0] != 0.0:
            return np.empty((0, n)), np.empty((n, 0), dtype=np.uint8), False
        i1 = min(i0 + block, n)
        for i in range(i0, i1):
            for j in range(n_features):
                v = X[i, j]
                binary[j] &= (v == 0.0) | (v == 1.0)
        candidates = 0
        for j in range(n_features):
            candidates += binary[j]
        i0 = i1
    n_values = 0
    n_bits = 0
    for j in range(n_features):
        if binary[j]:
            column[j] = n_bits
            n_bits += 1
        else:
            column[j] = n_values
            n_values += 1
    Xv = np.empty((n_values, n))
    B = np.empty((n, n_bits), dtype=np.uint8)
    for i0 in range(0, n, block):
        if i0 % 65536 == 0 and control[0] != 0.0:
            return Xv, B, False
        i1 = min(i0 + block, n)
        for j in range(n_features):
            c = column[j]
            if binary[j]:
                for i in range(i0, i1):
                    B[i, c] = X[i, j] != 0.0
            else:
                for i in range(i0, i1):
                    Xv[c, i] = X[i, j]
    return Xv, B, True


@njit(cache=True, nogil=True)
def _best_split(Xv, B, binary, column, n_categories, y, w, target, rows, total, scale,
                n_classes, min_leaf_weight, sorted_rows, slot, start, y8, w_same,
                control, bit_left, bit_weight, cat_counts, cat_total, present, order,
                scratch, key, best_subset):
    """Best (feature, threshold) for the node holding `rows`; feature -1 if none,
    -2 if control[0] became nonzero (polled before each feature).

    Minimising W_L * gini(L) + W_R * gini(R) = W - (sum_k L_k^2 / W_L + sum_k R_k^2 / W_R)
    is done by maximising the bracketed "proxy", which is exact and cheaper.
    A 0/1 feature (`binary[j]`, column B[:, column[j]]) has the single candidate
    0.5: one pass over the rows counts the left side (value 0) of every 0/1 feature
    at once into bit_left[k, column[j]] and bit_weight[column[j]]. A categorical
    feature (`n_categories[j] > 0`) is split by `_best_subset`; when it wins,
    best_subset[:n_categories[feature]] holds the left side and the threshold is
    0.5. A continuous one (row Xv[column[j]]) is scanned along
    sorted_rows[slot[j], start:start + n], the node's rows in presorted order,
    which visits the rows in random order: it reads their classes from y8 (y as
    uint8; empty when n_classes > 256) and, when every weight is w_same[0] (w_same
    has 1 entry, else 0), takes that weight instead of reading w.

    Regression (`target` not empty, n_classes 1): the single "class" of a row adds
    w[i] * target[i] instead of w[i], so the proxy is S_L^2 / W_L + S_R^2 / W_R, which
    minimises the children's summed squared error (CART's, scikit-learn's
    `squared_error`). `scale` bounds the proxy (the node's weight; regression: its
    weighted sum of squared targets) and sets the tie tolerance.
    """
    n = rows.shape[0]
    regression = target.shape[0] > 0
    left = np.empty(n_classes)
    right_total = np.zeros(n_classes)
    for i in rows:
        if regression:
            right_total[0] += w[i] * target[i]
        else:
            right_total[y[i]] += w[i]
    n_bits = B.shape[1]
    if n_bits > 0:
        if control[0] != 0.0:
            return -2, 0.0
        for k in range(n_classes):
            for s in range(n_bits):
                bit_left[k, s] = 0.0
        for s in range(n_bits):
            bit_weight[s] = 0.0
        # Adding 0.0 for a row of value 1 leaves each sum (>= +0.0) as it is: the
        # sums are those of the rows of value 0, in row order, without a branch.
        for i in rows:
            w_i = w[i]
            bits = B[i]
            if regression:
                left_y = bit_left[0]
                a_i = w_i * target[i]
                for s in range(n_bits):
                    zero = bits[s] == 0
                    left_y[s] += a_i if zero else 0.0
                    bit_weight[s] += w_i if zero else 0.0
                continue
            left_y = bit_left[y[i]]
            for s in range(n_bits):
                add = w_i if bits[s] == 0 else 0.0
                left_y[s] += add
                bit_weight[s] += add
    best_feature = -1
    best_threshold = 0.0
    best_proxy = -np.inf
    tolerance = TIE_TOLERANCE * scale
    for j in range(binary.shape[0]):
        if control[0] != 0.0:
            return -2, 0.0
        if binary[j]:
            s = column[j]
            for k in range(n_classes):
                left[k] = bit_left[k, s]
            w_left = bit_weight[s]
            proxy = _proxy(left, right_total, w_left, total - w_left, n_classes,
                           min_leaf_weight)
            if proxy > best_proxy + tolerance:
                best_proxy, best_feature, best_threshold = proxy, j, 0.5
            continue
        xj = Xv[column[j]]
        if n_categories[j] > 0:
            best_proxy, improved = _best_subset(
                xj, n_categories[j], y, w, target, rows, right_total, total, n_classes,
                min_leaf_weight, best_proxy, tolerance, left, cat_counts, cat_total,
                present, order, scratch, key, best_subset)
            if improved:
                best_feature, best_threshold = j, 0.5
            continue
        # Candidates sit between consecutive entries whose values are not ==, which
        # the entries' NEW_VALUE bits say without reading the values.
        sorted_j = sorted_rows[slot[j]]
        end = start + n
        if xj[sorted_j[start] & ROW] == xj[sorted_j[end - 1] & ROW]:
            continue
        left[:] = 0.0
        w_left = 0.0
        small = y8.shape[0] > 0
        same = w_same.shape[0] > 0
        if same:
            w_i = w_same[0]
        i = sorted_j[start] & ROW
        for p in range(start + 1, end):
            if not same:
                w_i = w[i]
            if regression:
                left[0] += w_i * target[i]
            elif small:
                left[y8[i]] += w_i
            else:
                left[y[i]] += w_i
            w_left += w_i
            entry = sorted_j[p]
            previous = i
            i = entry & ROW
            if entry >= 0:
                continue
            if xj[previous] != xj[previous]:   # between two NaN: no `x <= t` splits them
                break
            proxy = _proxy(left, right_total, w_left, total - w_left, n_classes,
                           min_leaf_weight)
            if proxy > best_proxy + tolerance:
                a = xj[previous]
                b = xj[i]
                best_proxy = proxy
                best_feature = j
                best_threshold = a / 2.0 + b / 2.0
                if best_threshold == b or not np.isfinite(best_threshold):
                    best_threshold = a          # (b NaN: NaN cells fail x <= a)
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
def grow_tree(X, y, w, n_classes, max_depth, min_leaf_weight, control, n_categories,
              target):
    """Grow a greedy Gini tree, or a squared-error one for a numeric `target` (see the
    module docstring for the rules).

    X: float64[n, f] (0/1, continuous or category codes) or uint8[n, f] (0/1 or
    category codes), y: int64[n] classes in [0, n_classes), w: float64[n] >= 0
    instance weights, max_depth >= 0, min_leaf_weight: minimum total weight of each
    child of a split, control: float64[k]; control[0] != 0 stops growth and turns
    every pending node (and the node being searched) into a leaf; it is polled once
    per node and within the long passes (splitting X by kind of feature, the
    presort, before each feature of a split search or of a partition).
    n_categories: int64[f], 0 for an ordinary feature, V > 0 for a categorical one
    whose column holds the codes 0 .. V-1 (not checked: another value is undefined
    behaviour). target: float64[0] for classification; for regression float64[n],
    the value of each row (y is then ignored and n_classes must be 1). At most
    2^31 - 1 rows (ValueError).

    Returns (feature int32[m], threshold float64[m], left int32[m], right int32[m],
    value float64[m, n_classes], subset uint8[m, Vmax], stopped bool), with
    Vmax = max(1, max(n_categories)). Node 0 is the root and nodes are numbered in
    preorder. A leaf has feature == left == right == -1 and threshold 0.0. An
    internal node on an ordinary feature sends rows with X[i, feature] <= threshold
    to `left`, the others to `right`; one on a categorical feature has threshold
    0.5 and sends rows with subset[node, X[i, feature]] == 1 to `left`, the others
    to `right`. subset rows of the other nodes are zero. value[node, k] is the
    total weight of class k among the training rows reaching the node, for every
    node; in regression value float64[m, 3] holds each node's total weight, mean
    target and squared error (the weighted sum of squared differences from that mean).
    """
    n, n_features = X.shape
    regression = target.shape[0] > 0
    if regression and (n_classes != 1 or target.shape[0] != n):
        raise ValueError("regression takes n_classes 1 and a target per row")
    offset = 0.0
    if regression:   # centred: sums of squares far from zero would lose the errors
        w_sum = 0.0
        for i in range(n):
            w_sum += w[i]
            offset += w[i] * target[i]
        offset = offset / w_sum if w_sum > 0.0 else 0.0
        target = target - offset
    if n_categories.shape[0] != n_features:
        raise ValueError("n_categories needs one entry per feature")
    if n > 2147483647:
        raise ValueError("grow_tree takes at most 2**31 - 1 rows")
    binary = np.empty(n_features, dtype=np.bool_)
    column = np.empty(n_features, dtype=np.int64)
    Xv, B, ready = _columns(X, n_categories, binary, column, control)
    v_max = 1
    for j in range(n_features):
        v_max = max(v_max, n_categories[j])
    # A split leaves at least one row on each side, so there are at most n leaves.
    capacity = max(2 * n - 1, 1)
    if max_depth < 62:
        capacity = min(capacity, (1 << (max_depth + 1)) - 1)
    feature = np.full(capacity, -1, dtype=np.int32)
    threshold = np.zeros(capacity)
    left = np.full(capacity, -1, dtype=np.int32)
    right = np.full(capacity, -1, dtype=np.int32)
    value = np.zeros((capacity, 3 if regression else n_classes))
    subset = np.zeros((capacity, v_max), dtype=np.uint8)
    # Scratch of the categorical splits, allocated once.
    cat_counts = np.empty((v_max, n_classes))
    cat_total = np.empty(v_max)
    present = np.empty(v_max, dtype=np.int64)
    order = np.empty(v_max, dtype=np.int64)
    scratch = np.empty(v_max, dtype=np.int64)
    key = np.empty(v_max)
    best_subset = np.zeros(v_max, dtype=np.uint8)
    # Scratch of the 0/1 features.
    bit_left = np.empty((n_classes, B.shape[1]))
    bit_weight = np.empty(B.shape[1])

    # Each node owns the segment rows[start:end]; splitting partitions it in place.
    rows = np.arange(n)
    buffer = np.empty(n, dtype=np.int64)
    # Continuous feature j owns the row sorted_rows[slot[j]], the same segments in
    # presorted order (sorted at the root, partitioned like `rows`).
    slot = np.full(n_features, -1, dtype=np.int64)
    n_sorted = 0
    for j in range(n_features):
        if n_categories[j] == 0 and not binary[j]:
            slot[j] = n_sorted
            n_sorted += 1
    sorted_rows = np.empty((0, n), dtype=np.int32)      # allocated when the root splits
    sorted_buffer = np.empty(0, dtype=np.int32)
    goes_left = np.empty(n, dtype=np.bool_)
    # The scans of the presorted rows read y and w in random order: y8 is y in an
    # eighth of the memory, and w_same = [w] when every weight is w (`==`; the sums
    # are the same as with w[i]: equal numbers added in the same order, from +0.0).
    y8 = np.empty(n if n_classes <= 256 and not regression else 0, dtype=np.uint8)
    for i in range(y8.shape[0]):
        y8[i] = y[i]
    w_same = np.empty(1)
    for i in range(n):
        if i == 0:
            w_same[0] = w[0]
        elif w[i] != w_same[0]:
            w_same = np.empty(0)
            break
    # Pending nodes: (start, end, depth, parent, is_left child of parent).
    stack = np.empty((capacity + 1, 5), dtype=np.int64)
    _push(stack, 0, 0, n, 0, -1, 0)
    top = 1
    m = 0
    stopped = not ready
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
        if regression:
            for i in segment:
                counts[0] += w[i]
                counts[1] += w[i] * target[i]
                counts[2] += w[i] * target[i] * target[i]
            total = counts[0]
            scale = counts[2]
            # squared error (weight x variance) at most a rounding of the squares' sum
            pure = total <= 0.0 or \
                counts[2] - counts[1] * counts[1] / total <= PURE_TOLERANCE * scale
        else:
            for i in segment:
                counts[y[i]] += w[i]
            total = counts.sum()
            scale = total
            pure = _gini(counts, total) <= PURE_TOLERANCE

        if not stopped and control[0] != 0.0:
            stopped = True
        if (
            stopped
            or depth >= max_depth
            or total < 2.0 * min_leaf_weight
            or pure
        ):
            continue
        if node == 0 and n_sorted > 0:
            sorted_rows = np.empty((n_sorted, n), dtype=np.int32)
            sorted_buffer = np.empty(n, dtype=np.int32)
            # Scratch of the presort.
            keys = np.empty(n)
            keys2 = np.empty(n)
            histogram = np.empty((RADIX_PASSES, 1 << RADIX_BITS), dtype=np.int64)
            size = 2
            while size < 2 * n and size < 2 * DISTINCT_MAX:
                size *= 2
            table_key = np.empty(size, dtype=np.int64)
            table_id = np.empty(size, dtype=np.int32)
            values = np.empty(size // 2)
            codes = np.empty(size // 2, dtype=np.int64)
            codes2 = np.empty(size // 2, dtype=np.int64)
            for j in range(n_features):
                if slot[j] >= 0 and not _presort(
                        Xv[column[j]], sorted_rows[slot[j]], keys, keys2, sorted_buffer,
                        histogram, table_key, table_id, values, codes, codes2, control):
                    stopped = True
                    break
            if stopped:
                continue
        best_feature, best_threshold = _best_split(
            Xv, B, binary, column, n_categories, y, w, target, segment, total, scale,
            n_classes, min_leaf_weight, sorted_rows, slot, start, y8, w_same, control,
            bit_left, bit_weight, cat_counts, cat_total, present, order, scratch,
            key, best_subset
        )
        if best_feature == -2:
            stopped = True
            continue
        if best_feature < 0:
            continue
        feature[node] = best_feature
        threshold[node] = best_threshold
        n_cat = n_categories[best_feature]
        for v in range(n_cat):
            subset[node, v] = best_subset[v]

        # Stable partition: rows going left first, then rows going right (written
        # to both sides and kept by advancing one, without a branch).
        c = column[best_feature]
        n_left = 0
        n_right = np.int64(0)       # not a literal 0: copy_prefix compiled once
        for i in segment:
            if binary[best_feature]:
                side = B[i, c] == 0
            elif n_cat > 0:
                side = subset[node, int(Xv[c, i])] != 0
            else:
                side = Xv[c, i] <= best_threshold
            goes_left[i] = side
            segment[n_left] = i
            buffer[n_right] = i
            n_left += side
            n_right += 1 - side
        ks.copy_prefix(segment[n_left:], buffer, n_right)
        if depth + 1 < max_depth:       # the children may split: keep their orders
            # The same stable partition of each presorted segment; an entry gets
            # NEW_VALUE when a value change lies between it and the previous entry
            # of its side (`change_left`, `change_right`: one since that entry).
            for f in range(n_sorted):
                if control[0] != 0.0:       # the children will be leaves
                    stopped = True
                    break
                sorted_f = sorted_rows[f]
                n_left_f = start
                n_right_f = 0
                change_left = np.int32(0)
                change_right = np.int32(0)
                for p in range(start, end):
                    entry = sorted_f[p]
                    row = entry & ROW
                    change_left |= entry & NEW_VALUE
                    change_right |= entry & NEW_VALUE
                    side = goes_left[row]
                    sorted_f[n_left_f] = row | change_left
                    sorted_buffer[n_right_f] = row | change_right
                    n_left_f += side
                    n_right_f += 1 - side
                    keep_left = np.int32(side) - np.int32(1)    # 0 if side else -1
                    change_left &= keep_left
                    change_right &= ~keep_left
                for q in range(n_right_f):
                    sorted_f[n_left_f + q] = sorted_buffer[q]

        # Push the right child first so the left subtree is numbered first.
        _push(stack, top, start + n_left, end, depth + 1, node, 0)
        _push(stack, top + 1, start, start + n_left, depth + 1, node, 1)
        top += 2

    if regression:   # (weight, sum, sum of squares) of the centred target -> (W, mean, SSE)
        for node in range(m):
            W, S, Q = value[node, 0], value[node, 1], value[node, 2]
            value[node, 1] = offset + (S / W if W > 0.0 else 0.0)
            value[node, 2] = max(Q - S * S / W, 0.0) if W > 0.0 else 0.0
    return (
        feature[:m].copy(),
        threshold[:m].copy(),
        left[:m].copy(),
        right[:m].copy(),
        value[:m].copy(),
        subset[:m].copy(),
        stopped,
    )
