"""Tree walking and node tests shared by every exporter.

A `Tree` stores matrix columns and thresholds (`x[j] <= t` goes left), which is how
solvers think but not how a rule, a Python function or a SQL query reads: those need
"which raw column is tested, how, and which child does the row reach when the test
holds".  `split` answers that once for every exporter, from the tree arrays alone
(not from display strings), so that all exports follow exactly the route
`Tree.apply` takes, including for binary features with an unusual threshold.
`fold` walks the tree recursively so each exporter only says how to render a leaf
and a split, and `leaf_summary` gives the numbers every exporter prints at a leaf.

A decision diagram's nodes are read the same way (`node_split`: a univariate test
is a tree's `split`, a multivariate one a `LinearTest`).  `branches` is the one
place that says how a node of either model is *shown* (issue 34): its test in
positive words, the child where it holds first (drawn on the left, "yes"), the
other second (on the right, "no"), whatever order the model's arrays keep them in.
Every picture (the window's views, saved images) and every export with an order
(DOT, the rules) uses it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import math

import numpy as np

from engine.data.features import EQ, IN, LE, MISSING, NUM, Feature, format_number
from engine.data.preprocessing import InputColumn

if TYPE_CHECKING:
    from engine.model.diagram import Diagram
    from engine.model.tree import Tree

T = TypeVar("T")


@dataclass(frozen=True)
class Test:
    """A test on one raw column: `feature.op` is LE, EQ, IN or MISSING, never NUM.

    A continuous (NUM) split becomes the LE test `column <= threshold` (with the same
    missing-value route), so exporters deal with four kinds of test only.  A missing
    cell makes the test hold when `routed` is True and fail when it is False; when it
    is None the test is evaluated on `column.fill` instead.  MISSING looks at the
    cell itself.  A text value never seen in training is in no IN group.
    """

    column: InputColumn
    feature: Feature

    @property
    def op(self) -> str:
        return self.feature.op

    @property
    def value(self) -> float | str | None:
        return self.feature.value

    @property
    def routed(self) -> bool | None:
        return self.feature.missing

    def missing_holds(self) -> bool:
        """Whether the test holds on a missing cell."""
        if self.op == MISSING:
            return True
        if self.routed is not None:
            return self.routed
        fill = self.column.fill
        return bool(fill <= self.value if self.op == LE else
                    fill in self.value if self.op == IN else fill == self.value)

    def text(self, holds: bool = True, full: bool = False) -> str:
        """Readable form, e.g. `age <= 37.5`, or its negation `age > 37.5` (`full`: a
        value group with all its values)."""
        return self.feature.condition(holds, full=full)


@dataclass(frozen=True)
class Split:
    """An internal node: the row goes to `if_true` when `test` holds, else `if_false`."""

    node: int
    test: Test
    if_true: int
    if_false: int

    @property
    def decides(self) -> bool:
        """False when both outcomes reach the same child (the node tests nothing)."""
        return self.if_true != self.if_false


def split(tree: Tree, node: int) -> Split:
    """The test of internal `node` on its raw column and the child of each outcome."""
    f = tree.features[int(tree.feature[node])]
    t = float(tree.threshold[node])
    left, right = int(tree.left[node]), int(tree.right[node])
    column = tree.prep.column(f.column)
    if f.op == NUM:
        return Split(node, Test(column, Feature(f.column, LE, t, f.missing)), left, right)
    if f.op not in (LE, EQ, IN, MISSING):
        raise ValueError(f"Unknown feature operator {f.op!r} in node {node}.")
    # A binary feature is 1 where its test holds; the tree sends x <= t to the left.
    return Split(node, Test(column, f),
                 left if 1.0 <= t else right, left if 0.0 <= t else right)


@dataclass(frozen=True)
class Term:
    """One term of a diagram's multivariate test: `weight` times the raw value of a
    numeric column, or times 1.0 / 0.0 where a binary feature's test holds / not."""

    column: InputColumn
    feature: Feature
    weight: float

    @property
    def name(self) -> str:
        return f"[{self.feature.condition(True)}]" if self.feature.binary else self.column.name


@dataclass(frozen=True)
class LinearTest:
    """Holds when `sum(weight * value of term) <= threshold` (0 without terms)."""

    terms: tuple[Term, ...]
    threshold: float

    @property
    def constant(self) -> bool | None:
        """The outcome when there are no terms (every row one way), else None."""
        return 0.0 <= self.threshold if not self.terms else None

    def text(self, holds: bool = True, full: bool = False) -> str:
        if not self.terms:
            return "always" if self.constant == holds else "never"
        parts = []
        for term in self.terms:
            sign = "-" if term.weight < 0 else "+"
            parts.append(f"{sign} {format_number(abs(term.weight))}*{term.name}")
        body = " ".join(parts)
        body = body[2:] if body.startswith("+ ") else "-" + body[2:]
        return f"{body} {'<=' if holds else '>'} {format_number(self.threshold)}"


def node_split(model: Tree | Diagram, node: int) -> Split:
    """The test of an internal node of a tree or a diagram and the child reached when
    it holds or not; a diagram's multivariate test (`feature == -1`) is a `LinearTest`."""
    if model.feature[node] >= 0:
        return split(model, node)
    terms = tuple(Term(model.prep.column(model.features[j].column), model.features[j],
                       weight) for j, weight in model.terms(node))
    left, right = int(model.left[node]), int(model.right[node])
    return Split(node, LinearTest(terms, float(model.threshold[node])), left, right)


