"""The subproblem cache of `blossom` (numba): finished branches of depth D-2.

A branch is the set of tests (feature, side) on its path from the root; the same
set reached in another order (a then b, b then a) has the same rows, hence the same
optimal subtree.  The kernel stores here the exact result of every branch of depth
D-2 that it solved to the end (see `kernel`), and looks a branch up before creating
it.

Entry e holds the branch's tests (`lits[e]`: literals 2 * feature + side, sorted),
their hash, its least error and its optimal subtree of depth <= 2 inline
(`trees[e]` = root feature, feature of the x = 0 child, of the x = 1 child; -1 for a
leaf), so the cache holds no tree records.  A lookup compares the literals
themselves: two different branches never share an entry, whatever their hash.

The kernel also reads entries for a lower bound of a new branch from its cached
siblings (the similarity bound, see `kernel`).  A search keeps one cache per thread
(`empty` makes one); the kernel takes it and returns it, grown or emptied.  Between
two tasks a thread copies in what the other threads' caches gained (`cache_merge`,
see `parallel`): a branch's exact result does not depend on who found it.  That
read runs while the owner goes on writing, which is safe because an entry never
changes once written (a second result for the same branch is dropped), new entries
go past the ones published, and growing or emptying a cache makes new arrays.

The table is open addressing with linear probing over `table` (twice as many
places as entries, so at most half full); the hash of a set of literals is the
(wrapping) sum of a mix of each, so it does not depend on their order.
`entry_bytes(L)` bytes per entry, places included.
"""

import numpy as np
from numba import njit

from engine.solvers import kernel_support as ks

M_COUNT, M_LOOKUPS, M_HITS, M_STORES, M_CLEARS, M_PEAK, M_SIMILAR = 0, 1, 2, 3, 4, 5, 6
N_META = 7
TREE = 3          # inline subtree: root feature, left child's feature, right child's
CACHE_INIT = 1024      # entries of a new cache (doubles while the budget allows)
CACHE_MAX = 1 << 26    # most entries (then it is emptied and refilled)
MERGE_POLL = 4096      # entries copied between two polls of the control array


def entry_bytes(n_lits: int) -> int:
    """Bytes per entry: hash 8, literals 4 each, value 8, tree 4 * TREE, two places."""
    return 8 + 4 * n_lits + 8 + 4 * TREE + 16


def empty(max_depth: int, on: bool = True) -> tuple:
    """A new cache for searches of depth max_depth, as `blossom_search` takes it:
    (hashes, lits, vals, trees, table, meta); a token one when `on` is False."""
    capacity = CACHE_INIT if on and max_depth >= 3 else 1
    return (*cache_new(capacity, max(max_depth - 2, 1)), np.zeros(N_META, dtype=np.int64))


@njit(cache=True, nogil=True)
def cache_bytes(capacity, n_lits):
    return capacity * (8 + 4 * n_lits + 8 + 4 * TREE + 16)


@njit(cache=True, nogil=True)
def cache_new(capacity, n_lits):
    """Empty cache for `capacity` entries (a power of two) of n_lits literals each."""
    hashes = np.zeros(capacity, dtype=np.uint64)
    lits = np.zeros((capacity, max(n_lits, 1)), dtype=np.int32)
    vals = np.zeros(capacity)
    trees = np.zeros((capacity, TREE), dtype=np.int32)
    table = np.full(2 * capacity, -1, dtype=np.int64)
    return hashes, lits, vals, trees, table


@njit(cache=True, nogil=True)
def _mix(x):
    z = np.uint64(x) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True)
def key_of(key, n):
    """Sort key[:n] (literals) in place and return their hash."""
    for i in range(1, n):
        v = key[i]
        j = i - 1
        while j >= 0 and key[j] > v:
            key[j + 1] = key[j]
            j -= 1
        key[j + 1] = v
    h = np.uint64(0)
    for i in range(n):
        h += _mix(key[i])
    return h


