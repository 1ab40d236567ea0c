"""The draft's data: reading a file and preparing it again after each option change,
in workers, into the application state (`AppState.set_table` / `set_prepared`).

The window's side panel and column table are the draft's editors; this object
turns their edits into preparations (at most one at a time: a preparation made
stale by a newer edit is stopped and started again), says what the prepared data
hold and what stops them from being run, and gives a solver that needs 0/1
features the binarisation it needs (and back when the user switches away).
Nothing of a run is touched here: the runs own their rows (`AppState.data_of`).
"""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from engine.data.class_weights import parse_class_weight
from engine.data.columns import ColumnKind
from engine.data.dataset import PrepOptions, counted
from engine.errors import OrchardError
from engine.evaluation import Plan
from engine.solvers import get_solver, solvers_for
from engine.solvers.monitor import Monitor
from engine.training import default_binarization
from engine.vocabulary import CLASSIFICATION
from gui import file_settings
from gui import settings as user_settings
from gui.algorithm_panel import is_sat
from gui.app_state import AppState
from gui.column_model import KIND_OF, ORDERED
from gui.cost_dialog import CostDialog
from gui.data_tasks import Prepared, StageRelay, prepare_table, read_and_prepare
from gui.session import is_session_file
from gui.worker import Worker

PREPARE_DELAY_MS = 150  # option changes within this time are prepared once


