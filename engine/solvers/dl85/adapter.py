"""`dl85` and `cadl85`: DL8.5 and Complete Anytime DL8.5 (Kiossou, Nijssen & Schaus).

`dl85` is Algorithm 1: depth-first search over branches with a minimum support, a
maximum depth, upper-bound pruning and a cache of solved branches.  `cadl85` is
Algorithm 2: the same search restarted under a rule (purity, gain, discrepancy,
top-k, top-k*; Table 1) relaxed after each restart (monotonic, exponential or
Luby), reusing the cache, until the root is complete: run to the end it returns
the optimal tree with `optimal: True`.  Both run in the numba kernel of
`kernel` (with `cache`, `counts`, `rules`) through the Monitor; from depth 3 on
`threads` threads (`parallel`), with the memory cap shared out among them.

Data preparation (`Problem`; exact, the tree is mapped back to `data`'s columns): the
reduction of `binary_rows` (weight-0 rows ignored, redundant features dropped,
identical rows merged; with `min_support` 1 each distinct vector also loses its least
class weight, an offset added back to every error reported), and a feature that is 1
on most rows is flipped (its two branches swapped) so that the sparse row lists the
counting walks are short.

`min_support` counts row weight (a row of weight 3 counts as 3 rows); 1 means every
leaf is non-empty.  The reported `train_error` is the error of the returned tree on
`data` itself; the lower bound is the weight no tree can classify correctly
(identical inputs with different classes) until optimality is proven.

Cost per leaf (`leaf_cost`, the protocol's `LEAF_COST`): with a penalty P =
leaf_cost x the training weight, both solvers minimise error + P x leaves over the
same trees (depth, `min_support`), exactly; the kernel compares, bounds and caches
that objective (see `kernel`), gets P as a float64 argument (0: the same search,
value for value, as without a cost), and the incumbents, `lower_bound` and `optimal`
are about it (`Result.objective`).  The lower bound before the proof is then the
unavoidable error plus P, or the root leaf's objective when less than that plus 2 P
(a tree splits into two leaves at least).  A fractional P makes the objectives
inexact sums that may be closer than a unit: the comparisons then take the tolerance
of fractional weights.

Regression (a numeric target, `tasks`): the same search minimises the weighted sum
of squared errors (SSE) of leaves that predict their rows' weighted mean, plus P =
leaf_cost x the root's SSE per leaf (`protocol.error_scale`, pystreed's
`cost_complexity`).  The kernel counts each row's weight, w t and w t^2 for the target
t centred on its weighted mean (`counts`).  The rows are reduced as for
classification (weight-0 rows, redundant features), and the rows of each distinct
vector become one row of their total weight at their mean: the SSE of any union of
whole groups is the sum of the groups' own SSE plus that of the merged rows, so the
reduction is exact, with the within-group SSE as the offset and the lower bound
until a proof (a tree cannot separate identical rows; `MERGE_GROUPS` off, it is the
kernel's `lbw` instead).  Weights keep their meaning,
so `min_support` (on weight) is unaffected.  The tree's nodes get (weight, mean,
SSE) from the routed statistics (`Problem.node_values`); `train_error` is the SSE on
`data`, `lower_bound` and the incumbents are in SSE (+ P x leaves).  Squared errors
are never exact sums: comparisons take a tolerance of 1e-9 x the root's SSE.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from engine.model.tree import Tree
from engine.solvers import kernel_support as ks
from engine.solvers.binary_rows import BinaryRows, bound_weights, exactness
from engine.solvers.dl85 import parallel
from engine.solvers.dl85.cache import empty, zobrist_table
from engine.solvers.dl85.counts import ORDERINGS
from engine.solvers.dl85.kernel import (
    ST_BOUND,
    ST_D2,
    ST_EVICTED,
    ST_FIRST_T,
    ST_HITS,
    ST_NODES,
    ST_PEAK_ENTRIES,
    ST_PEAK_RECORDS,
    ST_PUBLISHED,
    ST_RESTARTS,
    ST_RULE,
    ST_RULE_ACTIVE,
    ST_THRESHOLD,
    dl85_search,
)
from engine.solvers.dl85.rules import (
    RELAXATIONS,
    RULE_DISCREPANCY,
    RULE_NONE,
    RULE_PURITY,
    RULE_TOPK,
    RULE_TOPK_STAR,
    RULES,
)
from engine.solvers.protocol import (DEPTH, LEAF_COST, Param, Result, Solver, error_scale,
                                     leaf_penalty)
from engine.solvers.registry import register
from engine.solvers.threads import THREADS, resolve, threads_param
from engine.vocabulary import CLASSIFICATION, REGRESSION

# Least seconds between two trees the kernel publishes (the Monitor drains every 20 ms).
PUBLISH_INTERVAL = 0.002
# Pair-count buffers of the depth-two step take at most this share of the memory cap.
PAIR_SHARE = 4
PAIR_LIMIT = 512 << 20
# Beyond K F^2 counts a branch, one pass over them takes too long to poll the control.
PAIR_ENTRIES = 1 << 24
# A regression's counts: weight, sum and sum of squares of the target (`counts`).
CHANNELS = 3
NO_TARGET = np.zeros(0)   # the kernel's target for a classification
# A regression's rows of one distinct vector become one kernel row at their mean, the
# within-group SSE an offset; off, every row stays a kernel row and that SSE is the
# kernel's bound `lbw` instead (the same optimum, more rows: for tests).
MERGE_GROUPS = True


class Problem:
    """The kernel's input derived from a Dataset (see the module docstring)."""

    def __init__(self, data, min_support: int, penalty: float = 0.0, progress=None):
        self.regression = bool(data.regression)
        if self.regression:
            self._regression_rows(data, min_support, penalty, progress)
            return
        rows = BinaryRows(data, "DL8.5", progress=progress)
        self.n_classes = rows.n_classes
        self.fmap = rows.fmap
        F = len(self.fmap)
        self.lower_bound = rows.unavoidable
        self.reduced = min_support <= 1
        progress = progress or (lambda stage, fraction=None: None)
        stage = "laying out the rows for the solver"
        gi, ki, weights, self.offset, residual = rows.merged(subtract_least=self.reduced)
        progress(stage, 0.0)
        Xr = rows.vectors_at(gi)
        self.y = ki.astype(np.int64)
        self.t = NO_TARGET
        self.lbw = bound_weights(gi, residual)
        self.has_lbw = bool((self.lbw > 0).any())
        progress(stage, 0.5)
        self._lay_out(rows, Xr, progress)
        self.Vg = rows.V
        self.exact, self.eps = exactness(weights, self.lbw)
        self.w = weights.astype(np.float64)
        if min_support > 1:
            self.sup, self.check_sup = float(min_support) - self.eps, True
        else:
            self.sup, self.check_sup = (1.0 if self.exact else max(self.eps, 1e-300)), False
        self.penalty = float(penalty)
        total = float(self.w.sum())
        if self.eps == 0.0 and self.penalty and not (
                self.penalty == np.floor(self.penalty)
                and total + self.penalty * (len(self.y) + 1) < 2.0 ** 52):
            # objectives (integer errors + a fractional penalty per leaf) are no
            # longer exact sums, nor a unit apart: compare them as fractional weights'
            self.eps = 1e-9 * max(total, 1.0)
        self.n_features = F
        self.stats = {**rows.stats(len(self.y), self.offset),
                      "features_flipped": int(self.flip.sum())}

    def _lay_out(self, rows: BinaryRows, Xr: np.ndarray, progress) -> None:
        """Flip the features that are 1 on most of the kernel's rows Xr, and lay the
        rows out both ways (`_layouts`)."""
        F = len(self.fmap)
        density = Xr.mean(axis=0) if len(Xr) else np.zeros(F)
        self.flip = (density > 0.5).astype(np.uint8)
        Xi = np.ascontiguousarray(Xr ^ self.flip, dtype=np.uint8)
        self.Xt, self.indptr, self.indices = _layouts(Xi, progress)
        self.Xg = np.ascontiguousarray(rows.vectors ^ self.flip, dtype=np.uint8)

    def _regression_rows(self, data, min_support: int, penalty: float, progress) -> None:
        """A regression's kernel rows (see the module docstring): one per distinct
        vector, at the weighted mean of its (centred) targets, with their weight."""
        progress = progress or (lambda stage, fraction=None: None)
        w = np.asarray(data.w, dtype=np.float64)
        # grouping and column reduction only look at the features and the weights
        unlabelled = SimpleNamespace(X=data.X, w=w, y=np.zeros(len(w), dtype=np.int64),
                                     n_classes=1)
        rows = BinaryRows(unlabelled, "DL8.5", progress=progress)
        progress("laying out the rows for the solver", 0.0)
        self.n_classes = CHANNELS
        self.fmap = rows.fmap
        F = len(self.fmap)
        target = np.asarray(data.y, dtype=np.float64)[w > 0]
        weights, group, G = rows.w, rows.group, len(rows.vectors)
        total = float(weights.sum())
        self.mean = float(weights @ target) / total if total > 0 else 0.0
        centred = target - self.mean
        W = np.bincount(group, weights=weights, minlength=G)
        S = np.bincount(group, weights=weights * centred, minlength=G)
        Q = np.bincount(group, weights=weights * centred * centred, minlength=G)
        means = np.divide(S, W, out=np.zeros(G), where=W > 0)
        within = np.bincount(group, weights=weights * (centred - means[group]) ** 2,
                             minlength=G)
        self.lower_bound = float(within.sum())
        self.reduced = MERGE_GROUPS
        if MERGE_GROUPS:
            self.offset, self.t, self.w = self.lower_bound, means, W
            self.lbw = np.zeros(G)
            Xr = rows.vectors
        else:
            self.offset, self.t, self.w = 0.0, centred, weights
            self.lbw = bound_weights(group, within)
            Xr = rows.vectors_at(group)
        self.y = np.zeros(len(self.w), dtype=np.int64)
        self.has_lbw = bool((self.lbw > 0).any())
        self._lay_out(rows, Xr, progress)
        self.Vg = np.column_stack([W, S, Q]) if G else np.zeros((0, CHANNELS))
        # weights compare as classification's do; squared errors with a tolerance
        # relative to the root's
        self.exact, weight_eps = exactness(self.w, np.zeros(0))
        self.eps = max(1e-9 * float(Q.sum()), 1e-300)
        if min_support > 1:
            self.sup = float(min_support) - weight_eps
        else:
            self.sup = 1.0 if self.exact else max(weight_eps, 1e-300)
        self.check_sup = True   # (no empty side, whatever the squared errors' rounding)
        self.penalty = float(penalty)
        self.n_features = F
        self.stats = {**rows.stats(len(self.w), self.offset),
                      "unavoidable_error": self.lower_bound,
                      "features_flipped": int(self.flip.sum())}

    def node_values(self, value: np.ndarray) -> np.ndarray:
        """A regression tree's `value` rows (weight, mean, squared error) from the
        statistics W, S, Q the kernel routes to its nodes (classification: as they
        are)."""
        if not self.regression:
            return value
        W, S, Q = (np.asarray(value, dtype=np.float64)[:, c] for c in range(CHANNELS))
        mean = np.divide(S, W, out=np.zeros(len(W)), where=W > 0)
        error = np.maximum(Q - S * mean, 0.0)
        return np.column_stack([W, self.mean + mean, error])

    def max_nodes(self, depth: int) -> int:
        leaves = max(len(self.y), 1)
        return int(min(2 ** (depth + 1) - 1, 2 * leaves - 1)) if depth < 62 else 2 * leaves - 1

    def pair_plan(self, depth: int, budget: int) -> tuple[bool, int, int]:
        """(use the depth-two step, first level holding pair counts, their bytes)."""
        F, K = self.n_features, self.n_classes
        if depth < 2 or F == 0 or K * F * F > PAIR_ENTRIES:
            return False, 0, 0
        per_level = 2 * K * F * F * self.w.itemsize
        fit = min(budget // PAIR_SHARE, PAIR_LIMIT) // max(per_level, 1)
        if fit < 1:
            return False, 0, 0
        levels = min(depth - 1, fit)
        return True, depth - 1 - levels, levels * per_level


def _layouts(Xi: np.ndarray, progress) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kernel's two views of the 0/1 rows Xi: by feature (Xt) and each row's list
    of ones (indptr, indices), built a block of rows at a time with `progress`
    between blocks (two million rows take seconds, and a stop must not wait)."""
    n, F = Xi.shape
    Xt = np.empty((F, n), dtype=np.uint8)
    counts = np.zeros(n + 1, dtype=np.int64)
    lists = []
    step = max(1, (1 << 22) // max(F, 1))
    for start in range(0, n, step):
        progress("listing each row's features", start / n)
        block = Xi[start:start + step]
        Xt[:, start:start + len(block)] = block.T
        counts[start + 1:start + 1 + len(block)] = block.sum(axis=1, dtype=np.int64)
        lists.append(np.nonzero(block)[1].astype(np.int32))
    indices = np.concatenate(lists) if lists else np.zeros(0, dtype=np.int32)
    return Xt, np.cumsum(counts), indices


ORDERING = Param("ordering", "choice", "gain",
                 "Order in which features are tried at each branch: information gain "
                 "(gain), Gini impurity (gini), misclassification error (error) of the "
                 "split, or the column order (none); for a regression the first three "
                 "are the split's squared error.",
                 choices=tuple(ORDERINGS))
MIN_SUPPORT = Param("min_support", "int", 1,
                    "Least number of training rows (total row weight) in every leaf "
                    "(also given as min_leaf).",
                    1, None)
ANYTIME_TREES = Param("anytime_trees", "bool", True,
                      "Publish, whenever it improves, the tree the search would return if "
                      "stopped now; off: only complete trees found at the root (each "
                      "improvement of the root's best), as the paper reports them.")
CACHE_MB = Param("cache_mb", "int", 1024,
                 "Memory for the cache of solved branches, in MB; when it is full the "
                 "least recently used half is evicted.", 16, 1 << 20)


class _DL85Base(Solver):
    needs = "binary"
    proves_optimality = True
    tasks = (CLASSIFICATION, REGRESSION)
    aliases = {"min_leaf": "min_support"}   # (the other tree solvers' name for it)

    def rule_settings(self, params) -> tuple[int, int, float, float, float, bool]:
        """(rule, relaxation, initial threshold, step, factor, rule at the last level)."""
        return RULE_NONE, 0, 0.0, 1.0, 2.0, False

    @classmethod
    def kernels(cls) -> tuple:
        return (dl85_search,)

    @classmethod
    def warm_start(cls, params) -> bool:
        return True   # grown with min_leaf = min_support (`warm_start.least_leaf`)

    def solve(self, data, params, monitor) -> Result:
        depth = params["depth"]
        penalty = leaf_penalty(params, error_scale(data) if data.regression
                               else data.w.sum())
        problem = Problem(data, params["min_support"], penalty, monitor.checkpoint)
        K = problem.n_classes
        # what every tree costs at least: the unavoidable error and one leaf (two when
        # it splits)
        if data.regression:
            root_leaf = error_scale(data)
        else:
            root_leaf = float(data.w.sum() - np.bincount(
                data.y, weights=data.w, minlength=K).max()) if len(data.y) else 0.0
        global_lb = problem.lower_bound + penalty
        if penalty and depth > 0:
            global_lb = min(root_leaf + penalty, problem.lower_bound + 2.0 * penalty)

        def new_sink():
            return ks.IncumbentSink(problem.max_nodes(depth), K)

        def make_tree(feature, threshold, left, right, value):
            return Tree.from_arrays(feature, threshold, left, right,
                                    problem.node_values(value), data.prep)

        rule, relaxation, thr0, step, factor, rule_d2 = self.rule_settings(params)
        threads = resolve(params["threads"]) if depth >= 3 and problem.n_features > 1 else 1
        budget = (int(params["cache_mb"]) << 20) // threads
        use_d2, lvl0, pair_bytes = problem.pair_plan(depth, budget)
        if threads > 1 and rule == RULE_NONE:
            # a dl85 task's root has one feature: counting the root's pairs (once per
            # task) costs more than counting both children's; a CA task has a run of
            # features, whose children are derived from the root's pairs
            lvl0 = max(lvl0, 1)
        search_budget = max(budget - pair_bytes, 1 << 20)
        zobrist = zobrist_table(problem.n_features)

        def args_for(rule, thr):
            """dl85_search's arguments before `restart`, for a rule and threshold."""
            return (problem.Xt, problem.indptr, problem.indices, problem.y, problem.w,
                    problem.t, problem.regression, problem.lbw, problem.has_lbw, K, depth,
                    problem.sup, problem.check_sup, problem.eps, problem.penalty,
                    ORDERINGS[params["ordering"]], rule, relaxation, thr,
                    step, factor, rule_d2, params["anytime_trees"], zobrist, use_d2, lvl0,
                    search_budget, PUBLISH_INTERVAL, problem.Xg, problem.Vg, problem.fmap,
                    problem.flip, problem.offset, global_lb)

        absorbed = 0
        if threads > 1:
            ca = (None if rule == RULE_NONE
                  else parallel.Relaxation(rule, relaxation, thr0, step, factor))
            (feature, threshold, left, right, value, error, optimal, raw,
             absorbed) = parallel.search(
                args_for, ca, threads, search_budget, monitor.floor - problem.offset,
                problem.eps, monitor, new_sink, make_tree)
        else:
            sink = new_sink()
            (feature, threshold, left, right, value, error, optimal, raw,
             _) = ks.run(
                monitor, dl85_search,
                (*args_for(rule, thr0), 0, -1, -1, np.array([np.inf]), 0.0, -np.inf,
                 monitor.control, *sink.buffers(), empty()),
                sink, make_tree, ks.search_work(len(problem.y), problem.n_features, depth))
        tree = make_tree(feature, threshold, left, right, value)
        train_error = tree.error(data.X, data.y, data.w)
        optimal = bool(optimal)
        objective = train_error + penalty * tree.n_leaves
        lower_bound = objective if optimal else min(global_lb, objective)
        stats = dict(problem.stats)
        stats.update({
            "kernel_error": float(error) + problem.offset - penalty * tree.n_leaves,
            "kernel_objective": float(error) + problem.offset,
            "branches": int(raw[ST_NODES]),
            "depth_two_solved": int(raw[ST_D2]),
            "cache_hits": int(raw[ST_HITS]),
            "pruned_by_bound": int(raw[ST_BOUND]),
            "pruned_by_rule": int(raw[ST_RULE]),
            "restarts": int(raw[ST_RESTARTS]),
            "last_threshold": float(raw[ST_THRESHOLD]),
            "rule_active": bool(raw[ST_RULE_ACTIVE]),
            "peak_cache_entries": int(raw[ST_PEAK_ENTRIES]),
            "evicted_entries": int(raw[ST_EVICTED]),
            "peak_records": int(raw[ST_PEAK_RECORDS]),
            "trees_published": int(raw[ST_PUBLISHED]),
            "first_tree_s": float(raw[ST_FIRST_T]) if threads == 1 else (
                monitor.incumbents[0][0] if monitor.incumbents else -1.0),
            "bounds_shared": absorbed,
            "threads": threads,
            "depth_two_step": use_d2,
            "pair_count_levels": depth - 1 - lvl0 if use_d2 else 0,
            "nodes": tree.n_nodes,
        })
        if not monitor.incumbents:
            # threads: a root the probe settled (a leaf no tree beats) runs no task,
            # and a task's root leaf is not published; the answer is an incumbent too
            monitor.publish(tree, objective, lower_bound)
        status = monitor.final_status(optimal)
        return Result(tree, train_error, lower_bound, optimal, status, monitor.elapsed(),
                      list(monitor.incumbents), stats, penalty)


@register
class DL85(_DL85Base):
    name = "dl85"
    title = "DL8.5"
    summary = ("Optimal tree of bounded depth by depth-first search with a cache of "
               "solved branches (0/1 features).")
    params = (DEPTH, MIN_SUPPORT, LEAF_COST, ORDERING, ANYTIME_TREES, CACHE_MB, THREADS)


@register
class CADL85(_DL85Base):
    name = "cadl85"
    title = "CA-DL8.5"
    summary = ("Complete anytime DL8.5: restarts under a pruning rule relaxed each "
               "time, until the tree is proven optimal (0/1 features).")
    params = (DEPTH,
              Param("rule", "choice", "discrepancy",
                    "Rule limiting the search before each restart: purity of a branch, "
                    "information-gain gap, discrepancy from the heuristic order (LDS), "
                    "top-k features per branch, or top-k with k halved per level "
                    "(topk_star).", choices=tuple(RULES)),
              Param("relax", "choice", "monotonic",
                    "How the rule's threshold grows between restarts: by a step "
                    "(monotonic), times a factor (exponential), or by the step times the "
                    "Luby sequence 1, 1, 2, 1, 1, 2, 4, ... (luby).",
                    choices=tuple(RELAXATIONS)),
              Param("step", "float", 1.0,
                    "Relaxation step for the gain, discrepancy and top-k rules.",
                    1e-6, 1e9),
              Param("factor", "float", 2.0,
                    "Growth factor of the exponential relaxation.", 1.0001, 1e6),
              Param("max_gap", "float", 0.0,
                    "Gain rule: initial largest information-gain gap (bits; for a "
                    "regression the share of a branch's squared error) summed along a "
                    "branch (0: the greedy choice only).", 0.0, 1e9),
              Param("max_discrepancy", "int", 0,
                    "Discrepancy rule: initial largest total position of the features "
                    "chosen along a branch (0: the first feature only).", 0, None),
              Param("k", "int", 1,
                    "Top-k rules: initial number of features tried at each branch "
                    "(top-k*: at the root, halved at each level, at least 1).", 1, None),
              Param("min_purity", "float", 0.5,
                    "Purity rule: initial purity (share of the majority class; for a "
                    "regression 1 - the branch's variance / the root's) from which a "
                    "branch is not expanded.", 0.0, 1.0),
              Param("purity_step", "float", 0.1,
                    "Purity rule: relaxation step of the purity threshold.", 1e-6, 1.0),
              Param("rule_last_level", "bool", False,
                    "Let the rule also prune the branches one level above the maximum "
                    "depth (Algorithm 2 to the letter); by default their best split is "
                    "always taken, which the depth-two step gets for free."),
              MIN_SUPPORT, LEAF_COST, ORDERING, ANYTIME_TREES, CACHE_MB,
              threads_param(1, "one by default: restarts wait for each other, so two "
                               "threads gain 1.2-1.6x on runs of seconds and lose on "
                               "shorter ones"))

    def rule_settings(self, params):
        rule = RULES[params["rule"]]
        relaxation = RELAXATIONS[params["relax"]]
        step = float(params["step"])
        if rule == RULE_PURITY:
            thr0, step = float(params["min_purity"]), float(params["purity_step"])
        elif rule == RULE_DISCREPANCY:
            thr0 = float(params["max_discrepancy"])
        elif rule in (RULE_TOPK, RULE_TOPK_STAR):
            thr0 = float(params["k"])
        else:
            thr0 = float(params["max_gap"])
        return (rule, relaxation, thr0, step, float(params["factor"]),
                bool(params["rule_last_level"]))