@njit(cache=True, nogil=True)
def cache_find(hashes, lits, table, h, key, n):
    """Entry of the sorted literals key[:n] with hash h, or -1."""
    mask = table.shape[0] - 1
    i = np.int64(h & np.uint64(mask))
    while True:
        e = table[i]
        if e < 0:
            return e
        if hashes[e] == h:
            same = True
            for j in range(n):
                if lits[e, j] != key[j]:
                    same = False
                    break
            if same:
                return e
        i = (i + 1) & mask


@njit(cache=True, nogil=True)
def _insert(hashes, lits, table, meta, h, key, n):
    """A new entry for the sorted literals key[:n] with hash h (there must be room)."""
    e = meta[M_COUNT]
    meta[M_COUNT] += 1
    meta[M_PEAK] = max(meta[M_PEAK], meta[M_COUNT])
    hashes[e] = h
    for j in range(n):
        lits[e, j] = key[j]
    mask = table.shape[0] - 1
    i = np.int64(h & np.uint64(mask))
    while table[i] >= 0:
        i = (i + 1) & mask
    table[i] = e
    return e


@njit(cache=True, nogil=True)
def cache_put(hashes, lits, vals, trees, table, meta, h, key, n, value, g, g0, g1):
    """Store a branch's result (the cache must have room for one entry).  A branch
    already there keeps its entry: both results are exact, and an entry never changes
    once written, so another thread may read it (`cache_merge`)."""
    meta[M_STORES] += 1
    if cache_find(hashes, lits, table, h, key, n) >= 0:
        return
    e = _insert(hashes, lits, table, meta, h, key, n)
    vals[e] = value
    trees[e, 0] = g
    trees[e, 1] = g0
    trees[e, 2] = g1


@njit(cache=True, nogil=True)
def cache_grow(hashes, lits, vals, trees, table, meta):
    """The cache with twice the capacity (same entries)."""
    cap = hashes.shape[0]
    n = meta[M_COUNT]
    hashes2, lits2, vals2, trees2, table2 = cache_new(2 * cap, lits.shape[1])
    hashes2[:n] = hashes[:n]
    lits2[:n] = lits[:n]
    vals2[:n] = vals[:n]
    trees2[:n] = trees[:n]
    mask = table2.shape[0] - 1
    for e in range(n):
        i = np.int64(hashes2[e] & np.uint64(mask))
        while table2[i] >= 0:
            i = (i + 1) & mask
        table2[i] = e
    return hashes2, lits2, vals2, trees2, table2


@njit(cache=True, nogil=True)
def cache_clear(table, meta):
    """Forget every entry (when the cache may not grow any more).  The kernel clears
    only new arrays (`cache_new`): another thread may still be reading the old ones."""
    table[:] = -1
    meta[M_COUNT] = 0
    meta[M_CLEARS] += 1


@njit(cache=True, nogil=True)
def cache_merge(hashes, lits, vals, trees, table, meta, o_hashes, o_lits, o_vals, o_trees,
                start, stop, memory_budget, control):
    """Copy entries start..stop-1 of another cache (o_*) that this one lacks, growing
    it while it stays within memory_budget bytes.  Returns this cache's arrays and the
    first entry not copied (stop, or where the cache became full or the run was
    stopped: `control` is polled every MERGE_POLL entries)."""
    n = lits.shape[1]
    for e in range(start, stop):
        if (e - start) % MERGE_POLL == 0 and ks.should_stop(control):
            return hashes, lits, vals, trees, table, e
        h = o_hashes[e]
        if cache_find(hashes, lits, table, h, o_lits[e], n) >= 0:
            continue
        if meta[M_COUNT] >= hashes.shape[0]:
            cap = hashes.shape[0]
            if 2 * cap > CACHE_MAX or cache_bytes(2 * cap, n) > memory_budget:
                return hashes, lits, vals, trees, table, e
            hashes, lits, vals, trees, table = cache_grow(hashes, lits, vals, trees, table,
                                                          meta)
        d = _insert(hashes, lits, table, meta, h, o_lits[e], n)
        vals[d] = o_vals[e]
        trees[d, :] = o_trees[e, :]
    return hashes, lits, vals, trees, table, stop
