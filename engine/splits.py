"""Splitting a node by hand: every candidate split ranked by worth, the surrogates of
the split there now, and the tree with the split chosen.

JMP's Split button and SAS Enterprise Miner's interactive tree, on Orchard's
objective.  A candidate's worth is what the run's solvers minimise: the training
weight it stops misclassifying at the node, less the cost of its extra leaf when the
run has a cost per leaf.  Misclassification is flat near a pure node (many splits
remove no error at all), so ties are ranked by the Gini impurity they remove, as CART
does.  A split that leaves either side with less than the run's least leaf weight is
not offered: the solvers could not have made it.

Candidates come from the features the data hold now (`Dataset.features`: thresholds,
value groups, continuous columns), so a feature the tree does not test yet is added
to its recipe (`Preprocessing.features`) when chosen.  A continuous column gets its
best threshold, or the one the user types.  Surrogates (CART's) are the splits on
other features that send the node's rows the way its own split sends them most
often, which is what an analyst asks when a column may be missing at prediction time
or may stand for another.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from engine.data.dataset import Dataset
from engine.data.features import EQ, IN, Feature, format_count
from engine.editing import (TOLERANCE, graft, group_column, node_text, training_error,
                            training_matrix)
from engine.errors import ParameterError
from engine.model.tree import Tree
from engine.solvers.protocol import leaf_penalty
from engine.solvers.warm_start import least_leaf
from engine.split_kernel import class_weights_where

# A continuous column's thresholds tried at most (spread over its distinct values).
MAX_CUTS = 4096


@dataclass(frozen=True)
class Candidate:
    """One split of a node's rows: `feature` (an index into the data's features)
    with `threshold` (0.5 for a 0/1 feature), the class weights on each side and
    what it is worth."""

    feature: int             # -1 for a group of values typed by hand (`test`)
    threshold: float
    condition: str           # the test in the tree's words, where it holds
    holds: np.ndarray        # class weights of the rows where the test holds
    fails: np.ndarray        # and where it does not
    worth: float             # training weight no longer misclassified, less a leaf's cost
    gini: float              # Gini impurity removed (weight x impurity), for ties
    test: Feature | None = None   # the test when it is none of the data's features

    @property
    def rows(self) -> tuple[float, float]:
        return float(self.holds.sum()), float(self.fails.sum())


@dataclass(frozen=True)
class Surrogate:
    """A split on another feature that agrees with the node's own split on
    `agreement` of the node's weight (CART's surrogate), `gain` above sending every
    row the majority way."""

    feature: int
    threshold: float
    condition: str           # the test, where it holds (sent the own split's way)
    agreement: float
    gain: float


@dataclass
class NodeSplits:
    """What splitting `node` by hand offers: ranked candidates and, for a node that
    already splits, its surrogates."""

    node: int
    name: str                  # the node in the user's words (`node_text`)
    counts: np.ndarray         # class weights of the rows reaching it
    error: float               # their weight misclassified by a leaf here
    least: float               # the run's least leaf weight (1: none)
    penalty: float             # the weight one leaf costs (0: no cost per leaf)
    candidates: list[Candidate]
    surrogates: list[Surrogate]
    current: int | None = None  # the data feature the node tests now, if any

    @property
    def rows(self) -> float:
        return float(self.counts.sum())


def _error(counts: np.ndarray) -> np.ndarray:
    """Misclassified weight of a leaf holding `counts` (classes on the first axis)."""
    return counts.sum(axis=0) - counts.max(axis=0)


def _impurity(counts: np.ndarray) -> np.ndarray:
    """Weight x Gini impurity of a node holding `counts` (classes on the first axis)."""
    total = counts.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = total - (counts ** 2).sum(axis=0) / total
    return np.where(total > 0, out, 0.0)


def _condition(feature: Feature, threshold: float) -> str:
    """The test in the words of the tree view, where it holds (`x <= t` for a number,
    `colour = red` for a 0/1 feature)."""
    return feature.condition(True, threshold)


def _best_threshold(values: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int,
                    least: float) -> tuple[float, np.ndarray] | None:
    """The threshold of one continuous column with the least error (ties: least Gini
    impurity) among those leaving `least` weight on each side, and the class weights
    at or below it; None when no threshold does.

    Every mid-point between distinct values is tried, or `MAX_CUTS` of them spread
    over the distinct values when there are more (the user can type any other): the
    class weights per bin need classes x cuts numbers, not classes x rows."""
    distinct = np.unique(values)
    if len(distinct) < 2:
        return None
    at = np.arange(len(distinct) - 1)
    if len(at) > MAX_CUTS:
        at = np.unique(np.linspace(0, len(distinct) - 2, MAX_CUTS).round().astype(int))
    cuts = (distinct[at] + distinct[at + 1]) / 2.0
    bins = np.searchsorted(cuts, values)          # value <= cuts[k] iff bin <= k
    width = len(cuts) + 1
    hist = np.bincount(y * width + bins, weights=w,
                       minlength=n_classes * width).reshape(n_classes, width)
    left = np.cumsum(hist, axis=1)[:, :-1]
    right = hist.sum(axis=1, keepdims=True) - left
    fine = (left.sum(axis=0) >= least) & (right.sum(axis=0) >= least)
    if not fine.any():
        return None
    error = _error(left) + _error(right)
    impurity = _impurity(left) + _impurity(right)
    key = np.lexsort((impurity, error))        # error first, then impurity
    best = next(int(k) for k in key if fine[k])
    return float(cuts[best]), left[:, best]


def node_rows(tree: Tree, data: Dataset, node: int, X: np.ndarray | None = None
              ) -> np.ndarray:
    """The indices of `data`'s rows that reach `node` of `tree` (the rows the tree
    trained on; `X`, their matrix in the tree's features, when at hand)."""
    if not 0 <= node < tree.n_nodes:
        raise ParameterError(f"The tree has no node {node} (it has {tree.n_nodes}).")
    X = training_matrix(tree, data) if X is None else X
    return np.flatnonzero(tree.reaches(X, node))


