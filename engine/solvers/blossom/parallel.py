"""Blossom on several threads (the scheme: `engine.solvers.root_tasks`).

A task is one feature of the root's order ("the best tree whose root tests the
feature at this position"): one call of `blossom_search` with `root_position`, which
dives, improves and proves below that root alone.  Tasks share nothing but the
bound; each thread keeps its cache of solved branches of depth D-2 (see `cache`)
from one task to the next (a branch's exact result does not depend on the root
above it, and the same tests in another order usually sit under another root
feature), so a workspace is one cache.  A first call with a position past the end
counts the root's features.  Depth >= 3 only: below that a task is a single split.
A tree reaching the root's lower bound (the unavoidable error) is optimal: every
later task then ends at once (its target falls below that bound), the earlier ones
stop at their first such tree.
"""

from __future__ import annotations

import numpy as np

from engine.solvers import root_tasks
from engine.solvers.blossom.kernel import (
    N_STATS,
    ST_CACHE_ENTRIES,
    ST_FIRST_TREE_ERR,
    ST_FIRST_TREE_T,
    ST_PEAK_RECORDS,
    ST_PEAK_SLOTS,
    ST_RECORD_CAPACITY,
    ST_ROOT_CANDIDATES,
    ST_SLOT_CAPACITY,
    blossom_search,
)

# Kernel output: (feature, threshold, left, right, value, error, optimal, statistics,
# cache).
OUT_ERROR, OUT_OPTIMAL, OUT_STATS, OUT_CACHE = 5, 6, 7, 8
BEYOND = 1 << 40   # a root position past every feature
# Statistics that are a peak or a moment of one search, not a count to sum.
PEAKS = (ST_PEAK_SLOTS, ST_PEAK_RECORDS, ST_SLOT_CAPACITY, ST_RECORD_CAPACITY,
         ST_CACHE_ENTRIES)
MOMENTS = (ST_FIRST_TREE_T, ST_FIRST_TREE_ERR)


class Workspace:
    """One thread's cache, kept from one of its tasks to the next."""

    def __init__(self, new_cache):
        self.cache = new_cache()


def search(args: tuple, threads: int, start_bound: float, eps: float, monitor, new_sink,
           make_tree, new_cache):
    """`blossom_search(*args, ...)` on `threads` threads; returns what one call
    returns but its cache.  `args`: its arguments before `root_position`;
    `start_bound`: the kernel's error of a tree known beforehand, or inf;
    `new_cache()`: an empty cache (`cache.empty`)."""

    def call(task, shared, margin, goal, workspace, sink):
        out = blossom_search(*args, task, shared, margin, goal, monitor.control,
                             *sink.buffers(), workspace.cache)
        workspace.cache = out[OUT_CACHE]
        return out[:OUT_CACHE]

    probe = call(BEYOND, np.array([np.inf]), 0.0, -np.inf, Workspace(new_cache),
                 new_sink())
    candidates = int(probe[OUT_STATS][ST_ROOT_CANDIDATES])
    outcome = root_tasks.run(
        candidates, threads, call, lambda: Workspace(new_cache), lambda out: out[OUT_ERROR],
        lambda out: out[OUT_OPTIMAL], start_bound, eps, monitor, new_sink, make_tree)
    if outcome.winner is None:
        out = probe
    else:
        out = outcome.final or outcome.results[outcome.winner]
    parts = [r[OUT_STATS] for r in outcome.results.values()] or [probe[OUT_STATS]]
    stats = sum(parts, np.zeros(N_STATS))
    for k in PEAKS:
        stats[k] = max(p[k] for p in parts)
    # the first dive: task 0's (the tree one thread builds first; which task's dive
    # ends first is a race between the threads)
    first = (outcome.results[0][OUT_STATS] if 0 in outcome.results
             else min(parts, key=lambda p: p[ST_FIRST_TREE_T]))
    for k in MOMENTS:
        stats[k] = first[k]
    stats[ST_ROOT_CANDIDATES] = candidates
    return (*out[:5], min(outcome.best, probe[OUT_ERROR]), outcome.completed, stats)
