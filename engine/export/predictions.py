"""Predicted classes as a one-column CSV file, the output of `orchard predict --out`.

The column is named after the model's target so the file can be pasted next to the
input table (or compared with a labelled copy) without renaming anything.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from pathlib import Path

from engine.export.files import write_atomically


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
