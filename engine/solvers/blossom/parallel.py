"""Blossom on several threads (the scheme: `engine.solvers.root_tasks`).

A task is one feature of the root's order ("the best tree whose root tests the
feature at this position"): one call of `blossom_search` with `root_position`, which
dives, improves and proves below that root alone.  Tasks share the bound and solved
branches: each thread keeps its cache of solved branches of depth D-2 (see `cache`)
from one task to the next (a branch's exact result does not depend on the root
above it, and the same tests in another order usually sit under another root
feature), and between tasks copies in what the other threads' caches gained (with
caches kept apart, the other order of a branch fell to the other thread about half
the time, and two threads gained 1.44x instead of 1.9x).  A first call with a position past the end
counts the root's features.  Depth >= 3 only: below that a task is a single split.
A tree reaching the root's lower bound (the unavoidable error; with a cost per leaf,
the kernel's bound of the objective) is optimal: every later task then ends at once
(its target falls below that bound), the earlier ones stop at their first such tree.
"Error" below is the kernel's objective (error + penalty x leaves, see `kernel`): the
tasks compare and share it, with the tolerance the adapter passes (fractional as
soon as there is a penalty: objectives then differ by less than one unit).
With a least leaf weight every task searches the same constrained trees (the root's
order leaves out the features with a side under it, so the tasks are its valid
splits), the key and the start bound are values of valid trees (the warm start is
greedy under the same least leaf), and a cached branch's value is the constrained
optimum of its own rows: sharing all three stays exact.
"""

from __future__ import annotations

import numpy as np

from engine.solvers import root_tasks
from engine.solvers.blossom.cache import M_CLEARS, M_COUNT, cache_merge
from engine.solvers.blossom.kernel import (
    N_STATS,
    ST_CACHE_ENTRIES,
    ST_CACHE_SHARED,
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
    """One thread's cache, kept from one of its tasks to the next.

    With a `board` (one dict for all threads of a search), the workspace publishes
    its cache there after each task, as (arrays, entries, clears), and before each
    task copies in the entries the others published since it last looked
    (`cache.cache_merge`; entries of a cache that was emptied since are read from
    its start again).  The winner's final search takes a workspace without a board:
    its tree must not depend on what the threads happened to share."""

    def __init__(self, new_cache, board: dict | None = None, budget: int = 0,
                 control: np.ndarray | None = None):
        self.cache = new_cache()
        self.board = board     # workspace -> its last published cache
        self.budget = budget   # bytes the cache may grow to by copying
        self.control = control  # the Monitor's: a copy stops with the run
        self.taken: dict[Workspace, tuple[int, int]] = {}   # -> (clears, entries seen)
        self.copied = 0
        if board is not None:
            # an empty copy loads (or compiles) the merge before any task, so every
            # threaded run needs it, and a warm-up's threaded run builds it
            cache_merge(*self.cache, *self.cache[:4], 0, 0, 0, control)

    def take(self) -> None:
        """Copy in what the other threads' caches gained since the last look."""
        if self.board is None:
            return
        for other, published in list(self.board.items()):
            if other is self:
                continue
            hashes, lits, vals, trees, entries, clears = published
            seen_clears, start = self.taken.get(other, (clears, 0))
            if seen_clears != clears:
                start = 0
            if start >= entries:
                continue
            meta = self.cache[-1]
            before = int(meta[M_COUNT])
            *arrays, stop = cache_merge(*self.cache, hashes, lits, vals, trees, start,
                                        entries, self.budget, self.control)
            self.cache = (*arrays, meta)
            self.copied += int(meta[M_COUNT]) - before
            self.taken[other] = (clears, stop)

    def publish(self) -> None:
        if self.board is None:
            return
        hashes, lits, vals, trees, _, meta = self.cache
        self.board[self] = (hashes, lits, vals, trees, int(meta[M_COUNT]),
                            int(meta[M_CLEARS]))


def search(args: tuple, threads: int, start_bound: float, eps: float, monitor, new_sink,
           make_tree, new_cache):
    """`blossom_search(*args, ...)` on `threads` threads; returns what one call
    returns but its cache.  `args`: its arguments before `root_position`;
    `start_bound`: the kernel's error of a tree known beforehand, or inf;
    `new_cache()`: an empty cache (`cache.empty`)."""

    def call(task, shared, margin, goal, workspace, sink, piece=(0, 1)):
        # one piece only: a task's candidates are one root feature
        workspace.take()
        out = blossom_search(*args, task, shared, margin, goal, monitor.control,
                             *sink.buffers(), workspace.cache)
        workspace.cache = out[OUT_CACHE]
        workspace.publish()
        return out[:OUT_CACHE]

    probe = call(BEYOND, np.array([np.inf]), 0.0, -np.inf, Workspace(new_cache),
                 new_sink())
    candidates = int(probe[OUT_STATS][ST_ROOT_CANDIDATES])
    board: dict = {}
    workspaces: list[Workspace] = []
    # half a thread's budget for what it copies in: the search's pools need the rest
    budget = args[-1] // 2

    def workspace():
        workspaces.append(Workspace(new_cache, board, budget, monitor.control))
        return workspaces[-1]

    outcome = root_tasks.run(
        candidates, threads, call, workspace,
        lambda out: out[OUT_ERROR], lambda out: out[OUT_OPTIMAL], start_bound, eps,
        monitor, new_sink, make_tree, fresh_workspace=lambda: Workspace(new_cache))
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
    stats[ST_CACHE_SHARED] = sum(w.copied for w in workspaces)
    return (*out[:5], min(outcome.best, probe[OUT_ERROR]), outcome.completed, stats)