def rank_splits(tree: Tree, data: Dataset, node: int, params: dict | None = None,
                surrogates: int = 5) -> NodeSplits:
    """Every split of `data`'s features on the rows reaching `node`, best first, and
    for a node that already splits its best `surrogates` surrogates.

    `params` are the run's: its least leaf weight bounds each side of a split, and its
    cost per leaf is taken off each split's worth.
    """
    params = params or {}
    tree_X = training_matrix(tree, data)
    rows = node_rows(tree, data, node, tree_X)
    y, w = data.y[rows], data.w[rows]
    n_classes = len(data.class_names)
    counts = np.bincount(y, weights=w, minlength=n_classes)
    least = least_leaf(params)
    penalty = leaf_penalty(params, data.w.sum())
    parent_error = float(_error(counts[:, None])[0])
    parent_impurity = float(_impurity(counts[:, None])[0])

    candidates: list[Candidate] = []
    binary = np.array([j for j, f in enumerate(data.features) if f.binary], dtype=int)
    if binary.size and len(y):
        holds = class_weights_where(data.X, rows, data.y, data.w, binary, n_classes)
        fails = counts[:, None] - holds
        error = _error(holds) + _error(fails)
        impurity = _impurity(holds) + _impurity(fails)
        fine = (holds.sum(axis=0) >= least) & (fails.sum(axis=0) >= least)
        for k in np.flatnonzero(fine):
            j = int(binary[k])
            candidates.append(Candidate(
                j, 0.5, _condition(data.features[j], 0.5), holds[:, k], fails[:, k],
                parent_error - float(error[k]) - penalty,
                parent_impurity - float(impurity[k])))
    for j, f in enumerate(data.features):
        if f.binary or not len(y):
            continue
        best = _best_threshold(data.X[rows, j].astype(np.float64), y, w, n_classes, least)
        if best is not None:
            candidates.append(_scored(data, j, best[0], best[1], counts, penalty))
    candidates.sort(key=lambda c: (-round(c.worth, 9), -c.gini, c.condition))

    current = None
    found: list[Surrogate] = []
    if not tree.is_leaf(node):
        f = tree.features[tree.feature[node]]
        current = next((j for j, g in enumerate(data.features) if g == f), None)
        goes_left = tree_X[rows, tree.feature[node]] <= tree.threshold[node]
        found = _surrogates(data, rows, w, goes_left, tree, node, current)[:surrogates]
    return NodeSplits(node, node_text(tree, node), counts, parent_error, least, penalty,
                      candidates, found, current)


