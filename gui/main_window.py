"""Orchard's main window: open a table, choose how it becomes features, pick an
algorithm, watch the tree improve, compare runs, export.

This module only assembles: a side panel (`gui.side_panel`: the draft's editors
and Run / Stop) beside four tabs, Data (column settings and the raw preview), Tree
(the tree and its anytime curve), Results (figures, confusion matrices, history)
and Evaluation, over one application state (`gui.app_state.AppState`: the draft,
the runs, the selected run).  The work lives in controllers over plain functions:
`DataController` reads and prepares the draft, `RunController` runs it,
`ValidationController` then estimates its accuracy on new rows, `FileActions` exports and keeps sessions, `TreeAnalysis` and `TreeEditor` answer
clicks on the tree.  Every view renders the selected run from what that run owns
(its file, settings, rows, model, figures and curve), and says which run it is.

Everything slow runs in `Worker` threads; closing the window stops the work and
waits for it, so no thread outlives the window.
"""

from __future__ import annotations

import gc
import html
import sys
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QSizePolicy,
    QSplitter,
    QTabWidget,
)

from engine.data.dataset import counted
from engine.solvers import get_solver
from engine.solvers.protocol import Status
from engine.warmup import warm_up as warm_up_solvers
from gui import settings as user_settings
from gui.app_state import AppState
from gui.column_look import ColumnLook
from gui.column_model import ColumnsModel
from gui.data_controller import DataController
from gui.data_view import DataView
from gui.evaluation_views import EvaluationViews
from gui.file_actions import EXPORT_KINDS, EXPORT_WRITERS, FileActions
from gui.models import is_model
from gui.results_panel import ResultsPanel
from gui.run_controller import RunController
from gui.validation_controller import ValidationController
from gui.run_display import RunDisplay
from gui.runs import RunRecord, status_text
from gui.session import SUFFIX as SESSION_SUFFIX
from gui.side_panel import STOP_ESTIMATE_TIP, STOP_TIP, SidePanel
from gui.status_bar import RunFigures
from gui.tree_analysis import TreeAnalysis
from gui.tree_editing import TreeEditor
from gui.tree_tab import TreeTab
from gui.tune_dialog import open_tune_dialog
from gui.worker import Worker
from resources import SAMPLES_DIR

PANEL_WIDTH = 370
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


