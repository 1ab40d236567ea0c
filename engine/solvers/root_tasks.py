"""One exact search on several threads: the root's candidates shared out.

Every tree but a leaf tests something at its root, so an optimal tree is the best of
the leaf and of the answers to *tasks*, one per root candidate (a feature, or a part
of a feature's split points, or a run of features): "the best tree whose root is
this candidate".  The solvers that use this (`contree`, `blossom`, `dl85`, `cadl85`)
run each task as one call of their nogil kernel told to try only that candidate at
the root; threads take tasks one at a time from a common queue, in the order the
single-threaded search would try them, each with a workspace of its own (a cache per
thread; blossom's threads copy in each other's solved branches between tasks, dl85's
each other's bounds, see `blossom.parallel` and `dl85.parallel`).

What the winner is: the best tree, and among equally good trees the one of the
first task in that order; so a task matters only if it can beat the best (error,
task) pair found so far.  All threads share that pair as one number, the *key*
`shared[0]` = error + margin(task), where margin(i) = tie * (i + 1) / (tasks + 1)
grows with the task's place and stays below `tie`.  With integer weights tie is half
a unit (errors differ by at least one, and compare exactly).  With fractional
weights the kernels compare with a tolerance eps (the same tree's error summed in
another order differs in its last bits), so a bound prunes what comes within eps
of it: consecutive margins then differ by 3 eps, more than the 2 eps a tie may
span on both sides, and tie = 3 eps (tasks + 1); errors closer than tie count as
equal (eps is 1e-9 of the total weight).  A task whose
root improves lowers the key (a lost race only leaves it higher, which costs time,
not the answer); task i prunes against key - margin(i): strictly below the best
error when the best pair came from an earlier task, up to it (ties included) when
from a later one.  So task i* of the winning pair always searches for its tree and
finds it, whatever the timing, and the optimum E and that task are the same for any
number of threads.  It is searched once more, alone, with a fresh workspace, the key
E + tie and `goal` E (its root stops at its first tree of error E: no proof is
needed any more, so this costs a fraction of the task): that search does not depend
on timing either, so the tree is always the same.  With `pieces` > 1 (contree with
fractional weights) the winner's candidates are cut into that many pieces, each
searched alone that way, and the answer is the tree of the first piece in order that
reaches E (one does: the winner's tree lies in one): still independent of timing, and
the pieces run on all threads.  Threads that find no task left search the pieces of
the best (error, task) pair finished so far while the others end their last tasks,
and wait for a new best pair while any task runs; a piece is kept when its pair is
still the best at the end (the usual case: the last tasks rarely win), and the caller
searches any piece still missing.  A solver whose task returns the first tree of its
error in a fixed order whatever bound it was given (`dl85` with integer weights:
every branch keeps its first tree of least error, exactly compared) needs no second
search (`final=OWN`): the winner's own tree is already that one (`contree` with
integer weights keeps the winner's own root split point this way, the first of its
ties, and searches that one split point again for its subtrees).

Stop and time limit: every call polls the Monitor's control array and a thread takes
no new task once the run is stopped, so all threads end within one poll; a run
stopped before every task was searched is not complete.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.solvers import kernel_support as ks

# What becomes of the winning task (see the module docstring): searched again for its
# first tree of the optimal error; its own tree kept (already that one); or nothing
# (answers within a gap: every margin 0).
SEARCH, OWN, NONE = "search", "own", "none"


def tie_margin(eps: float, n_tasks: int) -> float:
    """What the shared bound keeps above a found error (see the module docstring):
    half a unit of weight when every weight is an integer, else 3 eps per task."""
    return 0.5 if eps == 0.0 else 3.0 * eps * (n_tasks + 1)


@dataclass
class Outcome:
    results: dict[int, Any]   # task -> the kernel's output, for every task searched
    best: float               # least error of any task (inf: none searched)
    winner: int | None        # the first task reaching it
    final: Any                # the first piece of the winner's final search reaching
                              # best (None: not done, or not SEARCH)
    completed: bool           # every task searched to its end, no stop


def run(n_tasks: int, threads: int, call: Callable, workspace: Callable[[], Any],
        error: Callable[[Any], float], complete: Callable[[Any], bool], start_bound: float,
        eps: float, monitor, new_sink: Callable[[], ks.IncumbentSink], make_tree: Callable,
        final: str = SEARCH, fresh_workspace: Callable[[], Any] | None = None,
        pieces: int = 1) -> Outcome:
    """Search tasks 0..n_tasks-1 on `threads` threads (see the module docstring).

    `call(task, shared, margin, goal, workspace, sink, (piece, pieces))` runs one
    task's kernel (a task is one piece of one; a final search one of `pieces` equal
    pieces of the winner's candidates) and returns its output; `error`/`complete`
    read the output.  `start_bound`: the error of a tree known beforehand, or inf.
    `new_sink()`: a sink for one thread's calls (the kernels size their output
    buffers from it).  `final`: SEARCH the winner
    again, keep its OWN tree, or NONE when answers within a gap may differ anyway
    (then the key is the best error itself, every margin 0, so every bound stays
    within the gap of the optimum).  `fresh_workspace()`: the final search's (default
    `workspace()`); it must share nothing with the threads'.
    """
    tie = tie_margin(eps, n_tasks)
    shared = np.array([start_bound + tie])
    taken = iter(range(n_tasks))

    def margin(task):
        # within a gap the answer may differ anyway: plain errors keep every bound
        # within the gap of the optimum
        return tie * (task + 1) / (n_tasks + 1) if final != NONE else 0.0

    cond = threading.Condition()   # guards the queue and the tables below
    results: dict[int, Any] = {}
    # (winner, best) -> {piece: its final search, None while being searched}
    finals: dict[tuple[int, float], dict[int, Any]] = {}
    fresh = fresh_workspace or workspace

    running = [0]   # tasks being searched

    def worker(sink):
        own = workspace()
        while not monitor.should_stop():
            with cond:
                task = next(taken, None)
                running[0] += task is not None
            if task is None:
                break
            out = None
            try:
                out = call(task, shared, margin(task), -np.inf, own, sink, (0, 1))
            finally:   # (an exception ends this thread, not the others' waits)
                with cond:
                    running[0] -= 1
                    if out is not None:
                        results[task] = out
                    cond.notify_all()
        del own   # the final searches below take fresh ones in its place
        while final == SEARCH and not monitor.should_stop():
            with cond:
                pair = _leader(results, error, eps)
                piece = None if pair is None else _next_piece(
                    finals.setdefault(pair, {}), pieces, pair[1], error, eps)
                if piece is None:
                    if running[0] == 0:
                        return          # no task runs: the leader is final
                    cond.wait(0.05)     # a task still running may change the leader
                    continue
                finals[pair][piece] = None
            out = search_final(pair, piece, fresh(), sink)
            with cond:
                finals[pair][piece] = out
                cond.notify_all()

    def search_final(pair, piece, space, sink):
        winner, best = pair
        return call(winner, np.array([best + tie]), margin(winner), best, space, sink,
                    (piece, pieces))

    sinks = [new_sink() for _ in range(max(1, min(threads, n_tasks)))]
    monitor.run_threads([lambda s=s: worker(s) for s in sinks], sinks, make_tree)
    searched = sorted(results)
    completed = (len(searched) == n_tasks and monitor.control[ks.C_STOP] == 0.0
                 and all(complete(results[t]) for t in searched))
    pair = _leader(results, error, eps)
    best, winner = (np.inf, None) if pair is None else (pair[1], pair[0])
    result = None
    if pair is not None and completed and final == SEARCH:
        done = finals.get(pair, {})
        for piece in range(pieces):
            again = done.get(piece)
            if again is None:
                again = monitor.run_kernel(search_final, (pair, piece, fresh(), new_sink()))
            if not complete(again):
                break
            if abs(error(again) - best) <= eps:
                result = again
                break
    return Outcome(results, best, winner, result, completed)


def _next_piece(done: dict[int, Any], pieces: int, best: float,
                error: Callable[[Any], float], eps: float) -> int | None:
    """The first piece of a final search nobody took yet, unless a piece before it
    already reached `best` (the answer is then that piece's tree)."""
    for piece in range(pieces):
        if piece not in done:
            return piece
        if done[piece] is not None and error(done[piece]) <= best + eps:
            return None
    return None


def _leader(results: dict[int, Any], error: Callable[[Any], float], eps: float
            ) -> tuple[int, float] | None:
    """(winner, best) of the tasks in `results`: the least error, and the first task
    reaching it (within eps)."""
    if not results:
        return None
    best = min(error(out) for out in results.values())
    return next(t for t in sorted(results) if error(results[t]) <= best + eps), best
