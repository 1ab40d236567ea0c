"""`contree`: optimal trees of bounded depth on numeric features (Brița et al., AAAI 2025).

ConTree searches thresholds directly on the feature values (no binarisation; 0/1
columns are numeric columns with two values): a dynamic programme over subsets of
rows and remaining depth, with interval pruning of thresholds from the similarity
lower bound, a linear-time depth-two subroutine on data sorted once per feature, and
a cache of solved subproblems.  The search itself is in `kernel`; this module
prepares the data, sizes the memory and maps the result to a `Tree`.

Thresholds are mid-points between consecutive distinct values of the rows at each
node, so the tree sends every training row where the search did, and the reported
`train_error` (the returned tree's error on `data`) equals the search's value.

`leaf_cost` adds a cost per leaf (`protocol.LEAF_COST`, P weight each): the kernel
minimises the error + P x leaves with the same rules, because they hold for it too --
moving rows between the two sides of a split changes a subtree's cost by at most
their weight (its leaves stay as many), a side's optimum only grows with its rows,
and every tree costs P at least (the bound below which nothing is searched).

`min_leaf` asks for at least that weight in every leaf (the root alone excepted).
Then a subtree's optimum no longer moves by at most the weight of the rows moved (a
leaf that falls under the weight changes it at once), so the similarity rules
(interval pruning and shrinking, the zero-error clip, D2Split's skip) are off and the
search evaluates every split point with that weight on both sides; the bounds that
remain (each subproblem's own, the cache, the upper bound) keep it exact.

`max_gap` trades optimality for time: a node may prune splits that could improve it
by less than its share of the gap (half for the node, a quarter for each child, as in
the paper).  With max_gap = 0 a finished search is a proof of optimality; with a gap
the result is within the gap of the optimum and reported as finished, not optimal,
with the search's proven lower bound (at least error - gap).  Stopped early (time,
cancel), the lower bound is the weight of rows that identical rows of another class
make unavoidable.

Rows of weight 0 are left out; weights need not be integers (with integral weights
every sum is exact, otherwise improvements must exceed 1e-9 of the total weight).
A dataset without features, or with at most one row of positive weight, gets the best
leaf at once.

A numeric target (a regression, `data.regression`) goes to the kernel in `regression`:
the least weighted squared error (SSE; each leaf predicts its weighted mean) plus
`leaf_penalty` per leaf, `leaf_cost` being a share of the root's SSE (`error_scale`,
pystreed's `cost_complexity`), exactly, with `min_leaf` as above; its depth-two
subproblems are solved by sorted sweeps with running sums (see that module for the
bounds it prunes with, and why ConTree's similarity rules are not among them).  The
tree's nodes hold (weight, mean, SSE) computed from the data in two passes, and
`train_error` is the tree's SSE on `data`.  `max_gap` counts misclassified rows and is
refused for a regression; the regression search runs on one thread (`threads` has no
effect on it); stopped early, it returns its best tree with the least bound left in
its queues as `lower_bound`.

Memory (`memory_mb`) covers the working arrays (8 * features * rows bytes per level of
depth >= 2) and the cache.  When the working arrays alone do not fit, the run stops
at once with status memory_limit and a single leaf; the cache takes what remains (up
to a fixed maximum) and is emptied whenever it is full (an eviction), so the search
never needs more.
"""

from __future__ import annotations

import numpy as np

from engine.data.dataset import row_groups
from engine.errors import DataError, ParameterError
from engine.model.tree import Tree
from engine.solvers import kernel_support as ks
from engine.solvers.contree import parallel
from engine.solvers.contree.kernel import (
    ST_CACHE_HITS,
    ST_CACHE_REUSE,
    ST_CT_CALLS,
    ST_D2_CALLS,
    ST_IMPROVEMENTS,
    ST_PRUNED_SP,
    ST_PUBLISHED,
    ST_SKIPPED_RIGHT,
    ST_SPLITS,
    contree_search,
    root_order,
)
from engine.solvers.contree import regression as reg
from engine.solvers.protocol import (
    DEPTH,
    LEAF_COST,
    Param,
    Result,
    Solver,
    Status,
    error_scale,
    leaf_penalty,
)
from engine.solvers.registry import register
from engine.solvers.threads import THREADS, resolve
from engine.vocabulary import CLASSIFICATION, REGRESSION

