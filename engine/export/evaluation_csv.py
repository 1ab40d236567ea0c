"""The evaluation views' tables as CSV: per-class scores, a ROC curve, a gain curve,
importance.

Plain functions so the window's Export CSV buttons and scripts write the same
files, atomically (`files.write_atomically`), with numbers at full precision
(shortest text that reads back as the same float; whole numbers without `.0`).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from engine.export.files import write_atomically
from engine.importance import Gain, Importance, Roc

PER_CLASS_HEADER = ["class", "precision", "recall", "f1", "support"]
ROC_HEADER = ["threshold", "false_positive_rate", "true_positive_rate"]
IMPORTANCE_HEADER = ["column", "importance", "share"]
GAIN_HEADER = ["share_of_rows", "share_of_positive_rows", "lift"]


def number(value: float) -> str:
    value = float(value)
    if math.isfinite(value) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _write(path: str | Path, header: list[str], rows: Iterable[Sequence]) -> None:
    def write(target: Path) -> None:
        with open(target, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(header)
            writer.writerows(rows)
    write_atomically(path, write)


def write_per_class_csv(path: str | Path, class_names: list[str],
                        scores: dict[str, np.ndarray]) -> None:
    """One row per class from `engine.metrics.per_class` (support in weight)."""
    _write(path, PER_CLASS_HEADER,
           ([name, *(number(scores[key][k]) for key in PER_CLASS_HEADER[1:])]
            for k, name in enumerate(class_names)))


def write_roc_csv(path: str | Path, roc: Roc) -> None:
    """Every corner of the curve: rows scoring >= threshold are called positive."""
    _write(path, ROC_HEADER, ([number(t), number(f), number(p)]
                              for t, f, p in zip(roc.thresholds, roc.fpr, roc.tpr)))


def write_importance_csv(path: str | Path, importance: Importance) -> None:
    """Every raw column, largest reduction first, with its share of the total."""
    _write(path, IMPORTANCE_HEADER,
           ([name, number(v), number(s)]
            for name, v, s in zip(importance.columns, importance.values,
                                  importance.shares)))


def write_gain_csv(path: str | Path, gain: Gain) -> None:
    """Every point of the cumulative gain curve, with its lift (empty at 0 rows)."""
    _write(path, GAIN_HEADER, ([number(t), number(g), "" if math.isnan(l) else number(l)]
                               for t, g, l in zip(gain.taken, gain.gained, gain.lift)))
