"""Quality measures of a model and of an anytime search.

The primal gap integral follows Berthold (2013) as used in the CA-DL8.5 paper:
p(t) = 1 before the first incumbent, then |e(t) - e*| / |e(t)| (0 when both are 0);
P(T) is the area under p on [0, T].  Smaller means good trees were found sooner.
"""

from __future__ import annotations

import numpy as np


def accuracy(y_true: np.ndarray, y_pred: np.ndarray, w: np.ndarray | None = None) -> float:
    w = np.ones(len(y_true)) if w is None else w
    total = w.sum()
    return float(w[y_true == y_pred].sum() / total) if total > 0 else 0.0


def confusion_matrix(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int,
                     w: np.ndarray | None = None) -> np.ndarray:
    """Rows: true class, columns: predicted class (total weights)."""
    w = np.ones(len(y_true)) if w is None else w
    matrix = np.zeros((n_classes, n_classes))
    np.add.at(matrix, (y_true, y_pred), w)
    return matrix


def balanced_accuracy(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int,
                      w: np.ndarray | None = None) -> float:
    """The mean recall over the classes present in `y_true`: what accuracy would be if
    every class had as many rows, so a tree that ignores a rare class scores low."""
    return matrix_balanced_accuracy(confusion_matrix(y_true, y_pred, n_classes, w))


def matrix_balanced_accuracy(matrix: np.ndarray) -> float:
    """Balanced accuracy read off a confusion matrix (rows: true class), such as the
    test rows' of a cross-validation, which keeps no rows."""
    matrix = np.asarray(matrix, dtype=float)
    support = matrix.sum(axis=1)
    present = support > 0
    return float((np.diag(matrix)[present] / support[present]).mean()) if present.any() \
        else 0.0