class MainWindow(QMainWindow):
    warmed_up = Signal(object)    # engine.warmup.WarmupReport

    def __init__(self, path: str | None = None, warm_up: bool = False):
        super().__init__()
        self.setWindowTitle("Orchard")
        self.resize(1320, 840)
        self.setAcceptDrops(True)
        self.state = AppState()
        self.tree = None                   # the model drawn (a live run's newest tree)
        self.live_label: str | None = None  # the run being trained, while it runs
        self.last_error: str | None = None
        self.warmup_report = None
        self._discarded = False            # the user chose to quit without saving
        self._warmup_worker: Worker | None = None
        self._closing = False
        self._message_box: QMessageBox | None = None

        self.columns = ColumnsModel(self)
        self.data = DataController(self, self.state)
        self.runner = RunController(self, self.state)
        self.validator = ValidationController(self, self.state)
        self.files = FileActions(self, self.state)
        self.editor = TreeEditor(self.state.take_number, self)
        self.analysis = TreeAnalysis(self, TAB_DATA)
        self.display = RunDisplay(self, self.state)
        self.prepared, self.data_ready = self.data.prepared, self.data.data_ready
        self.run_ended = self.runner.ended
        self._build_actions()
        self._build_menus()
        self._build_central()
        self._build_status_bar()
        self._connect()
        self.data.algorithm_changed()
        self.update_controls()
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

        files = self.files
        self.open_action = action("&Open CSV…", self.open_file_dialog, QKeySequence.Open)
        self.open_session_action = action("Open &session…", files.open_session_dialog)
        self.save_session_action = action("&Save session…", files.save_session_dialog,
                                          QKeySequence.Save)
        self.export_action = action("&Export…", files.export_dialog_all, "Ctrl+E")
        self.export_image_action = action("Export &picture…", files.export_image_dialog,
                                          "Ctrl+Shift+E")
        self.report_action = action("Save &report…", files.report_dialog, None,
                                    "One HTML page of this run to read or mail: data, "
                                    "settings, tree, rules, figures and curve")
        self.export_actions: dict[str, QAction] = {}
        for kind in EXPORT_WRITERS:
            text, _ = EXPORT_KINDS.get(kind, (f"{kind}…", kind))
            self.export_actions[kind] = action(text, lambda _=False, k=kind:
                                               files.export_kind_dialog(k))
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
        self.tune_action = action("T&une depth…", lambda: open_tune_dialog(self), "Ctrl+T",
                                  "Choose the depth by cross-validation on this table")
        self.undo_action = action("&Undo edit", lambda: self.editor.undo(self.current_run),
                                  QKeySequence.Undo, "Undo the edit that made the run on "
                                  "screen (its own tree's edit by hand)")
        self.redo_action = action("&Redo edit", lambda: self.editor.redo(self.current_run),
                                  QKeySequence.Redo, "Redo the edit last undone on the run "
                                  "on screen")
        self.about_action = action("&About Orchard", self._about)

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = self.file_menu = bar.addMenu("&File")
        file_menu.addAction(self.open_action)
        self.recent_menu = file_menu.addMenu("Open &recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self.sample_menu = file_menu.addMenu("Open s&ample")
        for path in sample_files():
            self.sample_menu.addAction(path.name).triggered.connect(
                lambda _=False, p=path: self.load_path(p))
        self.sample_menu.setEnabled(bool(sample_files()))
        for group in ((self.open_session_action, self.save_session_action),
                      (self.export_action, self.export_image_action, self.report_action)):
            file_menu.addSeparator()
            for a in group:
                file_menu.addAction(a)
        self.export_menu = file_menu.addMenu("Export rules and &code")
        for a in self.export_actions.values():
            self.export_menu.addAction(a)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        edit_menu = bar.addMenu("&Edit")
        edit_menu.addAction(self.undo_action)
        edit_menu.addAction(self.redo_action)
        view_menu = bar.addMenu("&View")
        for a in (self.fit_action, self.zoom_in_action, self.zoom_out_action):
            view_menu.addAction(a)
        run_menu = bar.addMenu("&Run")
        run_menu.addAction(self.run_action)
        run_menu.addAction(self.stop_action)
        run_menu.addAction(self.tune_action)
        run_menu.addSeparator()
        run_menu.addAction(self.predict_action)
        run_menu.addAction(self.row_form_action)
        bar.addMenu("&Help").addAction(self.about_action)

    def _build_central(self) -> None:
        splitter = QSplitter(Qt.Horizontal, self)
        side = self.side_panel = SidePanel(sample_files(), splitter)
        self.panel_scroll, self.run_bar = side.scroll, side.run_bar
        self.data_panel, self.algo_panel = side.data_panel, side.algo_panel
        self.evaluation_box = side.evaluation_box
        self.run_button, self.stop_button = side.run_button, side.stop_button
        # Short names used throughout (and by tests).
        self.target_combo = self.data_panel.target_combo
        self.binarize_combo = self.data_panel.binarize_combo
        self.open_button = self.data_panel.open_button
        self.depth_spin, self.time_spin = self.algo_panel.depth_spin, self.algo_panel.time_spin
        self.algorithm_combo = self.algo_panel.combo
        splitter.addWidget(side)
        self.tabs = QTabWidget(self)
        self.data_view = DataView(self.columns, self)
        self.tabs.addTab(self.data_view, "Data")
        self.tree_tab = TreeTab(self)
        self.summary_label, self.view = self.tree_tab.summary_label, self.tree_tab.view
        self.tree_tools, self.path_label = self.tree_tab.tree_tools, self.tree_tab.path_label
        self.chart = self.tree_tab.chart
        self.tabs.addTab(self.tree_tab, "Tree")
        self.results = ResultsPanel(self)
        self.tabs.addTab(self.results, "Results")
        self.evaluation_views = EvaluationViews(self)
        self.tabs.addTab(self.evaluation_views, "Evaluation")
        splitter.addWidget(self.tabs)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setCollapsible(1, False)
        splitter.setSizes([PANEL_WIDTH, 1000])
        self.setCentralWidget(splitter)

    def _build_status_bar(self) -> None:
        self.result_label = QLabel("Ready.", self)
        self.result_label.setContentsMargins(6, 0, 6, 0)
        self.result_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.statusBar().addWidget(self.result_label, 1)
        self.figures = RunFigures(self)
        self.statusBar().addPermanentWidget(self.figures)

    def _connect(self) -> None:
        """Views observe the state and the controllers; user actions reach them."""
        state, data, panel = self.state, self.data, self.data_panel
        display = self.display
        self.column_look = ColumnLook(self)   # the Data tab's column chart
        state.selection_changed.connect(lambda run: display.refresh_evaluation())
        state.runs_changed.connect(display.runs_changed)
        state.run_updated.connect(display.run_updated)
        self.validator.progressed.connect(display.run_updated)
        self.validator.busy_changed.connect(self.update_controls)
        state.draft_changed.connect(lambda draft: display.show_header())
        data.busy_changed.connect(self.update_controls)
        data.loaded.connect(self._loaded)
        data.data_ready.connect(self.runner.data_ready)
        self.runner.busy_changed.connect(self.update_controls)
        self.columns.changed.connect(data.options_changed)
        panel.open_requested.connect(self.open_file_dialog)
        panel.sample_requested.connect(self.load_path)
        panel.options_changed.connect(data.options_changed)
        panel.target_accepted.connect(data.accept_target)
        panel.costs_requested.connect(data.costs_dialog)
        self.algo_panel.algorithm_changed.connect(lambda _: self._algorithm_changed())
        # Guided thresholds come from the greedy tree of the chosen depth.
        self.depth_spin.valueChanged.connect(data.depth_changed)
        self.run_button.clicked.connect(self.run)
        self.stop_button.clicked.connect(self.stop)
        self.editor.edited.connect(self._edit_added)
        self.editor.undone.connect(self._edit_undone)
        self.editor.busy_changed.connect(lambda _: self.update_controls())
        self.editor.said.connect(self.set_status)
        self.editor.failed.connect(self.show_error)
        self.data_view.row_chosen.connect(self.analysis.show_row)
        self.results.runs_selected.connect(display.runs_selected)
        self.results.run_activated.connect(display.run_activated)
        self.results.cell_chosen.connect(self.analysis.show_cell)
        self.results.export_history.connect(self.files.export_history_dialog)
        self.results.run_annotated.connect(self._run_annotated)
        self.evaluation_views.exported.connect(lambda path: self.set_status(f"Saved {path}."))
        self.evaluation_views.rows_changed.connect(self.display.refresh_evaluation)
        self.tabs.currentChanged.connect(lambda _: display.refresh_evaluation())
        self.view.node_clicked.connect(self.analysis.show_node)
        self.view.node_menu.connect(self.analysis.open_node_menu)

    # ================================================================== state
    raw = property(lambda self: self.state.draft.raw, doc="The draft's table.")
    path = property(lambda self: self.state.draft.path, doc="The draft's file.")
    prep = property(lambda self: self.state.draft.prep, doc="The draft's preparation.")
    dataset = property(lambda self: self.state.draft.dataset,
                       doc="The draft's training set (None while stale).")
    current_run = property(lambda self: self.state.selected, doc="The selected run.")
    loading = property(lambda self: self.data.loading)
    preparing = property(lambda self: self.data.preparing)
    closing = property(lambda self: self._closing,
                       doc="The window is closing: late answers from workers are dropped.")

    @property
    def unsaved(self) -> bool:
        """Runs a session does not hold yet (`AppState.unsaved_runs`)."""
        return bool(self.state.unsaved_runs())

    @property
    def running(self) -> bool:
        """A run, or a subtree being re-solved: the tree on screen is not final."""
        return self.runner.running or self.editor.busy

    def algorithm(self) -> str:
        return self.algo_panel.algorithm()

    def set_algorithm(self, name: str) -> None:
        self.algo_panel.set_algorithm(name)

    def params(self) -> dict:
        return self.algo_panel.params()

    def time_limit(self) -> float | None:
        return self.algo_panel.time_limit()

    def settle_heap(self) -> None:
        settle_heap()

    def update_controls(self) -> None:
        busy, running = self.loading or self.running, self.running
        self.data_panel.set_busy(busy)
        self.data_panel.set_table_loaded(self.raw is not None and not busy)
        self.data_view.columns_view.setEnabled(not busy)
        for a in (self.open_action, self.open_session_action):
            a.setEnabled(not busy)
        self.recent_menu.setEnabled(not busy)
        self.sample_menu.setEnabled(not busy and bool(sample_files()))
        self.algo_panel.setEnabled(not running)
        selected = self.current_run
        has_model = selected is not None and is_model(selected.tree) and not running
        self.predict_action.setEnabled(has_model)
        self.tune_action.setEnabled(self.raw is not None and not busy)
        self.row_form_action.setEnabled(has_model)
        self.undo_action.setEnabled(self.editor.can_undo(selected) and not running)
        self.redo_action.setEnabled(self.editor.can_redo(selected) and not running)
        self.evaluation_box.setEnabled(not running)
        # While an option change is being prepared, Run is taken and starts once the
        # data is ready (a depth change re-prepares guided thresholds).
        can_run = not busy and (self.dataset is not None if not self.preparing
                                else self.raw is not None) and not self.runner.queued
        # Keyboard focus passes between Run and Stop (side by side) rather than to the
        # next control, which the side panel would scroll to.
        if running and self.run_button.hasFocus():
            self.stop_button.setEnabled(True)
            self.stop_button.setFocus()
        elif can_run and self.stop_button.hasFocus():
            self.run_button.setEnabled(True)
            self.run_button.setFocus()
        self.run_button.setEnabled(can_run)
        self.run_action.setEnabled(can_run)
        stoppable = running or self.loading or self.data.prep_worker is not None \
            or self.runner.queued or self.validator.estimating
        self.stop_button.setEnabled(stoppable)
        self.stop_action.setEnabled(stoppable)
        self.stop_button.setToolTip(
            STOP_ESTIMATE_TIP if self.validator.estimating and not (
                running or self.loading or self.runner.queued) else STOP_TIP)
        self.results.set_running(running)
        for a in (self.export_action, self.export_image_action, *self.export_actions.values()):
            a.setEnabled(has_model)
        self.report_action.setEnabled(selected is not None and not running)
        self.save_session_action.setEnabled(self.path is not None or bool(self.state.runs))
        self.side_panel.set_hint(
            "Re-solving a subtree… Stop keeps the tree as it is." if self.editor.busy else
            "Running… Stop keeps the best tree found so far." if running else
            "Open a CSV file to start." if self.raw is None else
            "Preparing the data…" if self.preparing else
            "Fix the problem shown under Data to run." if self.dataset is None else "")

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
        names = [self.algorithm_combo.itemData(i) for i in range(self.algorithm_combo.count())]
        QMessageBox.about(self, "About Orchard",
                          "<b>Orchard</b><br>Optimal decision trees from your own CSV files,"
                          " live.<br>Algorithms: " + ", ".join(
                              html.escape(get_solver(n).title) for n in names))

    # ================================================================ warm-up
    def _start_warmup(self) -> None:
        if self._closing or self._warmup_worker is not None:
            return
        worker = Worker(warm_up_solvers, name="orchard-warmup", in_children=True,
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

    # ============================================================ user actions
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
        self.data.load_path(path, settings)

    def run(self) -> None:
        self.runner.run()

    def stop(self) -> None:
        """Stop the run (keeping its best tree), a re-solve, or reading or preparing."""
        self.runner.stop()
        self.editor.stop()
        if self.data.workers:
            self.set_status("Stopping…")
            self.data.stop()

    def _algorithm_changed(self) -> None:
        self.data.algorithm_changed()
        self.update_controls()

    def _loaded(self, prep, from_session: bool) -> None:
        """A new file: the Data tab shows it; unless a session brought it with its
        runs, no run is selected until the user runs or picks one."""
        if not from_session:
            self.select(None)
        self.tabs.setCurrentIndex(TAB_DATA)
        settle_heap()

    # ======================================================= the selected run
    def select(self, run: RunRecord | None) -> None:
        self.display.select(run)

    def show_run(self, run: RunRecord, switch_tab: bool = True) -> None:
        self.display.show_run(run, switch_tab)

    def _run_annotated(self, run: RunRecord) -> None:
        """A run named or annotated in the history: its name shows in the header,
        and the session has something unsaved."""
        if run is self.current_run:
            self.display.show_header()
        self.update_controls()

    # ========================================================= editing by hand
    def _edit_added(self, record: RunRecord) -> None:
        parent = self.state.run(record.edited_from) if record.edited_from else None
        self.state.add_run(record, self.state.data_of(parent))
        self.show_run(record, switch_tab=False)

    def _edit_undone(self, record: RunRecord, parent: RunRecord) -> None:
        self.state.remove_run(record.number)
        self.show_run(parent, switch_tab=False)

    # ================================================================ closing
    def closeEvent(self, event: QCloseEvent) -> None:
        """Ask before unsaved runs are lost; then stop a run and wait for background
        work, so no thread outlives the window."""
        if not self._closing and self.unsaved and not self._discarded \
                and user_settings.ask_before_quit():
            event.ignore()
            self._ask_before_quit()
            return
        self._closing = True
        self.hide()
        self.runner.close()
        self.validator.close()
        self.data.timer.stop()
        workers = [w for w in (self.runner.worker, *self.data.workers, self._warmup_worker)
                   if w is not None]
        for worker in workers:
            worker.cancel()
        for worker in workers:
            worker.wait()
        self.runner.worker, self.data.load_worker, self.data.prep_worker = None, None, None
        self._warmup_worker = None
        super().closeEvent(event)

    def _ask_before_quit(self) -> QMessageBox:
        unsaved = len(self.state.unsaved_runs())
        box = QMessageBox(QMessageBox.Question, "Orchard",
                          f"{counted(unsaved, 'run')} {'is' if unsaved == 1 else 'are'} not "
                          "saved in a session (new, or tested since it was saved). Save "
                          f"{'it' if unsaved == 1 else 'them'} before quitting?",
                          QMessageBox.Save | QMessageBox.Discard | QMessageBox.Cancel, self)
        box.setAttribute(Qt.WA_DeleteOnClose)

        def answered(button) -> None:
            role = box.standardButton(button)
            if role == QMessageBox.Save:
                self.files.save_session_dialog()
            if role == QMessageBox.Discard or (role == QMessageBox.Save and not self.unsaved):
                self._discarded = True
                self.close()

        box.buttonClicked.connect(answered)
        box.open()
        self._message_box = box
        return box


__all__ = ["EXPORT_WRITERS", "MainWindow", "Status", "status_text"]
