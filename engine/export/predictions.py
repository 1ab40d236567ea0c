"""Predictions as CSV files: the one-column file of `orchard predict --out`, and the
table the window's "Predict a file" saves.

The CLI's column is named after the model's target so the file can be pasted next
to the input table (or compared with a labelled copy) without renaming anything.
The window's table explains each prediction on its own line: the row's number as the
user counts the file's rows (1 = the first data row), the cells the model reads as
they are in the file (a missing cell stays empty), the true class when the file has
the class column, then the predicted class, its probability (its share of the
training rows of the leaf) and that leaf's node id, as the tree or diagram shows it.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from engine.export.files import write_atomically
from engine.prediction import Predictions


def predictions_csv(class_names: Iterable[str], column: str = "prediction") -> str:
    """CSV text: a header `column`, then one predicted class per line (quoted if needed)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([column])
    writer.writerows([name] for name in class_names)
    return out.getvalue()


def write_predictions(path: str | Path, class_names: Iterable[str],
                      column: str = "prediction") -> None:
    """Write `predictions_csv(class_names, column)` to `path` atomically."""
    text = predictions_csv(class_names, column)
    write_atomically(path, lambda temporary: temporary.write_text(text, encoding="utf-8"))


def prediction_table(model, frame: pd.DataFrame, predictions: Predictions) -> pd.DataFrame:
    """One line per row of `frame` (raw cells, as read) that `predictions` (of `model`,
    a Tree or Diagram) predicts: row, the model's input columns, true class (only when
    `frame` has the class column), predicted class, probability, leaf (a regression:
    true value, predicted value, leaf)."""
    inputs = [column.name for column in model.prep.columns]
    table = {_free("row", inputs): np.arange(1, len(frame) + 1)}
    table.update({name: frame[name].to_numpy() for name in inputs})
    what = "value" if model.prep.regression else "class"
    if predictions.truth is not None:
        table[_free(f"true {what}", inputs)] = frame[predictions.target].to_numpy()
    if model.prep.regression:   # the leaf's mean (no class, no probability)
        table[_free("predicted value", inputs)] = predictions.predicted
    else:
        names = np.array(predictions.class_names, dtype=object)
        table[_free("predicted class", inputs)] = names[predictions.predicted]
        table[_free("probability", inputs)] = predictions.probability
    table[_free("leaf", inputs)] = predictions.leaf
    return pd.DataFrame(table)


def _free(name: str, taken: list[str]) -> str:
    """`name`, with underscores before it while an input column has that name, so no
    header is written twice."""
    while name in taken:
        name = "_" + name
    return name


def write_prediction_table(path: str | Path, table: pd.DataFrame) -> None:
    """Write a `prediction_table` to `path` as CSV (missing cells empty), atomically."""
    write_atomically(path, lambda temporary: table.to_csv(
        temporary, index=False, lineterminator="\n", encoding="utf-8"))
