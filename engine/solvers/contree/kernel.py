"""Numba kernel of Orchard's `contree` solver (Brița, van der Linden & Demirović, AAAI 2025).

Optimal classification trees of bounded depth on numeric features, without
binarisation: a dynamic programme over (rows, remaining depth) whose Branch step
searches the thresholds of one feature by intervals, pruned with the similarity
lower bound, and whose depth-two subproblems are solved by a linear sweep.

Data layout
-----------
Every subproblem is a set of rows held, for each feature, as the list of its rows
sorted by that feature (`IDX[slot, f, off:off+n]`) next to the dense rank of each row's
value (`RK`, equal ranks = equal values).  Sorting happens once, at the root; a split
partitions every list stably into the two children (both written into the next level's
slot at offsets 0 and n_left), so order is kept without sorting again.  One slot per
remaining depth >= 2 (depth-two subproblems are solved without materialising their
children): memory is 8 * F * n bytes per level.  Weights are float64; when they are
all integers every sum is exact and no tolerance is used (`eps` = 0).

The recursion (Eqs. 4-6) -- `_ct(L, ...)` returns (value, lower bound)
--------------------------------------------------------------------
`_ct` solves a subproblem with remaining depth L under an upper bound UB.  It returns
the error `v` of a real tree (written into the level's tree buffer) and a proven lower
bound `lb` on the optimum with  lb >= min(v, UB) - G  (G = the gap it was allowed):
with G = 0 the value is exact whenever it is below UB, and otherwise the subproblem is
known not to beat UB.  Parents prune with these lower bounds, never with the values of
children cut short by their bound (which the reference implementation does, and which
is not sound in general), so with G = 0 a finished search is a proof.  The bound
returned is min(T, least bound of an evaluated split) (T below), at least the floor.

Branch (Algorithm 1) for feature f.  The split indices 0..m-1 of f (positions where
the value changes) carry the weight on their left, CW.  A FIFO queue holds intervals
[i..j] with the nearest evaluated split indices u < i and v > j.  For each interval:
* the zero-error theorem (Thm. 2): a split whose left (right) subtree has error 0
  makes every split to its left (right) no better, so [i..j] is clipped to [ML..MR];
* sub-interval pruning (Thm. 3): lbL(u) + lbR(v) >= T drops the whole interval;
* interval shrinking (Eq. 11): splits within lb(u) - T (resp. lb(v) - T) weight of u
  (v) cannot improve (Cor. 1, with T the current target, updated since u and v were
  evaluated), found by binary search on CW;
* the mid-point w = (i + j) // 2 is evaluated: at depth two by D2Split, otherwise the
  larger child first with UB = T, then the smaller with the hybrid bound
  UB_R = T - lb_first + eta, eta the weight from w to the farther interval end: enough
  to decide whether w improves, and to let neighbourhood pruning clear the whole
  interval when the second child turns out at least that bad (the sum, as in the
  reference implementation, prunes far better than the paper's max(T - lb_first,
  eta) once the first child's bound has reached T); skipped when that is <= 0, its
  lower bound then being 0;
* an improvement replaces the node's tree (at the root: published);
* neighbourhood pruning (Eqs. 7-9): splits within lb(w) - T weight of w are dropped
  and the two remaining halves are queued.
Here T = min(UB, best) - g.  With a gap G the node keeps g = G/2 for itself and gives
gc = G/4 to each child (the paper's split; a depth-two node keeps all of G, its D2
children being exact); a child's bound may then be up to gc low, so the node prunes
with bound + gc (otherwise a gap would weaken every bound above it and slow the search
down) and answers for it in its own bound, min(UB, best) - G.  With G = 0 every step
above is exact.

Features are tried in increasing order of their best Gini split, at every subproblem
(the reference implementation orders them only from depth three up; ordering the
depth-two subproblems too finds good trees sooner and cut D2Split calls by 5-60% on
the paper's sets), and D2Split sweeps its second features in that order as well; a
subproblem stops as soon as its target falls to its lower bound (0, or a cached
bound).

D2Split (Algorithm 2)
---------------------
For a split (f1, position p) at depth two the rows get a code 2 * class + side, then
for every feature f2 one sweep over the rows sorted by f2 accumulates the class
weights of each side; at each change of value within a side the best depth-one tree
of that side is updated from the prefix counts and the side's totals (Eq. 13).  Both
sides are bounded by the parent's target (a side's result is min(optimum, UB)); after
an evaluation that is worse than the side's best by delta, the next delta of weight
on that side cannot improve (similarity bound; with two classes also the margin of a
majority both parts share) and is swept without evaluation; a side is done when its
remaining rows are one class, when its skip reaches its end, or when the error of the
left part alone (which only grows along the sweep) reaches its best.  The right
part's error is first bounded with the largest remaining class
weight last computed, and only computed (O(K)) when that bound allows an improvement.
The sweep keeps each side's state in arrays indexed by the side and does not branch
on it (see `_d2`).  O(n F) time, O(n) extra memory (no pair-of-features counts).

Cache
-----
Solved subproblems of depth >= 2 are stored under (two 64-bit Zobrist sums of their
rows, row count, depth) -> (v, lb, tree).  A hit is returned when its bound satisfies
the caller's contract (lb >= min(v, UB) - G); otherwise the search starts from the
cached tree with the cached bound as a floor.  Entries and tree nodes live in
preallocated pools; when either is full the cache is emptied (counted as an
eviction) and the search goes on, so memory never exceeds its budget.

Anytime
-------
The root publishes a leaf, then (depth >= 3) a greedy tree found in O(n F D) (the best
Gini split at each node, D2Split under the split at depth two), which also starts the
root's search as its incumbent, then each improvement into the IncumbentSink, at most
one per `interval` seconds (a pending one follows when that has passed, and at the
end).  The kernel polls `should_stop(control)` before every evaluated split, every
feature of a D2Split sweep and of a partition, and returns the best complete tree
when told to stop.
"""

import numpy as np
from numba import njit, types
from numba.typed import Dict

from engine.solvers import kernel_support as ks

KEY = types.UniTuple(types.uint64, 3)

