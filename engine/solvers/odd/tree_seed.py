"""Optimal trees laid into the skeleton: a second start for the MILP step.

The heuristic grows its diagram greedily by information gain, and on some data that
diagram is far from the best the skeleton holds.  On teaching-assistant-evaluation
(75 training rows, seed 1 of `benchmarks/odd.py`) skeleton 1-2-4-8's heuristic
diagram misclassifies 26 rows where the optimal depth-4 tree misclassifies 14, and
neither the whole MILP nor the LNS's sub-MILPs get there within a minute on HiGHS.

For each depth from 2 to the skeleton's (at most `MAX_DEPTH`), ConTree finds the
tree of least training error (same features, exact splits between distinct values).
The tree is then pruned for objective (18) and for the skeleton: a subtree becomes a
leaf unless it saves more error than its tests cost, and a layer narrower than a
tree's (1-2-4-4-4 holds 4 tests in its fourth layer, not 8) keeps only as many tests
as it holds; the best such pruning is found exactly (`as_diagram`).  One more
candidate is sat-size's tree with the fewest tests classifying every training row
(`smallest_perfect_tree`), pruned the same way.  The candidate of least objective is
the seed; the MILP step starts from it when it
beats the heuristic's diagram.  The searches share the run's Stop and deadline within
`SEED_SHARE` of the time left (at most `SEED_CAP` seconds, with or without a time
limit); a search stopped early still gives its best tree so far.  A run with a time
limit skips the seed when ConTree's kernels are not compiled yet (`compile_needed`):
the compile alone would overrun the limit.  The app ships them compiled, the window
compiles them at start-up, and a run without a time limit compiles them.
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import dataclass

import numpy as np

from engine.featurize import binarized
from engine.data.features import NUM
from engine.errors import OrchardError
from engine.model.diagram import Diagram
from engine.model.feature_space import on_features
from engine.solvers import kernel_support as ks
from engine.solvers.contree.adapter import ConTree
from engine.solvers.contree.kernel import contree_search, root_order
from engine.solvers.greedy.kernel import grow_tree
from engine.solvers.monitor import Monitor
from engine.solvers.odd.common import Skeleton
from engine.solvers.sat.adapter import SatSize
from engine.solvers.warm_start import warm_started

SEED_SHARE = 0.25   # of the time left when the seed starts ...
SEED_CAP = 10.0     # ... and at most this many seconds
MIN_DEPTH = 2       # a depth-1 tree is one test: the heuristic's first node
MAX_DEPTH = 4       # ConTree's depth-4 search takes about a second on the ODD sets
SAT_CELLS = 500_000  # most rows x midpoint tests for sat-size (wine: 89 x ~1,000)


def compile_needed() -> bool:
    """Whether the seed's searches would first compile ConTree's kernels (a cold
    numba cache: about 30 s that no Stop or time limit interrupts)."""
    return not ks.compiled(grow_tree, contree_search, root_order)


def seed_depth(skeleton: Skeleton) -> int:
    """The depth of the seed's trees: the skeleton's, at most `MAX_DEPTH`."""
    return min(skeleton.depth, MAX_DEPTH)


def tree_seed(data, X: np.ndarray, y: np.ndarray, w: np.ndarray, skeleton: Skeleton,
              penalty: float, objective, monitor: Monitor) -> Diagram | None:
    """The best pruned optimal tree as a diagram (see the module docstring), by
    `objective(diagram)`; None when the skeleton is one layer deep or no search had
    a tree before the stop.  Call it within `monitor.share`."""
    best, best_objective = None, np.inf
    for tree in _candidates(data, skeleton, monitor):
        diagram = as_diagram(tree, X, y, w, penalty, skeleton.widths, data.prep)
        cost = np.inf if diagram is None else objective(diagram)
        if cost < best_objective:
            best, best_objective = diagram, cost
    return best


def _candidates(data, skeleton: Skeleton, monitor: Monitor):
    """ConTree's optimal trees of depths MIN_DEPTH to `seed_depth`, then sat-size's
    smallest perfect tree, each searched only while the run may go on."""
    helper = Monitor(monitor.remaining() or SEED_CAP, control=monitor.control)
    for depth in range(MIN_DEPTH, seed_depth(skeleton) + 1):
        if monitor.should_stop():
            return
        try:
            yield warm_started(ConTree(), data, ConTree.resolve({"depth": depth}),
                               helper).tree
        except OrchardError:   # stopped before any tree, or data ConTree refuses
            return
    if not monitor.should_stop():
        tree = smallest_perfect_tree(data, skeleton.depth, helper)
        if tree is not None:
            yield tree


@dataclass
class TestTree:
    """A tree's tests on the columns of the data (what `as_diagram` reads)."""
    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray


