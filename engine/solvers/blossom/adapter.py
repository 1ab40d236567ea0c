"""`blossom`: optimal decision trees of bounded depth, anytime (Demirović et al. 2021).

This module prepares the data the way Section 4.3 of the paper describes and runs the
numba kernel of `kernel` through the Monitor.

Preprocessing (`preprocess`, on by default; every step is exact): the reduction of
`binary_rows` with the paper's Section 4.3 steps generalised to several classes:
redundant features dropped (the tree is mapped back to the original columns), identical
rows merged into weights, and each distinct vector's least class weight m removed from
every class, an offset (K-1)·Σm added back to every reported error (with two classes:
the paper's number of pairs of inconsistent rows).

Whether or not it preprocesses, the solver knows the weight Σ_vectors (total - max_k
c_k) that no tree can classify correctly (identical inputs with different classes);
that is its proven lower bound until the search is exhausted, and reaching it stops
the search with a proof.

Incumbents stream from the kernel into the Monitor; the reported `train_error` is
the error of the returned tree on `data` itself.

A cost per leaf (`leaf_cost`, see `protocol.LEAF_COST`): the kernel minimises the
objective error + penalty x leaves, penalty = leaf_cost x the training weight, passed
as a float64 (0: the error alone, the same search as without it).  The offset and
the merged rows stay exact for it (a leaf holds whole groups of identical rows, and
the leaves do not change), so the kernel's objective plus the offset is the tree's.
Its lower bound is the unavoidable weight plus one leaf.  Objectives with a penalty
are not integers even with integer weights, so they are compared with the tolerance
of fractional weights (`TOLERANCE`; the counts stay exact integers).

A least leaf weight (`min_leaf`, 1 = none): the kernel gets M = float(min_leaf) above
1 (0.0 otherwise) and returns the optimum among trees whose every split leaves a
weight >= M on both sides (the root alone is always a tree; see "A least leaf weight"
in `kernel`, which also says why its similarity bound is then off and what stays).
Subtracting each vector's least class weight would change the weights of the leaves,
so with M the rows are only merged (offset 0, the data's weights); dropping constant,
equal or complementary features keeps every split's two row sets, so it stays.  The
unavoidable weight (+ one leaf) is still a lower bound (the single leaf is allowed),
and the greedy warm start is grown under the same least leaf (`warm_start.least_leaf`)
so it is a tree this solver could return.
"""

from __future__ import annotations

import numpy as np

from engine.model.tree import Tree
from engine.solvers import kernel_support as ks
from engine.solvers.binary_columns import transposed
from engine.solvers.binary_rows import BinaryRows, bound_weights, exactness
from engine.solvers.blossom import cache, parallel
from engine.solvers.blossom.kernel import (
    ST_BACKTRACKS,
    ST_CACHE_CLEARS,
    ST_CACHE_ENTRIES,
    ST_CACHE_HITS,
    ST_CACHE_LOOKUPS,
    ST_CACHE_SHARED,
    ST_CACHE_STORES,
    ST_EXPANSIONS,
    ST_FIRST_TREE_ERR,
    ST_FIRST_TREE_T,
    ST_IMPROVEMENTS,
    ST_LAST_LEVEL,
    ST_PEAK_RECORDS,
    ST_PEAK_SLOTS,
    ST_PRUNED,
    ST_PUBLISHED,
    ST_SIMILAR,
    blossom_search,
)
from engine.solvers.protocol import DEPTH, LEAF_COST, Param, Result, Solver, leaf_penalty
from engine.solvers.registry import register
from engine.solvers.threads import THREADS, resolve

# Least seconds between two trees the kernel publishes (the Monitor drains every 20 ms).
PUBLISH_INTERVAL = 0.002
# Bytes the kernel's slot and record pools may take before it stops (memory_limit).
MEMORY_BUDGET = 2 << 30
# Relative tolerance (of the training weight) of comparisons between objectives with
# a cost per leaf, as `binary_rows.exactness` gives fractional weights.
TOLERANCE = 1e-9


class Problem:
    """The kernel's input derived from a Dataset (see the module docstring)."""

    def __init__(self, data, preprocess: bool, progress=None, subtract_least: bool = True):
        rows = BinaryRows(data, "Blossom", drop_redundant=preprocess, progress=progress)
        self.n_classes = rows.n_classes
        self.fmap = rows.fmap
        self.Xg, self.Vg = np.ascontiguousarray(rows.vectors, dtype=np.uint8), rows.V
        self.lower_bound = rows.unavoidable
        if preprocess:
            gi, ki, self.w, self.offset, residual = rows.merged(subtract_least)
            self.X = rows.vectors_at(gi)
            self.y = ki.astype(np.int64)
            self.lbw = bound_weights(gi, residual)
            # gi is sorted (np.nonzero's row-major order)
            self.distinct_train = int(len(gi) and 1 + np.count_nonzero(np.diff(gi)))
        else:
            self.X, self.y, self.w, self.offset = rows.X, rows.y, rows.w, 0.0
            self.lbw = bound_weights(rows.group, rows.residual)
            self.distinct_train = len(rows.V)
        self.Xt = transposed(self.X)
        self.exact, self.eps = exactness(self.w, self.lbw)
        if self.exact and self.w.sum() + self.lbw.sum() < 2 ** 31 - 1:
            # integer counts: exact, and twice as many per vector instruction
            self.w = self.w.astype(np.int32)
        self.stats = rows.stats(len(self.y), self.offset)

    def max_nodes(self, depth: int) -> int:
        leaves = max(self.Xg.shape[0], 1)
        return int(min(2 ** (depth + 1) - 1, 2 * leaves - 1)) if depth < 62 else 2 * leaves - 1

    def slot_bound(self, depth: int) -> int:
        full = 2 ** (depth - 1) if 1 <= depth < 62 else 1 << 62
        return int(min(full, max(self.distinct_train, 1)) + 2)


