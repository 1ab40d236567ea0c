"""Numba kernel of Orchard's `blossom` solver (Demirović, Hebrard & Jean, NeurIPS 2021).

The search (Algorithm 2 of the paper)
-------------------------------------
Blossom explores the same branches as the dynamic programme DL8 (every ordered
choice of features along every branch), but it always expands the open branches
("buds") of the current tree before it tries an alternative feature anywhere, so
it holds a complete tree at every moment and improves it anytime.

* The current tree is a set of *slots*, one per branch of depth <= D-2 that can
  still be split (D = maximum depth).  A slot keeps its rows (a segment of one row
  permutation, partitioned in place), the class weights of those rows per feature
  (`CNT`, computed when the branch is created), its untried features (`DOM`,
  sorted by increasing Gini impurity of the split when the slot is first expanded,
  so a slot pruned before that never sorts; features constant on the branch's
  rows are left out, "informationless", and so is a feature that splits them into
  the same two sets as one before it: its subtrees could only tie), the feature it
  currently tests,
  its two children and `best`: the least error of any subtree found for it so far
  (including the subtree it currently holds).
* Branches at depth D-1 are solved exactly when they are created: the feature of
  least error (or a leaf) is optimal there, so they are never put back into the
  buds.  Branches of depth D, pure branches (error equal to their lower bound) and
  branches whose rows all have the same features are leaves.  None of these takes a
  slot: their parent stores their error and subtree.
* `buds` is a FIFO queue of slots and `seq` the stack of assignments (a slot is
  pushed when it gets a feature).  While there is a bud, the first one gets its
  next feature, its rows are split, and the children are created.  When there is
  none, the tree is complete: pop the last assignment; if its branch has untried
  features (and the lower bound below allows it) it becomes a bud again, otherwise
  it is finished and popping continues.  The search is exhausted (and `best` of the
  root optimal) when both are empty.
* A slot of depth D-2 popped with untried features would go: back into the empty
  buds, expanded with its next feature (children solved at once), popped again...
  so that round trip is run as a loop over its remaining features, in the same
  order, with the same lower-bound check before each, without copying rows.

The cache of branches of depth D-2 (issue 20)
----------------------------------------------
A branch is the set of its tests, (feature, side) pairs, whatever their order: the
branch a=1, b=0 is the branch b=0, a=1, with the same rows and the same optimal
subtree.  Blossom, like DL8 without a cache, reaches such a branch once per order of
its tests (twice at depth D-2 = 2, six times at depth 3), and nearly all the time
of a proof goes into the loop over the features of branches of depth D-2.  So the
exact result of every branch of depth D-2 that is finished *exactly* (its features
exhausted with no pruning, or its best equal to its lower bound) is stored in a
hash table (`cache`) keyed by the sorted literals 2 * feature + side of its path
(compared literally on lookup: no false hits): its least error and its subtree of
depth <= 2 inline (three features), not a record.  When an expansion creates a
child of depth D-2, the child is looked up first; a hit is solved at once, like a
child of depth D-1 (its value and a new record of the stored subtree; no slot), so
a hit gives the value and the subtree the search would find again (its rows, hence
its feature order and ties, are the same).  Pruned (tainted) slots only have an
upper bound and are not stored.  The table takes the kernel's `cache` argument and
returns it: one search per call, or one per thread kept from task to task (see
`parallel`; an exact result does not depend on the root above it).

Memory: an entry takes `cache.entry_bytes(D-2)` bytes (52 at depth 4, table places
included) and holds no record; the table doubles while slots + records + table fit
in `memory_budget`, else it is emptied (and, when the slots or records need the
room, shrunk back) instead of stopping the search; at most CACHE_MAX entries.

The cached results also give a second lower bound of a new child c of depth D-2 of
slot q (MurTree's similarity bound): for a cached sibling c' = q's child under a
feature q tried before, opt(c) >= opt(c') - weight(c' minus c), the weights coming
from q's and c's counts.  It is kept apart from `lb` (`F_BOUND`; the counts of
children are derived from `lb`) and used where lower bounds are compared: by the
ancestor bound, and to finish a slot whose best reaches it (exact; a child whose
leaf reaches it takes no slot).  Off with a least leaf weight (see "A least leaf
weight" below: it is not sound there).

Counting
--------
Creating the children of a branch scans the rows of the smaller child (every
feature, every row: `cnt[class, feature] += weight * x`) and obtains the other by
subtracting from the parent's counts.  Subtraction is exact when every weight is an
integer (`exact`; then no tolerance is used anywhere, and the caller passes int32
weights when their total allows, so counts are int32: twice as many per vector
instruction); otherwise both children are scanned and improvements must beat `eps`.
Counts have the dtype of `w`; the kernel is compiled once per dtype.  A branch of
depth D-1 with two classes and exact weights is solved in two passes over the
features (the least error, which vectorises, then the first feature reaching it).
In the loop over a branch of depth D-2 only the lighter side of each feature is
counted and the least errors of both sides are computed in one pass
(`_least_pair2`, the heavier side's counts on the fly); the heavier side's counts
and the subtrees are made only when the two errors improve the branch, which few
features do.

Best subtrees and the incumbent
-------------------------------
Subtrees are immutable records `(feature, left record, right record)` with a
reference count; record 0 is "a leaf" (leaf values are not stored: the published
tree's class weights are recomputed by routing the data through it).  Whenever the
combination a slot currently tests (children's best values summed) beats its
`best`, the slot gets a new record and the improvement is propagated to its parent,
and so on up to the root: `best` of the root is always the error of a complete tree
whose record is at hand.  Improvements of the root are assembled into flat arrays
(preorder, original feature indices) and published into the IncumbentSink: first
the tree of the first complete dive (every bud of the first tree expanded, which
takes about as long as a greedy tree; earlier trees only if that dive takes longer
than FIRST_PATIENCE), then improvements, at most one per `interval` seconds or ten
times the time the last one took to assemble (a pending one is published when that
has passed, and at the end).

Lower bounds
------------
* Every branch has a lower bound `lb`: the weight that no tree can classify
  correctly because identical feature vectors carry different classes (computed by
  the caller per distinct vector, `lbw`).  A branch whose best equals it is optimal;
  a root reaching it stops the search (the paper's stop when the error equals the
  number of inconsistent pairs, generalised to several classes).
* The ancestor bound of Section 4.2: before a slot is expanded with its first
  feature, and before it is put back into the buds, the exact errors of finished
  siblings along the path to each ancestor (or the siblings' lower bound when not
  finished: `lb`, or the similarity bound above for branches of depth D-2) plus its
  own are summed; when that sum reaches the ancestor's `best`, no subtree below can
  improve the ancestor with the tests as they stand, and the slot is finished
  instead.  Its best value is then only an upper bound, so the slots strictly
  below that ancestor on the path are marked *tainted*: a
  finished slot counts as exact (usable in later bounds) only when untainted.  The
  ancestor itself stays exact (every pruned subtree was no better than its best),
  so the root's value is optimal when the search is exhausted.

A cost per leaf
---------------
With `penalty` > 0 (`leaf_cost` x the training weight) the kernel minimises the
objective error + penalty x leaves over the same trees, and every value it compares,
bounds, caches and publishes is that objective: a leaf costs its misclassified weight
+ penalty, a split the sum of its two children (`best`, the children's values, the
cache's values, the root's value and the published incumbents).  Counts and `lb` (the
unavoidable error, from which the children's is derived) stay in weight units; the
lower bound of a branch in objective units, `F_BOUND`, is `_bound`: min(leaf error +
penalty, lb + 2 penalty), as any subtree is the leaf or has two leaves at least (lb
itself without a penalty).  So the shortcuts that a pure branch is a leaf become "a
leaf within penalty of lb is optimal" (no split can be cheaper), and the root stops at
its own `_bound`.  The depth-1 solvers compare errors and add the penalty at the end
(a split of error e beats the leaf when e + penalty < leaf error).  The ancestor
bound sums objectives of disjoint subtrees, so it holds as it is; the similarity
bound holds as well, since a tree's leaf count does not depend on the rows (c's
optimal tree on c' costs at most weight(c' minus c) more, with as many leaves).  With
a penalty, objectives are not integers even with integer weights (no "they differ by
at least one"): the caller then passes the tolerance of fractional weights (`eps` >
0) while `exact` still says the counts are exact, and the fast paths that need exact
counts (`_last_level_exact2`, `_least_pair2`) test `exact` and compare with `eps`.  With
penalty = 0 every expression reduces to the error alone, bit for bit.

A least leaf weight
-------------------
With `least` = M > 0 (the adapter's `min_leaf` when above 1) the kernel searches only
trees whose every split leaves a weight >= M on both sides (the root as a single leaf
is always allowed): a split with a lighter side is no split anywhere one is chosen.
`_order` leaves such features out of a slot's domain (so the first dive, the root's
tasks and every expansion see only valid splits, and a branch with none is a leaf),
`_last_level` / `_solve_last` (branches of depth D-1, and the root at depth 1) and
`_least_pair2` (the vectorised pass of the loop at depth D-2) go to `_last_level_least`
/ `_least_pair2_least`, which give an invalid feature the leaf's error (the loops of
two classes still vectorise), and a child lighter than 2M is a leaf at once.  The
weights are the data's: the adapter merges identical rows but does not subtract each
vector's least class weight then (that would change the leaves' weights).

Under M the optimum of a branch is no longer monotone in its rows, nor does it move by
at most the weight of rows moved: a side falling under M forbids a split at once.  So
every rule that bounds one set of rows from another's result must go, and in this
kernel that is the similarity bound alone (c's optimal tree, on c''s rows, may have a
leaf under M: not a tree of c'); it is off when M > 0 (`ST_SIMILAR` stays 0).  What
stays is sound because it bounds a branch from its own rows or compares real trees:
* `lb` and `_bound` (unavoidable error of identical rows, + penalty per leaf): a lower
  bound of every tree on those rows, valid or not; "the leaf reaches it, so the leaf is
  optimal" holds since the leaf is always a valid tree;
* the cache, keyed on the branch's tests, i.e. its row set: a stored value is the
  constrained optimum of exactly those rows (every tree the search builds is valid);
* the ancestor bound: it adds, for disjoint sibling branches of one tree, each one's
  constrained optimum (finished, untainted) or own-rows bound, and compares with the
  ancestor's `best`, the value of a valid tree; any valid tree with those tests costs
  at least that sum.  The threads' shared key is a valid tree's value, too;
* the prefilter of the loop at depth D-2 (`_least_pair2`'s two least values must
  beat the branch's best): each value is the constrained depth-1 optimum of that
  side's own rows (at most `_solve_last`'s), so no improvement is skipped;
* a split of one feature is the same split as an equal or complementary feature's
  (`_order`'s ties): the same two row sets, so the same validity.
The kernel has no rule "a pure (zero-error) child makes the other features no
better", nor a bound carried from a parent's or a sibling's rows but the similarity
bound, so nothing else changes.
With M = 0 (`least` = 0.0) every test above is false or skipped before any loop (the
fast paths are the same functions as before), so the search is the same, bit for bit.

Memory is one row permutation plus, per slot, F + K * (F + 1) numbers (slots grow
by doubling up to min(2^(D-1), distinct rows)), records (four integers each; at
most about D records per slot are alive) and the cache above.

The kernel polls `should_stop(control)` once per expansion or backtrack and every
ROW_POLL rows inside a scan, and returns the best tree found when told to stop.
"""