# Workspace tuple W.
W_X, W_Y, W_W, W_Z1, W_Z2, W_IDX, W_RK, W_POS, W_CW, W_RL, W_RR, W_Q = range(12)
W_FORD, W_TBF, W_TBT, W_TBN, W_TMF, W_TMT, W_CODE, W_SCR, W_STATS, W_CTRL = range(12, 22)
W_IPAR, W_FPAR, W_SHARED, W_ROOT_ORDER = 22, 23, 24, 25
# Integer parameters (W_IPAR) and float parameters (W_FPAR).
IP_LO, IP_K, IP_D, IP_ROOTF, IP_PART, IP_PARTS = 0, 1, 2, 3, 4, 5
FP_EPS, FP_MARGIN, FP_GOAL, FP_PENALTY, FP_LEAST = 0, 1, 2, 3, 4
# Cache tuple CA: (dict, EV, ELB, EOFF, ELEN, PF, PT, CS); CS fields:
CS_ENTRIES, CS_POOL, CS_EVICT, CS_PEAK = 0, 1, 2, 3
# Publishing tuple PB: (state, events, nodes, thresholds, values, of, othr, ol, orr, oval,
# info); info fields:
PI_LAST, PI_PENDING, PI_INTERVAL, PI_LB, PI_COUNT, PI_VALUE = 0, 1, 2, 3, 4, 5

# Statistics.
ST_CT_CALLS = 0       # subproblems entered (depth >= 2, or the root)
ST_D2_CALLS = 1       # D2Split calls
ST_SPLITS = 2         # split points evaluated (D2Split or two recursive calls)
ST_CACHE_HITS = 3     # subproblems answered by the cache
ST_CACHE_REUSE = 4    # cached trees and bounds reused as a start
ST_PRUNED_SP = 5      # intervals dropped by sub-interval pruning
ST_SKIPPED_RIGHT = 6  # second children not searched (hybrid bound <= 0)
ST_IMPROVEMENTS = 7   # improvements of the root
ST_PUBLISHED = 8
N_STATS = 9

INF = np.inf
# Relative slack of `_tie_target`'s test: (best + margin) - margin is best to a few
# ulps, far closer than two tasks' margins ever are.
TIE_SLACK = 1e-9


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
def _first_above(CW, a, b, x):
    """Least k in [a, b] with CW[k] > x (b + 1 if none); CW increasing."""
    lo = a
    hi = b + 1
    while lo < hi:
        m = (lo + hi) >> 1
        if CW[m] > x:
            hi = m
        else:
            lo = m + 1
    return lo


@njit(cache=True, nogil=True)
def _last_below(CW, a, b, x):
    """Greatest k in [a, b] with CW[k] < x (a - 1 if none); CW increasing."""
    lo = a
    hi = b + 1
    while lo < hi:
        m = (lo + hi) >> 1
        if CW[m] < x:
            lo = m + 1
        else:
            hi = m
    return lo - 1


@njit(cache=True, nogil=True)
def _point(s, ws, W, h, fq, K, T, mxr, eps, M, sim):
    """D2Split's point of side s (weight W, target T) with prefix weight ws and prefix
    class weights h[s::2], for more than two classes: (the prefix weight the side's
    next point needs, inf when the side is done; the point's error, inf when it cannot
    improve; the side's new bound on the largest class weight to its right).  The
    right error is first bounded with the last such bound `mxr` and only computed
    (O(K)) when that bound allows an improvement."""
    ml = 0.0
    for q in range(s, 2 * K, 2):
        ml = max(ml, h[q])
    eL = ws - ml
    if eL >= T - eps or W - ws < M:
        return INF, INF, mxr
    err = eL + (W - ws) - mxr
    if err >= T - eps:
        need = ws + sim * (err - T)
        return (INF if need >= W else need), err, mxr
    mr = 0.0
    for q in range(s, 2 * K, 2):
        mr = max(mr, fq[q] - h[q])
    eR = (W - ws) - mr
    err = eL + eR
    if err < T - eps:
        return (INF if eR <= eps or err <= eps else ws), err, mr
    need = ws + sim * (err - T)
    return (INF if eR <= eps or need >= W else need), err, mr


