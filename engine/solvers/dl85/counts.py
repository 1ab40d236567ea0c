"""Counting class weights on a branch and solving the last two levels (numba).

A branch's rows are a segment `rows[a:b]` of one permutation, split in place by
`partition` (x_g = 0 first).  Rows are also stored sparsely (`indptr`, `indices`:
the features equal to 1 in each row, ascending), after the caller has flipped every
feature that is 1 on most rows, so the lists are short.

* `scan_features` fills acc[k, g] = weight of class k with x_g = 1 and acc[k, F] =
  weight of class k: enough to order a branch's features and to know the leaf error
  and weight of both children of every feature.
* `scan_pairs` fills C[k, i, j] = weight of class k with x_i = x_j = 1 (all pairs,
  one pass over the rows: the "frequency counting" of MurTree) and T[k].  From C a
  branch's optimal tree of depth two is read off for every root feature at once
  (`d2_solve`), without touching the rows again.  The counts of one child of a split
  are the parent's minus the other child's (`subtract`), so only the smaller child
  is scanned.  Counts are float64: exact when every weight is an integer (sums
  below 2^52; then no tolerance is used), otherwise comparisons use a tolerance
  eps.  (int32 counts were measured no faster, and one type means one compilation.)
* `stump` and `d2_solve` minimise the kernel's objective, the error plus `pen` per
  leaf (the cost per leaf; 0: the error alone, computed exactly as without it): a
  split must beat its leaf by more than the second leaf's cost, and a side whose
  leaf error is at most `pen` stays a leaf (any split costs at least 2 pen).
"""

import numpy as np
from numba import njit

from engine.solvers import kernel_support as ks
from engine.solvers.dl85.rules import child_state, pruned

ORDER_GAIN, ORDER_GINI, ORDER_ERROR, ORDER_NONE = range(4)
ORDERINGS = {"gain": ORDER_GAIN, "gini": ORDER_GINI, "error": ORDER_ERROR,
             "none": ORDER_NONE}

POLL_ROWS = 64          # rows counted between two polls of the control array


@njit(cache=True, nogil=True)
def partition(Xt, rows, a, b, g, lbw, has_lbw):
    """Put the rows of rows[a:b] with x_g = 0 first; returns (first row with x_g = 1,
    sum of lbw on the x_g = 0 side, on the x_g = 1 side)."""
    i0 = ks.partition_rows(Xt[g], rows, a, b)
    lb0 = 0.0
    lb1 = 0.0
    if has_lbw:
        for p in range(a, i0):
            lb0 += lbw[rows[p]]
        for p in range(i0, b):
            lb1 += lbw[rows[p]]
    return i0, lb0, lb1


@njit(cache=True, nogil=True)
def scan_features(rows, a, b, indptr, indices, y, w, acc, control):
    """acc (K x (F+1)) = class weights per feature on rows[a:b]; True if stopped."""
    acc[:] = 0
    F = acc.shape[1] - 1
    for p in range(a, b):
        if (p - a) % 1024 == 1023 and ks.should_stop(control):
            return True
        r = rows[p]
        k = y[r]
        wr = w[r]
        for u in range(indptr[r], indptr[r + 1]):
            acc[k, indices[u]] += wr
        acc[k, F] += wr
    return False


@njit(cache=True, nogil=True)
def scan_pairs(rows, a, b, indptr, indices, y, w, C, T, control):
    """C[k, i, j] = weight of class k with x_i = x_j = 1 on rows[a:b] (symmetric),
    T[k] = weight of class k.  True if stopped."""
    C[:] = 0
    T[:] = 0
    K, F, _ = C.shape
    for p in range(a, b):
        if (p - a) % POLL_ROWS == POLL_ROWS - 1 and ks.should_stop(control):
            return True
        r = rows[p]
        k = y[r]
        wr = w[r]
        s = indptr[r]
        e = indptr[r + 1]
        for u in range(s, e):
            i = indices[u]
            for v in range(u, e):
                C[k, i, indices[v]] += wr
        T[k] += wr
    for k in range(K):
        for i in range(F):
            for j in range(i + 1, F):
                C[k, j, i] = C[k, i, j]
    return False


@njit(cache=True, nogil=True)
def subtract(Cp, Tp, Co, To, Cs, Ts):
    """Counts of one child: the parent's minus the other child's."""
    K, F, _ = Cp.shape
    for k in range(K):
        Ts[k] = Tp[k] - To[k]
        for i in range(F):
            for j in range(F):
                Cs[k, i, j] = Cp[k, i, j] - Co[k, i, j]


