"""Numba kernel of Orchard's `dl85` and `cadl85` solvers.

DL8.5 (Aglin, Nijssen & Schaus 2020; Algorithm 1 of Kiossou, Nijssen & Schaus)
--------------------------------------------------------------------------------
A depth-first search over branches (itemsets).  At a branch it tries a leaf, then
each candidate feature in heuristic order: the x = 0 child is solved with upper
bound `ub - lb(x = 1 child)`, the x = 1 child with `ub - error(x = 0 child)`, and a
combination that beats the best so far becomes the best and tightens the bound.
Solved branches go to a cache (`cache`): the error and subtree of an optimal
branch, or the lower bound "nothing below this upper bound" when none was found.
The recursion is an explicit stack of frames, one per level, so the kernel can
stop anywhere and the cache can grow or be evicted between steps.

Speed-ups, all exact:
* Branches two levels above the maximum depth are solved at once from pair counts
  (`counts.d2_solve`); those counts are derived down the path (scan the
  smaller child, subtract from the parent), from level `lvl0` on.
* Before a feature is tried, both children's proven lower bounds (cache, and the
  weight that identical rows of other classes make unavoidable, `lbw`) are summed;
  a feature that cannot beat the bound is skipped without touching the rows.
* A branch whose best error equals its lower bound stops.

Cost per leaf
-------------
With `pen` > 0 (the adapter's leaf penalty, in weight units) the search minimises
the objective error + pen x leaves, and every quantity above is in those units: a
leaf costs its misclassified weight + pen, a split the sum of its two children, so
upper bounds passed down, bounds and trees in the cache, the rules' restarts' bounds
and the published incumbents are objectives.  The lower bounds get what the cost
adds: a branch costs at least pen, and a branch that splits at least 2 pen, so a
child's bound is its leaf's objective at the maximum depth, else at least pen +
min(leaf error, pen) (before touching the rows), and min(leaf + pen, unavoidable
error + 2 pen) once its rows are known; the root's bound likewise.  "A pure branch
stops" becomes "a branch whose leaf error is at most pen is a leaf" (any split costs
2 pen or more; `counts.stump`, `counts.d2_solve`), and a split there must beat the
leaf by its second leaf's cost.  Only the CA rules' states (purity, gains) still
read plain errors: they choose what a restart prunes, never what is proven.  With
pen = 0 every added term is 0 and the search is the one without a cost.

Regression
----------
With `reg` the rows carry a numeric target t (centred by the adapter) and the counts
three additive channels (weight, sum w t, sum w t^2) in place of class weights; a
leaf's error is its squared error about its mean (`counts.sse`, read only through
`counts.side_stats` / `leaf_stats`, which also say that a branch's weight is channel
0).  Everything above is about errors and weights, not about how a leaf's error is
computed, and stays exact for squared errors:
* pair counts, "scan the smaller child and subtract it from the parent", the cache
  (a branch's optimum depends only on its rows) and the depth-two step;
* upper-bound pruning and "the best error reaches the lower bound: stop";
* `lbw`, the unavoidable error of rows with identical features: a leaf holds whole
  groups of them and the squared error of a union is at least the sum of the groups'
  own, so their within-group squared error is a sound bound (the adapter merges each
  group into one row at its mean, an exact reduction, and adds the within-group
  error back as `offset`, so `lbw` is 0 there; with `adapter.MERGE_GROUPS` off it
  passes that error as `lbw`);
* "a branch whose leaf error is at most pen is a leaf", the bounds pen + min(leaf,
  pen) and min(leaf + pen, unavoidable + 2 pen): they only use that an error is never
  negative and that a split has two leaves.
Nothing here uses the classification-only fact that moving a weight delta between
two leaves changes their error by at most delta (blossom's and ConTree's similarity
bounds): squared errors do not obey it, and no bound of this kernel relies on it.
The CA rules read a regression's errors through the same functions: purity is 1 -
(a branch's variance / the root's) (`pscale`), a gain is the share of a branch's
squared error a split removes (so at most 1, the gain rule's vacuous threshold being
that of two classes); they only choose what a restart prunes, and completeness is
unchanged.

CA-DL8.5 (Algorithm 2)
----------------------
The same search, restarted with a rule (`rules`) that prunes children (they
stay leaves) under a threshold relaxed after each restart, the upper bound of each
restart being the best error so far.  Cache entries carry the rule's terminal
state: EXACT when nothing below the branch was pruned (by the rule, or by a time
stop).  Exact entries are reused by every later restart (and even where the rule
would prune: their optimal subtree is free); inexact ones only within the restart
that made them, by branches whose rule budget (see `rules.budget`) is not
larger, and only for upper bounds not above theirs.  An inexact entry's tree seeds
the branch's search in later restarts.  A branch is exact when every child it
used or skipped was exact.  When the root is exact the incumbent is optimal; the
rule becomes vacuous after finitely many relaxations (then the restart is plain
DL8.5), so the search is complete.

Anytime
-------
The incumbent is published (`kernel_support.publish`) when it improves: after each
restart, and during a restart whenever the tree the search would return if stopped
now improves on it ("stop-now" tree: each frame's best, or its current feature with
the finished child's subtree and a leaf or the stop-now subtree in progress).  That
is also the tree returned on a time limit, cancel or memory stop.  Publications
are spaced by at least `interval` seconds or ten times the time the last one took.
With `snapshots` off only trees completed at the root are published (each
improvement of the root's best, e.g. each restart's result: the paper's curves); a
stop still returns the stop-now tree when it is better.
"""

