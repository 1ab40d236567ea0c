"""`blossom`: optimal decision trees of bounded depth, anytime (Demirović et al. 2021).

This module prepares the data the way Section 4.3 of the paper describes and runs the
numba kernel of `blossom_kernel` through the Monitor.

Preprocessing (`preprocess`, on by default; every step is exact)
* Features constant on the training rows, or equal or complementary to an earlier
  feature, are dropped; the tree is mapped back to the original columns of `data.X`.
* Identical rows are merged into weights.  For each distinct feature vector with
  class weights c_k, m = min_k c_k is removed from every class: whichever class a
  leaf predicts, its error on these rows drops by exactly (K-1)·m, and the class
  each leaf predicts is unchanged.  The total (K-1)·Σm is the error *offset* added
  back to every reported error (with two classes: the paper's number of pairs of
  inconsistent rows, keeping only the majority class of each vector).

Whether or not it preprocesses, the solver knows the weight Σ_vectors (total - max_k
c_k) that no tree can classify correctly (identical inputs with different classes);
that is its proven lower bound until the search is exhausted, and reaching it stops
the search with a proof.

Incumbents stream from the kernel into the Monitor; the reported `train_error` is
the error of the returned tree on `data` itself.
"""

from __future__ import annotations

import numpy as np

from engine.data.dataset import redundant_columns, row_groups
from engine.errors import DataError
from engine.model.tree import Tree
from engine.solvers import kernel_support as ks
from engine.solvers.blossom_kernel import (
    ST_BACKTRACKS,
    ST_EXPANSIONS,
    ST_FIRST_TREE_ERR,
    ST_FIRST_TREE_T,
    ST_IMPROVEMENTS,
    ST_LAST_LEVEL,
    ST_PEAK_RECORDS,
    ST_PEAK_SLOTS,
    ST_PRUNED,
    ST_PUBLISHED,
    blossom_search,
)
from engine.solvers.protocol import DEPTH, Param, Result, Solver
from engine.solvers.registry import register

# Least seconds between two trees the kernel publishes (the Monitor drains every 20 ms).
PUBLISH_INTERVAL = 0.002
# Bytes the kernel's slot and record pools may take before it stops (memory_limit).
MEMORY_BUDGET = 2 << 30


def _useful_features(X: np.ndarray) -> np.ndarray:
    """Columns of X that are not constant, nor equal or complementary to an earlier one."""
    drop = redundant_columns(X, range(X.shape[1]))
    return np.array([j for j in range(X.shape[1]) if j not in drop], dtype=np.int64)


class Problem:
    """The kernel's input derived from a Dataset (see the module docstring)."""

    def __init__(self, data, preprocess: bool):
        X = np.asarray(data.X)
        if X.size and not np.isin(X, (0, 1)).all():
            raise DataError("Blossom needs 0/1 features: choose a binarisation.")
        w = np.asarray(data.w, dtype=np.float64)
        if (w < 0).any() or not np.isfinite(w).all():
            raise DataError("Row weights must be finite and not negative.")
        K = data.n_classes
        self.n_classes = K
        positive = w > 0
        Xp = X[positive].astype(np.uint8)
        yp = np.asarray(data.y, dtype=np.int64)[positive]
        wp = w[positive]
        F = X.shape[1]
        self.fmap = _useful_features(Xp) if preprocess else np.arange(F, dtype=np.int64)
        Xf = np.ascontiguousarray(Xp[:, self.fmap])
        # Distinct vectors (over the kept columns: the dropped ones follow from them).
        first, inverse = row_groups(Xf)
        uniq = Xf[first]
        G = len(uniq)
        V = np.zeros((G, K))
        np.add.at(V, (inverse, yp), wp)
        total, most = V.sum(axis=1), V.max(axis=1)
        self.Xg, self.Vg = np.ascontiguousarray(uniq, dtype=np.uint8), V
        self.lower_bound = float((total - most).sum())
        if preprocess:
            least = V.min(axis=1)
            reduced = V - least[:, None]
            self.offset = float((K - 1) * least.sum())
            gi, ki = np.nonzero(reduced > 0)
            self.X = np.ascontiguousarray(uniq[gi], dtype=np.uint8)
            self.y = ki.astype(np.int64)
            self.w = reduced[gi, ki]
            residual = total - most - (K - 1) * least
            row_group = gi
            self.distinct_train = len(np.unique(gi))
        else:
            self.offset = 0.0
            self.X, self.y, self.w = Xf, yp, wp
            residual = total - most
            row_group = inverse
            self.distinct_train = G
        # Each group's unavoidable error sits on its first row, so any union of whole
        # groups (every branch) sums to its bound.
        self.lbw = np.zeros(len(self.y))
        if len(row_group):
            _, first = np.unique(row_group, return_index=True)
            self.lbw[first] = residual[row_group[first]]
        self.Xt = np.ascontiguousarray(self.X.T)
        weights = np.concatenate([self.w, self.lbw])
        self.exact = bool(np.all(weights == np.floor(weights)) and weights.sum() < 2.0 ** 52)
        self.eps = 0.0 if self.exact else 1e-9 * max(float(self.w.sum()), 1.0)
        if self.exact and weights.sum() < 2 ** 31 - 1:
            # integer counts: exact, and twice as many per vector instruction
            self.w = self.w.astype(np.int32)
        self.stats = {"rows": len(X), "rows_used": len(self.y),
                      "distinct_rows": G, "features": int(F),
                      "features_used": len(self.fmap),
                      "inconsistent_offset": self.offset,
                      "unavoidable_error": self.lower_bound}

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
                    "Prune with the lower bound of optimal sibling subtrees (exact)."))

    def solve(self, data, params, monitor) -> Result:
        depth = params["depth"]
        problem = Problem(data, params["preprocess"])
        K = problem.n_classes
        sink = ks.IncumbentSink(problem.max_nodes(depth), K)

        def make_tree(feature, threshold, left, right, value):
            return Tree.from_arrays(feature, threshold, left, right, value, data.prep)

        (feature, threshold, left, right, value, error, optimal,
         raw) = monitor.run_kernel(
            blossom_search,
            (problem.X, problem.Xt, problem.y, problem.w, problem.lbw, K, depth,
             problem.exact, problem.eps, params["lower_bound"], problem.Xg, problem.Vg,
             problem.fmap, problem.offset, problem.lower_bound, PUBLISH_INTERVAL,
             problem.slot_bound(depth), MEMORY_BUDGET, monitor.control, *sink.buffers()),
            sink, make_tree)
        tree = make_tree(feature, threshold, left, right, value)
        train_error = tree.error(data.X, data.y, data.w)
        kernel_error = float(error) + problem.offset
        optimal = bool(optimal)
        lower_bound = train_error if optimal else min(problem.lower_bound, train_error)
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
            "first_tree_s": float(raw[ST_FIRST_TREE_T]),
            "first_tree_error": float(raw[ST_FIRST_TREE_ERR]) + problem.offset,
            "nodes": tree.n_nodes,
        })
        status = monitor.final_status(optimal)
        return Result(tree, train_error, lower_bound, optimal, status, monitor.elapsed(),
                      list(monitor.incumbents), stats)