@njit(cache=True, nogil=True)
def _d2(IDXs, RKs, off, nL, f1, p, X, y, w, code, K, UB, eps, P, M, fq, h, control,
        order):
    """D2Split: the best depth-one trees of both sides of the split of the rows
    IDXs[:, off:off+nL] at position p of feature f1 (the first p rows by f1 go left),
    sweeping the features in `order`.

    Returns, per side (left, right): value of its tree, lower bound min(opt, UB)
    (exact below UB), feature (-1 for a leaf) and threshold.  Values count P per leaf;
    the sweep compares split errors with a side's target less its two leaves' cost
    (t = min(leaf + P, UB) - 2 P), so its rules are those without a penalty.  With a
    least leaf weight M > 0 only points with at least M on both sides are trees, and
    the similarity skip is off (`sim` = 0: moving rows can make a leaf too light, so
    a point's error says nothing of its neighbours'); the other rules stand (the
    left part's error only grows, a pure right part stays pure).

    Each row's code is 2 * class + side.  Along another feature the side of the next
    row is random, so the sweep never branches on it: the prefix class weights
    `h[code]`, each side's prefix weight `wc[s]`, the weight its next point needs
    `need[s]` (similarity bound; inf once the side is done) and the rank below which
    no point of it is left, `gate[s]`, live in small arrays indexed by the side, and a
    row only adds its weight unless its side passes `need` with a rank above `gate`
    (0.3-30% of rows on the ConTree sets).  Such a row is a point when the side's
    previous row (found by a short look back) has another rank; the left error is
    exact and never decreases along the sweep, so once it reaches the side's best the
    side is done.  With two classes a point whose two parts have the same majority
    also skips the smaller part's margin (majority less minority): until a part's
    majority turns, the error is the side's minority weight, no better than this
    point's (wilt, htru, rice: 0.57-0.75 of the time).  Two classes are evaluated
    inline (a call and class loops per point cost 40% on the sets where most rows are
    points); more go through `_point`.  Against branching on the side with the counts
    in registers: 25-35% less time on avila, magic and fault, up to 15% more on htru
    and wilt (most rows points), before the majority skip.  The threshold of an
    improvement is found after the sweep from its position."""
    F = IDXs.shape[0]
    for c in range(2 * K):
        fq[c] = 0.0
    for k in range(nL):
        i = IDXs[f1, off + k]
        c = 2 * y[i]
        if k >= p:
            c += 1
        code[i] = c
        fq[c] += w[i]
    Ws = np.zeros(2)
    mx = np.zeros(2)
    for k in range(K):
        for s in range(2):
            Ws[s] += fq[2 * k + s]
            mx[s] = max(mx[s], fq[2 * k + s])
    sim = 1.0 if M <= 0.0 else 0.0
    v = np.empty(2)
    t = np.empty(2)
    for s in range(2):
        v[s] = Ws[s] - mx[s]
        t[s] = min(v[s] + P, UB) - 2.0 * P
    gbest = np.full(2, -1)
    kbest = np.zeros(2, dtype=np.int64)
    wc = np.zeros(2)
    need = np.zeros(2)
    mxr = np.zeros(2)
    gate = np.zeros(2, dtype=np.int64)
    for gi in range(F):
        g = order[gi]
        if t[0] <= eps and t[1] <= eps:
            break
        if ks.should_stop(control):
            break
        for c in range(2 * K):
            h[c] = 0.0
        for s in range(2):
            wc[s] = 0.0
            need[s] = INF if t[s] <= eps else 0.0
            mxr[s] = mx[s]
            gate[s] = -1
        src = IDXs[g]
        srk = RKs[g]
        for k in range(off, off + nL):
            i = src[k]
            c = code[i]
            s = c & 1
            r = srk[k]
            wi = w[i]
            ws = wc[s]
            if ws > need[s] and r > gate[s]:
                q = k - 1
                while code[src[q]] & 1 != s:
                    q -= 1
                gate[s] = r
                if srk[q] != r and ws >= M:
                    if K == 2:
                        T = t[s]
                        W = Ws[s]
                        eL = min(h[s], h[2 + s])
                        eR = min(fq[s] - h[s], fq[2 + s] - h[2 + s])
                        err = eL + eR
                        if eL >= T - eps or W - ws < M:
                            nd = INF
                            err = INF
                        elif err < T - eps:
                            nd = INF if eR <= eps or err <= eps else ws
                        else:
                            # both parts of one majority: the error is the side's
                            # minority weight until a part's majority turns, which
                            # takes more weight than that part's margin
                            a0 = h[s]
                            a1 = h[2 + s]
                            b0 = fq[s] - a0
                            b1 = fq[2 + s] - a1
                            turn = 0.0
                            if (a0 > a1) == (b0 > b1):
                                turn = min(abs(a0 - a1), abs(b0 - b1)) - eps
                            nd = ws + max(sim * (err - T), turn)
                            if eR <= eps or nd >= W:
                                nd = INF
                    else:
                        nd, err, mxr[s] = _point(s, ws, Ws[s], h, fq, K, t[s], mxr[s],
                                                 eps, M, sim)
                    need[s] = nd
                    if err < t[s] - eps:
                        t[s] = err
                        v[s] = err
                        gbest[s] = g
                        kbest[s] = k
                    if need[0] == INF and need[1] == INF:
                        break
            h[c] += wi
            wc[s] = ws + wi
    thr = np.zeros(2)
    for s in range(2):
        g = gbest[s]
        if g >= 0:
            b = IDXs[g, kbest[s]]
            k = kbest[s] - 1
            while code[IDXs[g, k]] & 1 != s:
                k -= 1
            thr[s] = _mid(X[IDXs[g, k], g], X[b, g])
        v[s] += P * (2.0 if g >= 0 else 1.0)
    return (v[0], t[0] + 2.0 * P, gbest[0], thr[0],
            v[1], t[1] + 2.0 * P, gbest[1], thr[1])


@njit(cache=True, nogil=True)
def _positions(IDXs, RKs, off, nL, f, w, POS, CW):
    """Split indices of feature f: POS[j] = rows left of split j, CW[j] = their weight."""
    m = 0
    acc = 0.0
    prev = RKs[f, off]
    for k in range(nL):
        r = RKs[f, off + k]
        if r != prev:
            POS[m] = k
            CW[m] = acc
            m += 1
            prev = r
        acc += w[IDXs[f, off + k]]
    return m


@njit(cache=True, nogil=True)
def _gini_order(IDXs, RKs, off, nL, y, w, K, tot, cnt, score, out):
    """Features by increasing weighted Gini impurity of their best split (features
    without a split last), ties by index.  Returns the best split (feature, rows left
    of it), or (-1, 0) when no feature splits the rows."""
    F = IDXs.shape[0]
    wt = 0.0
    for k in range(K):
        wt += tot[k]
    top = INF
    top_f = -1
    top_p = 0
    for g in range(F):
        for k in range(K):
            cnt[k] = 0.0
        wl = 0.0
        best = INF
        best_p = 0
        prev = RKs[g, off]
        for k in range(nL):
            r = RKs[g, off + k]
            if r != prev:
                wr = wt - wl
                sl = 0.0
                sr = 0.0
                for c in range(K):
                    a = cnt[c]
                    b = tot[c] - a
                    sl += a * a
                    sr += b * b
                sc = wl - sl / wl
                if wr > 0.0:
                    sc += wr - sr / wr
                if sc < best:
                    best = sc
                    best_p = k
                prev = r
            i = IDXs[g, off + k]
            wi = w[i]
            cnt[y[i]] += wi
            wl += wi
        score[g] = best
        if best < top:
            top = best
            top_f = g
            top_p = best_p
    order = np.argsort(score[:F], kind="mergesort")
    for g in range(F):
        out[g] = order[g]
    return top_f, top_p


