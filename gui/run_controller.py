"""A run, from Run to its record: the draft committed as it is at the click, the
search in a worker, its improving trees drawn live, and the finished run added to
the application state with the rows it trained on.

While a run is live, the screen belongs to it (its label in every message, no
earlier run's tree or figures); when it ends, it becomes the selected run like any
other (`MainWindow.show_run`).  A run that ends without a result spends its number
and leaves no tree on screen as if it were an answer.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from engine.data.features import format_count
from engine.evaluation import CrossValidation
from engine.solvers import compile_ahead, get_solver
from engine.solvers.monitor import Monitor
from engine.solvers.protocol import Status
from gui import file_settings
from gui.app_state import AppState
from gui.data_tasks import StageRelay
from gui.models import is_model, size_text
from gui.results_panel import errors_text
from gui.runs import RunRecord, run_task
from gui.worker import Worker, error_message

LIVE_REDRAW_MS = 200   # at most five redraws a second while a solver improves its tree
TICK_MS = 100          # elapsed time during a run
CURVE_TICKS = 4        # the curve reaches up to "now" every 4 ticks (sooner if it improved)


def no_tree_text(label: str, status: str) -> str:
    """One sentence for a run that ended without a tree, with what to try."""
    stopped = ("was stopped before it found a tree: run it again and let it search "
               "longer, or lower the depth")
    why = {
        "cancelled": stopped,
        "stopped": stopped,
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


def result_text(run: RunRecord) -> str:
    """One line naming the run ("#3 Blossom on iris.csv: ...") and its figures."""
    if not is_model(run.tree):
        return f"{run.label}: {run.status_text}, no tree · {run.time_s:.2f} s"
    parts = [f"{run.label}: {errors_text(run)}", f"R² {run.train_r2:.3f}" if run.regression
             else f"accuracy {100 * run.train_accuracy:.1f}%"]
    if run.evaluation is not None:
        parts.append(run.evaluation.summary())
        parts.append(run.evaluation.verdict())
    if run.leaf_penalty:   # what the search minimised, and its bound
        parts.append(f"errors + cost per leaf {format_count(run.objective)}"
                     + (f" (lower bound {format_count(run.lower_bound)})"
                        if run.lower_bound > 0 and not run.optimal else ""))
    elif run.lower_bound > 0 and not run.optimal:
        parts.append(f"lower bound {format_count(run.lower_bound)}")
    parts += [run.status_text, f"{run.time_s:.2f} s", size_text(run.tree)]
    if run.message:   # a non-answer, explained with what to try
        parts.append(run.message)
    return " · ".join(filter(None, parts))


class RunController(QObject):
    ended = Signal(object)        # the Result, or None when the run failed
    busy_changed = Signal()

    def __init__(self, window, state: AppState):
        super().__init__(window)
        self.win, self.state = window, state
        self.worker: Worker | None = None
        self.monitor: Monitor | None = None
        self.queued = False          # Run pressed while the data was being prepared
        self._context: dict | None = None
        self._pending = None         # the newest live tree, drawn at the next redraw
        self._live_figures = None    # (error, bound) of the newest live tree
        self._ticks = 0
        self._redraw = QTimer(self, singleShot=True, interval=LIVE_REDRAW_MS)
        self._redraw.timeout.connect(self._draw_pending)
        self._tick_timer = QTimer(self, interval=TICK_MS)
        self._tick_timer.timeout.connect(self._tick)

    @property
    def running(self) -> bool:
        return self.worker is not None

    def data_ready(self, dataset) -> None:
        """The draft was prepared: a run waiting for it starts now."""
        if self.queued and not self.win.preparing:
            self.queued = False
            if dataset is not None:
                self.run()
            self.busy_changed.emit()

    # ------------------------------------------------------------------- run
    def run(self) -> None:
        """Train the chosen algorithm on the draft as it is now, in the background."""
        win, draft = self.win, self.state.draft
        if win.loading or win.running or draft.raw is None:
            return
        win.data_panel.commit_edits()   # a field still being typed in counts
        if win.preparing:
            self.queued = True
            win.set_status("Preparing the data with the new options; the run starts as "
                           "soon as it is ready…")
            self.busy_changed.emit()
            return
        rows = draft.run_data()
        if rows is None:
            return
        if win.data_panel.target_question_text():   # running answers "Use it"
            win.data.accept_target()
        algorithm, params, time_limit = win.algorithm(), win.params(), win.time_limit()
        plan = win.evaluation_box.plan()
        try:
            get_solver(algorithm).resolve(params)
            validation = (CrossValidation(draft.raw, draft.prep.options, algorithm, params,
                                          plan, baselines=True)
                          if plan is not None else None)
        except Exception as exc:  # noqa: BLE001 - a parameter problem, shown to the user
            win.show_error(error_message(exc))
            return
        if draft.path is not None:   # the file's own settings, back when it is opened
            file_settings.remember(draft.path, file_settings.file_part(
                rows.settings, params, win.evaluation_box.settings()))
        compile_ahead.start(algorithm)   # unless the warm-up has compiled it already
        monitor = Monitor(time_limit)
        worker = Worker(run_task, rows.dataset, algorithm, params, monitor,
                        on_cancel=monitor.cancel, name="orchard-train")
        monitor.on_incumbent = lambda tree, t, error, bound: worker.report(
            ("incumbent", tree, float(t), float(error), float(bound)))
        monitor.on_progress = StageRelay(worker.report)
        worker.partial.connect(self._progress)
        worker.finished.connect(self._finished)
        worker.errored.connect(self._failed)
        worker.cancelled.connect(self._failed)
        self.monitor, self.worker = monitor, worker
        # The run's number is the next one; a failed run spends it too.
        number = self.state.take_number()
        # one search at a time on the machine: an earlier run's estimate stops here
        win.validator.stop(f"Stopped when run #{number} started: select that run and "
                           "run it again to estimate it.")
        title = get_solver(algorithm).title
        name = draft.path.name if draft.path else ""
        label = f"#{number} {title}" + (f" on {name}" if name else "")
        self._context = {"rows": rows, "algorithm": algorithm, "params": dict(params),
                         "time_limit": time_limit, "number": number, "label": label,
                         "validation": validation,
                         "proves": get_solver(algorithm).proves_optimality}
        self._pending, self._live_figures = None, None
        win.display.show_live_run(label, f"{label}, depth {params.get('depth', '—')}",
                                  rows.dataset.class_weights,
                                  objective=bool(params.get("leaf_cost")),
                                  regression=rows.dataset.regression)
        self.busy_changed.emit()
        worker.start()
        self._tick_timer.start()

    def stop(self) -> None:
        """Ask the running solver to stop (it returns the best tree found so far),
        call off a run waiting for the data, or stop estimating the accuracy on new
        rows of the run that ended last."""
        if self.queued:
            self.queued = False
            self.win.set_status("The run waiting for the data was called off.")
            self.busy_changed.emit()
        if self.worker is not None:
            self.win.set_status("Stopping…")
            self.worker.cancel()
        elif self.win.validator.estimating:
            self.win.validator.stop()

    # ------------------------------------------------------------- live view
    def _progress(self, payload) -> None:
        win = self.win
        if self.sender() is not self.worker or win.closing:
            return
        kind, label = payload[0], self._context["label"]
        if kind == "incumbent":
            _, tree, t, error, bound = payload
            first = self._live_figures is None
            if first:
                win.settle_heap()   # whatever the solver set up (numba included) stays put
            self._pending = tree
            self._live_figures = (error, bound)
            # with a cost per leaf the search's values are errors + the leaves' cost
            objective = bool(self._context["params"].get("leaf_cost"))
            win.figures.set_figures("running", t, error,
                                    bound if self._context["proves"] else None, False,
                                    objective)
            win.set_status(f"Running {label}… best so far: "
                           f"{'objective' if objective else 'error'} {format_count(error)}"
                           f"{f', lower bound {format_count(bound)}' if bound > 0 else ''}"
                           f" after {t:.1f} s")
            if first:   # the run's first tree at once; later ones at most 5 a second
                self._draw_pending()
                self._redraw.start()
            elif not self._redraw.isActive():
                self._redraw.start()
        elif kind == "stage" and self._live_figures is None:
            # before the first tree: the solver's set-up, e.g. grouping 2 million rows
            win.set_status(f"Running {label}… {payload[1]}")

    def _tick(self) -> None:
        monitor, win = self.monitor, self.win
        if monitor is None or win.closing:
            return
        elapsed = monitor.elapsed()
        win.figures.set_elapsed(elapsed)
        self._ticks += 1
        if len(monitor.incumbents) != len(win.chart.points) or self._ticks % CURVE_TICKS == 0:
            win.chart.set_points(list(monitor.incumbents), elapsed)

    def _draw_pending(self) -> None:
        if self._pending is None or self.win.closing:
            return
        tree, self._pending = self._pending, None
        self.win.display.show_tree(tree)

    # ------------------------------------------------------------------ end
    def _finished(self, outcome) -> None:
        if self.sender() is not self.worker or self.win.closing:
            return
        context = self._end()
        rows = context["rows"]
        record = RunRecord.from_outcome(
            context["number"], outcome, rows.dataset, context["algorithm"],
            context["params"], rows.settings, context["time_limit"],
            data_path=str(rows.path.resolve()) if rows.path else None)
        record.tuning = self.state.tuning_for(rows.raw, context["algorithm"],
                                              context["params"])
        validation = context["validation"]
        stopped = outcome.result.status == Status.CANCELLED
        if validation is not None and is_model(record.tree) and stopped:
            record.message = " ".join(filter(None, (
                record.message, "Accuracy on new rows was not estimated: the run was "
                "stopped; run it again to estimate it.")))
        self.state.add_run(record, rows)
        self.win.show_run(record, switch_tab=False)   # its row selected, the status names it
        self.win.settle_heap()
        if validation is not None and is_model(record.tree) and not stopped:
            self.win.validator.start(record, validation, context["time_limit"])
        self.ended.emit(outcome.result)

    def _failed(self, message: str = "") -> None:
        """A run that ended without a result: its number is spent (the next run never
        takes it), and no tree of it stays on screen as if it were an answer."""
        if self.sender() is not self.worker or self.win.closing:
            return
        label = self._end()["label"]
        self.win.display.show_failed_run(label, message)
        self.ended.emit(None)

    def _end(self) -> dict:
        self._tick_timer.stop()
        self._redraw.stop()
        context = self._context
        self._pending, self.worker, self.monitor, self._context = None, None, None, None
        self.busy_changed.emit()
        return context

    def close(self) -> None:
        self._tick_timer.stop()
        self._redraw.stop()
