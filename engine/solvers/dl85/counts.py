"""Counting class weights (or a regression's statistics) on a branch and solving the
last two levels (numba).

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
def scan_features(rows, a, b, indptr, indices, y, w, t, reg, acc, control):
    """acc (K x (F+1)) = class weights per feature on rows[a:b] (reg: the statistics
    W, S, Q of the target t); True if stopped."""
    acc[:] = 0
    F = acc.shape[1] - 1
    for p in range(a, b):
        if (p - a) % 1024 == 1023 and ks.should_stop(control):
            return True
        r = rows[p]
        if reg:
            wr = w[r]
            sr = wr * t[r]
            qr = sr * t[r]
            for u in range(indptr[r], indptr[r + 1]):
                i = indices[u]
                acc[0, i] += wr
                acc[1, i] += sr
                acc[2, i] += qr
            acc[0, F] += wr
            acc[1, F] += sr
            acc[2, F] += qr
            continue
        k = y[r]
        wr = w[r]
        for u in range(indptr[r], indptr[r + 1]):
            acc[k, indices[u]] += wr
        acc[k, F] += wr
    return False


@njit(cache=True, nogil=True)
def scan_pairs(rows, a, b, indptr, indices, y, w, t, reg, C, T, control):
    """C[k, i, j] = weight of class k with x_i = x_j = 1 on rows[a:b] (symmetric),
    T[k] = weight of class k (reg: the statistics W, S, Q of the target t).  True if
    stopped."""
    C[:] = 0
    T[:] = 0
    K, F, _ = C.shape
    for p in range(a, b):
        if (p - a) % POLL_ROWS == POLL_ROWS - 1 and ks.should_stop(control):
            return True
        r = rows[p]
        if reg:
            wr = w[r]
            sr = wr * t[r]
            qr = sr * t[r]
            s = indptr[r]
            e = indptr[r + 1]
            for u in range(s, e):
                i = indices[u]
                for v in range(u, e):
                    j = indices[v]
                    C[0, i, j] += wr
                    C[1, i, j] += sr
                    C[2, i, j] += qr
            T[0] += wr
            T[1] += sr
            T[2] += qr
            continue
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
def sse(W, S, Q):
    """Squared error about its mean of a regression leaf of weight W, weighted sum S
    and weighted sum of squares Q of the target: Q - S^2 / W, at least 0 (rounding),
    0 when empty."""
    if W <= 0.0:
        return 0.0
    e = Q - S * S / W
    return e if e > 0.0 else 0.0


@njit(cache=True, nogil=True)
def side_stats(acc, g, F, side, reg):
    """(leaf error, weight) of one side of feature g: the error of the majority class
    and the sum of the class weights, or (reg) the squared error and channel 0."""
    if reg:
        if side == 1:
            return sse(acc[0, g], acc[1, g], acc[2, g]), 1.0 * acc[0, g]
        W = acc[0, F] - acc[0, g]
        return sse(W, acc[1, F] - acc[1, g], acc[2, F] - acc[2, g]), W
    K = acc.shape[0]
    W = 0.0
    most = 0.0
    for k in range(K):
        v = 1.0 * acc[k, g] if side == 1 else 1.0 * (acc[k, F] - acc[k, g])
        W += v
        most = max(most, v)
    return W - most, W


@njit(cache=True, nogil=True)
def leaf_stats(acc, F, reg):
    """(leaf error, weight) of the branch itself (see `side_stats`)."""
    if reg:
        return sse(acc[0, F], acc[1, F], acc[2, F]), 1.0 * acc[0, F]
    K = acc.shape[0]
    W = 0.0
    most = 0.0
    for k in range(K):
        v = 1.0 * acc[k, F]
        W += v
        most = max(most, v)
    return W - most, W


@njit(cache=True, nogil=True)
def order_features(acc, sup, kind, dom, scores, idx, gains, need_gain, reg):
    """Candidates of a branch: features whose both sides weigh at least `sup`, in dom
    by increasing impurity of the split (information gain, Gini or error; `none`:
    index order; reg: the split's squared error for all three), ties by index.  Fills
    gains[g] (bits; reg: the share of the branch's squared error the split removes)
    for the candidates when need_gain.  Returns (number of candidates, best gain)."""
    K = acc.shape[0]
    F = acc.shape[1] - 1
    W = 0.0
    H = 0.0   # the branch's entropy (reg: its squared error)
    if reg:
        H, W = leaf_stats(acc, F, True)
    else:
        for k in range(K):
            W += acc[k, F]
        if need_gain and W > 0.0:
            H = _xlogx(W)
            for k in range(K):
                H -= _xlogx(1.0 * acc[k, F])
            H /= W
    m = 0
    best_gain = -np.inf
    for g in range(F):
        if reg:
            eL, WL = side_stats(acc, g, F, 0, True)
            eR, WR = side_stats(acc, g, F, 1, True)
            if WR < sup or WL < sup:
                continue
            if need_gain:
                gains[g] = min(max((H - eL - eR) / H, 0.0), 1.0) if H > 0.0 else 0.0
                best_gain = max(best_gain, gains[g])
            scores[m] = eL + eR if kind != ORDER_NONE else 0.0
            idx[m] = g
            m += 1
            continue
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
            eL, _ = side_stats(acc, g, F, 0, False)
            eR, _ = side_stats(acc, g, F, 1, False)
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
def best_split(acc, W, sup, check_sup, eps, bound, reg):
    """(error, feature) of the first split of least error below bound - eps from
    per-feature counts of weight W (bound and -1 when none beats it)."""
    K = acc.shape[0]
    F = acc.shape[1] - 1
    best = bound
    best_g = -1
    for g in range(F):
        if reg:
            eL, WL = side_stats(acc, g, F, 0, True)
            eR, WR = side_stats(acc, g, F, 1, True)
            if check_sup and (WR < sup or WL < sup):
                continue
            err = eL + eR
        else:
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
    return best, best_g


@njit(cache=True, nogil=True)
def stump(acc, sup, check_sup, eps, pen, reg=False):
    """Best tree of depth <= 1 from per-feature counts: (objective, feature or -1),
    the objective being the error plus `pen` per leaf.  A split must beat the leaf by
    more than eps; ties go to the lowest index."""
    F = acc.shape[1] - 1
    leaf, W = leaf_stats(acc, F, reg)
    if leaf <= pen + eps:   # a split costs at least 2 pen: the leaf is optimal
        return leaf + pen, -1
    # what a split's error must beat: the leaf's, less pen (its second leaf costs pen)
    best, best_g = best_split(acc, W, sup, check_sup, eps, leaf - pen, reg)
    if best_g < 0:
        return leaf + pen, best_g
    return best + 2.0 * pen, best_g


@njit(cache=True, nogil=True)
def d2_solve(C, T, sup, check_sup, eps, pen, lb, rule, active, thr, st, level, kind, acc,
             dom, scores, idx, gains, pos, reg=False, pscale=1.0):
    """Optimal tree of depth <= 2 of a branch from its pair counts C, T, for the
    objective error + `pen` per leaf; `lb` is a lower bound on that objective (the
    search stops at a tree reaching it).

    Returns (objective, root feature or -1, feature of the x = 0 child or -1, of the
    x = 1 child or -1, exact).  Under an active CA rule a child of the root whose
    state is pruned stays a leaf (and the result is not exact); the grandchildren
    are at the maximum depth, hence terminal.  A side whose leaf error is at most
    `pen` stays a leaf (a split costs at least 2 pen, so the leaf is optimal: exact).

    reg: C, T hold a regression's statistics, and each side of a root feature is
    solved as a stump (`best_split`) on that side's counts (its column of C, or the
    diagonal minus it).  The rules' purity reads errors times `pscale` (see `kernel`).
    """
    K, F, _ = C.shape
    W = 0.0
    if reg:
        leaf = sse(T[0], T[1], T[2])
        W = 1.0 * T[0]
        sides = np.empty((2, K, F + 1), dtype=C.dtype)   # each side's counts
    else:
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
        m, best_gain = order_features(acc, sup, kind, dom, scores, idx, gains, True, reg)
        for j in range(m):
            pos[dom[j]] = j
    for i in range(F):
        if reg:
            # each side's counts, as `best_split` takes them
            for k in range(K):
                for j in range(F):
                    sides[1, k, j] = C[k, i, j]
                    sides[0, k, j] = C[k, j, j] - C[k, i, j]
                sides[1, k, F] = C[k, i, i]
                sides[0, k, F] = T[k] - C[k, i, i]
            leafR, WR = leaf_stats(sides[1], F, True)
            leafL, WL = leaf_stats(sides[0], F, True)
        else:
            WR = 0.0
            mR = 0.0
            mL = 0.0
            for k in range(K):
                r = 1.0 * C[k, i, i]
                WR += r
                mR = max(mR, r)
                mL = max(mL, T[k] - r)
            WL = W - WR
            leafR = WR - mR
            leafL = WL - mL
        if WR < sup or WL < sup:
            continue
        doR = leafR > pen + eps
        doL = leafL > pen + eps
        if active:
            p = pos[i]
            if doL:
                cst = child_state(rule, st, p, leafL * pscale, WL, best_gain, gains[i])
                if pruned(rule, active, thr, cst, p, level):
                    doL = False
                    exact = False
            if doR:
                cst = child_state(rule, st, p, leafR * pscale, WR, best_gain, gains[i])
                if pruned(rule, active, thr, cst, p, level):
                    doR = False
                    exact = False
        # the error a side's split must beat (its second leaf costs pen more)
        eR = leafR - pen
        eL = leafL - pen
        jR = -1
        jL = -1
        if reg:
            if doR:
                eR, jR = best_split(sides[1], WR, sup, check_sup, eps, eR, True)
            if doL:
                eL, jL = best_split(sides[0], WL, sup, check_sup, eps, eL, True)
        elif K == 2 and not check_sup:
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