@njit(cache=True, nogil=True)
def _build(IDXs, RKs, off, nL, IDXc, RKc, code, nl, control):
    """Stable partition of every feature's list into the child slot: rows with code 0
    to [0, nl), the others to [nl, nL).  Returns False when told to stop (the child
    lists are then incomplete)."""
    F = IDXs.shape[0]
    for g in range(F):
        if ks.should_stop(control):
            return False
        a = 0
        b = nl
        src = IDXs[g]
        srk = RKs[g]
        dst = IDXc[g]
        drk = RKc[g]
        for k in range(off, off + nL):
            i = src[k]
            if code[i] == 0:
                dst[a] = i
                drk[a] = srk[k]
                a += 1
            else:
                dst[b] = i
                drk[b] = srk[k]
                b += 1
    return True


@njit(cache=True, nogil=True)
def _copy_tree(SF, ST, s, DF, DT, d, m):
    for t in range(m):
        DF[d, t] = SF[s, t]
        DT[d, t] = ST[s, t]


@njit(cache=True, nogil=True)
def _cache_store(CA, key, v, lb, TBF, TBT, L, m, stats):
    d = CA[0]
    EV = CA[1]
    ELB = CA[2]
    EOFF = CA[3]
    ELEN = CA[4]
    PF = CA[5]
    PT = CA[6]
    CS = CA[7]
    if m > PF.shape[0] or EV.shape[0] == 0:
        return
    e = -1
    if key in d:
        e = d[key]
    if e < 0 and CS[CS_ENTRIES] >= EV.shape[0] or CS[CS_POOL] + m > PF.shape[0]:
        # full: empty the cache (an eviction) and go on
        d.clear()
        CS[CS_ENTRIES] = 0
        CS[CS_POOL] = 0
        CS[CS_EVICT] += 1
        e = -1
    if e < 0:
        e = CS[CS_ENTRIES]
        CS[CS_ENTRIES] += 1
        d[key] = e
        if CS[CS_ENTRIES] > CS[CS_PEAK]:
            CS[CS_PEAK] = CS[CS_ENTRIES]
    o = CS[CS_POOL]
    for t in range(m):
        PF[o + t] = TBF[L, t]
        PT[o + t] = TBT[L, t]
    CS[CS_POOL] += m
    EV[e] = v
    ELB[e] = lb
    EOFF[e] = o
    ELEN[e] = m


@njit(cache=True, nogil=True)
def _assemble(TBF, TBT, L, m, of, othr, ol, orr, oval, X, y, w, stack):
    """Explicit children of the preorder tree in TBF/TBT[L, :m] and the class weights
    of the training rows reaching each node."""
    top = 0
    for t in range(m):
        of[t] = TBF[L, t]
        othr[t] = TBT[L, t]
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
    for t in range(m):
        for k in range(oval.shape[1]):
            oval[t, k] = 0.0
    for i in range(X.shape[0]):
        node = 0
        while True:
            oval[node, y[i]] += w[i]
            f = of[node]
            if f < 0:
                break
            if X[i, f] <= othr[node]:
                node = ol[node]
            else:
                node = orr[node]
    return m


@njit(cache=True, nogil=True)
def _publish(W, PB, L, value):
    TBF = W[W_TBF]
    TBT = W[W_TBT]
    m = W[W_TBN][L]
    of = PB[5]
    othr = PB[6]
    ol = PB[7]
    orr = PB[8]
    oval = PB[9]
    info = PB[10]
    stack = np.empty(m + 1, dtype=np.int64)
    _assemble(TBF, TBT, L, m, of, othr, ol, orr, oval, W[W_X], W[W_Y], W[W_W], stack)
    ks.publish(PB[0], PB[1], PB[2], PB[3], PB[4], W[W_CTRL], value, info[PI_LB],
               of, othr, ol, orr, oval, m)
    info[PI_LAST] = ks.monotonic()
    info[PI_PENDING] = 0.0
    info[PI_COUNT] += 1.0
    info[PI_VALUE] = value
    W[W_STATS][ST_PUBLISHED] += 1


@njit(cache=True, nogil=True)
def _leaf_error(IDXs, off, nL, y, w, K, tot):
    """Error of a leaf on the rows IDXs[0, off:off+nL]; tot gets their class weights."""
    for k in range(K):
        tot[k] = 0.0
    for k in range(nL):
        i = IDXs[0, off + k]
        tot[y[i]] += w[i]
    wt = 0.0
    mx = 0.0
    for k in range(K):
        wt += tot[k]
        mx = max(mx, tot[k])
    return wt - mx


@njit(cache=True, nogil=True)
def _compose_d2(TBF, TBT, L, f, thr, fL, tL, fR, tR):
    """TBF/TBT[L] = split (f, thr) over the depth-one trees (fL, tL) and (fR, tR)."""
    TBF[L, 0] = f
    TBT[L, 0] = thr
    t = 1
    for side in range(2):
        g2 = fL if side == 0 else fR
        if g2 >= 0:
            TBF[L, t] = g2
            TBT[L, t] = tL if side == 0 else tR
            TBF[L, t + 1] = -1
            TBT[L, t + 1] = 0.0
            TBF[L, t + 2] = -1
            TBT[L, t + 2] = 0.0
            t += 3
        else:
            TBF[L, t] = -1
            TBT[L, t] = 0.0
            t += 1
    return t


@njit(cache=True, nogil=True)
def _compose(TBF, TBT, TMF, TMT, L, f, thr, m1, m2, first_left):
    """TBF/TBT[L] = split (f, thr) over the first child's tree (TMF/TMT[L, :m1]) and the
    second's (TBF/TBT[L-1, :m2]), the first on the left when first_left."""
    TBF[L, 0] = f
    TBT[L, 0] = thr
    t = 1
    for part in range(2):
        if (part == 0) == first_left:
            for q in range(m1):
                TBF[L, t + q] = TMF[L, q]
                TBT[L, t + q] = TMT[L, q]
            t += m1
        else:
            for q in range(m2):
                TBF[L, t + q] = TBF[L - 1, q]
                TBT[L, t + q] = TBT[L - 1, q]
            t += m2
    return t


