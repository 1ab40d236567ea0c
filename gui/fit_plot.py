"""A regression tree's fit, drawn: predicted against actual, and the residuals.

A regression has no confusion matrix; what an analyst looks at instead is where the
tree's predictions (one value per leaf: vertical bands) fall against the true values,
and whether its errors grow with the prediction.  `fit_points` (no Qt: a worker runs
it) scores the tree on a run's training rows, a seeded sample of at most `MAX_POINTS`
of them so two million rows draw as fast as two thousand; `FitPlots` draws them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QHBoxLayout, QWidget

from gui.chart_note import ChartNote

MAX_POINTS = 5_000
POINT_COLOUR = (0, 114, 178, 90)
LINE_COLOUR = "#D55E00"


@dataclass
class FitPoints:
    predicted: np.ndarray
    actual: np.ndarray
    rows: int            # the rows they were drawn from (a sample above MAX_POINTS)


def fit_points(model, data, limit: int = MAX_POINTS) -> FitPoints:
    """The tree's predictions and the true values on `data`'s rows (a `Dataset`), in
    the model's own features (`editing.training_matrix`, as the evaluation views do),
    on a seeded sample of `limit` rows when there are more."""
    from engine.editing import training_matrix  # loads the solvers: only here
    rows = np.arange(data.n_rows)
    if data.n_rows > limit:
        rows = np.sort(np.random.default_rng(0).choice(data.n_rows, limit, replace=False))
    X = data.X if model.features == data.features else training_matrix(model, data)
    return FitPoints(model.predict(X[rows]), np.asarray(data.y, dtype=float)[rows],
                     data.n_rows)


class FitPlots(QWidget):
    """Predicted against actual (with the line where they are equal) beside the
    residuals (actual - predicted) against the prediction (with zero)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.fit = self._plot("actual", "predicted")
        self.residuals = self._plot("actual − predicted", "predicted")
        for plot in (self.fit, self.residuals):
            layout.addWidget(plot)
        self.note = ChartNote(self)
        self.points: FitPoints | None = None
        self.key = None   # whose points are drawn (the window: a run's number)

    def _plot(self, left: str, bottom: str) -> pg.PlotWidget:
        plot = pg.PlotWidget(self)
        plot.setMinimumSize(200, 160)
        item = plot.getPlotItem()
        item.setLabel("left", left)
        item.setLabel("bottom", bottom)
        item.showGrid(x=True, y=True, alpha=0.15)
        return plot

    def clear(self, text: str) -> None:
        """Nothing drawn, and `text` says why."""
        self.points = self.key = None
        for plot in (self.fit, self.residuals):
            plot.getPlotItem().clear()
            plot.getPlotItem().setTitle("")
        self.note.say(text)

    def show_points(self, points: FitPoints, about: str, key=None) -> None:
        """Draw `points`, titled with the rows they are (`about`, e.g. "training
        rows"); `key` says whose they are."""
        self.clear("")
        self.points, self.key = points, key
        predicted, actual = points.predicted, points.actual
        shown = f"{about}" + (f", {len(actual):,} of {points.rows:,}"
                              if len(actual) < points.rows else "")
        brush = pg.mkBrush(*POINT_COLOUR)
        line = pg.mkPen(LINE_COLOUR, width=1.5)
        fit = self.fit.getPlotItem()
        fit.setTitle(f"Predicted against actual ({shown})", size="9pt")
        fit.plot(predicted, actual, pen=None, symbol="o", symbolSize=4,
                 symbolBrush=brush, symbolPen=None)
        if len(actual):
            low = float(min(predicted.min(), actual.min()))
            high = float(max(predicted.max(), actual.max()))
            fit.plot([low, high], [low, high], pen=line)
        residuals = self.residuals.getPlotItem()
        residuals.setTitle("Residuals", size="9pt")
        residuals.plot(predicted, actual - predicted, pen=None, symbol="o", symbolSize=4,
                       symbolBrush=brush, symbolPen=None)
        residuals.addItem(pg.InfiniteLine(0.0, angle=0, pen=line))
