"""Column typing and target choice for a raw table of text cells.

The raw table (see `csv_reader`) holds strings or None.  Each column is given a kind
that decides how it becomes features; the user may override any of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from engine.data import blocks
from engine.errors import DataError

if TYPE_CHECKING:
    from engine.data.csv_reader import RawTable

TARGET_NAMES = ("class", "target", "label", "y")


class ColumnKind(str, Enum):
    NUMERIC = "numeric"          # numbers with more than two values: thresholds
    CATEGORICAL = "categorical"  # text (or chosen numbers) with more than two values: groups
    BINARY = "binary"            # exactly two values: one 0/1 feature
    CONSTANT = "constant"        # at most one value: carries no information, ignored
    ID = "id"                    # (nearly) a distinct value per row (row numbers, names): ignored
    ORDERED = "ordered"          # text levels in a declared order (Low < Medium < High)


USABLE_KINDS = (ColumnKind.NUMERIC, ColumnKind.CATEGORICAL, ColumnKind.BINARY,
                ColumnKind.ORDERED)


@dataclass(frozen=True)
class ColumnInfo:
    name: str
    kind: ColumnKind
    numeric: bool      # every present cell parses as a number
    n_missing: int
    n_distinct: int
    n_rows: int = 0    # cells in the column, missing ones included

    @property
    def reason(self) -> str:
        """Why a column of this kind is left out, in words ('' for a usable kind)."""
        if self.kind == ColumnKind.CONSTANT:
            return "a single value"
        if self.kind == ColumnKind.ID:
            if self.n_distinct < self.n_rows - self.n_missing:
                return "nearly a different value on every row: an id or a name"
            return "a different value on every row"
        return ""


def to_numbers(cells: pd.Series | np.ndarray) -> np.ndarray:
    """Parse text cells as float64; missing cells (None) become NaN.  Float64 values
    (a column `prepare` has parsed already) are returned as they are.

    Raises DataError naming the first cell that is not a number.
    """
    if isinstance(cells, np.ndarray) and cells.dtype == np.float64:
        return cells
    values = cells.to_numpy(dtype=np.float64) if cells.dtype.kind == "f" else _to_float(cells)
    bad = np.isnan(values) & ~blocks.missing(cells)
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


def _to_float(cells: pd.Series) -> np.ndarray:
    """Numbers of text cells, NaN where a cell is missing or not a number.

    A column that repeats its values (prices, counts, codes: most columns of a long
    table) has each different text parsed once: hashing a cell costs a third of
    parsing it."""
    codes, uniques = blocks.factorize(cells)
    if len(uniques) <= len(cells) // 4 or isinstance(cells.dtype, pd.CategoricalDtype):
        numbers = pd.to_numeric(pd.Series(uniques, dtype=object), errors="coerce")
        return np.append(numbers.to_numpy(dtype=np.float64), np.nan)[codes]
    return blocks.blockwise(lambda part: pd.to_numeric(part, errors="coerce"), cells,
                            np.float64)


def _count_distinct(numbers: np.ndarray) -> int:
    """How many different values `numbers` (no NaN) holds.  Sorted, not hashed as
    `np.unique` does: numpy sorts without holding the GIL, so the window stays live
    while two million numbers are counted."""
    ordered = np.sort(numbers)
    return int(len(ordered) and 1 + np.count_nonzero(ordered[1:] != ordered[:-1]))


def _has_text(cells: pd.Series, missing: np.ndarray) -> bool:
    values = pd.to_numeric(cells, errors="coerce").to_numpy(dtype=np.float64)
    return bool((np.isnan(values) & ~missing).any())


# A text column is an id or a name when at least this share of its present cells are
# different values (a few repeats allowed: two animals may share a name)...
ID_DISTINCT_SHARE = 0.9
# ...and it has at least this many present cells (fewer prove nothing).
ID_MIN_ROWS = 20


def _looks_like_id(n_present: int, n_distinct: int, numbers: np.ndarray | None) -> bool:
    """Row numbers, codes or names rather than a feature (`numbers`: the present
    values of a numeric column, None for text).

    Text: at least `ID_MIN_ROWS` present cells of which at least `ID_DISTINCT_SHARE`
    (90%) are different values (an animal's name in a 100-row table with a few
    repeats); one-hot encoding it would make a feature per row.  Numbers: only when
    every value differs and they count 1, 2, 3, ... in some order (row numbers), since
    a nearly unique measurement (a price, a weight) is a good continuous feature.
    The user can still use such a column (the GUI's column table, `--categorical`).
    """
    if n_present < ID_MIN_ROWS:
        return False
    if numbers is None:
        return n_distinct >= ID_DISTINCT_SHARE * n_present
    if n_distinct < n_present:
        return False
    values = np.sort(numbers)
    integral = np.all(values == np.round(values))
    return bool(integral and np.all(np.diff(values) == 1))


def infer_column(cells: pd.Series) -> ColumnInfo:
    """Kind of one column of text cells (each cell is parsed once)."""
    return parse_column(cells)[0]


def parse_column(cells: pd.Series) -> tuple[ColumnInfo, np.ndarray | None]:
    """Kind of one column and, when every present cell is a number, its float values
    (NaN where missing): preparation reuses them instead of parsing the text again."""
    missing = blocks.missing(cells)
    numbers = _parse_numbers(cells, missing)
    n_distinct = len(blocks.factorize(cells)[1]) if numbers is None else None
    return column_info(str(cells.name), missing, numbers, n_distinct), numbers


def number_column(name: str, numbers: np.ndarray) -> ColumnInfo:
    """Kind of a column given as float values (NaN missing), as `parse_column` would
    find it for the same numbers written as text: the notebook's numeric arrays."""
    missing = np.isnan(numbers)
    return column_info(name, missing, None if missing.all() else numbers, 0)


def column_info(name: str, missing: np.ndarray, numbers: np.ndarray | None,
                n_distinct: int | None = None) -> ColumnInfo:
    """The one rule for a column's kind, from its missing cells and either its float
    values (`numbers`, a numeric column) or its count of distinct texts."""
    present = None if numbers is None else numbers[~missing]
    if present is not None:
        n_distinct = _count_distinct(present)
    n_missing = int(missing.sum())
    if n_distinct <= 1:
        kind = ColumnKind.CONSTANT
    elif n_distinct == 2:
        kind = ColumnKind.BINARY
    elif _looks_like_id(len(missing) - n_missing, n_distinct, present):
        kind = ColumnKind.ID
    else:
        kind = ColumnKind.NUMERIC if numbers is not None else ColumnKind.CATEGORICAL
    return ColumnInfo(name, kind, numbers is not None, n_missing, n_distinct, len(missing))


def infer_columns(frame: pd.DataFrame, progress=None) -> list[ColumnInfo]:
    """Kinds of every column; `progress(stage, fraction)` between columns (it may stop)."""
    infos = []
    for position, name in enumerate(frame.columns):
        if progress is not None:
            progress("typing the columns", position / max(frame.shape[1], 1))
        infos.append(infer_column(frame[name]))
    return infos


def choose_target(columns: list[str], spec: str | int | None = None,
                  raw: RawTable | None = None) -> str:
    """Name of the class column.

    `spec` may be a column name, an integer index (negative counts from the end),
    `first` or `last`.  By default: a column named class/target/label/y; else the
    first column when `raw` (the table these columns belong to) has no header row and
    its cells are laid out like the CP4IM benchmark files (`class_comes_first`); else
    the last column.
    """
    if spec is None:
        for name in columns:
            if name.strip().lower() in TARGET_NAMES:
                return name
        if raw is not None and not raw.has_header and class_comes_first(raw.frame):
            return columns[0]
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


# Rows of a headerless table `class_comes_first` looks at (spread over the file).
LAYOUT_ROWS = 1000
# The most classes a first column of small integers may hold to be the class.
LAYOUT_MAX_CLASSES = 50


def class_comes_first(frame: pd.DataFrame) -> bool:
    """Whether a headerless table reads as class first, then 0/1 features (CP4IM).

    The CP4IM benchmark files are written so: a first column of small integers (the
    class), then 0/1 columns that each stand for one value of an original attribute,
    so that in every row exactly one column of each attribute's group holds a 1.
    The first column is the class when it holds 2 to `LAYOUT_MAX_CLASSES` different
    whole numbers from 0 up and, judged on `LAYOUT_ROWS` rows spread evenly over the
    file, every other column holds only 0 and 1, and either
    - it holds more than two values (a many-valued column among 0/1 features), or
    - the columns after it fall into consecutive groups with exactly one 1 per row
      in each, while the columns before the last do not (so the last column is no
      class of a file laid out the other way round).
    Any other table (a header, a text or measured feature, a 0/1 table without that
    group layout) keeps the usual default, the last column.
    """
    if frame.shape[1] < 3 or len(frame) == 0:
        return False
    sample = frame.iloc[::-(-len(frame) // LAYOUT_ROWS)]
    for name in sample.columns[1:]:
        if not sample[name].isin(("0", "1")).all():
            return False
    values = blocks.factorize(frame.iloc[:, 0])[1]                # all rows: classes
    if not 2 <= len(values) <= LAYOUT_MAX_CLASSES or not all(     # may be sorted
            isinstance(v, str) and v.isascii() and v.isdigit() for v in values):
        return False
    if len({int(v) for v in values}) > 2:
        return True
    bits = (sample.to_numpy(dtype=object) == "1").astype(np.int32)
    bits[:, 0] = sample.iloc[:, 0].astype(np.int64).to_numpy() == 1   # as 0/1 too
    return _one_hot_groups(bits[:, 1:]) and not _one_hot_groups(bits[:, :-1])


def _one_hot_groups(bits: np.ndarray) -> bool:
    """Whether the 0/1 columns split into consecutive groups with exactly one 1 in
    every row of each group (columns that are 0 on every row belong to any group).

    With groups ending at columns b_1 < ... < b_T, a row's running count of 1s is i
    at b_i; so such groups exist exactly when every row has the same number T of
    1s and, for each i in 1..T, some column where every row's running count is i.
    """
    counts = np.cumsum(bits, axis=1)
    total = counts[:, -1]
    if total[0] == 0 or (total != total[0]).any():
        return False
    low, high = counts.min(axis=0), counts.max(axis=0)
    agreed = set(low[low == high].tolist())
    return all(i in agreed for i in range(1, int(total[0]) + 1))
