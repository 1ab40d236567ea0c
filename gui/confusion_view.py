"""A confusion matrix that stays cheap with hundreds of classes.

The cells are a `QAbstractTableModel` over a numpy array, so Qt asks only for the
cells on screen (a 499-class matrix built as table items froze the window for
minutes).  Beyond `MAX_SHOWN` classes the view shows the classes with the most rows
and folds the rest into one "other classes" row and column, so what is shown still
sums to the whole; the full matrix is written as CSV by "Export CSV…"
(`write_confusion_csv`, a plain function).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from engine.data.features import format_count

MAX_SHOWN = 30
MOST_PIXELS = 420   # the most a matrix takes on screen in either direction
OTHER = "other classes"
WEIGHTED_NOTE = ("Rows are weighted by class: a cell is its rows' total weight, not how "
                 "many rows it holds.")
HINT_COLOUR = "#505863"
_ROOT = QModelIndex()


def capped(matrix: np.ndarray, names: list[str], limit: int = MAX_SHOWN
           ) -> tuple[np.ndarray, list[str]]:
    """The `limit` classes with the most rows (true or predicted), in their order, and
    one last row and column summing all the others: the same total as `matrix`."""
    n = matrix.shape[0]
    if n <= limit:
        return matrix, list(names[:n])
    support = matrix.sum(axis=1) + matrix.sum(axis=0)
    keep = np.sort(np.argsort(-support, kind="stable")[:limit])
    rest = np.setdiff1d(np.arange(n), keep)
    out = np.zeros((limit + 1, limit + 1))
    out[:limit, :limit] = matrix[np.ix_(keep, keep)]
    out[:limit, limit] = matrix[np.ix_(keep, rest)].sum(axis=1)
    out[limit, :limit] = matrix[np.ix_(rest, keep)].sum(axis=0)
    out[limit, limit] = matrix[np.ix_(rest, rest)].sum()
    return out, [str(names[i]) for i in keep] + [OTHER]


def write_confusion_csv(path: str | Path, matrix: np.ndarray, names: list[str]) -> None:
    """The whole matrix: a header of predicted classes, one row per true class."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["true \\ predicted", *names])
        for name, row in zip(names, np.asarray(matrix)):
            writer.writerow([name, *(format_count(v) for v in row)])