# Least seconds between two trees the kernel publishes (the Monitor drains every 20 ms).
PUBLISH_INTERVAL = 0.002
# Bytes per cache entry: its figures (32), the dictionary's share (~96), and room for
# POOL_NODES_PER_ENTRY tree nodes of 12 bytes.
POOL_NODES_PER_ENTRY = 8
ENTRY_BYTES = 32 + 96 + 12 * POOL_NODES_PER_ENTRY
# The cache never takes more than this many entries (about 1 GB).
MAX_CACHE_ENTRIES = 1 << 22
# Seed of the random row keys that identify cached subsets of rows.
HASH_SEED = 20250226

# ConTree's work in `ks.run`'s measure: rows x features ** depth (every threshold of a
# feature is a split), each counting this much (avila at depth 2, 20,867 rows x 10
# features: 1.3 s).
CELL_COST = 100


def _unavoidable_error(X: np.ndarray, y: np.ndarray, w: np.ndarray, K: int) -> float:
    """Weight that no tree can classify correctly: identical rows of different classes."""
    if len(y) == 0:
        return 0.0
    _, group = row_groups(X)
    V = np.zeros((group.max() + 1, K))
    np.add.at(V, (group, y), w)
    return float((V.sum(axis=1) - V.max(axis=1)).sum())


class Problem:
    """The kernel's input derived from a Dataset."""

    def __init__(self, data, depth: int, progress, leaf_cost: float = 0.0,
                 min_leaf: float = 1.0):
        X, w = _checked_inputs(data, progress)
        keep = w > 0
        self.n_classes = max(int(data.n_classes), 1)
        self.X = np.ascontiguousarray(X[keep])
        self.y = np.ascontiguousarray(np.asarray(data.y, dtype=np.int64)[keep])
        self.w = np.ascontiguousarray(w[keep])
        n, F = self.X.shape
        self.n, self.F, self.depth = n, F, depth
        self.total = float(self.w.sum())
        self.penalty = leaf_penalty({"leaf_cost": leaf_cost}, self.total)
        # the least weight of a leaf for the kernel: 0 for none (one row, the default)
        self.least = float(min_leaf) if min_leaf > 1 else 0.0
        # sums are exact with integral weights and no cost per leaf (sums of a
        # fraction of the weight taken in different orders are not)
        integral = bool(np.all(self.w == np.floor(self.w)) and self.total < 2.0 ** 52
                        and self.penalty == 0)
        self.eps = 0.0 if integral else 1e-9 * max(self.total, 1.0)
        self.slots = depth - min(depth, 2) + 1
        # sorted lists, per-level branch state, row codes and keys; the tree buffers are
        # only touched as far as trees reach (counted for trees of up to 4096 nodes)
        self.work_bytes = 8 * self.slots * F * n + 64 * self.slots * n + 40 * n \
            + 24 * (depth + 1) * min(self.tree_cap(), 4096)
        self.stats = {"rows": int(data.n_rows), "rows_used": n, "features": F}

    def tree_cap(self) -> int:
        leaves = max(self.n, 1)
        if self.depth < 40:
            return int(min(2 ** (self.depth + 1) - 1, 2 * leaves - 1))
        return 2 * leaves - 1

    def sorted_lists(self) -> tuple[np.ndarray, np.ndarray]:
        """IDX/RK for the kernel: the top slot holds every feature's rows by value."""
        n, F = self.n, self.F
        IDX = np.empty((self.slots, F, n), dtype=np.int32)
        RK = np.empty((self.slots, F, n), dtype=np.int32)
        top = self.slots - 1
        for f in range(F):
            order = np.argsort(self.X[:, f], kind="quicksort")
            IDX[top, f] = order
            if n:
                v = self.X[order, f]
                RK[top, f, 0] = 0
                np.cumsum(v[1:] != v[:-1], out=RK[top, f, 1:])
        return IDX, RK

    def gap(self, max_gap: float) -> float:
        """The allowed gap in weight: max_gap rows if >= 1, else that share of the total."""
        return float(max_gap) if max_gap >= 1 else float(max_gap) * self.total


