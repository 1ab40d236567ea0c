"""Predictions of a saved or current model on a new table, and how good they are.

One function for `orchard predict` and the window's "Predict a file": the model's
own preprocessing turns the raw cells into features (fills and routes, thresholds,
value groups), each row gets its class, the leaf (a diagram: the class terminal) it
ends in and how sure that leaf is, and when the table has the model's class column
its rows are scored.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import pandas as pd

from engine.data.features import format_number
from engine.importance import class_probabilities
from engine.metrics import class_scores, confusion_matrix, regression_scores


@dataclass
class Predictions:
    """What a model says about each row, and, if the true class is known, how right."""

    class_names: list[str]                # none for a regression
    target: str
    predicted: np.ndarray                 # class index per row (a regression: number)
    leaf: np.ndarray                      # node id of the leaf / class terminal per row
    probability: np.ndarray               # the predicted class's share of that leaf
    truth: np.ndarray | None = None       # class index per row; -1: missing or unknown
    known: np.ndarray | None = None       # the rows whose class is given
    accuracy: float | None = None         # over rows with a known class
    scores: dict | None = None            # class_scores (a regression: regression_scores)
    #                                       over rows with a known class (value)
    confusion: np.ndarray | None = None   # rows: true class, columns: predicted

    @property
    def names(self) -> list[str]:
        """Each row's prediction as text: its class name, or a regression's number (as
        Python writes it back, to the last bit)."""
        if self.predicted.dtype.kind == "f":
            return [repr(float(v)) for v in self.predicted]
        return [self.class_names[k] for k in self.predicted]

    @property
    def n_scored(self) -> int:
        """Rows whose class is given (a class the model never saw counts as wrong)."""
        return 0 if self.known is None else int(self.known.sum())


def predict_table(model, frame: pd.DataFrame) -> Predictions:
    """Predict every row of `frame` (raw cells, as read) with a Tree or Diagram."""
    X = model.prep.transform(frame)   # once: the leaves and shares read the same rows
    predicted = model.predict(X)
    if model.prep.regression:
        return _regression(model, frame, X, predicted)
    probability = class_probabilities(model, X)[np.arange(len(X)), predicted]
    result = Predictions(list(model.class_names), model.prep.target, predicted,
                         model.apply(X), probability)
    if model.prep.target in frame.columns:
        truth = model.prep.labels(frame[model.prep.target])
        known = frame[model.prep.target].notna().to_numpy()
        truth = np.where(known, truth, -1)
        result.truth, result.known = truth, known
        # a missing class is not scored; a class the model never saw is always wrong
        result.accuracy = float((truth[known] == predicted[known]).mean()) if known.any() \
            else None
        seen = truth >= 0
        result.scores = class_scores(truth[seen], predicted[seen], result.class_names)
        result.confusion = confusion_matrix(truth[seen], predicted[seen],
                                            len(result.class_names))
    return result


def _regression(tree, frame: pd.DataFrame, X: np.ndarray, predicted: np.ndarray
                ) -> Predictions:
    """`predict_table` of a regression tree: no class shares (NaN), and when the table
    has the target, the RMSE, MAE and R² of the rows whose value is given."""
    result = Predictions([], tree.prep.target, predicted, tree.apply(X),
                         np.full(len(X), np.nan))
    if tree.prep.target in frame.columns:
        truth = tree.prep.labels(frame[tree.prep.target])   # NaN where missing
        result.truth, result.known = truth, ~np.isnan(truth)
        result.scores = regression_scores(truth[result.known], predicted[result.known])
    return result


def node_rows(tree, frame: pd.DataFrame, node: int) -> tuple[np.ndarray, np.ndarray | dict]:
    """The rows of `frame` with a known class that pass through `node` of `tree` (their
    indices), and how many of them each class has (a regression tree: the rows with a
    value, and the `regression_scores` of the node's mean on them)."""
    X = tree.prep.transform(frame)
    if tree.regression:
        truth = tree.prep.labels(frame[tree.prep.target])   # NaN where missing
        rows = np.flatnonzero(tree.reaches(X, node) & ~np.isnan(truth))
        return rows, regression_scores(truth[rows], np.full(len(rows), tree.value[node, 1]))
    truth = np.where(frame[tree.prep.target].notna().to_numpy(),
                     tree.prep.labels(frame[tree.prep.target]), -1)
    rows = np.flatnonzero(tree.reaches(X, node) & (truth >= 0))
    return rows, np.bincount(truth[rows], minlength=len(tree.class_names))


def confusion_rows(model, frame: pd.DataFrame, true: int, predicted: int) -> np.ndarray:
    """The rows of `frame` of class `true` that `model` predicts as `predicted`: the
    rows one cell of the confusion matrix counts (their indices)."""
    truth = model.prep.labels(frame[model.prep.target])   # -1: missing or unknown
    return np.flatnonzero((truth == true) & (model.predict_frame(frame) == predicted))


def row_path(model, frame: pd.DataFrame) -> tuple[list[int], list[str], int]:
    """The way the first row of `frame` (raw cells) goes through a Tree or Diagram: the
    nodes from the root to its leaf or class terminal, the branch condition it meets
    at each test on the way, and the class predicted (its index; a regression's
    number)."""
    X = model.prep.transform(frame.iloc[:1])
    if hasattr(model, "walk"):   # a diagram: the nodes its own walk sends the row to
        path: list[int] = []
        end = model.walk(X, lambda node, rows: rows.size and path.append(node))
        path.append(int(end[0]))
    else:
        path = [0]
        while not model.is_leaf(path[-1]):
            node = path[-1]
            go_left = X[0, model.feature[node]] <= model.threshold[node]
            path.append(int(model.left[node] if go_left else model.right[node]))
    conditions = []
    for parent, child in pairwise(path):
        left_text, right_text = model.branch_conditions(parent)
        conditions.append(left_text if model.left[parent] == child else right_text)
    predicted = model.predict(X)[0]
    return path, conditions, float(predicted) if model.prep.regression else int(predicted)


def prediction_text(model, predicted) -> str:
    """A prediction as the window says it: a class name, or a regression's number."""
    if model.prep.regression:
        return format_number(float(predicted))
    return str(model.class_names[int(predicted)])