def smallest_perfect_tree(data, depth: int, monitor: Monitor) -> TestTree | None:
    """sat-size's tree (the fewest tests classifying every training row, at the least
    depth, at most `depth`) on midpoint tests of the continuous columns, its tests put
    back on the columns of `data`; None when there is none or the time ran out.

    ConTree's trees minimise the error, not the tests: where several trees classify
    every row (hepatitis: the heuristic's diagram has 6 tests, sat-size's tree 5),
    this one is the cheapest under objective (18).  Skipped beyond `SAT_CELLS`: its
    clauses grow with rows x tests."""
    tests = sum(len(np.unique(data.X[:, j])) - 1 if f.op == NUM else 1
                for j, f in enumerate(data.features))
    if data.n_rows * tests > SAT_CELLS:
        return None
    binary = binarized(data, "midpoints")
    try:
        result = SatSize().solve(binary, SatSize.resolve({"depth": depth}), monitor)
    except OrchardError:
        return None
    tree = result.tree
    if result.train_error > 0 or tree.feature[0] < 0:
        return None
    tree = on_features(tree, data.prep)   # midpoint tests back on the columns
    return TestTree(tree.feature, tree.threshold, tree.left, tree.right)


def as_diagram(tree, X: np.ndarray, y: np.ndarray, w: np.ndarray, penalty: float,
               widths, prep) -> Diagram | None:
    """The pruning of `tree` of least objective (misclassified weight plus `penalty`
    per test but the root's) whose layer l keeps at most widths[l] tests, as a
    diagram (layer = depth); None when no pruning fits or none lets the root reach
    two different children.

    Each node keeps its best pruning for every count of tests in the layers where
    the skeleton is narrower than a tree (a handful of counts): a leaf, or the best
    combination of its children's prunings whose counts add up within the widths.
    """
    n_classes = len(prep.class_names)
    narrow = [l for l in range(len(widths)) if widths[l] < 2 ** l]
    none = (0,) * len(narrow)

    def prune(node: int, rows: np.ndarray, layer: int) -> dict:
        """{(counts in the narrow layers, leaf class or -1): (objective, shape)} of the
        node's prunings (the class matters to the parent: (8) forbids both sides to
        one terminal); a shape is a class (a leaf) or (feature, threshold, left
        shape, right shape)."""
        counts = np.bincount(y[rows], weights=w[rows], minlength=n_classes)
        c = int(np.argmax(counts))
        leaf = {(none, c): (float(counts.sum() - counts.max()), c)}
        if tree.feature[node] < 0 or layer >= len(widths):
            return leaf
        options = {} if layer == 0 else leaf
        feature, threshold = int(tree.feature[node]), float(tree.threshold[node])
        left = X[rows, feature] <= threshold
        lefts = prune(tree.left[node], rows[left], layer + 1)
        rights = prune(tree.right[node], rows[~left], layer + 1)
        own = tuple(int(l == layer) for l in narrow)
        cost = 0.0 if layer == 0 else penalty
        for ((lk, lc), (lo, ls)), ((rk, rc), (ro, rs)) in itertools.product(
                lefts.items(), rights.items()):
            if lc >= 0 and lc == rc:
                continue
            k = tuple(a + b + o for a, b, o in zip(lk, rk, own))
            if any(k[i] > widths[l] for i, l in enumerate(narrow)):
                continue
            total = lo + ro + cost
            if (k, -1) not in options or total < options[k, -1][0]:
                options[k, -1] = (total, (feature, threshold, ls, rs))
        return options

    options = prune(0, np.arange(len(y)), 0)
    shapes = [option for (_, c), option in options.items() if c < 0]
    if not shapes:
        return None
    shape = min(shapes, key=lambda option: option[0])[1]
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