class DataController(QObject):
    prepared = Signal(object)     # Prepared, after a file is read or prepared again
    data_ready = Signal(object)   # its Dataset (None when the options give no usable data)
    loaded = Signal(object, bool)  # Prepared after a file was read; from a session?
    busy_changed = Signal()

    def __init__(self, window, state: AppState):
        super().__init__(window)
        self.win, self.state = window, state
        self.load_worker: Worker | None = None
        self.prep_worker: Worker | None = None
        self._prep_pending = False
        self._pending_choices: dict[str, str] = {}
        self._pending_orders: dict[str, tuple[str, ...]] = {}
        self._from_session = False
        self._accepted_targets: set[tuple[str, str]] = set()  # (file, target) "Use it"
        # (why binarisation was switched for a solver, to what, what it was before)
        self._switch_note = ("", "", "")
        self.timer = QTimer(self, singleShot=True, interval=PREPARE_DELAY_MS)
        self.timer.timeout.connect(self._start_prepare)

    @property
    def loading(self) -> bool:
        return self.load_worker is not None

    @property
    def preparing(self) -> bool:
        return self.prep_worker is not None or self.timer.isActive()

    @property
    def workers(self) -> list[Worker]:
        return [w for w in (self.load_worker, self.prep_worker) if w is not None]

    def stop(self) -> None:
        self.timer.stop()
        for worker in self.workers:
            worker.cancel()

    # ------------------------------------------------------------------ loading
    def load_path(self, path: str | Path, settings: dict | None = None) -> None:
        """Read and prepare `path` in the background (`prepared` follows).

        `settings` (from a session) fixes target, column uses and the other options;
        otherwise the file gets automatic choices and the panel's missing-value policy,
        binarisation and cleaning.
        """
        win = self.win
        if self.loading or win.running:
            win.show_error("Please wait until the current task has finished "
                           "(or stop the run) before opening another file.")
            return
        path = Path(path)
        if is_session_file(path) and settings is None:
            win.files.open_session(path)
            return
        self._from_session = settings is not None
        self._recalled = None if settings is not None else file_settings.recall(path)
        self._previous_class_weight = win.data_panel.row_options()["class_weight"]
        if settings is not None:
            options = self.options_from_settings(settings)
            self._pending_choices = dict(settings.get("columns", {}))
            self._pending_orders = dict(options.orders)
        else:
            if self._binary_switch_needed():
                self._switch_to_binary(notify=False)
            # the file's own target, column uses and class weights (its last run's),
            # or none: they never carry over from the file open before
            own = self._recalled or {}
            options = self.options_from_settings({
                **win.data_panel.row_options(), "missing": win.data_panel.missing(),
                "binarize": win.data_panel.binarize(), "target": own.get("target"),
                "task": own.get("task", "auto"),
                "columns": own.get("columns", {}), "orders": own.get("orders", {}),
                "class_weight": own.get("class_weight")})
            self._pending_choices = dict(own.get("columns", {}))
            self._pending_orders = dict(options.orders)
        win.set_status(f"Reading {path.name}…")
        win.data_panel.show_progress(f"Reading {path.name}…", 0.02)
        self.timer.stop()
        self.load_worker = self._start(self._loaded, self._load_failed, read_and_prepare,
                                       path, options, name="orchard-read",
                                       adapt=None if settings is not None else
                                       file_settings.known_only)
        self.busy_changed.emit()

    def _start(self, done, failed, fn, *args, **kwargs) -> Worker:
        """`fn` in a worker with its own Monitor (Stop cancels it), its stages shown
        as progress; `done(result)` or `failed(message)` ends it."""
        monitor = Monitor()
        worker = Worker(fn, *args, monitor=monitor, on_cancel=monitor.cancel,
                        report_arg="report", **kwargs)
        monitor.on_progress = StageRelay(worker.report)
        worker.partial.connect(self._progress)
        worker.finished.connect(done)
        worker.errored.connect(failed)
        worker.cancelled.connect(failed)
        worker.start()
        return worker

    def _progress(self, payload) -> None:
        if self.sender() not in self.workers or self.win.closing:
            return
        if payload[0] == "stage":
            _, text, fraction = payload
            self.win.data_panel.show_progress(text, fraction)
            self.win.set_status(text)

    def _loaded(self, prep: Prepared) -> None:
        if self.sender() is not self.load_worker or self.win.closing:
            return
        win = self.win
        self.load_worker = None
        self.state.set_table(prep.path, prep.raw, prep.infos)
        win.setWindowTitle(f"Orchard — {prep.path.name}")
        user_settings.add_recent_file(prep.path)
        user_settings.remember_folder("data", prep.path)
        columns = [str(c) for c in prep.raw.frame.columns]
        win.columns.set_table(prep.infos)
        win.columns.set_orders(self._pending_orders)
        win.columns.set_choices(self._pending_choices)
        self._pending_choices, self._pending_orders = {}, {}
        win.data_panel.set_columns(columns, prep.target)
        with win.data_panel.quietly():
            win.data_panel.set_task(prep.options.task)
            win.data_panel.set_missing(prep.options.missing)
            win.data_panel.set_binarize(prep.options.binarize, notify=False)
            win.data_panel.set_row_options({
                "drop_inconsistent": prep.options.drop_inconsistent,
                "merge_duplicates": prep.options.merge_duplicates,
                "remove_redundant": prep.options.remove_redundant,
                "class_weight": prep.options.class_weight})
        win.data_view.show_table(prep.path.name, prep.raw, prep.infos)
        win.data_panel.show_file(f"<b>{html.escape(prep.path.name)}</b><br>"
                                 f"{prep.n_rows:,} rows × {len(columns)} columns "
                                 f"(read in {prep.seconds:.1f} s)", str(prep.path))
        said = "" if self._from_session else self._file_settings_back(prep.path.name)
        self.apply(prep)
        self.loaded.emit(prep, self._from_session)
        if said:
            win.set_status(said)
        win.data_view.fit_preview_columns()
        if self._binary_switch_needed():  # a session chose "none" for a binary-only solver
            self._switch_to_binary()

    def _file_settings_back(self, name: str) -> str:
        """Put the opened file's own least leaf, cost per leaf and test plan in the
        panel (its last run's, or the defaults for a file never run), and say so."""
        win, own = self.win, self._recalled
        form = win.algo_panel.form
        if own is not None:
            form.set_everywhere({**file_settings.default_params(), **own.get("params", {})})
            win.evaluation_box.apply_settings(own.get("plan"))
            return file_settings.describe_recalled(name, own)
        changed = []
        if self._previous_class_weight:
            changed.append("class weights")
        defaults = file_settings.default_params()
        now = form.values()
        changed += [f"{k.replace('_', ' ')}" for k, v in defaults.items()
                    if k in now and now[k] != v]
        if win.evaluation_box.settings() != Plan().to_dict():
            changed.append("test plan")
        form.set_everywhere(defaults)
        win.evaluation_box.apply_settings(Plan().to_dict())
        return file_settings.describe_reset(name, changed)

    def _load_failed(self, message: str = "") -> None:
        if self.sender() is not self.load_worker or self.win.closing:
            return
        self.load_worker = None
        self._pending_choices, self._pending_orders = {}, {}
        self.win.data_panel.set_busy(False)
        self.busy_changed.emit()
        if message:
            self.win.show_error(message)
        else:
            self.win.set_status("Stopped reading the file." + (
                "" if self.state.draft.raw is None else
                " The table loaded before is still in use."))

    def costs_dialog(self) -> CostDialog | None:
        """Costs of errors… for the classes of the data prepared now (None without)."""
        data = self.state.draft.dataset
        if data is None:
            return None
        text = self.win.data_panel.row_options()["class_weight"] or ""
        try:
            weights = parse_class_weight(text) if text else {}
        except OrchardError:
            weights = {}
        dialog = CostDialog(list(data.class_names),
                            weights if isinstance(weights, dict) else {},
                            self.win.data_panel.set_class_weight_text, self.win)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        dialog.open()
        return dialog

    # -------------------------------------------------------------- options
    def prep_options(self) -> PrepOptions:
        """The options chosen in the panel and the column table."""
        win = self.win
        return PrepOptions(target=win.data_panel.target(), ignore=win.columns.ignore(),
                           task=win.data_panel.task(),
                           kinds=win.columns.kinds(), orders=win.columns.orders(),
                           missing=win.data_panel.missing(),
                           binarize=win.data_panel.binarize(),
                           depth=win.depth_spin.value(), **win.data_panel.row_options())

    def data_settings(self) -> dict:
        """The panel's data settings as a run and a session keep them."""
        options, path = self.prep_options(), self.state.draft.path
        return {"file": path.name if path else None,
                "target": options.target, "task": options.task,
                "missing": options.missing,
                "binarize": options.binarize, "columns": self.win.columns.choices(),
                "orders": {n: list(v) for n, v in options.orders.items()},
                **self.win.data_panel.row_options()}

    def options_from_settings(self, settings: dict) -> PrepOptions:
        choices = settings.get("columns", {})
        return PrepOptions(
            target=settings.get("target"),
            ignore=tuple(n for n, c in choices.items() if c == "ignore"),
            kinds={n: KIND_OF[c] for n, c in choices.items() if c in KIND_OF},
            orders={n: tuple(levels) for n, levels in
                    (settings.get("orders") or {}).items() if choices.get(n) == ORDERED},
            missing=settings.get("missing", "route"),
            binarize=settings.get("binarize", "none"),
            drop_inconsistent=bool(settings.get("drop_inconsistent")),
            merge_duplicates=bool(settings.get("merge_duplicates")),
            remove_redundant=bool(settings.get("remove_redundant")),
            class_weight=settings.get("class_weight") or None,
            depth=self.win.depth_spin.value(),
            # a run saved before regression trees predicted classes
            task=settings.get("task", CLASSIFICATION))

    def depth_changed(self) -> None:
        """The greedy tree of the chosen depth picks guided thresholds and a value
        group of every text column: a preparation with either is stale at another
        depth (a run on it was proven optimal on features a fresh open would not give)."""
        if self.depends_on_depth(self.prep_options()):
            self.options_changed()

    def depends_on_depth(self, options: PrepOptions) -> bool:
        """Whether the table prepared with `options` depends on the depth chosen."""
        if options.binarize.startswith("guided"):
            return True
        return any(options.kinds.get(info.name, info.kind) == ColumnKind.CATEGORICAL
                   and info.name not in options.ignore
                   and info.name != options.target for info in self.state.draft.infos)

    def options_changed(self) -> None:
        """An option changed: prepare the table again shortly (in the background)."""
        win = self.win
        if self.state.draft.raw is None or self.loading or win.closing:
            return
        win.columns.set_target(win.data_panel.target())
        self.state.clear_prepared()   # stale until prepared again
        win.set_status("Preparing the data…")
        win.data_panel.show_progress("Preparing the data…", 0.3)
        self.timer.start()
        self.busy_changed.emit()

    def _start_prepare(self) -> None:
        draft = self.state.draft
        if draft.raw is None or self.win.closing:
            return
        if self.prep_worker is not None:
            self._prep_pending = True   # its result is stale: stop it, then start again
            self.prep_worker.cancel()
            return
        self._prep_pending = False
        settings = self.data_settings()
        self.prep_worker = self._start(self._prepared_again, self._prepare_failed,
                                       prepare_table, draft.raw, draft.infos,
                                       self.prep_options(), path=draft.path,
                                       name="orchard-prepare")
        self.prep_worker.settings = settings   # what the preparation is of, for the state
        self.busy_changed.emit()

    def _prepared_again(self, prep: Prepared) -> None:
        """(Slots take the worker from `sender()`: a lambda holding the worker would
        make a reference cycle, freed by the cyclic collector instead of at once.)"""
        worker = self.sender()
        if worker is not self.prep_worker or self.win.closing:
            return
        self.prep_worker = None
        if self._prep_pending or self.timer.isActive():
            self._prep_pending = False
            self._start_prepare()   # options changed meanwhile: this result is stale
            return
        self.apply(prep, worker.settings)

    def _prepare_failed(self, message: str = "") -> None:
        if self.sender() is not self.prep_worker or self.win.closing:
            return
        self.prep_worker = None
        if not message and self._prep_pending:   # stopped for newer options
            self._prep_pending = False
            self._start_prepare()
            return
        self.win.data_panel.set_busy(False)
        self.busy_changed.emit()
        self.data_ready.emit(None)
        if message:
            self.win.show_error(message)
        else:
            self.win.set_status("Stopped preparing the data: change an option to prepare "
                                "it again.")

    def apply(self, prep: Prepared, settings: dict | None = None) -> None:
        win = self.win
        self.state.set_prepared(prep, settings if settings is not None
                                else self.data_settings())
        win.data_panel.set_busy(self.loading or win.running)
        win.columns.set_target(prep.target, prep.dataset is not None
                               and prep.dataset.regression)
        asked = set(win.columns.ignore())
        win.columns.set_left_out({} if prep.dataset is None else {
            name: why for name, why in prep.dataset.report.ignored_columns.items()
            if name not in asked})
        if win.data_view.preview is not None:
            win.data_view.preview.set_roles(prep.target, win.columns.roles())
        self.describe()
        self.busy_changed.emit()
        self.prepared.emit(prep)
        self.data_ready.emit(prep.dataset)

    # --------------------------------------------------------- what it holds
    def describe(self) -> None:
        """Features, notes and problems for the prepared data and the chosen algorithm."""
        win, prep = self.win, self.state.draft.prep
        if prep is None:
            return
        data = prep.dataset
        notes, problems = [], []
        note, spec, _ = self._switch_note
        if note and spec == win.data_panel.binarize():
            notes.append(note)
        if data is None:
            features = "<b>No training set</b> with these options."
            problems.append(prep.problem or "These options give no usable data.")
        else:
            continuous = sum(1 for f in data.features if not f.binary)
            kind = ("all 0/1" if continuous == 0 else
                    f"{continuous} continuous, {data.n_features - continuous} 0/1")
            target = "a number (regression)" if data.regression else \
                f"{data.n_classes} classes"
            features = (f"<b>{data.n_features:,} features</b> ({kind}) · "
                        f"{data.n_rows:,} rows · {target}")
            notes += [data.report.task_reason, *data.report.lines()]
            algorithm = win.algorithm()
            title = get_solver(algorithm).title
            if data.prep.task not in get_solver(algorithm).tasks:
                able = [get_solver(name).title for name in solvers_for(data.prep.task)]
                problems.append(f"{title} grows classification trees only, and this "
                                f"target holds numbers: choose {', '.join(able[:-1])} or "
                                f"{able[-1]}, or predict a class under Predict.")
            if prep.inconsistent:
                rows = prep.inconsistent
                have = f"{counted(rows, 'row')} {'has' if rows == 1 else 'have'}"
                if is_sat(algorithm):
                    problems.append(
                        f"{have} the same features as rows of another class, "
                        f"so no tree classifies every row correctly and {title} will find "
                        "none. Tick “Drop rows contradicting identical rows” or choose "
                        "another algorithm.")
                else:
                    notes.append(f"{have} the same features as rows of another class: "
                                 f"at least {counted(rows, 'training error')} "
                                 f"{'is' if rows == 1 else 'are'} unavoidable.")
            if get_solver(algorithm).needs == "binary" and not data.is_binary:
                problems.append(f"{title} needs 0/1 features: choose quantile thresholds "
                                "or every midpoint under Binarise.")
        win.data_panel.show_preparation(features, notes, problems)
        doubt = data.report.target_doubt if data is not None else ""
        if doubt and self._target_key() not in self._accepted_targets:
            win.data_panel.ask_about_target(doubt)
        else:
            win.data_panel.clear_target_question()
        if data is None:
            win.set_status(problems[0])
        elif win.data_panel.target_question_text() and not win.running:
            win.set_status(f"{doubt} Use it, or choose another target under Data.")
        elif not win.running:
            win.set_status(f"Data ready ({data.n_features:,} features): choose an "
                           "algorithm and press Run.")

    def _target_key(self) -> tuple[str, str]:
        draft = self.state.draft
        data = draft.dataset
        return str(draft.path), data.prep.target if data is not None else ""

    def accept_target(self) -> None:
        """The user answered "Use it" (or ran): this file's target is the class,
        asked no more."""
        if self.state.draft.dataset is None:
            return
        self._accepted_targets.add(self._target_key())
        self.win.data_panel.clear_target_question()
        self.describe()

    # ------------------------------------------------------- binarisation
    def _binary_switch_needed(self) -> bool:
        """A 0/1 solver on continuous data, or a binarisation Orchard chose for another
        solver that this one would choose differently (SAT solvers want every midpoint)."""
        algorithm = self.win.algorithm()
        if get_solver(algorithm).needs != "binary":
            return False
        current = self.win.data_panel.binarize()
        automatic = self._switch_note[1]
        return current == "none" or (
            current == automatic and current != default_binarization(algorithm))

    def _switch_to_binary(self, notify: bool = True) -> None:
        """Give a solver that needs 0/1 features its default binarisation, and say so."""
        win = self.win
        spec = default_binarization(win.algorithm())
        title = get_solver(win.algorithm()).title
        how = ("a threshold at every midpoint" if spec == "midpoints"
               else f"{spec.replace('quantile:', '')} quantile bins")
        note = f"{title} needs 0/1 features, so binarisation was switched to {how}."
        before = self._switch_note[2] if self._switch_note[1] else win.data_panel.binarize()
        self._switch_note = (note, spec, before)
        win.data_panel.set_binarize(spec, notify=notify)   # prepares again if notified
        if notify:
            win.set_status(note)

    def _switch_back(self, notify: bool) -> None:
        """The solver chosen now does not need 0/1 features: a binarisation Orchard
        switched to for the one before goes back to what the user had, and its note
        goes (the user's own choices stay)."""
        note, spec, before = self._switch_note
        self._switch_note = ("", "", "")
        if note and self.win.data_panel.binarize() == spec:
            self.win.data_panel.set_binarize(before, notify=notify)

    def algorithm_changed(self) -> None:
        notify = self.state.draft.raw is not None and not self.loading
        if self._binary_switch_needed():
            self._switch_to_binary(notify=notify)
        elif get_solver(self.win.algorithm()).needs != "binary":
            self._switch_back(notify)
        self.describe()
