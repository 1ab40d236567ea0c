"""The anytime curve: incumbent error and lower bound against time (pyqtgraph).

Both are step curves (a value holds until the next improvement) and, while a run
is live, reach up to the current time.  The band between them is the gap still to
close: when the curves meet, the tree is proven optimal.  Several finished runs can
be drawn together to compare algorithms (`show_runs`).
"""

from __future__ import annotations

import html
import re

import pyqtgraph as pg
from PySide6.QtGui import QColor, QPainterPath

from engine.metrics import stairs
from gui.chart_note import ChartNote
from gui.tree_scene import PALETTE

ERROR_COLOUR = "#0072B2"
BOUND_COLOUR = "#D55E00"
GAP_COLOUR = (0, 114, 178, 38)
# The least an axis shows: a run with one tree at time 0 and no error still gets
# axes from 0 (pyqtgraph would centre a single point on 0, from -1.5 to 1.5).
LEAST_SECONDS, LEAST_ERROR = 0.01, 1.0
ERROR_AXIS = "training error (rows)"
OBJECTIVE_AXIS = "errors + cost per leaf (rows)"
SQUARED_AXIS = "training squared error"          # a regression's
SQUARED_OBJECTIVE_AXIS = "squared error + cost per leaf"

pg.setConfigOptions(antialias=True, foreground="#3d444d", background="w")


