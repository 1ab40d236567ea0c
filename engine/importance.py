"""What a trained model leans on, and how sure it is: feature importance, class
probabilities and the ROC curve of one class, as plain numpy for the Results views.

Importance is the weighted error reduction of each split: the training weight a
node's rows would misclassify if the node were a leaf predicting their majority
class, minus the same for its two children.  It is in the unit of the tree's error
(rows, or weight when rows are weighted), never negative (a majority can only gain
from a split), and for a tree the splits' reductions add up to the root's error as a
leaf minus the tree's error on the same rows.  Reductions are summed per raw column
(`Feature.column`), so the thresholds and one-hot values of one column add up: the
user asks "which column matters", not "which 0/1 feature".

Decision diagrams get the same measure with a node's rows split by its own test (a
shared child merges rows from several parents, so a diagram's reductions need not
add up to its error).  A weighted test (`split=multivariate`) cannot say which of its
features did the work, so its reduction is shared equally among the features it sums.

A tree scores a row by its leaf's class shares (`class_probabilities`): it has as
many distinct scores as leaves, so its ROC curve has one corner per distinct leaf
share, which is what the ROC view draws.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.errors import DataError
from engine.metrics import gain_curve, ranked_counts, roc_auc, roc_curve
from engine.model.diagram import Diagram
from engine.model.tree import Tree


@dataclass(frozen=True)
class Importance:
    """Error reduction per raw column (largest first) and per matrix column."""

    columns: list[str]        # every raw column the model's features come from, sorted
    values: np.ndarray        # float[len(columns)]: its error reduction, same order
    per_feature: np.ndarray   # float[F]: the reduction of each matrix column
    root_error: float         # weight the majority class alone misclassifies
    model_error: float        # weight the model misclassifies on the same rows
    tested: frozenset[str] = frozenset()   # the raw columns some node of the model tests

    @property
    def shares(self) -> np.ndarray:
        """Each column's part of the total reduction (0 everywhere when nothing split)."""
        total = float(self.values.sum())
        return self.values / total if total > 0 else np.zeros_like(self.values)

    @property
    def rows(self) -> list[tuple[str, float]]:
        return [(name, float(v)) for name, v in zip(self.columns, self.values)]


@dataclass(frozen=True)
class Roc:
    """The ROC curve of `positive` against every other class."""

    positive: int             # class index taken as positive
    fpr: np.ndarray
    tpr: np.ndarray
    thresholds: np.ndarray    # score >= threshold is called positive; inf first
    auc: float


