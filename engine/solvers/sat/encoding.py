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

The `*_clauses` functions are pure and return clauses as tuples of ints (ready for
`pysat`'s `append_formula`): a solver is built by adding their outputs.  `decode`
and `leaf_of` read a model back as a tree and route rows through it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

Clauses = list[tuple[int, ...]]

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
    def path_signs(self) -> list[list[tuple[int, ...]]]:
        """Per depth l, the sign each node's path gives X[., t] (t < l) in a clause.

        Entry r is the r-th node of depth l (leaf r when l = depth): its bit t read from
        the most significant end is 1 when the path goes right at depth t, and the
        clause "not on this path, or ..." then holds -X[., t]; going left holds +X.
        """
        return [[tuple(1 - 2 * ((row >> (level - 1 - t)) & 1) for t in range(level))
                 for row in range(1 << level)] for level in range(self.depth + 1)]

    @cached_property
    def negated_tests(self) -> list[list[int]]:
        """-F[q, f] for every feature f, per internal node q (at index q - 1).

        Built once per tree so that every example's clauses share these int objects:
        creating them anew (numpy's `tolist`) was most of the time spent building
        clauses, which on sub-second runs is a third of the run."""
        m = self.n_features
        return [[-(self.f(q, 0) + f) for f in range(m)] for q in range(1, self.n_nodes + 1)]

    def path_prefixes(self, level: int, x_vars: list[int]) -> list[tuple[int, ...]]:
        """"Not on the path to the r-th node of depth `level`", for each r, as the first
        literals of a clause (see `path_signs`)."""
        return [tuple(s * x for s, x in zip(signs, x_vars)) for signs in self.path_signs[level]]


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
    pairs = [(i, j) for i in range(m) for j in range(i + 1, m)] if m <= PAIRWISE_LIMIT else []
    clauses: Clauses = []
    for negated in tree.negated_tests:
        clauses.append(tuple(-lit for lit in negated))
        clauses += [(negated[i], negated[j]) for i, j in pairs]
    return clauses


def example_clauses(tree: PerfectTree, x_vars, row: np.ndarray, cls: int) -> Clauses:
    """Formulas (3)-(6) for one example (Algorithms 1 and 2 of the paper, unrolled).

    `x_vars` are the example's k position variables, `row` its 0/1 features, `cls`
    its class.  For a node q at depth l on the example's path: going right there
    (X[i, l]) forbids q every feature that is 0 in the row (3), going left every
    feature that is 1 (4).  For each leaf v: being placed in v forces v's class to be
    the example's (5) and no other (6).  "On the path" is the disjunction of the
    negated path literals.  Clauses are tuples of shared ints (see `negated_tests`).
    """
    x = [int(v) for v in x_vars]
    ones = np.asarray(row, dtype=bool).tolist()
    clauses: Clauses = []
    for level in range(tree.depth):
        here = x[level]
        sides = [here if one else -here for one in ones]
        first = (1 << level) - 1
        for r, prefix in enumerate(tree.path_prefixes(level, x)):
            clauses += [prefix + tail for tail in zip(sides, tree.negated_tests[first + r])]
    K = tree.n_classes
    for leaf, prefix in enumerate(tree.path_prefixes(tree.depth, x)):
        first = tree.c(leaf, 0)
        clauses += [prefix + (first + a if a == cls else -(first + a),) for a in range(K)]
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
    clauses = [(-tree.c(v, a), counter.u(v))
               for v in range(tree.n_leaves) for a in range(tree.n_classes)]
    for i in range(tree.n_leaves):
        for j in range(width + 2):
            clauses.append((-counter.h(i, j), counter.h(i + 1, j)))
            if j <= width:
                clauses.append((-counter.u(i), -counter.h(i, j), counter.h(i + 1, j + 1)))
    clauses.append((counter.h(0, 0),))
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
