"""Numba kernel of `contree` on a numeric target: exact least-squares regression trees
of bounded depth straight on numeric features (issue 47).

The objective is the weighted sum of squared errors (SSE) of the leaves, each leaf
predicting its weighted mean, plus P per leaf (`leaf_cost`); with a least leaf weight
M > 0 (`min_leaf`) every leaf of a split holds at least M.  Thresholds are mid-points
between consecutive distinct values of a node's rows (a row goes left when
x <= threshold), so every partition of the rows by one threshold is considered.

Data layout
-----------
As in the classification kernel: a subproblem is a run of rows held, for each feature,
as its rows sorted by that feature (`IDX[slot, f, off:off+n]`) with each row's dense
rank of value (`RS`, equal ranks = equal values), its weight (`WS`) and target (`YS`,
centred on the root's weighted mean) copied alongside, so that the sweeps read memory
in order.  Sorting happens once, at the root; a split partitions every list stably into
the children (next slot, offsets off and off + n_left).  Slot d - 2 holds the nodes of
remaining depth d >= 2; depth-two nodes are solved without materialising children.

Sums
----
A side (a set of rows) of weight W, mean mu and leaf SSE E (two passes) split into a
prefix of weight Wl and the rest Wr = W - Wl has split SSE  E - A^2 W / (Wl Wr)  with
A = sum over the prefix of w (y - mu) (centred on the side's own mean, so nothing large
cancels).  A sweep therefore keeps only the running (Wl, A) of each side, and the best
split of a side maximises A^2 / (Wl Wr) (compared as A^2 > best Wl Wr, no division).

Depth one: `_prepass`, one sweep per feature over the node's rows in that feature's
order, a split wherever the rank changes (each side >= M).

Depth two, specialised (`_d2_eval`, `_sweep`)
----------------------------------------------
For a root split (f1, position p: the first p rows of f1's order go left) every row gets
a side code (its position in f1's order < p), then ONE pass per second feature f2 over
the node's rows in f2's order accumulates (Wl, A) of each side in arrays indexed by
the side: at a change of rank within a side, that side's split before the row is
evaluated.  Both children's best depth-one trees (leaf or split, with P) come out of
the same F passes: O(F n) per root split, O(n) extra memory.

Which split points are evaluated (`_solve`, at depth two and above): the split points
of every feature are indices 0..m-1 of its candidate positions; intervals of indices
[i..j] wait in one priority queue per node (least bound first, all features together)
with their nearest evaluated indices u < i and v > j.  For a set of rows S let opt(S)
be its optimal subtree cost (SSE + P x leaves, depth d - 1).  opt only grows with the
rows: the optimal tree on S' restricted to a subset S keeps its thresholds; each
leaf's SSE around its new mean is at most around its old mean, so at most its old SSE;
a split left with an empty child is replaced by the other child (one P less, no
deeper).  As p moves right L_p grows and R_p shrinks, so for every p in [i..j]
    theta_p = opt(L_p) + opt(R_p) >= opt(L_u) + opt(R_v)
(ConTree's Theorem 3, sub-interval pruning, which needs nothing but this monotonicity);
without an evaluated u (v) a side costs at least P.  An interval whose bound reaches
the incumbent less a tolerance eps is dropped, and as the queue is ordered by bound,
the whole queue once its head is.  A feature's first split point is its best single
split (CART's) when that is not within an eighth of an end, else the middle; then
the middle of the interval taken.

With a least leaf weight M the optimum is NOT monotone in the rows (removing rows can
push a child under M and force a worse tree), so the bound is taken on the relaxation
R without M, which is monotone (same argument) and no larger: each depth-two
evaluation also gives the children's best depth-one costs without M (same sweeps), a
depth-two node evaluates every split point (also those leaving a side under M, which
count for R only), so it proves a lower bound on R as well as the optimum, and a
depth-three node prunes its intervals with its children's bounds on R.  Deeper, with
M > 0, every split point of the upper levels is evaluated.

ConTree's neighbourhood pruning and interval shrinking (moving delta weight across a
split changes the error by at most delta) do NOT hold for squared error: one row moved
into a leaf can raise its SSE by any amount.  They are not used.  (A sound analogue
prices each moved row: adding row r to a leaf of mean mu costs at most
w_r (y_r - mu)^2 <= w_r max((y_r - lo)^2, (y_r - hi)^2), lo and hi the node's least
and greatest target; estimated on the trace of a 100,000-row search, that price
would drop about a thousand rows' worth of split points next to an evaluated one,
against intervals of tens of thousands, so it is not implemented.)

Other sound rules: a node whose leaf SSE is at most P keeps its leaf (any split costs
2P or more); every split tree costs at least 2P, so a node whose target is at most
2P + eps stops.

Depth >= 3 (`_solve`): the same queue; a split point partitions the rows into the
next slot and solves both children exactly (no bound passed down).  Their exact costs
make the neighbours' interval bounds tight: passing down the target less the other
side's bound (ConTree's way, then skipping the second child when the first one's
bound suffices) made the children return bounds just above that target, and the
root of a depth-three search on 5,000 rows x 5 features then evaluated 2,023 split
points instead of 82 (14 s instead of 0.8 s), at depth four on 1,000 x 4 73 s instead
of 8 s.  Children return (cost of a real tree, lower bound, lower bound of the
relaxation); every pruning decision uses bounds only.  Each node of depth >= 3 first
grows a greedy tree (CART: the best single split at each node, the exact depth-one
children below a depth-two node, pruned for P), its incumbent.

Anytime: the root publishes its first tree and every improvement into the
IncumbentSink; the kernel polls `should_stop(control)` before every evaluated split
point and, when told to stop, returns the best tree found with a sound lower bound:
every node open at that moment answers with the least bound of what it evaluated,
pruned, or left in its queue.
"""

