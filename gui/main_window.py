"""Orchard's main window: open a table, choose how it becomes features, pick an
algorithm, watch the tree improve, compare runs, export.

Layout: a side panel (Data, Algorithm, Test accuracy, Run / Stop) beside three tabs,
Data (column settings and the raw preview), Tree (the live tree and its anytime
curve) and Results (figures, confusion matrices, history).  The status bar carries
the run's figures.

Everything slow runs in `Worker` threads: reading and typing a file, preparing it
again after each option change, the JIT warm-up at start-up, training and
cross-validation.  Improving trees arrive as signals and are drawn at most five
times a second (large ones in slices, see `TreeView`).  Every problem the user can
cause reaches them as one sentence in a dialog; closing the window stops the work
and waits for it, so no thread outlives the window.
"""

from __future__ import annotations

import gc
import html
import sys
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from engine.data.columns import ColumnKind
from engine.data.dataset import PrepOptions
from engine.data.features import format_count
from engine.evaluation import CrossValidation
from engine.solvers import get_solver
from engine.solvers.monitor import Monitor
from engine.solvers.protocol import Status
from engine.training import default_binarization
from engine.warmup import warm_up as warm_up_solvers
from gui import settings as user_settings
from gui.algorithm_panel import AlgorithmPanel, is_sat
from gui.column_model import ColumnsModel
from gui.data_panel import DataPanel
from gui.data_tasks import Prepared, StageRelay, prepare_table, read_and_prepare
from gui.data_view import DataView
from gui.evaluation_box import EvaluationBox
from gui.evaluation_views import EvaluationViews
from gui.export_dialog import ExportDialog
from gui.image_export import FORMATS as IMAGE_FORMATS
from gui.image_export import save_tree_image
from gui.models import is_model, size_text
from gui.progress_chart import ProgressChart
from gui.results_panel import ResultsPanel
from gui.run_report import save_report
from gui.runs import RunRecord, run_task, status_text
from gui.session import SUFFIX as SESSION_SUFFIX
from gui.session import Session, is_session_file, load_session, save_session
from gui.status_bar import RunFigures
from gui.tree_analysis import TreeAnalysis
from gui.tree_editing import TreeEditor
from gui.tree_tools import TreeToolBar
from gui.tree_view import TreeView
from gui.worker import Worker, error_message
from resources import SAMPLES_DIR

try:  # the text exports (rules, code, ...) come with the engine's export package
    from engine.export import WRITERS as EXPORT_WRITERS
    from engine.export import write_export
except ImportError:  # pragma: no cover - depends on the engine's version
    EXPORT_WRITERS, write_export = {}, None


# Export kind -> (menu text, file extension); kinds not listed use their own name.
EXPORT_KINDS = {
    "rules": ("Rules as text…", "txt"),
    "python": ("Python function…", "py"),
    "sql": ("SQL expression…", "sql"),
    "dot": ("Graphviz DOT…", "dot"),
    "json": ("Orchard model (JSON)…", "json"),
}

HINT_COLOUR = "#505863"
LIVE_REDRAW_MS = 200   # at most five redraws a second while a solver improves its tree
TICK_MS = 100          # elapsed time during a run
CURVE_TICKS = 4        # the curve reaches up to "now" every 4 ticks (sooner if it improved)
PREPARE_DELAY_MS = 150  # option changes within this time are prepared once
PANEL_WIDTH = 370
PANEL_MIN_WIDTH, PANEL_MAX_WIDTH = 330, 460
TAB_DATA, TAB_TREE, TAB_RESULTS, TAB_EVALUATION = range(4)


def settle_heap() -> None:
    """Exempt the objects alive now (numba's compiler, Qt, pandas, the loaded table)
    from Python's cyclic garbage collector.

    A full collection walks every tracked object, and after numba has compiled the
    kernels that took 250 ms of the event loop's time now and then during a run.
    Frozen objects are still freed by reference counting as usual (only reference
    cycles among them would wait until the process ends).  Freezing costs nothing.
    """
    gc.freeze()


def sample_files() -> list[Path]:
    return sorted(SAMPLES_DIR.glob("*.csv")) if SAMPLES_DIR.is_dir() else []


def no_tree_text(label: str, status: str) -> str:
    """One sentence for a run that ended without a tree, with what to try."""
    why = {
        "cancelled": "was stopped before it found a tree: run it again and let it search "
                     "longer, or lower the depth",
        "stopped": "was stopped before it found a tree: run it again and let it search "
                   "longer, or lower the depth",
        "time_limit": "reached its time limit before it found a tree: raise the time "
                      "limit, lower the depth or choose a faster algorithm such as Greedy",
        "memory_limit": "ran out of memory before it found a tree: lower the depth or use "
                        "fewer features (fewer quantile thresholds)",
        "infeasible": "found no tree classifying every row within this depth: raise the "
                      "depth, or tick “Drop rows contradicting identical rows”",
        "error": "failed before it found a tree: see the message, change the settings it "
                 "names and run again",
    }.get(str(status), "ended without a tree: try a smaller depth or another algorithm")
    return f"Run {label} {why}."