def per_class(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int,
              w: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Precision, recall, F1 and support (total weight of true rows) of each class;
    0 where a ratio has nothing to divide (scikit-learn's `zero_division=0`)."""
    matrix = confusion_matrix(y_true, y_pred, n_classes, w)
    hits = np.diag(matrix)
    support, predicted = matrix.sum(axis=1), matrix.sum(axis=0)
    precision = np.divide(hits, predicted, out=np.zeros(n_classes), where=predicted > 0)
    recall = np.divide(hits, support, out=np.zeros(n_classes), where=support > 0)
    both = precision + recall
    f1 = np.divide(2 * precision * recall, both, out=np.zeros(n_classes), where=both > 0)
    return {"precision": precision, "recall": recall, "f1": f1, "support": support}


def class_scores(y_true: np.ndarray, y_pred: np.ndarray, class_names: list[str],
                 w: np.ndarray | None = None) -> dict:
    """Accuracy, balanced accuracy and {class name: precision, recall, F1, support}, as
    plain numbers for a JSON summary."""
    n_classes = len(class_names)
    scores = per_class(y_true, y_pred, n_classes, w)
    return {"accuracy": accuracy(y_true, y_pred, w),
            "balanced_accuracy": balanced_accuracy(y_true, y_pred, n_classes, w),
            "per_class": {name: {key: float(scores[key][k]) for key in scores}
                          for k, name in enumerate(class_names)}}


def regression_scores(y_true: np.ndarray, y_pred: np.ndarray,
                      w: np.ndarray | None = None) -> dict:
    """A regression's squared error (SSE), RMSE, MAE and R² (1 - SSE / the squared
    error of the rows' mean: 0 for predicting the mean, 1 for every row exact; when
    every row has the same value, 1 if exact else 0, as scikit-learn's `r2_score`),
    rows weighted by `w`, as plain numbers for a JSON summary."""
    y_true = np.asarray(y_true, dtype=np.float64)
    w = np.ones(len(y_true)) if w is None else np.asarray(w, dtype=np.float64)
    total = float(w.sum())
    if total <= 0:
        return {"sse": 0.0, "rmse": 0.0, "mae": 0.0, "r2": 0.0}
    residual = y_true - np.asarray(y_pred, dtype=np.float64)
    sse = float(w @ residual ** 2)
    spread = float(w @ (y_true - float(w @ y_true) / total) ** 2)
    r2 = 1.0 - sse / spread if spread > 0 else (1.0 if sse == 0 else 0.0)
    return {"sse": sse, "rmse": float(np.sqrt(sse / total)),
            "mae": float(w @ np.abs(residual) / total), "r2": float(r2)}


def _ranked(positive: np.ndarray, scores: np.ndarray,
            w: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Weight of the positive and of the other rows scoring at least each distinct
    score (highest first, starting at (0, 0)): tied rows count together."""
    positive = np.asarray(positive, dtype=bool)
    w = np.ones(len(positive)) if w is None else np.asarray(w, dtype=float)
    order = np.argsort(-np.asarray(scores, dtype=float), kind="mergesort")
    ranked = np.asarray(scores, dtype=float)[order]
    tp = np.cumsum(w[order] * positive[order])
    fp = np.cumsum(w[order] * ~positive[order])
    last = np.r_[np.nonzero(np.diff(ranked))[0], len(ranked) - 1]   # ties: one point
    return np.r_[0.0, tp[last]], np.r_[0.0, fp[last]]


def ranked_counts(positive: np.ndarray, scores: np.ndarray,
                  w: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct scores, highest first; the weight of the positive rows and of the
    others scoring at least each of them): what every cutoff on the scores counts."""
    tp, fp = _ranked(positive, scores, w)
    return np.unique(np.asarray(scores, dtype=float))[::-1], tp[1:], fp[1:]


def roc_curve(positive: np.ndarray, scores: np.ndarray,
              w: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """False and true positive rates at every distinct score taken as a threshold
    (highest first, starting at (0, 0)), for 0/1 `positive` labels."""
    tp, fp = _ranked(positive, scores, w)
    return (fp / fp[-1] if fp[-1] > 0 else fp), (tp / tp[-1] if tp[-1] > 0 else tp)


def gain_curve(positive: np.ndarray, scores: np.ndarray,
               w: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative gain: the share of all rows taken, highest scores first (x), and
    the share of the positive rows among them (y), at every distinct score (from
    (0, 0) to (1, 1)); the lift at a point is y / x."""
    tp, fp = _ranked(positive, scores, w)
    taken = tp + fp
    return (taken / taken[-1] if taken[-1] > 0 else taken), \
        (tp / tp[-1] if tp[-1] > 0 else tp)


def roc_auc(positive: np.ndarray, scores: np.ndarray, w: np.ndarray | None = None) -> float:
    """Area under the ROC curve (trapezoids, so tied scores count half)."""
    fpr, tpr = roc_curve(positive, scores, w)
    return float(np.trapezoid(tpr, fpr))


def matrix_to_json(matrix: np.ndarray) -> dict:
    """A confusion matrix as its size and nonzero cells `[i, j, value]`: a 499-class
    matrix is mostly zeros, and sessions keep several per run."""
    matrix = np.asarray(matrix, dtype=float)
    rows, columns = np.nonzero(matrix)
    return {"n": int(matrix.shape[0]) if matrix.ndim == 2 else 0,
            "cells": [[int(i), int(j), float(matrix[i, j])] for i, j in zip(rows, columns)]}


def matrix_from_json(value) -> np.ndarray:
    """The matrix of `matrix_to_json`, or of a plain list of rows (older sessions)."""
    if isinstance(value, dict):
        n = int(value.get("n", 0))
        matrix = np.zeros((n, n))
        for i, j, v in value.get("cells", []):
            matrix[int(i), int(j)] = float(v)
        return matrix
    return np.asarray(value if value is not None else [], dtype=float)


def stairs(times: list[float], values: list[float],
           until: float | None = None) -> tuple[list[float], list[float]]:
    """Coordinates of a step curve holding each value until the next time (the
    anytime curve as the window and the report draw it): 2n - 1 points for n values,
    one more when `until` lies after the last time."""
    xs, ys = [], []
    for i, (t, v) in enumerate(zip(times, values)):
        if i:
            xs.append(t)
            ys.append(ys[-1])
        xs.append(t)
        ys.append(v)
    if xs and until is not None and until > xs[-1]:
        xs.append(until)
        ys.append(ys[-1])
    return xs, ys


def primal_gap(error: float, best: float) -> float:
    if error == best:
        return 0.0
    return abs(error - best) / abs(error)


def primal_integral(incumbents: list[tuple[float, float]], best: float,
                    horizon: float) -> float:
    """P(horizon) for incumbents `(t, error)` sorted by time, against the `best` error."""
    total, t_prev, gap = 0.0, 0.0, 1.0
    for t, error in incumbents:
        t = min(t, horizon)
        total += gap * (t - t_prev)
        t_prev, gap = t, primal_gap(error, best)
    return total + gap * (horizon - t_prev)