import numpy as np
from numba import njit

from engine.solvers import kernel_support as ks

INF = np.inf

# Statistics.
ST_NODES = 0          # subproblems of depth >= 2 searched
ST_D2_EVALS = 1       # depth-two evaluations (root split + F sweeps)
ST_SPLITS = 2         # split points evaluated at depth >= 3 (two child searches)
ST_PRUNED = 3         # intervals dropped by the sub-interval bound
ST_IMPROVEMENTS = 4   # improvements of the root
ST_PUBLISHED = 5      # trees published
N_STATS = 6

# Float parameters.
FP_LEAST, FP_PENALTY, FP_EPS = 0, 1, 2

# Workspace tuple A.
(A_X, A_IDX, A_RS, A_WS, A_YS, A_CODE, A_CAND, A_M, A_GI, A_LBL, A_LBR, A_FB, A_FP,
 A_HK, A_HS, A_HD, A_HN, A_TF, A_TT, A_TN, A_TMF, A_TMT, A_TMN, A_STATS, A_CTRL,
 A_PAR) = range(26)


@njit(cache=True, nogil=True)
def _mid(a, b):
    """A threshold t with a <= t < b (the mid-point when it is representable)."""
    t = 0.5 * (a + b)
    if not np.isfinite(t):
        t = 0.5 * a + 0.5 * b
    if not t < b:
        t = a
    if t < a:
        t = a
    return t


@njit(cache=True, nogil=True)
def _node_sums(WSs, YSs, off, n):
    """Weight, weighted mean and SSE (two passes) of the rows WSs/YSs[0, off:off+n]."""
    W = 0.0
    S = 0.0
    for k in range(off, off + n):
        W += WSs[0, k]
        S += WSs[0, k] * YSs[0, k]
    mu = S / W if W > 0.0 else 0.0
    E = 0.0
    for k in range(off, off + n):
        e = YSs[0, k] - mu
        E += WSs[0, k] * e * e
    return W, mu, E


@njit(cache=True, nogil=True)
def _prepass(RSs, WSs, YSs, off, n, W, mu, least, FB, FP):
    """Best single split of every feature: FB[f] = max A^2 / (Wl Wr) (-1: none) and
    FP[f] its position (the number of rows of f's order on the left)."""
    F = RSs.shape[0]
    for f in range(F):
        wl = 0.0
        a = 0.0
        best = -1.0
        pos = -1
        for k in range(off, off + n):
            if k > off and RSs[f, k] != RSs[f, k - 1]:
                wr = W - wl
                if wl >= least and wr >= least:
                    a2 = a * a
                    den = wl * wr
                    if a2 > best * den:
                        best = a2 / den
                        pos = k - off
            wk = WSs[f, k]
            wl += wk
            a += wk * (YSs[f, k] - mu)
        FB[f] = best
        FP[f] = pos


@njit(cache=True, nogil=True)
def _candidates(RSs, WSs, off, n, f, least, W, out):
    """Split positions of feature f (a rank change, each side >= least): into out[:m]."""
    m = 0
    cw = 0.0
    for k in range(off + 1, off + n):
        cw += WSs[f, k - 1]
        if RSs[f, k] != RSs[f, k - 1] and cw >= least and W - cw >= least:
            out[m] = k - off
            m += 1
    return m


