"""Orchard's main window: open a CSV file, pick an algorithm, watch the tree grow.

Reading and preparing the data, and training, run in `Worker` threads so the window
never freezes; improving trees found during a run arrive as signals and redraw the
view (at most a few times a second).  Every problem the user can cause reaches them
as the engine's one-sentence message in a dialog.

The window is built from small `_build_*` methods and keeps its state in a few
attributes (`raw`, `dataset`, `result`, `tree`), so later features (parameter
forms, anytime curves, prediction) can be added beside the existing ones.
"""

from __future__ import annotations

import html
import math
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QFileDialog, QFormLayout,
                               QFrame, QGroupBox, QHBoxLayout, QLabel, QMainWindow,
                               QMessageBox, QPushButton, QSizePolicy, QSpinBox,
                               QSplitter, QToolButton, QVBoxLayout, QWidget)

from engine.data.columns import choose_target
from engine.data.csv_reader import RawTable, read_table
from engine.data.dataset import Dataset, PrepOptions, prepare
from engine.solvers import get_solver, solver_names
from engine.solvers.monitor import Monitor
from engine.solvers.protocol import Result, Status
from engine.training import train
from gui.image_export import FORMATS as IMAGE_FORMATS
from gui.image_export import save_tree_image
from gui.tree_view import TreeView
from gui.worker import Worker, error_message

try:  # the text exports (rules, code, ...) come with the engine's export package
    from engine.export import WRITERS as EXPORT_WRITERS
    from engine.export import write_export
except ImportError:  # pragma: no cover - depends on the engine's version
    EXPORT_WRITERS, write_export = {}, None

BINARIZATIONS = (
    ("none", "None (thresholds)"),
    ("quantile:4", "4 quantiles"),
    ("quantile:10", "10 quantiles"),
    ("midpoints", "All midpoints"),
)

# Export kind -> (menu text, file extension); kinds not listed use their own name.
EXPORT_KINDS = {
    "rules": ("Rules as text…", "txt"),
    "python": ("Python function…", "py"),
    "sql": ("SQL expression…", "sql"),
    "dot": ("Graphviz DOT…", "dot"),
    "json": ("Orchard model (JSON)…", "json"),
}

STATUS_TEXT = {
    Status.OPTIMAL: "optimal",
    Status.FINISHED: "finished",
    Status.TIME_LIMIT: "time limit reached",
    Status.CANCELLED: "stopped",
    Status.MEMORY_LIMIT: "memory limit reached",
    Status.INFEASIBLE: "no tree found",
}

HINT_COLOUR = "#505863"  # secondary text, still well above WCAG contrast on grey
LIVE_REDRAW_MS = 200  # at most five redraws a second while a solver improves its tree
PANEL_WIDTH = 300