class ConfusionModel(QAbstractTableModel):
    """Rows: true class; columns: predicted class; shaded by share of the true class."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.shown = np.zeros((0, 0))
        self.labels: list[str] = []
        self._totals = np.zeros(0)
        self.weighted = False   # cells are class-weighted rows, not numbers of rows

    def set_matrix(self, shown: np.ndarray, labels: list[str],
                   weighted: bool = False) -> None:
        self.beginResetModel()
        self.shown, self.labels, self.weighted = shown, labels, weighted
        self._totals = shown.sum(axis=1) if shown.size else np.zeros(0)
        self.endResetModel()

    def rowCount(self, parent=_ROOT) -> int:
        return 0 if parent.isValid() else self.shown.shape[0]

    def columnCount(self, parent=_ROOT) -> int:
        return 0 if parent.isValid() else self.shown.shape[1]

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if role != Qt.DisplayRole or section >= len(self.labels):
            return None
        name = self.labels[section]
        return f"→ {name}" if orientation == Qt.Horizontal else name

    def data(self, index: QModelIndex, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        i, j = index.row(), index.column()
        value = self.shown[i, j]
        if role == Qt.DisplayRole:
            return format_count(value)
        if role == Qt.TextAlignmentRole:
            return int(Qt.AlignCenter)
        share = value / self._totals[i] if self._totals[i] else 0.0
        if role == Qt.BackgroundRole and value:
            base = QColor("#0072B2") if i == j else QColor("#D55E00")
            base.setAlphaF(0.08 + 0.55 * share)
            return QBrush(base)
        if role == Qt.ToolTipRole:
            amount = (f"weight {format_count(value)}" if self.weighted
                      else f"{format_count(value)} row{'' if value == 1 else 's'}")
            return (f"true {self.labels[i]}, predicted {self.labels[j]}: {amount} "
                    f"({100 * share:.1f}% of {self.labels[i]})")
        return None


# Pixels on each side of a column's text, and the widest a column may be.
_PADDING, _WIDEST = 10, 240


class ConfusionView(QWidget):
    """The table, a note when classes were folded, and Export CSV (the full matrix)."""

    exported = Signal(str)
    cell_chosen = Signal(int, int)     # a cell clicked: (true class, predicted class)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.matrix = np.zeros((0, 0))     # the full matrix shown (or folded)
        self.names: list[str] = []
        self.classes: list[int] = []       # the class of each shown row and column (-1:
        #                                    the folded "other classes")
        self.model = ConfusionModel(self)
        self.table = QTableView(self)
        self.table.setModel(self.model)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.NoSelection)
        # Fixed section sizes: Qt never measures every cell of a large matrix.
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.Interactive)
        self.table.horizontalHeader().setDefaultSectionSize(64)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.Fixed)
        self.table.setMinimumHeight(60)
        self.table.clicked.connect(self._clicked)
        self.note = QLabel(self)
        self.note.setWordWrap(True)
        self.note.setStyleSheet(f"color: {HINT_COLOUR};")
        self.export_button = QPushButton("Export CSV…", self)
        self.export_button.setToolTip("Write the whole matrix, every class, as CSV.")
        self.export_button.clicked.connect(self._export_dialog)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table)
        row = QHBoxLayout()
        row.addWidget(self.note, 1)
        row.addWidget(self.export_button)
        layout.addLayout(row)
        self.show_matrix(None, [])

    def rowCount(self) -> int:
        return self.model.rowCount()

    def text(self, row: int, column: int) -> str:
        return self.model.data(self.model.index(row, column))

    def show_matrix(self, matrix: np.ndarray | None, names: list[str],
                    weighted: bool = False) -> None:
        """Show `matrix` (rows: true class); `weighted` when its cells are class-weighted
        rows, which the note and tooltips then say (a weight is not a row count)."""
        matrix = np.zeros((0, 0)) if matrix is None else np.asarray(matrix, dtype=float)
        if matrix.ndim != 2:
            matrix = np.zeros((0, 0))
        self.matrix, self.names = matrix, [str(x) for x in names[:matrix.shape[0]]]
        shown, labels = capped(matrix, self.names)
        index = {name: k for k, name in enumerate(self.names)}
        self.classes = [index.get(label, -1) if label != OTHER else -1 for label in labels]
        self.model.set_matrix(shown, labels, weighted)
        self._fit_columns(shown, labels)
        folded = max(matrix.shape[0] - MAX_SHOWN, 0)
        notes = [f"The {MAX_SHOWN} classes with the most rows; the other {folded} are "
                 f"summed in “{OTHER}”. Export CSV writes every class."
                 ] if folded else []
        if weighted and matrix.size:
            notes.append(WEIGHTED_NOTE)
        self.note.setText(" ".join(notes))
        self.note.setVisible(bool(notes))
        self.export_button.setEnabled(matrix.size > 0)
        # A few classes fit whole, without scroll bars (a squeezed layout would give
        # them a sliver); many classes scroll within at most 420 pixels.
        rows = shown.shape[0]
        table = self.table
        height = table.horizontalHeader().sizeHint().height() + 2 * table.frameWidth() + \
            rows * table.verticalHeader().defaultSectionSize() + 2
        width = table.verticalHeader().sizeHint().width() + 2 * table.frameWidth() + \
            sum(table.horizontalHeader().sectionSize(c) for c in range(len(labels))) + 2
        table.setMaximumHeight(max(min(height, MOST_PIXELS), 60))
        table.setMinimumHeight(max(min(height, MOST_PIXELS), 60))
        table.setMinimumWidth(min(width, MOST_PIXELS))

    def choose_cell(self, row: int, column: int) -> None:
        """A shown cell chosen: `cell_chosen` with its classes (not for folded ones)."""
        true, predicted = self.classes[row], self.classes[column]
        if true >= 0 and predicted >= 0:
            self.cell_chosen.emit(true, predicted)

    def _clicked(self, index: QModelIndex) -> None:
        self.choose_cell(index.row(), index.column())

    def _fit_columns(self, shown: np.ndarray, labels: list[str]) -> None:
        """Each column as wide as its header or its widest count, measured on the text
        alone: `resizeColumnsToContents` asks the model for every cell's size (0.1 s
        for 31 x 31 cells on the window's thread)."""
        header = self.table.horizontalHeader()
        names, counts = header.fontMetrics(), self.table.fontMetrics()
        for column, label in enumerate(labels):
            widest = format_count(shown[:, column].max()) if shown.shape[0] else ""
            width = max(names.horizontalAdvance(f"→ {label}"),
                        counts.horizontalAdvance(widest)) + 2 * _PADDING
            header.resizeSection(column, min(width, _WIDEST))

    def _export_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export the confusion matrix",
                                              "confusion.csv", "CSV (*.csv)")
        if path:
            write_confusion_csv(path, self.matrix, self.names)
            self.exported.emit(path)