@njit(cache=True, nogil=True)
def _index_of(arr, m, x):
    """Index of x in the increasing arr[:m], or -1."""
    lo = 0
    hi = m
    while lo < hi:
        h = (lo + hi) >> 1
        if arr[h] < x:
            lo = h + 1
        else:
            hi = h
    if lo < m and arr[lo] == x:
        return lo
    return -1


@njit(cache=True, nogil=True)
def _side_costs(E, W, bg, bu, P):
    """(cost, cost without the least leaf weight) of a side's best depth-one tree: its
    leaf (SSE E) or its best split (ratio bg; bu without the least weight)."""
    leaf = E + P
    cost = leaf
    if bg >= 0.0:
        split = max(E - bg * W, 0.0) + 2.0 * P
        if split < leaf:
            cost = split
    relaxed = leaf
    if bu >= 0.0:
        split = max(E - bu * W, 0.0) + 2.0 * P
        if split < leaf:
            relaxed = split
    return cost, relaxed


@njit(cache=True, nogil=True)
def _sweep(IDX2, RS2, WS2, YS2, code, off, n, WT, mu, bg, bu, kk, Wp, Ap, last, least,
           free):
    """One pass over the rows in one feature's order (its lists IDX2, RS2, WS2, YS2),
    each row on side code[row]: every split of each side between two distinct values
    is compared with the side's best ratio A^2 / (Wl Wr), bg[side] (each part >=
    least) and bu[side] (without the least weight; only when not `free`); kk[side]
    gets the list position where this pass improved bg (-1: nowhere).

    The state of the sides lives in arrays indexed by the side (Wp, Ap, last), and the
    only branch is the rare improvement: a branch on the side, or selects that the
    compiler turns into one, would be mispredicted on every other row."""
    Wp[0] = 0.0
    Wp[1] = 0.0
    Ap[0] = 0.0
    Ap[1] = 0.0
    last[0] = -1
    last[1] = -1
    kk[0] = -1
    kk[1] = -1
    for k in range(off, off + n):
        s = code[IDX2[k]]
        rk = RS2[k]
        wk = WS2[k]
        wl = Wp[s]
        al = Ap[s]
        wr = WT[s] - wl
        a2 = al * al
        den = wl * wr
        if rk != last[s] and wl > 0.0 and a2 > bg[s] * den:
            if free:
                bg[s] = a2 / den
                kk[s] = k
            else:
                if a2 > bu[s] * den:
                    bu[s] = a2 / den
                if wl >= least and wr >= least:
                    bg[s] = a2 / den
                    kk[s] = k
        Wp[s] = wl + wk
        Ap[s] = al + wk * (YS2[k] - mu[s])
        last[s] = rk


@njit(cache=True, nogil=True)
def _before_in_side(IDX2, code, off, k, s):
    """The row before position k of a feature's list that is on side s."""
    j = k - 1
    while j > off and code[IDX2[j]] != s:
        j -= 1
    return IDX2[j]