def _format_count(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


class MainWindow(QMainWindow):
    data_ready = Signal(object)   # Dataset, after a file is read or re-prepared
    run_ended = Signal(object)    # Result, or None when the run failed

    def __init__(self, path: str | None = None):
        super().__init__()
        self.setWindowTitle("Orchard")
        self.resize(1280, 800)
        self.path: Path | None = None
        self.raw: RawTable | None = None
        self.dataset: Dataset | None = None
        self.result: Result | None = None
        self.tree = None                   # tree on display (an incumbent while running)
        self.last_error: str | None = None
        self._load_worker: Worker | None = None
        self._run_worker: Worker | None = None
        self._monitor: Monitor | None = None
        self._pending_incumbent: tuple | None = None
        self._run_data: Dataset | None = None
        self._load_path: Path | None = None
        self._closing = False
        self._message_box: QMessageBox | None = None

        self._redraw_timer = QTimer(self)
        self._redraw_timer.setSingleShot(True)
        self._redraw_timer.setInterval(LIVE_REDRAW_MS)
        self._redraw_timer.timeout.connect(self._draw_pending_incumbent)

        self._build_actions()
        self._build_menus()
        self._build_central()
        self._build_status_bar()
        self._update_controls()
        if path is not None:
            self.load_path(path)

    # ================================================================== layout
    def _build_actions(self) -> None:
        self.open_action = QAction("&Open CSV…", self, shortcut=QKeySequence.Open,
                                   triggered=self.open_file_dialog)
        self.export_image_action = QAction("Export &image…", self,
                                           shortcut=QKeySequence("Ctrl+E"),
                                           triggered=self.export_image_dialog)
        self.export_actions: dict[str, QAction] = {}
        for kind in EXPORT_WRITERS:
            text, _ = EXPORT_KINDS.get(kind, (f"{kind}…", kind))
            action = QAction(text, self)
            action.triggered.connect(lambda _=False, k=kind: self.export_dialog(k))
            self.export_actions[kind] = action
        self.quit_action = QAction("&Quit", self, shortcut=QKeySequence.Quit,
                                   triggered=self.close)
        self.fit_action = QAction("&Fit to window", self, shortcut=QKeySequence("Ctrl+0"),
                                  triggered=lambda: self.view.fit())
        self.zoom_in_action = QAction("Zoom &in", self, shortcut=QKeySequence.ZoomIn,
                                      triggered=lambda: self.view.zoom_by(1.25))
        self.zoom_out_action = QAction("Zoom &out", self, shortcut=QKeySequence.ZoomOut,
                                       triggered=lambda: self.view.zoom_by(0.8))
        self.run_action = QAction("&Run", self, shortcut=QKeySequence("Ctrl+R"),
                                  triggered=self.run)
        self.stop_action = QAction("&Stop", self, shortcut=QKeySequence("Esc"),
                                   triggered=self.stop)

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        file_menu.addAction(self.open_action)
        file_menu.addSeparator()
        file_menu.addAction(self.export_image_action)
        if self.export_actions:
            export_menu = file_menu.addMenu("Export &rules and code")
            for action in self.export_actions.values():
                export_menu.addAction(action)
            self.export_menu = export_menu
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        view_menu = self.menuBar().addMenu("&View")
        for action in (self.fit_action, self.zoom_in_action, self.zoom_out_action):
            view_menu.addAction(action)
        tree_menu = self.menuBar().addMenu("&Tree")
        tree_menu.addAction(self.run_action)
        tree_menu.addAction(self.stop_action)

    def _build_central(self) -> None:
        splitter = QSplitter(Qt.Horizontal, self)
        splitter.addWidget(self._build_panel())
        splitter.addWidget(self._build_tree_area())
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setCollapsible(1, False)
        splitter.setSizes([PANEL_WIDTH, 1000])
        self.setCentralWidget(splitter)

    def _build_panel(self) -> QWidget:
        panel = QWidget(self)
        panel.setMinimumWidth(240)
        panel.setMaximumWidth(420)
        layout = QVBoxLayout(panel)
        layout.setContentsMargins(10, 10, 6, 10)

        data_box = QGroupBox("Data", panel)
        data_form = QFormLayout(data_box)
        data_form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        open_button = QPushButton("Open CSV…", data_box)
        open_button.clicked.connect(self.open_file_dialog)
        self.open_button = open_button
        data_form.addRow(open_button)
        self.target_combo = QComboBox(data_box)
        self.target_combo.setToolTip("The column holding the class to predict.")
        self.target_combo.currentIndexChanged.connect(self._options_changed)
        data_form.addRow("Target:", self.target_combo)
        self.binarize_combo = QComboBox(data_box)
        for spec, text in BINARIZATIONS:
            self.binarize_combo.addItem(text, spec)
        self.binarize_combo.setToolTip(
            "How numeric columns become tests. Solvers that need 0/1 features require "
            "quantiles or midpoints.")
        self.binarize_combo.currentIndexChanged.connect(self._options_changed)
        data_form.addRow("Binarisation:", self.binarize_combo)
        layout.addWidget(data_box)

        algo_box = QGroupBox("Algorithm", panel)
        algo_form = QFormLayout(algo_box)
        algo_form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        self.algorithm_combo = QComboBox(algo_box)
        for index, name in enumerate(solver_names()):
            solver = get_solver(name)
            self.algorithm_combo.addItem(solver.title, name)
            self.algorithm_combo.setItemData(index, solver.summary, Qt.ToolTipRole)
        self.algorithm_combo.currentIndexChanged.connect(self._algorithm_changed)
        algo_form.addRow(self.algorithm_combo)
        self.algorithm_summary = QLabel(algo_box)
        self.algorithm_summary.setWordWrap(True)
        self.algorithm_summary.setStyleSheet(f"color: {HINT_COLOUR};")
        self.algorithm_summary.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Minimum)
        algo_form.addRow(self.algorithm_summary)
        self.depth_spin = QSpinBox(algo_box)
        self.depth_spin.setValue(3)
        algo_form.addRow("Maximum depth:", self.depth_spin)
        self.time_spin = QDoubleSpinBox(algo_box)
        self.time_spin.setRange(0, 24 * 3600)
        self.time_spin.setDecimals(0)
        self.time_spin.setSingleStep(10)
        self.time_spin.setSuffix(" s")
        self.time_spin.setSpecialValueText("no limit")
        self.time_spin.setValue(60)
        self.time_spin.setToolTip("Stop the search after this many seconds and keep the "
                                  "best tree found (0 = no limit).")
        algo_form.addRow("Time limit:", self.time_spin)
        layout.addWidget(algo_box)

        buttons = QHBoxLayout()
        self.run_button = QPushButton("Run", panel)
        self.run_button.setDefault(True)
        self.run_button.clicked.connect(self.run)
        self.stop_button = QPushButton("Stop", panel)
        self.stop_button.clicked.connect(self.stop)
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.stop_button)
        layout.addLayout(buttons)
        layout.addStretch(1)
        self._algorithm_changed()
        return panel

    def _build_tree_area(self) -> QWidget:
        area = QWidget(self)
        layout = QVBoxLayout(area)
        layout.setContentsMargins(6, 10, 10, 6)
        layout.setSpacing(6)
        top = QHBoxLayout()
        self.summary_label = QLabel("No data loaded.", area)
        self.summary_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.summary_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        top.addWidget(self.summary_label, 1)
        for text, tip, slot in (("−", "Zoom out (Ctrl+-)", lambda: self.view.zoom_by(0.8)),
                                ("+", "Zoom in (Ctrl++)", lambda: self.view.zoom_by(1.25)),
                                ("Fit", "Fit the tree to the window (Ctrl+0)",
                                 lambda: self.view.fit())):
            button = QToolButton(area)
            button.setText(text)
            button.setToolTip(tip)
            button.clicked.connect(slot)
            top.addWidget(button)
        self.report_label = QLabel(area)
        self.report_label.setWordWrap(True)
        self.report_label.setStyleSheet(f"color: {HINT_COLOUR};")
        self.report_label.hide()
        layout.addLayout(top)
        layout.addWidget(self.report_label)
        self.view = TreeView(area)
        frame = QFrame(area)
        frame.setFrameShape(QFrame.StyledPanel)
        frame_layout = QVBoxLayout(frame)
        frame_layout.setContentsMargins(1, 1, 1, 1)
        frame_layout.addWidget(self.view)
        layout.addWidget(frame, 1)
        return area

    def _build_status_bar(self) -> None:
        self.result_label = QLabel("Ready.", self)
        self.result_label.setContentsMargins(6, 0, 6, 0)
        self.statusBar().addWidget(self.result_label, 1)

    # ================================================================== state
    @property
    def loading(self) -> bool:
        return self._load_worker is not None

    @property
    def running(self) -> bool:
        return self._run_worker is not None

    def _update_controls(self) -> None:
        busy = self.loading or self.running
        has_data = self.dataset is not None
        for widget in (self.open_button, self.target_combo, self.binarize_combo):
            widget.setEnabled(not busy)
        self.target_combo.setEnabled(not busy and self.raw is not None)
        self.open_action.setEnabled(not busy)
        self.run_button.setEnabled(has_data and not busy)
        self.run_action.setEnabled(has_data and not busy)
        self.stop_button.setEnabled(self.running)
        self.stop_action.setEnabled(self.running)
        has_tree = self.tree is not None
        self.export_image_action.setEnabled(has_tree)
        for action in self.export_actions.values():
            action.setEnabled(has_tree and hasattr(self.tree, "branch_conditions"))

    def set_status(self, text: str) -> None:
        self.result_label.setText(text)

    def show_error(self, message: str) -> None:
        """Tell the user what went wrong, in the engine's own sentence."""
        self.last_error = message
        self.set_status(message)
        if self._closing:
            return
        box = QMessageBox(QMessageBox.Warning, "Orchard", message, QMessageBox.Ok, self)
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.open()  # window-modal but not blocking
        self._message_box = box

    # ============================================================ loading data
    def open_file_dialog(self) -> None:
        start = str(self.path.parent) if self.path else ""
        path, _ = QFileDialog.getOpenFileName(
            self, "Open a data file", start,
            "Data files (*.csv *.tsv *.txt *.data);;All files (*)")
        if path:
            self.load_path(path)

    def load_path(self, path: str | Path) -> None:
        """Read and prepare `path` in the background; `data_ready` follows."""
        if self.loading or self.running:
            self.show_error("Please wait until the current task has finished "
                            "(or stop the run) before opening another file.")
            return
        path = Path(path)
        self.set_status(f"Reading {path.name}…")
        self._start_load(Worker(_read_and_prepare, path, self._binarize(),
                                name="orchard-read"), path)

    def _options_changed(self) -> None:
        """Target or binarisation changed: prepare the table again."""
        if self.raw is None or self.loading or self.running:
            return
        self.set_status("Preparing the data…")
        self._start_load(Worker(_prepare_again, self.raw, self._current_target(),
                                self._binarize(), name="orchard-prepare"), self.path)

    def _start_load(self, worker: Worker, path: Path | None) -> None:
        self._load_path = path
        worker.finished.connect(self._loaded)
        worker.errored.connect(self._load_failed)
        worker.cancelled.connect(self._load_failed)
        self._load_worker = worker
        self._update_controls()
        worker.start()

    def _loaded(self, outcome: tuple[RawTable, Dataset]) -> None:
        if self.sender() is not self._load_worker or self._closing:
            return
        self._load_worker = None
        raw, data = outcome
        new_file = raw is not self.raw
        self.raw, self.dataset = raw, data
        if new_file:
            self.path = self._load_path
            self.setWindowTitle(f"Orchard — {self.path.name}")
            self._fill_targets(list(raw.frame.columns), data.prep.target)
            self.result, self.tree = None, None
            self.view.show_message("Press Run to grow a tree.")
        self._show_summary()
        self.set_status("Data ready: choose an algorithm and press Run.")
        self._update_controls()
        self.data_ready.emit(data)

    def _load_failed(self, message: str = "") -> None:
        if self.sender() is not self._load_worker or self._closing:
            return
        self._load_worker = None
        if self.raw is not None and self._load_path == self.path:
            self.dataset = None  # the new options do not give usable data
            self.summary_label.setText(f"{self.path.name}: not usable with these options.")
            self.report_label.hide()
        self._update_controls()
        if message:
            self.show_error(message)

    def _fill_targets(self, columns: list[str], target: str) -> None:
        self.target_combo.blockSignals(True)
        self.target_combo.clear()
        self.target_combo.addItems([str(c) for c in columns])
        self.target_combo.setCurrentIndex(max(0, columns.index(target)))
        self.target_combo.blockSignals(False)

    def _current_target(self) -> str | None:
        text = self.target_combo.currentText()
        return text if text else None

    def _binarize(self) -> str:
        return self.binarize_combo.currentData()

    def _show_summary(self) -> None:
        data, raw = self.dataset, self.raw
        n_columns = len(raw.frame.columns)
        text = (f"<b>{html.escape(self.path.name)}</b> — {data.n_rows:,} rows, "
                f"{n_columns} columns, {data.n_classes} classes, {data.n_features:,} "
                f"features after binarisation (target '{html.escape(data.prep.target)}')")
        self.summary_label.setText(text)
        self.summary_label.setToolTip(f"{self.path}\nClasses: "
                                      f"{', '.join(map(str, data.class_names))}")
        lines = data.report.lines()
        self.report_label.setText(" ".join(lines))
        self.report_label.setVisible(bool(lines))

    # ================================================================ training
    def _algorithm_changed(self) -> None:
        solver = get_solver(self.algorithm())
        self.algorithm_summary.setText(solver.summary)
        self.algorithm_combo.setToolTip(solver.summary)
        depth = next((p for p in solver.params if p.name == "depth"), None)
        self.depth_spin.setEnabled(depth is not None)
        if depth is not None:
            self.depth_spin.setRange(int(depth.low if depth.low is not None else 0),
                                     int(depth.high if depth.high is not None else 99))
            self.depth_spin.setToolTip(depth.help)

    def algorithm(self) -> str:
        return self.algorithm_combo.currentData()

    def set_algorithm(self, name: str) -> None:
        index = self.algorithm_combo.findData(name)
        if index < 0:
            raise ValueError(f"unknown algorithm {name!r}")
        self.algorithm_combo.setCurrentIndex(index)

    def params(self) -> dict:
        """Solver parameters from the form (the solver's defaults for the others)."""
        solver = get_solver(self.algorithm())
        names = {p.name for p in solver.params}
        return {"depth": self.depth_spin.value()} if "depth" in names else {}

    def time_limit(self) -> float | None:
        seconds = self.time_spin.value()
        return seconds if seconds > 0 else None

    def run(self) -> None:
        """Train the chosen algorithm on the loaded data in the background."""
        if self.dataset is None or self.loading or self.running:
            return
        algorithm, data = self.algorithm(), self.dataset
        monitor = Monitor(self.time_limit())
        worker = Worker(train, data, algorithm, self.params(), monitor=monitor,
                        on_cancel=monitor.cancel, name="orchard-train")
        monitor.on_incumbent = lambda tree, t, error, bound: worker.report(
            (tree, float(t), float(error), float(bound)))
        worker.partial.connect(self._incumbent)
        worker.finished.connect(self._run_finished)
        worker.errored.connect(self._run_failed)
        worker.cancelled.connect(self._run_failed)
        self._monitor, self._run_worker = monitor, worker
        self._pending_incumbent = None
        self._run_data = data
        self.view.fit()  # follow the new trees until the user zooms
        self.set_status(f"Running {get_solver(algorithm).title}…")
        self._update_controls()
        worker.start()

    def stop(self) -> None:
        """Ask the running solver to stop; it returns the best tree found so far."""
        if self._run_worker is not None:
            self.set_status("Stopping…")
            self._run_worker.cancel()

    def _incumbent(self, incumbent: tuple) -> None:
        if self.sender() is not self._run_worker or self._closing:
            return
        self._pending_incumbent = incumbent
        _, t, error, bound = incumbent
        self.set_status(f"Running… best so far: error {_format_count(error)}"
                        f"{f', lower bound {_format_count(bound)}' if bound > 0 else ''}"
                        f" after {t:.1f} s")
        if not self._redraw_timer.isActive():
            self._redraw_timer.start()

    def _draw_pending_incumbent(self) -> None:
        if self._pending_incumbent is None or self._closing:
            return
        tree = self._pending_incumbent[0]
        self._pending_incumbent = None
        self._show_tree(tree)

    def _show_tree(self, tree) -> None:
        self.tree = tree
        if hasattr(tree, "branch_conditions"):
            self.view.show_tree(tree)
        else:
            self.view.show_message("This kind of model cannot be drawn yet.")
        self._update_controls()

    def _run_finished(self, result: Result) -> None:
        if self.sender() is not self._run_worker or self._closing:
            return
        self._end_run()
        self.result = result
        if result.tree is not None:
            self._show_tree(result.tree)
        self.set_status(self._result_text(result, self._run_data))
        self._update_controls()
        self.run_ended.emit(result)

    def _run_failed(self, message: str = "") -> None:
        if self.sender() is not self._run_worker or self._closing:
            return
        self._end_run()
        self._update_controls()
        if message:
            self.show_error(message)
        else:
            self.set_status("Run stopped.")
        self.run_ended.emit(None)

    def _end_run(self) -> None:
        self._redraw_timer.stop()
        self._pending_incumbent = None
        self._run_worker, self._monitor = None, None

    @staticmethod
    def _result_text(result: Result, data: Dataset) -> str:
        total = float(data.w.sum())
        accuracy = 1.0 - result.train_error / total if total > 0 else math.nan
        parts = [f"Training error {_format_count(result.train_error)} of "
                 f"{_format_count(total)}",
                 f"accuracy {100 * accuracy:.1f}%"]
        if result.lower_bound > 0 and not result.optimal:
            parts.append(f"lower bound {_format_count(result.lower_bound)}")
        parts.append(STATUS_TEXT.get(result.status, str(result.status)))
        parts.append(f"{result.time_s:.2f} s")
        if result.tree is not None and hasattr(result.tree, "n_leaves"):
            parts.append(f"depth {result.tree.depth}, {result.tree.n_leaves} leaves")
        return " · ".join(parts)

    # ================================================================= exports
    def export_image_dialog(self) -> None:
        if self.tree is None:
            return
        filters = ";;".join(f"{text} (*{ext})" for ext, text in IMAGE_FORMATS.items())
        path, chosen = QFileDialog.getSaveFileName(self, "Export the tree as an image",
                                                   self._suggested_name("png"), filters)
        if not path:
            return
        if Path(path).suffix.lower() not in IMAGE_FORMATS:
            ext = next((e for e, t in IMAGE_FORMATS.items() if chosen.startswith(t)), ".png")
            path += ext
        self.export_image(path)

    def export_image(self, path: str | Path) -> bool:
        return self._save(lambda: save_tree_image(self.tree, path),
                          f"Saved the picture of the tree to {path}.")

    def export_dialog(self, kind: str) -> None:
        if self.tree is None:
            return
        text, ext = EXPORT_KINDS.get(kind, (kind, kind))
        path, _ = QFileDialog.getSaveFileName(
            self, f"Export the tree: {text.rstrip('…')}", self._suggested_name(ext),
            f"{text.rstrip('…')} (*.{ext});;All files (*)")
        if path:
            self.export(kind, path)

    def export(self, kind: str, path: str | Path) -> bool:
        return self._save(lambda: write_export(self.tree, path, kind),
                          f"Exported the tree to {path}.")

    def _save(self, write, done: str) -> bool:
        """Run an export; any failure becomes a dialog, success a status message."""
        try:
            write()
        except Exception as exc:  # noqa: BLE001 - shown to the user
            self.show_error(error_message(exc))
            return False
        self.set_status(done)
        return True

    def _suggested_name(self, ext: str) -> str:
        if self.path is None:
            return f"tree.{ext}"
        return str(self.path.with_name(f"{self.path.stem}-tree.{ext}"))

    # ================================================================ closing
    def closeEvent(self, event: QCloseEvent) -> None:
        """Stop a run and wait for background work, so no thread outlives the window."""
        self._closing = True
        self._redraw_timer.stop()
        for worker in (self._run_worker, self._load_worker):
            if worker is not None:
                worker.cancel()
        for worker in (self._run_worker, self._load_worker):
            if worker is not None:
                worker.wait()
        self._run_worker = self._load_worker = None
        super().closeEvent(event)


def _read_and_prepare(path: Path, binarize: str) -> tuple[RawTable, Dataset]:
    raw = read_table(path)
    target = choose_target([str(c) for c in raw.frame.columns])
    return raw, prepare(raw, PrepOptions(target=target, binarize=binarize))


def _prepare_again(raw: RawTable, target: str | None, binarize: str) -> tuple[RawTable, Dataset]:
    return raw, prepare(raw, PrepOptions(target=target, binarize=binarize))