@njit(cache=True, nogil=True)
def diagonal(C, T, acc):
    """Per-feature class weights (as scan_features) from pair counts."""
    K, F, _ = C.shape
    for k in range(K):
        for g in range(F):
            acc[k, g] = C[k, g, g]
        acc[k, F] = T[k]


@njit(cache=True, nogil=True)
def _xlogx(v):
    return v * np.log2(v) if v > 0.0 else 0.0


@njit(cache=True, nogil=True)
def _entropy_mass(acc, g, F, side):
    """W H of one side of feature g (side 1: x_g = 1), in bits times weight."""
    K = acc.shape[0]
    W = 0.0
    s = 0.0
    for k in range(K):
        v = 1.0 * acc[k, g] if side == 1 else 1.0 * (acc[k, F] - acc[k, g])
        W += v
        s += _xlogx(v)
    return _xlogx(W) - s


@njit(cache=True, nogil=True)
def side_stats(acc, g, F, side):
    """(leaf error, weight) of one side of feature g."""
    K = acc.shape[0]
    W = 0.0
    most = 0.0
    for k in range(K):
        v = 1.0 * acc[k, g] if side == 1 else 1.0 * (acc[k, F] - acc[k, g])
        W += v
        most = max(most, v)
    return W - most, W


@njit(cache=True, nogil=True)
def leaf_stats(acc, F):
    """(leaf error, weight) of the branch itself."""
    K = acc.shape[0]
    W = 0.0
    most = 0.0
    for k in range(K):
        v = 1.0 * acc[k, F]
        W += v
        most = max(most, v)
    return W - most, W


@njit(cache=True, nogil=True)
def order_features(acc, sup, kind, dom, scores, idx, gains, need_gain):
    """Candidates of a branch: features whose both sides weigh at least `sup`, in dom
    by increasing impurity of the split (information gain, Gini or error; `none`:
    index order), ties by index.  Fills gains[g] (bits) for the candidates when
    need_gain.  Returns (number of candidates, best gain)."""
    K = acc.shape[0]
    F = acc.shape[1] - 1
    W = 0.0
    for k in range(K):
        W += acc[k, F]
    H = 0.0
    if need_gain and W > 0.0:
        H = _xlogx(W)
        for k in range(K):
            H -= _xlogx(1.0 * acc[k, F])
        H /= W
    m = 0
    best_gain = -np.inf
    for g in range(F):
        WR = 0.0
        for k in range(K):
            WR += acc[k, g]
        WL = W - WR
        if WR < sup or WL < sup:
            continue
        if kind == ORDER_GAIN or need_gain:
            ent = _entropy_mass(acc, g, F, 0) + _entropy_mass(acc, g, F, 1)
            if need_gain:
                gains[g] = H - ent / W
                best_gain = max(best_gain, gains[g])
        if kind == ORDER_GAIN:
            score = ent
        elif kind == ORDER_GINI:
            sL = 0.0
            sR = 0.0
            for k in range(K):
                r = 1.0 * acc[k, g]
                left = acc[k, F] - r
                sR += r * r
                sL += left * left
            score = W - sL / WL - sR / WR
        elif kind == ORDER_ERROR:
            eL, _ = side_stats(acc, g, F, 0)
            eR, _ = side_stats(acc, g, F, 1)
            score = eL + eR
        else:
            score = 0.0
        scores[m] = score
        idx[m] = g
        m += 1
    if m > 0:
        if kind == ORDER_NONE:
            for j in range(m):
                dom[j] = idx[j]
        else:
            order = np.argsort(scores[:m], kind="mergesort")
            for j in range(m):
                dom[j] = idx[order[j]]
    return m, best_gain


@njit(cache=True, nogil=True)
def stump(acc, sup, check_sup, eps, pen):
    """Best tree of depth <= 1 from per-feature counts: (objective, feature or -1),
    the objective being the error plus `pen` per leaf.  A split must beat the leaf by
    more than eps; ties go to the lowest index."""
    K = acc.shape[0]
    F = acc.shape[1] - 1
    leaf, W = leaf_stats(acc, F)
    best_g = -1
    if leaf <= pen + eps:   # a split costs at least 2 pen: the leaf is optimal
        return leaf + pen, best_g
    best = leaf - pen   # what a split's error must beat (its second leaf costs pen)
    for g in range(F):
        mR = 0.0
        mL = 0.0
        WR = 0.0
        for k in range(K):
            r = 1.0 * acc[k, g]
            left = acc[k, F] - r
            WR += r
            mR = max(mR, r)
            mL = max(mL, left)
        if check_sup and (WR < sup or W - WR < sup):
            continue
        err = W - mL - mR
        if err < best - eps:
            best = err
            best_g = g
    if best_g < 0:
        return leaf + pen, best_g
    return best + 2.0 * pen, best_g


