"""One exact search on several threads: the root's candidates shared out.

Every tree but a leaf tests something at its root, so an optimal tree is the best of
the leaf and of the answers to *tasks*, one per root candidate (a feature, or a part
of a feature's split points): "the best tree whose root is this candidate".  The
solvers that use this (`contree`, `dl85`) run each task as one call of their nogil
kernel told to try only that candidate at the root; threads take tasks one at a time
from a common queue, in the order the single-threaded search would try them, each
with a workspace of its own (caches are per thread).

A shared bound prunes across threads at once: `shared[0]` is lowered by any task
whose root improves, to its error plus `tie`, and every task's root prunes against
it.  (`shared[1]` is for a kernel that can prove a tree optimal on its own, by a
lower bound: it holds the first task known to have done so, and later tasks give
up.)  The `tie` (more than any tolerance) keeps pruning inclusive: a task whose
optimum only equals another task's tree still finds it.  Hence, once every task has
ended, the optimum E and the *first task reaching E* are the same whatever the
number of threads and their timing.  That task is searched once more, alone, with
bound E + tie, a fresh workspace and `goal` E (its root stops at the first tree of
error E: no proof is needed any more, so this costs a fraction of the task): that
search does not depend on timing either, so the tree is always the same.

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


def tie_margin(eps: float) -> float:
    """What the shared bound keeps above a found error: half a unit of weight when
    every weight is an integer (errors then differ by at least 1), else four
    tolerances."""
    return 0.5 if eps == 0.0 else 4.0 * eps


@dataclass
class Outcome:
    results: dict[int, Any]   # task -> the kernel's output, for every task searched
    best: float               # least error of any task (inf: none searched)
    winner: int | None        # the first task reaching it
    final: Any                # the winner searched again alone (None: not done)
    completed: bool           # every task searched to its end, no stop


def run(n_tasks: int, threads: int, call: Callable, workspace: Callable[[], Any],
        error: Callable[[Any], float], complete: Callable[[Any], bool], start_bound: float,
        eps: float, monitor, new_sink: Callable[[], ks.IncumbentSink], make_tree: Callable,
        final_search: bool = True) -> Outcome:
    """Search tasks 0..n_tasks-1 on `threads` threads (see the module docstring).

    `call(task, shared, goal, workspace, sink)` runs one task's kernel and returns its
    output; `error`/`complete` read the output.  `start_bound`: the error of a tree
    known beforehand, or inf.  `new_sink()`: a sink for one thread's calls (the
    kernels size their output buffers from it).  `final_search`: search the winner again (the caller
    passes False when its answers within a gap may differ anyway).
    """
    tie = tie_margin(eps)
    shared = np.array([start_bound + tie, np.inf])
    taken = iter(range(n_tasks))
    lock = threading.Lock()
    results: dict[int, Any] = {}

    def worker(sink):
        own = workspace()
        while not monitor.should_stop():
            with lock:
                task = next(taken, None)
            if task is None:
                return
            results[task] = call(task, shared, -np.inf, own, sink)

    sinks = [new_sink() for _ in range(max(1, min(threads, n_tasks)))]
    monitor.run_threads([lambda s=s: worker(s) for s in sinks], sinks, make_tree)
    searched = sorted(results)
    completed = (len(searched) == n_tasks and monitor.control[ks.C_STOP] == 0.0
                 and all(complete(results[t]) for t in searched))
    best = min((error(results[t]) for t in searched), default=np.inf)
    winner = next((t for t in searched if error(results[t]) <= best + eps), None)
    final = None
    if winner is not None and completed and final_search:
        bound = np.array([best + tie, np.inf])
        again = monitor.run_kernel(call, (winner, bound, best, workspace(), new_sink()))
        if complete(again) and abs(error(again) - best) <= eps:
            final = again
    return Outcome(results, best, winner, final, completed)
