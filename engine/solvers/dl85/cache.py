"""The cache of solved branches and the tree records of `dl85` / `cadl85` (numba).

Branches
--------
A branch is an itemset: the set of literals (feature, value) on the path from the
root.  Its key is a 128-bit Zobrist hash: two random 64-bit words per literal
(`zobrist_table`), XOR-ed together, so every order of the same tests gives the same
key (DL8.5's trie, without the trie).  Two different branches collide with
probability about 2^-128 per pair; a collision is not detected.

The table is open addressing with linear probing over `slots` (a power of two, at
most half full) that hold indices into dense entry arrays:

    keys[e]  = (hi, lo)
    vals[e]  = (error, lower bound, upper bound used, rule budget)
    ints[e]  = (record, flags, iteration, last use, last store)

`error` is the least error of a tree found for the branch (inf: none below the upper
bound used), `record` that tree, `flags` EXACT (the search below the branch was
complete: the error is optimal, or no tree beats the upper bound used, whence the
lower bound) and FOUND.  Iteration and budget say under which relaxation of a CA
rule an inexact entry was computed (see `kernel`).

Threads (`parallel`) keep one cache each and pass each other lower bounds only: a
thread exports the (key, bound) of the exact entries it stored since its last export
(`cache_export`: the optimal error of a solved branch, or the bound below which it
has no tree) and another adds them to its own (`cache_absorb`) as entries that hold
a bound and no tree.  A branch whose optimum another thread found is then either
pruned by that bound or searched only up to its first tree of that error (no proof
left), and its tree is the same: the first, in the search order, of that error.

Memory
------
Entries (`ENTRY_BYTES` each, slots included) and records (`RECORD_BYTES`) grow by
doubling while they fit in the budget.  When the table would not fit, the least
recently used half of the entries is evicted (`cache_evict`): no search frame points
into the table, so losing an entry only costs recomputation.  Records (subtrees)
referenced by the surviving entries and by the search frames stay alive.

Records
-------
A subtree is an immutable record (feature, left record, right record) with a
reference count; record 0 is a leaf (the class is decided when the tree is
assembled by routing the training rows through it).  Features are the kernel's
internal indices (see `dl85.Problem`).
"""

import numpy as np
from numba import njit

from engine.solvers import kernel_support as ks
from engine.solvers.record_trees import LEAF  # record 0 is the leaf, as in blossom

NONE = -1

# vals fields
V_ERR, V_LB, V_UB, V_BUDGET = 0, 1, 2, 3
# ints fields
I_REC, I_FLAGS, I_ITER, I_STAMP, I_SAVED = 0, 1, 2, 3, 4
N_INTS = 5
FLAG_EXACT = 1
FLAG_FOUND = 2
# meta fields
M_COUNT, M_CLOCK, M_EVICTIONS, M_EVICTED, M_PEAK = 0, 1, 2, 3, 4
N_META = 5
# record meta fields
RM_FREE, RM_PEAK = 0, 1

# bytes per entry: keys 16 + vals 32 + ints 40 + two slots of 8
ENTRY_BYTES = 16 + 32 + 8 * N_INTS + 16
# bytes per record: three fields, a reference count, a free-list slot (int64 each)
RECORD_BYTES = 5 * 8


def zobrist_table(n_features: int, seed: int = 0x5EEDD185) -> np.ndarray:
    """Random (hi, lo) words for the literals 2g (feature g = 0) and 2g + 1 (g = 1)."""
    rows = 2 * max(n_features, 1)
    rng = np.random.default_rng(seed)
    return np.frombuffer(rng.bytes(16 * rows), dtype=np.uint64).reshape(rows, 2).copy()


def empty(capacity: int = 4096) -> tuple:
    """An empty cache and records, as the kernel takes them."""
    return (*cache_new(capacity), *records_new(capacity))


# ------------------------------------------------------------------------ table
@njit(cache=True, nogil=True)
def cache_new(capacity):
    """Empty table for `capacity` entries (a power of two)."""
    keys = np.zeros((capacity, 2), dtype=np.uint64)
    vals = np.zeros((capacity, 4))
    ints = np.zeros((capacity, N_INTS), dtype=np.int64)
    slots = np.full(2 * capacity, -1, dtype=np.int64)
    meta = np.zeros(N_META, dtype=np.int64)
    return keys, vals, ints, slots, meta


@njit(cache=True, nogil=True)
def cache_find(keys, slots, hi, lo):
    """Entry of key (hi, lo), or -1."""
    mask = slots.shape[0] - 1
    i = np.int64(lo & np.uint64(mask))
    while True:
        e = slots[i]
        if e < 0:
            return e
        if keys[e, 1] == lo and keys[e, 0] == hi:
            return e
        i = (i + 1) & mask