@register
class Blossom(Solver):
    name = "blossom"
    title = "Blossom"
    summary = ("Optimal tree of bounded depth, anytime: a greedy-quality tree at once, "
               "better ones as it searches, then a proof (0/1 features).")
    needs = "binary"
    proves_optimality = True
    params = (DEPTH,
              Param("preprocess", "bool", True,
                    "Merge identical rows, cancel rows contradicting identical rows of "
                    "another class and drop redundant features before searching "
                    "(exact; usually faster)."),
              Param("lower_bound", "bool", True,
                    "Prune with the lower bound of optimal sibling subtrees (exact)."),
              Param("cache", "bool", True,
                    "Remember solved branches two levels above the leaves, so that one "
                    "reached again by the same tests in another order is not searched "
                    "again (exact)."),
              Param("min_leaf", "int", 1, "Least rows (total weight) in every leaf.", 1, None),
              LEAF_COST,
              THREADS)

    @classmethod
    def kernels(cls) -> tuple:
        return (blossom_search,)

    @classmethod
    def warm_start(cls, params) -> bool:
        return True

    def solve(self, data, params, monitor) -> Result:
        depth = params["depth"]
        # the least leaf weight: 0.0 (none) unless min_leaf > 1
        least = float(params["min_leaf"]) if params["min_leaf"] > 1 else 0.0
        # with one, the leaves' weights must stay the data's: merge rows, subtract none
        problem = Problem(data, params["preprocess"], monitor.checkpoint,
                          subtract_least=not least)
        K = problem.n_classes

        def make_tree(feature, threshold, left, right, value):
            return Tree.from_arrays(feature, threshold, left, right, value, data.prep)

        threads = resolve(params["threads"]) if depth >= 3 and problem.X.shape[1] > 1 else 1
        penalty = leaf_penalty(params, data.w.sum())
        eps = problem.eps
        if penalty and not eps:
            # objectives are no longer integers: compare them as fractional errors are
            eps = TOLERANCE * max(float(data.w.sum()), 1.0)
        # every tree has a leaf: the unavoidable error + penalty bounds the objective
        global_lb = problem.lower_bound + penalty
        args = (problem.X, problem.Xt, problem.y, problem.w, problem.lbw, K, depth,
                problem.exact, eps, penalty, least, params["lower_bound"], params["cache"],
                problem.Xg, problem.Vg,
                problem.fmap, problem.offset, global_lb, PUBLISH_INTERVAL,
                problem.slot_bound(depth), MEMORY_BUDGET // threads)
        if threads > 1:
            (feature, threshold, left, right, value, error, optimal,
             raw) = parallel.search(
                args, threads, monitor.floor - problem.offset, eps, monitor,
                lambda: ks.IncumbentSink(problem.max_nodes(depth), K), make_tree,
                lambda: cache.empty(depth, params["cache"]))
        else:
            sink = ks.IncumbentSink(problem.max_nodes(depth), K)
            (feature, threshold, left, right, value, error, optimal, raw,
             _) = ks.run(
                monitor, blossom_search, (*args, -1, np.array([np.inf]), 0.0, -np.inf,
                                          monitor.control, *sink.buffers(),
                                          cache.empty(depth, params["cache"])),
                sink, make_tree, ks.search_work(*problem.X.shape, depth))
        tree = make_tree(feature, threshold, left, right, value)
        train_error = tree.error(data.X, data.y, data.w)
        objective = train_error + penalty * tree.n_leaves if penalty else train_error
        kernel_error = float(error) + problem.offset   # the kernel's objective
        optimal = bool(optimal)
        lower_bound = objective if optimal else min(global_lb, objective)
        stats = dict(problem.stats)
        stats.update({
            "kernel_error": kernel_error,
            "expansions": int(raw[ST_EXPANSIONS]),
            "last_level_solved": int(raw[ST_LAST_LEVEL]),
            "backtracks": int(raw[ST_BACKTRACKS]),
            "pruned_by_bound": int(raw[ST_PRUNED]),
            "root_improvements": int(raw[ST_IMPROVEMENTS]),
            "trees_published": int(raw[ST_PUBLISHED]),
            "peak_branches": int(raw[ST_PEAK_SLOTS]),
            "peak_records": int(raw[ST_PEAK_RECORDS]),
            "cache_lookups": int(raw[ST_CACHE_LOOKUPS]),
            "cache_hits": int(raw[ST_CACHE_HITS]),
            "cache_stores": int(raw[ST_CACHE_STORES]),
            "cache_peak_entries": int(raw[ST_CACHE_ENTRIES]),
            "cache_clears": int(raw[ST_CACHE_CLEARS]),
            "cache_shared": int(raw[ST_CACHE_SHARED]),
            "similarity_bounds": int(raw[ST_SIMILAR]),
            "first_tree_s": float(raw[ST_FIRST_TREE_T]),
            "first_tree_error": float(raw[ST_FIRST_TREE_ERR]) + problem.offset,
            "nodes": tree.n_nodes,
            "threads": threads,
        })
        status = monitor.final_status(optimal)
        return Result(tree, train_error, lower_bound, optimal, status, monitor.elapsed(),
                      list(monitor.incumbents), stats, penalty)
