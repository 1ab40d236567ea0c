"""Whole-column work on millions of cells, a block of rows at a time.

Reading and preparing run in a worker thread while the window stays live, but one
pandas call on two million text cells keeps the window's thread from the GIL for
20-300 ms.  Worse, some pandas calls (`to_numeric`, `isin`, `.str` methods on object
cells) release and retake the GIL so often that a waiting thread never gets it: the
waiter is woken, but the releaser has taken it back first (measured: a 10 ms timer
delayed by up to 1.1 s while a worker parsed blocks of 20,000 cells that each took
3.5 ms).  So the work goes in blocks of `ROWS` cells, and between two blocks the worker
sleeps for `HANDOVER_S` (at most once every `HANDOVER_EVERY_S`), long enough for a
waiting thread to take the GIL.  Calls on plain numbers that numpy runs without the
GIL (sorting, arithmetic, copies) need none of this.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pandas as pd

# Cells per call: about 3 ms of the slowest work done this way (text to numbers).
ROWS = 20_000
# The pause that lets a waiting thread take the GIL, and the least work between two
# pauses: a pause costs about 0.3 ms, so pausing after every block of fast work (0.4 ms
# to find the missing cells of 20,000) would double its time.
HANDOVER_S = 0.0002
HANDOVER_EVERY_S = 0.001
_last_hand_over = 0.0


def hand_over() -> None:
    """Let a thread waiting for the GIL (the window's) take it, if this process's
    workers have not done so in the last `HANDOVER_EVERY_S`."""
    global _last_hand_over
    now = time.perf_counter()
    if now - _last_hand_over >= HANDOVER_EVERY_S:
        time.sleep(HANDOVER_S)
        _last_hand_over = time.perf_counter()


def _slices(n: int):
    for start in range(0, n, ROWS):
        if start:
            hand_over()
        yield slice(start, min(start + ROWS, n))


def _rows(cells: pd.Series | np.ndarray):
    return cells.iloc if isinstance(cells, pd.Series) else cells


def blockwise(function: Callable, cells: pd.Series | np.ndarray,
              dtype: type | None = None) -> np.ndarray:
    """`function(block)` (an array or Series of the block's length) on consecutive
    blocks of `cells`, joined into one array of `dtype`."""
    if len(cells) <= ROWS:
        return np.asarray(function(cells), dtype=dtype)
    rows = _rows(cells)
    out = None
    for part in _slices(len(cells)):
        values = np.asarray(function(rows[part]), dtype=dtype)
        if out is None:
            out = np.empty(len(cells), dtype=values.dtype)
        out[part] = values
    return out


def missing(cells: pd.Series | np.ndarray) -> np.ndarray:
    """Boolean mask of missing cells (None or NaN)."""
    if isinstance(cells, np.ndarray) and cells.dtype.kind == "f":
        return np.isnan(cells)   # numbers: numpy, without the GIL
    categories = _categorical(cells)
    if categories is not None:
        return categories.codes < 0
    return blockwise(pd.isna, cells, bool)


def coded(cells: pd.Series) -> pd.Series:
    """`cells` as a categorical Series (codes into its distinct values, -1 where
    missing): text cells are hashed once here, and `missing` and `factorize` on the
    result are array operations (factorizing 3 million text cells takes about a
    second each time; preparation used to do it three times a column).  A column
    already categorical (as the reader gives them) is returned as it is."""
    if _categorical(cells) is not None:
        return cells
    codes, values = factorize(cells)
    return categorical(codes, values, cells.name)


def categorical(codes: np.ndarray, values, name=None) -> pd.Series:
    """A categorical Series of `codes` (-1 where missing) into the distinct `values`."""
    return pd.Series(Coded(codes, np.asarray(values, dtype=object)).categorical(),
                     name=name)


def narrow(codes: np.ndarray, n_values: int) -> np.ndarray:
    """`codes` (-1 .. n_values - 1) in the smallest integer type that holds them, as
    pandas keeps a categorical's codes (3 million rows take 3 MB as int8)."""
    dtype = np.int8 if n_values < 127 else np.int16 if n_values < 32767 else np.int32
    return codes.astype(dtype, copy=False)


class Coded(NamedTuple):
    """A column of text cells as `codes` (integers, -1 where missing, `narrow`) into
    its distinct `values` (an object array), the form the reader works on: pandas'
    Series and Categorical objects cost tens of microseconds each to make, which a
    table of 10,000 columns pays ten thousand times a step."""

    codes: np.ndarray
    values: np.ndarray

    def cells(self, rows: slice = slice(None)) -> np.ndarray:
        """The cells of `rows` as an object array, None where missing."""
        return np.append(self.values, None)[self.codes[rows]]

    def used(self, rows: slice = slice(None)) -> np.ndarray:
        """Whether some cell of `rows` holds each value (a mask over `values`)."""
        codes = self.codes[rows]
        return np.bincount(codes[codes >= 0], minlength=len(self.values)) > 0

    def categorical(self) -> pd.Categorical:
        dtype = pd.CategoricalDtype(pd.Index(self.values, dtype=object))
        return pd.Categorical.from_codes(self.codes, dtype=dtype, validate=False)


def frame(columns: list[Coded], names: list) -> pd.DataFrame:
    """The table of categorical columns `columns` named `names`."""
    return pd.DataFrame({name: column.categorical() for name, column in zip(names, columns)},
                        copy=False)


class Coder:
    """Codes for a column that arrives a block at a time, so the column never exists
    as one array of strings (3 million rows x 16 columns held as Python strings took
    2.8 GB by pandas' count; as codes into distinct values, 68 MB).

    Each block comes coded (by Arrow); the blocks' distinct values are then merged
    into the column's values in batches, by pandas too, once at least as many are
    waiting as are known (so each value is hashed a bounded number of times, and no
    Python loop runs over a column's values)."""

    _BATCH = 1 << 16

    def __init__(self):
        self.values = np.empty(0, dtype=object)   # in order of first appearance
        self.parts: list[np.ndarray] = []         # codes into `values`, merged blocks
        self._waiting: list[tuple[np.ndarray, np.ndarray]] = []   # (codes, values)
        self._n_waiting = 0
        self.rows = 0

    def add(self, codes: np.ndarray, values: np.ndarray) -> None:
        """The next block: its cells' `codes` (-1 missing) into its distinct `values`."""
        self.rows += len(codes)
        self._waiting.append((codes, np.asarray(values, dtype=object)))
        self._n_waiting += len(values)
        if self._n_waiting >= max(self._BATCH, len(self.values)):
            self._merge()

    def _merge(self) -> None:
        if not self._waiting:
            return
        known = len(self.values)
        codes, self.values = pd.factorize(np.concatenate(
            [self.values, *(values for _, values in self._waiting)]))
        self.values = np.asarray(self.values, dtype=object)
        offset = known   # the known values keep their codes 0 .. known - 1
        for block_codes, values in self._waiting:
            # The extra last entry maps the missing code -1 to itself.
            lookup = np.append(codes[offset:offset + len(values)], -1).astype(np.int32)
            self.parts.append(lookup[block_codes])
            offset += len(values)
        self._waiting, self._n_waiting = [], 0

    def column(self) -> Coded:
        self._merge()
        codes = np.concatenate(self.parts) if self.parts else np.empty(0, np.int32)
        self.parts = []
        return Coded(narrow(codes, len(self.values)), self.values)


def recode_columns(columns: list[Coded], function: Callable) -> list[Coded]:
    """`columns` with every cell replaced by `function` of it, and without the values
    no cell holds.  `function(values)` maps an object Series of distinct values to
    their new values (None: missing); values of a column that become equal merge.

    It is called once, on every column's values together: called a column at a
    time, pandas' overhead made 10,000 columns of 12 rows take 8 s a step."""
    if not columns:
        return []
    sizes = np.array([len(column.values) for column in columns])
    new = np.asarray(function(pd.Series(np.concatenate([column.values for column in columns]),
                                        dtype=object)), dtype=object)
    # Each column's new values numbered from 0 in the order of its old values: pairs
    # (column, new value) are factorized at once, and each column's numbers then run
    # contiguously from the count of the columns before it.
    value_ids, _ = pd.factorize(new)
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    owner = np.repeat(np.arange(len(columns), dtype=np.int64), sizes)
    kept = value_ids >= 0
    for position, column in enumerate(columns):   # values no cell holds go too
        kept[offsets[position]:offsets[position + 1]] &= column.used()
    pair_ids, pairs = pd.factorize(owner[kept] * (len(new) + 1) + value_ids[kept])
    counts = np.bincount(pairs // (len(new) + 1), minlength=len(columns))
    bases = np.cumsum(counts) - counts
    number = np.full(len(new), -1, dtype=np.int64)
    number[kept] = pair_ids - bases[owner[kept]]
    new_values = np.empty(len(pairs), dtype=object)
    new_values[pair_ids] = new[kept]
    out = []
    for position, column in enumerate(columns):
        renumber = number[offsets[position]:offsets[position + 1]]
        base = bases[position]
        values = new_values[base:base + counts[position]]
        if np.array_equal(renumber, np.arange(len(renumber))):
            out.append(Coded(column.codes, values))   # the same codes: no copy
            continue
        # The extra last entry maps the missing code -1 to itself.
        lookup = narrow(np.append(renumber, -1), len(values))
        out.append(Coded(lookup[column.codes], values))
    return out


def _categorical(cells) -> pd.Categorical | None:
    if isinstance(cells, pd.Series) and isinstance(cells.dtype, pd.CategoricalDtype):
        return cells.array
    return None


def factorize(cells) -> tuple[np.ndarray, np.ndarray]:
    """`pd.factorize(cells)`: codes into the distinct values in order of first
    appearance, -1 for a missing cell, and those values (an object array).

    A categorical Series (`coded`) keeps its categories' order (for one made by
    `coded` from these rows, the order of first appearance) and only those present."""
    categories = _categorical(cells)
    if categories is not None:
        codes = categories.codes.astype(np.int64)
        used = np.flatnonzero(np.bincount(codes[codes >= 0],
                                          minlength=len(categories.categories)))
        recode = np.full(len(categories.categories) + 1, -1, dtype=np.int64)
        recode[used] = np.arange(len(used))     # the last entry keeps -1 at -1
        return recode[codes], np.asarray(categories.categories, dtype=object)[used]
    if not isinstance(cells, pd.Series):
        cells = np.asarray(cells, dtype=object)
    codes = np.empty(len(cells), dtype=np.int64)
    index: dict = {}
    rows = _rows(cells)
    for part in _slices(len(cells)):
        block_codes, block_values = pd.factorize(rows[part])
        # The extra last entry maps the missing code -1 to itself.
        lookup = np.array([index.setdefault(v, len(index)) for v in block_values] + [-1],
                          dtype=np.int64)
        codes[part] = lookup[block_codes]
    values = np.empty(len(index), dtype=object)
    values[:] = list(index)
    return codes, values


# The block of rows `row_major` fills column by column while it stays in cache.
STAGE_BYTES = 4 << 20


def row_major(n_rows: int, n_columns: int, column: Callable, dtype=np.float64,
              progress: Callable | None = None) -> np.ndarray:
    """The matrix (rows by columns, laid out by rows as the solvers read it) whose
    column j on the rows `rows` (a slice) is `column(j, rows)`.

    Written a column at a time, each element would be a cache miss in a matrix of
    gigabytes (4.7 s for 3 million rows of 72 columns), so a block of rows is filled
    column by column in a column-major stage of STAGE_BYTES that stays in cache, then
    copied in whole.  `progress(fraction)` is called between blocks (it may stop)."""
    X = np.empty((n_rows, n_columns), dtype=dtype)
    step = max(1, STAGE_BYTES // max(n_columns * X.itemsize, 1))
    stage = np.empty((min(step, n_rows), n_columns), dtype=dtype, order="F")
    for start in range(0, n_rows, step):
        if progress is not None:
            progress(start / n_rows)
        rows = slice(start, min(start + step, n_rows))
        block = stage[:rows.stop - start]
        for j in range(n_columns):
            block[:, j] = column(j, rows)
        X[rows] = block
        if n_rows > ROWS:   # numpy releases and retakes the GIL often
            hand_over()
    return X


def take(cells: pd.Series, rows: np.ndarray) -> np.ndarray:
    """The values of `cells` at positions `rows`."""
    source = cells.to_numpy()
    out = np.empty(len(rows), dtype=source.dtype)
    for part in _slices(len(rows)):
        out[part] = source[rows[part]]
    return out


def release(arrays: list[np.ndarray]) -> None:
    """Drop the cells of object `arrays` a block at a time: freeing a table of
    millions of text cells at once holds the GIL for 100 ms or more."""
    for values in arrays:
        if values.dtype == object:
            for part in _slices(len(values)):
                values[part] = None
    arrays.clear()