@njit(cache=True, nogil=True)
def _slot_insert(slots, lo, e):
    mask = slots.shape[0] - 1
    i = np.int64(lo & np.uint64(mask))
    while slots[i] >= 0:
        i = (i + 1) & mask
    slots[i] = e


@njit(cache=True, nogil=True)
def _new_entry(keys, slots, meta, hi, lo):
    """A new entry for key (hi, lo), in the table (which must have room for it)."""
    e = meta[M_COUNT]
    meta[M_COUNT] += 1
    meta[M_PEAK] = max(meta[M_PEAK], meta[M_COUNT])
    keys[e, 0] = hi
    keys[e, 1] = lo
    _slot_insert(slots, lo, e)
    return e


@njit(cache=True, nogil=True)
def cache_touch(ints, meta, e):
    meta[M_CLOCK] += 1
    ints[e, I_STAMP] = meta[M_CLOCK]


@njit(cache=True, nogil=True)
def cache_store(keys, vals, ints, slots, meta, hi, lo, err, lb, ub, budget, rec, flags,
                iteration, R, RC, rfree, rmeta, stack):
    """Record the outcome of a branch (the table must have room for one entry).

    The entry takes its own reference to `rec`.  An entry already present is
    overwritten, but a lower bound it proved is kept.
    """
    e = cache_find(keys, slots, hi, lo)
    if e < 0:
        e = _new_entry(keys, slots, meta, hi, lo)
        vals[e, V_LB] = 0.0
        ints[e, I_REC] = NONE
    else:
        if ints[e, I_REC] >= 0:
            rec_release(R, RC, rfree, rmeta, ints[e, I_REC], stack)
        lb = max(lb, vals[e, V_LB])
    vals[e, V_ERR] = err
    vals[e, V_LB] = lb
    vals[e, V_UB] = ub
    vals[e, V_BUDGET] = budget
    if rec >= 0 and rec != LEAF:
        RC[rec] += 1
    ints[e, I_REC] = rec
    ints[e, I_FLAGS] = flags
    ints[e, I_ITER] = iteration
    cache_touch(ints, meta, e)
    ints[e, I_SAVED] = meta[M_CLOCK]
    return e


@njit(cache=True, nogil=True)
def cache_grow(keys, vals, ints, slots, meta):
    """The table with twice the capacity (same entries)."""
    cap = keys.shape[0]
    n = meta[M_COUNT]
    keys2 = np.zeros((2 * cap, 2), dtype=np.uint64)
    vals2 = np.zeros((2 * cap, 4))
    ints2 = np.zeros((2 * cap, N_INTS), dtype=np.int64)
    keys2[:n] = keys[:n]
    vals2[:n] = vals[:n]
    ints2[:n] = ints[:n]
    slots2 = np.full(4 * cap, -1, dtype=np.int64)
    for e in range(n):
        _slot_insert(slots2, keys2[e, 1], e)
    return keys2, vals2, ints2, slots2


