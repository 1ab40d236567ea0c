"""Run → Tune depth…: the depth (least leaf size, cost per leaf) chosen by
cross-validation.

A thin view over `engine.tuning.Tuner` (the same run as `orchard tune`) on the table
open in the window with its data settings and the chosen algorithm: the tuning runs
in a worker with progress and Stop, each candidate appears as it is scored, and the
curve shows validation accuracy against tree size with ± one standard error, the
rule's bar (half a standard error below the best: `engine.tuning.RULE`) and the chosen
setting.  "Use this setting" puts the chosen
depth (least leaf, cost per leaf) in the algorithm panel; Run then trains it on every row, as
every run is trained, so the run and its views stay the window's own.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from engine.data.columns import choose_target
from engine.data.task import choose_task
from engine.errors import OrchardError
from engine.evaluation import Plan
from engine.solvers import get_solver
from engine.solvers.monitor import Monitor
from engine.vocabulary import LOWER_IS_BETTER, METRICS, REGRESSION, TASK_METRICS
from engine.tuning import (
    DEPTHS,
    GREEDY_DEEP_DEPTHS,
    RULE,
    RULE_ERRORS,
    Scored,
    Tuner,
    Tuning,
    candidates,
    default_costs,
    default_depths,
    default_leaves,
    leaf_parameter,
    measure,
    shown,
)
from gui.chart_note import ChartNote
from gui.data_tasks import StageRelay
from gui.progress_chart import ERROR_COLOUR
from gui.worker import Worker, error_message

CHOSEN_COLOUR = "#D55E00"
DEFAULT_SECONDS = 60


def table_task(raw, options) -> str:
    """The task the window's table is prepared for (`choose_task` of its target)."""
    columns = [str(c) for c in raw.frame.columns]
    target = choose_target(columns, options.target, raw)
    return choose_task(target, raw.frame[target], options.task)[0]


def run_tuning(tuner: Tuner, clock: Monitor, report) -> Tuning:
    """The worker's call: every candidate reported as it is scored, no final fit
    (Run trains the chosen setting)."""
    try:
        return tuner.run(lambda score, i, n: report(("candidate", score, i, n)),
                         clock=clock, refit=False)
    finally:
        clock.finish()


