"""ConTree on several threads: the root's features shared out.

Every tree of depth >= 1 tests a feature at one of its split points at the root, so
the optimum is the best of the leaf and of one search per *task*: a root feature and
a part of its split points ("the best tree whose root splits f within part p").
Features come in the order the single-threaded search tries them (`root_order`),
each cut into `parts` equal runs of split points so that there are at least
TASKS_PER_THREAD tasks per thread (with few features, the last one would otherwise
run alone while the other threads idle).  Threads take tasks one at a time from a
common queue, each a call of the same nogil kernel (`contree_search` with
`root_feature`, `part`) on workspaces of their own; the kernel's root prunes against
a bound every thread lowers as soon as its root improves (`shared`), so a good tree
found by one thread prunes the others at once.  A thread holds its own cache and
its own copy of the per-level row lists; the sorted lists of the root and the data
are shared, read only.

Deterministic answers.  The shared bound is lowered to a tree's error plus `tie`
(more than any tolerance), never to the error itself, so the search of a root
feature whose optimum equals the best found elsewhere still finds it.  Hence, once
every search has ended, the optimum E and the first root feature in that order
whose best tree has error E are the same whatever the threads and their timing; that
task is searched once more, alone, with bound E + tie and a fresh cache, up to the
first tree of error E (`goal`: no proof is needed any more, so this costs a fraction
of the task), which gives the same tree every time.  (With one thread the adapter runs the classic
single call, whose ties fall where its search order puts them; the error is the
same.)  With a gap (`max_gap` > 0) the answer is within the gap, but which tree
within it is found depends on timing.

Stop and time limit: every call polls the Monitor's control array; a thread takes
no new feature once the run is stopped, so all threads end within one poll.  A run
stopped before every feature was searched is not complete: its tree is the best one
found, its lower bound the adapter's unavoidable error.
"""

from __future__ import annotations

import threading

import numpy as np

from engine.solvers import kernel_support as ks
from engine.solvers.contree.kernel import N_STATS, contree_search, root_order

# Kernel output: (feature, threshold, left, right, value, error, lower, completed,
# statistics, cache figures); positions used below.
OUT_ERROR, OUT_LOWER, OUT_COMPLETED, OUT_STATS, OUT_CACHE = 5, 6, 7, 8, 9
# Least tasks per thread, and most parts per feature.
TASKS_PER_THREAD = 4
MAX_PARTS = 8


def tie_margin(eps: float) -> float:
    """What the shared bound keeps above a found error: half a unit of weight when
    every weight is an integer (errors differ by at least 1), else four tolerances."""
    return 0.5 if eps == 0.0 else 4.0 * eps


def search(problem, G: float, IDX, RK, z1, z2, cap: int, entries: int, pool_nodes: int,
           interval: float, threads: int, start_bound: float, monitor, make_tree):
    """The adapter's `contree_search` call on `threads` threads; returns what that
    call returns (statistics summed, cache figures summed, peak the largest).

    `start_bound`: the error of a tree known beforehand (the warm start's), or inf.
    """
    X, y, w, K, D = problem.X, problem.y, problem.w, problem.n_classes, problem.depth
    order, splitting = root_order(IDX, RK, y, w, K)
    parts = min(MAX_PARTS, -(-TASKS_PER_THREAD * threads // max(splitting, 1)))
    tasks = [(int(f), part) for f in order[:splitting] for part in range(parts)]
    tie = tie_margin(problem.eps)
    leaf = _leaf_error(y, w, K)
    shared = np.array([min(leaf, start_bound) + tie])
    taken = iter(range(len(tasks)))
    lock = threading.Lock()
    results: dict[int, tuple] = {}

    def call(task, shared_bound, goal, idx, rk, sink):
        feature, part = tasks[task]
        return contree_search(X, y, w, K, D, G, problem.eps, idx, rk, z1, z2, cap, entries,
                              pool_nodes, interval, feature, part, parts, order,
                              shared_bound, tie, goal, monitor.control, *sink.buffers())

    def worker(sink):
        # the root's sorted lists are read only; the lower levels are written
        idx, rk = (IDX, RK) if IDX.shape[0] == 1 else (IDX.copy(), RK.copy())
        while not monitor.should_stop():
            with lock:
                task = next(taken, None)
            if task is None:
                return
            results[task] = call(task, shared, -np.inf, idx, rk, sink)

    sinks = [ks.IncumbentSink(cap, K) for _ in range(max(1, min(threads, len(tasks))))]
    monitor.run_threads([lambda s=s: worker(s) for s in sinks], sinks, make_tree)

    searched = sorted(results)
    completed = (len(searched) == len(tasks) and monitor.control[ks.C_STOP] == 0.0
                 and all(results[p][OUT_COMPLETED] for p in searched))
    best = min((results[p][OUT_ERROR] for p in searched), default=leaf)
    closest = problem.eps if problem.eps > 0 else 0.0
    winner = next((p for p in searched if results[p][OUT_ERROR] <= best + closest), None)
    if winner is None or best >= leaf - problem.eps:
        out = _leaf_answer(y, w, K, leaf)
    else:
        out = results[winner]
        if completed and G == 0:
            again = monitor.run_kernel(call, (winner, np.array([best + tie]), best,
                                              IDX.copy(), RK.copy(), ks.IncumbentSink(cap, K)))
            if again[OUT_COMPLETED] and abs(again[OUT_ERROR] - best) <= closest:
                out = again
    lower = min([best] + [results[p][OUT_LOWER] for p in searched]) if completed else 0.0
    stats = sum((results[p][OUT_STATS] for p in searched), np.zeros(N_STATS))
    caches = [results[p][OUT_CACHE] for p in searched]
    cache = np.array([sum(c[0] for c in caches), max((c[1] for c in caches), default=0),
                      sum(c[2] for c in caches)], dtype=np.int64)
    return (*out[:5], min(best, leaf), lower, completed, stats, cache)


def _leaf_error(y, w, K) -> float:
    totals = np.bincount(y, weights=w, minlength=K)
    return float(totals.sum() - totals.max()) if len(y) else 0.0


def _leaf_answer(y, w, K, leaf):
    """The kernel's first outputs for the best leaf (when no split beats it)."""
    totals = np.bincount(y, weights=w, minlength=K).astype(np.float64)
    return (np.array([-1], dtype=np.int32), np.zeros(1), np.array([-1], dtype=np.int32),
            np.array([-1], dtype=np.int32), totals.reshape(1, K), leaf)