def outcomes(s: Split) -> list[tuple[bool, int]]:
    """(holds, child) of each outcome that leads somewhere of its own.

    One outcome when the node decides nothing: a test without terms, or a binary
    test whose two outcomes reach the same child (`split`).
    """
    constant = s.test.constant if isinstance(s.test, LinearTest) else None
    if constant is not None:
        return [(constant, s.if_true if constant else s.if_false)]
    if not s.decides:
        return [(True, s.if_true)]
    return [(True, s.if_true), (False, s.if_false)]


YES, NO = "yes", "no"


@dataclass(frozen=True)
class Branches:
    """An internal node as every picture and ordered export shows it (issue 34).

    `text` is the node's test in positive words (`colour = red`, `age <= 37.5`, never
    `colour != red`); `yes` is the child reached when it holds, drawn on the left (or
    listed first) and labelled "yes"; `no` is the other child, on the right, "no".
    Only the presentation: the model's `left` / `right` arrays stay as they are (a
    binary feature is 1 where its test holds and the model sends 0 left, so there
    `yes` is the right child).  A node that decides nothing (both outcomes reach one
    child: a binary threshold outside [0, 1), a test without terms) has `yes` the
    child every row reaches, labelled "always", and `no` the other one, "never".
    """

    split: Split
    yes: int
    no: int
    decides: bool

    @property
    def text(self) -> str:
        """The test shown in the node's box."""
        if isinstance(self.split.test, LinearTest) and not self.split.test.terms:
            return "always"
        return self.split.test.text(True)

    @property
    def arcs(self) -> tuple[tuple[bool, int], tuple[bool, int]]:
        """(holds, child) of both arcs in drawing order: yes (left), then no (right)."""
        return (True, self.yes), (False, self.no)

    def label(self, holds: bool) -> str:
        """What the arc says: "yes" / "no" ("always" / "never" if nothing is decided)."""
        if not self.decides:
            return "always" if holds else "never"
        return YES if holds else NO

    def condition(self, holds: bool, full: bool = False) -> str:
        """The condition a row meets along the yes (`holds`) or the no arc (`full`:
        value groups with every value)."""
        return self.split.test.text(holds, full) if self.decides else self.label(holds)


def branches(model: Tree | Diagram, node: int) -> Branches:
    """How internal `node` of a tree or a diagram is drawn: test, yes child, no child."""
    s = node_split(model, node)
    reached = outcomes(s)
    if len(reached) == 2:
        return Branches(s, s.if_true, s.if_false, True)
    child = reached[0][1]
    left, right = int(model.left[node]), int(model.right[node])
    return Branches(s, child, right if child == left else left, False)


def resolve(tree: Tree, node: int) -> int:
    """The node that decides for rows reaching `node`, skipping nodes that test nothing.

    A node whose two outcomes lead to the same child (a binary feature with a
    threshold outside [0, 1)) is transparent: exports would otherwise show a test
    without effect and count the leaf behind it twice.
    """
    while not tree.is_leaf(node):
        s = split(tree, node)
        if s.decides:
            break
        node = s.if_true
    return node


def fold(tree: Tree, leaf: Callable[[int], T],
         branch: Callable[[Split, T, T], T], node: int = 0) -> T:
    """Combine the tree bottom-up: `leaf(node)` at leaves, `branch(split, t, f)` above.

    `t` and `f` are the results for the subtrees reached when the test holds and
    when it does not; transparent nodes are skipped.
    """
    node = resolve(tree, node)
    if tree.is_leaf(node):
        return leaf(node)
    s = split(tree, node)
    return branch(s, fold(tree, leaf, branch, s.if_true),
                  fold(tree, leaf, branch, s.if_false))


@dataclass(frozen=True)
class LeafSummary:
    """What a leaf predicts and how much training weight backs it.  A regression's
    leaf predicts `mean` (shown as `class_name`, rounded), its rows spread around it
    by `spread` (their root mean squared error), and has no confidence."""

    class_name: str
    weight: float      # total training weight reaching the leaf
    confidence: float  # weight of the predicted class / weight (0 for an empty leaf)
    mean: float | None = None
    spread: float = 0.0


def leaf_summary(tree: Tree, node: int) -> LeafSummary:
    if tree.regression:
        weight, mean, squared = (float(v) for v in tree.value[node])
        spread = math.sqrt(squared / weight) if weight > 0 else 0.0
        return LeafSummary(format_number(mean), weight, 0.0, mean, spread)
    label = int(tree.label[node])
    weight = float(tree.value[node].sum())
    confidence = float(tree.value[node][label]) / weight if weight > 0 else 0.0
    return LeafSummary(tree.class_names[label], weight, confidence)


def columns_used(tree: Tree) -> list[InputColumn]:
    """Raw columns tested by the tree, in the order of `prep.columns`."""
    names = set(fold(tree, lambda node: frozenset(),
                     lambda s, t, f: t | f | {s.test.column.name}))
    return [c for c in tree.prep.columns if c.name in names]


def count_text(model: Tree | Diagram, weight: float) -> str:
    """A node's training weight as exports print it: "n=12" when the weights are row
    counts, "weight=102.67" when class weights made them sums of weights (read as a
    row count, "n=102.666" misled)."""
    weights = model.node_weights
    whole = np.allclose(weights, np.round(weights))
    return f"{'n' if whole else 'weight'}={format_number(weight)}"