@njit(cache=True, nogil=True)
def _greedy(L, off, nL, W):
    """A first complete tree in O(n F L): the best Gini split at every node down to
    depth two, where D2Split gives the best depth-one subtrees under the split.  Left in
    TBF/TBT[L]; returns its error."""
    X = W[W_X]
    y = W[W_Y]
    w = W[W_W]
    IDX = W[W_IDX]
    RK = W[W_RK]
    TBF = W[W_TBF]
    TBT = W[W_TBT]
    TBN = W[W_TBN]
    TMF = W[W_TMF]
    TMT = W[W_TMT]
    code = W[W_CODE]
    scr = W[W_SCR]
    control = W[W_CTRL]
    lo = W[W_IPAR][IP_LO]
    K = W[W_IPAR][IP_K]
    eps = W[W_FPAR][FP_EPS]
    P = W[W_FPAR][FP_PENALTY]
    s = L - lo
    IDXs = IDX[s]
    RKs = RK[s]
    F = IDXs.shape[0]
    wrong = _leaf_error(IDXs, off, nL, y, w, K, scr[0])
    leaf = wrong + P
    TBN[L] = 1
    TBF[L, 0] = -1
    TBT[L, 0] = 0.0
    if L <= 1 or wrong <= eps or nL <= 1 or F == 0 or ks.should_stop(control):
        return leaf
    f, p = _gini_order(IDXs, RKs, off, nL, y, w, K, scr[0], scr[2], scr[3], W[W_FORD][s])
    if f < 0:
        return leaf
    p = nL - nL + p
    thr = _mid(X[IDXs[f, off + p - 1], f], X[IDXs[f, off + p], f])
    if L == 2:
        vL, lbL, fL, tL, vR, lbR, fR, tR = _d2(IDXs, RKs, off, nL, f, p, X, y, w, code, K,
                                               INF, eps, P, 0.0, scr[1], scr[2],
                                               control, W[W_FORD][s])
        if vL + vR < leaf - eps:
            TBN[L] = _compose_d2(TBF, TBT, L, f, thr, fL, tL, fR, tR)
            return vL + vR
        return leaf
    for k in range(nL):
        code[IDXs[f, off + k]] = 0 if k < p else 1
    if not _build(IDXs, RKs, off, nL, IDX[s - 1], RK[s - 1], code, p, control):
        return leaf
    zero = nL - nL
    v1 = _greedy(L - 1, zero, p, W)
    m1 = TBN[L - 1]
    _copy_tree(TBF, TBT, L - 1, TMF, TMT, L, m1)
    v2 = _greedy(L - 1, p, nL - p, W)
    if v1 + v2 < leaf - eps:
        TBN[L] = _compose(TBF, TBT, TMF, TMT, L, f, thr, m1, TBN[L - 1], True)
        return v1 + v2
    TBN[L] = 1
    TBF[L, 0] = -1
    return leaf


@njit(cache=True, nogil=True)
def _target(UB, best, gh, root, shared, margin):
    """The target T = min(UB, best) - gh; at the root also below the bound other
    threads share, less this task's margin (see `contree_search`)."""
    T = min(UB, best) - gh
    if root:
        T = min(T, shared[0] - margin - gh)
    return T


@njit(cache=True, nogil=True)
def _tie_target(T, UB, best, shared, margin):
    """A task's target for split points left of its best one when it keeps the first
    of its ties (see `contree_search`): one that ties its best is searched too, unless
    another task's key already beats that best (then no tie of it can win)."""
    if shared[0] - margin >= best - TIE_SLACK * (1.0 + best):
        return min(UB, best + 0.5)
    return T


