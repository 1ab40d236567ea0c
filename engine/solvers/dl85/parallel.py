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
every thread has read is dropped.  Depth >= 3 only: below that a task is a single
split.  CA-DL8.5 relaxes its rule here, between restarts that each search the tasks
on the threads (see `search`).  A first call with a position past the end counts
the root's features.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass

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
from engine.solvers.dl85.rules import RULE_NONE, relax

# Kernel output: (feature, threshold, left, right, value, error, optimal, statistics,
# cache).
OUT_ERROR, OUT_OPTIMAL, OUT_STATS, OUT_CACHE = 5, 6, 7, 8
BEYOND = 1 << 40   # a root position past every feature
RUNS_PER_THREAD = 2   # CA-DL8.5: single positions, then runs, per thread (`_runs`)
# Statistics that are a peak, not a count to sum, and the last restart's settings.
PEAKS = (ST_PEAK_ENTRIES, ST_PEAK_RECORDS)
SETTINGS = (ST_RESTARTS, ST_THRESHOLD, ST_RULE_ACTIVE)


class Board:
    """The exports of a search's threads, in the order they were made; each
    workspace reads them from where it last stopped.  An export is dropped once
    every thread has read it, and the oldest ones before that when the board holds
    more than `limit` bytes (a thread busy with a long task reads nothing: what it
    misses are bounds, which only save time)."""

    def __init__(self, limit: int):
        self.lock = threading.Lock()
        self.exports: list = []    # (workspace, keys, bounds), None once dropped
        self.readers: list[Workspace] = []
        self.limit = limit
        self.held = 0              # bytes of the exports not dropped
        self.dropped = 0           # exports dropped: always the oldest ones

    def add(self, owner, keys, bounds) -> None:
        with self.lock:
            self.exports.append((owner, keys, bounds))
            self.held += keys.nbytes + bounds.nbytes
            done = min((r.read for r in self.readers), default=len(self.exports))
            while self.dropped < len(self.exports) and (
                    self.dropped < done or self.held > self.limit):
                _, old_keys, old_bounds = self.exports[self.dropped]
                self.exports[self.dropped] = None
                self.held -= old_keys.nbytes + old_bounds.nbytes
                self.dropped += 1


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


@dataclass
class Relaxation:
    """CA-DL8.5's rule and how its threshold is relaxed between restarts (the kernel's
    arguments of the same names; `rules.relax`)."""
    rule: int
    relaxation: int
    thr0: float
    step: float
    factor: float


