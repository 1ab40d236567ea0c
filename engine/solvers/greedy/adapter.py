"""`greedy`: the CART-like baseline (Gini impurity, top-down, no optimality proof).

It gives a first tree in milliseconds and a reference point for the exact solvers.
The numba kernel lives in `kernel`; this module adapts it to the protocol.
"""

from __future__ import annotations

import numpy as np

from engine.model.tree import Tree
from engine.solvers import kernel_support as ks
from engine.solvers.greedy.kernel import grow_tree, target_arguments
from engine.solvers.protocol import (DEPTH, LEAF_COST, Param, Result, Solver, error_scale,
                                     leaf_penalty)
from engine.solvers.registry import register
from engine.vocabulary import CLASSIFICATION, REGRESSION


@register
class Greedy(Solver):
    name = "greedy"
    title = "Greedy (CART)"
    summary = ("Top-down splits on Gini impurity, like scikit-learn's CART: instant, "
               "any data, no optimality proof.")
    needs = "any"
    proves_optimality = False
    tasks = (CLASSIFICATION, REGRESSION)
    params = (DEPTH,
              Param("min_leaf", "float", 1.0,
                    "Minimum total weight (rows) in each leaf.", 1.0, None),
              LEAF_COST)

    @classmethod
    def kernels(cls) -> tuple:
        return (grow_tree,)

    def solve(self, data, params, monitor) -> Result:
        # A 0/1 matrix goes in as it is: as float64 two million rows of 100 features
        # would take 1.6 GB and seconds to convert.
        X = np.asarray(data.X)
        if not (X.dtype == np.uint8 and X.flags.c_contiguous):
            X = ks.kernel_array(X, np.float64, monitor.checkpoint)
        labels, n_classes, target = target_arguments(data.y, data.n_classes)
        w = np.ascontiguousarray(data.w, dtype=np.float64)
        no_categories = np.zeros(X.shape[1], dtype=np.int64)
        feature, threshold, left, right, value, _subset, stopped = ks.run(
            monitor, grow_tree, (X, labels, w, n_classes, params["depth"],
                                 float(params["min_leaf"]), monitor.control, no_categories,
                                 target),
            work=work(X, params["depth"]))
        tree = Tree.from_arrays(feature, threshold, left, right, value, data.prep)
        penalty = leaf_penalty(params, error_scale(data))
        if penalty:   # grown as CART grows, then pruned for the cost of its leaves
            tree = tree.pruned(penalty)
        result = Result(tree, tree.error(data.X, data.y, data.w), 0.0, False,
                        monitor.final_status(False, heuristic_done=not stopped),
                        monitor.elapsed(), [], {"nodes": tree.n_nodes}, penalty)
        monitor.publish(tree, result.objective, 0.0)
        result.incumbents = list(monitor.incumbents)
        return result


# A continuous feature costs the kernel about 100 times a 0/1 one per cell (it tries
# every distinct value: 1 s for a depth-3 tree on 20,000 rows of 50 random numbers,
# 3 ms on as many 0/1 cells).
CONTINUOUS_COST = 100


def work(X: np.ndarray, depth: int) -> float:
    """The greedy tree's work in `ks.run`'s measure: cells read per level, times depth,
    a continuous matrix's cells counting CONTINUOUS_COST each."""
    return float(X.size) * max(depth, 1) * (1 if X.dtype == np.uint8 else CONTINUOUS_COST)