@njit(cache=True, nogil=True)
def _ct(L, off, nL, UB, G, root, start, h1, h2, W, CA, PB):
    """Best tree of depth <= L on rows IDX[slot(L), :, off:off+nL] (see the module
    docstring): returns (its error, a lower bound >= min(error, UB) - G); the tree is
    left in the level's buffer TBF/TBT[L, :TBN[L]] (preorder, -1 = leaf)."""
    X = W[W_X]
    y = W[W_Y]
    w = W[W_W]
    z1 = W[W_Z1]
    z2 = W[W_Z2]
    IDX = W[W_IDX]
    RK = W[W_RK]
    TBF = W[W_TBF]
    TBT = W[W_TBT]
    TBN = W[W_TBN]
    TMF = W[W_TMF]
    TMT = W[W_TMT]
    code = W[W_CODE]
    scr = W[W_SCR]
    stats = W[W_STATS]
    control = W[W_CTRL]
    lo = W[W_IPAR][IP_LO]
    K = W[W_IPAR][IP_K]
    eps = W[W_FPAR][FP_EPS]
    P = W[W_FPAR][FP_PENALTY]
    M = W[W_FPAR][FP_LEAST]
    free = M <= 0.0   # no least leaf weight: every pruning rule holds
    s = L - lo
    IDXs = IDX[s]
    RKs = RK[s]
    F = IDXs.shape[0]

    tot = scr[0]
    wrong = _leaf_error(IDXs, off, nL, y, w, K, tot)
    leaf = wrong + P
    best = leaf
    if start < leaf:
        best = start  # the caller's tree, already in the level's buffer
    else:
        TBN[L] = 1
        TBF[L, 0] = -1
        TBT[L, 0] = 0.0
    if L == 0 or wrong <= eps or nL <= 1 or F == 0:
        return leaf, leaf
    stats[ST_CT_CALLS] += 1
    if L == 1:
        # only at the root: one sweep per feature with every row on one side
        zero = nL - nL
        nat = W[W_FORD][s]
        for g in range(F):
            nat[g] = g
        res = _d2(IDXs, RKs, off, nL, zero, zero, X, y, w, code, K, INF, eps, P, M,
                  scr[1], scr[2], control, nat)
        if res[6] >= 0:
            TBF[L, 0] = res[6]
            TBT[L, 0] = res[7]
            TBF[L, 1] = -1
            TBF[L, 2] = -1
            TBT[L, 1] = 0.0
            TBT[L, 2] = 0.0
            TBN[L] = 3
        return res[4], res[5]

    floor = P + min(wrong, P)   # the leaf, or a split: two leaves at least
    key = (h1, h2, np.uint64(nL * 64 + L))
    if not root and CA[1].shape[0] > 0:
        e = -1
        if key in CA[0]:
            e = CA[0][key]
        if e >= 0:
            ve = CA[1][e]
            lbe = CA[2][e]
            o = CA[3][e]
            m = CA[4][e]
            if lbe >= min(ve, UB) - G - eps or ve < best:
                for t in range(m):
                    TBF[L, t] = CA[5][o + t]
                    TBT[L, t] = CA[6][o + t]
                TBN[L] = m
                best = ve
            if lbe >= min(ve, UB) - G - eps:
                stats[ST_CACHE_HITS] += 1
                return ve, lbe
            stats[ST_CACHE_REUSE] += 1
            floor = lbe
    if best <= floor + eps:
        return best, best

    FORD = W[W_FORD][s]
    shared = W[W_SHARED]
    weight = 0.0   # of the rows here (a least leaf weight bounds the split points)
    for k in range(K):
        weight += tot[k]
    margin = W[W_FPAR][FP_MARGIN]
    # a root told to search one feature (see contree_search) has the order computed
    # once for all threads (D2Split sweeps its second features in it)
    rootf = W[W_IPAR][IP_ROOTF] if root else -1
    # a task with integer weights and no gap keeps, of its trees of least error, the
    # one of the first split point: bidx = that point's index (-1 = none yet)
    ties = rootf >= 0 and eps == 0.0 and G == 0.0
    bidx = -1
    if rootf < 0:
        _gini_order(IDXs, RKs, off, nL, y, w, K, tot, scr[2], scr[3], FORD)
    else:
        for g in range(F):
            FORD[g] = W[W_ROOT_ORDER][g]
    if L == 2:
        gh = G
        gc = 0.0
    else:
        gh = 0.5 * G
        gc = 0.25 * G
    POSs = W[W_POS][s]
    CWs = W[W_CW][s]
    RLs = W[W_RL][s]
    RRs = W[W_RR][s]
    Qs = W[W_Q][s]
    info = PB[10]
    done = False
    lbmin = INF
    for fi in range(F if rootf < 0 else 1):
        if done:
            break
        f = FORD[fi] if rootf < 0 else rootf
        T = _target(UB, best, gh, root, shared, margin)
        if T <= floor + eps:
            break
        m = _positions(IDXs, RKs, off, nL, f, w, POSs, CWs)
        if m == 0:
            continue
        cap = m + 1
        qh = 0
        qn = 1
        Qs[0, 0] = 0
        Qs[0, 1] = m - 1
        if rootf >= 0:   # one part of the root feature's split points
            Qs[0, 0] = W[W_IPAR][IP_PART] * m // W[W_IPAR][IP_PARTS]
            Qs[0, 1] = (W[W_IPAR][IP_PART] + 1) * m // W[W_IPAR][IP_PARTS] - 1
        if not free:   # the split points with at least M on both sides: a run
            Qs[0, 0] = max(Qs[0, 0], _last_below(CWs, 0, m - 1, M) + 1)
            Qs[0, 1] = min(Qs[0, 1], _first_above(CWs, 0, m - 1, weight - M) - 1)
        if Qs[0, 0] > Qs[0, 1]:
            continue
        Qs[0, 2] = -1
        Qs[0, 3] = -1
        ML = 0
        MR = m - 1
        while qn > 0:
            if ks.should_stop(control):
                return best, 0.0
            i = Qs[qh, 0]
            j = Qs[qh, 1]
            u = Qs[qh, 2]
            v = Qs[qh, 3]
            qh += 1
            if qh == cap:
                qh = 0
            qn -= 1
            T = _target(UB, best, gh, root, shared, margin)
            if ties and i < bidx:
                T = _tie_target(T, UB, best, shared, margin)
            if T <= floor + eps:
                if ties:
                    continue   # right of the best: nothing here can beat it
                done = True
                break
            # zero-error theorem
            if i < ML:
                i = ML
            if j > MR:
                j = MR
            if i > j:
                continue
            # sub-interval pruning, interval shrinking (not with a least leaf weight:
            # a side's optimum then neither grows with its rows nor moves by at most
            # their weight, a leaf falling under the weight changes it at once)
            lu = RLs[u] if u >= 0 and free else 0.0
            rv = RRs[v] if v >= 0 and free else 0.0
            if lu + rv >= T + eps:
                stats[ST_PRUNED_SP] += 1
                continue
            if u >= 0 and free:
                du = RLs[u] + RRs[u] - T - eps
                if du >= 0.0:
                    i = _first_above(CWs, i, j, CWs[u] + du)
            if v >= 0 and i <= j and free:
                dv = RLs[v] + RRs[v] - T - eps
                if dv >= 0.0:
                    j = _last_below(CWs, i, j, CWs[v] - dv)
            if i > j:
                continue
            mid = (i + j) >> 1
            p = np.int64(POSs[mid])
            thr = _mid(X[IDXs[f, off + p - 1], f], X[IDXs[f, off + p], f])
            stats[ST_SPLITS] += 1
            left_first = True
            m1 = 0
            compL = True
            compR = True
            fL = -1
            fR = -1
            tL = 0.0
            tR = 0.0
            if L == 2:
                stats[ST_D2_CALLS] += 1
                vL, lbL, fL, tL, vR, lbR, fR, tR = _d2(
                    IDXs, RKs, off, nL, f, p, X, y, w, code, K, T, eps, P, M, scr[1],
                    scr[2], control, FORD)
                if control[ks.C_STOP] != 0.0:
                    return best, 0.0
            else:
                hl1 = np.uint64(0)
                hl2 = np.uint64(0)
                hr1 = np.uint64(0)
                hr2 = np.uint64(0)
                for k in range(nL):
                    r = IDXs[f, off + k]
                    if k < p:
                        code[r] = 0
                        hl1 += z1[r]
                        hl2 += z2[r]
                    else:
                        code[r] = 1
                        hr1 += z1[r]
                        hr2 += z2[r]
                if not _build(IDXs, RKs, off, nL, IDX[s - 1], RK[s - 1], code, p, control):
                    return best, 0.0
                nl = nL - nL + p  # int64 like nL (no second specialisation of _ct)
                nr = nL - nl
                zero = nL - nL
                child = nL < 0  # False, not a literal
                none = UB + INF  # no starting tree (a float, not a literal)
                # (what neighbourhood pruning needs: nothing with a least leaf weight)
                eta = max(CWs[mid] - CWs[i], CWs[j] - CWs[mid]) if free else 0.0
                left_first = nl >= nr
                if left_first:
                    v1, lb1 = _ct(L - 1, zero, nl, T, gc, child, none, hl1, hl2, W, CA, PB)
                else:
                    v1, lb1 = _ct(L - 1, nl, nr, T, gc, child, none, hr1, hr2, W, CA, PB)
                if control[ks.C_STOP] != 0.0:
                    return best, 0.0
                m1 = TBN[L - 1]
                _copy_tree(TBF, TBT, L - 1, TMF, TMT, L, m1)
                ub2 = T - (lb1 + gc) + eta
                comp2 = ub2 > P + eps   # (a tree costs P at least)
                if comp2:
                    if left_first:
                        v2, lb2 = _ct(L - 1, nl, nr, ub2, gc, child, none, hr1, hr2, W, CA,
                                      PB)
                    else:
                        v2, lb2 = _ct(L - 1, zero, nl, ub2, gc, child, none, hl1, hl2, W,
                                      CA, PB)
                    if control[ks.C_STOP] != 0.0:
                        return best, 0.0
                else:
                    stats[ST_SKIPPED_RIGHT] += 1
                    v2 = INF
                    lb2 = 0.0
                if left_first:
                    vL, lbL, vR, lbR = v1, lb1, v2, lb2
                    compR = comp2
                else:
                    vL, lbL, vR, lbR = v2, lb2, v1, lb1
                    compL = comp2
            if lbL + lbR < lbmin:
                lbmin = lbL + lbR
            # pruning bounds: a child searched with gap gc may be up to gc below its
            # bound, which the node's own guarantee (G = gh + 2 gc) absorbs
            RLs[mid] = lbL + gc
            RRs[mid] = lbR + gc
            if compL and vL <= P + eps and mid + 1 > ML and not ties and free:
                ML = mid + 1   # (the splits to the left are no better, but may tie)
            if compR and vR <= P + eps and mid - 1 < MR and free:
                MR = mid - 1
            vw = vL + vR
            if vw < best - eps or (ties and vw <= best and mid < bidx):
                best = vw
                bidx = mid
                if L == 2:
                    TBN[L] = _compose_d2(TBF, TBT, L, f, thr, fL, tL, fR, tR)
                else:
                    TBN[L] = _compose(TBF, TBT, TMF, TMT, L, f, thr, m1, TBN[L - 1],
                                      left_first)
                if root:
                    stats[ST_IMPROVEMENTS] += 1
                    info[PI_PENDING] = 1.0
                    if best + margin < shared[0]:   # racy but sound (root_tasks)
                        shared[0] = best + margin
                if (best <= floor + eps and not ties) or (
                        root and best <= W[W_FPAR][FP_GOAL] + eps):
                    done = True
            if root and info[PI_PENDING] != 0.0 and (
                    ks.monotonic() - info[PI_LAST] >= info[PI_INTERVAL]):
                _publish(W, PB, L, best)
            if done:
                break
            # neighbourhood pruning, then the two halves
            T = _target(UB, best, gh, root, shared, margin)
            if ties and i < bidx:
                T = _tie_target(T, UB, best, shared, margin)
            dl = RLs[mid] + RRs[mid] - T - eps
            if dl < 0.0 or not free:
                dl = 0.0
            if mid + 1 <= j:
                k2 = _first_above(CWs, mid + 1, j, CWs[mid] + dl)
                if k2 <= j:
                    e = qh + qn
                    if e >= cap:
                        e -= cap
                    Qs[e, 0] = k2
                    Qs[e, 1] = j
                    Qs[e, 2] = mid
                    Qs[e, 3] = v
                    qn += 1
            if i <= mid - 1:
                k1 = _last_below(CWs, i, mid - 1, CWs[mid] - dl)
                if k1 >= i:
                    e = qh + qn
                    if e >= cap:
                        e -= cap
                    Qs[e, 0] = i
                    Qs[e, 1] = k1
                    Qs[e, 2] = u
                    Qs[e, 3] = mid
                    qn += 1
    # every candidate left out was pruned against a target >= the last one with bounds
    # at most 2 gc too high, every one evaluated has its bound in lbmin (with G = 0
    # this is min(best, UB))
    lb = min(_target(UB, best, gh, root, shared, margin) - 2.0 * gc, lbmin)
    if lb < floor:
        lb = floor
    if best <= floor + eps or lb > best:
        lb = best
    if not root:
        _cache_store(CA, key, best, lb, TBF, TBT, L, TBN[L], stats)
    return best, lb