def search(args_for: Callable[[int, float], tuple], relaxation: Relaxation | None,
           threads: int, budget: int, start_bound: float, eps: float, monitor, new_sink,
           make_tree):
    """`dl85_search` on `threads` threads; returns what one call returns but its
    cache, and the bounds passed.  `args_for(rule, threshold)`: its arguments before
    `restart`; `relaxation`: CA-DL8.5's rule (None: plain DL8.5); `budget`: one
    thread's bytes (its cache budget in the arguments); `start_bound`: the kernel's
    error of a tree known beforehand, or inf.

    Plain DL8.5 keeps the winning task's own tree with integer weights (`root_tasks`
    OWN: each branch keeps its first tree of least error, compared exactly), else
    searches it again.  CA-DL8.5: each restart is one search on the threads (tasks
    under the rule at its threshold, the caches kept, the key starting at the best
    error so far); after the first exact restart, the first position of the winning
    run that reaches the optimum, and its tree, are found by plain DL8.5 on the
    threads with fresh caches (an exact restart may owe its tree to an earlier
    restart's, which depends on which thread had which task)."""

    def caller(rule, thr, restart, runs):
        args = args_for(rule, thr)

        def call(task, shared, margin, goal, workspace, sink, piece=(0, 1)):
            # one piece only: a task's candidates are one run of root features
            workspace.take()
            first, end = runs[task]
            out = dl85_search(*args, restart, first, end, shared, margin, goal,
                              monitor.control, *sink.buffers(), workspace.cache)
            workspace.cache = out[OUT_CACHE]
            workspace.give()
            return out[:OUT_CACHE]
        return call

    probe = caller(RULE_NONE, 0.0, 1, [(BEYOND, BEYOND)])(
        0, np.array([np.inf]), 0.0, -np.inf, Workspace(), new_sink())
    candidates = int(probe[OUT_STATS][ST_ROOT_CANDIDATES])
    runs = ([(p, p + 1) for p in range(candidates)] if relaxation is None
            else _runs(candidates, threads))
    # see the docstring
    plain_final = root_tasks.OWN if eps == 0.0 else root_tasks.SEARCH

    def error(out):
        return out[OUT_ERROR]

    def complete(out):
        return out[OUT_OPTIMAL]

    # a quarter of a thread's budget for the bounds it absorbs (the search needs the
    # rest), and a quarter for the exports not yet read
    room = budget // 4 // ENTRY_BYTES * ENTRY_BYTES
    board = Board(budget // 4)
    workspaces: list[Workspace] = []   # one per thread, kept from restart to restart
    idle: list[Workspace] = []
    lock = threading.Lock()

    def workspace():
        with lock:
            if not idle:
                workspaces.append(Workspace(board, room, monitor.control))
                idle.append(workspaces[-1])
            return idle.pop()

    def restarts():
        """(restart, rule, threshold) of each restart, until the caller stops (the
        kernel switches a vacuous rule off, so a restart ends up exact)."""
        if relaxation is None:
            yield 1, RULE_NONE, 0.0
            return
        r = relaxation
        thr = r.thr0
        for restart in itertools.count(1):
            following = relax(r.relaxation, thr, r.step, r.factor, restart)
            yield restart, r.rule, thr
            thr = following

    parts: list = []       # every task's statistics
    last: list = []        # the last restart's
    best, leading, completed = start_bound, None, False
    for restart, rule, thr in restarts():
        idle[:] = workspaces
        outcome = root_tasks.run(
            len(runs), threads, caller(rule, thr, restart, runs), workspace, error,
            complete, best, eps, monitor, new_sink, make_tree,
            final=plain_final if relaxation is None else root_tasks.OWN,
            fresh_workspace=Workspace)
        last = [r[OUT_STATS] for r in outcome.results.values()]
        parts += last
        if outcome.winner is not None and (leading is None or outcome.best <= best + eps):
            # (a later restart's tie replaces: the exact one's winner is the answer)
            best, leading = min(best, outcome.best), outcome
        completed = outcome.completed
        if completed or monitor.should_stop():
            break
    absorbed = sum(w.absorbed for w in workspaces)
    # the caches and exports go before the final search takes fresh ones
    workspaces.clear()
    idle.clear()
    board.readers.clear()
    board.exports.clear()
    out = probe
    if leading is not None:
        out = leading.final or leading.results[leading.winner]
        if relaxation is not None and completed:
            # the winning run's positions by plain DL8.5 on the threads, fresh caches,
            # from the optimum (ties only): the first position reaching it gives the
            # tree, as dl85 on threads would (nothing new is shown: the curve is there)
            first, end = runs[leading.winner]
            positions = [(p, p + 1) for p in range(first, end)]
            fresh = Board(budget // 4)
            again = root_tasks.run(
                len(positions), threads, caller(RULE_NONE, 0.0, 1, positions),
                lambda: Workspace(fresh, room, monitor.control), error, complete, best,
                eps, monitor, new_sink, make_tree, final=plain_final,
                fresh_workspace=Workspace)
            if again.completed and again.winner is not None and \
                    abs(again.best - best) <= eps:
                out = again.final or again.results[again.winner]
    parts = parts or [probe[OUT_STATS]]
    stats = sum(parts, np.zeros(N_STATS))
    for k in PEAKS:
        stats[k] = max(p[k] for p in parts)
    for k in SETTINGS:
        stats[k] = max((p[k] for p in last), default=0.0)
    stats[ST_ROOT_CANDIDATES] = candidates
    return (*out[:5], min(best, probe[OUT_ERROR]), completed, stats, absorbed)


def _runs(candidates: int, threads: int) -> list[tuple[int, int]]:
    """CA-DL8.5's tasks: runs of root positions, the first RUNS_PER_THREAD * threads
    one position each (they cost the most: the rules let the first positions of the
    order search deepest), then as many runs of equal length over the rest; a few
    tasks per thread and restart, not one per feature (a restart can be quick, and
    a task costs about 50 us of calls whatever it does).  Contiguous runs in order:
    the first run reaching the optimum holds the first position reaching it."""
    head = min(candidates, RUNS_PER_THREAD * threads)
    runs = [(p, p + 1) for p in range(head)]
    rest = candidates - head
    parts = min(rest, RUNS_PER_THREAD * threads)
    cuts = [head + rest * i // parts for i in range(parts + 1)] if parts else []
    return runs + list(itertools.pairwise(cuts))