class PanelScroll(QScrollArea):
    """The scroll area of the side panel's settings.  It scrolls only vertically, its
    scroll bar is always there (so the settings keep their width whether or not they
    are taller than the window) and it is never narrower than the settings need, so
    no control is cut off at the right edge nor shifted sideways when focus moves."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOn)
        self.setMinimumWidth(PANEL_MIN_WIDTH)
        self.setMaximumWidth(PANEL_MAX_WIDTH)
        bar = self.horizontalScrollBar()
        bar.valueChanged.connect(lambda value: value and bar.setValue(0))

    def setWidget(self, widget: QWidget) -> None:
        super().setWidget(widget)
        widget.installEventFilter(self)
        self._fit_width()

    def eventFilter(self, watched, event) -> bool:
        if watched is self.widget() and event.type() == QEvent.LayoutRequest:
            self._fit_width()   # e.g. another algorithm's parameter form
        return super().eventFilter(watched, event)

    def _fit_width(self) -> None:
        widget = self.widget()
        if widget is None:
            return
        needed = (widget.minimumSizeHint().width() + self.verticalScrollBar().sizeHint().width()
                  + 2 * self.frameWidth())
        self.setMinimumWidth(max(PANEL_MIN_WIDTH, needed))
        self.setMaximumWidth(max(PANEL_MAX_WIDTH, needed))


class MainWindow(QMainWindow):
    prepared = Signal(object)     # Prepared, after a file is read or prepared again
    data_ready = Signal(object)   # its Dataset (None when the options give no usable data)
    run_ended = Signal(object)    # Result, or None when the run failed
    warmed_up = Signal(object)    # engine.warmup.WarmupReport

    def __init__(self, path: str | None = None, warm_up: bool = False):
        super().__init__()
        self.setWindowTitle("Orchard")
        self.resize(1320, 840)
        self.setAcceptDrops(True)
        self.path: Path | None = None
        self.raw = None
        self.infos: list = []
        self.prep: Prepared | None = None
        self.dataset = None
        self.result = None
        self.tree = None                   # tree on display (an incumbent while running)
        self.current_run: RunRecord | None = None
        self.last_error: str | None = None
        self.warmup_report = None
        self._load_worker: Worker | None = None
        self._prep_worker: Worker | None = None
        self._run_worker: Worker | None = None
        self._warmup_worker: Worker | None = None
        self._prep_pending = False
        self._run_queued = False          # Run pressed while the data was being prepared
        self._accepted_targets: set[tuple[str, str]] = set()  # (file, target) "Use it"
        self._pending_choices: dict[str, str] = {}
        self._keep_run = False
        self._monitor: Monitor | None = None
        self._run_context: dict | None = None
        self._pending_incumbent = None
        self._live_figures: tuple[float, float] | None = None   # (error, bound)
        self._testing = False
        self._ticks = 0
        self._switch_note = ("", "")   # (why binarisation was switched, to what)
        self._closing = False
        self._message_box: QMessageBox | None = None
        self._export_dialog: ExportDialog | None = None
        self._run_numbers = 0

        self._redraw_timer = QTimer(self, singleShot=True, interval=LIVE_REDRAW_MS)
        self._redraw_timer.timeout.connect(self._draw_pending_incumbent)
        self._tick_timer = QTimer(self, interval=TICK_MS)
        self._tick_timer.timeout.connect(self._tick)
        self._prepare_timer = QTimer(self, singleShot=True, interval=PREPARE_DELAY_MS)
        self._prepare_timer.timeout.connect(self._start_prepare)

        self.columns = ColumnsModel(self)
        self.columns.changed.connect(self._options_changed)
        self.editor = TreeEditor(self._take_run_number, self)
        self.editor.edited.connect(self._edit_added)
        self.editor.undone.connect(self._edit_undone)
        self.editor.busy_changed.connect(lambda _: self._update_controls())
        self.editor.said.connect(self.set_status)
        self.editor.failed.connect(self.show_error)
        self.analysis = TreeAnalysis(self, TAB_DATA)
        self._build_actions()
        self._build_menus()
        self._build_central()
        self._build_status_bar()
        self._algorithm_changed(self.algorithm())
        self._update_controls()
        if warm_up:
            self.figures.set_warmup("compiling solvers…")
            QTimer.singleShot(0, self._start_warmup)   # once the window is on screen
        if path is not None:
            self.load_path(path)

    # ================================================================== layout
    def _build_actions(self) -> None:
        def action(text, slot, shortcut=None, tip=None) -> QAction:
            a = QAction(text, self)
            if shortcut is not None:
                a.setShortcut(QKeySequence(shortcut))
            if tip:
                a.setStatusTip(tip)
            a.triggered.connect(slot)
            return a

        self.open_action = action("&Open CSV…", self.open_file_dialog, QKeySequence.Open)
        self.open_session_action = action("Open &session…", self.open_session_dialog)
        self.save_session_action = action("&Save session…", self.save_session_dialog,
                                          QKeySequence.Save)
        self.export_action = action("&Export…", self.export_dialog_all, "Ctrl+E")
        self.export_image_action = action("Export &picture…", self.export_image_dialog,
                                          "Ctrl+Shift+E")
        self.report_action = action("Save &report…", self.report_dialog, None,
                                    "One HTML page of this run to read or mail: data, "
                                    "settings, tree, rules, figures and curve")
        self.export_actions: dict[str, QAction] = {}
        for kind in EXPORT_WRITERS:
            text, _ = EXPORT_KINDS.get(kind, (f"{kind}…", kind))
            self.export_actions[kind] = action(text, lambda _=False, k=kind:
                                               self.export_dialog(k))
        self.quit_action = action("&Quit", self.close, QKeySequence.Quit)
        self.fit_action = action("&Fit to window", lambda: self.view.fit(), "Ctrl+0")
        self.zoom_in_action = action("Zoom &in", lambda: self.view.zoom_by(1.25),
                                     QKeySequence.ZoomIn)
        self.zoom_out_action = action("Zoom &out", lambda: self.view.zoom_by(0.8),
                                      QKeySequence.ZoomOut)
        self.run_action = action("&Run", self.run, "Ctrl+R")
        self.stop_action = action("&Stop", self.stop, "Esc")
        self.predict_action = action("&Predict a file…", self.analysis.predict_dialog,
                                     tip="Predict the rows of another CSV with this model")
        self.row_form_action = action("&Test a row…", self.analysis.row_form, None,
                                      "Type one row's values and see its path")
        self.undo_action = action("&Undo edit", self.editor.undo, QKeySequence.Undo,
                                  "Undo the last edit of a tree by hand")
        self.redo_action = action("&Redo edit", self.editor.redo, QKeySequence.Redo,
                                  "Redo the edit just undone")
        self.about_action = action("&About Orchard", self._about)

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addAction(self.open_action)
        self.recent_menu = file_menu.addMenu("Open &recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self.sample_menu = file_menu.addMenu("Open s&ample")
        for path in sample_files():
            a = self.sample_menu.addAction(path.name)
            a.triggered.connect(lambda _=False, p=path: self.load_path(p))
        self.sample_menu.setEnabled(bool(sample_files()))
        file_menu.addSeparator()
        file_menu.addAction(self.open_session_action)
        file_menu.addAction(self.save_session_action)
        file_menu.addSeparator()
        file_menu.addAction(self.export_action)
        file_menu.addAction(self.export_image_action)
        file_menu.addAction(self.report_action)
        self.export_menu = file_menu.addMenu("Export rules and &code")
        for a in self.export_actions.values():
            self.export_menu.addAction(a)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        self.file_menu = file_menu
        edit_menu = bar.addMenu("&Edit")
        edit_menu.addAction(self.undo_action)
        edit_menu.addAction(self.redo_action)
        view_menu = bar.addMenu("&View")
        for a in (self.fit_action, self.zoom_in_action, self.zoom_out_action):
            view_menu.addAction(a)
        run_menu = bar.addMenu("&Run")
        run_menu.addAction(self.run_action)
        run_menu.addAction(self.stop_action)
        run_menu.addSeparator()
        run_menu.addAction(self.predict_action)
        run_menu.addAction(self.row_form_action)
        bar.addMenu("&Help").addAction(self.about_action)

    def _build_central(self) -> None:
        splitter = QSplitter(Qt.Horizontal, self)
        splitter.addWidget(self._build_panel())
        self.tabs = QTabWidget(self)
        self.data_view = DataView(self.columns, self)
        self.data_view.row_chosen.connect(self.analysis.show_row)
        self.tabs.addTab(self.data_view, "Data")
        self.tabs.addTab(self._build_tree_tab(), "Tree")
        self.results = ResultsPanel(self)
        self.results.runs_selected.connect(self._runs_selected)
        self.results.run_activated.connect(self._run_activated)
        self.results.cell_chosen.connect(self.analysis.show_cell)
        self.tabs.addTab(self.results, "Results")
        self.evaluation_views = EvaluationViews(self)
        self.evaluation_views.exported.connect(
            lambda path: self.set_status(f"Saved {path}."))
        self.tabs.addTab(self.evaluation_views, "Evaluation")
        self.tabs.currentChanged.connect(lambda _: self._refresh_evaluation())
        splitter.addWidget(self.tabs)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setCollapsible(1, False)
        splitter.setSizes([PANEL_WIDTH, 1000])
        self.setCentralWidget(splitter)

    def _build_panel(self) -> QWidget:
        # The settings scroll; Run / Stop and the hint under them stay in view below.
        side = QWidget(self)
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 0)
        side_layout.setSpacing(0)
        scroll = PanelScroll(side)
        self.panel_scroll = scroll
        panel = QWidget(scroll)
        layout = QVBoxLayout(panel)
        layout.setContentsMargins(10, 8, 8, 8)
        self.data_panel = DataPanel(sample_files(), panel)
        self.data_panel.open_requested.connect(self.open_file_dialog)
        self.data_panel.sample_requested.connect(self.load_path)
        self.data_panel.options_changed.connect(self._options_changed)
        self.data_panel.target_accepted.connect(self._target_accepted)
        layout.addWidget(self.data_panel)
        self.algo_panel = AlgorithmPanel(panel)
        self.algo_panel.algorithm_changed.connect(self._algorithm_changed)
        layout.addWidget(self.algo_panel)
        self.evaluation_box = EvaluationBox(panel)
        layout.addWidget(self.evaluation_box)

        layout.addStretch(1)
        scroll.setWidget(panel)
        side_layout.addWidget(scroll, 1)
        line = QFrame(side)
        line.setFrameShape(QFrame.HLine)
        line.setFrameShadow(QFrame.Sunken)
        side_layout.addWidget(line)

        self.run_bar = QWidget(side)
        bar_layout = QVBoxLayout(self.run_bar)
        # the buttons line up with the groups above (whose right edge is the scroll bar)
        bar_layout.setContentsMargins(
            10, 6, 8 + scroll.verticalScrollBar().sizeHint().width(), 8)
        bar_layout.setSpacing(4)
        buttons = QHBoxLayout()
        self.run_button = QPushButton("▶  Run", self.run_bar)
        self.run_button.setDefault(True)
        self.run_button.setToolTip("Train the chosen algorithm on the prepared data "
                                   "(Ctrl+R).")
        self.run_button.clicked.connect(self.run)
        self.stop_button = QPushButton("■  Stop", self.run_bar)
        self.stop_button.setToolTip("Stop the search and keep the best tree found (Esc).")
        self.stop_button.clicked.connect(self.stop)
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.stop_button)
        bar_layout.addLayout(buttons)
        self.run_hint = QLabel(self.run_bar)
        self.run_hint.setWordWrap(True)
        self.run_hint.setStyleSheet(f"color: {HINT_COLOUR};")
        bar_layout.addWidget(self.run_hint)
        side_layout.addWidget(self.run_bar)
        # Short names used throughout (and by tests).
        self.target_combo = self.data_panel.target_combo
        self.binarize_combo = self.data_panel.binarize_combo
        self.depth_spin = self.algo_panel.depth_spin
        # Guided thresholds come from the greedy tree of the chosen depth.
        self.depth_spin.valueChanged.connect(self._depth_changed)
        self.time_spin = self.algo_panel.time_spin
        self.algorithm_combo = self.algo_panel.combo
        self.open_button = self.data_panel.open_button
        self.side_panel = side
        return side

    def _build_tree_tab(self) -> QWidget:
        # Trees are wide, curves are wide: the chart sits under the tree, full width.
        splitter = QSplitter(Qt.Vertical, self)
        area = QWidget(splitter)
        layout = QVBoxLayout(area)
        layout.setContentsMargins(6, 6, 6, 6)
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
        layout.addLayout(top)
        self.view = TreeView(area)
        self.view.path_hovered.connect(self._path_hovered)
        self.view.node_clicked.connect(self.analysis.show_node)
        self.view.node_menu.connect(self.analysis.open_node_menu)
        self.tree_tools = TreeToolBar(self.view, area)
        layout.addWidget(self.tree_tools)
        frame = QFrame(area)
        frame.setFrameShape(QFrame.StyledPanel)
        frame_layout = QVBoxLayout(frame)
        frame_layout.setContentsMargins(1, 1, 1, 1)
        frame_layout.addWidget(self.view)
        layout.addWidget(frame, 1)
        self.path_label = QLabel("Hover over a node to highlight its path from the root.",
                                 area)
        self.path_label.setStyleSheet(f"color: {HINT_COLOUR};")
        self.path_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        layout.addWidget(self.path_label)
        self.chart = ProgressChart(splitter)
        splitter.addWidget(area)
        splitter.addWidget(self.chart)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 0)
        splitter.setCollapsible(0, False)
        splitter.setSizes([560, 230])
        return splitter

    def _build_status_bar(self) -> None:
        self.result_label = QLabel("Ready.", self)
        self.result_label.setContentsMargins(6, 0, 6, 0)
        self.result_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.statusBar().addWidget(self.result_label, 1)
        self.figures = RunFigures(self)
        self.statusBar().addPermanentWidget(self.figures)

    # ================================================================== state
    @property
    def loading(self) -> bool:
        return self._load_worker is not None

    @property
    def preparing(self) -> bool:
        return self._prep_worker is not None or self._prepare_timer.isActive()

    @property
    def closing(self) -> bool:
        """The window is closing: late answers from workers are dropped."""
        return self._closing

    @property
    def running(self) -> bool:
        """A run, or a subtree being re-solved: the tree on screen is not final."""
        return self._run_worker is not None or self.editor.busy

    def _update_controls(self) -> None:
        busy = self.loading or self.running
        self.data_panel.set_busy(self.loading or self.running)
        self.data_panel.set_table_loaded(self.raw is not None and not busy)
        self.data_view.columns_view.setEnabled(not busy)
        for a in (self.open_action, self.open_session_action):
            a.setEnabled(not busy)
        self.recent_menu.setEnabled(not busy)
        self.sample_menu.setEnabled(not busy and bool(sample_files()))
        self.algo_panel.setEnabled(not self.running)
        self.predict_action.setEnabled(self.tree is not None and not self.running)
        self.row_form_action.setEnabled(is_model(self.tree) and not self.running)
        self.undo_action.setEnabled(self.editor.can_undo and not self.running)
        self.redo_action.setEnabled(self.editor.can_redo and not self.running)
        self.evaluation_box.setEnabled(not self.running)
        # While an option change is being prepared, Run is taken and starts once the
        # data is ready (a depth change re-prepares guided thresholds).
        can_run = not busy and (self.dataset is not None if not self.preparing
                                else self.raw is not None) and not self._run_queued
        # Keyboard focus passes between Run and Stop (side by side) rather than to the
        # next control, which the side panel would scroll to.
        if self.running and self.run_button.hasFocus():
            self.stop_button.setEnabled(True)
            self.stop_button.setFocus()
        elif can_run and self.stop_button.hasFocus():
            self.run_button.setEnabled(True)
            self.run_button.setFocus()
        self.run_button.setEnabled(can_run)
        self.run_action.setEnabled(can_run)
        stoppable = (self.running or self.loading or self._prep_worker is not None
                     or self._run_queued)
        self.stop_button.setEnabled(stoppable)
        self.results.set_running(self.running)
        self.stop_action.setEnabled(stoppable)
        has_tree = is_model(self.tree)
        for a in (self.export_action, self.export_image_action, *self.export_actions.values()):
            a.setEnabled(has_tree)
        self.report_action.setEnabled(self.current_run is not None and not self.running)
        self.save_session_action.setEnabled(self.path is not None or bool(self.results.runs))
        if self.editor.busy:
            hint = "Re-solving a subtree… Stop keeps the tree as it is."
        elif self.running:
            hint = "Running… Stop keeps the best tree found so far."
        elif self.raw is None:
            hint = "Open a CSV file to start."
        elif self.preparing:
            hint = "Preparing the data…"
        elif self.dataset is None:
            hint = "Fix the problem shown under Data to run."
        else:
            hint = ""
        self.run_hint.setText(hint)
        self.run_hint.setVisible(bool(hint))

    def set_status(self, text: str) -> None:
        self.result_label.setText(text)
        self.result_label.setToolTip(text)   # the whole sentence when the bar clips it

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

    def _about(self) -> None:
        QMessageBox.about(self, "About Orchard",
                          "<b>Orchard</b><br>Optimal decision trees from your own CSV files,"
                          " live.<br>Algorithms: " + ", ".join(
                              html.escape(get_solver(n).title)
                              for n in self.algo_panel_names()))

    def algo_panel_names(self) -> list[str]:
        combo = self.algorithm_combo
        return [combo.itemData(i) for i in range(combo.count())]

    # ================================================================ warm-up
    def _start_warmup(self) -> None:
        if self._closing or self._warmup_worker is not None:
            return
        worker = Worker(warm_up_solvers, name="orchard-warmup",
                        should_stop=lambda: self._closing,
                        on_solver=lambda name, seconds: worker.report((name, seconds)))
        worker.partial.connect(lambda p: self.figures.set_warmup(
            f"compiling solvers… {p[0]} ready"))
        worker.finished.connect(self._warmup_done)
        worker.errored.connect(lambda message: self._warmup_done(None, message))
        self._warmup_worker = worker
        worker.start()

    def _warmup_done(self, report, message: str = "") -> None:
        self._warmup_worker = None
        self.warmup_report = report
        if self._closing:
            return
        if report is None or report.errors:
            problems = message or "; ".join(f"{k}: {v}" for k, v in report.errors.items())
            print(f"Orchard: solver warm-up failed: {problems}", file=sys.stderr)
            self.figures.set_warmup("solver warm-up incomplete")
            self.figures.labels["warmup"].setToolTip(problems)
        else:
            self.figures.set_warmup(f"solvers ready ({report.total:.1f} s)")
        settle_heap()
        self.warmed_up.emit(report)

    # ========================================================= editing by hand
    def _take_run_number(self) -> int:
        self._run_numbers += 1
        return self._run_numbers

    def _edit_added(self, record: RunRecord) -> None:
        self.results.add_run(record)
        self.show_run(record, switch_tab=False)
        self._update_controls()

    def _edit_undone(self, record: RunRecord, parent: RunRecord) -> None:
        self.results.remove_run(record.number)
        self.show_run(parent, switch_tab=False)
        self._update_controls()

    def holds_data_of(self, run: RunRecord) -> bool:
        """The file loaded now is the one `run` trained on."""
        return self.raw is not None and self.path is not None \
            and run.data_path == str(self.path.resolve())

    # ============================================================ loading data
    def open_file_dialog(self) -> None:
        start = str(self.path.parent) if self.path else user_settings.last_folder("data")
        path, _ = QFileDialog.getOpenFileName(
            self, "Open a data file", start,
            "Data files (*.csv *.tsv *.txt *.data *.dat);;Orchard sessions "
            f"(*{SESSION_SUFFIX});;All files (*)")
        if path:
            self.load_path(path)

    def _fill_recent_menu(self) -> None:
        menu = self.recent_menu
        menu.clear()
        files = user_settings.recent_files()
        for path in files:
            a = menu.addAction(Path(path).name)
            a.setToolTip(path)
            a.setStatusTip(path)
            a.triggered.connect(lambda _=False, p=path: self.load_path(p))
        if not files:
            menu.addAction("(no recent files)").setEnabled(False)
        menu.addSeparator()
        menu.addAction("Clear the list", user_settings.clear_recent_files)

    def dragEnterEvent(self, event) -> None:
        if any(url.isLocalFile() for url in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        files = [url.toLocalFile() for url in event.mimeData().urls() if url.isLocalFile()]
        if files:
            event.acceptProposedAction()
            self.load_path(files[0])

    def load_path(self, path: str | Path, settings: dict | None = None) -> None:
        """Read and prepare `path` in the background (`prepared` follows).

        `settings` (from a session) fixes target, column uses and the other options;
        otherwise the file gets automatic choices and the panel's missing-value policy,
        binarisation and cleaning.
        """
        if self.loading or self.running:
            self.show_error("Please wait until the current task has finished "
                            "(or stop the run) before opening another file.")
            return
        path = Path(path)
        if is_session_file(path) and settings is None:
            self.open_session(path)
            return
        if settings is not None:
            options = self._options_from_settings(settings)
            self._pending_choices = dict(settings.get("columns", {}))
        else:
            if self._binary_switch_needed():
                self._switch_to_binary(notify=False)
            options = PrepOptions(missing=self.data_panel.missing(),
                                  binarize=self.data_panel.binarize(),
                                  depth=self.depth_spin.value(),
                                  **self.data_panel.row_options())
            self._pending_choices = {}
        self.set_status(f"Reading {path.name}…")
        self.data_panel.show_progress(f"Reading {path.name}…", 0.02)
        monitor = Monitor()
        worker = Worker(read_and_prepare, path, options, name="orchard-read",
                        report_arg="report", monitor=monitor, on_cancel=monitor.cancel)
        monitor.on_progress = StageRelay(worker.report)
        worker.partial.connect(self._load_progress)
        worker.finished.connect(self._loaded)
        worker.errored.connect(self._load_failed)
        worker.cancelled.connect(self._load_failed)
        self._load_worker = worker
        self._prepare_timer.stop()
        self._update_controls()
        worker.start()

    def _load_progress(self, payload) -> None:
        if self.sender() is not self._load_worker or self._closing:
            return
        if payload[0] == "stage":
            _, text, fraction = payload
            self.data_panel.show_progress(text, fraction)
            self.set_status(text)

    def _loaded(self, prep: Prepared) -> None:
        if self.sender() is not self._load_worker or self._closing:
            return
        self._load_worker = None
        self.raw, self.infos, self.path = prep.raw, prep.infos, prep.path
        self.setWindowTitle(f"Orchard — {prep.path.name}")
        user_settings.add_recent_file(prep.path)
        user_settings.remember_folder("data", prep.path)
        columns = [str(c) for c in prep.raw.frame.columns]
        self.columns.set_table(prep.infos)
        self.columns.set_choices(self._pending_choices)
        self._pending_choices = {}
        self.data_panel.set_columns(columns, prep.target)
        with self.data_panel.quietly():
            self.data_panel.set_missing(prep.options.missing)
            self.data_panel.set_binarize(prep.options.binarize, notify=False)
            self.data_panel.set_row_options({
                "drop_inconsistent": prep.options.drop_inconsistent,
                "merge_duplicates": prep.options.merge_duplicates,
                "remove_redundant": prep.options.remove_redundant,
                "class_weight": prep.options.class_weight})
        self.data_view.show_table(prep.path.name, prep.raw, prep.infos)
        self.data_panel.show_file(f"<b>{html.escape(prep.path.name)}</b><br>"
                                  f"{prep.n_rows:,} rows × {len(columns)} columns "
                                  f"(read in {prep.seconds:.1f} s)", str(prep.path))
        if self._keep_run:             # a session: its last run stays on display
            self._keep_run = False
        else:
            self.result, self.tree, self.current_run = None, None, None
            self.results.clear_selection()
            self.view.show_message("Press Run to grow a tree.")
            self.chart.clear_all()
            self.figures.clear()
            self.results.show_run(None)
        self.tabs.setCurrentIndex(TAB_DATA)
        self._apply_prepared(prep)
        self.data_view.fit_preview_columns()
        if self._binary_switch_needed():  # a session chose "none" for a binary-only solver
            self._switch_to_binary()
        settle_heap()

    def _load_failed(self, message: str = "") -> None:
        if self.sender() is not self._load_worker or self._closing:
            return
        self._load_worker = None
        self._keep_run = False
        self._pending_choices = {}
        self.data_panel.set_busy(False)
        self._update_controls()
        if message:
            self.show_error(message)
        else:
            self.set_status("Stopped reading the file." + (
                "" if self.raw is None else " The table loaded before is still in use."))

    # ========================================================== preparation
    def prep_options(self) -> PrepOptions:
        """The options chosen in the panel and the column table."""
        return PrepOptions(target=self.data_panel.target(), ignore=self.columns.ignore(),
                           kinds=self.columns.kinds(), missing=self.data_panel.missing(),
                           binarize=self.data_panel.binarize(),
                           depth=self.depth_spin.value(), **self.data_panel.row_options())

    def data_settings(self) -> dict:
        options = self.prep_options()
        return {"file": self.path.name if self.path else None,
                "target": options.target, "missing": options.missing,
                "binarize": options.binarize, "columns": self.columns.choices(),
                **self.data_panel.row_options()}

    def _options_from_settings(self, settings: dict) -> PrepOptions:
        choices = settings.get("columns", {})
        kinds = {n: c for n, c in choices.items() if c in ("continuous", "categorical")}
        return PrepOptions(
            target=settings.get("target"),
            ignore=tuple(n for n, c in choices.items() if c == "ignore"),
            kinds={n: ColumnKind.NUMERIC if c == "continuous" else ColumnKind.CATEGORICAL
                   for n, c in kinds.items()},
            missing=settings.get("missing", "route"),
            binarize=settings.get("binarize", "none"),
            drop_inconsistent=bool(settings.get("drop_inconsistent")),
            merge_duplicates=bool(settings.get("merge_duplicates")),
            remove_redundant=bool(settings.get("remove_redundant")),
            class_weight=settings.get("class_weight") or None,
            depth=self.depth_spin.value())

    def _depth_changed(self) -> None:
        if self.data_panel.binarize().startswith("guided"):
            self._options_changed()

    def _options_changed(self) -> None:
        """An option changed: prepare the table again shortly (in the background)."""
        if self.raw is None or self.loading or self._closing:
            return
        self.columns.set_target(self.data_panel.target())
        self.dataset = None   # stale until prepared again
        self.set_status("Preparing the data…")
        self.data_panel.show_progress("Preparing the data…", 0.3)
        self._prepare_timer.start()
        self._update_controls()

    def _start_prepare(self) -> None:
        if self.raw is None or self._closing:
            return
        if self._prep_worker is not None:
            self._prep_pending = True   # its result is stale: stop it, then start again
            self._prep_worker.cancel()
            return
        self._prep_pending = False
        monitor = Monitor()
        worker = Worker(prepare_table, self.raw, self.infos, self.prep_options(), path=self.path,
                        name="orchard-prepare", monitor=monitor, on_cancel=monitor.cancel,
                        report_arg="report")
        monitor.on_progress = StageRelay(worker.report)
        worker.partial.connect(self._prepare_progress)
        worker.finished.connect(self._prepared_again)
        worker.errored.connect(self._prepare_failed)
        worker.cancelled.connect(self._prepare_failed)
        self._prep_worker = worker
        self._update_controls()
        worker.start()

    def _prepared_again(self, prep: Prepared) -> None:
        if self.sender() is not self._prep_worker or self._closing:
            return
        self._prep_worker = None
        if self._prep_pending or self._prepare_timer.isActive():
            self._prep_pending = False
            self._start_prepare()   # options changed meanwhile: this result is stale
            return
        self._apply_prepared(prep)

    def _prepare_progress(self, payload) -> None:
        if self.sender() is not self._prep_worker or self._closing:
            return
        if payload[0] == "stage":
            _, text, fraction = payload
            self.data_panel.show_progress(text, fraction)
            self.set_status(text)

    def _prepare_failed(self, message: str = "") -> None:
        if self.sender() is not self._prep_worker or self._closing:
            return
        self._prep_worker = None
        if not message and self._prep_pending:   # stopped for newer options
            self._prep_pending = False
            self._start_prepare()
            return
        self._run_queued = False
        self.data_panel.set_busy(False)
        self._update_controls()
        if message:
            self.show_error(message)
        else:
            self.set_status("Stopped preparing the data: change an option to prepare "
                            "it again.")

    def _apply_prepared(self, prep: Prepared) -> None:
        self.prep = prep
        self.dataset = prep.dataset
        self.data_panel.set_busy(self.loading or self.running)
        target = prep.target
        self.columns.set_target(target)
        if self.data_view.preview is not None:
            self.data_view.preview.set_roles(target, self.columns.roles())
        self._describe_preparation()
        self._update_controls()
        self.prepared.emit(prep)
        self.data_ready.emit(prep.dataset)
        if self._run_queued and not self.preparing:
            self._run_queued = False
            if self.dataset is not None:
                self.run()
            else:
                self._update_controls()

    def _describe_preparation(self) -> None:
        """Features, notes and problems for the prepared data and the chosen algorithm."""
        prep = self.prep
        if prep is None:
            return
        data = prep.dataset
        notes, problems = [], []
        note, spec = self._switch_note
        if note and spec == self.data_panel.binarize():
            notes.append(note)
        if data is None:
            features = "<b>No training set</b> with these options."
            problems.append(prep.problem or "These options give no usable data.")
            self.summary_label.setText(f"<b>{html.escape(self.path.name)}</b> — "
                                       "not usable with these options.")
        else:
            continuous = sum(1 for f in data.features if not f.binary)
            kind = ("all 0/1" if continuous == 0 else
                    f"{continuous} continuous, {data.n_features - continuous} 0/1")
            features = (f"<b>{data.n_features:,} features</b> ({kind}) · "
                        f"{data.n_rows:,} rows · {data.n_classes} classes")
            notes += data.report.lines()
            algorithm = self.algorithm()
            if prep.inconsistent:
                rows = prep.inconsistent
                if is_sat(algorithm):
                    problems.append(
                        f"{rows:,} rows have the same features as rows of another class, "
                        f"so no tree classifies every row correctly and "
                        f"{get_solver(algorithm).title} will find none. Tick “Drop rows "
                        "contradicting identical rows” or choose another algorithm.")
                else:
                    notes.append(f"{rows:,} rows have the same features as rows of another "
                                 f"class: at least {rows:,} training errors are unavoidable.")
            if get_solver(algorithm).needs == "binary" and not data.is_binary:
                problems.append(f"{get_solver(algorithm).title} needs 0/1 features: choose "
                                "quantile thresholds or every midpoint under Binarise.")
            self.summary_label.setText(
                f"<b>{html.escape(self.path.name)}</b> — {data.n_rows:,} rows, "
                f"{data.n_classes} classes, {data.n_features:,} features "
                f"(target '{html.escape(data.prep.target)}')")
            self.summary_label.setToolTip("Classes: " + ", ".join(map(str, data.class_names)))
        self.data_panel.show_preparation(features, notes, problems)
        doubt = data.report.target_doubt if data is not None else ""
        if doubt and self._target_key() not in self._accepted_targets:
            self.data_panel.ask_about_target(doubt)
        else:
            self.data_panel.clear_target_question()
        if data is None:
            self.set_status(problems[0])
        elif self.data_panel.target_question_text() and not self.running:
            self.set_status(f"{doubt} Use it, or choose another target under Data.")
        elif not self.running:
            self.set_status(f"Data ready ({data.n_features:,} features): choose an "
                            "algorithm and press Run.")

    def _target_key(self) -> tuple[str, str]:
        data = self.prep.dataset if self.prep is not None else None
        return str(self.path), data.prep.target if data is not None else ""

    def _target_accepted(self) -> None:
        """The user answered "Use it": this file's target is the class, asked no more."""
        if self.prep is None or self.prep.dataset is None:
            return
        self._accepted_targets.add(self._target_key())
        self._describe_preparation()

    # ================================================================ training
    def algorithm(self) -> str:
        return self.algo_panel.algorithm()

    def set_algorithm(self, name: str) -> None:
        self.algo_panel.set_algorithm(name)

    def params(self) -> dict:
        return self.algo_panel.params()

    def time_limit(self) -> float | None:
        return self.algo_panel.time_limit()

    def _binary_switch_needed(self) -> bool:
        """A 0/1 solver on continuous data, or a binarisation Orchard chose for another
        solver that this one would choose differently (SAT solvers want every midpoint)."""
        if get_solver(self.algorithm()).needs != "binary":
            return False
        current = self.data_panel.binarize()
        automatic = self._switch_note[1]
        return current == "none" or (
            current == automatic and current != default_binarization(self.algorithm()))

    def _switch_to_binary(self, notify: bool = True) -> None:
        """Give a solver that needs 0/1 features its default binarisation, and say so."""
        spec = default_binarization(self.algorithm())
        title = get_solver(self.algorithm()).title
        how = ("a threshold at every midpoint" if spec == "midpoints"
               else f"{spec.replace('quantile:', '')} quantile bins")
        note = f"{title} needs 0/1 features, so binarisation was switched to {how}."
        self._switch_note = (note, spec)
        self.data_panel.set_binarize(spec, notify=notify)   # prepares again if notified
        if notify:
            self.set_status(note)

    def _algorithm_changed(self, name: str) -> None:
        if not hasattr(self, "data_panel"):
            return
        if self._binary_switch_needed():
            self._switch_to_binary(notify=self.raw is not None and not self.loading)
        self._describe_preparation()
        self._update_controls()

    def run(self) -> None:
        """Train the chosen algorithm on the prepared data in the background."""
        if self.loading or self.running or self.raw is None:
            return
        if self.preparing:
            self._run_queued = True
            self.set_status("Preparing the data with the new options; the run starts as "
                            "soon as it is ready…")
            self._update_controls()
            return
        if self.dataset is None:
            return
        if self.data_panel.target_question_text():   # running answers "Use it"
            self._accepted_targets.add(self._target_key())
            self.data_panel.clear_target_question()
        algorithm, data, params = self.algorithm(), self.dataset, self.params()
        time_limit = self.time_limit()
        plan = self.evaluation_box.plan()
        try:
            get_solver(algorithm).resolve(params)
            validation = (CrossValidation(self.raw, self.prep.options, algorithm, params,
                                          plan, time_limit) if plan is not None else None)
        except Exception as exc:  # noqa: BLE001 - a parameter problem, shown to the user
            self.show_error(error_message(exc))
            return
        monitor = Monitor(time_limit)

        def cancel() -> None:
            monitor.cancel()
            if validation is not None:
                validation.cancel()

        worker = Worker(run_task, data, algorithm, params, monitor, validation,
                        on_cancel=cancel, name="orchard-train", report_arg="report")
        monitor.on_incumbent = lambda tree, t, error, bound: worker.report(
            ("incumbent", tree, float(t), float(error), float(bound)))
        monitor.on_progress = StageRelay(worker.report)
        worker.partial.connect(self._run_progress)
        worker.finished.connect(self._run_finished)
        worker.errored.connect(self._run_failed)
        worker.cancelled.connect(self._run_failed)
        self._monitor, self._run_worker = monitor, worker
        # The run's number is the next one; a failed run spends it too.
        number = self._run_numbers + 1
        title = get_solver(algorithm).title
        name = self.path.name if self.path else ""
        label = f"#{number} {title}" + (f" on {name}" if name else "")
        self._run_context = {"data": data, "algorithm": algorithm, "params": dict(params),
                             "settings": self.data_settings(), "time_limit": time_limit,
                             "number": number, "label": label,
                             "data_path": str(self.path.resolve()) if self.path else None}
        self._pending_incumbent = None
        self._live_figures = None
        self._testing = False
        # Nothing of the previous run stays on screen as if it were this one's: no
        # tree, curve, figures or selected history row until this run has its own.
        previous = self.current_run
        self.current_run, self.tree, self.result = None, None, None
        self._refresh_evaluation()
        self.results.clear_selection()
        self.results.show_message(f"Run {label} is running: its figures appear here "
                                  "when it ends.")
        self.view.show_message(  # the view follows the new trees until the user zooms
            f"Run {label}, depth {params.get('depth', '—')}: waiting for its first tree…"
            + (f"\n(Run #{previous.number} stays in the history of the Results tab.)"
               if previous is not None else ""))
        self.chart.start_run(f"{label}, depth {params.get('depth', '—')}")
        self.figures.set_figures("running", 0.0, None, None, None)
        self.set_status(f"Running {label}…")
        self.tabs.setCurrentIndex(TAB_TREE)
        self._update_controls()
        worker.start()
        self._tick_timer.start()

    def stop(self) -> None:
        """Ask the running solver to stop (it returns the best tree found so far), or
        stop reading or preparing a file (between two chunks of its work)."""
        if self._run_queued:
            self._run_queued = False
            self.set_status("The run waiting for the data was called off.")
            self._update_controls()
        if self._run_worker is not None:
            self.set_status("Stopping…")
            self._run_worker.cancel()
        self.editor.stop()
        for worker in (self._load_worker, self._prep_worker):
            if worker is not None:
                self.set_status("Stopping…")
                worker.cancel()

    def _run_progress(self, payload) -> None:
        if self.sender() is not self._run_worker or self._closing:
            return
        kind = payload[0]
        if kind == "incumbent":
            _, tree, t, error, bound = payload
            if self._live_figures is None:
                settle_heap()   # whatever the solver set up (numba included) stays put
            self._pending_incumbent = tree
            self._live_figures = (error, bound)
            self.figures.set_figures("running", t, error, bound, False)
            self.set_status(f"Running {self._run_context['label']}… best so far: "
                            f"error {format_count(error)}"
                            f"{f', lower bound {format_count(bound)}' if bound > 0 else ''}"
                            f" after {t:.1f} s")
            if not self._redraw_timer.isActive():
                self._redraw_timer.start()
        elif kind == "stage" and self._live_figures is None:
            # before the first tree: the solver's set-up, e.g. grouping 2 million rows
            self.set_status(f"Running {self._run_context['label']}… {payload[1]}")
        elif kind == "phase":
            self._testing = True
            self._tick()   # the curve's final state before testing starts
            self.figures.labels["status"].setText("testing")
            self.set_status(payload[1])
        elif kind == "fold":
            _, fold, n = payload
            self.set_status(f"Testing: split {fold.fold + 1} of {n} done, test accuracy "
                            f"{100 * fold.test_accuracy:.1f}%")

    def _tick(self) -> None:
        monitor = self._monitor
        if monitor is None or self._closing:
            return
        if self._testing:
            return
        elapsed = monitor.elapsed()
        self.figures.set_elapsed(elapsed)
        self._ticks += 1
        count = len(monitor.incumbents)
        if count != len(self.chart.points) or self._ticks % CURVE_TICKS == 0:
            self.chart.set_points(list(monitor.incumbents), elapsed)

    def _draw_pending_incumbent(self) -> None:
        if self._pending_incumbent is None or self._closing:
            return
        tree, self._pending_incumbent = self._pending_incumbent, None
        self._show_tree(tree)

    def _show_tree(self, tree) -> None:
        self.tree = tree
        if is_model(tree):
            self.view.show_tree(tree)
        else:
            self.view.show_message("This kind of model cannot be drawn yet.")
        self._update_controls()

    def _run_finished(self, outcome) -> None:
        if self.sender() is not self._run_worker or self._closing:
            return
        context = self._run_context
        self._end_run()
        result = outcome.result
        self._run_numbers = max(self._run_numbers, context["number"])
        record = RunRecord.from_outcome(context["number"], outcome, context["data"],
                                        context["algorithm"], context["params"],
                                        context["settings"], context["time_limit"],
                                        data_path=context["data_path"])
        self.result = result
        self.results.add_run(record)
        self.show_run(record, switch_tab=False)   # its row selected, the status names it
        self._update_controls()
        settle_heap()
        self.run_ended.emit(result)

    def _run_failed(self, message: str = "") -> None:
        """A run that ended without a result: its number is spent (the next run never
        takes it), and no tree of it stays on screen as if it were an answer."""
        if self.sender() is not self._run_worker or self._closing:
            return
        label, number = self._run_context["label"], self._run_context["number"]
        self._run_numbers = max(self._run_numbers, number)
        self._end_run()
        self.figures.labels["status"].setText("failed" if message else "stopped")
        ended = "failed" if message else "was stopped"
        if message or self.tree is None:   # a failed run's live trees are no answer
            self.tree = None
            self.view.show_message(no_tree_text(label, "error" if message else "stopped"))
            self.results.show_message(f"Run {label} {ended}" + (
                f": {message}" if message else " before its first tree."))
        self._update_controls()
        if message:
            self.show_error(message)   # the engine's sentence; the view names the run
        else:
            self.set_status(f"Run {label} {ended}.")
        self.run_ended.emit(None)

    def _end_run(self) -> None:
        self._tick_timer.stop()
        self._redraw_timer.stop()
        self._pending_incumbent = None
        self._run_worker, self._monitor, self._run_context = None, None, None
        self._testing = False

    @staticmethod
    def _result_text(run: RunRecord) -> str:
        """One line naming the run ("#3 Blossom on iris.csv: ...") and its figures."""
        if not is_model(run.tree):
            return f"{run.label}: {run.status_text}, no tree · {run.time_s:.2f} s"
        parts = [(f"{run.label}: training error {format_count(run.train_error)} of "
                  f"{format_count(run.total_weight)}"),
                 f"accuracy {100 * run.train_accuracy:.1f}%"]
        if run.evaluation is not None:
            parts.append(run.evaluation.summary())
        if run.lower_bound > 0 and not run.optimal:
            parts.append(f"lower bound {format_count(run.lower_bound)}")
        parts.append(run.status_text)
        parts.append(f"{run.time_s:.2f} s")
        if is_model(run.tree):
            parts.append(size_text(run.tree))
        if run.message:   # a non-answer, explained with what to try
            parts.append(run.message)
        return " · ".join(parts)

    # ================================================================= results
    def show_run(self, run: RunRecord, switch_tab: bool = True) -> None:
        """Make `run` the current one everywhere: its history row (alone selected),
        tree, curve, figures, status line (and exports)."""
        self.results.select_runs([run.number], notify=False)
        self._present_run(run)
        searched = (f", depth {run.params.get('depth', '—')}" if run.edited_from is None
                    else " (edited by hand: no search curve)")
        self.chart.show_result(run.label + searched, run.incumbents, run.time_s,
                               run.train_error, run.lower_bound)
        if switch_tab:
            self.tabs.setCurrentIndex(TAB_TREE)

    def _present_run(self, run: RunRecord) -> None:
        """`run`'s tree (or why it has none), Results summary, figures and status line."""
        self.current_run = run
        self.results.show_run(run)
        if is_model(run.tree):
            self._show_tree(run.tree)
        else:
            self.tree = None
            self.view.show_message(no_tree_text(run.label, run.status))
            self._update_controls()
        self.figures.set_figures(run.status_text, run.time_s, run.train_error,
                                 run.lower_bound, run.optimal)
        self.set_status(self._result_text(run))
        self._refresh_evaluation()

    def _refresh_evaluation(self) -> None:
        """The Evaluation tab scores the run on screen on its training rows, when the
        tab is open (a pass over every row) and the loaded data are the run's."""
        if self.tabs.currentWidget() is not self.evaluation_views:
            return
        run = self.current_run
        if run is None or not is_model(run.tree):
            self.evaluation_views.clear("No finished run with a model to evaluate: press "
                                        "Run, or choose a run in the Results tab.")
        elif self.dataset is None or not self.holds_data_of(run):
            self.evaluation_views.clear(
                f"Run #{run.number} trained on {run.dataset_name or 'another file'}: open "
                "it again to evaluate its model on its training rows.")
        else:
            self.evaluation_views.show_dataset(run.tree, self.dataset)

    def _run_activated(self, run: RunRecord) -> None:
        if not self.running:   # the live run keeps the tree until it ends
            self.show_run(run)

    def _runs_selected(self, runs: list) -> None:
        """Rows chosen in the history.  One: that run everywhere.  Several: their
        curves overlaid, and the tree, figures and status line of the row clicked
        last (named in the chart's title and the status line).  During a run the
        history cannot be selected (`ResultsPanel.set_running`)."""
        if self.running:
            return
        if len(runs) == 1:
            self.show_run(runs[0], switch_tab=False)
            return
        if not runs:   # nothing selected: the current run's own curve again
            if self.current_run is not None:
                self.show_run(self.current_run, switch_tab=False)
            return
        numbers = [r.number for r in runs]
        focused = self.results.focused_run()
        current = self.current_run
        shown = (focused if focused is not None and focused.number in numbers else
                 current if current is not None and current.number in numbers else runs[-1])
        self._present_run(shown)
        self.chart.show_runs(runs, shown)
        self.set_status(f"{self._result_text(shown)} · comparing the curves of "
                        + ", ".join(f"#{n}" for n in numbers))

    def _path_hovered(self, text: str) -> None:
        self.path_label.setText(f"Path: {text}" if text else
                                "Hover over a node to highlight its path from the root.")

    # ================================================================= exports
    def _export_folder(self) -> str:
        folder = user_settings.last_folder("export")
        if folder and Path(folder).is_dir():
            return folder
        if self.path is not None and self.path.resolve().parent != SAMPLES_DIR:
            return str(self.path.parent)
        return str(Path.home())   # not into the installed samples folder

    def _base_name(self) -> str:
        return self.path.stem if self.path else "tree"

    def export_dialog_all(self) -> ExportDialog | None:
        """The Export dialog (formats, previews, one folder); returned for tests."""
        if self.tree is None:
            return None
        dialog = ExportDialog(self.tree, self._export_folder(), self._base_name(),
                              self.show_error, self)
        dialog.exported.connect(self._exported)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        self._export_dialog = dialog
        dialog.open()
        return dialog

    def _exported(self, paths: list) -> None:
        if paths:
            user_settings.remember_folder("export", paths[0])
            self.set_status(f"Exported {len(paths)} file(s) to {paths[0].parent}: "
                            + ", ".join(p.name for p in paths))

    def export_image_dialog(self) -> None:
        if self.tree is None:
            return
        filters = ";;".join(f"{text} (*{ext})" for ext, text in IMAGE_FORMATS.items())
        path, chosen = QFileDialog.getSaveFileName(self, "Export the tree as a picture",
                                                   self._suggested_name("png"), filters)
        if not path:
            return
        if Path(path).suffix.lower() not in IMAGE_FORMATS:
            ext = next((e for e, t in IMAGE_FORMATS.items() if chosen.startswith(t)), ".png")
            path += ext
        self.export_image(path)

    def export_image(self, path: str | Path) -> bool:
        return self._save(lambda: save_tree_image(self.tree, path,
                                                  **self.view.display_options()),
                          f"Saved the picture of the tree to {path}.")

    def report_dialog(self) -> None:
        if self.current_run is None:
            return
        path, _ = QFileDialog.getSaveFileName(
            self, "Save a report of this run", self._suggested_name("html").replace(
                "-tree.html", f"-run{self.current_run.number}.html"),
            "HTML page (*.html);;All files (*)")
        if path:
            self.save_report(path)

    def save_report(self, path: str | Path) -> bool:
        """Write the HTML report of the run on screen to `path`."""
        run = self.current_run
        return run is not None and self._save(lambda: save_report(run, path),
                                              f"Saved the report of run #{run.number} to "
                                              f"{path}.")

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
        folder = Path(self._export_folder())
        return str(folder / f"{self._base_name()}-tree.{ext}")

    # ================================================================ sessions
    def session(self) -> Session:
        return Session(str(self.path.resolve()) if self.path else None,
                       self.data_settings() if self.raw is not None else {},
                       self.algo_panel.settings(), self.evaluation_box.settings(),
                       self.results.runs)

    def save_session(self, path: str | Path) -> bool:
        path = Path(path)
        return self._save(lambda: save_session(self.session(), path),
                          f"Saved the session to {path}.")

    def save_session_dialog(self) -> None:
        start = self.path.with_name(self.path.stem + SESSION_SUFFIX) if self.path else \
            Path(user_settings.last_folder("session") or Path.home()) / f"session{SESSION_SUFFIX}"
        path, _ = QFileDialog.getSaveFileName(self, "Save the session", str(start),
                                              f"Orchard sessions (*{SESSION_SUFFIX})")
        if path:
            if not path.endswith(".json"):
                path += SESSION_SUFFIX
            if self.save_session(path):
                user_settings.remember_folder("session", path)

    def open_session_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a session",
                                              user_settings.last_folder("session"),
                                              f"Orchard sessions (*{SESSION_SUFFIX} *.json)")
        if path:
            self.open_session(path)

    def open_session(self, path: str | Path) -> bool:
        """Restore settings and runs, and read the session's data file again."""
        if self.loading or self.running:
            self.show_error("Please wait until the current task has finished "
                            "(or stop the run) before opening a session.")
            return False
        try:
            session = load_session(path)
        except Exception as exc:  # noqa: BLE001 - shown to the user
            self.show_error(error_message(exc))
            return False
        self.algo_panel.apply_settings(session.algorithm_settings)
        self.evaluation_box.apply_settings(session.evaluation)
        self.results.set_runs(session.runs)
        self.editor.forget()
        self._run_numbers = max([r.number for r in session.runs], default=0)
        if session.runs:
            self.show_run(session.runs[-1], switch_tab=False)
        data = session.data_file(path)
        if data is not None:
            self._keep_run = bool(session.runs)
            self.load_path(data, settings=session.data_settings)
        elif session.data_path:
            self.show_error(f"The session's data file '{session.data_path}' no longer "
                            "exists; its runs are shown but cannot be run again.")
        self.set_status(f"Opened the session {Path(path).name} "
                        f"({len(session.runs)} runs).")
        self._update_controls()
        return True

    # ================================================================ closing
    def closeEvent(self, event: QCloseEvent) -> None:
        """Stop a run and wait for background work, so no thread outlives the window."""
        self._closing = True
        self.hide()
        for timer in (self._redraw_timer, self._tick_timer, self._prepare_timer):
            timer.stop()
        workers = [w for w in (self._run_worker, self._load_worker, self._prep_worker,
                               self._warmup_worker) if w is not None]
        for worker in workers:
            worker.cancel()
        for worker in workers:
            worker.wait()
        self._run_worker = self._load_worker = self._prep_worker = None
        self._warmup_worker = None
        super().closeEvent(event)


__all__ = ["EXPORT_WRITERS", "MainWindow", "Status", "status_text"]
