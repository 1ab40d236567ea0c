"""Optimal trees laid into the skeleton: a second start for the MILP step.

The heuristic grows its diagram greedily by information gain, and on some data that
diagram is far from the best the skeleton holds.  On teaching-assistant-evaluation
(75 training rows, seed 1 of `benchmarks/odd.py`) skeleton 1-2-4-8's heuristic
diagram misclassifies 26 rows where the optimal depth-4 tree misclassifies 14, and
neither the whole MILP nor the LNS's sub-MILPs get there within a minute on HiGHS.

A skeleton whose first d layers are at least 1, 2, 4, ... wide holds every tree of
depth d (`seed_depth`).  For each such depth from 2 up, ConTree finds the tree of
least training error (on the same features, exact splits between distinct values),
which is then pruned bottom-up for objective (18): a subtree becomes a leaf unless it
saves more error than its nodes' cost (the root always tests).  The diagram of least
objective among them is the seed; the MILP step starts from it when it beats the
heuristic's diagram.  The searches share the run's Stop and deadline within
`SEED_SHARE` of the time left (at most `SEED_CAP` seconds, with or without a time
limit); a search stopped early still gives its best tree so far.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from engine.errors import OrchardError
from engine.model.diagram import Diagram
from engine.solvers.contree.adapter import ConTree
from engine.solvers.monitor import Monitor
from engine.solvers.odd.common import Skeleton
from engine.solvers.warm_start import warm_started

SEED_SHARE = 0.25   # of the time left when the seed starts ...
SEED_CAP = 10.0     # ... and at most this many seconds
MIN_DEPTH = 2       # a depth-1 tree is one test: the heuristic's first node


def seed_depth(skeleton: Skeleton) -> int:
    """The depth of the deepest complete tree the skeleton holds."""
    depth = 0
    while depth < skeleton.depth and skeleton.widths[depth] >= 2 ** depth:
        depth += 1
    return depth


def tree_seed(data, X: np.ndarray, y: np.ndarray, w: np.ndarray, skeleton: Skeleton,
              penalty: float, objective, monitor: Monitor) -> Diagram | None:
    """The best pruned optimal tree as a diagram (see the module docstring), by
    `objective(diagram)`; None when the skeleton holds no tree of depth 2 or no
    search had a tree before the stop.  Call it within `monitor.share`."""
    helper = Monitor(monitor.remaining() or SEED_CAP, control=monitor.control)
    best, best_objective = None, np.inf
    for depth in range(MIN_DEPTH, seed_depth(skeleton) + 1):
        if monitor.should_stop():
            break
        params = ConTree.resolve({"depth": depth})
        try:
            tree = warm_started(ConTree(), data, params, helper).tree
        except OrchardError:   # stopped before any tree, or data ConTree refuses
            break
        diagram = as_diagram(tree, X, y, w, penalty, data.prep)
        if diagram is not None and objective(diagram) < best_objective:
            best, best_objective = diagram, objective(diagram)
    return best


def as_diagram(tree, X: np.ndarray, y: np.ndarray, w: np.ndarray, penalty: float,
               prep) -> Diagram | None:
    """`tree` pruned for a cost of `penalty` per test but the root's, as a diagram
    (layer = depth); None when the root cannot reach two different children."""
    n_classes = len(prep.class_names)

    def prune(node: int, rows: np.ndarray, root: bool):
        """(objective, shape) of the node's best pruning: a shape is a class (a leaf)
        or (feature, threshold, left shape, right shape)."""
        counts = np.bincount(y[rows], weights=w[rows], minlength=n_classes)
        leaf = (float(counts.sum() - counts.max()), int(np.argmax(counts)))
        if tree.feature[node] < 0:
            return leaf
        feature, threshold = int(tree.feature[node]), float(tree.threshold[node])
        left = X[rows, feature] <= threshold
        left_cost, left_shape = prune(tree.left[node], rows[left], False)
        right_cost, right_shape = prune(tree.right[node], rows[~left], False)
        split = left_cost + right_cost + (0.0 if root else penalty)
        if not root and leaf[0] <= split:   # ties prune: no test sends both sides alike
            return leaf
        return split, (feature, threshold, left_shape, right_shape)

    _, shape = prune(0, np.arange(len(y)), True)
    if not isinstance(shape, tuple) or shape[2] == shape[3] and isinstance(shape[2], int):
        return None
    order, queue = [], deque([(shape, 0)])
    while queue:   # breadth first: the nodes of each layer together, top down
        node, layer = queue.popleft()
        order.append((node, layer))
        queue.extend((child, layer + 1) for child in node[2:] if isinstance(child, tuple))
    index = {id(node): k for k, (node, _) in enumerate(order)}
    m = len(order)

    def child(shape) -> int:
        return index[id(shape)] if isinstance(shape, tuple) else m + shape

    return Diagram.build([layer for _, layer in order], [node[0] for node, _ in order],
                         np.zeros((m, X.shape[1])), [node[1] for node, _ in order],
                         [child(node[2]) for node, _ in order],
                         [child(node[3]) for node, _ in order], prep, X, y, w)