import numpy as np
from numba import njit

from engine.solvers import kernel_support as ks
from engine.solvers.dl85.cache import (
    ENTRY_BYTES,
    FLAG_EXACT,
    FLAG_FOUND,
    I_FLAGS,
    I_ITER,
    I_REC,
    LEAF,
    M_COUNT,
    M_EVICTED,
    M_PEAK,
    NONE,
    RECORD_BYTES,
    RM_FREE,
    RM_PEAK,
    V_BUDGET,
    V_ERR,
    V_LB,
    V_UB,
    cache_evict,
    cache_find,
    cache_grow,
    cache_store,
    cache_touch,
    rec_acquire,
    rec_new,
    rec_release,
    rec_stump,
    records_grow,
)
from engine.solvers.dl85.counts import (
    d2_solve,
    diagonal,
    leaf_stats,
    order_features,
    partition,
    scan_features,
    scan_pairs,
    side_stats,
    stump,
    subtract,
)
from engine.solvers.dl85.rules import (
    RULE_GAIN,
    budget,
    child_state,
    pruned,
    relax,
    vacuous,
)
from engine.solvers.record_trees import assemble_tree, publish_record_tree, tree_buffers

# Phases of a frame.
PH_ENTER, PH_NEXT, PH_PROBE, PH_RESULT = 0, 1, 2, 3

# Statistics returned by the kernel.
ST_NODES = 0          # frames entered (branches searched)
ST_D2 = 1             # branches solved by the depth-two step
ST_HITS = 2           # children answered by the cache
ST_BOUND = 3          # features skipped by the lower bounds
ST_RULE = 4           # children pruned by the CA rule
ST_RESTARTS = 5       # CA-DL8.5 restarts (iterations of the outer loop)
ST_PEAK_ENTRIES = 6
ST_EVICTED = 7        # cache entries evicted
ST_PEAK_RECORDS = 8
ST_PUBLISHED = 9
ST_FIRST_T = 10       # seconds until the first incumbent
ST_THRESHOLD = 11     # the rule's threshold in the last restart
ST_RULE_ACTIVE = 12   # whether the rule still pruned in the last restart
ST_ROOT_CANDIDATES = 13  # features the root tries (before a task keeps its run)
N_STATS = 14

SNAPSHOT_EVERY = 0.002  # seconds between two evaluations of the stop-now tree


@njit(cache=True, nogil=True)
def _stop_now_value(top, fleaf, fbest, fcs, fleafR, flerr):
    """Error of the tree the search would return if stopped now (see the docstring)."""
    v = min(fleaf[top], fbest[top])
    for j in range(top - 1, -1, -1):
        if fcs[j] == 0:
            split = v + fleafR[j]
        else:
            split = flerr[j] + v
        v = min(min(fleaf[j], fbest[j]), split)
    return v


@njit(cache=True, nogil=True)
def _stop_now_tree(top, fleaf, fbest, fbrec, fcs, ffeat, fleafR, flerr, flrec, R, RC,
                   rfree, rmeta, rstack):
    """Record (one reference, the caller's) of the stop-now tree and its error."""
    if fbest[top] < fleaf[top]:
        rec = fbrec[top]
        rec_acquire(RC, rec)
        v = fbest[top]
    else:
        rec = fbrec[top] - fbrec[top] + LEAF
        v = fleaf[top]
    for j in range(top - 1, -1, -1):
        if fcs[j] == 0:
            split = v + fleafR[j]
        else:
            split = flerr[j] + v
        if fbest[j] < fleaf[j]:
            cj = fbest[j]
        else:
            cj = fleaf[j]
        if split < cj:
            zero = rec - rec
            if fcs[j] == 0:
                new = rec_new(R, RC, rfree, rmeta, ffeat[j], rec, zero + LEAF)
            else:
                new = rec_new(R, RC, rfree, rmeta, ffeat[j], flrec[j], rec)
            rec_release(R, RC, rfree, rmeta, rec, rstack)
            rec = new
            v = split
        else:
            rec_release(R, RC, rfree, rmeta, rec, rstack)
            if fbest[j] < fleaf[j]:
                rec = fbrec[j]
                rec_acquire(RC, rec)
            else:
                rec = rec - rec + LEAF
            v = cj
    return rec, v


