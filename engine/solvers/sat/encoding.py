"""Clauses of Avellaneda's SAT encoding of a perfect decision tree (AAAI-20).

A perfect tree of depth k has internal nodes 1 .. 2^k - 1 (node q has children 2q and
2q + 1, the root is 1) and leaves 0 .. 2^k - 1 below them.  Reading a leaf index in
binary, most significant bit first, gives the branches from the root to it (1 =
right), which is why an example's position is just k Boolean variables X[i, 0..k-1]:
the clauses can name "every node on the path to leaf v" without any auxiliary
variable per (example, node).

Variables (DIMACS numbering, 1-based):

* F[q, f]  node q tests feature f (right branch: f = 1, as in `engine.model.tree`);
* C[v, a]  leaf v predicts class a (one per class: with several classes the paper
  keeps one variable per class, and a leaf none of whose classes is true is
  *unlabelled*, which is what the size bound counts);
* X[i, j]  example i goes right at depth j (allocated by the caller, k per example,
  only for examples actually added: Algorithm 3 adds them one at a time);
* U[v], H[i, j]  the unary counter of labelled leaves of formulas (7)-(10).

The `*_clauses` functions are pure and return clauses as lists of ints (ready for
`pysat`'s `append_formula`): a solver is built by adding their outputs.  `decode`
and `leaf_of` read a model back as a tree and route rows through it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

Clauses = list[list[int]]

# Beyond this many features, formula (2) is left out (see `node_clauses`); measured on
# the paper's sets, the pairs help on car (15 features: 21 s with them, 40 s without)
# and cost on wine (1,263 features: 24 s with them, 1.4 s without).
PAIRWISE_LIMIT = 64


@dataclass(frozen=True)
class PerfectTree:
    """Numbering of the F and C variables of the perfect tree of depth `depth`."""

    depth: int
    n_features: int
    n_classes: int

    @property
    def n_nodes(self) -> int:
        """Internal nodes, numbered 1 .. n_nodes."""
        return (1 << self.depth) - 1

    @property
    def n_leaves(self) -> int:
        return 1 << self.depth

    def f(self, node: int, feature: int) -> int:
        return (node - 1) * self.n_features + feature + 1

    def c(self, leaf: int, cls: int) -> int:
        return self.n_nodes * self.n_features + leaf * self.n_classes + cls + 1

    @property
    def first_free(self) -> int:
        """First variable not used by F or C (examples and counters start here)."""
        return self.n_nodes * self.n_features + self.n_leaves * self.n_classes + 1

    @cached_property
    def path_signs(self) -> list[np.ndarray]:
        """Per depth l, the sign each node's path gives X[., t] (t < l) in a clause.

        Row r is the r-th node of depth l (leaf r when l = depth): its bit t read from
        the most significant end is 1 when the path goes right at depth t, and the
        clause "not on this path, or ..." then holds -X[., t]; going left holds +X.
        """
        signs = []
        for level in range(self.depth + 1):
            rows = np.arange(1 << level)[:, None]
            bits = (rows >> np.arange(level - 1, -1, -1)[None, :]) & 1
            signs.append((1 - 2 * bits).astype(np.int64))
        return signs


def node_clauses(tree: PerfectTree) -> Clauses:
    """Formulas (1) and (2): every internal node tests exactly one feature.

    At-most-one is the paper's pairwise encoding, m(m-1)/2 clauses per node, except
    that it is left out beyond `PAIRWISE_LIMIT` features: at-least-one alone is
    equisatisfiable (a node holding several features sends every example the same
    way by all of them, so `decode` may keep the first) and the pairs would dominate
    the formula (wine binarised at every midpoint: 1,263 features, 800,000 pairs a
    node).
    """
    m = tree.n_features
    clauses = []
    pairs = np.array(np.triu_indices(m, 1)).T if m <= PAIRWISE_LIMIT else np.zeros((0, 2), int)
    for node in range(1, tree.n_nodes + 1):
        first = tree.f(node, 0)
        clauses.append(list(range(first, first + m)))
        clauses.extend((-(first + pairs)).tolist())
    return clauses



def example_clauses(tree: PerfectTree, x_vars: np.ndarray, row: np.ndarray,
                    cls: int) -> Clauses:
    """Formulas (3)-(6) for one example (Algorithms 1 and 2 of the paper, unrolled).

    `x_vars` are the example's k position variables, `row` its 0/1 features, `cls`
    its class.  For a node q at depth l on the example's path: going right there
    (X[i, l]) forbids q every feature that is 0 in the row (3), going left every
    feature that is 1 (4).  For each leaf v: being placed in v forces v's class to be
    the example's (5) and no other (6).  "On the path" is the disjunction of the
    negated path literals, built for all nodes of a level at once.
    """
    k, m = tree.depth, tree.n_features
    x_vars = np.asarray(x_vars, dtype=np.int64)
    ones = np.asarray(row, dtype=bool)
    clauses: Clauses = []
    for level in range(k):
        width = 1 << level
        prefix = tree.path_signs[level] * x_vars[:level]              # (width, level)
        nodes = np.arange(width, 2 * width)
        block = np.empty((width, m, level + 2), dtype=np.int64)
        block[:, :, :level] = prefix[:, None, :]
        block[:, :, level] = np.where(ones, x_vars[level], -x_vars[level])[None, :]
        block[:, :, level + 1] = -((nodes[:, None] - 1) * m + np.arange(m)[None, :] + 1)
        clauses.extend(block.reshape(-1, level + 2).tolist())
    prefix = tree.path_signs[k] * x_vars[:k]                           # (2^k, k)
    labels = tree.c(0, 0) + (np.arange(tree.n_leaves)[:, None] * tree.n_classes
                             + np.arange(tree.n_classes)[None, :])     # (2^k, c)
    block = np.empty((tree.n_leaves, tree.n_classes, k + 1), dtype=np.int64)
    block[:, :, :k] = prefix[:, None, :]
    block[:, :, k] = np.where(np.arange(tree.n_classes) == cls, labels, -labels)
    clauses.extend(block.reshape(-1, k + 1).tolist())
    return clauses


@dataclass(frozen=True)
class LeafCounter:
    """Variables of the unary counter of labelled leaves, formulas (7)-(10).

    H[i, j] ("at least j of the first i leaves are labelled") is only implied upward,
    so assuming -H[2^k, b + 1] allows at most b labelled leaves.  The bound is an
    assumption rather than the paper's unit clause so that one solver, and the
    examples it has learned, serve every step of the binary search on the size.
    """

    tree: PerfectTree
    first: int           # U[v] = first + v; H[i, j] follow
    width: int           # the largest bound b that may be assumed

    def u(self, leaf: int) -> int:
        return self.first + leaf

    def h(self, i: int, j: int) -> int:
        return self.first + self.tree.n_leaves + i * (self.width + 2) + j

    @property
    def next_free(self) -> int:
        return self.h(self.tree.n_leaves, self.width + 1) + 1

    def at_most(self, leaves: int) -> int:
        """The assumption allowing at most `leaves` labelled leaves (<= width)."""
        return -self.h(self.tree.n_leaves, leaves + 1)


def counter_clauses(counter: LeafCounter) -> Clauses:
    """Formulas (7), (8), (9) and the start H[0, 0] of (10)."""
    tree, width = counter.tree, counter.width
    clauses = [[-tree.c(v, a), counter.u(v)]
               for v in range(tree.n_leaves) for a in range(tree.n_classes)]
    for i in range(tree.n_leaves):
        for j in range(width + 2):
            clauses.append([-counter.h(i, j), counter.h(i + 1, j)])
            if j <= width:
                clauses.append([-counter.u(i), -counter.h(i, j), counter.h(i + 1, j + 1)])
    clauses.append([counter.h(0, 0)])
    return clauses


def decode(tree: PerfectTree, model: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(feature of each internal node 1..2^k-1 at index q-1, class of each leaf or -1).

    The model may stop before the last variable (solvers only report variables they
    saw, and leaf classes appear in no clause until an example reaches them):
    missing variables are false.  A node holding several features gets the first.
    """
    values = np.zeros(tree.first_free - 1, dtype=bool)
    seen = np.asarray(model[:len(values)], dtype=np.int64)
    values[:len(seen)] = seen > 0
    f_end = tree.n_nodes * tree.n_features
    features = values[:f_end].reshape(tree.n_nodes, tree.n_features).argmax(axis=1)
    classes = values[f_end:].reshape(tree.n_leaves, tree.n_classes)
    labels = np.where(classes.any(axis=1), classes.argmax(axis=1), -1)
    return features.astype(np.int64), labels.astype(np.int64)


def leaf_of(features: np.ndarray, X: np.ndarray, depth: int) -> np.ndarray:
    """Leaf index each 0/1 row of X reaches in the perfect tree (`decode`'s features)."""
    node = np.ones(len(X), dtype=np.int64)
    rows = np.arange(len(X))
    for _ in range(depth):
        node = 2 * node + X[rows, features[node - 1]].astype(np.int64)
    return node - (1 << depth)