@dataclass(frozen=True)
class Gain:
    """The cumulative gain of `positive`: rows taken by decreasing score (`taken`,
    a share of all rows) against the share of the positive rows they hold."""

    positive: int
    taken: np.ndarray
    gained: np.ndarray

    @property
    def lift(self) -> np.ndarray:
        """How many times the positive share of the rows taken beats the whole
        table's (1 at every point for a model that ranks at random)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.taken > 0, self.gained / self.taken, np.nan)

    def at(self, share: float) -> float:
        """The share of positive rows among the first `share` of the rows (linear
        between the curve's points, as a mailing would take part of a tie)."""
        return float(np.interp(share, self.taken, self.gained))


@dataclass(frozen=True)
class Cutoffs:
    """Every cutoff on a two-class model's scores: rows whose leaf share of
    `positive` is at least a threshold are called positive.  `thresholds` are the
    distinct shares, highest first, with the weight of the positive (`tp`) and other
    (`fp`) rows at or above each; `positives` and `negatives` are the totals."""

    positive: int
    thresholds: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    positives: float
    negatives: float

    def at(self, threshold: float) -> tuple[float, float, float, float]:
        """(true positives, false positives, false negatives, true negatives) when
        rows scoring at least `threshold` are called positive."""
        k = int(np.searchsorted(-self.thresholds, -threshold, side="right"))
        tp = float(self.tp[k - 1]) if k else 0.0
        fp = float(self.fp[k - 1]) if k else 0.0
        return tp, fp, self.positives - tp, self.negatives - fp

    def cheapest(self, false_positive: float, false_negative: float) -> float:
        """The threshold whose errors cost least (a false positive and a false
        negative costing as given; ties: the higher threshold); above every score
        (nothing called positive) when that is cheapest."""
        cost = false_positive * np.r_[0.0, self.fp] + \
            false_negative * (self.positives - np.r_[0.0, self.tp])
        k = int(np.argmin(cost))
        return float(self.thresholds[k - 1]) if k else float("inf")


def _check_rows(model, X: np.ndarray, y: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    if not isinstance(model, (Tree, Diagram)):
        raise DataError("Feature importance is computed for trees and decision "
                        "diagrams only.")
    if X.ndim != 2 or X.shape[1] != len(model.features) or len(X) != len(y) or \
            (w is not None and len(w) != len(y)):
        raise DataError("These rows are not in the model's features, so they cannot "
                        "be scored with it.")
    return np.ones(len(y)) if w is None else np.asarray(w, dtype=float)


def _majority_errors(counts: np.ndarray) -> np.ndarray:
    """Weight misclassified by predicting each row's majority class (rows of counts)."""
    return counts.sum(axis=-1) - counts.max(axis=-1, initial=0.0)


def _tree_counts(tree: Tree, X: np.ndarray, y: np.ndarray, w: np.ndarray,
                 n_classes: int) -> np.ndarray:
    """Class weights of the rows reaching every node: one vectorised step per level."""
    m = tree.n_nodes
    counts = np.zeros(m * n_classes)
    at = np.zeros(len(X), dtype=np.int64)
    active = np.arange(len(X))
    while active.size:
        counts += np.bincount(at[active] * n_classes + y[active], weights=w[active],
                              minlength=m * n_classes)
        active = active[tree.feature[at[active]] >= 0]
        current = at[active]
        go_left = X[active, tree.feature[current]] <= tree.threshold[current]
        at[active] = np.where(go_left, tree.left[current], tree.right[current])
    return counts.reshape(m, n_classes)


def _tree_sums(tree: Tree, X: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Column sums of `values` (rows x k) over the rows reaching every node."""
    m, k = tree.n_nodes, values.shape[1]
    sums = np.zeros((m, k))
    at = np.zeros(len(X), dtype=np.int64)
    active = np.arange(len(X))
    while active.size:
        for j in range(k):
            sums[:, j] += np.bincount(at[active], weights=values[active, j], minlength=m)
        active = active[tree.feature[at[active]] >= 0]
        current = at[active]
        go_left = X[active, tree.feature[current]] <= tree.threshold[current]
        at[active] = np.where(go_left, tree.left[current], tree.right[current])
    return sums


def _squared_errors(tree: Tree, X, y, w) -> np.ndarray:
    """A regression's counterpart of `_majority_errors`: each node's rows' squared
    error around their own mean (centred first: squares of large values would swamp
    it)."""
    centred = y - (w @ y) / max(float(w.sum()), 1e-300)
    weight, total, squares = _tree_sums(
        tree, X, np.column_stack([w, w * centred, w * centred ** 2])).T
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(weight > 0, np.maximum(squares - total ** 2 / weight, 0.0), 0.0)


def _tree_gains(tree: Tree, X, y, w, n_classes) -> tuple[np.ndarray, float]:
    errors = _squared_errors(tree, X, y, w) if tree.regression else \
        _majority_errors(_tree_counts(tree, X, y, w, n_classes))
    inner = np.flatnonzero(tree.feature >= 0)
    gains = np.zeros(len(tree.features))
    reduction = errors[inner] - errors[tree.left[inner]] - errors[tree.right[inner]]
    np.add.at(gains, tree.feature[inner], np.maximum(reduction, 0.0))  # rounding only
    return gains, float(errors[0]) if len(errors) else 0.0


def _diagram_gains(diagram: Diagram, X, y, w, n_classes) -> tuple[np.ndarray, float]:
    gains = np.zeros(len(diagram.features))

    def error(rows: np.ndarray) -> float:
        return float(_majority_errors(np.bincount(y[rows], weights=w[rows],
                                                  minlength=n_classes)))

    def visit(node: int, rows: np.ndarray) -> None:
        if not rows.size:
            return
        holds = diagram.projection(node, X[rows]) <= diagram.threshold[node]
        reduction = max(error(rows) - error(rows[holds]) - error(rows[~holds]), 0.0)
        if diagram.is_univariate(node):
            gains[diagram.feature[node]] += reduction
        elif terms := diagram.terms(node):
            for j, _ in terms:
                gains[j] += reduction / len(terms)

    diagram.walk(X, visit)   # the diagram's own walk, so rows follow predict exactly
    return gains, error(np.arange(len(y)))


def _tested(model: Tree | Diagram) -> set[int]:
    """The matrix columns some node of the model tests."""
    if isinstance(model, Tree):
        return {int(j) for j in model.feature[model.feature >= 0]}
    out = set()
    for node in range(model.n_internal):
        if model.is_univariate(node):
            out.add(int(model.feature[node]))
        else:
            out.update(int(j) for j, _ in model.terms(node))
    return out


def feature_importance(model: Tree | Diagram, X: np.ndarray, y: np.ndarray,
                       w: np.ndarray | None = None,
                       n_classes: int | None = None) -> Importance:
    """Weighted error reduction of the model's splits on rows `X, y, w` (its features),
    per matrix column and per raw column, raw columns largest first (ties in feature
    order); columns the model never tests score 0.  A regression tree's error is the
    squared error: a node's rows around their mean, less its children's."""
    w = _check_rows(model, X, y, w)
    regression = getattr(model, "regression", False)
    y = np.asarray(y, dtype=np.float64 if regression else np.int64)
    n_classes = len(model.class_names) if n_classes is None else n_classes
    gains, root_error = (_tree_gains if isinstance(model, Tree) else _diagram_gains)(
        model, X, y, w, n_classes)
    names = list(dict.fromkeys(f.column for f in model.features))
    index = {name: k for k, name in enumerate(names)}
    per_column = np.zeros(len(names))
    np.add.at(per_column, [index[f.column] for f in model.features], gains)
    order = np.argsort(-per_column, kind="stable")
    return Importance([names[k] for k in order], per_column[order], gains, root_error,
                      model.error(X, y, w),
                      frozenset(model.features[j].column for j in _tested(model)))


def class_probabilities(model: Tree | Diagram, X: np.ndarray) -> np.ndarray:
    """(rows, classes): the training class shares of the leaf (a diagram: the class
    terminal) each row reaches; a leaf no training row reached gives its own
    prediction 1.0, so every row sums to 1."""
    nodes = model.apply(X)
    if isinstance(model, Tree):
        labels = model.label[nodes]
    elif isinstance(model, Diagram):
        labels = nodes - model.n_internal
    else:
        raise DataError("Class probabilities are computed for trees and decision "
                        "diagrams only.")
    weights = model.value[nodes]
    totals = weights.sum(axis=1)
    proba = np.divide(weights, totals[:, None], out=np.zeros_like(weights),
                      where=totals[:, None] > 0)
    empty = np.flatnonzero(totals <= 0)
    proba[empty, labels[empty]] = 1.0
    return proba


def roc_for_class(proba: np.ndarray, y: np.ndarray, positive: int,
                  w: np.ndarray | None = None, class_names: list[str] | None = None) -> Roc:
    """ROC curve and AUC of class `positive` against the rest, scored by its column of
    `proba`; a one-sentence DataError when the rows hold only one side."""
    y = np.asarray(y)
    weight = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    is_positive = y == positive
    name = f"'{class_names[positive]}'" if class_names else f"number {positive}"
    if not (weight[is_positive] > 0).any() or not (weight[~is_positive] > 0).any():
        side = "no" if not (weight[is_positive] > 0).any() else "only"
        raise DataError(f"A ROC curve needs rows of both sides, and these rows hold "
                        f"{side} class {name}.")
    scores = np.asarray(proba[:, positive], dtype=float)
    fpr, tpr = roc_curve(is_positive, scores, weight)
    thresholds = np.r_[np.inf, np.unique(scores)[::-1]]   # roc_curve's points, in order
    return Roc(positive, fpr, tpr, thresholds, roc_auc(is_positive, scores, weight))


def gain_for_class(proba: np.ndarray, y: np.ndarray, positive: int,
                   w: np.ndarray | None = None) -> Gain:
    """Cumulative gain of class `positive`, rows ranked by its column of `proba`."""
    taken, gained = gain_curve(np.asarray(y) == positive,
                               np.asarray(proba[:, positive], dtype=float), w)
    return Gain(positive, taken, gained)


def cutoffs_for_class(proba: np.ndarray, y: np.ndarray, positive: int,
                      w: np.ndarray | None = None) -> Cutoffs:
    """Every cutoff on class `positive`'s column of `proba` (`Cutoffs`)."""
    weight = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    is_positive = np.asarray(y) == positive
    thresholds, tp, fp = ranked_counts(is_positive, proba[:, positive], weight)
    return Cutoffs(positive, thresholds, tp, fp, float(weight[is_positive].sum()),
                   float(weight[~is_positive].sum()))