def _scored(data: Dataset, feature: int, threshold: float, holds: np.ndarray,
            counts: np.ndarray, penalty: float) -> Candidate:
    """A candidate from the class weights where its test holds."""
    fails = counts - holds
    parent_error = float(_error(counts[:, None])[0])
    error = float(_error(holds[:, None])[0] + _error(fails[:, None])[0])
    impurity = float(_impurity(holds[:, None])[0] + _impurity(fails[:, None])[0])
    return Candidate(feature, threshold, _condition(data.features[feature], threshold),
                     holds, fails, parent_error - error - penalty,
                     float(_impurity(counts[:, None])[0]) - impurity)


def typed_split(tree: Tree, data: Dataset, node: int, feature: int, threshold: float,
                params: dict | None = None) -> Candidate:
    """The split of a continuous feature at a threshold the user typed, scored like a
    ranked candidate (a 0/1 feature has only its own test: choose it from the list)."""
    f = data.features[feature]
    if f.binary:
        raise ParameterError(f"'{f.condition()}' is a 0/1 test: it takes no threshold; "
                             "choose it from the list as it is.")
    if not np.isfinite(threshold):
        raise ParameterError("The threshold must be a finite number.")
    rows = node_rows(tree, data, node)
    y, w = data.y[rows], data.w[rows]
    n_classes = len(data.class_names)
    counts = np.bincount(y, weights=w, minlength=n_classes)
    below = data.X[rows, feature] <= threshold
    holds = np.bincount(y[below], weights=w[below], minlength=n_classes)
    return _scored(data, feature, float(threshold), holds, counts,
                   leaf_penalty(params or {}, data.w.sum()))


def typed_group(tree: Tree, data: Dataset, node: int, column: str, values,
                params: dict | None = None) -> Candidate:
    """The split "column in {values}" the user typed, scored like a ranked candidate.
    It needs the data's test of each value (a column of at most a few values is
    tested value by value); a missing cell goes as the data's tests send it."""
    values = tuple(dict.fromkeys(str(v) for v in values))
    if not values:
        raise ParameterError("Choose at least one value for the group.")
    routes = {f.missing for f in data.features if f.column == column and f.op == EQ}
    if not routes:
        raise ParameterError(f"'{column}' has no test of a single value to build a "
                             "group from: choose one of its listed groups instead.")
    missing = False if False in routes else None
    test = Feature(column, IN, values, missing) if len(values) > 1 else \
        Feature(column, EQ, values[0], missing)
    holds_rows = group_column(Feature(column, IN, values, missing), data)
    if holds_rows is None:
        raise ParameterError(f"'{column}' is not tested value by value (it has too many "
                             "values): choose one of its listed groups instead.")
    rows = node_rows(tree, data, node)
    y, w = data.y[rows], data.w[rows]
    n_classes = len(data.class_names)
    counts = np.bincount(y, weights=w, minlength=n_classes)
    inside = holds_rows[rows]
    holds = np.bincount(y[inside], weights=w[inside], minlength=n_classes)
    fails = counts - holds
    parent_error = float(_error(counts[:, None])[0])
    error = float(_error(holds[:, None])[0] + _error(fails[:, None])[0])
    impurity = float(_impurity(holds[:, None])[0] + _impurity(fails[:, None])[0])
    return Candidate(-1, 0.5, test.condition(True), holds, fails,
                     parent_error - error - leaf_penalty(params or {}, data.w.sum()),
                     float(_impurity(counts[:, None])[0]) - impurity, test)