@njit(cache=True, nogil=True)
def contree_search(X, y, w, K, D, G, eps, P, M, IDX, RK, z1, z2, tree_cap, cache_entries,
                   pool_nodes, interval, root_feature, part, parts, order, shared, margin,
                   goal, control, state, events, nodes, thresholds, values):
    """Optimal tree of depth <= D on X (float64[n, F]), classes y (int64 < K), weights
    w (float64 > 0), within gap G (absolute weight; 0 = optimal); with P > 0 the value
    minimised is the error + P per leaf (every value and bound below counts it); with
    M > 0 every leaf of a split holds at least M weight (the similarity rules and the
    greedy dive are then off: the search evaluates every such split point).

    IDX/RK: int32[S, F, n] with S = D - min(D, 2) + 1 slots; the last one holds each
    feature's rows sorted by value and their dense ranks.  z1, z2: random uint64 per row
    (cache keys).  tree_cap: nodes of the largest tree.  cache_entries, pool_nodes:
    cache capacity (0 disables it).  interval: least seconds between published trees.
    control / state ... values: Monitor and IncumbentSink.

    Threads (see `parallel`): with root_feature >= 0 only trees whose root tests that
    feature at a split point of its part `part` (of `parts` equal runs of split
    points) are searched (D >= 2; `order`: every feature in the root's order, see
    `root_order`), with no greedy dive and nothing published that
    does not beat the leaf.  shared[0] is the key the tasks of all threads share: a
    root that improves lowers it to best + margin, and prunes against shared[0] -
    margin (`margin` grows with the task's place in the order; see
    `engine.solvers.root_tasks`).  The root stops as soon as its error reaches `goal`
    (an optimum known already).  With integer weights and no gap (eps = G = 0) such a
    task keeps, of its trees of least error, the one of its first split point: the
    intervals left of its best split point are searched against best + 1/2 (ties
    included, also in the children's bounds, and without the zero-error clip to the
    left, which drops ties), those right of it against the best as usual, and a tie
    left of it replaces the best -- so the split point found does not depend on the
    bounds the other threads passed (`_tie_target`).  One thread: root_feature = -1,
    shared[0] = inf, margin = 0, goal = -inf.

    Returns (feature, threshold, left, right, value) of the best tree (preorder), its
    error, a lower bound on the optimum (>= error - G when the search completed),
    whether the search completed, statistics (float64[N_STATS]) and cache figures
    (entries at the end, peak entries, evictions).
    """
    n, F = X.shape
    lo = min(D, 2)
    stats = np.zeros(N_STATS)
    S = IDX.shape[0]
    POS = np.empty((S, n + 1), dtype=np.int32)
    CW = np.empty((S, n + 1))
    RL = np.zeros((S, n + 1))
    RR = np.zeros((S, n + 1))
    Q = np.empty((S, n + 2, 4), dtype=np.int64)
    FORD = np.empty((S, max(F, 1)), dtype=np.int64)
    # Tree buffers: rows of tree_cap nodes (the largest tree), written before they are
    # read, so that the pages of the long rows that small trees never reach are never
    # touched (np.empty maps them lazily).
    TBF = np.empty((D + 1, tree_cap), dtype=np.int32)
    TBT = np.empty((D + 1, tree_cap))
    TBN = np.ones(D + 1, dtype=np.int64)
    TMF = np.empty((D + 1, tree_cap), dtype=np.int32)
    TMT = np.empty((D + 1, tree_cap))
    TBF[D, 0] = -1
    TBT[D, 0] = 0.0
    code = np.zeros(n, dtype=np.int32)
    scr = np.zeros((4, max(2 * K, F, 1) + 1))
    ipar = np.array([lo, K, D, root_feature, part, parts], dtype=np.int64)
    fpar = np.array([eps, margin, goal, P, M])
    W = (X, y, w, z1, z2, IDX, RK, POS, CW, RL, RR, Q, FORD, TBF, TBT, TBN, TMF, TMT,
         code, scr, stats, control, ipar, fpar, shared, order)

    d = Dict.empty(key_type=KEY, value_type=types.int64)
    EV = np.empty(cache_entries)
    ELB = np.empty(cache_entries)
    EOFF = np.empty(cache_entries, dtype=np.int64)
    ELEN = np.empty(cache_entries, dtype=np.int64)
    PF = np.empty(pool_nodes, dtype=np.int32)
    PT = np.empty(pool_nodes)
    CS = np.zeros(4, dtype=np.int64)
    CA = (d, EV, ELB, EOFF, ELEN, PF, PT, CS)

    cap_nodes = nodes.shape[1]
    of = np.empty(cap_nodes, dtype=np.int32)
    othr = np.empty(cap_nodes)
    ol = np.empty(cap_nodes, dtype=np.int32)
    orr = np.empty(cap_nodes, dtype=np.int32)
    oval = np.empty((cap_nodes, K))
    info = np.zeros(6)
    info[PI_INTERVAL] = interval
    info[PI_VALUE] = INF
    PB = (state, events, nodes, thresholds, values, of, othr, ol, orr, oval, info)

    # the leaf first, then (depth >= 3) the greedy dive, then the search
    tot = np.zeros(K)
    for i in range(n):
        tot[y[i]] += w[i]
    leaf = (tot.sum() - tot.max() if n > 0 else 0.0) + P
    if root_feature < 0:
        _publish(W, PB, D, leaf)
    else:
        info[PI_VALUE] = leaf
    zero = n - n  # int64 arguments that numba does not take as literals
    is_root = n >= 0
    h0 = np.uint64(n - n)
    start = G + INF
    if D >= 3 and root_feature < 0 and M <= 0.0:
        start = _greedy(D + zero, zero, n + zero, W)
        if start < leaf - eps:
            _publish(W, PB, D, start)
        else:
            start = G + INF
    best, lb = _ct(D + zero, zero, n + zero, G + INF, G + 0.0, is_root, start, h0, h0, W,
                   CA, PB)
    completed = control[ks.C_STOP] == 0.0
    if not completed:
        lb = 0.0
    if best < info[PI_VALUE]:
        _publish(W, PB, D, best)
    m = TBN[D]
    stack = np.empty(m + 1, dtype=np.int64)
    _assemble(TBF, TBT, D, m, of, othr, ol, orr, oval, X, y, w, stack)
    cache = np.array([CS[CS_ENTRIES], CS[CS_PEAK], CS[CS_EVICT]], dtype=np.int64)
    return (of[:m].copy(), othr[:m].copy(), ol[:m].copy(), orr[:m].copy(),
            oval[:m].copy(), best, lb, completed, stats, cache)


@njit(cache=True, nogil=True)
def root_order(IDX, RK, y, w, K):
    """Every feature in the order the search tries them at the root (increasing Gini
    impurity of their best split), and how many of them have a split."""
    top = IDX.shape[0] - 1
    F = IDX.shape[1]
    n = IDX.shape[2]
    tot = np.zeros(K)
    for i in range(n):
        tot[y[i]] += w[i]
    cnt = np.zeros(K)
    score = np.empty(F)
    order = np.empty(F, dtype=np.int64)
    _gini_order(IDX[top], RK[top], 0, n, y, w, K, tot, cnt, score, order)
    m = 0
    while m < F and score[order[m]] < INF:
        m += 1
    return order, m