@njit(cache=True, nogil=True)
def d2_solve(C, T, sup, check_sup, eps, pen, lb, rule, active, thr, st, level, kind, acc,
             dom, scores, idx, gains, pos):
    """Optimal tree of depth <= 2 of a branch from its pair counts C, T, for the
    objective error + `pen` per leaf; `lb` is a lower bound on that objective (the
    search stops at a tree reaching it).

    Returns (objective, root feature or -1, feature of the x = 0 child or -1, of the
    x = 1 child or -1, exact).  Under an active CA rule a child of the root whose
    state is pruned stays a leaf (and the result is not exact); the grandchildren
    are at the maximum depth, hence terminal.  A side whose leaf error is at most
    `pen` stays a leaf (a split costs at least 2 pen, so the leaf is optimal: exact).
    """
    K, F, _ = C.shape
    W = 0.0
    most = 0.0
    for k in range(K):
        W += T[k]
        most = max(most, 1.0 * T[k])
    leaf = W - most
    best = leaf + pen
    bi = -1
    bjL = -1
    bjR = -1
    exact = True
    if best <= lb + eps or leaf <= pen + eps:
        return best, bi, bjL, bjR, exact
    best_gain = 0.0
    if active:
        diagonal(C, T, acc)
        m, best_gain = order_features(acc, sup, kind, dom, scores, idx, gains, True)
        for j in range(m):
            pos[dom[j]] = j
    for i in range(F):
        WR = 0.0
        mR = 0.0
        mL = 0.0
        for k in range(K):
            r = 1.0 * C[k, i, i]
            WR += r
            mR = max(mR, r)
            mL = max(mL, T[k] - r)
        WL = W - WR
        if WR < sup or WL < sup:
            continue
        leafR = WR - mR
        leafL = WL - mL
        doR = leafR > pen + eps
        doL = leafL > pen + eps
        if active:
            p = pos[i]
            if doL:
                cst = child_state(rule, st, p, leafL, WL, best_gain, gains[i])
                if pruned(rule, active, thr, cst, p, level):
                    doL = False
                    exact = False
            if doR:
                cst = child_state(rule, st, p, leafR, WR, best_gain, gains[i])
                if pruned(rule, active, thr, cst, p, level):
                    doR = False
                    exact = False
        # the error a side's split must beat (its second leaf costs pen more)
        eR = leafR - pen
        eL = leafL - pen
        jR = -1
        jL = -1
        if K == 2 and not check_sup:
            R0 = C[0, i, i]
            R1 = C[1, i, i]
            L0 = T[0] - R0
            L1 = T[1] - R1
            WRc = R0 + R1
            WLc = L0 + L1
            c0 = C[0, i]
            c1 = C[1, i]
            if doR:
                for j in range(F):
                    r0 = c0[j]
                    r1 = c1[j]
                    e = WRc - max(r0, r1) - max(R0 - r0, R1 - r1)
                    if e < eR - eps:
                        eR = 1.0 * e
                        jR = j
            if doL:
                for j in range(F):
                    l0 = C[0, j, j] - c0[j]
                    l1 = C[1, j, j] - c1[j]
                    e = WLc - max(l0, l1) - max(L0 - l0, L1 - l1)
                    if e < eL - eps:
                        eL = 1.0 * e
                        jL = j
        else:
            if doR:
                for j in range(F):
                    a1 = 0.0
                    a0 = 0.0
                    s1 = 0.0
                    for k in range(K):
                        r = 1.0 * C[k, i, j]
                        s1 += r
                        a1 = max(a1, r)
                        a0 = max(a0, C[k, i, i] - r)
                    if check_sup and (s1 < sup or WR - s1 < sup):
                        continue
                    e = WR - a1 - a0
                    if e < eR - eps:
                        eR = e
                        jR = j
            if doL:
                for j in range(F):
                    a1 = 0.0
                    a0 = 0.0
                    s1 = 0.0
                    for k in range(K):
                        r = 1.0 * (C[k, j, j] - C[k, i, j])
                        s1 += r
                        a1 = max(a1, r)
                        a0 = max(a0, (T[k] - C[k, i, i]) - r)
                    if check_sup and (s1 < sup or WL - s1 < sup):
                        continue
                    e = WL - a1 - a0
                    if e < eL - eps:
                        eL = e
                        jL = j
        cL = leafL + pen if jL < 0 else eL + 2.0 * pen
        cR = leafR + pen if jR < 0 else eR + 2.0 * pen
        v = cL + cR
        if v < best - eps:
            best = v
            bi = i
            bjL = jL
            bjR = jR
            if best <= lb + eps:
                break
    return best, bi, bjL, bjR, exact
