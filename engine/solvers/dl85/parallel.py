"""DL8.5 on several threads (the scheme: `engine.solvers.root_tasks`).

A task is one feature of the root's order ("the best tree whose root tests the
feature at this position", the leaf included): one call of `dl85_search` with
`root_position`.  Each thread keeps its cache of solved branches from one task to the
next (a branch's result does not depend on the root above it, and the same tests in
another order usually sit under another root feature), and the threads pass each
other what they proved: after a task a thread exports the (key, bound) of the exact
entries it stored during it, and before a task it adds the others' exports to its
cache as bounds (`cache.cache_export` / `cache_absorb`; a bound is a few numbers, a
subtree would be a chain of records in another thread's arrays).  An export that
every thread has read is dropped.  Plain DL8.5 at depth >= 3 only: below that a
task is a single split, and CA-DL8.5's restarts relax a rule over the whole tree.
A first call with a position past the end counts the root's features.
"""

from __future__ import annotations

import threading

import numpy as np

from engine.solvers import root_tasks
from engine.solvers.dl85.cache import (
    ENTRY_BYTES,
    M_CLOCK,
    cache_absorb,
    cache_export,
    empty,
)
from engine.solvers.dl85.kernel import (
    N_STATS,
    ST_PEAK_ENTRIES,
    ST_PEAK_RECORDS,
    ST_RESTARTS,
    ST_ROOT_CANDIDATES,
    ST_RULE_ACTIVE,
    ST_THRESHOLD,
    dl85_search,
)

# Kernel output: (feature, threshold, left, right, value, error, optimal, statistics,
# cache).
OUT_ERROR, OUT_OPTIMAL, OUT_STATS, OUT_CACHE = 5, 6, 7, 8
BEYOND = 1 << 40   # a root position past every feature
# Statistics that are a peak or a setting of one search, not a count to sum.
PEAKS = (ST_PEAK_ENTRIES, ST_PEAK_RECORDS, ST_RESTARTS, ST_THRESHOLD, ST_RULE_ACTIVE)


class Board:
    """The exports of a search's threads, in the order they were made; each
    workspace reads them from where it last stopped."""

    def __init__(self):
        self.lock = threading.Lock()
        self.exports: list = []    # (workspace, keys, bounds), None once read by all
        self.readers: list[Workspace] = []

    def add(self, owner, keys, bounds) -> None:
        with self.lock:
            self.exports.append((owner, keys, bounds))
            done = min(r.read for r in self.readers)
            for i in range(done):
                self.exports[i] = None   # every thread has it: free the memory


class Workspace:
    """One thread's cache, kept from one of its tasks to the next, and what it has
    read of the board (none: the winner's final search, whose tree must not depend
    on what the threads happened to pass each other)."""

    def __init__(self, board: Board | None = None, room: int = 0,
                 control: np.ndarray | None = None):
        self.cache = empty()
        self.board = board
        self.room = room          # bytes the table may grow to by absorbing
        self.control = control    # the Monitor's: absorbing stops with the run
        self.since = 0            # clock of the last export
        self.read = 0             # exports read
        self.absorbed = 0
        if board is not None:
            with board.lock:
                board.readers.append(self)
            # an empty pass loads (or compiles) the absorb before any task, so every
            # threaded run needs it, and a warm-up's threaded run builds it
            self._absorb(np.zeros((0, 2), dtype=np.uint64), np.zeros(0))

    def _absorb(self, keys, bounds) -> None:
        table, records = self.cache[:5], self.cache[5:]
        *arrays, _, added = cache_absorb(*table, keys, bounds, 0, self.room, self.control)
        self.cache = (*arrays, table[4], *records)
        self.absorbed += added

    def take(self) -> None:
        """Add the bounds the other threads exported since the last look."""
        if self.board is None:
            return
        with self.board.lock:
            new = self.board.exports[self.read:]
            self.read = len(self.board.exports)
        for export in new:
            if export is not None and export[0] is not self:
                self._absorb(export[1], export[2])

    def give(self) -> None:
        """Export what this thread's last task proved."""
        if self.board is None:
            return
        keys, vals, ints, _, meta = self.cache[:5]
        exported = cache_export(keys, vals, ints, meta, self.since)
        self.since = int(meta[M_CLOCK])
        if len(exported[1]):
            self.board.add(self, *exported)


def search(args: tuple, threads: int, budget: int, start_bound: float, eps: float,
           monitor, new_sink, make_tree):
    """`dl85_search(*args, ...)` on `threads` threads; returns what one call returns
    but its cache.  `args`: its arguments before `root_position`; `budget`: one
    thread's bytes (its cache budget in `args`); `start_bound`: the kernel's error
    of a tree known beforehand, or inf."""

    def call(task, shared, margin, goal, workspace, sink, piece=(0, 1)):
        # one piece only: a task's candidates are one root feature
        workspace.take()
        out = dl85_search(*args, task, shared, margin, goal, monitor.control,
                          *sink.buffers(), workspace.cache)
        workspace.cache = out[OUT_CACHE]
        workspace.give()
        return out[:OUT_CACHE]

    probe = call(BEYOND, np.array([np.inf]), 0.0, -np.inf, Workspace(), new_sink())
    candidates = int(probe[OUT_STATS][ST_ROOT_CANDIDATES])
    board = Board()
    workspaces: list[Workspace] = []
    # a quarter of a thread's budget for the bounds it absorbs: the search needs the rest
    room = budget // 4 // ENTRY_BYTES * ENTRY_BYTES

    def workspace():
        workspaces.append(Workspace(board, room, monitor.control))
        return workspaces[-1]

    outcome = root_tasks.run(
        candidates, threads, call, workspace,
        lambda out: out[OUT_ERROR], lambda out: out[OUT_OPTIMAL], start_bound, eps,
        monitor, new_sink, make_tree,
        final=root_tasks.OWN if eps == 0.0 else root_tasks.SEARCH, fresh_workspace=Workspace)
    if outcome.winner is None:
        out = probe
    else:
        out = outcome.final or outcome.results[outcome.winner]
    parts = [r[OUT_STATS] for r in outcome.results.values()] or [probe[OUT_STATS]]
    stats = sum(parts, np.zeros(N_STATS))
    for k in PEAKS:
        stats[k] = max(p[k] for p in parts)
    stats[ST_ROOT_CANDIDATES] = candidates
    absorbed = sum(w.absorbed for w in workspaces)
    return (*out[:5], min(outcome.best, probe[OUT_ERROR]), outcome.completed, stats,
            absorbed)
