"""The raw table as a Qt model: the preview grid of the Data tab.

A `QAbstractTableModel` answers only for the cells on screen, so a table of 200,000
rows costs nothing more than one of 20.  Cells are the file's own text; missing
cells read "—" in grey.  Headers show each column's name and what Orchard does with
it (its inferred or chosen kind); the target column is bold, ignored columns are
greyed.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont

from engine.data.columns import ColumnInfo, ColumnKind
from engine.data.csv_reader import RawTable

MISSING_TEXT = "—"
GREY = QBrush(QColor("#8a929c"))
TARGET_BACKGROUND = QBrush(QColor("#eef4fb"))

KIND_WORDS = {
    ColumnKind.NUMERIC: "numeric",
    ColumnKind.CATEGORICAL: "categorical",
    ColumnKind.BINARY: "two values",
    ColumnKind.CONSTANT: "one value",
    ColumnKind.ID: "id-like",
}


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def describe(info: ColumnInfo) -> str:
    return KIND_WORDS.get(info.kind, info.kind.value)


class _Cells:
    """One column's cells by row, without a copy of the column: a categorical column
    (as the reader makes them) is looked up through its codes, -1 reading None."""

    def __init__(self, cells: pd.Series):
        if isinstance(cells.dtype, pd.CategoricalDtype):
            self.codes = cells.array.codes
            self.values = np.append(np.asarray(cells.array.categories, dtype=object), None)
        else:
            self.codes, self.values = None, cells.to_numpy(dtype=object)

    def at(self, row: int):
        return self.values[row if self.codes is None else self.codes[row]]


_ROOT = QModelIndex()  # the invisible root: a flat table has no children


class PreviewModel(QAbstractTableModel):
    def __init__(self, raw: RawTable, infos: list[ColumnInfo], parent=None):
        super().__init__(parent)
        frame = raw.frame
        self._names = [str(c) for c in frame.columns]
        self._cells = [_Cells(frame[c]) for c in frame.columns]
        self._rows = len(frame)
        self._shown: np.ndarray | None = None   # the rows on display, if not all
        self._infos = list(infos)
        self._roles = ["" for _ in self._names]   # "target", "ignored" or a kind word
        self._target = None
        self._ignored: set[str] = set()
        self._bold = QFont()
        self._bold.setBold(True)

    # ----------------------------------------------------------------- roles
    def set_roles(self, target: str | None, roles: dict[str, str]) -> None:
        """`roles[name]`: what happens to each column ("ignored", "continuous", ...)."""
        self._target = target
        self._ignored = {n for n, r in roles.items() if r.startswith("ignored")}
        self._roles = [("target" if n == target else roles.get(n, "").replace(" (auto)", ""))
                       for n in self._names]
        self.headerDataChanged.emit(Qt.Horizontal, 0, max(len(self._names) - 1, 0))
        if self.rowCount() and self._names:
            self.dataChanged.emit(self.index(0, 0),
                                  self.index(self.rowCount() - 1, len(self._names) - 1),
                                  [Qt.ForegroundRole, Qt.FontRole, Qt.BackgroundRole])

    def column_name(self, column: int) -> str:
        return self._names[column]

    def show_rows(self, rows: np.ndarray | None) -> None:
        """Show only these rows (indices into the table, in order), or all (None);
        row headers keep the file's row numbers."""
        self.beginResetModel()
        self._shown = None if rows is None else np.asarray(rows, dtype=np.int64)
        self.endResetModel()

    def file_row(self, row: int) -> int:
        """The table row (in the file's order) shown at `row`."""
        return row if self._shown is None else int(self._shown[row])

    # ------------------------------------------------------------------ model
    def rowCount(self, parent=_ROOT) -> int:
        if parent.isValid():
            return 0
        return self._rows if self._shown is None else len(self._shown)

    def columnCount(self, parent=_ROOT) -> int:
        return 0 if parent.isValid() else len(self._names)

    def data(self, index: QModelIndex, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        column = index.column()
        if role == Qt.DisplayRole:
            value = self._cells[column].at(self.file_row(index.row()))
            return MISSING_TEXT if _missing(value) else str(value)
        if role == Qt.ForegroundRole:
            value = self._cells[column].at(self.file_row(index.row()))
            if _missing(value) or self._names[column] in self._ignored:
                return GREY
            return None
        if role == Qt.FontRole and self._names[column] == self._target:
            return self._bold
        if role == Qt.BackgroundRole and self._names[column] == self._target:
            return TARGET_BACKGROUND
        if role == Qt.TextAlignmentRole:
            info = self._infos[column] if column < len(self._infos) else None
            if info is not None and info.numeric:
                return int(Qt.AlignRight | Qt.AlignVCenter)
        return None

    def headerData(self, section: int, orientation, role=Qt.DisplayRole):
        if orientation == Qt.Vertical:
            if role == Qt.DisplayRole:
                return str(self.file_row(section) + 1)
            return None
        if section >= len(self._names):
            return None
        name = self._names[section]
        info = self._infos[section] if section < len(self._infos) else None
        if role == Qt.DisplayRole:
            role_text = self._roles[section] or (describe(info) if info else "")
            return f"{name}\n{role_text}" if role_text else name
        if role == Qt.ToolTipRole and info is not None:
            return (f"{name}: {describe(info)}, {info.n_distinct:,} different values, "
                    f"{info.n_missing:,} missing")
        if role == Qt.FontRole and name == self._target:
            return self._bold
        if role == Qt.ForegroundRole and name in self._ignored:
            return GREY
        return None