@njit(cache=True, nogil=True)
def _d2_eval(X, IDXs, RSs, WSs, YSs, code, off, n, f1, p, least, P):
    """Both children's best depth-one trees under the split of the node's rows at
    position p of feature f1: (cost L, cost R, cost L and R without the least leaf
    weight, then feature (-1: leaf) and threshold of each child's split, and the
    weight of the left side)."""
    F = IDXs.shape[0]
    WT0 = 0.0
    WT1 = 0.0
    S0 = 0.0
    S1 = 0.0
    for k in range(off, off + p):
        code[IDXs[f1, k]] = 0
        WT0 += WSs[f1, k]
        S0 += WSs[f1, k] * YSs[f1, k]
    for k in range(off + p, off + n):
        code[IDXs[f1, k]] = 1
        WT1 += WSs[f1, k]
        S1 += WSs[f1, k] * YSs[f1, k]
    mu0 = S0 / WT0
    mu1 = S1 / WT1
    E0 = 0.0
    E1 = 0.0
    for k in range(off, off + p):
        e = YSs[f1, k] - mu0
        E0 += WSs[f1, k] * e * e
    for k in range(off + p, off + n):
        e = YSs[f1, k] - mu1
        E1 += WSs[f1, k] * e * e

    free = least <= 0.0
    WT = np.array([WT0, WT1])
    mu = np.array([mu0, mu1])
    bg = np.full(2, -1.0)    # best A^2 / (Wl Wr) of each side, with the least weight
    bu = np.full(2, -1.0)    # and without
    kk = np.zeros(2, dtype=np.int64)
    Wp = np.zeros(2)
    Ap = np.zeros(2)
    last = np.zeros(2, dtype=np.int64)
    bf0 = -1
    bf1 = -1
    bk0 = 0
    bk1 = 0
    for f2 in range(F):
        _sweep(IDXs[f2], RSs[f2], WSs[f2], YSs[f2], code, off, n, WT, mu, bg, bu, kk, Wp,
               Ap, last, least, free)
        if kk[0] >= 0:
            bf0 = f2
            bk0 = kk[0]
        if kk[1] >= 0:
            bf1 = f2
            bk1 = kk[1]
    bg0 = bg[0]
    bg1 = bg[1]
    bu0 = bg0 if free else bu[0]
    bu1 = bg1 if free else bu[1]
    cL, rL = _side_costs(E0, WT0, bg0, bu0, P)
    cR, rR = _side_costs(E1, WT1, bg1, bu1, P)
    fL = -1
    tL = 0.0
    if bf0 >= 0 and cL < E0 + P:
        fL = bf0
        r1 = _before_in_side(IDXs[fL], code, off, bk0, 0)
        tL = _mid(X[r1, fL], X[IDXs[fL, bk0], fL])
    fR = -1
    tR = 0.0
    if bf1 >= 0 and cR < E1 + P:
        fR = bf1
        r1 = _before_in_side(IDXs[fR], code, off, bk1, 1)
        tR = _mid(X[r1, fR], X[IDXs[fR, bk1], fR])
    return cL, cR, rL, rR, fL, tL, fR, tR, WT0


# ------------------------------------------------------------------ priority queue
@njit(cache=True, nogil=True)
def _before(HK, HS, lv, a, b):
    return HK[lv, a] < HK[lv, b] or (HK[lv, a] == HK[lv, b] and HS[lv, a] < HS[lv, b])


@njit(cache=True, nogil=True)
def _swap(HK, HS, HD, lv, a, b):
    t = HK[lv, a]
    HK[lv, a] = HK[lv, b]
    HK[lv, b] = t
    s = HS[lv, a]
    HS[lv, a] = HS[lv, b]
    HS[lv, b] = s
    for q in range(5):
        d = HD[lv, a, q]
        HD[lv, a, q] = HD[lv, b, q]
        HD[lv, b, q] = d


@njit(cache=True, nogil=True)
def _push(HK, HS, HD, HN, lv, key, f, i, j, u, v):
    """Queue the interval [i..j] of feature f (evaluated neighbours u, v) with its bound."""
    k = HN[lv, 0]
    HN[lv, 0] = k + 1
    HK[lv, k] = key
    HS[lv, k] = HN[lv, 1]
    HN[lv, 1] += 1
    HD[lv, k, 0] = f
    HD[lv, k, 1] = i
    HD[lv, k, 2] = j
    HD[lv, k, 3] = u
    HD[lv, k, 4] = v
    while k > 0:
        parent = (k - 1) >> 1
        if _before(HK, HS, lv, k, parent):
            _swap(HK, HS, HD, lv, k, parent)
            k = parent
        else:
            break


@njit(cache=True, nogil=True)
def _pop(HK, HS, HD, HN, lv):
    """Remove the least-bound interval: (f, i, j, u, v), as int64."""
    z = lv - lv
    f = HD[lv, 0, 0] + z
    i = HD[lv, 0, 1] + z
    j = HD[lv, 0, 2] + z
    u = HD[lv, 0, 3] + z
    v = HD[lv, 0, 4] + z
    size = HN[lv, 0] - 1
    HN[lv, 0] = size
    if size > 0:
        _swap(HK, HS, HD, lv, 0, size)
        k = 0
        while True:
            c = 2 * k + 1
            if c >= size:
                break
            if c + 1 < size and _before(HK, HS, lv, c + 1, c):
                c += 1
            if _before(HK, HS, lv, c, k):
                _swap(HK, HS, HD, lv, c, k)
                k = c
            else:
                break
    return f, i, j, u, v


# ------------------------------------------------------------------ trees (preorder)
@njit(cache=True, nogil=True)
def _set_leaf(TF, TT, TN, d):
    TF[d, 0] = -1
    TT[d, 0] = 0.0
    TN[d] = 1


