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
