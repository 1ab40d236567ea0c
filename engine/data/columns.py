"""Column typing and target choice for a raw table of text cells.

The raw table (see `csv_reader`) holds strings or None.  Each column is given a kind
that decides how it becomes features; the user may override any of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np
import pandas as pd

from engine.errors import DataError

TARGET_NAMES = ("class", "target", "label", "y")


class ColumnKind(str, Enum):
    NUMERIC = "numeric"          # numbers with more than two values: thresholds
    CATEGORICAL = "categorical"  # text (or chosen numbers) with more than two values: one-hot
    BINARY = "binary"            # exactly two values: one 0/1 feature
    CONSTANT = "constant"        # at most one value: carries no information, ignored
    ID = "id"                    # a distinct value per row (row numbers, names): ignored


USABLE_KINDS = (ColumnKind.NUMERIC, ColumnKind.CATEGORICAL, ColumnKind.BINARY)


@dataclass(frozen=True)
class ColumnInfo:
    name: str
    kind: ColumnKind
    numeric: bool      # every present cell parses as a number
    n_missing: int
    n_distinct: int


def to_numbers(cells: pd.Series) -> np.ndarray:
    """Parse text cells as float64; missing cells (None) become NaN.

    Raises DataError naming the first cell that is not a number.
    """
    values = cells.to_numpy(dtype=np.float64) if cells.dtype.kind == "f" else _to_float(cells)
    bad = np.isnan(values) & cells.notna().to_numpy()
    if bad.any():
        first = int(np.argmax(bad))
        raise DataError(f"Column '{cells.name}' has the non-numeric value "
                        f"'{cells.iloc[first]}' (row {first + 1}).")
    return values


def _parse_numbers(cells: pd.Series, missing: np.ndarray) -> np.ndarray | None:
    """Float values of a column (NaN where missing), or None if some cell is text."""
    head = slice(0, 1000)   # a text column usually shows itself in its first cells
    if len(cells) > 10_000 and _has_text(cells.iloc[head], missing[head]):
        return None
    values = _to_float(cells)
    if missing.all() or (np.isnan(values) & ~missing).any():
        return None
    return values


# Cells parsed per call: each call holds the GIL (text to numbers), so a worker thread
# parsing two million cells leaves the window's event loop a turn every ~20 ms.
_PARSE_CHUNK = 100_000


def _to_float(cells: pd.Series) -> np.ndarray:
    """Numbers of text cells, NaN where a cell is missing or not a number."""
    values = np.empty(len(cells))
    for start in range(0, len(cells), _PARSE_CHUNK):
        part = cells.iloc[start:start + _PARSE_CHUNK]
        values[start:start + len(part)] = pd.to_numeric(part, errors="coerce")
    return values


def _has_text(cells: pd.Series, missing: np.ndarray) -> bool:
    values = pd.to_numeric(cells, errors="coerce").to_numpy(dtype=np.float64)
    return bool((np.isnan(values) & ~missing).any())


def _looks_like_id(present: np.ndarray, numeric: bool, n_distinct: int) -> bool:
    """A column with a distinct value on every row: row numbers or names, not a feature."""
    if len(present) < 20 or n_distinct < len(present):
        return False
    if not numeric:
        return True
    values = np.sort(present)
    integral = np.all(values == np.round(values))
    return bool(integral and np.all(np.diff(values) == 1))


def infer_column(cells: pd.Series) -> ColumnInfo:
    """Kind of one column of text cells (each cell is parsed once)."""
    return parse_column(cells)[0]


def parse_column(cells: pd.Series) -> tuple[ColumnInfo, np.ndarray | None]:
    """Kind of one column and, when every present cell is a number, its float values
    (NaN where missing): preparation reuses them instead of parsing the text again."""
    missing = cells.isna().to_numpy()
    numbers = _parse_numbers(cells, missing)
    if numbers is not None:
        present = numbers[~missing]
        n_distinct = len(np.unique(present))
    else:
        present = cells.to_numpy(dtype=object)[~missing]
        n_distinct = len(pd.unique(present))
    if n_distinct <= 1:
        kind = ColumnKind.CONSTANT
    elif n_distinct == 2:
        kind = ColumnKind.BINARY
    elif _looks_like_id(present, numbers is not None, n_distinct):
        kind = ColumnKind.ID
    else:
        kind = ColumnKind.NUMERIC if numbers is not None else ColumnKind.CATEGORICAL
    info = ColumnInfo(str(cells.name), kind, numbers is not None, int(missing.sum()),
                      n_distinct)
    return info, numbers


def infer_columns(frame: pd.DataFrame, progress=None) -> list[ColumnInfo]:
    """Kinds of every column; `progress(stage, fraction)` between columns (it may stop)."""
    infos = []
    for position, name in enumerate(frame.columns):
        if progress is not None:
            progress("typing the columns", position / max(frame.shape[1], 1))
        infos.append(infer_column(frame[name]))
    return infos


def choose_target(columns: list[str], spec: str | int | None = None) -> str:
    """Name of the class column.

    `spec` may be a column name, an integer index (negative counts from the end),
    `first` or `last`; by default a column named class/target/label/y, else the last.
    """
    if spec is None:
        for name in columns:
            if name.strip().lower() in TARGET_NAMES:
                return name
        return columns[-1]
    text = str(spec).strip()
    if text in columns:
        return text
    if text.lower() == "first":
        return columns[0]
    if text.lower() == "last":
        return columns[-1]
    try:
        index = int(text)
    except ValueError:
        raise DataError(f"There is no column named '{text}' to use as the target "
                        f"(columns: {', '.join(columns[:12])}"
                        f"{', ...' if len(columns) > 12 else ''}).") from None
    if not -len(columns) <= index < len(columns):
        raise DataError(f"Target index {index} is out of range: the file has "
                        f"{len(columns)} columns (indices start at 0).")
    return columns[index]