class ProgressChart(pg.PlotWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setMinimumSize(240, 150)
        item = self.getPlotItem()
        item.setLabel("bottom", "time", units="s")
        item.setLabel("left", ERROR_AXIS)
        item.showGrid(x=True, y=True, alpha=0.15)
        item.setMenuEnabled(True)
        item.hideButtons()
        self.legend = item.addLegend(offset=(-8, -34), labelTextSize="8pt")  # lower right
        self.error_curve = item.plot([], [], pen=pg.mkPen(ERROR_COLOUR, width=2),
                                     name="incumbent error")
        self.bound_curve = item.plot([], [], pen=pg.mkPen(BOUND_COLOUR, width=2,
                                                          style=pg.QtCore.Qt.DashLine),
                                     name="lower bound")
        self.gap_fill = pg.FillBetweenItem(self.error_curve, self.bound_curve,
                                           brush=pg.mkBrush(*GAP_COLOUR))
        item.addItem(self.gap_fill)
        # Times and errors are never negative: no axis goes below 0 (autorange pads
        # both ways otherwise), and invisible points keep the origin and the least
        # ranges in view.
        item.getViewBox().setLimits(xMin=0.0, yMin=0.0)
        self.anchor = item.plot([0.0, LEAST_SECONDS], [0.0, LEAST_ERROR],
                                pen=pg.mkPen(0, 0, 0, 0))
        self._comparison: list = []
        self.points: list[tuple[float, float, float]] = []
        item.setTitle("")
        # Why a run has no curve to draw (one tree found at once, an edit by hand)
        self.note = ChartNote(self)

    def set_note(self, text: str) -> None:
        """Say over the plot why there is nothing to draw ("" hides it)."""
        self.note.say(text)

    # ----------------------------------------------------------------- live
    def start_run(self, title: str, objective: bool = False,
                  regression: bool = False) -> None:
        """A new live run: nothing of the previous curve, band or comparison stays.
        `objective`: the run minimises errors + a cost per leaf, which the curves show;
        `regression`: its errors are squared errors."""
        self._clear_comparison()
        self.set_note("")
        self.set_points([])
        self._show_own_curves(True)
        self._set_axis(objective, regression)
        self.getPlotItem().setTitle(_title(title), size="9pt")
        self.enableAutoRange()

    def set_points(self, points: list[tuple[float, float, float]],
                   now: float | None = None) -> None:
        """Draw incumbents `(t, error, lower_bound)`; `now` extends the curves."""
        self.points = list(points)
        if not points:
            self.error_curve.setData([], [])
            self.bound_curve.setData([], [])
            self.gap_fill.setPath(QPainterPath())   # the band does not follow empty curves
            return
        times = [p[0] for p in points]
        xs, ys = stairs(times, [p[1] for p in points], now)
        bx, by = stairs(times, [max(p[2], 0.0) for p in points], now)
        self.error_curve.setData(xs, ys)
        self.bound_curve.setData(bx, by)

    def show_result(self, title: str, points: list[tuple[float, float, float]],
                    end: float | None, error: float | None = None,
                    bound: float | None = None, objective: bool = False,
                    note: str = "", regression: bool = False) -> None:
        """A finished run's curve (also used to show a run picked from the history).

        `points` may end before the final bound was proven: the curves are extended
        to `end` with the last error and the result's bound (`bound`).  `objective`:
        the values are errors + a cost per leaf (`error` is then that objective);
        `note` says why there is no curve, when there is none."""
        self._clear_comparison()
        self.set_note(note)
        self._show_own_curves(True)
        self._set_axis(objective, regression)
        self.getPlotItem().setTitle(_title(title), size="9pt")
        points = list(points)
        if points and end is not None and error is not None and bound is not None and (
                points[-1][1] != error or points[-1][2] != bound):
            points.append((max(end, points[-1][0]), error, bound))
        self.set_points(points, end)
        self.enableAutoRange()

    def _set_axis(self, objective: bool, regression: bool = False) -> None:
        """Say what the curves count: errors (a regression's squared errors), or that
        + the leaves' cost."""
        axes = (SQUARED_AXIS, SQUARED_OBJECTIVE_AXIS) if regression else \
            (ERROR_AXIS, OBJECTIVE_AXIS)
        self.getPlotItem().setLabel("left", axes[objective])
        self.legend.getLabel(self.error_curve).setText(
            "incumbent objective" if objective else "incumbent error")

    # ----------------------------------------------------------- comparison
    def show_runs(self, runs: list, shown=None) -> None:
        """Overlay the error curves of several finished runs (`RunRecord`s); the one
        whose tree the window shows (`shown`) is drawn thicker and named in the title."""
        self._clear_comparison()
        self.set_note("")
        self._show_own_curves(False)
        self.points = []
        item = self.getPlotItem()
        for k, run in enumerate(runs):
            colour = QColor(PALETTE[k % len(PALETTE)])
            xs, ys = stairs([p[0] for p in run.incumbents], [p[1] for p in run.incumbents],
                            run.time_s)
            main = shown is not None and run.number == shown.number
            curve = item.plot(xs, ys, pen=pg.mkPen(colour, width=3.5 if main else 1.6),
                              name=f"#{run.number} {run.title}" + (" (shown)" if main else ""))
            self._comparison.append(curve)
        title = f"Comparing {len(runs)} runs"
        if shown is not None:
            title += f" · tree and figures: #{shown.number} {shown.title}"
        item.setTitle(_title(title), size="9pt")
        self.enableAutoRange()

    @property
    def title(self) -> str:
        """The chart's title as plain text (what the user reads above the curves)."""
        return html.unescape(re.sub(r"<[^>]+>", "", self.getPlotItem().titleLabel.text))

    def _show_own_curves(self, visible: bool) -> None:
        for curve in (self.error_curve, self.bound_curve, self.gap_fill):
            curve.setVisible(visible)
        for curve, name in ((self.error_curve, "incumbent error"),
                            (self.bound_curve, "lower bound")):
            self.legend.removeItem(curve)
            if visible:
                self.legend.addItem(curve, name)

    def _clear_comparison(self) -> None:
        item = self.getPlotItem()
        for curve in self._comparison:
            self.legend.removeItem(curve)
            item.removeItem(curve)
        self._comparison = []

    def clear_all(self) -> None:
        self._clear_comparison()
        self.set_note("")
        self._show_own_curves(True)
        self.set_points([])
        self.getPlotItem().setTitle("")


def _title(text: str) -> str:
    return f"<span style='color:#3d444d'>{html.escape(text)}</span>"
