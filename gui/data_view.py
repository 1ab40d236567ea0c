"""The Data tab: how the file was read, the column settings, and the raw preview.

The column table (left) is where columns are ignored or forced continuous /
categorical; the preview (right) shows the file's own cells, virtualised, with each
column's use in its header.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from engine.data.csv_reader import RawTable
from gui.column_chart import ColumnChart
from gui.column_model import COL_USE, ColumnsModel, UseDelegate
from gui.preview_model import PreviewModel

DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", " ": "whitespace"}
ROW_HEIGHT = 22


class DataView(QWidget):
    row_chosen = Signal(int)   # a row of the table chosen in the preview (file order)
    column_chosen = Signal(str)   # a column chosen in the columns table (its name)
    order_requested = Signal(str)  # Order levels… pressed for the column chosen

    def __init__(self, columns: ColumnsModel, parent=None):
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        self.info_label = QLabel("Open a CSV file (File ▸ Open, a sample, or drop a file "
                                 "on the window) to see its columns here.", self)
        self.info_label.setWordWrap(True)
        self.info_label.setTextFormat(Qt.RichText)
        layout.addWidget(self.info_label)
        # A tree node's rows: what the preview shows after a click on the node.
        self.node_bar = QWidget(self)
        bar = QHBoxLayout(self.node_bar)
        bar.setContentsMargins(0, 0, 0, 0)
        self.node_label = QLabel(self.node_bar)
        self.node_label.setWordWrap(True)
        self.node_label.setTextFormat(Qt.PlainText)   # rules hold '<' and '>' as they are
        self.node_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.copy_rule_button = QPushButton("Copy rule", self.node_bar)
        self.copy_rule_button.clicked.connect(
            lambda: QApplication.clipboard().setText(self.node_rule))
        self.all_rows_button = QPushButton("Show all rows", self.node_bar)
        self.all_rows_button.clicked.connect(lambda: self.show_node_rows(None))
        bar.addWidget(self.node_label, 1)
        bar.addWidget(self.copy_rule_button)
        bar.addWidget(self.all_rows_button)
        self.node_bar.hide()
        self.node_rule = ""
        layout.addWidget(self.node_bar)

        splitter = QSplitter(Qt.Horizontal, self)
        left = QSplitter(Qt.Vertical, splitter)   # the columns, and the one chosen
        self.columns_view = QTableView(left)
        self.columns_view.setModel(columns)
        self.columns_view.setItemDelegateForColumn(COL_USE, UseDelegate(self.columns_view))
        self.columns_view.setEditTriggers(QAbstractItemView.AllEditTriggers)
        self.columns_view.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.columns_view.setSelectionMode(QAbstractItemView.SingleSelection)
        self.columns_view.verticalHeader().hide()
        self.columns_view.verticalHeader().setDefaultSectionSize(ROW_HEIGHT + 2)
        header = self.columns_view.horizontalHeader()
        # Not ResizeToContents: that re-reads every row after each change of the model.
        header.setSectionResizeMode(QHeaderView.Interactive)
        header.setStretchLastSection(True)
        self.columns_view.setMinimumWidth(360)
        self.columns_view.selectionModel().currentRowChanged.connect(
            lambda current, _: current.isValid() and self.column_chosen.emit(
                columns.names()[current.row()]))
        self.order_button = QPushButton("Order levels…", self)
        self.order_button.setToolTip("Use the chosen text column as ordered levels "
                                     "(Low < Medium < High), split as thresholds, and "
                                     "set their order")
        self.order_button.setEnabled(False)
        self.order_button.clicked.connect(lambda: self.order_requested.emit(
            columns.names()[self.columns_view.currentIndex().row()]))
        self.column_chart = ColumnChart(left, extra=self.order_button)
        left.setSizes([300, 260])

        self.preview_view = QTableView(splitter)
        self.preview_view.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.preview_view.setAlternatingRowColors(True)
        self.preview_view.setWordWrap(False)
        vertical = self.preview_view.verticalHeader()
        vertical.setSectionResizeMode(QHeaderView.Fixed)   # no per-row measuring
        vertical.setDefaultSectionSize(ROW_HEIGHT)
        horizontal = self.preview_view.horizontalHeader()
        horizontal.setSectionResizeMode(QHeaderView.Interactive)
        horizontal.setDefaultSectionSize(96)
        horizontal.setMinimumSectionSize(48)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([470, 600])
        layout.addWidget(splitter, 1)
        self.preview: PreviewModel | None = None

    def show_table(self, name: str, raw: RawTable, infos) -> None:
        model = PreviewModel(raw, infos, self)
        old = self.preview
        self.preview_view.setModel(model)
        self.preview = model
        self.node_bar.hide()
        self.preview_view.selectionModel().currentRowChanged.connect(
            lambda current, _: current.isValid() and self.row_chosen.emit(
                model.file_row(current.row())))
        if old is not None:
            old.deleteLater()
        frame = raw.frame
        delimiter = DELIMITER_NAMES.get(raw.delimiter, repr(raw.delimiter))
        extras = [f"{delimiter} separated",
                  "header row" if raw.has_header else "no header row (columns numbered)",
                  raw.encoding]
        if raw.decimal_comma:
            extras.append("decimal commas")
        self.info_label.setText(f"<b>{html.escape(name)}</b> — {len(frame):,} rows × "
                                f"{len(frame.columns)} columns · {', '.join(extras)}")
        fit_columns(self.columns_view, 200, 60, 260)   # the preview's once roles are set

    def show_node_rows(self, rows, text: str = "", rule: str = "") -> None:
        """Show only a node's rows (indices into the table) with `text` about them and
        its `rule` to copy (or the rows of a confusion-matrix cell: no rule), or every
        row again (None)."""
        if self.preview is None:
            return
        self.preview.show_rows(rows)
        self.node_rule = rule
        self.node_label.setText(text)
        self.copy_rule_button.setVisible(bool(rule))   # a confusion cell has no rule
        self.node_bar.setVisible(rows is not None)

    def fit_preview_columns(self) -> None:
        if self.preview is not None:
            fit_columns(self.preview_view, 40 if self.preview.columnCount() < 200 else 8,
                        64, 220)


def fit_columns(view: QTableView, sample_rows: int, least: int, most: int) -> None:
    """Columns as wide as their header and first cells, measured here directly:
    Qt's own resizeColumnsToContents reads up to 1000 rows of every column."""
    model = view.model()
    metrics = view.fontMetrics()
    header = view.horizontalHeader()
    head_metrics = header.fontMetrics()
    rows = min(model.rowCount(), sample_rows)
    for column in range(model.columnCount()):
        title = str(model.headerData(column, Qt.Horizontal) or "")
        width = max(head_metrics.horizontalAdvance(line) for line in title.split("\n"))
        for row in range(rows):
            width = max(width, metrics.horizontalAdvance(
                str(model.data(model.index(row, column)) or "")))
        header.resizeSection(column, min(max(width + 24, least), most))