@register
class ConTree(Solver):
    name = "contree"
    title = "ConTree"
    summary = ("Optimal tree of bounded depth straight on numeric features, no "
               "binarisation needed: fast to depth 3, slower beyond.")
    needs = "any"
    proves_optimality = True
    tasks = (CLASSIFICATION, REGRESSION)
    params = (DEPTH,
              Param("max_gap", "float", 0.0,
                    "Allowed distance to the optimal error: rows (total weight) when "
                    ">= 1, else a fraction of all rows; 0 proves optimality.", 0.0, None),
              Param("memory_mb", "int", 2048,
                    "Memory for the search and its cache of solved subproblems (MB); "
                    "a full cache is emptied and the search goes on.", 1, 1 << 20),
              Param("min_leaf", "int", 1,
                    "Least rows (total weight) in every leaf; above 1 the search "
                    "tries every split point (its pruning rules need leaves of any "
                    "size), so it is slower.", 1, None),
              LEAF_COST,
              THREADS)

    @classmethod
    def kernels(cls) -> tuple:
        return (contree_search, root_order, reg.regression_search)

    @classmethod
    def warm_start(cls, params) -> bool:
        return True   # the greedy tree's thresholds are among those ConTree searches

    def solve(self, data, params, monitor) -> Result:
        if data.regression:
            return _solve_regression(data, params, monitor)
        depth = params["depth"]
        problem = Problem(data, depth, monitor.checkpoint, params["leaf_cost"],
                          params["min_leaf"])
        K = problem.n_classes
        penalty = problem.penalty
        G = problem.gap(params["max_gap"])
        cap = problem.tree_cap()
        budget = int(params["memory_mb"]) << 20

        def make_tree(feature, threshold, left, right, value):
            return Tree.from_arrays(feature, threshold, left, right, value, data.prep)

        stats = dict(problem.stats)
        if problem.F == 0 or problem.n <= 1:
            # nothing to split: the best leaf is optimal
            tree = self._leaf(data, K)
            error = tree.error(data.X, data.y, data.w)
            monitor.publish(tree, error + penalty, error + penalty)
            stats.update({"kernel_error": error, "gap": problem.gap(params["max_gap"]),
                          "nodes": 1})
            return Result(tree, error, error + penalty, True, Status.OPTIMAL,
                          monitor.elapsed(), list(monitor.incumbents), stats, penalty)
        stats["memory_needed_mb"] = round(problem.work_bytes / 2 ** 20, 3)
        if problem.work_bytes > budget:
            return self._out_of_memory(data, K, monitor, stats, penalty)
        # every thread has its working arrays and its share of the cache in the budget
        threads = min(resolve(params["threads"]), budget // problem.work_bytes)
        threads = threads if depth >= 2 and problem.F > 1 else 1
        entries = (budget - threads * problem.work_bytes) // ENTRY_BYTES // threads
        entries = int(min(MAX_CACHE_ENTRIES, entries)) if depth >= 3 else 0
        stats["threads"] = threads
        try:
            IDX, RK = problem.sorted_lists()
            rng = np.random.default_rng(HASH_SEED)
            z1 = rng.integers(0, np.iinfo(np.uint64).max, problem.n, dtype=np.uint64,
                              endpoint=True)
            z2 = rng.integers(0, np.iinfo(np.uint64).max, problem.n, dtype=np.uint64,
                              endpoint=True)
            pool = entries * POOL_NODES_PER_ENTRY
            if threads > 1:
                (feature, threshold, left, right, value, error, lower, completed, raw,
                 cache) = parallel.search(problem, G, IDX, RK, z1, z2, cap, entries, pool,
                                          PUBLISH_INTERVAL, threads, monitor.floor,
                                          monitor, make_tree)
            else:
                sink = ks.IncumbentSink(cap, K)
                (feature, threshold, left, right, value, error, lower, completed, raw,
                 cache) = ks.run(
                    monitor, contree_search,
                    (problem.X, problem.y, problem.w, K, depth, G, problem.eps, penalty,
                     problem.least, IDX, RK,
                     z1, z2, cap, entries, pool, PUBLISH_INTERVAL, -1, 0, 1,
                     np.arange(problem.F, dtype=np.int64), np.array([np.inf]), 0.0, -np.inf,
                     monitor.control, *sink.buffers()),
                    sink, make_tree,
                    CELL_COST * ks.search_work(problem.n, problem.F, depth + 1))
        except MemoryError:
            return self._out_of_memory(data, K, monitor, stats, penalty)
        tree = make_tree(feature, threshold, left, right, value)
        train_error = tree.error(data.X, data.y, data.w)
        objective = train_error + penalty * tree.n_leaves
        completed = bool(completed)
        optimal = completed and G == 0
        if optimal:
            lower_bound = objective
        else:
            lower_bound = max(float(lower), 0.0) if completed else 0.0
            if not completed:   # (every tree has a leaf)
                lower_bound = _unavoidable_error(problem.X, problem.y, problem.w,
                                                 K) + penalty
            lower_bound = min(lower_bound, objective)
        stats.update({
            "kernel_error": float(error),
            "gap": G,
            "subproblems": int(raw[ST_CT_CALLS]),
            "d2_calls": int(raw[ST_D2_CALLS]),
            "splits_evaluated": int(raw[ST_SPLITS]),
            "cache_hits": int(raw[ST_CACHE_HITS]),
            "cache_reused": int(raw[ST_CACHE_REUSE]),
            "cache_entries": int(cache[0]),
            "cache_peak_entries": int(cache[1]),
            "cache_evictions": int(cache[2]),
            "cache_capacity": entries,
            "intervals_pruned": int(raw[ST_PRUNED_SP]),
            "second_child_skipped": int(raw[ST_SKIPPED_RIGHT]),
            "root_improvements": int(raw[ST_IMPROVEMENTS]),
            "trees_published": int(raw[ST_PUBLISHED]),
            "nodes": tree.n_nodes,
        })
        status = monitor.final_status(optimal, heuristic_done=completed)
        return Result(tree, train_error, lower_bound, optimal, status, monitor.elapsed(),
                      list(monitor.incumbents), stats, penalty)

    def _out_of_memory(self, data, K, monitor, stats, penalty) -> Result:
        """Status memory_limit with the best tree so far (a leaf, or the last one the
        kernel published)."""
        tree = monitor.best_tree if monitor.best_tree is not None else self._leaf(data, K)
        error = tree.error(data.X, data.y, data.w)
        monitor.control[ks.C_STOP] = ks.STOP_MEMORY
        if monitor.best_tree is None:
            monitor.publish(tree, error + penalty, 0.0)
        stats["nodes"] = tree.n_nodes
        return Result(tree, error, 0.0, False, Status.MEMORY_LIMIT, monitor.elapsed(),
                      list(monitor.incumbents), stats, penalty)

    @staticmethod
    def _leaf(data, K) -> Tree:
        weights = np.bincount(np.asarray(data.y, dtype=np.int64), weights=data.w,
                              minlength=K).astype(np.float64)
        return Tree.leaf(weights, data.prep)


def _checked_inputs(data, progress) -> tuple[np.ndarray, np.ndarray]:
    """The features as the kernels read them and the row weights, refused in one
    sentence when a weight is negative or not finite or a feature value not finite."""
    X = ks.kernel_array(data.X, np.float64, progress)
    w = np.asarray(data.w, dtype=np.float64)
    if (w < 0).any() or not np.isfinite(w).all():
        raise DataError("Row weights must be finite and not negative.")
    if X.size and not np.isfinite(X).all():
        raise DataError("ConTree needs finite feature values: fill or drop the "
                        "missing ones.")
    return X, w


# ------------------------------------------------------------------ regression
# Relative tolerance of the regression search (a share of the root's SSE): splits that
# could improve a node by less are not pursued, far below what float sums resolve in
# the comparisons of the tests (1e-9).
REGRESSION_TOLERANCE = 1e-12


def regression_bytes(n: int, F: int, depth: int) -> int:
    """Memory of the regression kernel's arrays: the sorted lists (index, rank, weight,
    target: 24 bytes a cell) per slot, and per level the candidate split points,
    their two bounds and the queue (56 bytes a cell); the tree buffers of each level
    as far as its trees reach (32 bytes a node), and the sink's (48)."""
    slots = max(depth - 1, 1)
    levels = sum(_regression_tree_cap(n, d) for d in range(depth + 1))
    return 80 * slots * F * n + 16 * n + 32 * levels + 48 * _regression_tree_cap(n, depth)


def _regression_tree_cap(n: int, depth: int) -> int:
    leaves = max(n, 1)
    if depth < 40:
        return int(min(2 ** (depth + 1) - 1, 2 * leaves - 1))
    return 2 * leaves - 1


def _node_values(feature, threshold, left, right, X, y, w) -> np.ndarray:
    """(weight, weighted mean, SSE) of the rows reaching each node (two passes)."""
    m = len(feature)
    feature = np.asarray(feature, dtype=np.int64)
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    rows = np.arange(len(y))
    at = np.zeros(len(y), dtype=np.int64)
    visits = []   # (rows, the node they are at) at each depth
    while rows.size:
        visits.append((rows, at))
        inner = feature[at] >= 0
        rows, at = rows[inner], at[inner]
        go = X[rows, feature[at]] <= np.asarray(threshold)[at]
        at = np.where(go, left[at], right[at])
    W = np.zeros(m)
    S = np.zeros(m)
    for rows, at in visits:
        W += np.bincount(at, weights=w[rows], minlength=m)
        S += np.bincount(at, weights=w[rows] * y[rows], minlength=m)
    mean = np.divide(S, W, out=np.zeros(m), where=W > 0)
    E = np.zeros(m)
    for rows, at in visits:
        E += np.bincount(at, weights=w[rows] * (y[rows] - mean[at]) ** 2, minlength=m)
    return np.column_stack([W, mean, E])


def _solve_regression(data, params, monitor) -> Result:
    """`contree` on a numeric target: the least SSE + leaf_penalty x leaves over the
    trees of depth <= `depth` on the numeric features (see `regression`)."""
    if params.get("max_gap", 0.0) > 0:
        raise ParameterError("max_gap is a number of misclassified rows and applies to "
                             "classification only: contree's regression search is exact "
                             "(leave max_gap at 0).")
    depth = int(params["depth"])
    X, w = _checked_inputs(data, monitor.checkpoint)
    y = np.asarray(data.y, dtype=np.float64)
    if not np.isfinite(y).all():
        raise DataError("ConTree needs a finite target on every row.")
    scale = error_scale(data)
    penalty = leaf_penalty(params, scale)
    keep = w > 0
    Xk = np.ascontiguousarray(X[keep])
    yk = y[keep]
    wk = np.ascontiguousarray(w[keep])
    n, F = Xk.shape
    stats = {"rows": int(data.n_rows), "rows_used": n, "features": F, "threads": 1}

    def make_tree(feature, threshold, left, right, value=None):
        value = _node_values(np.asarray(feature), np.asarray(threshold),
                             np.asarray(left), np.asarray(right), X, y, w)
        return Tree.from_arrays(feature, threshold, left, right, value, data.prep)

    def finish(tree, lower, optimal, completed, extra) -> Result:
        error = tree.error(data.X, data.y, data.w)
        objective = error + penalty * tree.n_leaves
        lower = objective if optimal else min(max(float(lower), 0.0), objective)
        stats.update(extra, nodes=tree.n_nodes)
        status = monitor.final_status(optimal, heuristic_done=completed)
        return Result(tree, error, lower, optimal, status, monitor.elapsed(),
                      list(monitor.incumbents), stats, penalty)

    leaf = make_tree(np.array([-1]), np.array([0.0]), np.array([-1]), np.array([-1]))
    if depth == 0 or F == 0 or n <= 1:
        error = leaf.error(data.X, data.y, data.w)
        monitor.publish(leaf, error + penalty, error + penalty)
        return finish(leaf, error + penalty, True, True, {})
    need = regression_bytes(n, F, depth)
    stats["memory_needed_mb"] = round(need / 2 ** 20, 3)
    if need > int(params["memory_mb"]) << 20:
        monitor.control[ks.C_STOP] = ks.STOP_MEMORY
        tree = monitor.best_tree if monitor.best_tree is not None else leaf
        if monitor.best_tree is None:
            monitor.publish(tree, tree.error(data.X, data.y, data.w) + penalty, 0.0)
        return finish(tree, 0.0, False, False, {})
    least = float(params["min_leaf"]) if params["min_leaf"] > 1 else 0.0
    mean = float(wk @ yk) / float(wk.sum())
    yc = yk - mean
    eps = REGRESSION_TOLERANCE * max(float(wk @ yc ** 2), 1e-300)
    slots = max(depth - 1, 1)
    IDX = np.empty((slots, F, n), dtype=np.int32)
    RS = np.empty((slots, F, n), dtype=np.int32)
    WS = np.empty((slots, F, n))
    YS = np.empty((slots, F, n))
    top = slots - 1
    for f in range(F):
        monitor.checkpoint("sorting the rows for the solver", f / F)
        order = np.argsort(Xk[:, f])
        IDX[top, f] = order
        v = Xk[order, f]
        RS[top, f, 0] = 0
        np.cumsum(v[1:] != v[:-1], out=RS[top, f, 1:])
        WS[top, f] = wk[order]
        YS[top, f] = yc[order]
    cap = _regression_tree_cap(n, depth)
    sink = ks.IncumbentSink(cap, 3)
    feature, threshold, left, right, cost, lower, completed, raw = ks.run(
        monitor, reg.regression_search,
        (Xk, yc, wk, depth, least, float(penalty), eps, IDX, RS, WS, YS, cap,
         monitor.control, *sink.buffers()),
        sink, make_tree, CELL_COST * ks.search_work(n, F, depth + 1))
    tree = make_tree(feature, threshold, left, right)
    completed = bool(completed)
    extra = {"kernel_error": float(cost) - penalty * tree.n_leaves,
             "subproblems": int(raw[reg.ST_NODES]),
             "d2_evaluations": int(raw[reg.ST_D2_EVALS]),
             "splits_evaluated": int(raw[reg.ST_SPLITS]),
             "intervals_pruned": int(raw[reg.ST_PRUNED]),
             "root_improvements": int(raw[reg.ST_IMPROVEMENTS]),
             "trees_published": int(raw[reg.ST_PUBLISHED])}
    return finish(tree, lower, completed, completed, extra)