import numpy as np
from numba import njit

from engine.solvers import kernel_support as ks
from engine.solvers.blossom.cache import (
    CACHE_INIT,
    CACHE_MAX,
    M_CLEARS,
    M_COUNT,
    M_HITS,
    M_LOOKUPS,
    M_PEAK,
    M_SIMILAR,
    M_STORES,
    cache_bytes,
    cache_clear,
    cache_find,
    cache_grow,
    cache_new,
    cache_put,
    key_of,
)
from engine.solvers.record_trees import (
    LEAF,
    assemble_tree,
    publish_record_tree,
    tree_buffers,
)

# Integer fields of a slot.
I_PAR, I_SIDE, I_DEP, I_START, I_END, I_FEAT, I_REC, I_DPTR, I_DLEN = 0, 1, 2, 3, 4, 5, 6, 7, 8
I_CH0, I_CH1, I_CREC0, I_CREC1, I_TAINT, I_FIN, I_EXACT = 9, 10, 11, 12, 13, 14, 15
N_I = 16
# Float fields of a slot.
F_BEST, F_LB, F_CVAL0, F_CVAL1, F_BOUND = 0, 1, 2, 3, 4
N_F = 5
# Fields of a record.
R_FEAT, R_LEFT, R_RIGHT, R_REF = 0, 1, 2, 3

# Statistics returned by the kernel.
ST_EXPANSIONS = 0      # feature tests assigned to a slot (Line 'assignment')
ST_LAST_LEVEL = 1      # branches of depth D-1 solved exactly
ST_BACKTRACKS = 2      # assignments popped from the sequence
ST_PRUNED = 3          # slots finished by the ancestor lower bound
ST_IMPROVEMENTS = 4    # improvements of the root
ST_PUBLISHED = 5       # trees written into the sink
ST_PEAK_SLOTS = 6
ST_PEAK_RECORDS = 7
ST_FIRST_TREE_T = 8    # seconds until every bud of the first tree was expanded
ST_FIRST_TREE_ERR = 9  # error (reduced data) of the best tree at that moment
ST_SLOT_CAPACITY = 10
ST_RECORD_CAPACITY = 11
ST_ROOT_CANDIDATES = 12  # features the root may test
ST_CACHE_LOOKUPS = 13  # branches of depth D-2 looked up in the cache before creation
ST_CACHE_HITS = 14     # ... found there (solved without a slot)
ST_CACHE_STORES = 15   # branches of depth D-2 solved exactly and stored
ST_CACHE_ENTRIES = 16  # peak entries in the cache
ST_CACHE_CLEARS = 17   # times the full cache was emptied (memory budget)
ST_SIMILAR = 18        # branches of depth D-2 whose bound the similarity bound raised
ST_CACHE_SHARED = 19   # entries copied in from other threads' caches (`parallel`; 0 here)
N_STATS = 20

ROW_POLL = 1024        # rows scanned between two polls of the control array
FIRST_PATIENCE = 0.1   # seconds after which trees are published before the first dive ends


@njit(cache=True, nogil=True)
def _scan(X, y, w, lbw, rows, a, b, acc, control):
    """Add rows[a:b] into acc (K x (F+1)): acc[k, g] = weight of class k with x_g = 1,
    acc[k, F] = weight of class k.  Returns (their lower bound, aborted)."""
    F = X.shape[1]
    lb = 0.0
    for p in range(a, b):
        if (p - a) % ROW_POLL == ROW_POLL - 1 and ks.should_stop(control):
            return lb, True
        i = rows[p]
        c = acc[y[i]]
        wi = w[i]
        xi = X[i]
        for g in range(F):
            c[g] += wi * xi[g]
        c[F] += wi
        lb += lbw[i]
    return lb, False


@njit(cache=True, nogil=True)
def _leaf_error(acc, F):
    """Error of a leaf on rows with class weights acc[:, F]."""
    total = 0.0
    most = 0.0
    for k in range(acc.shape[0]):
        t = acc[k, F]
        total += t
        most = max(most, t)
    return total - most


@njit(cache=True, nogil=True)
def _weight(acc, F):
    """Total weight of rows with class weights acc[:, F]."""
    total = 0.0
    for k in range(acc.shape[0]):
        total += acc[k, F]
    return total


