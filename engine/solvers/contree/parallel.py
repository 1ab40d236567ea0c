"""ConTree on several threads (the scheme: `engine.solvers.root_tasks`).

A task is a root feature and a part of its split points ("the best tree whose root
splits f within part p").  Features come in the order the single-threaded search
tries them (`root_order`), each cut into `parts` equal runs of split points so that
there are at least TASKS_PER_THREAD tasks per thread (with few features the last one
would otherwise run alone while the other threads idle), the first one into a part per
thread at least (its search is often the longest: on magic its one task took 47 s of
a 48 s run on two threads, the other thread done with every other task at 37 s).  A
task is one call of `contree_search` with `root_feature` and `part`; a thread has its
own cache and its own copy of the per-level row lists, while the root's sorted lists
and the data are shared, read only.  With integer weights and no gap a task keeps, of its trees of least
error, the one of its first split point (the kernel searches the ties left of its best,
see `contree_search`), so the winning task's root split does not depend on timing; its
subtrees may (they come from a cache and from bounds that do), so that one split point
is searched again alone, with a fresh workspace: the whole final search is one split
point's subtrees.  With fractional weights the winner is searched again in pieces
(`root_tasks`).  With a gap (`max_gap` > 0) the answer is within the gap, but which
tree within it is found depends on timing, so the winner is not searched again.
(With one thread the adapter runs the classic single call, whose ties fall where its
search order puts them; the error is the same.)
"""

from __future__ import annotations

import numpy as np

from engine.solvers import kernel_support as ks
from engine.solvers import root_tasks
from engine.solvers.contree.kernel import N_STATS, contree_search, root_order

# Kernel output: (feature, threshold, left, right, value, error, lower, completed,
# statistics, cache figures); positions used below.
OUT_ERROR, OUT_LOWER, OUT_COMPLETED, OUT_STATS, OUT_CACHE = 5, 6, 7, 8, 9
# Least tasks per thread, and most parts per feature.
TASKS_PER_THREAD = 4
MAX_PARTS = 8
# Pieces per thread of the winner's final search (see `root_tasks`): finding a tree of
# the optimal error can cost nearly as much as the task itself.
FINAL_PIECES_PER_THREAD = 2


def search(problem, G: float, IDX, RK, z1, z2, cap: int, entries: int, pool_nodes: int,
           interval: float, threads: int, start_bound: float, monitor, make_tree):
    """The adapter's `contree_search` call on `threads` threads; returns what that
    call returns (statistics summed, cache figures summed, peak the largest).

    `start_bound`: the error of a tree known beforehand (the warm start's), or inf.
    """
    X, y, w, K, D = problem.X, problem.y, problem.w, problem.n_classes, problem.depth
    order, splitting = root_order(IDX, RK, y, w, K)
    parts = min(MAX_PARTS, -(-TASKS_PER_THREAD * threads // max(splitting, 1)))
    # the first feature, whose search is the longest (the best split, the weakest
    # bound), is cut into a part per thread at least
    runs = [max(parts, threads) if i == 0 else parts for i in range(splitting)]
    tasks = [(int(f), part, runs[i]) for i, f in enumerate(order[:splitting])
             for part in range(runs[i])]

    def search_part(feature, part, of, shared, margin, goal, lists, sink):
        # the trees whose root splits `feature` at a split point of run `part` of `of`
        return contree_search(X, y, w, K, D, G, problem.eps, problem.penalty,
                              problem.least, *lists, z1, z2, cap, entries, pool_nodes,
                              interval, feature, part, of, order, shared, margin, goal,
                              monitor.control, *sink.buffers())

    def call(task, shared, margin, goal, lists, sink, piece=(0, 1)):
        # piece s of S of part p of P: part p * S + s of P * S (the same split points)
        feature, part, of = tasks[task]
        s, S = piece
        return search_part(feature, part * S + s, of * S, shared, margin, goal, lists, sink)

    def workspace():
        # the root's sorted lists are read only; the lower levels are written
        return (IDX, RK) if IDX.shape[0] == 1 else (IDX.copy(), RK.copy())

    leaf = _leaf_error(y, w, K) + problem.penalty
    first_split = G == 0 and problem.eps == 0.0
    final = root_tasks.OWN if first_split else (
        root_tasks.SEARCH if G == 0 else root_tasks.NONE)

    def new_sink():
        return ks.IncumbentSink(cap, K)

    outcome = root_tasks.run(
        len(tasks), threads, call, workspace, lambda out: out[OUT_ERROR],
        lambda out: out[OUT_COMPLETED], min(leaf, start_bound), problem.eps, monitor,
        new_sink, make_tree, final=final, pieces=FINAL_PIECES_PER_THREAD * threads)
    results = outcome.results
    best = min(outcome.best, leaf)
    if outcome.winner is None or best >= leaf - problem.eps:
        out = _leaf_answer(y, w, K)
    elif first_split and outcome.completed:
        feature, threshold = results[outcome.winner][:2]
        root = int(feature[0])
        index, of = _split_index(X, IDX, RK, root, float(threshold[0]))
        out = monitor.run_kernel(search_part, (
            root, index, of, np.array([best + root_tasks.tie_margin(0.0, 1)]), 0.0,
            best, workspace(), new_sink()))
        if not out[OUT_COMPLETED]:   # stopped meanwhile: the task's own tree
            out = results[outcome.winner]
    else:
        out = outcome.final or results[outcome.winner]
    lower = min([best] + [r[OUT_LOWER] for r in results.values()]) \
        if outcome.completed else 0.0
    stats = sum((r[OUT_STATS] for r in results.values()), np.zeros(N_STATS))
    caches = [r[OUT_CACHE] for r in results.values()]
    cache = np.array([sum(c[0] for c in caches), max((c[1] for c in caches), default=0),
                      sum(c[2] for c in caches)], dtype=np.int64)
    return (*out[:5], best, lower, outcome.completed, stats, cache)


def _split_index(X, IDX, RK, feature: int, threshold: float) -> tuple[int, int]:
    """(index of the root split point of `feature` at `threshold`, number of split
    points): the kernel's split j lies between the values of dense ranks j and j + 1,
    so searching part j of that number searches that split point alone."""
    top = IDX.shape[0] - 1
    rows, ranks = IDX[top, feature], RK[top, feature]
    below = int(np.searchsorted(X[rows, feature], threshold, side="right"))
    return int(ranks[below - 1]), int(ranks[-1])


def _leaf_error(y, w, K) -> float:
    totals = np.bincount(y, weights=w, minlength=K)
    return float(totals.sum() - totals.max()) if len(y) else 0.0


def _leaf_answer(y, w, K):
    """The kernel's tree arrays for the best leaf (when no split beats it)."""
    totals = np.bincount(y, weights=w, minlength=K).astype(np.float64)
    return (np.array([-1], dtype=np.int32), np.zeros(1), np.array([-1], dtype=np.int32),
            np.array([-1], dtype=np.int32), totals.reshape(1, K))