def _surrogates(data: Dataset, rows: np.ndarray, w: np.ndarray, goes_left: np.ndarray,
                tree: Tree, node: int, current: int | None) -> list[Surrogate]:
    """Splits on the data's other features ranked by how often they send a row the
    way the node's split does (either orientation), if more often than the majority
    way (CART keeps only those)."""
    total = float(w.sum())
    if total <= 0:
        return []
    left_weight = float(w[goes_left].sum())
    majority = max(left_weight, total - left_weight) / total
    own_column = tree.features[tree.feature[node]].column
    out = []
    for j, f in enumerate(data.features):
        if j == current or f.column == own_column:
            continue
        if f.binary:
            holds = data.X[rows, j] > 0.5
            threshold = 0.5
            # the side where the test holds: right for a 0/1 feature
            same = float(w[holds != goes_left].sum())
        else:
            values = data.X[rows, j].astype(np.float64)
            order = np.argsort(values, kind="stable")
            v = values[order]
            cut = np.flatnonzero(v[1:] > v[:-1])
            if cut.size == 0:
                continue
            agree_left = np.cumsum(np.where(goes_left[order], w[order], 0.0))
            agree_right = np.cumsum(np.where(goes_left[order], 0.0, w[order])[::-1])[::-1]
            score = agree_left[cut] + agree_right[cut + 1]   # x <= t sends left
            score = np.maximum(score, total - score)
            k = int(np.argmax(score))
            threshold = (float(v[cut[k]]) + float(v[cut[k] + 1])) / 2.0
            same = float(agree_left[cut[k]] + agree_right[cut[k] + 1])
        agreement = max(same, total - same) / total
        if agreement > majority + TOLERANCE:
            out.append(Surrogate(j, threshold, _condition(f, threshold), agreement,
                                 agreement - majority))
    out.sort(key=lambda s: (-s.agreement, s.condition))
    return out


def split_node(tree: Tree, data: Dataset, node: int, candidate: Candidate) -> Tree:
    """`tree` with `node` split by `candidate` into two leaves (a node that splits
    already loses its subtree: the new split replaces it), as an edit by hand.

    The feature joins the tree's recipe when the tree does not test it yet, so the
    tree predicts it on raw tables as it does its own."""
    if not 0 <= node < tree.n_nodes:
        raise ParameterError(f"The tree has no node {node} (it has {tree.n_nodes}).")
    f = candidate.test or data.features[candidate.feature]
    prep = tree.prep
    if f in prep.features:
        index = prep.features.index(f)
    else:
        columns = prep.columns + ([data.prep.column(f.column)]
                                  if f.column not in {c.name for c in prep.columns} else [])
        prep = replace(prep, columns=columns, features=prep.features + [f], _by_name={})
        index = len(prep.features) - 1
    # a 0/1 test holds on the right branch, `x <= t` on the left (Tree's convention)
    left, right = ((candidate.fails, candidate.holds) if f.binary else
                   (candidate.holds, candidate.fails))
    stump = Tree.from_arrays([index, -1, -1], [candidate.threshold, 0.0, 0.0],
                             [1, -1, -1], [2, -1, -1],
                             [left + right, left, right], prep)
    if stump.value[0].sum() == 0:
        stump.label[:] = tree.label[node]
    new_error = float(_error(left[:, None])[0] + _error(right[:, None])[0])
    verb = "split it on" if tree.is_leaf(node) else "replaced its split by"
    return graft(replace(tree, prep=prep), {node: stump},
                 f"{node_text(tree, node)}: {verb} '{candidate.condition}' (error "
                 f"there {format_count(training_error(tree, node))} -> "
                 f"{format_count(new_error)})")