@njit(cache=True, nogil=True)
def _set_d2(TF, TT, TN, d, f, thr, fL, tL, fR, tR):
    """TF/TT[d] = split (f, thr) over the depth-one trees (fL, tL) and (fR, tR), a
    child of feature -1 being a leaf (trees are kept in preorder, -1 = leaf)."""
    TF[d, 0] = f
    TT[d, 0] = thr
    t = 1
    for side in range(2):
        g2 = fL if side == 0 else fR
        if g2 >= 0:
            TF[d, t] = g2
            TT[d, t] = tL if side == 0 else tR
            TF[d, t + 1] = -1
            TT[d, t + 1] = 0.0
            TF[d, t + 2] = -1
            TT[d, t + 2] = 0.0
            t += 3
        else:
            TF[d, t] = -1
            TT[d, t] = 0.0
            t += 1
    TN[d] = t


@njit(cache=True, nogil=True)
def _save_first(TF, TT, TN, TMF, TMT, TMN, d):
    """Keep the tree of level d - 1 (a first child) in the temporary of level d."""
    m = TN[d - 1]
    for q in range(m):
        TMF[d, q] = TF[d - 1, q]
        TMT[d, q] = TT[d - 1, q]
    TMN[d] = m


@njit(cache=True, nogil=True)
def _compose(TF, TT, TN, TMF, TMT, TMN, d, f, thr, first_left):
    """TF/TT[d] = split (f, thr) over the first child's tree (temporary of level d) and
    the second's (level d - 1), the first on the left when first_left."""
    TF[d, 0] = f
    TT[d, 0] = thr
    t = 1
    for part in range(2):
        if (part == 0) == first_left:
            for q in range(TMN[d]):
                TF[d, t + q] = TMF[d, q]
                TT[d, t + q] = TMT[d, q]
            t += TMN[d]
        else:
            for q in range(TN[d - 1]):
                TF[d, t + q] = TF[d - 1, q]
                TT[d, t + q] = TT[d - 1, q]
            t += TN[d - 1]
    TN[d] = t


@njit(cache=True, nogil=True)
def _assemble(TF, TT, d, m, of, othr, ol, orr):
    """Explicit children of the preorder tree TF/TT[d, :m]."""
    stack = np.empty(m + 1, dtype=np.int64)
    top = 0
    for t in range(m):
        of[t] = TF[d, t]
        othr[t] = TT[d, t]
        ol[t] = -1
        orr[t] = -1
        if top > 0:
            par = stack[top - 1]
            if ol[par] < 0:
                ol[par] = t
            else:
                orr[par] = t
                top -= 1
        if of[t] >= 0:
            stack[top] = t
            top += 1


@njit(cache=True, nogil=True)
def _publish(A, PB, d, value, lower):
    """Publish the tree of level d (the root's) with its cost and a lower bound."""
    TF = A[A_TF]
    m = A[A_TN][d]
    of = PB[5]
    othr = PB[6]
    ol = PB[7]
    orr = PB[8]
    _assemble(TF, A[A_TT], d, m, of, othr, ol, orr)
    ks.publish(PB[0], PB[1], PB[2], PB[3], PB[4], A[A_CTRL], value, lower,
               of, othr, ol, orr, PB[9], m)
    A[A_STATS][ST_PUBLISHED] += 1


@njit(cache=True, nogil=True)
def _partition(IDXs, RSs, WSs, YSs, IDXc, RSc, WSc, YSc, code, off, n, f, p):
    """The rows of the node split at position p of feature f: every feature's list
    partitioned stably into the child slot, left at off, right at off + p."""
    for k in range(off, off + p):
        code[IDXs[f, k]] = 0
    for k in range(off + p, off + n):
        code[IDXs[f, k]] = 1
    F = IDXs.shape[0]
    for g in range(F):
        a = off
        b = off + p
        for k in range(off, off + n):
            r = IDXs[g, k]
            if code[r] == 0:
                dst = a
                a += 1
            else:
                dst = b
                b += 1
            IDXc[g, dst] = r
            RSc[g, dst] = RSs[g, k]
            WSc[g, dst] = WSs[g, k]
            YSc[g, dst] = YSs[g, k]


@njit(cache=True, nogil=True)
def _threshold(X, IDXs, f, off, p):
    return _mid(X[IDXs[f, off + p - 1], f], X[IDXs[f, off + p], f])


