"""The Data tab's look at one column: its bars by class (`engine.column_summary`), or
a scatter of two numeric columns by class with the selected run's cut lines.

A thin view: it draws what it is given (`show_summary`, `show_scatter`) and says why
when it has nothing (`clear`); `gui.column_look` decides what to show and computes
it in a worker.  The "Against" box picks a second numeric column for the scatter.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from engine.column_summary import ColumnSummary
from gui.chart_note import ChartNote
from gui.tree_scene import PALETTE

CUT_COLOUR = "#D55E00"
DISTRIBUTION = ""   # the Against box's first item: the column alone


class ColumnChart(QWidget):
    against_changed = Signal()

    def __init__(self, parent=None, extra: QWidget | None = None):
        """`extra`: a widget put at the end of the title row (Order levels…)."""
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        self.title = QLabel("", self)
        self.title.setTextFormat(Qt.PlainText)
        row.addWidget(self.title, 1)
        row.addWidget(QLabel("Against:", self))
        self.against_combo = QComboBox(self)
        self.against_combo.setMinimumContentsLength(14)
        self.against_combo.setToolTip("Another numeric column: a scatter of the two by "
                                      "class, with the selected run's cut lines")
        self.against_combo.currentIndexChanged.connect(lambda _: self.against_changed.emit())
        row.addWidget(self.against_combo)
        if extra is not None:
            row.addWidget(extra)
        layout.addLayout(row)
        self.plot = pg.PlotWidget(self)
        self.plot.setMinimumHeight(160)
        self.plot.getPlotItem().hideButtons()
        self.legend = self.plot.getPlotItem().addLegend(offset=(-8, 8), labelTextSize="8pt")
        layout.addWidget(self.plot, 1)
        self.note = QLabel("", self)
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.PlainText)
        self.note.setStyleSheet("color: #505863;")
        layout.addWidget(self.note)
        self.empty = ChartNote(self.plot)
        self.clear("Choose a column in the table above to see its values by class.")

    # ------------------------------------------------------------ choices
    def set_numeric_columns(self, names: list[str]) -> None:
        """The columns the Against box offers (the column alone first)."""
        self.against_combo.blockSignals(True)
        self.against_combo.clear()
        self.against_combo.addItem("its values alone", DISTRIBUTION)
        for name in names:
            self.against_combo.addItem(name, name)
        self.against_combo.blockSignals(False)

    @property
    def against(self) -> str:
        return self.against_combo.currentData() or DISTRIBUTION

    # ------------------------------------------------------------ drawing
    def _reset(self) -> pg.PlotItem:
        item = self.plot.getPlotItem()
        item.clear()
        self.legend.clear()
        item.getAxis("bottom").setTicks(None)
        item.showGrid(x=False, y=True, alpha=0.15)
        return item

    def clear(self, reason: str) -> None:
        self._reset()
        self.title.setText("")
        self.note.setText("")
        self.empty.say(reason)

    def show_summary(self, summary: ColumnSummary) -> None:
        """Stacked bars, one colour per class (the tree's palette), the missing cells
        counted in the note."""
        item = self._reset()
        self.empty.say("")
        x = np.arange(len(summary.labels))
        below = np.zeros(len(x))
        for k, name in enumerate(summary.class_names):
            heights = summary.counts[:, k]
            bars = pg.BarGraphItem(x=x, height=heights, y0=below, width=0.85,
                                   brush=PALETTE[k % len(PALETTE)], pen=pg.mkPen(None))
            item.addItem(bars)
            self.legend.addItem(bars, name)
            below = below + heights
        every = max(1, len(x) // 8)   # a readable number of labels
        item.getAxis("bottom").setTicks([[(int(i), summary.labels[i][:18])
                                          for i in x[::every]]])
        item.setLabel("left", "rows")
        item.setLabel("bottom", summary.column)
        item.enableAutoRange()
        self.title.setText(f"{summary.column} by class")
        missing = ", ".join(f"{int(m):,} {name}" for name, m in
                            zip(summary.class_names, summary.missing) if m)
        self.note.setText(summary.describe() + (f" Missing: {missing}." if missing else ""))

    def show_scatter(self, x_name: str, y_name: str, xs, ys, classes, names: list[str],
                     x_cuts: list[float], y_cuts: list[float], run_label: str,
                     total: int) -> None:
        """Points by class, with the cut lines the selected run puts on either column."""
        item = self._reset()
        item.showGrid(x=True, y=True, alpha=0.15)
        self.empty.say("" if len(xs) else
                       f"No row has both {x_name} and {y_name} and a class.")
        for k, name in enumerate(names):
            mine = classes == k
            if mine.any():
                points = pg.ScatterPlotItem(xs[mine], ys[mine], size=5, pen=None,
                                            brush=pg.mkBrush(PALETTE[k % len(PALETTE)]))
                item.addItem(points)
                self.legend.addItem(points, name)
        pen = pg.mkPen(CUT_COLOUR, width=1.5, style=Qt.DashLine)
        for cut in x_cuts:
            item.addItem(pg.InfiniteLine(cut, angle=90, pen=pen))
        for cut in y_cuts:
            item.addItem(pg.InfiniteLine(cut, angle=0, pen=pen))
        item.setLabel("bottom", x_name)
        item.setLabel("left", y_name)
        item.enableAutoRange()
        self.title.setText(f"{y_name} against {x_name} by class")
        sample = f"a sample of {len(xs):,} of {total:,} rows" if len(xs) < total \
            else f"{len(xs):,} rows"
        lines = len(x_cuts) + len(y_cuts)
        cuts = (f"; dashed: the {lines} cut{'s' * (lines != 1)} {run_label} puts on these "
                "columns" if lines else
                f"; {run_label} cuts neither column" if run_label else "")
        self.note.setText(f"{sample} with both values and a class{cuts}.")
