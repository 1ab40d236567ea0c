"""Evaluation views of one model: per-class scores, ROC curve, cumulative gain and
lift, feature importance, on its training rows or on the held-out rows of its test
(a cross-validation's or a hold-out's, `score_held_out`: the rows chooser in the
tab bar's corner; the held-out rows are the default when the run has them).

A thin view over plain engine functions (`engine.metrics.per_class`,
`engine.importance`, `engine.export.evaluation_csv`): the widget only lays out what
they return, so the numbers on screen, in the CSV files and in the tests are the
same.  `score` computes everything (one pass of the model over the rows, a few
vectorised numpy passes: about 4 s for two million rows), so `show_dataset`, what
the window calls, runs it in a worker and says so meanwhile; `show_model` runs it
at once (tests, small tables).

The ROC curve needs a score per row; a tree gives each row its leaf's share of the
positive class, so the curve has one corner per distinct leaf share.  With more than
two classes it is one class against the rest (chosen in a combo box); the gain
curve ranks the rows the same way (the share of the positive rows found in the first
x% of the rows; lift is that share over x).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSize, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QStackedWidget,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from engine.data.features import format_count
from engine.errors import DataError, OrchardError
from engine.evaluation import HeldOut
from engine.export.evaluation_csv import (
    write_gain_csv,
    write_importance_csv,
    write_per_class_csv,
    write_roc_csv,
)
from engine.export.files import write_atomically
from engine.importance import (
    Gain,
    Importance,
    Roc,
    class_probabilities,
    cutoffs_for_class,
    feature_importance,
    gain_for_class,
    roc_for_class,
)
from engine.metrics import accuracy, balanced_accuracy, per_class
from engine.model import Diagram, Tree
from gui.cutoff_panel import CutoffPanel
from gui.worker import Worker


@dataclass
class Scored:
    """What the views show of one model on some rows (`score`)."""

    names: list[str]
    y: np.ndarray
    w: np.ndarray
    proba: np.ndarray | None   # None: a regression's (no classes)
    scores: dict[str, np.ndarray]
    accuracy: float
    balanced: float
    importance: Importance
    leaf: str                 # "leaf" or "class terminal", for the notes
    positive: int             # the class the ROC curve starts with
    roc: Roc | None           # its curve, or None with `roc_message`
    roc_message: str = ""


def score(model, X: np.ndarray, y: np.ndarray, w: np.ndarray | None,
          names: list[str]) -> Scored:
    """Score `model` (a Tree or Diagram) on rows `X` in its own features with true
    classes `y` and weights `w`: no Qt, so a worker can run it."""
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    if getattr(model, "regression", False):   # numbers: the importance view alone
        y = np.asarray(y, dtype=float)
        return Scored([], y, w, None, {}, float("nan"), float("nan"),
                      feature_importance(model, X, y, w), "leaf", 0, None,
                      REGRESSION_VIEWS)
    y = np.asarray(y, dtype=np.int64)
    importance = feature_importance(model, X, y, w, len(names))
    proba = class_probabilities(model, X)
    predicted = model.predict(X)
    return _scored(names, y, w, proba, predicted, importance,
                   "class terminal" if isinstance(model, Diagram) else "leaf")


def _scored(names: list[str], y: np.ndarray, w: np.ndarray, proba: np.ndarray,
            predicted: np.ndarray, importance: Importance, leaf: str) -> Scored:
    present = np.bincount(y, weights=w, minlength=len(names)) > 0
    positive = 1 if len(names) == 2 else int(np.argmax(present)) if present.any() else 0
    roc, message = None, "A ROC curve needs two classes, and this target has only one."
    if len(names) >= 2:
        try:
            roc, message = roc_for_class(proba, y, positive, w, names), ""
        except OrchardError as error:
            message = str(error)
    return Scored(names, y, w, proba, per_class(y, predicted, len(names), w),
                  accuracy(y, predicted, w), balanced_accuracy(y, predicted, len(names), w),
                  importance, leaf, positive, roc, message)


def score_held_out(held: HeldOut, names: list[str]) -> Scored:
    """The views' figures on a test's held-out rows: each split's tree's predictions
    and leaf shares on its own held-out rows, and the error its splits remove there
    (summed per column over the splits)."""
    y = np.asarray(held.truth, dtype=np.int64)
    columns = sorted(held.importance, key=lambda c: -held.importance[c])
    values = np.array([held.importance[c] for c in columns], dtype=float)
    importance = Importance(columns, values, np.zeros(0), float("nan"), float("nan"),
                            held.tested)
    return _scored(list(names), y, np.ones(len(y)), held.proba, held.predicted,
                   importance, "leaf")


def score_dataset(model, data) -> Scored:
    """`score` on a `Dataset`, in the model's own features (`auto` may have binarised
    them differently: `engine.editing.training_matrix` finds or computes them; on
    two million rows that is worth the worker too)."""
    from engine.editing import training_matrix  # loads the solvers: only here
    if model.features == data.features:
        X = data.X
    elif isinstance(model, Tree):
        X = training_matrix(model, data)
    else:
        raise DataError("The data as prepared now are not in this model's features: "
                        "prepare them as they were for this run.")
    return score(model, X, data.y, data.w, list(data.class_names))


# The progress chart's look (set again here in case this module is imported alone).
pg.setConfigOptions(antialias=True, foreground="#3d444d", background="w")

VIEWS = ("per_class", "roc", "gain", "importance")
# What these views say of a regression tree, whose rows have numbers, not classes.
REGRESSION_VIEWS = ("This view is about classes, and this tree predicts numbers: its "
                    "RMSE and R² and its fit (predicted against actual, residuals) are on "
                    "the Results tab; Importance counts the squared error each column's "
                    "splits remove.")
TITLES = {"per_class": "Per class", "roc": "ROC curve", "gain": "Gain and lift",
          "importance": "Importance"}
# The rows chooser: what the views are computed on.
ROWS_HELD_OUT, ROWS_TRAINING = "held_out", "training"
MAX_BARS = 20          # more bars than this become unreadable labels
MAX_NAME = 28          # characters of a column name on the importance axis
CURVE_COLOUR = "#0072B2"
BAR_COLOUR = "#009E73"
HINT_COLOUR = "#505863"
_ROOT = QModelIndex()


def _short(name: str) -> str:
    return name if len(name) <= MAX_NAME else name[:MAX_NAME - 1] + "…"


class PerClassModel(QAbstractTableModel):
    """Class, precision, recall, F1, support: one row per class (Qt asks only for the
    rows on screen, so hundreds of classes cost nothing)."""

    HEADERS = ("class", "precision", "recall", "F1", "support")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.rows: list[tuple[str, float, float, float, float]] = []

    def set_rows(self, rows) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def rowCount(self, parent=_ROOT) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=_ROOT) -> int:
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if role == Qt.DisplayRole and orientation == Qt.Horizontal:
            return self.HEADERS[section]
        return None

    def data(self, index: QModelIndex, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        value = self.rows[index.row()][index.column()]
        if role == Qt.DisplayRole:
            if index.column() == 0:
                return value
            return format_count(value) if index.column() == 4 else f"{value:.3f}"
        if role == Qt.TextAlignmentRole and index.column():
            return int(Qt.AlignRight | Qt.AlignVCenter)
        return None


class _Page(QWidget):
    """One view: its content, a note saying what it shows, Export PNG and CSV."""

    def __init__(self, content: QWidget, parent=None):
        super().__init__(parent)
        self.content = content
        self.note = QLabel(self)
        self.note.setWordWrap(True)
        self.note.setStyleSheet(f"color: {HINT_COLOUR};")
        self.png_button = QPushButton("Export PNG…", self)
        self.csv_button = QPushButton("Export CSV…", self)
        self.layout_ = QVBoxLayout(self)
        self.layout_.setContentsMargins(4, 4, 4, 4)
        self.layout_.addWidget(content, 1)
        row = QHBoxLayout()
        row.addWidget(self.note, 1)
        row.addWidget(self.png_button)
        row.addWidget(self.csv_button)
        self.layout_.addLayout(row)

    def set_exportable(self, on: bool) -> None:
        self.png_button.setEnabled(on)
        self.csv_button.setEnabled(on)


def save_png(widget: QWidget, path: str | Path) -> None:
    """The widget as it is laid out now, written atomically."""
    picture = widget.grab()

    def write(target: Path) -> None:
        if not picture.save(str(target), "PNG"):
            raise OSError("the picture could not be encoded as PNG")
    write_atomically(path, write)


def _unit_square_plot(parent: QWidget, x: str, y: str, **style):
    """A plot of the unit square with a dashed diagonal (a random order) and an empty
    curve (`style`: its symbols): the ROC and the gain curve."""
    plot = pg.PlotWidget(parent)
    plot.setMinimumSize(240, 200)
    item = plot.getPlotItem()
    item.setLabel("bottom", x)
    item.setLabel("left", y)
    item.showGrid(x=True, y=True, alpha=0.15)
    item.hideButtons()
    item.plot([0, 1], [0, 1], pen=pg.mkPen("#9aa0a6", width=1, style=Qt.DashLine))
    curve = item.plot([], [], pen=pg.mkPen(CURVE_COLOUR, width=2), **style)
    item.setXRange(0, 1, padding=0.02)
    item.setYRange(0, 1, padding=0.02)
    return plot, curve


class EvaluationViews(QTabWidget):
    """Per-class table, ROC curve and importance chart of the model last shown."""

    exported = Signal(str)
    rows_changed = Signal()   # the rows chooser changed: the window shows them

    def __init__(self, parent=None):
        super().__init__(parent)
        self.class_names: list[str] = []
        self.gain: Gain | None = None
        self.scores: dict[str, np.ndarray] | None = None
        self.importance: Importance | None = None
        self.roc: Roc | None = None
        self.roc_message = ""
        self._proba = self._y = self._w = None
        self._leaf, self._about = "leaf", "training rows"
        self._worker: Worker | None = None   # scoring the rows of `show_dataset`

        self.table_model = PerClassModel(self)
        self.table = QTableView(self)
        self.table.setModel(self.table_model)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.Stretch)

        roc_box = QWidget(self)
        self.positive_combo = QComboBox(roc_box)
        self.positive_combo.setToolTip("The class whose rows count as positive; every "
                                       "other class is negative.")
        self.positive_combo.currentIndexChanged.connect(self._positive_changed)
        self.positive_label = QLabel("Positive class:", roc_box)
        self.roc_plot, self.roc_curve = _unit_square_plot(
            roc_box, "false positive rate", "true positive rate", symbol="o", symbolSize=5,
            symbolBrush=CURVE_COLOUR)
        self.roc_explanation = QLabel(roc_box)
        self.roc_explanation.setWordWrap(True)
        self.roc_explanation.setAlignment(Qt.AlignCenter)
        self.roc_stack = QStackedWidget(roc_box)
        self.roc_stack.addWidget(self.roc_plot)
        self.roc_stack.addWidget(self.roc_explanation)
        layout = QVBoxLayout(roc_box)
        layout.setContentsMargins(0, 0, 0, 0)
        choice = QHBoxLayout()
        choice.addWidget(self.positive_label)
        choice.addWidget(self.positive_combo, 1)
        layout.addLayout(choice)
        layout.addWidget(self.roc_stack, 1)
        self.cutoff_mark = self.roc_plot.getPlotItem().plot(
            [], [], pen=None, symbol="o", symbolSize=11, symbolBrush=None,
            symbolPen=pg.mkPen("#D55E00", width=2))
        self.cutoff = CutoffPanel(self._mark_cutoff, roc_box)
        layout.addWidget(self.cutoff)

        self.gain_plot, self.gain_curve = _unit_square_plot(
            self, "share of the rows, highest scores first",
            "share of the positive class's rows found")

        self.rows_combo = QComboBox(self)
        self.rows_combo.addItem("Training rows", ROWS_TRAINING)
        self.rows_combo.setSizeAdjustPolicy(QComboBox.AdjustToContents)
        self.rows_combo.setToolTip("The rows the views are computed on: the run's "
                                   "training rows, or the held-out rows of its test "
                                   "(each split's tree on the rows it did not see)")
        self.rows_combo.currentIndexChanged.connect(lambda _: self.rows_changed.emit())
        self.setCornerWidget(self.rows_combo, Qt.TopRightCorner)

        self.bar_plot = pg.PlotWidget(self)
        self.bar_plot.setMinimumSize(240, 200)
        bars = self.bar_plot.getPlotItem()
        bars.setLabel("bottom", "error removed (weight of rows)")
        bars.showGrid(x=True, alpha=0.15)
        bars.hideButtons()
        bars.invertY(True)                 # the largest bar on top
        bars.setMouseEnabled(x=False, y=False)

        self.pages = {"per_class": _Page(self.table, self), "roc": _Page(roc_box, self),
                      "gain": _Page(self.gain_plot, self),
                      "importance": _Page(self.bar_plot, self)}
        self._pictures = {"per_class": self.table, "roc": self.roc_plot,
                          "gain": self.gain_plot, "importance": self.bar_plot}
        for name, page in self.pages.items():
            self.addTab(page, TITLES[name])
            page.png_button.clicked.connect(lambda _=False, n=name: self._ask(n, "png"))
            page.csv_button.clicked.connect(lambda _=False, n=name: self._ask(n, "csv"))
        self.clear("Train a model to see its evaluation.")

    # ------------------------------------------------------------- for tests
    @property
    def auc_value(self) -> float | None:
        return None if self.roc is None else self.roc.auc

    @property
    def per_class_rows(self) -> list[tuple[str, float, float, float, float]]:
        return list(self.table_model.rows)

    @property
    def importance_rows(self) -> list[tuple[str, float]]:
        return [] if self.importance is None else self.importance.rows

    # ----------------------------------------------------------------- rows
    def set_held_out(self, text: str | None) -> None:
        """Offer the held-out rows (`text` says which test) or not (None); they are
        chosen when they become available, as the figures that matter."""
        at = self.rows_combo.findData(ROWS_HELD_OUT)
        self.rows_combo.blockSignals(True)
        if text is None and at >= 0:
            self.rows_combo.removeItem(at)
        elif text is not None and at < 0:
            self.rows_combo.insertItem(0, text, ROWS_HELD_OUT)
            self.rows_combo.setCurrentIndex(0)
        elif text is not None:
            self.rows_combo.setItemText(at, text)
        self.rows_combo.blockSignals(False)
        self.rows_combo.setVisible(self.rows_combo.count() > 1)

    def rows_choice(self) -> str:
        return self.rows_combo.currentData()

    # ----------------------------------------------------------------- show
    def clear(self, reason: str) -> None:
        """No model: every view says `reason` and nothing can be exported."""
        self._worker = None   # a scoring still running is no longer wanted
        self.scores = self.importance = self.roc = self.gain = None
        self.gain_curve.setData([], [])
        self._proba = self._y = self._w = None
        self.class_names = []
        self.table_model.set_rows([])
        self.positive_combo.blockSignals(True)
        self.positive_combo.clear()
        self.positive_combo.blockSignals(False)
        self.positive_combo.hide()
        self.positive_label.hide()
        self._show_roc_message(reason)     # in the middle of the ROC page
        self._draw_bars()
        for name, page in self.pages.items():
            page.note.setText("" if name == "roc" else reason)
            page.set_exportable(False)

    def show_dataset(self, model, data, about: str = "training rows") -> None:
        """Score `model` on a `Dataset` the window holds (`score_dataset`) in a
        worker; the views say so until the numbers come."""
        if not data.n_rows:
            self.clear(f"There are no {about} to evaluate the model on.")
            return
        self.clear(f"Scoring the model on {data.n_rows:,} {about}…")
        worker = Worker(score_dataset, model, data, name="orchard-evaluation")
        worker.finished.connect(lambda scored: worker is self._worker
                                and self._display(scored, about))
        worker.errored.connect(lambda message: worker is self._worker
                               and self.clear(message))
        self._worker = worker
        worker.start()

    def show_model(self, model, X: np.ndarray, y: np.ndarray, w: np.ndarray | None = None,
                   class_names: list[str] | None = None,
                   about: str = "training rows") -> None:
        """Score `model` (a Tree or Diagram) on rows `X` in its own features with true
        classes `y` and weights `w` at once; `about` names the rows in the notes."""
        self._worker = None   # a scoring still running is no longer wanted
        names = [str(c) for c in (class_names or model.class_names)]
        if not len(y):
            self.clear(f"There are no {about} to evaluate the model on.")
            return
        try:
            scored = score(model, X, y, w, names)
        except OrchardError as error:
            self.clear(str(error))
            return
        self._display(scored, about)

    def show_scored(self, scored: Scored, about: str) -> None:
        """Show figures already computed (`score_held_out`) on `about` rows."""
        self._worker = None
        if not len(scored.y):
            self.clear(f"There are no {about} to evaluate the model on.")
            return
        self._display(scored, about)

    def _display(self, scored: Scored, about: str) -> None:
        if scored.proba is None:   # a regression's: its importance, no class views
            self.clear(REGRESSION_VIEWS)
            self._about = about
            self.importance = scored.importance
            self._draw_bars()
            self.setCurrentWidget(self.pages["importance"])
            return
        names = scored.names
        self.class_names, self._proba, self._y, self._w = names, scored.proba, scored.y, \
            scored.w
        self._leaf, self._about = scored.leaf, about
        self.scores = scored.scores
        self.table_model.set_rows(
            (name, *(float(self.scores[key][k])
                     for key in ("precision", "recall", "f1", "support")))
            for k, name in enumerate(names))
        self.pages["per_class"].note.setText(
            f"Accuracy {scored.accuracy:.3f}, balanced accuracy {scored.balanced:.3f} on "
            f"{len(scored.y):,} {about}; support is the weight of each class's rows.")
        self.pages["per_class"].set_exportable(True)
        self.importance = scored.importance
        self._draw_bars()
        self._fill_positive_combo(scored)

    # ------------------------------------------------------------------ ROC
    def _fill_positive_combo(self, scored: Scored) -> None:
        names, default = self.class_names, scored.positive
        self.positive_combo.blockSignals(True)
        self.positive_combo.clear()
        self.positive_combo.addItems(names)
        self.positive_combo.setCurrentIndex(default)
        self.positive_combo.blockSignals(False)
        many = len(names) > 2
        self.positive_label.setText("Positive class (against the rest):" if many
                                    else "Positive class:")
        self.positive_combo.setVisible(len(names) >= 2)
        self.positive_label.setVisible(len(names) >= 2)
        self._show_roc(default, scored.roc, scored.roc_message)   # computed by `score`
        self._show_gain(default)

    def set_positive_class(self, index: int) -> None:
        """Draw the ROC curve of class `index` against every other class."""
        if self.positive_combo.currentIndex() != index:
            self.positive_combo.setCurrentIndex(index)   # comes back here once
            return
        self._positive_changed(index)

    def _positive_changed(self, index: int) -> None:
        if self._proba is None or index < 0 or len(self.class_names) < 2:
            return
        try:
            roc, message = roc_for_class(self._proba, self._y, index, self._w,
                                         self.class_names), ""
        except OrchardError as error:
            roc, message = None, str(error)
        self._show_roc(index, roc, message)
        self._show_gain(index)

    def _show_roc(self, index: int, roc: Roc | None, message: str) -> None:
        self.roc = roc
        if roc is None:
            self._show_roc_message(message)
            return
        if len(self.class_names) == 2:   # a cutoff on a two-class model's shares
            self.cutoff.show_cutoffs(cutoffs_for_class(self._proba, self._y, index,
                                                       self._w),
                                     self.class_names, self._about)
        else:
            self.cutoff.clear()
        names = self.class_names
        self.roc_curve.setData(self.roc.fpr, self.roc.tpr)
        rest = " against the rest" if len(names) > 2 else ""
        self.roc_plot.getPlotItem().setTitle(
            f"AUC = {self.roc.auc:.3f} ({names[index]}{rest})", size="10pt")
        self.roc_stack.setCurrentWidget(self.roc_plot)
        self.roc_message = ""
        page = self.pages["roc"]
        page.note.setText(f"Each row is scored by its {self._leaf}'s share of "
                          f"“{names[index]}”, so the curve has a corner per distinct share "
                          f"({len(self.roc.fpr) - 1}).")
        page.set_exportable(True)

    def _mark_cutoff(self, threshold: float) -> None:
        """The ROC curve's point of the cutoff chosen under it."""
        cutoffs = self.cutoff.cutoffs
        if cutoffs is None or not cutoffs.positives or not cutoffs.negatives:
            self.cutoff_mark.setData([], [])
            return
        tp, fp, _, _ = cutoffs.at(threshold)
        self.cutoff_mark.setData([fp / cutoffs.negatives], [tp / cutoffs.positives])

    def _show_roc_message(self, text: str) -> None:
        self.cutoff.clear()
        self.cutoff_mark.setData([], [])
        self.roc_message = text
        self.roc_curve.setData([], [])
        self.roc_plot.getPlotItem().setTitle("")
        self.roc_explanation.setText(text)
        self.roc_stack.setCurrentWidget(self.roc_explanation)
        self.pages["roc"].note.setText("")
        self.pages["roc"].set_exportable(False)

    # ----------------------------------------------------------------- gain
    def _show_gain(self, index: int) -> None:
        """The cumulative gain of class `index` (the ROC page's positive class), rows
        ranked by their leaf's share of it, with the lift at a tenth and a fifth."""
        page, names = self.pages["gain"], self.class_names
        w = self._w
        if self._proba is None or len(names) < 2 or not (
                w[self._y == index] > 0).any():
            self.gain = None
            self.gain_curve.setData([], [])
            page.note.setText(self.roc_message or "A gain curve needs rows of the "
                              "positive class.")
            page.set_exportable(False)
            return
        self.gain = gain_for_class(self._proba, self._y, index, w)
        self.gain_curve.setData(self.gain.taken, self.gain.gained)
        found = [(share, self.gain.at(share)) for share in (0.1, 0.2, 0.5)]
        text = "; ".join(f"the first {100 * share:.0f}% hold {100 * got:.1f}% (lift "
                         f"{got / share:.2f})" for share, got in found)
        rest = " against the rest" if len(names) > 2 else ""
        page.note.setText(f"The {self._about} ranked by their {self._leaf}'s share "
                          f"of “{names[index]}”{rest} (ties split evenly): {text}. "
                          "The dashed line is a random order.")
        page.set_exportable(True)

    # ----------------------------------------------------------- importance
    def _draw_bars(self) -> None:
        plot = self.bar_plot.getPlotItem()
        plot.clear()
        page, importance = self.pages["importance"], self.importance
        if importance is None:      # clear() writes the note
            plot.getAxis("left").setTicks([[]])
            return
        used = int((importance.values > 0).sum())
        page.set_exportable(True)
        if not used:
            plot.getAxis("left").setTicks([[]])
            page.note.setText("No split of the model reduces its training error (or it "
                              "makes none), so every column scores 0.")
            return
        shown = min(used, MAX_BARS)
        values = importance.values[:shown]
        positions = np.arange(shown)
        plot.addItem(pg.BarGraphItem(x0=0, y=positions, width=values, height=0.7,
                                     brush=BAR_COLOUR, pen=pg.mkPen(None)))
        for y, value in zip(positions, values):
            label = pg.TextItem(format_count(value), color=HINT_COLOUR, anchor=(0, 0.5))
            label.setPos(float(value), float(y))
            plot.addItem(label)
        plot.getAxis("left").setTicks(
            [[(int(k), _short(importance.columns[k])) for k in positions]])
        plot.setYRange(-0.6, shown - 0.4, padding=0)
        plot.setXRange(0, float(values.max()) * 1.15, padding=0)
        idle = sum(1 for name, value in importance.rows if value <= 0
                   and name in importance.tested)
        unused = len(importance.columns) - used - idle
        note = (f"Error each column's splits remove on the {self._about} (a node's error "
                "as a leaf minus its children's), summed over the column's thresholds or "
                "values.")
        if used > shown:
            note += f" The {shown} largest of {used} columns; Export CSV writes all."
        if idle:
            note += (f" {idle} column{'s' if idle > 1 else ''} the model tests "
                     f"remove{'s' if idle == 1 else ''} no error on the {self._about} "
                     "and score 0.")
        if unused:
            note += f" {unused} column{'s' if unused > 1 else ''} the model never tests " \
                    "score 0."
        page.note.setText(note)

    # -------------------------------------------------------------- exports
    def export_csv(self, view: str, path: str | Path) -> None:
        """Write `view`'s table (every class, curve corner or column) as CSV."""
        if view == "per_class" and self.scores is not None:
            write_per_class_csv(path, self.class_names, self.scores)
        elif view == "roc" and self.roc is not None:
            write_roc_csv(path, self.roc)
        elif view == "gain" and self.gain is not None:
            write_gain_csv(path, self.gain)
        elif view == "importance" and self.importance is not None:
            write_importance_csv(path, self.importance)
        else:
            raise DataError(self._nothing(view))
        self.exported.emit(str(path))

    def export_png(self, view: str, path: str | Path) -> None:
        """Write `view`'s table or chart as a PNG picture."""
        if view not in VIEWS or not self.pages[view].png_button.isEnabled():
            raise DataError(self._nothing(view))
        picture = self._pictures[view]
        if not picture.isVisible():
            self._lay_out_hidden(view)
        save_png(picture, path)
        self.exported.emit(str(path))

    def _lay_out_hidden(self, view: str) -> None:
        """Give a page that is not on screen a readable size.  A hidden QTabWidget
        never lays out its pages (a tab not opened yet is 100 x 30 pixels), so the
        page and the stack holding it are sized and laid out here; the table is as
        tall as its rows (up to a limit), the charts 900 x 600."""
        page = self.pages[view]
        height = 600
        if view == "per_class":
            rows = min(self.table_model.rowCount(), 200)
            height = self.table.horizontalHeader().sizeHint().height() + 48 + \
                rows * self.table.verticalHeader().defaultSectionSize()
        size = QSize(900, height)
        for box in (page.parentWidget(), page):
            if box is not None:
                box.resize(size)
                if box.layout() is not None:
                    box.layout().activate()

    def _nothing(self, view: str) -> str:
        if view not in VIEWS:
            return f"There is no evaluation view '{view}' (use one of {', '.join(VIEWS)})."
        if view == "roc" and self.roc_message:
            return self.roc_message
        return f"The {TITLES[view].lower()} view is empty: show a model first."

    def _ask(self, view: str, kind: str) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, f"Export the {TITLES[view].lower()} view", f"{view}.{kind}",
            "PNG picture (*.png)" if kind == "png" else "CSV (*.csv)")
        if not path:
            return
        try:
            (self.export_png if kind == "png" else self.export_csv)(view, path)
        except OrchardError as error:
            QMessageBox.warning(self, "Export", str(error))