@njit(cache=True, nogil=True)
def _solve(A, PB, d, off, n, UB, greedy, root):
    """Best tree of depth <= d on the rows of slot d - 2 at [off, off + n) (d >= 1).

    Returns (cost of the tree left in the level's buffer TF/TT[d], lower bound on the
    optimum, lower bound on the optimum without the least leaf weight): the first
    bound is at least min(cost, UB) - eps when the search was not stopped.  Without a
    least leaf weight both bounds are the same; with one, the second is what the
    depth-two search proves of its relaxation (`_d2_eval`'s costs without the least
    weight, over every split point), and min(leaf, 2P) above depth two.  With `greedy`,
    the greedy tree instead (CART, pruned for P; bounds 0)."""
    X = A[A_X]
    sl = max(d - 2, 0)
    lv = sl
    IDXs = A[A_IDX][sl]
    RSs = A[A_RS][sl]
    WSs = A[A_WS][sl]
    YSs = A[A_YS][sl]
    code = A[A_CODE]
    TF = A[A_TF]
    TT = A[A_TT]
    TN = A[A_TN]
    TMF = A[A_TMF]
    TMT = A[A_TMT]
    TMN = A[A_TMN]
    stats = A[A_STATS]
    control = A[A_CTRL]
    least = A[A_PAR][FP_LEAST]
    P = A[A_PAR][FP_PENALTY]
    eps = A[A_PAR][FP_EPS]
    F = IDXs.shape[0]
    free = least <= 0.0

    # every argument of a recursive call is of one non-literal type: numba's disk
    # cache mishandles recursion between several specialisations of one function
    zero = n - n
    none = zero - 1
    yes = n >= 0
    no = n < 0
    W, mu, E = _node_sums(WSs, YSs, off, n)
    leaf = E + P
    _set_leaf(TF, TT, TN, d)
    best = leaf
    floor = 2.0 * P   # any split: two leaves at least
    if E <= P + eps or n <= 1 or F == 0:
        return leaf, leaf, leaf   # (a split costs 2P at least: no better)
    relaxed = leaf if free else min(leaf, floor)   # a bound without the least weight
    if W < 2.0 * least:
        return leaf, leaf, relaxed
    if not greedy and min(UB, best) <= floor + eps:
        return best, min(best, floor), min(relaxed, floor)
    if not greedy:
        stats[ST_NODES] += 1

    FB = A[A_FB][lv]
    FP = A[A_FP][lv]
    _prepass(RSs, WSs, YSs, off, n, W, mu, least, FB, FP)
    fbest = none
    for f in range(F):
        if FB[f] >= 0.0 and (fbest < 0 or FB[f] > FB[fbest]):
            fbest = f
    if fbest < 0:
        return leaf, leaf, relaxed   # no split point: the leaf is the only tree
    stump = max(E - FB[fbest] * W, 0.0) + 2.0 * P
    if stump < best:
        best = stump
        _set_d2(TF, TT, TN, d, fbest, _threshold(X, IDXs, fbest, off, FP[fbest]),
                none, 0.0, none, 0.0)
    if d == 1:
        return best, best, best

    if greedy:
        p = FP[fbest]
        thr = _threshold(X, IDXs, fbest, off, p)
        if d == 2:
            cL, cR, rL, rR, fL, tL, fR, tR, _ = _d2_eval(X, IDXs, RSs, WSs, YSs, code, off,
                                                         n, fbest, p, least, P)
            if cL + cR < best:
                best = cL + cR
                _set_d2(TF, TT, TN, d, fbest, thr, fL, tL, fR, tR)
            return best, zero + 0.0, zero + 0.0
        _partition(IDXs, RSs, WSs, YSs, A[A_IDX][sl - 1], A[A_RS][sl - 1], A[A_WS][sl - 1],
                   A[A_YS][sl - 1], code, off, n, fbest, p)
        vL, _, _ = _solve(A, PB, d - 1, off, p, INF, yes, no)
        _save_first(TF, TT, TN, TMF, TMT, TMN, d)
        vR, _, _ = _solve(A, PB, d - 1, off + p, n - p, INF, yes, no)
        if vL + vR < best:
            best = vL + vR
            _compose(TF, TT, TN, TMF, TMT, TMN, d, fbest, thr, True)
        return best, zero + 0.0, zero + 0.0

    if d >= 3:
        # the greedy tree first: the node's incumbent (it rewrites FB/FP identically)
        g, _, _ = _solve(A, PB, d, off, n, UB, yes, no)
        best = g
    if root:
        _publish(A, PB, d, best, 0.0)
    T = min(UB, best)
    if T <= floor + eps:
        return best, min(best, floor), min(relaxed, floor)

    # Sub-interval bounds hold for the optimum without a least leaf weight, which the
    # depth-two search bounds over every split point (d == 2) and hands to its parent
    # (d == 3); deeper, with a least weight, every split point is evaluated.
    sp = free or d <= 3
    CAND = A[A_CAND][lv]
    M = A[A_M][lv]
    GI = A[A_GI][lv]
    LBL = A[A_LBL][lv]
    LBR = A[A_LBR][lv]
    HK = A[A_HK]
    HS = A[A_HS]
    HD = A[A_HD]
    HN = A[A_HN]
    HN[lv, 0] = 0
    HN[lv, 1] = 0
    # features by their best single split, best first (ties in the queue go by order);
    # at depth two every split point, also those leaving a side under the least
    # weight: they bound the relaxation, which the parent prunes with
    done = np.zeros(F, dtype=np.bool_)
    for _r in range(F):
        g = -1
        for f in range(F):
            if not done[f] and (g < 0 or FB[f] > FB[g]):
                g = f
        done[g] = True
        m = _candidates(RSs, WSs, off, n, g, least if d >= 3 else 0.0, W, CAND[g])
        M[g] = m
        if m > 0:
            GI[g] = _index_of(CAND[g], m, FP[g])
            _push(HK, HS, HD, HN, lv, floor, g, 0, m - 1, -1, m)

    lbmin = INF    # least bound of the split points done (pruned or evaluated)
    lbminr = INF   # the same without the least leaf weight (d == 2)
    stopped = False
    while HN[lv, 0] > 0:
        key = HK[lv, 0]
        if key >= T - eps:
            lbmin = min(lbmin, key)
            lbminr = min(lbminr, key)
            stats[ST_PRUNED] += HN[lv, 0]
            HN[lv, 0] = 0
            break
        if ks.should_stop(control):
            lbmin = min(lbmin, key)
            lbminr = min(lbminr, key)
            stopped = True
            break
        f, i, j, u, v = _pop(HK, HS, HD, HN, lv)
        m = M[f]
        wi = (i + j) >> 1
        if u < 0 and v >= m and GI[f] >= 0 and 8 * GI[f] >= m and 8 * (m - GI[f]) >= m:
            wi = GI[f]   # a feature's first split point: its best single split (CART's)
        p = CAND[f, wi] + zero
        flL = LBL[f, u] if (u >= 0 and sp) else P
        flR = LBR[f, v] if (v < m and sp) else P
        improved = False
        if d == 2:
            cL, cR, rL, rR, fL, tL, fR, tR, w0 = _d2_eval(X, IDXs, RSs, WSs, YSs, code, off,
                                                          n, f, p, least, P)
            stats[ST_D2_EVALS] += 1
            theta = cL + cR
            if not free and (w0 < least or W - w0 < least):
                theta = INF   # not a split of the problem, only of its relaxation
            lw = rL
            rw = rR
            lbw = theta
            lbminr = min(lbminr, rL + rR)
            if theta < best - eps:
                best = theta
                improved = True
                _set_d2(TF, TT, TN, d, f, _threshold(X, IDXs, f, off, p), fL, tL, fR, tR)
        else:
            stats[ST_SPLITS] += 1
            _partition(IDXs, RSs, WSs, YSs, A[A_IDX][sl - 1], A[A_RS][sl - 1],
                       A[A_WS][sl - 1], A[A_YS][sl - 1], code, off, n, f, p)
            first_left = 2 * p >= n
            if first_left:
                o1, n1, o2, n2 = off, p, off + p, n - p
            else:
                o1, n1, o2, n2 = off + p, n - p, off, p
            v1, lb1, lr1 = _solve(A, PB, d - 1, o1, n1, INF, no, no)
            _save_first(TF, TT, TN, TMF, TMT, TMN, d)
            v2, lb2, lr2 = _solve(A, PB, d - 1, o2, n2, INF, no, no)
            lbw = lb1 + lb2
            if first_left:
                lw, rw = lr1, lr2
            else:
                lw, rw = lr2, lr1
            if v1 + v2 < best - eps:
                best = v1 + v2
                improved = True
                _compose(TF, TT, TN, TMF, TMT, TMN, d, f, _threshold(X, IDXs, f, off, p),
                         first_left)
        if sp:
            lw = max(lw, flL)   # L_w contains L_u, R_w contains R_v
            rw = max(rw, flR)
        LBL[f, wi] = lw
        LBR[f, wi] = rw
        lbmin = min(lbmin, lbw)
        if improved:
            T = min(UB, best)
            if root:
                stats[ST_IMPROVEMENTS] += 1
        if i <= wi - 1:
            key = (flL + rw) if sp else floor
            if key >= T - eps:
                lbmin = min(lbmin, key)
                lbminr = min(lbminr, key)
                stats[ST_PRUNED] += 1
            else:
                _push(HK, HS, HD, HN, lv, key, f, i, wi - 1, u, wi)
        if wi + 1 <= j:
            key = (lw + flR) if sp else floor
            if key >= T - eps:
                lbmin = min(lbmin, key)
                lbminr = min(lbminr, key)
                stats[ST_PRUNED] += 1
            else:
                _push(HK, HS, HD, HN, lv, key, f, wi + 1, j, wi, v)
        if improved and root:
            lower = min(best, lbmin)
            if HN[lv, 0] > 0:
                lower = min(lower, HK[lv, 0])
            _publish(A, PB, d, best, lower)
    lb = min(best, lbmin)
    if not stopped and lb >= best - eps:
        lb = best
    if free:
        return best, lb, lb
    if d == 2:
        return best, lb, min(leaf, lbminr)
    return best, lb, relaxed