@njit(cache=True, nogil=True)
def _order(acc, F, dom, scores, idx, Xt, rows, a, b, least):
    """Write into dom the features that split the rows rows[a:b] (not constant on
    them) into two sides of weight >= least each (0: no least leaf weight), by
    increasing weighted Gini impurity W_L gini(L) + W_R gini(R), ties by index,
    leaving out a feature that splits them exactly as one before it does (or into
    the same two sides swapped): its subtrees would be the same, never better.
    Returns how many."""
    K = acc.shape[0]
    W = 0.0
    for k in range(K):
        W += acc[k, F]
    m = 0
    for g in range(F):
        all_one = True
        all_zero = True
        for k in range(K):
            r = acc[k, g]
            if r != acc[k, F]:
                all_one = False
            if r != 0:
                all_zero = False
        if all_one or all_zero:
            continue
        WR = 0.0
        sR = 0.0
        sL = 0.0
        for k in range(K):
            r = acc[k, g]
            left = acc[k, F] - r
            WR += r
            sR += r * r
            sL += left * left
        WL = W - WR
        if WL < least or WR < least:   # a side lighter than a leaf may be
            continue
        # symmetric in the two sides, so a complementary feature ties exactly
        score = W - (sL / WL + sR / WR)
        scores[m] = score
        idx[m] = g
        m += 1
    if m == 0:
        return m
    order = np.argsort(scores[:m], kind="mergesort")
    kept = 0
    run = 0   # first kept feature of the current run of equal scores
    for j in range(m):
        g = idx[order[j]]
        if j > 0 and scores[order[j]] != scores[order[j - 1]]:
            run = kept
        same = False
        for t in range(run, kept):
            if _same_split(acc, F, Xt, rows, a, b, g, np.int64(dom[t])):
                same = True
                break
        if not same:
            dom[kept] = g
            kept += 1
    return kept


@njit(cache=True, nogil=True)
def _same_split(acc, F, Xt, rows, a, b, g, h):
    """Whether features g and h split rows[a:b] into the same two sets (either way
    round); acc: the rows' counts, checked first."""
    K = acc.shape[0]
    equal = True
    swapped = True
    for k in range(K):
        if acc[k, g] != acc[k, h]:
            equal = False
        if acc[k, g] != acc[k, F] - acc[k, h]:
            swapped = False
    if not (equal or swapped):
        return False
    xg = Xt[g]
    xh = Xt[h]
    if equal:
        for p in range(a, b):
            i = rows[p]
            if xg[i] != xh[i]:
                equal = False
                break
    if swapped and not equal:
        for p in range(a, b):
            i = rows[p]
            if xg[i] == xh[i]:
                return False
        return True
    return equal


@njit(cache=True, nogil=True)
def _last_level_exact2(acc, F, eps, pen):
    """_last_level for two classes and exact weights: the least error first (a loop
    the compiler vectorises, in weight units), then the first feature reaching it.
    A split costs one leaf more: it is kept when least + pen beats the leaf by more
    than eps (pen = eps = 0: least < leaf)."""
    a0 = acc[0]
    a1 = acc[1]
    t0 = a0[F]
    t1 = a1[F]
    W = t0 + t1
    leaf = W - max(t0, t1)
    least = leaf
    for g in range(F):
        r0 = a0[g]
        r1 = a1[g]
        least = min(least, W - max(r0, r1) - max(t0 - r0, t1 - r1))
    if least + pen + eps >= leaf:
        return 1.0 * leaf + pen, -1
    for g in range(F):
        r0 = a0[g]
        r1 = a1[g]
        if W - max(r0, r1) - max(t0 - r0, t1 - r1) == least:
            return 1.0 * least + 2.0 * pen, g
    return 1.0 * leaf + pen, -1


@njit(cache=True, nogil=True)
def _last_level(acc, F, eps, exact, pen, least):
    """Best tree of depth 1 on rows with counts acc: (objective, feature or -1 for a
    leaf), each leaf costing pen on top of its error.  A split is kept only when it
    beats the leaf by more than eps (ties: lowest index).  The loops compare errors
    (weight units): a split of error e costs e + 2 pen, so it must beat leaf - pen.
    With a least leaf weight (least > 0) `_last_level_least` answers: only splits
    whose both sides weigh >= least count."""
    if least > 0.0:
        return _last_level_least(acc, F, eps, exact, pen, least)
    K = acc.shape[0]
    if K == 2 and exact:
        return _last_level_exact2(acc, F, eps, pen)
    W = 0.0
    most = 0.0
    for k in range(K):
        t = acc[k, F]
        W += t
        most = max(most, t)
    leaf = W - most
    best = leaf - pen
    best_g = -1
    if K == 2:
        a0 = acc[0]
        a1 = acc[1]
        t0 = a0[F]
        t1 = a1[F]
        for g in range(F):
            r0 = a0[g]
            r1 = a1[g]
            err = W - max(r0, r1) - max(t0 - r0, t1 - r1)
            if err < best - eps:
                best = err
                best_g = g
        if best_g < 0:
            return leaf + pen, best_g
        return best + 2.0 * pen, best_g
    for g in range(F):
        mR = 0.0
        mL = 0.0
        for k in range(K):
            r = acc[k, g]
            left = acc[k, F] - r
            mR = max(mR, r)
            mL = max(mL, left)
        err = W - mL - mR
        if err < best - eps:
            best = err
            best_g = g
    if best_g < 0:
        return leaf + pen, best_g
    return best + 2.0 * pen, best_g


@njit(cache=True, nogil=True)
def _last_level_least(acc, F, eps, exact, pen, least):
    """_last_level when every leaf must weigh >= least (> 0): a feature with a side
    lighter than that is no split.  With two classes and exact weights, in two passes
    as `_last_level_exact2` (an invalid feature scores the leaf's error, so the first
    loop still vectorises)."""
    K = acc.shape[0]
    W = 0.0
    most = 0.0
    for k in range(K):
        t = acc[k, F]
        W += t
        most = max(most, t)
    leaf = W - most
    if W < 2.0 * least:   # no split leaves both sides heavy enough
        return leaf + pen, -1
    if K == 2 and exact:
        a0 = acc[0]
        a1 = acc[1]
        t0 = a0[F]
        t1 = a1[F]
        lo = leaf
        for g in range(F):
            r0 = a0[g]
            r1 = a1[g]
            e = W - max(r0, r1) - max(t0 - r0, t1 - r1)
            ok = r0 + r1 >= least and W - (r0 + r1) >= least
            lo = min(lo, e if ok else leaf)
        if lo + pen + eps >= leaf:
            return leaf + pen, -1
        for g in range(F):
            r0 = a0[g]
            r1 = a1[g]
            if (r0 + r1 >= least and W - (r0 + r1) >= least
                    and W - max(r0, r1) - max(t0 - r0, t1 - r1) == lo):
                return lo + 2.0 * pen, g
        return leaf + pen, -1
    best = leaf - pen
    best_g = -1
    for g in range(F):
        WR = 0.0
        WL = 0.0
        mR = 0.0
        mL = 0.0
        for k in range(K):
            r = acc[k, g]
            left = acc[k, F] - r
            WR += r
            WL += left
            mR = max(mR, r)
            mL = max(mL, left)
        if WR < least or WL < least:
            continue
        err = W - mL - mR
        if err < best - eps:
            best = err
            best_g = g
    if best_g < 0:
        return leaf + pen, best_g
    return best + 2.0 * pen, best_g


@njit(cache=True, nogil=True)
def _solve_last(acc, F, lb, eps, exact, pen, least):
    """_last_level, skipped when the leaf is optimal: its error is within pen of the
    rows' unavoidable error lb (any split costs at least lb + 2 pen; a bound of these
    rows alone, so it holds with a least leaf weight too)."""
    leaf = _leaf_error(acc, F)
    if leaf <= lb + pen + eps:
        return leaf + pen, -1
    return _last_level(acc, F, eps, exact, pen, least)


@njit(cache=True, nogil=True)
def _bound(err, lb, pen):
    """Lower bound of the objective of any subtree on rows whose leaf error is err and
    unavoidable error lb, each leaf costing pen: min(err + pen, lb + 2 pen), the leaf
    or a split (two leaves at least); lb itself when pen = 0."""
    return lb + pen + min(max(err - lb, 0.0), pen)


@njit(cache=True, nogil=True)
def _other_side(tmp, tlb, side, parent, parent_lb, acc, lb):
    """Counts and bound of the child not scanned: the parent's minus the scanned one's."""
    tlb[side] = lb
    big = tmp[1 - side]
    for k in range(parent.shape[0]):
        for j in range(parent.shape[1]):
            big[k, j] = parent[k, j] - acc[k, j]
    tlb[1 - side] = parent_lb - lb