@njit(cache=True, nogil=True)
def _bound(l, fub, fbest, shared, margin):
    """What a tree of frame l must beat: its upper bound and best so far, and at the
    root also the key the threads share, less this task's margin (see
    `dl85_search`; the root's own `fub` stays its own, so that its finished search
    still tells whether it found a tree)."""
    B = min(fub[l], fbest[l])
    if l == 0:
        B = min(B, shared[0] - margin)
    return B


@njit(cache=True, nogil=True)
def dl85_search(Xt, indptr, indices, y, w, t, reg, lbw, has_lbw, n_classes, max_depth, sup,
                check_sup, eps, pen, kind, rule, relaxation, thr0, step, factor, rule_d2,
                snapshots, Z, use_d2, lvl0, memory_budget, interval, Xg, Vg, fmap, flip,
                offset, global_lb, restart, root_position, root_end, shared, margin, goal,
                control, state, events, nodes, thresholds, values, cache):
    """Best tree of depth <= max_depth (see the module docstring).

    Xt: uint8[F, n] 0/1 features (internal: flipped where `flip`), indptr/indices:
    the same rows sparsely (features equal to 1), y: int64[n] classes, w: float64[n]
    weights, t/reg: a regression's target per row (centred) and True (then y is
    ignored and n_classes is 3, the channels W, S, Q: see `counts`), else an empty
    array and False, lbw: float64[n] unavoidable error weight per row (has_lbw: any is
    non-zero), sup: least weight of a leaf (check_sup: test it in the depth-two step
    too), eps: tolerance of comparisons (0 when the weights are integers), pen: the
    cost of a leaf (see the module docstring; 0: the error alone), kind:
    feature ordering, rule/relaxation/thr0/step/factor: the CA rule (RULE_NONE: plain
    DL8.5), rule_d2: let the rule prune children one level above the maximum depth,
    snapshots: publish stop-now trees during a restart (else only restart results),
    Z: Zobrist table, use_d2/lvl0: the depth-two step and the first level holding pair
    counts, memory_budget: bytes for cache and records, interval: least seconds
    between publications, Xg/Vg: distinct rows (internal features) and their original
    class weights, fmap/flip: original column and flip of each feature,
    offset/global_lb: added to published objectives / the published lower bound,
    control/state..values: Monitor and IncumbentSink, cache: the cache and records
    to start from (`cache.empty()`, or what an earlier call returned).

    restart: 0 runs CA-DL8.5's restarts until the root is exact; k > 0 runs only
    restart number k, with the threshold thr0 (threads: `parallel` relaxes the rule).

    Threads (see `parallel`; depth >= 3): with root_position >= 0 the root tries only
    the features at positions root_position .. root_end - 1 of its order (besides the
    leaf), and its upper bound is also shared[0] - margin, shared[0] being the key
    every thread lowers to best + margin (`engine.solvers.root_tasks`); with `goal`
    the root stops at its first tree of error `goal` (an optimum known already).  One
    thread: root_position = -1, shared[0] = inf, margin = 0, goal = -inf.

    Returns (feature, threshold, left, right, value) of the best tree (preorder,
    original columns), its objective on the kernel's rows, whether it is proven optimal,
    statistics (float64[N_STATS]) and the cache (to pass to the next call).
    """
    F = Xt.shape[0]
    n = y.shape[0]
    K = n_classes
    D = max_depth
    zero = n - n
    stats = np.zeros(N_STATS)
    stats[ST_FIRST_T] = -1.0

    # ---------------------------------------------------------------- output
    cap_nodes = nodes.shape[1]
    of, othr, ol, orr, oval, ored, tstack = tree_buffers(cap_nodes, K, D)
    rstack = np.zeros(4 * D + 16, dtype=np.int64)

    # ---------------------------------------------------------------- storage
    keys, vals, ints, slots, meta, R, RC, rfree, rmeta = cache
    evicted_before = meta[M_EVICTED]
    rmargin = 2 * D + 16

    D1 = np.zeros((D + 2, K, F + 1), dtype=w.dtype)
    DOM = np.zeros((D + 2, max(F, 1)), dtype=np.int64)
    GAINS = np.zeros((D + 2, max(F, 1)))
    scores = np.empty(max(F, 1))
    idx = np.empty(max(F, 1), dtype=np.int64)
    nl = D - 1 - lvl0 if use_d2 else 0
    # (filled whole by scan_pairs or subtract before use: a task's call need not
    # clear K F^2 counts per level)
    CB = np.empty((max(nl, 0), 2, K, F, F), dtype=w.dtype)
    TB = np.empty((max(nl, 0), 2, K), dtype=w.dtype)
    cflag = np.zeros((D + 2, 2), dtype=np.bool_)
    acc2 = np.zeros((K, F + 1), dtype=w.dtype)
    dom2 = np.zeros(max(F, 1), dtype=np.int64)
    pos2 = np.zeros(max(F, 1), dtype=np.int64)

    # frames (one per level)
    L = D + 2
    fa = np.zeros(L, dtype=np.int64)
    fb = np.zeros(L, dtype=np.int64)
    fside = np.zeros(L, dtype=np.int64)
    fhi = np.zeros(L, dtype=np.uint64)
    flo = np.zeros(L, dtype=np.uint64)
    fub = np.zeros(L)
    flb = np.zeros(L)
    fbest = np.zeros(L)
    fbrec = np.zeros(L, dtype=np.int64)
    fleaf = np.zeros(L)
    fexact = np.zeros(L, dtype=np.bool_)
    fpos = np.zeros(L, dtype=np.int64)
    fm = np.zeros(L, dtype=np.int64)
    ffeat = np.zeros(L, dtype=np.int64)
    fidx = np.zeros(L, dtype=np.int64)
    fmid = np.zeros(L, dtype=np.int64)
    fphase = np.zeros(L, dtype=np.int64)
    fcs = np.zeros(L, dtype=np.int64)
    fcub = np.zeros(L)
    flerr = np.zeros(L)
    flrec = np.zeros(L, dtype=np.int64)
    fleafR = np.zeros(L)
    flbL = np.zeros(L)
    flbR = np.zeros(L)
    fst = np.zeros(L)
    fbg = np.zeros(L)

    rows = np.arange(n)
    root_acc = D1[0]
    stopped = scan_features(rows, zero, n, indptr, indices, y, w, t, reg, root_acc, control)
    root_leaf, root_w = leaf_stats(root_acc, F, reg)
    # what the purity rule multiplies errors by: 1, or a regression's root weight over
    # its squared error (purity = 1 - a branch's variance / the root's)
    pscale = root_w / root_leaf if reg and root_leaf > 0.0 else 1.0
    # the classes whose entropy bounds a rule's gain (a regression's gain, a share of
    # the branch's squared error, is at most 1 = log2 2)
    Kg = 2 if reg else K
    root_obj = root_leaf + pen
    root_lb = 0.0
    if has_lbw:
        for r in range(n):
            root_lb += lbw[r]
    if pen > 0.0:   # a leaf, or a split: at least two leaves
        root_lb = root_obj if D == 0 else min(root_obj, root_lb + 2.0 * pen)

    # ---------------------------------------------------------------- incumbent
    inc_err = root_obj
    inc_rec = zero + LEAF
    optimal = False
    last_publish = ks.monotonic()
    gap = interval
    pending = False
    published_err = np.inf
    if not stopped and root_position < 0:   # (a task's leaf: the caller knows it)
        publish_record_tree(inc_rec, inc_err + offset, global_lb, R, fmap, flip, Xg, Vg, of,
                            othr, ol, orr, oval, ored, tstack, control, state, events,
                            nodes, thresholds, values)
        stats[ST_PUBLISHED] += 1
        stats[ST_FIRST_T] = ks.elapsed(control)
        published_err = inc_err
        last_publish = ks.monotonic()

    thr = thr0
    active = not vacuous(rule, thr, D, F, Kg)
    need_gain = rule == RULE_GAIN
    iteration = zero + max(restart, 1) - 1
    relaxations = zero
    next_snapshot = ks.monotonic() + SNAPSHOT_EVERY

    if stopped:
        pass
    elif D == 0 or F == 0 or root_obj <= root_lb + eps or \
            shared[0] - margin <= root_lb + eps:
        # (the last: another thread's tree already reaches the unavoidable error, so
        # no tree of this task can be the answer)
        optimal = True
    else:
        while True:
            iteration += 1
            stats[ST_RESTARTS] = iteration
            stats[ST_THRESHOLD] = thr
            stats[ST_RULE_ACTIVE] = 1.0 if active else 0.0
            # ------------------------------------------------ root frame
            l = zero
            fa[0] = 0
            fb[0] = n
            fside[0] = 0
            fhi[0] = 0
            flo[0] = 0
            fub[0] = np.inf if iteration == 1 else inc_err
            flb[0] = max(root_lb, goal)
            fleaf[0] = root_obj
            fbest[0] = np.inf
            fbrec[0] = NONE
            fst[0] = 0.0
            fphase[0] = PH_ENTER
            have_ret = False
            r_err = np.inf
            r_rec = zero + NONE
            r_exact = False
            while True:
                # ------------------------------------------------ housekeeping
                if ks.should_stop(control):
                    stopped = True
                    break
                if meta[M_COUNT] + 2 > keys.shape[0]:
                    need = (2 * keys.shape[0] * ENTRY_BYTES + R.shape[0] * RECORD_BYTES)
                    if need <= memory_budget:
                        keys, vals, ints, slots = cache_grow(keys, vals, ints, slots, meta)
                    else:
                        cache_evict(keys, vals, ints, slots, meta, R, RC, rfree, rmeta,
                                    rstack)
                if rmeta[RM_FREE] < rmargin:
                    need = (keys.shape[0] * ENTRY_BYTES + 2 * R.shape[0] * RECORD_BYTES)
                    if need <= memory_budget:
                        R, RC, rfree = records_grow(R, RC, rfree, rmeta)
                    else:
                        cache_evict(keys, vals, ints, slots, meta, R, RC, rfree, rmeta,
                                    rstack)
                        if rmeta[RM_FREE] < rmargin:
                            control[ks.C_STOP] = ks.STOP_MEMORY
                            stopped = True
                            break
                ph = fphase[l]
                # ------------------------------------------------ stop-now tree
                if ph == PH_NEXT:
                    now = ks.monotonic()
                    if snapshots and now >= next_snapshot:
                        next_snapshot = now + SNAPSHOT_EVERY
                        v = _stop_now_value(l, fleaf, fbest, fcs, fleafR, flerr)
                        if v < inc_err - eps:
                            rec, v = _stop_now_tree(l, fleaf, fbest, fbrec, fcs, ffeat,
                                                    fleafR, flerr, flrec, R, RC, rfree,
                                                    rmeta, rstack)
                            rec_release(R, RC, rfree, rmeta, inc_rec, rstack)
                            inc_rec = rec
                            inc_err = v
                            fub[0] = min(fub[0], v)
                            shared[0] = min(shared[0], v + margin)
                            pending = True
                    if pending and now - last_publish >= gap:
                        t0 = ks.monotonic()
                        publish_record_tree(inc_rec, inc_err + offset, global_lb, R, fmap,
                                            flip, Xg, Vg, of, othr, ol, orr, oval, ored,
                                            tstack, control, state, events, nodes,
                                            thresholds, values)
                        stats[ST_PUBLISHED] += 1
                        published_err = inc_err
                        last_publish = ks.monotonic()
                        gap = max(interval, 10.0 * (last_publish - t0))
                        pending = False

                if ph == PH_ENTER:
                    # -------------------------------------------- enter a branch
                    if l == 0 and pruned(rule, active, thr, child_state(
                            rule, 0.0, 0, root_leaf * pscale, root_w, 0.0, 0.0), 0, 0):
                        # the rule prunes the root itself (purity): a leaf this time
                        stats[ST_RULE] += 1
                        r_err = root_obj
                        r_rec = zero + LEAF
                        r_exact = False
                        have_ret = True
                        break
                    stats[ST_NODES] += 1
                    rem = D - l
                    s = fside[l]
                    acc = D1[l]
                    if use_d2 and l >= lvl0:
                        ci = l - lvl0
                        if l == lvl0:
                            if scan_pairs(rows, fa[l], fb[l], indptr, indices, y, w, t, reg,
                                          CB[ci, s], TB[ci, s], control):
                                stopped = True
                                break
                        elif not cflag[l, s]:
                            p = l - 1
                            if cflag[l, 1 - s]:
                                subtract(CB[ci - 1, fside[p]], TB[ci - 1, fside[p]],
                                         CB[ci, 1 - s], TB[ci, 1 - s], CB[ci, s], TB[ci, s])
                            else:
                                small = 0 if fmid[p] - fa[p] <= fb[p] - fmid[p] else 1
                                a0 = fa[p] if small == 0 else fmid[p]
                                b0 = fmid[p] if small == 0 else fb[p]
                                if scan_pairs(rows, a0, b0, indptr, indices, y, w, t, reg,
                                              CB[ci, small], TB[ci, small], control):
                                    stopped = True
                                    break
                                cflag[l, small] = True
                                if small != s:
                                    subtract(CB[ci - 1, fside[p]], TB[ci - 1, fside[p]],
                                             CB[ci, small], TB[ci, small], CB[ci, s],
                                             TB[ci, s])
                            cflag[l, s] = True
                        if rem == 2:
                            stats[ST_D2] += 1
                            v, bi, bjL, bjR, ex = d2_solve(
                                CB[ci, s], TB[ci, s], sup, check_sup, eps, pen, flb[l], rule,
                                active and rule_d2, thr, fst[l], l, kind, acc2, dom2,
                                scores, idx,
                                GAINS[l], pos2, reg, pscale)
                            if bi >= 0:
                                rL = rec_stump(R, RC, rfree, rmeta, bjL)
                                rR = rec_stump(R, RC, rfree, rmeta, bjR)
                                rec = rec_new(R, RC, rfree, rmeta, bi, rL, rR)
                                rec_release(R, RC, rfree, rmeta, rL, rstack)
                                rec_release(R, RC, rfree, rmeta, rR, rstack)
                            else:
                                rec = zero + LEAF
                            if not ex and fbest[l] < v - eps:
                                # an inexact step can be worse than the seed (an earlier
                                # restart's tree for this branch): keep the better
                                rec_release(R, RC, rfree, rmeta, rec, rstack)
                                v = fbest[l]
                                rec = fbrec[l]
                            else:
                                rec_release(R, RC, rfree, rmeta, fbrec[l], rstack)
                            fbrec[l] = NONE
                            flags = FLAG_FOUND + (FLAG_EXACT if ex else 0)
                            cache_store(keys, vals, ints, slots, meta, fhi[l], flo[l], v,
                                        v if ex else flb[l], np.inf,
                                        budget(rule, thr, fst[l]), rec, flags, iteration,
                                        R, RC, rfree, rmeta, rstack)
                            r_err = v
                            r_rec = rec
                            r_exact = ex
                            have_ret = True
                            if l == 0:
                                break
                            l -= 1
                            continue
                        diagonal(CB[ci, s], TB[ci, s], acc)
                    else:
                        if scan_features(rows, fa[l], fb[l], indptr, indices, y, w, t, reg,
                                         acc, control):
                            stopped = True
                            break
                        if rem == 1:
                            v, g = stump(acc, sup, check_sup, eps, pen, reg)
                            rec = rec_stump(R, RC, rfree, rmeta, g)
                            rec_release(R, RC, rfree, rmeta, fbrec[l], rstack)
                            r_err = v
                            r_rec = rec
                            r_exact = True
                            have_ret = True
                            if l == 0:
                                break
                            l -= 1
                            continue
                    m, bg = order_features(acc, sup, kind, DOM[l], scores, idx, GAINS[l],
                                           need_gain, reg)
                    if l == 0:
                        stats[ST_ROOT_CANDIDATES] = m
                        if root_position >= 0:   # a run of the root's order
                            k = zero
                            for p in range(root_position, min(root_end, m)):
                                DOM[0, k] = DOM[0, p]
                                k += 1
                            m = k
                    fm[l] = m
                    fpos[l] = 0
                    fbg[l] = bg
                    fexact[l] = True
                    if fleaf[l] < fbest[l] - eps and fleaf[l] < fub[l] - eps:
                        rec_release(R, RC, rfree, rmeta, fbrec[l], rstack)
                        fbest[l] = fleaf[l]
                        fbrec[l] = LEAF
                    fphase[l] = PH_NEXT
                    continue

                if ph == PH_NEXT:
                    # -------------------------------------------- next feature
                    chosen = False
                    while fpos[l] < fm[l] and fbest[l] > flb[l] + eps:
                        p = fpos[l]
                        g = DOM[l, p]
                        fpos[l] += 1
                        B = _bound(l, fub, fbest, shared, margin)
                        lbL = 0.0
                        lbR = 0.0
                        eL_leaf = 0.0
                        eR_leaf = 0.0
                        hL0 = fhi[l] ^ Z[2 * g, 0]
                        hL1 = flo[l] ^ Z[2 * g, 1]
                        e = cache_find(keys, slots, hL0, hL1)
                        if e >= 0:
                            if ints[e, I_FLAGS] == FLAG_EXACT + FLAG_FOUND:
                                lbL = vals[e, V_ERR]
                            else:
                                lbL = vals[e, V_LB]
                        hR0 = fhi[l] ^ Z[2 * g + 1, 0]
                        hR1 = flo[l] ^ Z[2 * g + 1, 1]
                        e = cache_find(keys, slots, hR0, hR1)
                        if e >= 0:
                            if ints[e, I_FLAGS] == FLAG_EXACT + FLAG_FOUND:
                                lbR = vals[e, V_ERR]
                            else:
                                lbR = vals[e, V_LB]
                        if pen > 0.0:
                            # a child costs its leaf, or two leaves at least (only its
                            # leaf at the maximum depth)
                            eL_leaf, _ = side_stats(D1[l], g, F, 0, reg)
                            eR_leaf, _ = side_stats(D1[l], g, F, 1, reg)
                            if l + 1 == D:
                                lbL = max(lbL, eL_leaf + pen)
                                lbR = max(lbR, eR_leaf + pen)
                            else:
                                lbL = max(lbL, pen + min(eL_leaf, pen))
                                lbR = max(lbR, pen + min(eR_leaf, pen))
                        if lbL + lbR >= B - eps:
                            stats[ST_BOUND] += 1
                            continue
                        mid, lb0, lb1 = partition(Xt, rows, fa[l], fb[l], g, lbw, has_lbw)
                        if pen > 0.0 and has_lbw and l + 1 < D:
                            lb0 = min(eL_leaf + pen, lb0 + 2.0 * pen)
                            lb1 = min(eR_leaf + pen, lb1 + 2.0 * pen)
                        lbL = max(lbL, lb0)
                        lbR = max(lbR, lb1)
                        if lbL + lbR >= B - eps:
                            stats[ST_BOUND] += 1
                            continue
                        ffeat[l] = g
                        fidx[l] = p if l > 0 or root_position < 0 else root_position + p
                        fmid[l] = mid
                        flbL[l] = lbL
                        flbR[l] = lbR
                        eR_leaf, _ = side_stats(D1[l], g, F, 1, reg)
                        fleafR[l] = eR_leaf + pen
                        cflag[l + 1, 0] = False
                        cflag[l + 1, 1] = False
                        fcs[l] = 0
                        fphase[l] = PH_PROBE
                        chosen = True
                        break
                    if chosen:
                        continue
                    # -------------------------------------------- finish the branch
                    found = fbest[l] < fub[l] - eps
                    ex = fexact[l]
                    lb_new = flb[l]
                    if ex:
                        lb_new = fbest[l] if found else max(lb_new, fub[l])
                    flags = (FLAG_EXACT if ex else 0) + (FLAG_FOUND if found else 0)
                    cache_store(keys, vals, ints, slots, meta, fhi[l], flo[l],
                                fbest[l] if found else np.inf, lb_new, fub[l],
                                budget(rule, thr, fst[l]), fbrec[l] if found else NONE,
                                flags, iteration, R, RC, rfree, rmeta, rstack)
                    if found:
                        r_err = fbest[l]
                        r_rec = fbrec[l]
                    else:
                        r_err = np.inf
                        r_rec = zero + NONE
                        rec_release(R, RC, rfree, rmeta, fbrec[l], rstack)
                    fbrec[l] = NONE
                    r_exact = ex
                    have_ret = True
                    if l == 0:
                        break
                    l -= 1
                    continue

                if ph == PH_PROBE:
                    # -------------------------------------------- a child of frame l
                    s = fcs[l]
                    g = ffeat[l]
                    c = l + 1
                    a = fa[l] if s == 0 else fmid[l]
                    b = fmid[l] if s == 0 else fb[l]
                    ec, wc = side_stats(D1[l], g, F, s, reg)
                    lbc = flbL[l] if s == 0 else flbR[l]
                    B = _bound(l, fub, fbest, shared, margin)
                    cub = B - flbR[l] if s == 0 else B - flerr[l]
                    fcub[l] = cub
                    hi = fhi[l] ^ Z[2 * g + s, 0]
                    lo = flo[l] ^ Z[2 * g + s, 1]
                    fphase[l] = PH_RESULT
                    have_ret = True
                    ecp = ec + pen   # the child as a leaf
                    if c == D or ecp <= lbc + eps:
                        r_err = ecp
                        r_rec = zero + LEAF
                        r_exact = True
                        continue
                    e = cache_find(keys, slots, hi, lo)
                    if e >= 0:
                        cache_touch(ints, meta, e)
                        fl = ints[e, I_FLAGS]
                        if fl == FLAG_EXACT + FLAG_FOUND:
                            stats[ST_HITS] += 1
                            r_err = vals[e, V_ERR]
                            r_rec = ints[e, I_REC]
                            rec_acquire(RC, r_rec)
                            r_exact = True
                            continue
                        lbc = max(lbc, vals[e, V_LB])
                    if lbc >= cub - eps:
                        stats[ST_BOUND] += 1
                        r_err = np.inf
                        r_rec = zero + NONE
                        r_exact = True
                        continue
                    cst = child_state(rule, fst[l], fidx[l], ec * pscale, wc, fbg[l],
                                      GAINS[l, g])
                    if (rule_d2 or c < D - 1) and pruned(rule, active, thr, cst, fidx[l], l):
                        stats[ST_RULE] += 1
                        r_err = ecp
                        r_rec = zero + LEAF
                        r_exact = False
                        continue
                    if e >= 0:
                        fl = ints[e, I_FLAGS]
                        if (fl & FLAG_EXACT) == 0 and ints[e, I_ITER] == iteration and \
                                budget(rule, thr, cst) <= vals[e, V_BUDGET] + 1e-9 and \
                                cub <= vals[e, V_UB] + eps:
                            stats[ST_HITS] += 1
                            r_exact = False
                            if (fl & FLAG_FOUND) != 0:
                                r_err = vals[e, V_ERR]
                                r_rec = ints[e, I_REC]
                                rec_acquire(RC, r_rec)
                            else:
                                r_err = np.inf
                                r_rec = zero + NONE
                            continue
                    if c == D - 1 and not use_d2:
                        accc = D1[c]
                        if scan_features(rows, a, b, indptr, indices, y, w, t, reg, accc,
                                         control):
                            stopped = True
                            have_ret = False
                            break
                        v, gg = stump(accc, sup, check_sup, eps, pen, reg)
                        r_err = v
                        r_rec = rec_stump(R, RC, rfree, rmeta, gg)
                        r_exact = True
                        continue
                    # push a frame for the child
                    have_ret = False
                    fa[c] = a
                    fb[c] = b
                    fside[c] = s
                    fhi[c] = hi
                    flo[c] = lo
                    fub[c] = cub
                    flb[c] = lbc
                    fleaf[c] = ecp
                    fst[c] = cst
                    fbest[c] = np.inf
                    fbrec[c] = NONE
                    if e >= 0 and (ints[e, I_FLAGS] & FLAG_FOUND) != 0 and \
                            vals[e, V_ERR] < cub - eps:
                        fbest[c] = vals[e, V_ERR]
                        fbrec[c] = ints[e, I_REC]
                        rec_acquire(RC, fbrec[c])
                    fphase[c] = PH_ENTER
                    l = c
                    continue

                # ------------------------------------------------ PH_RESULT
                have_ret = False
                s = fcs[l]
                if not r_exact:
                    fexact[l] = False
                if s == 0:
                    if r_err < fcub[l] - eps:
                        flerr[l] = r_err
                        flrec[l] = r_rec
                        fcs[l] = 1
                        fphase[l] = PH_PROBE
                    else:
                        rec_release(R, RC, rfree, rmeta, r_rec, rstack)
                        fphase[l] = PH_NEXT
                    continue
                if r_err < fcub[l] - eps:
                    v = flerr[l] + r_err
                    if v < _bound(l, fub, fbest, shared, margin) - eps:
                        rec = rec_new(R, RC, rfree, rmeta, ffeat[l], flrec[l], r_rec)
                        rec_release(R, RC, rfree, rmeta, fbrec[l], rstack)
                        fbest[l] = v
                        fbrec[l] = rec
                        if l == 0:   # tell the other threads (racy but sound)
                            shared[0] = min(shared[0], v + margin)
                        if l == 0 and not snapshots and v < inc_err - eps:
                            # a complete tree at the root: the incumbent
                            rec_acquire(RC, rec)
                            rec_release(R, RC, rfree, rmeta, inc_rec, rstack)
                            inc_rec = rec
                            inc_err = v
                            pending = True
                rec_release(R, RC, rfree, rmeta, flrec[l], rstack)
                rec_release(R, RC, rfree, rmeta, r_rec, rstack)
                flrec[l] = NONE
                fcs[l] = 0
                fphase[l] = PH_NEXT
                continue

            stats[ST_PEAK_ENTRIES] = max(stats[ST_PEAK_ENTRIES], meta[M_PEAK])
            if stopped:
                # the stop-now tree, then let go of every frame's records
                if have_ret:
                    rec_release(R, RC, rfree, rmeta, r_rec, rstack)
                v = _stop_now_value(l, fleaf, fbest, fcs, fleafR, flerr)
                if v < inc_err - eps:
                    rec, v = _stop_now_tree(l, fleaf, fbest, fbrec, fcs, ffeat, fleafR,
                                            flerr, flrec, R, RC, rfree, rmeta, rstack)
                    rec_release(R, RC, rfree, rmeta, inc_rec, rstack)
                    inc_rec = rec
                    inc_err = v
                break
            # ---------------------------------------------------- restart done
            if r_err < inc_err - eps:
                rec_release(R, RC, rfree, rmeta, inc_rec, rstack)
                inc_rec = r_rec
                inc_err = r_err
                pending = True
            else:
                rec_release(R, RC, rfree, rmeta, r_rec, rstack)
            if pending:
                t0 = ks.monotonic()
                publish_record_tree(inc_rec, inc_err + offset, global_lb, R, fmap, flip, Xg,
                                    Vg, of, othr, ol, orr, oval, ored, tstack, control,
                                    state, events, nodes, thresholds, values)
                stats[ST_PUBLISHED] += 1
                published_err = inc_err
                last_publish = ks.monotonic()
                gap = max(interval, 10.0 * (last_publish - t0))
                pending = False
            if restart > 0 or r_exact or not active or inc_err <= root_lb + eps:
                optimal = r_exact or inc_err <= root_lb + eps
                break
            relaxations += 1
            thr = relax(relaxation, thr, step, factor, relaxations)
            if vacuous(rule, thr, D, F, Kg):
                active = False

    stats[ST_EVICTED] = meta[M_EVICTED] - evicted_before
    stats[ST_PEAK_ENTRIES] = max(stats[ST_PEAK_ENTRIES], meta[M_PEAK])
    stats[ST_PEAK_RECORDS] = rmeta[RM_PEAK]
    m = assemble_tree(inc_rec, R, fmap, flip, Xg, Vg, of, othr, ol, orr, oval, ored, tstack)
    rec_release(R, RC, rfree, rmeta, inc_rec, rstack)   # the cache lives on
    if inc_err < published_err:
        ks.publish(state, events, nodes, thresholds, values, control, inc_err + offset,
                   global_lb, of, othr, ol, orr, oval, m)
        stats[ST_PUBLISHED] += 1
    return (of[:m].astype(np.int32), othr[:m].copy(), ol[:m].astype(np.int32),
            orr[:m].astype(np.int32), oval[:m].copy(), inc_err, optimal, stats,
            (keys, vals, ints, slots, meta, R, RC, rfree, rmeta))