@njit(cache=True, nogil=True)
def regression_search(X, y, w, D, least, P, eps, IDX, RS, WS, YS, tree_cap, control,
                      state, events, nodes, thresholds, values):
    """Optimal regression tree of depth <= D (>= 1) on X (float64[n, F], finite),
    targets y (float64, centred on their weighted mean) and weights w (> 0): least SSE
    + P per leaf, every leaf of a split with weight >= least (0: no limit).

    IDX/RS/WS/YS: [S, F, n] with S = max(D - 1, 1) slots, the last holding each
    feature's rows sorted by value, their dense ranks, weights and targets.  tree_cap:
    nodes of the largest tree.  control / state ... values: Monitor and IncumbentSink
    (values: float64[cap, 3], published as zeros; the caller computes the leaves).

    Returns (feature, threshold, left, right) of the best tree, its cost (SSE + P x
    leaves, as the kernel sums it), a lower bound on the optimum (within eps of the
    cost when completed), whether the search completed, and statistics."""
    n, F = X.shape
    S = IDX.shape[0]
    LV = S
    code = np.zeros(n, dtype=np.uint8)
    CAND = np.empty((LV, F, n), dtype=np.int32)
    M = np.zeros((LV, F), dtype=np.int64)
    GI = np.zeros((LV, F), dtype=np.int64)
    LBL = np.empty((LV, F, n))
    LBR = np.empty((LV, F, n))
    FB = np.empty((LV, F))
    FPOS = np.empty((LV, F), dtype=np.int64)
    hcap = F * n + F + 1
    HK = np.empty((LV, hcap))
    HS = np.empty((LV, hcap), dtype=np.int64)
    HD = np.empty((LV, hcap, 5), dtype=np.int32)
    HN = np.zeros((LV, 2), dtype=np.int64)
    TF = np.empty((D + 1, tree_cap), dtype=np.int64)
    TT = np.empty((D + 1, tree_cap))
    TN = np.ones(D + 1, dtype=np.int64)
    TMF = np.empty((D + 1, tree_cap), dtype=np.int64)
    TMT = np.empty((D + 1, tree_cap))
    TMN = np.zeros(D + 1, dtype=np.int64)
    stats = np.zeros(N_STATS, dtype=np.int64)
    par = np.array([least, P, eps])
    A = (X, IDX, RS, WS, YS, code, CAND, M, GI, LBL, LBR, FB, FPOS, HK, HS, HD, HN,
         TF, TT, TN, TMF, TMT, TMN, stats, control, par)
    cap_nodes = nodes.shape[1]
    of = np.empty(cap_nodes, dtype=np.int64)
    othr = np.empty(cap_nodes)
    ol = np.empty(cap_nodes, dtype=np.int64)
    orr = np.empty(cap_nodes, dtype=np.int64)
    PB = (state, events, nodes, thresholds, values, of, othr, ol, orr, values)

    zero = n - n
    best, lb, _ = _solve(A, PB, D + zero, zero, n + zero, INF, n < 0, n >= 0)
    completed = control[ks.C_STOP] == 0.0
    if completed:
        lb = best
    _publish(A, PB, D, best, min(lb, best))
    m = TN[D]
    ff = np.empty(m, dtype=np.int64)
    ft = np.empty(m)
    fl = np.empty(m, dtype=np.int64)
    fr = np.empty(m, dtype=np.int64)
    _assemble(TF, TT, D, m, ff, ft, fl, fr)
    return ff, ft, fl, fr, best, lb, completed, stats