@njit(cache=True, nogil=True)
def _split_counts(X, Xt, y, w, lbw, rows, a, b, g, parent, parent_lb, tmp, tlb, exact,
                  control):
    """Partition rows[a:b] on feature g (x_g = 0 first) and fill tmp[0] / tmp[1] with the
    counts of the two sides and tlb with their lower bounds: the smaller side is
    scanned, the other is the parent's counts minus it (when weights are integers).
    Returns (first row of the right side, aborted)."""
    mid = ks.partition_rows(Xt[g], rows, a, b)
    K = parent.shape[0]
    F1 = parent.shape[1]
    if exact:
        small = 0 if mid - a <= b - mid else 1
        acc = tmp[small]
        for k in range(K):
            for j in range(F1):
                acc[k, j] = 0
        if small == 0:
            lb, aborted = _scan(X, y, w, lbw, rows, a, mid, acc, control)
        else:
            lb, aborted = _scan(X, y, w, lbw, rows, mid, b, acc, control)
        _other_side(tmp, tlb, small, parent, parent_lb, acc, lb)
        return mid, aborted
    for side in range(2):
        for k in range(K):
            for j in range(F1):
                tmp[side, k, j] = 0
    lb, aborted = _scan(X, y, w, lbw, rows, a, mid, tmp[0], control)
    tlb[0] = lb
    if not aborted:
        lb, aborted = _scan(X, y, w, lbw, rows, mid, b, tmp[1], control)
        tlb[1] = lb
    return mid, aborted


@njit(cache=True, nogil=True)
def _lighter_side(X, Xt, y, w, lbw, rows, a, b, g, parent, tmp, buf, control):
    """The scan of _side_counts alone (exact weights): tmp[side] gets the counts of the
    lighter side of feature g on rows[a:b].  Returns (side, its lower bound,
    aborted); the other side is the parent's counts minus these (_other_side)."""
    K = parent.shape[0]
    F1 = parent.shape[1]
    zero = a - a
    F = F1 - 1
    w1 = 0.0
    w0 = 0.0
    for k in range(K):
        w1 += parent[k, g]
        w0 += parent[k, F]
    w0 -= w1
    side = 1 if w1 <= w0 else 0
    xg = Xt[g]
    m = zero
    for p in range(a, b):
        i = rows[p]
        buf[m] = i
        m += xg[i] == side
    acc = tmp[side]
    for k in range(K):
        for j in range(F1):
            acc[k, j] = 0
    lb, aborted = _scan(X, y, w, lbw, buf, zero, m, acc, control)
    return side, lb, aborted


@njit(cache=True, nogil=True)
def _least_pair2(acc, parent, F, pen, least):
    """Least objectives of depth 1 (leaf included, each leaf costing pen) on the rows
    counted in acc and on the rest of the parent's rows, two classes, exact weights:
    one vectorised pass over the errors, without writing the rest's counts.  With a
    least leaf weight (least > 0), `_least_pair2_least`."""
    if least > 0.0:
        return _least_pair2_least(acc, parent, F, pen, least)
    a0 = acc[0]
    a1 = acc[1]
    p0 = parent[0]
    p1 = parent[1]
    s0 = a0[F]
    s1 = a1[F]
    o0 = p0[F] - s0
    o1 = p1[F] - s1
    Ws = s0 + s1
    Wo = o0 + o1
    leaf_s = Ws - max(s0, s1)
    leaf_o = Wo - max(o0, o1)
    ls = leaf_s
    lo = leaf_o
    for g in range(F):
        r0 = a0[g]
        r1 = a1[g]
        ls = min(ls, Ws - max(r0, r1) - max(s0 - r0, s1 - r1))
        q0 = p0[g] - r0
        q1 = p1[g] - r1
        lo = min(lo, Wo - max(q0, q1) - max(o0 - q0, o1 - q1))
    # ls, lo: least split errors (no split errs more than the leaf); pen = 0: ls, lo
    return (min(1.0 * leaf_s + pen, 1.0 * ls + 2.0 * pen),
            min(1.0 * leaf_o + pen, 1.0 * lo + 2.0 * pen))


@njit(cache=True, nogil=True)
def _least_pair2_least(acc, parent, F, pen, least):
    """_least_pair2 when every leaf must weigh >= least (> 0): a feature with a side
    lighter than that scores the leaf's error (no split), so the loop still
    vectorises.  Each value is exactly `_solve_last`'s but for its tie tolerance (at
    most it), so the caller's test on their sum skips no improvement."""
    a0 = acc[0]
    a1 = acc[1]
    p0 = parent[0]
    p1 = parent[1]
    s0 = a0[F]
    s1 = a1[F]
    o0 = p0[F] - s0
    o1 = p1[F] - s1
    Ws = s0 + s1
    Wo = o0 + o1
    leaf_s = Ws - max(s0, s1)
    leaf_o = Wo - max(o0, o1)
    ls = leaf_s
    lo = leaf_o
    for g in range(F):
        r0 = a0[g]
        r1 = a1[g]
        es = Ws - max(r0, r1) - max(s0 - r0, s1 - r1)
        oks = r0 + r1 >= least and Ws - (r0 + r1) >= least
        ls = min(ls, es if oks else leaf_s)
        q0 = p0[g] - r0
        q1 = p1[g] - r1
        eo = Wo - max(q0, q1) - max(o0 - q0, o1 - q1)
        oko = q0 + q1 >= least and Wo - (q0 + q1) >= least
        lo = min(lo, eo if oko else leaf_o)
    return (min(1.0 * leaf_s + pen, 1.0 * ls + 2.0 * pen),
            min(1.0 * leaf_o + pen, 1.0 * lo + 2.0 * pen))


@njit(cache=True, nogil=True)
def _side_counts(X, Xt, y, w, lbw, rows, a, b, g, parent, parent_lb, tmp, tlb, exact,
                 buf, control):
    """Like _split_counts without reordering rows: the lighter side of feature g is
    gathered (branch-free) into buf and scanned.  For the branches of depth D-2,
    whose children need no rows of their own."""
    if not exact:
        return _split_counts(X, Xt, y, w, lbw, rows, a, b, g, parent, parent_lb, tmp, tlb,
                             exact, control)
    side, lb, aborted = _lighter_side(X, Xt, y, w, lbw, rows, a, b, g, parent, tmp, buf,
                                      control)
    _other_side(tmp, tlb, side, parent, parent_lb, tmp[side], lb)
    return a, aborted


@njit(cache=True, nogil=True)
def _rec_new(R, rfree, ctr, feature, left, right):
    ctr[0] -= 1
    r = rfree[ctr[0]]
    R[r, R_FEAT] = feature
    R[r, R_LEFT] = left
    R[r, R_RIGHT] = right
    R[r, R_REF] = 1
    if left != LEAF:
        R[left, R_REF] += 1
    if right != LEAF:
        R[right, R_REF] += 1
    return r


@njit(cache=True, nogil=True)
def _rec_release(R, rfree, ctr, r, stack):
    """Drop one reference to record r, freeing what nobody references any more."""
    if r == LEAF:
        return
    stack[0] = r
    top = 1
    while top > 0:
        top -= 1
        x = stack[top]
        R[x, R_REF] -= 1
        if R[x, R_REF] == 0:
            rfree[ctr[0]] = x
            ctr[0] += 1
            if R[x, R_LEFT] != LEAF:
                stack[top] = R[x, R_LEFT]
                top += 1
            if R[x, R_RIGHT] != LEAF:
                stack[top] = R[x, R_RIGHT]
                top += 1


@njit(cache=True, nogil=True)
def _child_value(IS, FS, s, side):
    c = IS[s, I_CH0 + side]
    if c >= 0:
        return FS[c, F_BEST], IS[c, I_REC]
    return FS[s, F_CVAL0 + side], IS[s, I_CREC0 + side]


@njit(cache=True, nogil=True)
def _propagate(IS, FS, R, rfree, ctr, s, eps, stack):
    """Let the combination slot s currently tests improve s, then its ancestors.
    Returns True when the root improved."""
    x = s
    zero = s - s
    while x >= 0:
        v0, r0 = _child_value(IS, FS, x, zero)
        v1, r1 = _child_value(IS, FS, x, zero + 1)
        v = v0 + v1
        if not v < FS[x, F_BEST] - eps:
            return False
        r = _rec_new(R, rfree, ctr, IS[x, I_FEAT], r0, r1)
        _rec_release(R, rfree, ctr, IS[x, I_REC], stack)
        IS[x, I_REC] = r
        FS[x, F_BEST] = v
        x = IS[x, I_PAR]
    return True


