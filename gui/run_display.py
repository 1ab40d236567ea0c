"""What the views show: the selected run, rendered on every view from what it owns
(tree, header, Results summary, figures, status line, curve, Evaluation), or the
live run while it runs, or the draft when no run is selected.

The window's views are thin: they are told what to draw here, in one place, so no
view can show one run while another shows another.  The selection itself is the
application state's (`AppState.select`); this object follows it and the history.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QObject

from engine.data.features import format_count
from gui.app_state import AppState
from gui.evaluation_views import ROWS_HELD_OUT, score_held_out
from gui.fit_plot import fit_points
from gui.models import is_model
from gui.run_controller import no_tree_text, result_text
from gui.runs import RunRecord
from gui.worker import Worker


def run_header(run: RunRecord) -> str:
    """The Tree tab's header for a run: which run, and the rows it trained on."""
    target = run.tree.prep.target if is_model(run.tree) else run.data_settings.get("target")
    return (f"<b>{html.escape(run.label)}</b> — {run.n_rows:,} rows, "
            f"{target_kind(run.regression, run.class_names)}, {run.n_features:,} features"
            + (f" (target '{html.escape(str(target))}')" if target else ""))


class RunDisplay(QObject):
    def __init__(self, window, state: AppState):
        super().__init__(window)
        self.win, self.state = window, state
        self._fit_worker: Worker | None = None   # the fit plot being scored

    def select(self, run: RunRecord | None) -> None:
        """Make `run` the selected one (None: no run) and render it everywhere."""
        self.state.select(run)
        if run is None:
            self.win.tree = None
            self.win.results.clear_selection()
            self.win.results.show_run(None)
            self.win.view.show_message("Press Run to grow a tree.")
            self.win.chart.clear_all()
            self.win.figures.clear()
            self.show_header()
            self.win.update_controls()
        else:
            self.show_run(run, switch_tab=False)

    def show_run(self, run: RunRecord, switch_tab: bool = True) -> None:
        """Make `run` the selected one everywhere: its history row (alone selected),
        tree, curve, figures, header, status line (and exports)."""
        self.win.results.select_runs([run.number], notify=False)
        self.present_run(run)
        searched = (f", depth {run.params.get('depth', '—')}" if run.edited_from is None
                    else " (edited by hand: no search curve)")
        if run.certified:
            searched += f" · {run.certified}"
        self.win.chart.show_result(run.label + searched, run.incumbents, run.time_s,
                                   run.objective, run.lower_bound,
                                   objective=run.leaf_penalty > 0, note=curve_note(run),
                                   regression=run.regression)
        if switch_tab:
            self.win.tabs.setCurrentWidget(self.win.tree_tab)

    def present_run(self, run: RunRecord) -> None:
        """`run`'s tree (or why it has none), header, Results summary, figures and
        status line."""
        self.state.select(run)
        self.win.results.show_run(run, self.win.validator.progress(run))
        if run.regression:
            self.show_fit(run)
        self.win.view.row_factors = run.class_factors
        if is_model(run.tree):
            self.show_tree(run.tree)
        else:
            self.win.tree = None
            self.win.view.show_message(no_tree_text(run.label, run.status))
        self.show_header()
        self.win.figures.show_run(run, self.win.validator.progress(run))
        self.win.set_status(result_text(run))
        self.refresh_evaluation()
        self.win.update_controls()

    def show_fit(self, run: RunRecord) -> None:
        """A regression run's predictions against its training rows, drawn on the
        Results tab once a worker has scored them (when those rows are in memory)."""
        rows = self.state.data_of(run)
        plots = self.win.results.fit_plots
        if rows is None or not is_model(run.tree):
            plots.clear(f"Run #{run.number} trained on {run.dataset_name or 'another file'}"
                        ": open it again with the run's settings to plot its rows.")
            return
        worker = Worker(fit_points, run.tree, rows.dataset, name="orchard-fit-plot")
        worker.finished.connect(lambda points: worker is self._fit_worker
                                and self.win.current_run is run
                                and plots.show_points(points, "training rows",
                                                      run.number))
        worker.errored.connect(lambda message: worker is self._fit_worker
                               and plots.clear(message))
        self._fit_worker = worker
        worker.start()

    def show_tree(self, tree) -> None:
        self.win.tree = tree
        if is_model(tree):
            self.win.view.show_tree(tree)
        else:
            self.win.view.show_message("This kind of model cannot be drawn yet.")
        self.win.update_controls()

    def show_header(self) -> None:
        """The Tree tab's header: the live run, else the selected run, else the draft."""
        run, draft, label = self.win.current_run, self.state.draft, self.win.summary_label
        if self.win.live_label is not None:
            label.setText(f"<b>{html.escape(self.win.live_label)}</b> — running")
        elif run is not None:
            label.setText(run_header(run))
            label.setToolTip("" if run.regression else
                             "Classes: " + ", ".join(map(str, run.class_names)))
        elif draft.path is None:
            label.setText("No data loaded.")
        elif draft.dataset is None:
            label.setText(f"<b>{html.escape(draft.path.name)}</b> — not ready to run "
                          "with these options (see Data).")
        else:
            data = draft.dataset
            label.setText(f"<b>{html.escape(draft.path.name)}</b> — {data.n_rows:,} rows, "
                          f"{target_kind(data.regression, data.class_names)}, "
                          f"{data.n_features:,} features "
                          f"(target '{html.escape(data.prep.target)}'): press Run")
            label.setToolTip("Classes: " + ", ".join(map(str, data.class_names)))

    def show_live_run(self, label: str, title: str, row_factors=None,
                      objective: bool = False, regression: bool = False) -> None:
        """A run starts: nothing of an earlier run stays on screen as if it were this
        one's (no tree, curve, figures or selected history row until it has its own).
        `objective`: it minimises errors + a cost per leaf, which its curve shows."""
        previous = self.win.current_run
        self.win.view.row_factors = row_factors
        self.state.select(None)
        self.win.tree, self.win.live_label = None, label
        self.refresh_evaluation()
        self.win.results.clear_selection()
        self.win.results.show_message(f"Run {label} is running: its figures appear here "
                                  "when it ends.")
        self.win.view.show_message(  # the view follows the new trees until the user zooms
            f"Run {title}: waiting for its first tree…"
            + (f"\n(Run #{previous.number} stays in the history of the Results tab.)"
               if previous is not None else ""))
        self.win.chart.start_run(title, objective, regression)
        self.win.figures.set_figures("running", 0.0, None, None, None)
        self.show_header()
        self.win.set_status(f"Running {label}…")
        self.win.tabs.setCurrentWidget(self.win.tree_tab)

    def show_failed_run(self, label: str, message: str) -> None:
        """A run ended without a result: a failed run's live trees are no answer."""
        self.win.live_label = None
        self.win.figures.labels["status"].setText("failed" if message else "stopped")
        ended = "failed" if message else "was stopped"
        if message or self.win.tree is None:
            self.win.tree = None
            self.win.view.show_message(no_tree_text(label, "error" if message else "stopped"))
            self.win.results.show_message(f"Run {label} {ended}" + (
                f": {message}" if message else " before its first tree."))
        self.show_header()
        self.win.update_controls()
        if message:
            self.win.show_error(message)   # the engine's sentence; the view names the run
        else:
            self.win.set_status(f"Run {label} {ended}.")

    def runs_changed(self, runs: list) -> None:
        """The history lists the state's runs, the very records (a reopened session's
        runs have the numbers of the ones they replace, not their identity)."""
        self.win.live_label = None
        shown = self.win.results.runs
        if len(shown) != len(runs) or any(a is not b for a, b in zip(shown, runs)):
            self.win.results.set_runs(runs)

    def run_updated(self, run: RunRecord) -> None:
        """`run`'s accuracy on new rows moved on (a split done) or arrived: its history
        row, and, when it is the selected run and nothing runs, its summary, figures
        and status line."""
        self.win.results.refresh_run(run.number)
        if run is self.win.current_run and not self.win.running:
            self.win.results.show_run(run, self.win.validator.progress(run))
            self.win.figures.show_run(run, self.win.validator.progress(run))
            self.win.set_status(result_text(run))
            if run.evaluation is not None:   # its held-out rows, for the Evaluation tab
                self.refresh_evaluation()

    def refresh_evaluation(self) -> None:
        """The Evaluation tab scores the selected run on the held-out rows of its test
        (each split's tree on the rows it did not see), or on its own training rows
        (a pass over every row, when those rows are in memory), as the tab's rows
        chooser says, when the tab is open."""
        views = self.win.evaluation_views
        if self.win.tabs.currentWidget() is not views:
            return
        run = self.win.current_run
        rows = self.state.data_of(run)
        held = run.evaluation.held_out() if run is not None and run.evaluation else None
        about = (f"held-out rows ({run.evaluation.plan.describe()}"
                 f"{'' if run.evaluation.complete else ', the splits done'})"
                 if held is not None else None)
        views.set_held_out(None if about is None else about[0].upper() + about[1:])
        if run is None or not is_model(run.tree):
            views.clear("No finished run with a model to evaluate: press Run, or choose "
                        "a run in the Results tab.")
        elif held is not None and views.rows_choice() == ROWS_HELD_OUT:
            views.show_scored(score_held_out(held, run.evaluation.class_names), about)
        elif rows is None:
            views.clear(
                f"Run #{run.number} trained on {run.dataset_name or 'another file'}: open "
                "it again with the run's settings to evaluate its model on its rows.")
        else:   # an edit was made on every row: it has no held-out rows of its own
            views.show_dataset(run.tree, rows.dataset, "training rows" if
                               run.edited_from is None else
                               "training rows, on which its edits by hand were made "
                               "(Run → Predict a file judges it on rows it has not seen)")

    def run_activated(self, run: RunRecord) -> None:
        if not self.win.running:   # the live run keeps the tree until it ends
            self.show_run(run)

    def runs_selected(self, runs: list) -> None:
        """Rows chosen in the history.  One: that run everywhere.  Several: their
        curves overlaid, and the tree, figures and status line of the row clicked
        last (named in the chart's title and the status line).  During a run the
        history cannot be selected (`ResultsPanel.set_running`)."""
        if self.win.running:
            return
        if len(runs) == 1:
            self.show_run(runs[0], switch_tab=False)
            return
        if not runs:   # nothing selected: the current run's own curve again
            if self.win.current_run is not None:
                self.show_run(self.win.current_run, switch_tab=False)
            return
        numbers = [r.number for r in runs]
        focused, current = self.win.results.focused_run(), self.win.current_run
        shown = (focused if focused is not None and focused.number in numbers else
                 current if current is not None and current.number in numbers else runs[-1])
        self.present_run(shown)
        self.win.chart.show_runs(runs, shown)
        self.win.set_status(f"{result_text(shown)} · comparing the curves of "
                        + ", ".join(f"#{n}" for n in numbers))



def target_kind(regression: bool, class_names) -> str:
    """"3 classes", or "a number (regression)": what a run's or a table's target is."""
    return "a number (regression)" if regression else f"{len(class_names)} classes"


def curve_note(run: RunRecord) -> str:
    """Why `run` has no anytime curve to draw, in one sentence ("" when it has one)."""
    error = (f"Training {'squared ' if run.regression else ''}error "
             f"{format_count(run.train_error)}")
    if run.edited_from is not None:
        return (f"Edited by hand from run #{run.edited_from}: no search ran, so there is "
                f"no curve. {error}.")
    if len(run.incumbents) >= 2 or not is_model(run.tree):
        return ""
    proven = ", proven optimal" if run.optimal else ""
    return (f"{run.title} found its tree in one step ({run.time_s:.2f} s): there is no "
            f"search to plot. {error}{proven}.")