@njit(cache=True, nogil=True)
def cache_evict(keys, vals, ints, slots, meta, R, RC, rfree, rmeta, stack):
    """Drop the least recently used half of the entries (their subtrees are released
    unless something else holds them).  Returns how many were dropped."""
    n = meta[M_COUNT]
    if n == 0:
        return 0
    stamps = np.sort(ints[:n, I_STAMP])
    cut = stamps[n // 2]
    j = 0
    for e in range(n):
        if ints[e, I_STAMP] >= cut:
            if j != e:
                keys[j] = keys[e]
                vals[j] = vals[e]
                ints[j] = ints[e]
            j += 1
        elif ints[e, I_REC] >= 0:
            rec_release(R, RC, rfree, rmeta, ints[e, I_REC], stack)
    slots[:] = -1
    for e in range(j):
        _slot_insert(slots, keys[e, 1], e)
    meta[M_COUNT] = j
    meta[M_EVICTIONS] += 1
    meta[M_EVICTED] += n - j
    return n - j


@njit(cache=True, nogil=True)
def cache_export(keys, vals, ints, meta, since):
    """(keys, lower bounds) of the exact entries stored after clock `since`: the
    optimal error of a solved branch, else the bound it has no tree below."""
    n = meta[M_COUNT]
    count = 0
    for e in range(n):
        if ints[e, I_SAVED] > since and (ints[e, I_FLAGS] & FLAG_EXACT) != 0:
            count += 1
    out_keys = np.empty((count, 2), dtype=np.uint64)
    out_bounds = np.empty(count)
    j = 0
    for e in range(n):
        if ints[e, I_SAVED] > since and (ints[e, I_FLAGS] & FLAG_EXACT) != 0:
            out_keys[j] = keys[e]
            found = (ints[e, I_FLAGS] & FLAG_FOUND) != 0
            out_bounds[j] = vals[e, V_ERR] if found else vals[e, V_LB]
            j += 1
    return out_keys, out_bounds


@njit(cache=True, nogil=True)
def cache_absorb(keys, vals, ints, slots, meta, theirs, bounds, start, room, control):
    """Add another thread's exported bounds from `start` on: a branch this table has
    no tree for gets the larger bound; a new one an entry with the bound and no tree
    (never exported again).  Stops when the table would outgrow `room` bytes, or on
    Stop (polled every 4096 entries).  Returns the table's arrays (grown or not),
    the position reached and the entries added."""
    added = 0
    i = start
    while i < bounds.shape[0]:
        if (i & 4095) == 0 and ks.should_stop(control):
            break
        hi = theirs[i, 0]
        lo = theirs[i, 1]
        e = cache_find(keys, slots, hi, lo)
        if e >= 0:
            if ints[e, I_FLAGS] != FLAG_EXACT + FLAG_FOUND and bounds[i] > vals[e, V_LB]:
                vals[e, V_LB] = bounds[i]
            i += 1
            continue
        if meta[M_COUNT] + 2 > keys.shape[0]:
            if 2 * keys.shape[0] * ENTRY_BYTES > room:
                break
            keys, vals, ints, slots = cache_grow(keys, vals, ints, slots, meta)
        e = _new_entry(keys, slots, meta, hi, lo)
        vals[e, V_ERR] = np.inf
        vals[e, V_LB] = bounds[i]
        vals[e, V_UB] = bounds[i]
        vals[e, V_BUDGET] = 0.0
        ints[e, I_REC] = NONE
        ints[e, I_FLAGS] = FLAG_EXACT
        ints[e, I_ITER] = 0
        cache_touch(ints, meta, e)
        ints[e, I_SAVED] = 0
        added += 1
        i += 1
    return keys, vals, ints, slots, i, added


# ---------------------------------------------------------------------- records
@njit(cache=True, nogil=True)
def records_new(capacity):
    R = np.zeros((capacity, 3), dtype=np.int64)
    RC = np.zeros(capacity, dtype=np.int64)
    rfree = np.empty(capacity, dtype=np.int64)
    rmeta = np.zeros(2, dtype=np.int64)
    for j in range(capacity - 1, 0, -1):   # record 0 is the leaf, never freed
        rfree[rmeta[RM_FREE]] = j
        rmeta[RM_FREE] += 1
    R[LEAF, 0] = -1
    return R, RC, rfree, rmeta


@njit(cache=True, nogil=True)
def records_grow(R, RC, rfree, rmeta):
    cap = R.shape[0]
    R2 = np.zeros((2 * cap, 3), dtype=np.int64)
    R2[:cap] = R
    RC2 = np.zeros(2 * cap, dtype=np.int64)
    RC2[:cap] = RC
    rfree2 = np.empty(2 * cap, dtype=np.int64)
    nf = rmeta[RM_FREE]
    rfree2[:nf] = rfree[:nf]
    for j in range(2 * cap - 1, cap - 1, -1):
        rfree2[nf] = j
        nf += 1
    rmeta[RM_FREE] = nf
    return R2, RC2, rfree2


@njit(cache=True, nogil=True)
def rec_new(R, RC, rfree, rmeta, feature, left, right):
    """New record (one reference, owned by the caller) testing `feature`."""
    rmeta[RM_FREE] -= 1
    r = rfree[rmeta[RM_FREE]]
    R[r, 0] = feature
    R[r, 1] = left
    R[r, 2] = right
    RC[r] = 1
    if left != LEAF:
        RC[left] += 1
    if right != LEAF:
        RC[right] += 1
    rmeta[RM_PEAK] = max(rmeta[RM_PEAK], R.shape[0] - rmeta[RM_FREE])
    return r


@njit(cache=True, nogil=True)
def rec_stump(R, RC, rfree, rmeta, feature):
    """A split on `feature` with two leaves, or the leaf itself when feature < 0."""
    if feature < 0:
        return LEAF
    zero = feature - feature
    return rec_new(R, RC, rfree, rmeta, feature, zero + LEAF, zero + LEAF)


@njit(cache=True, nogil=True)
def rec_acquire(RC, r):
    if r > LEAF:
        RC[r] += 1


@njit(cache=True, nogil=True)
def rec_release(R, RC, rfree, rmeta, r, stack):
    """Drop one reference to r, freeing what nobody references any more."""
    if r <= LEAF:
        return
    stack[0] = r
    top = 1
    while top > 0:
        top -= 1
        x = stack[top]
        RC[x] -= 1
        if RC[x] == 0:
            rfree[rmeta[RM_FREE]] = x
            rmeta[RM_FREE] += 1
            if R[x, 1] != LEAF:
                stack[top] = R[x, 1]
                top += 1
            if R[x, 2] != LEAF:
                stack[top] = R[x, 2]
                top += 1