class TuneDialog(QDialog):
    """Tune `algorithm` on the window's `raw` table prepared with `options`;
    `apply(params)` is called with the chosen depth (and least leaf) on request."""

    def __init__(self, raw, options, algorithm: str, params: dict, source: str,
                 apply: Callable[[dict], None], time_limit: float | None, parent=None):
        super().__init__(parent)
        self.raw, self.options, self.algorithm = raw, options, algorithm
        self.task = table_task(raw, options)
        self.params = {k: v for k, v in params.items() if k != "depth"}
        self.apply, self.tuning, self._worker = apply, None, None
        self.scored: list[Scored] = []
        title = get_solver(algorithm).title
        self.setWindowTitle(f"Tune depth — {title} on {source}")
        self.resize(760, 620)
        layout = QVBoxLayout(self)
        form = QFormLayout()
        depths = QHBoxLayout()
        self.low_spin, self.high_spin = QSpinBox(self), QSpinBox(self)
        for spin, value in ((self.low_spin, 1), (self.high_spin,
                                                  max(default_depths(algorithm)))):
            spin.setRange(1, 20)
            spin.setValue(value)
            spin.setToolTip(f"Every depth up to {max(DEPTHS)} in this range; beyond, "
                            f"the depths {', '.join(map(str, GREEDY_DEEP_DEPTHS))} in it")
            depths.addWidget(spin)
        depths.insertWidget(1, QLabel("to", self))
        depths.addStretch(1)
        form.addRow("Depths from:", depths)
        self.leaf_edit = QLineEdit(", ".join(map(str, default_leaves(algorithm))), self)
        self.leaf_name = leaf_parameter(algorithm)
        if self.leaf_name is not None and not self.leaf_edit.text():
            self.leaf_edit.setPlaceholderText("1 (or sizes to try, e.g. 1, 5, 20: each "
                                              "multiplies the candidates)")
        if self.leaf_name is None:
            self.leaf_edit.setText("")
            self.leaf_edit.setEnabled(False)
            self.leaf_edit.setPlaceholderText(f"{title} has no least leaf size: "
                                              "only the depth is tuned")
        form.addRow("Least rows in a leaf:", self.leaf_edit)
        self.has_cost = "leaf_cost" in {p.name for p in get_solver(algorithm).params}
        self.cost_edit = QLineEdit(", ".join(f"{c:g}" for c in default_costs(algorithm))
                                   if self.has_cost else "", self)
        if not self.has_cost:
            self.cost_edit.setEnabled(False)
            self.cost_edit.setPlaceholderText(f"{title} has no cost per leaf")
        self.cost_edit.setToolTip("Costs per leaf to try, as shares of the rows: 0.01 "
                                  "means a split must classify 1% of the rows better "
                                  "to be kept. Each value multiplies the candidates.")
        form.addRow("Costs per leaf:", self.cost_edit)
        self.folds_spin = QSpinBox(self)
        self.folds_spin.setRange(2, 20)
        self.folds_spin.setValue(5)
        form.addRow("Inner folds:", self.folds_spin)
        self.metric_combo = QComboBox(self)
        for metric in TASK_METRICS[self.task]:   # the target's own measures
            self.metric_combo.addItem(METRICS[metric].capitalize(), metric)
        self.metric_combo.setToolTip(
            "What the settings are ranked by on the validation rows: accuracy (each "
            "row counted with its class's weight under class weights), or balanced "
            "accuracy, the mean recall of the classes (a rare class counts as much as "
            "a common one); for a target of numbers, R² or the RMSE")
        self.metric_combo.currentIndexChanged.connect(self._metric_changed)
        form.addRow("Rank by:", self.metric_combo)
        self.time_spin = QDoubleSpinBox(self)
        self.time_spin.setRange(1, 24 * 3600)
        self.time_spin.setDecimals(0)
        self.time_spin.setSuffix(" s")
        self.time_spin.setValue(time_limit or DEFAULT_SECONDS)
        form.addRow("Time for all of it:", self.time_spin)
        layout.addLayout(form)
        buttons = QHBoxLayout()
        self.start_button = QPushButton("Start", self)
        self.start_button.clicked.connect(self.start)
        self.stop_button = QPushButton("Stop", self)
        self.stop_button.clicked.connect(self.stop)
        self.use_button = QPushButton("Use this setting", self)
        self.use_button.clicked.connect(self._use)
        for button in (self.start_button, self.stop_button, self.use_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 1000)
        layout.addWidget(self.progress)
        self.status = QLabel("", self)
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.PlainText)
        layout.addWidget(self.status)
        self.plot = pg.PlotWidget(self)
        item = self.plot.getPlotItem()
        item.setLabel("bottom", "leaves (mean over folds)")
        item.setLabel("left", "")
        item.showGrid(x=True, y=True, alpha=0.15)
        item.hideButtons()
        self.plot_note = ChartNote(self.plot)
        layout.addWidget(self.plot, 3)
        self.table = QTableWidget(0, 4, self)
        self.table.setHorizontalHeaderLabels(["setting", "", "leaves", "note"])
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.resizeColumnsToContents()   # headers readable before any row
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.NoEditTriggers)
        layout.addWidget(self.table, 2)
        self._set_busy(False)
        self._metric_changed()

    @property
    def metric(self) -> str:
        return self.metric_combo.currentData()

    @property
    def _unit(self) -> float:
        """What a score is multiplied by on the chart: 100 for shares (accuracy,
        AUC), 1 for a regression's R² and RMSE."""
        return 1.0 if self.metric in TASK_METRICS[REGRESSION] else 100.0

    def _score(self, value: float, error: bool = False) -> str:
        return shown(self.metric, value, error)

    def _metric_changed(self) -> None:
        """Every text that names the measure says the one chosen."""
        words = measure(self.options, self.metric)
        rows = "a value" if self.task == REGRESSION else "a class"
        self.status.setText(f"Each depth is cross-validated on the rows with {rows} and "
                            f"scored by its {words}; the simplest setting within {RULE} "
                            "of the best is chosen.")
        self.plot.getPlotItem().setLabel("left", f"{words} (%)" if self._unit == 100
                                         else words)
        self.table.horizontalHeaderItem(1).setText(words)
        self.table.resizeColumnsToContents()
        self._draw()

    # ------------------------------------------------------------ running
    def depths(self) -> list[int]:
        """The depths from the low to the high spin box: each one up to `DEPTHS`'
        last, and beyond it those the command line tries by default (8, 10, 12, 16),
        so a range to 16 is not 16 depths' worth of candidates."""
        low, high = self.low_spin.value(), self.high_spin.value()
        deep = set(default_depths(self.algorithm)) | set(GREEDY_DEEP_DEPTHS) | {high}
        return [d for d in range(low, high + 1) if d <= max(DEPTHS) or d in deep]

    def start(self) -> None:
        try:
            grid = candidates(self.algorithm, self.depths(),
                              self._numbers(self.leaf_edit, self.leaf_name is not None,
                                            "Least rows in a leaf", "1, 5, 20"),
                              self._numbers(self.cost_edit, self.has_cost,
                                            "Costs per leaf", "0, 0.01"))
            tuner = Tuner(self.raw, self.options, self.algorithm, grid, self.params,
                          Plan("kfold", self.folds_spin.value()),
                          self.time_spin.value(), self.metric)
        except (OrchardError, ValueError) as error:
            self.status.setText(error_message(error))
            return
        clock = Monitor(self.time_spin.value())
        worker = Worker(run_tuning, tuner, clock, report_arg="report",
                        on_cancel=tuner.cancel, name="orchard-tune")
        clock.on_progress = StageRelay(worker.report)
        worker.partial.connect(self._progress)
        worker.finished.connect(self._finished)
        worker.errored.connect(self._failed)
        worker.cancelled.connect(self._stopped)
        self._worker, self.tuning, self.scored, self._n = worker, None, [], len(grid)
        self.table.setRowCount(0)
        self._draw()
        self.status.setText(f"Preparing the {self.folds_spin.value()} splits…")
        self._set_busy(True)
        worker.start()

    @staticmethod
    def _numbers(edit: QLineEdit, used: bool, what: str, example: str
                 ) -> list[float] | None:
        """The numbers typed in `edit` (None: the defaults, or none to tune)."""
        if not used:
            return None
        text = edit.text().replace(";", ",")
        try:
            return [float(part) for part in text.split(",") if part.strip()] or None
        except ValueError:
            raise OrchardError(f"{what} takes numbers like {example}.") from None

    def stop(self) -> None:
        if self._worker is not None:
            self._worker.cancel()

    def _progress(self, payload) -> None:
        if self.sender() is not self._worker:
            return
        if payload[0] == "stage":
            self.status.setText(str(payload[1]))
            self.progress.setValue(round(1000 * payload[2] / (self._n + 1)))
            return
        _, score, i, n = payload
        self.scored.append(score)
        self.progress.setValue(round(1000 * (i + 2) / (n + 1)))
        self.status.setText(f"{i + 1} of {n}: {score.candidate.label()} "
                            + (f"— {self._score(score.mean)}" if score.complete else
                               f"— {score.note}"))
        self._add_row(score)
        self._draw()

    def _finished(self, tuning: Tuning) -> None:
        if self.sender() is not self._worker:
            return
        self._worker, self.tuning = None, tuning
        self._set_busy(False)
        chosen, best = tuning.scored[tuning.chosen], tuning.scored[tuning.best]
        self.status.setText(
            f"Scored on {tuning.scored_on()}. "
            f"Chosen: {chosen.candidate.label()} — {self._score(chosen.mean)} ± "
            f"{self._score(chosen.standard_error, True)} with {chosen.mean_leaves:.1f} "
            f"leaves, within {RULE} of the best ({best.candidate.label()}, "
            f"{self._score(best.mean)}). Use this setting, then Run to train it on "
            "every row." + (f" {tuning.note}" if tuning.note else ""))
        for row in range(self.table.rowCount()):
            font = self.table.item(row, 0).font()
            font.setBold(row == tuning.chosen)
            for column in range(4):
                self.table.item(row, column).setFont(font)
        self.table.resizeColumnsToContents()   # (bold is wider)
        self._draw()

    def _stopped(self) -> None:
        if self.sender() is self._worker:
            self._ended("Tuning was stopped.")

    def _failed(self, message: str) -> None:
        if self.sender() is self._worker:
            self._ended(message)

    def _ended(self, message: str) -> None:
        self._worker = None
        self._set_busy(False)
        self.status.setText(f"{message} Nothing is chosen.")

    def _set_busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.start_button.setEnabled(not busy)
        self.stop_button.setEnabled(busy)
        self.use_button.setEnabled(not busy and self.tuning is not None)
        for editor in (self.low_spin, self.high_spin, self.folds_spin, self.time_spin,
                       self.metric_combo):
            editor.setEnabled(not busy)
        self.leaf_edit.setEnabled(not busy and self.leaf_name is not None)
        self.cost_edit.setEnabled(not busy and self.has_cost)

    def _use(self) -> None:
        if self.tuning is not None:
            self.apply(dict(self.tuning.params), self.tuning)
            self.accept()

    # ------------------------------------------------------------ showing
    def _add_row(self, score: Scored) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        cells = [score.candidate.label(),
                 f"{self._score(score.mean)} ± {self._score(score.standard_error, True)}"
                 if score.complete else "—",
                 f"{score.mean_leaves:.1f}" if score.complete else "—",
                 score.note or (f"{score.at_limit} of {score.folds} folds stopped by "
                                "the time limit" if score.at_limit else "")]
        for column, text in enumerate(cells):
            self.table.setItem(row, column, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()

    def _draw(self) -> None:
        """Accuracy against leaves, ± one standard error; the chosen setting and the
        rule's bar once the tuning has ended."""
        item = self.plot.getPlotItem()
        item.clear()
        done = [s for s in self.scored if s.complete]
        self.plot_note.say("" if done else
                           "Each setting's validation score against its leaves appears "
                           "here as it is scored; press Start." if self._worker is None
                           else "Scoring the first setting on every split…")
        self.plot.getPlotItem().getAxis("left").setStyle(showValues=bool(done))
        self.plot.getPlotItem().getAxis("bottom").setStyle(showValues=bool(done))
        if not done:
            return
        x = [s.mean_leaves for s in done]
        y = [self._unit * s.mean for s in done]
        se = [self._unit * s.standard_error for s in done]
        item.addItem(pg.ErrorBarItem(x=np.array(x), y=np.array(y),
                                     height=2 * np.array(se), beam=0.3,
                                     pen=pg.mkPen(ERROR_COLOUR)))
        item.plot(x, y, pen=None, symbol="o", symbolBrush=ERROR_COLOUR, symbolSize=7)
        # one label per point: settings that scored the same (often several costs
        # per leaf on a small tree) share it instead of overprinting each other
        names: dict[tuple[float, float], list[str]] = {}
        for s, xi, yi in zip(done, x, y):
            names.setdefault((round(xi, 6), round(yi, 6)), []).append(
                s.candidate.label().replace("depth ", "d").replace(", min leaf ", "/")
                .replace(", leaf cost ", " α"))
        for (xi, yi), texts in names.items():
            label = pg.TextItem(" · ".join(texts), color="#3d444d", anchor=(0, 1))
            label.setPos(xi, yi)
            item.addItem(label)
        if self.tuning is not None:
            best = self.tuning.scored[self.tuning.best]
            lower = -1 if self.metric in LOWER_IS_BETTER else 1   # an RMSE's bar is above
            bar = self._unit * (best.mean - lower * RULE_ERRORS * best.standard_error)
            item.addItem(pg.InfiniteLine(bar, angle=0, pen=pg.mkPen(
                CHOSEN_COLOUR, style=Qt.DashLine), label=f"{RULE} below the best",
                labelOpts={"position": 0.85, "color": CHOSEN_COLOUR}))
            chosen = self.tuning.scored[self.tuning.chosen]
            item.plot([chosen.mean_leaves], [self._unit * chosen.mean], pen=None,
                      symbol="o",
                      symbolSize=14, symbolBrush=None,
                      symbolPen=pg.mkPen(CHOSEN_COLOUR, width=3))

    def done(self, result: int) -> None:
        self.stop()
        if self._worker is not None:
            self._worker.wait()
        super().done(result)


def open_tune_dialog(win) -> TuneDialog | None:
    """Run → Tune depth… for the table open in the window (None without one)."""
    if win.raw is None or win.running or win.loading:
        return None
    draft = win.state.draft
    source = draft.path.name if draft.path else "this table"
    panel = win.algo_panel

    def apply(params: dict, tuning: Tuning | None = None) -> None:
        # the run of this setting on this table will carry the tuning (its report)
        win.state.adopt_tuning(draft.raw, panel.algorithm(),
                               None if tuning is None else tuning.to_dict())
        panel.depth_spin.setValue(int(params["depth"]))
        panel.form.set_values({k: v for k, v in params.items() if k != "depth"})
        win.set_status(f"Tuning chose {', '.join(f'{k} {v:g}' for k, v in params.items())}"
                       ": press Run to train it on every row.")

    dialog = TuneDialog(win.raw, win.data.prep_options(), panel.algorithm(),
                        panel.params(), source, apply, panel.time_limit(), win)
    dialog.setAttribute(Qt.WA_DeleteOnClose)
    dialog.show()
    return dialog