@njit(cache=True, nogil=True)
def _bound_witness(IS, FS, s, eps, shared, margin):
    """The nearest ancestor that slot s can no longer improve, or -1 (Section 4.2).

    Sums, going up, the exact errors of finished siblings (their lower bound `lb`
    otherwise) and the lb of s; an ancestor whose best is not above the sum cannot be
    improved by any subtree of s while the tests in between stand.  The root counts
    as improved only below the key threads share, less the task's margin, too (see
    `blossom_search`).
    """
    acc = FS[s, F_BOUND]
    x = s
    while IS[x, I_PAR] >= 0:
        p = IS[x, I_PAR]
        other = 1 - IS[x, I_SIDE]
        c = IS[p, I_CH0 + other]
        if c >= 0:
            if IS[c, I_FIN] != 0 and IS[c, I_EXACT] != 0:
                acc += FS[c, F_BEST]
            else:
                acc += FS[c, F_BOUND]
        else:
            acc += FS[p, F_CVAL0 + other]
        best = FS[p, F_BEST]
        if IS[p, I_PAR] < 0:
            best = min(best, shared[0] - margin)
        if acc >= best - eps:
            return p
        x = p
    return -1


@njit(cache=True, nogil=True)
def _share(best, margin, shared):
    """Tell the other threads of the root's new best: lower the key they share to
    best + margin (racy but sound: always a real tree's error plus a margin; see
    `engine.solvers.root_tasks`)."""
    shared[0] = min(shared[0], best + margin)


@njit(cache=True, nogil=True)
def _prune(IS, s, p):
    """Finish slot s under witness p: s and the slots between them become inexact."""
    x = s
    while x != p:
        IS[x, I_TAINT] = 1
        x = IS[x, I_PAR]
    IS[s, I_FIN] = 1
    IS[s, I_EXACT] = 0


@njit(cache=True, nogil=True)
def _grow_slots(IS, FS, DOM, CNT, sfree, nsfree, queue, qhead, qlen, seq, nseq, new_cap):
    """The slot pool with room for new_cap slots (the queue starts at 0 again)."""
    cap = IS.shape[0]
    IS2 = np.zeros((new_cap, IS.shape[1]), dtype=IS.dtype)
    ks.copy_prefix(IS2.reshape(-1), IS.reshape(-1), IS.size)
    FS2 = np.zeros((new_cap, FS.shape[1]), dtype=FS.dtype)
    ks.copy_prefix(FS2.reshape(-1), FS.reshape(-1), FS.size)
    DOM2 = np.zeros((new_cap, DOM.shape[1]), dtype=DOM.dtype)
    ks.copy_prefix(DOM2.reshape(-1), DOM.reshape(-1), DOM.size)
    CNT2 = np.zeros((new_cap, CNT.shape[1], CNT.shape[2]), dtype=CNT.dtype)
    ks.copy_prefix(CNT2.reshape(-1), CNT.reshape(-1), CNT.size)
    sfree2 = np.empty(new_cap, dtype=np.int64)
    ks.copy_prefix(sfree2, sfree, nsfree)
    for j in range(new_cap - 1, cap - 1, -1):
        sfree2[nsfree] = j
        nsfree += 1
    queue2 = np.empty(new_cap, dtype=np.int64)
    for j in range(qlen):
        queue2[j] = queue[(qhead + j) % cap]
    seq2 = np.empty(new_cap, dtype=np.int64)
    ks.copy_prefix(seq2, seq, nseq)
    return IS2, FS2, DOM2, CNT2, sfree2, nsfree, queue2, seq2


@njit(cache=True, nogil=True)
def _grow_records(R, rfree, ctr, new_r):
    old = R.shape[0]
    R2 = np.zeros((new_r, 4), dtype=np.int64)
    ks.copy_prefix(R2.reshape(-1), R.reshape(-1), R.size)
    rfree2 = np.empty(new_r, dtype=np.int64)
    ks.copy_prefix(rfree2, rfree, ctr[0])
    for j in range(new_r - 1, old - 1, -1):
        rfree2[ctr[0]] = j
        ctr[0] += 1
    return R2, rfree2


@njit(cache=True, nogil=True)
def _path_key(IS, s, key):
    """Write the literals (2 * feature + side) of the tests on the path to slot s into
    key; returns how many (its depth)."""
    n = s - s
    x = s
    while IS[x, I_PAR] >= 0:
        p = IS[x, I_PAR]
        key[n] = 2 * IS[p, I_FEAT] + IS[x, I_SIDE]
        n += 1
        x = p
    return n


@njit(cache=True, nogil=True)
def _similar_bound(IS, cq, dom, q, acc, floor, key, pkey, hashes, lits, vals, table, eps,
                   pen):
    """Lower bound of the branch c of depth D-2 being created below slot q (counts acc)
    from the cached exact results of q's children under the features q tried before
    (the similarity bound of MurTree): such a branch c' has the same depth left and
    opt(c) >= opt(c') - weight(c' minus c), c' minus c being the rows of q on c''s side
    of its feature that are not in c (c's optimal tree on c' errs at most that much
    more, with as many leaves, so it holds with a cost per leaf too: values are
    objectives).  A branch c' whose leaf (error + pen, an upper bound of opt(c'))
    cannot beat the bound so far (at first `floor`) is not looked up.
    Returns the bound, `floor` if none is higher."""
    K = acc.shape[0]
    F = acc.shape[1] - 1
    n = _path_key(IS, q, pkey)
    best = floor
    for t in range(IS[q, I_DPTR] - 1):
        h = np.int64(dom[t])
        for v in range(2):
            Wp = 0.0   # weight of c'
            mp = 0.0   # its heaviest class
            Wc = 0.0   # weight of c on that side of h
            for k in range(K):
                if v == 1:
                    wk = 1.0 * cq[k, h]
                    Wc += acc[k, h]
                else:
                    wk = 1.0 * (cq[k, F] - cq[k, h])
                    Wc += acc[k, F] - acc[k, h]
                Wp += wk
                mp = max(mp, wk)
            apart = Wp - Wc
            if Wp - mp + pen - apart - eps <= best:
                continue
            for j in range(n):
                key[j] = pkey[j]
            key[n] = 2 * h + v
            hh = key_of(key, n + 1)
            e = cache_find(hashes, lits, table, hh, key, n + 1)
            if e >= 0:
                best = max(best, vals[e] - apart - eps)
    return best


@njit(cache=True, nogil=True)
def _cached_record(R, rfree, ctr, tree):
    """A new record (one reference) for the inline subtree of a cache entry."""
    g = np.int64(tree[0])
    leaf = g - g + LEAF
    if g < 0:
        return leaf
    r0 = leaf
    if tree[1] >= 0:
        r0 = _rec_new(R, rfree, ctr, np.int64(tree[1]), leaf, leaf)
    r1 = leaf
    if tree[2] >= 0:
        r1 = _rec_new(R, rfree, ctr, np.int64(tree[2]), leaf, leaf)
    r = _rec_new(R, rfree, ctr, g, r0, r1)
    if r0 != LEAF:
        R[r0, R_REF] -= 1
    if r1 != LEAF:
        R[r1, R_REF] -= 1
    return r


@njit(cache=True, nogil=True)
def _cache_store(IS, FS, R, s, key, hashes, lits, vals, trees, table, meta, other_bytes,
                 memory_budget):
    """Store the exact result of slot s (depth D-2) in the cache, growing it while the
    budget allows (else emptying it).  Returns the cache's arrays."""
    if meta[M_COUNT] >= hashes.shape[0]:
        cap = hashes.shape[0]
        if (2 * cap <= CACHE_MAX and
                other_bytes + cache_bytes(2 * cap, lits.shape[1]) <= memory_budget):
            hashes, lits, vals, trees, table = cache_grow(hashes, lits, vals, trees,
                                                          table, meta)
        else:
            hashes, lits, vals, trees, table = cache_new(cap, lits.shape[1])
            cache_clear(table, meta)
    n = _path_key(IS, s, key)
    h = key_of(key, n)
    r = IS[s, I_REC]
    g = r - r - 1
    g0 = g
    g1 = g
    if r != LEAF:
        g = R[r, R_FEAT]
        if R[r, R_LEFT] != LEAF:
            g0 = R[R[r, R_LEFT], R_FEAT]
        if R[r, R_RIGHT] != LEAF:
            g1 = R[R[r, R_RIGHT], R_FEAT]
    cache_put(hashes, lits, vals, trees, table, meta, h, key, n, FS[s, F_BEST], g, g0, g1)
    return hashes, lits, vals, trees, table


@njit(cache=True, nogil=True)
def blossom_search(X, Xt, y, w, lbw, n_classes, max_depth, exact, eps, penalty, least,
                   use_bound, use_cache, Xg, Vg, fmap, offset, global_lb, interval, slot_bound,
                   memory_budget, root_position, shared, margin, goal, control, state,
                   events, nodes, thresholds, values, cache):
    """Optimal tree of depth <= max_depth on binary rows X (see the module docstring).

    X: uint8[n, F] 0/1 (row-major), Xt: its transpose (contiguous), y: int64[n] in
    [0, n_classes), w: float64[n] > 0, lbw: float64[n] lower-bound weight of each row
    (summing over any union of whole groups of identical rows to their unavoidable
    error), exact: all weights are integers (counts are exact), eps: tolerance of
    comparisons (0 with exact weights and no penalty), penalty: the cost of each leaf
    in weight units (float64, 0: the error alone; see "A cost per leaf"), least: the
    least weight of a leaf (float64, 0.0: none; see "A least leaf weight"; the
    weights must then be the data's), use_bound: the ancestor lower bound,
    use_cache: the cache of branches of depth D-2 (see the module docstring).
    Xg, Vg: distinct rows and their original class weights (to fill published class
    weights), fmap: original index of each column of X, offset: error removed by the
    caller's preprocessing (added to published errors), global_lb: lower bound
    published with incumbents, interval: least seconds between two published trees,
    slot_bound: most slots ever needed, memory_budget: bytes the slot and record pools
    may take (else STOP_MEMORY).
    control / state, events, nodes, thresholds, values: Monitor and IncumbentSink.

    Threads (see `parallel`; depth >= 3): with root_position >= 0 the root tests
    only the feature at that position of its order (none past the last; statistics
    ST_ROOT_CANDIDATES counts them).  The ancestor bound at the root also uses
    shared[0] - margin, shared[0] being the key every thread lowers to best + margin
    when its root improves (see `engine.solvers.root_tasks`); the search ends at the
    first tree of error `goal` (an optimum known already).  One thread:
    root_position = -1, shared[0] = inf, margin = 0, goal = -inf.

    cache: the table of solved branches (`cache.empty(max_depth, use_cache)`, or the
    one a previous call returned, for the same data and depth).

    Returns (feature, threshold, left, right, value) of the best tree (preorder,
    original feature indices), its objective on (X, y, w) (error + penalty x
    leaves; published values add `offset`), whether it is proven
    optimal, statistics (float64[N_STATS]) and the cache (grown, or emptied).
    """
    hashes, lits, vals, trees, table, cmeta = cache
    n_lits = lits.shape[1]
    look0 = cmeta[M_LOOKUPS]
    hits0 = cmeta[M_HITS]
    stores0 = cmeta[M_STORES]
    clears0 = cmeta[M_CLEARS]
    similar0 = cmeta[M_SIMILAR]
    n, F = X.shape
    zero = n - n  # an int64 that numba does not treat as a literal (one specialisation)
    leaf_rec = zero + LEAF
    K = n_classes
    D = max_depth
    stats = np.zeros(N_STATS)
    stats[ST_FIRST_TREE_T] = -1.0
    cap_nodes = nodes.shape[1]
    of, othr, ol, orr, oval, ored, tstack = tree_buffers(cap_nodes, K, D)
    noflip = np.zeros(Xg.shape[1], dtype=np.uint8)
    rstack = np.zeros(4 * D + 16, dtype=np.int64)

    # Records: row 0 is the leaf and is never freed.
    rcap = 1024
    R = np.zeros((rcap, 4), dtype=np.int64)
    rfree = np.empty(rcap, dtype=np.int64)
    ctr = np.zeros(1, dtype=np.int64)
    for j in range(rcap - 1, 0, -1):
        rfree[ctr[0]] = j
        ctr[0] += 1

    rows = np.arange(n)
    root_acc = np.zeros((K, F + 1), dtype=w.dtype)
    root_lb, aborted = _scan(X, y, w, lbw, rows, zero, n, root_acc, control)
    root_err = _leaf_error(root_acc, F)
    root_val = root_err + penalty
    root_rec = leaf_rec
    optimal = False
    stopped = aborted

    # Nothing is published before the first complete dive (every bud of the first tree
    # expanded, as fast as a greedy tree) unless it takes longer than FIRST_PATIENCE.
    published_at = ks.monotonic()
    last_publish = published_at
    last_value = np.inf
    # Assembling a tree routes every distinct row: keep that under ~10% of the time.
    gap = interval

    dom_scores = np.empty(F)
    dom_idx = np.empty(F, dtype=np.int64)
    if aborted:
        pass
    elif D == 0 or root_err <= root_lb + penalty + eps:
        optimal = True
    elif D == 1:
        v, g = _last_level(root_acc, F, eps, exact, penalty, least)
        stats[ST_LAST_LEVEL] += 1
        if g >= 0:
            root_rec = _rec_new(R, rfree, ctr, g, leaf_rec, leaf_rec)
            root_val = v
        optimal = True
    else:
        # ------------------------------------------------------------ slot pool
        cap = min(slot_bound, 64)
        IS = np.zeros((cap, N_I), dtype=np.int64)
        FS = np.zeros((cap, N_F))
        DOM = np.zeros((cap, F), dtype=np.int32)
        CNT = np.zeros((cap, K, F + 1), dtype=w.dtype)
        sfree = np.empty(cap, dtype=np.int64)
        nsfree = 0
        for j in range(cap - 1, -1, -1):
            sfree[nsfree] = j
            nsfree += 1
        queue = np.empty(cap, dtype=np.int64)
        qhead = 0
        qlen = 0
        seq = np.empty(cap, dtype=np.int64)
        nseq = 0
        tmp = np.zeros((2, K, F + 1), dtype=w.dtype)
        tlb = np.zeros(2)
        buf = np.empty(n, dtype=np.int64)
        slot_bytes = 8 * (N_I + N_F + K * (F + 1) + 3) + 4 * F
        # ------------------------------------------------------------ the cache
        caching = use_cache and D >= 3 and n_lits >= D - 2
        key = np.zeros(D + 1, dtype=np.int64)
        pkey = np.zeros(D + 1, dtype=np.int64)
        stats[ST_SLOT_CAPACITY] = cap
        stats[ST_RECORD_CAPACITY] = rcap

        root = -1
        dom_tmp = np.empty(F, dtype=np.int32)
        m0 = _order(root_acc, F, dom_tmp, dom_scores, dom_idx, Xt, rows, zero, n, least)
        stats[ST_ROOT_CANDIDATES] = m0
        if root_position >= 0:   # one feature of the root's order
            if root_position < m0:
                dom_tmp[0] = dom_tmp[root_position]
                m0 = 1
            else:
                m0 = 0
        root_bound = _bound(root_err, root_lb, penalty)
        root_floor = max(root_bound, goal)
        if m0 == 0:
            optimal = True
        else:
            nsfree -= 1
            root = sfree[nsfree]
            IS[root, :] = 0
            IS[root, I_PAR] = -1
            IS[root, I_END] = n
            IS[root, I_FEAT] = -1
            IS[root, I_REC] = LEAF
            IS[root, I_DLEN] = m0
            IS[root, I_CH0] = -1
            IS[root, I_CH1] = -1
            FS[root, F_BEST] = root_val
            FS[root, F_LB] = root_lb
            FS[root, F_BOUND] = root_bound
            ks.copy_prefix(DOM[root], dom_tmp, m0)
            ks.copy_prefix(CNT[root].reshape(-1), root_acc.reshape(-1), root_acc.size)
            queue[0] = root
            qlen = 1
            stats[ST_PEAK_SLOTS] = 1

        pending = False
        dived = False
        while root >= 0:
            if FS[root, F_BEST] <= root_floor + eps:
                optimal = True
                break
            if ks.should_stop(control):
                stopped = True
                break
            if pending and ks.monotonic() - last_publish >= gap and (
                    dived or ks.elapsed(control) >= FIRST_PATIENCE):
                published_at = ks.monotonic()
                publish_record_tree(IS[root, I_REC], FS[root, F_BEST] + offset, global_lb, R,
                                    fmap, noflip, Xg, Vg, of, othr, ol, orr, oval, ored,
                                    tstack, control, state, events, nodes, thresholds,
                                    values)
                stats[ST_PUBLISHED] += 1
                last_publish = ks.monotonic()
                gap = max(interval, 10.0 * (last_publish - published_at))
                last_value = FS[root, F_BEST]
                pending = False
            # ---- capacity: each step takes at most two slots and a path of records
            if nsfree < 2:
                new_cap = min(2 * cap, max(slot_bound, cap + 2))
                need = new_cap * slot_bytes + R.shape[0] * 40
                if need + cache_bytes(hashes.shape[0], n_lits) > memory_budget and (
                        hashes.shape[0] > CACHE_INIT):
                    # the cache gives way to the search
                    hashes, lits, vals, trees, table = cache_new(CACHE_INIT, n_lits)
                    cache_clear(table, cmeta)
                if need + cache_bytes(hashes.shape[0], n_lits) > memory_budget:
                    control[ks.C_STOP] = ks.STOP_MEMORY
                    stopped = True
                    break
                IS, FS, DOM, CNT, sfree, nsfree, queue, seq = _grow_slots(
                    IS, FS, DOM, CNT, sfree, nsfree, queue, qhead, qlen, seq, nseq, new_cap)
                qhead = 0
                cap = new_cap
                stats[ST_SLOT_CAPACITY] = cap
            if ctr[0] < 2 * D + 8:
                old = R.shape[0]
                new_r = 2 * old
                need = cap * slot_bytes + new_r * 40
                if need + cache_bytes(hashes.shape[0], n_lits) > memory_budget and (
                        hashes.shape[0] > CACHE_INIT):
                    hashes, lits, vals, trees, table = cache_new(CACHE_INIT, n_lits)
                    cache_clear(table, cmeta)
                if need + cache_bytes(hashes.shape[0], n_lits) > memory_budget:
                    control[ks.C_STOP] = ks.STOP_MEMORY
                    stopped = True
                    break
                R, rfree = _grow_records(R, rfree, ctr, new_r)
                stats[ST_RECORD_CAPACITY] = new_r

            if qlen > 0:
                # ------------------------------------------------ expand the first bud
                s = queue[qhead]
                qhead = (qhead + 1) % cap
                qlen -= 1
                if use_bound and IS[s, I_DPTR] == 0:
                    p = _bound_witness(IS, FS, s, eps, shared, margin)
                    if p >= 0:
                        stats[ST_PRUNED] += 1
                        _prune(IS, s, p)
                        continue
                if IS[s, I_DLEN] < 0:
                    IS[s, I_DLEN] = _order(CNT[s], F, DOM[s], dom_scores, dom_idx, Xt, rows,
                                           IS[s, I_START], IS[s, I_END], least)
                    if IS[s, I_DLEN] == 0:   # no feature splits its rows: a leaf
                        IS[s, I_FIN] = 1
                        IS[s, I_EXACT] = 1
                        if caching and IS[s, I_DEP] == D - 2:
                            hashes, lits, vals, trees, table = _cache_store(
                                IS, FS, R, s, key, hashes, lits, vals, trees, table, cmeta,
                                cap * slot_bytes + R.shape[0] * 40, memory_budget)
                        continue
                g = np.int64(DOM[s, IS[s, I_DPTR]])
                IS[s, I_DPTR] += 1
                IS[s, I_FEAT] = g
                seq[nseq] = s
                nseq += 1
                stats[ST_EXPANSIONS] += 1
                a = IS[s, I_START]
                b = IS[s, I_END]
                if IS[s, I_DEP] == D - 2:   # children solved at once: rows stay
                    mid, aborted = _side_counts(X, Xt, y, w, lbw, rows, a, b, g, CNT[s],
                                                FS[s, F_LB], tmp, tlb, exact, buf, control)
                else:
                    mid, aborted = _split_counts(X, Xt, y, w, lbw, rows, a, b, g, CNT[s],
                                                 FS[s, F_LB], tmp, tlb, exact, control)
                if aborted:
                    stopped = True
                    break
                depth = IS[s, I_DEP] + 1
                for side in range(2):
                    acc = tmp[side]
                    IS[s, I_CH0 + side] = -1
                    IS[s, I_CREC0 + side] = LEAF
                    if depth == D - 1:
                        v, gg = _solve_last(acc, F, tlb[side], eps, exact, penalty, least)
                        stats[ST_LAST_LEVEL] += 1
                        FS[s, F_CVAL0 + side] = v
                        if gg >= 0:
                            IS[s, I_CREC0 + side] = _rec_new(R, rfree, ctr, gg, leaf_rec,
                                                             leaf_rec)
                        continue
                    err = _leaf_error(acc, F)
                    leaf = err + penalty
                    FS[s, F_CVAL0 + side] = leaf
                    if err <= tlb[side] + penalty + eps:   # the leaf is optimal
                        continue
                    if least > 0.0 and _weight(acc, F) < 2.0 * least:   # no split
                        continue
                    if caching and depth == D - 2:
                        nk = _path_key(IS, s, key)
                        key[nk] = 2 * g + side
                        h = key_of(key, nk + 1)
                        cmeta[M_LOOKUPS] += 1
                        e = cache_find(hashes, lits, table, h, key, nk + 1)
                        if e >= 0:
                            cmeta[M_HITS] += 1
                            FS[s, F_CVAL0 + side] = vals[e]
                            IS[s, I_CREC0 + side] = _cached_record(R, rfree, ctr, trees[e])
                            continue
                    nsfree -= 1
                    c = sfree[nsfree]
                    used = cap - nsfree
                    stats[ST_PEAK_SLOTS] = max(stats[ST_PEAK_SLOTS], used)
                    IS[c, :] = 0
                    IS[c, I_PAR] = s
                    IS[c, I_SIDE] = side
                    IS[c, I_DEP] = depth
                    IS[c, I_START] = a if side == 0 else mid
                    IS[c, I_END] = mid if side == 0 else b
                    IS[c, I_FEAT] = -1
                    IS[c, I_REC] = LEAF
                    IS[c, I_DLEN] = -1   # features ordered when first expanded
                    IS[c, I_CH0] = -1
                    IS[c, I_CH1] = -1
                    FS[c, F_BEST] = leaf
                    FS[c, F_LB] = tlb[side]
                    bound = _bound(err, tlb[side], penalty)
                    FS[c, F_BOUND] = bound
                    if caching and depth == D - 2 and least == 0.0:
                        sim = _similar_bound(IS, CNT[s], DOM[s], s, acc, bound, key,
                                             pkey, hashes, lits, vals, table, eps, penalty)
                        if sim > bound:
                            FS[c, F_BOUND] = sim
                            cmeta[M_SIMILAR] += 1
                            if leaf <= sim + eps:   # the leaf is optimal: no slot
                                sfree[nsfree] = c
                                nsfree += 1
                                continue
                    ks.copy_prefix(CNT[c].reshape(-1), acc.reshape(-1), acc.size)
                    IS[s, I_CH0 + side] = c
                    queue[(qhead + qlen) % cap] = c
                    qlen += 1
                if _propagate(IS, FS, R, rfree, ctr, s, eps, rstack):
                    stats[ST_IMPROVEMENTS] += 1
                    pending = True
                    _share(FS[root, F_BEST], margin, shared)
            else:
                # ------------------------------------------------ backtrack
                if not dived:
                    dived = True
                    stats[ST_FIRST_TREE_T] = ks.elapsed(control)
                    stats[ST_FIRST_TREE_ERR] = FS[root, F_BEST]
                    if FS[root, F_BEST] < last_value:
                        published_at = ks.monotonic()
                        publish_record_tree(IS[root, I_REC], FS[root, F_BEST] + offset,
                                            global_lb, R, fmap, noflip, Xg, Vg, of, othr,
                                            ol, orr, oval, ored, tstack, control, state,
                                            events, nodes, thresholds, values)
                        stats[ST_PUBLISHED] += 1
                        last_publish = ks.monotonic()
                        gap = max(interval, 10.0 * (last_publish - published_at))
                        last_value = FS[root, F_BEST]
                        pending = False
                if nseq == 0:
                    optimal = True
                    break
                nseq -= 1
                s = seq[nseq]
                stats[ST_BACKTRACKS] += 1
                for side in range(2):
                    c = IS[s, I_CH0 + side]
                    if c >= 0:
                        _rec_release(R, rfree, ctr, IS[c, I_REC], rstack)
                        sfree[nsfree] = c
                        nsfree += 1
                        IS[s, I_CH0 + side] = -1
                    else:
                        _rec_release(R, rfree, ctr, IS[s, I_CREC0 + side], rstack)
                        IS[s, I_CREC0 + side] = LEAF
                if FS[s, F_BEST] <= FS[s, F_BOUND] + eps or IS[s, I_DPTR] >= IS[s, I_DLEN]:
                    IS[s, I_FIN] = 1
                    IS[s, I_EXACT] = 1
                    if not FS[s, F_BEST] <= FS[s, F_BOUND] + eps:
                        IS[s, I_EXACT] = 1 - IS[s, I_TAINT]
                    if caching and IS[s, I_EXACT] != 0 and IS[s, I_DEP] == D - 2:
                        hashes, lits, vals, trees, table = _cache_store(
                            IS, FS, R, s, key, hashes, lits, vals, trees, table, cmeta,
                            cap * slot_bytes + R.shape[0] * 40, memory_budget)
                elif IS[s, I_DEP] < D - 2:
                    p = _bound_witness(IS, FS, s, eps, shared, margin) if use_bound else -1
                    if p >= 0:
                        stats[ST_PRUNED] += 1
                        _prune(IS, s, p)
                    else:
                        queue[(qhead + qlen) % cap] = s
                        qlen += 1
                else:
                    # A branch of depth D-2: its children are solved at once, so going
                    # through the buds for each of its features (expand, pop, put back)
                    # comes down to this loop, in the same order with the same checks.
                    a = IS[s, I_START]
                    b = IS[s, I_END]
                    while True:
                        if use_bound:
                            p = _bound_witness(IS, FS, s, eps, shared, margin)
                            if p >= 0:
                                stats[ST_PRUNED] += 1
                                _prune(IS, s, p)
                                break
                        if IS[s, I_DPTR] >= IS[s, I_DLEN]:
                            IS[s, I_FIN] = 1
                            IS[s, I_EXACT] = 1 - IS[s, I_TAINT]
                            if caching and IS[s, I_EXACT] != 0:
                                hashes, lits, vals, trees, table = _cache_store(
                                    IS, FS, R, s, key, hashes, lits, vals, trees, table,
                                    cmeta, cap * slot_bytes + R.shape[0] * 40,
                                    memory_budget)
                            break
                        if ks.should_stop(control):
                            stopped = True
                            break
                        g = np.int64(DOM[s, IS[s, I_DPTR]])
                        IS[s, I_DPTR] += 1
                        IS[s, I_FEAT] = g
                        stats[ST_EXPANSIONS] += 1
                        stats[ST_BACKTRACKS] += 1
                        stats[ST_LAST_LEVEL] += 2
                        if K == 2 and exact:
                            # the usual case: the two least objectives do not improve s
                            side, lbs, aborted = _lighter_side(
                                X, Xt, y, w, lbw, rows, a, b, g, CNT[s], tmp, buf, control)
                            if aborted:
                                stopped = True
                                break
                            ls, lo = _least_pair2(tmp[side], CNT[s], F, penalty, least)
                            if not ls + lo < FS[s, F_BEST] - eps:
                                continue
                            _other_side(tmp, tlb, side, CNT[s], FS[s, F_LB], tmp[side], lbs)
                        else:
                            mid, aborted = _side_counts(
                                X, Xt, y, w, lbw, rows, a, b, g, CNT[s], FS[s, F_LB], tmp,
                                tlb, exact, buf, control)
                            if aborted:
                                stopped = True
                                break
                        v0, g0 = _solve_last(tmp[0], F, tlb[0], eps, exact, penalty, least)
                        v1, g1 = _solve_last(tmp[1], F, tlb[1], eps, exact, penalty, least)
                        if not v0 + v1 < FS[s, F_BEST] - eps:
                            continue
                        r0 = leaf_rec
                        if g0 >= 0:
                            r0 = _rec_new(R, rfree, ctr, g0, leaf_rec, leaf_rec)
                        r1 = leaf_rec
                        if g1 >= 0:
                            r1 = _rec_new(R, rfree, ctr, g1, leaf_rec, leaf_rec)
                        r = _rec_new(R, rfree, ctr, g, r0, r1)
                        if r0 != LEAF:
                            R[r0, R_REF] -= 1
                        if r1 != LEAF:
                            R[r1, R_REF] -= 1
                        _rec_release(R, rfree, ctr, IS[s, I_REC], rstack)
                        IS[s, I_REC] = r
                        FS[s, F_BEST] = v0 + v1
                        if s == root or _propagate(IS, FS, R, rfree, ctr, IS[s, I_PAR], eps,
                                                   rstack):
                            stats[ST_IMPROVEMENTS] += 1
                            pending = True
                            _share(FS[root, F_BEST], margin, shared)
                            if FS[root, F_BEST] <= root_floor + eps:
                                optimal = True
                                break
                            if ks.monotonic() - last_publish >= gap:
                                published_at = ks.monotonic()
                                publish_record_tree(IS[root, I_REC],
                                                    FS[root, F_BEST] + offset, global_lb,
                                                    R, fmap, noflip, Xg, Vg, of, othr, ol,
                                                    orr, oval, ored, tstack, control, state,
                                                    events, nodes, thresholds, values)
                                stats[ST_PUBLISHED] += 1
                                last_publish = ks.monotonic()
                                gap = max(interval, 10.0 * (last_publish - published_at))
                                last_value = FS[root, F_BEST]
                                pending = False
                        if FS[s, F_BEST] <= FS[s, F_BOUND] + eps:
                            IS[s, I_FIN] = 1
                            IS[s, I_EXACT] = 1
                            if caching:
                                hashes, lits, vals, trees, table = _cache_store(
                                    IS, FS, R, s, key, hashes, lits, vals, trees, table,
                                    cmeta, cap * slot_bytes + R.shape[0] * 40,
                                    memory_budget)
                            break
                        if ctr[0] < 2 * D + 8:
                            # records run short: put s back so the main loop grows them
                            queue[(qhead + qlen) % cap] = s
                            qlen += 1
                            break
                    if stopped or optimal:
                        break
            used_r = R.shape[0] - ctr[0]
            stats[ST_PEAK_RECORDS] = max(stats[ST_PEAK_RECORDS], used_r)

        stats[ST_CACHE_LOOKUPS] = cmeta[M_LOOKUPS] - look0
        stats[ST_CACHE_HITS] = cmeta[M_HITS] - hits0
        stats[ST_CACHE_STORES] = cmeta[M_STORES] - stores0
        stats[ST_CACHE_ENTRIES] = cmeta[M_PEAK]
        stats[ST_CACHE_CLEARS] = cmeta[M_CLEARS] - clears0
        stats[ST_SIMILAR] = cmeta[M_SIMILAR] - similar0
        if root >= 0:
            root_val = FS[root, F_BEST]
            root_rec = IS[root, I_REC]
        if stopped:
            optimal = False
        if stats[ST_FIRST_TREE_T] < 0.0:
            stats[ST_FIRST_TREE_T] = ks.elapsed(control)
            stats[ST_FIRST_TREE_ERR] = root_val

    m = assemble_tree(root_rec, R, fmap, noflip, Xg, Vg, of, othr, ol, orr, oval, ored,
                      tstack)
    if root_val < last_value:
        ks.publish(state, events, nodes, thresholds, values, control, root_val + offset,
                   global_lb, of, othr, ol, orr, oval, m)
        stats[ST_PUBLISHED] += 1
    return (of[:m].astype(np.int32), othr[:m].copy(), ol[:m].astype(np.int32),
            orr[:m].astype(np.int32), oval[:m].copy(), root_val, optimal, stats,
            (hashes, lits, vals, trees, table, cmeta))
