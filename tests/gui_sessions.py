"""Random user sessions in the real window (issue 34): a Hypothesis state machine
that opens files, changes the target, the class weights, the algorithm and the
depth, turns the mouse wheel over the settings, runs, selects older runs, clicks
nodes, chooses rows, predicts files, edits trees by hand and undoes (only ever the
run on screen's own edit), and checks after every step that what the window shows
belongs to the selected run, that its accuracy on new rows is its own, and that the
draft is prepared with the settings on screen.

`tests/test_gui_sessions.py` runs a bounded number of sessions in CI;
`benchmarks/gui_sessions.py` runs thousands of steps.  The tables are generated
(text columns of hundreds of values, missing cells), never committed.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QWidget

from engine.editing import training_matrix
from engine.featurize import prepare
from engine.model.tree import Tree
from engine.prediction import node_rows, prediction_text, row_path
from gui.main_window import MainWindow
from gui.models import is_model
from gui.side_panel import WHEEL_EDITORS, PanelScroll
from gui.tune_dialog import open_tune_dialog

WAIT_MS = 60_000
MIN_WIDTH = 1024
ALGORITHMS = ("auto", "greedy", "contree", "blossom", "odd")


def write_tables(folder: Path, seed: int = 0) -> dict[str, Path]:
    """Two tables of other columns and classes, and a file that is no table."""
    rng = np.random.default_rng(seed)
    n = 600
    age = rng.integers(18, 80, n).astype(float)
    town = rng.choice([f"town{k}" for k in range(300)], n)
    colour = rng.choice(["red", "green", "blue"], n)
    # 40 cities of about 15 rows each: value groups beyond the values alone, which the
    # greedy tree of the chosen depth picks (so the features depend on the depth)
    city = rng.integers(0, 40, n)
    buys = np.where((age > 45) ^ (colour == "red") ^ (city % 7 < 3)
                    ^ (rng.random(n) < 0.1), "yes", "no")
    age_text = np.where(rng.random(n) < 0.05, "", age.astype(int).astype(str))
    a = folder / "people.csv"
    a.write_text("age,town,colour,city,buys\n" + "".join(
        f"{x},{t},{c},city{k},{b}\n"
        for x, t, c, k, b in zip(age_text, town, colour, city, buys)))
    m = 300
    size = rng.normal(10, 3, m).round(2)
    kind = rng.choice(["a", "b", "c", "d", "e", "f"], m)
    grade = np.where(size > 11, "high", np.where(size > 8, "mid", "low"))
    b = folder / "parts.csv"
    b.write_text("size,kind,weight,grade\n" + "".join(
        f"{s},{k},{w:.1f},{g}\n" for s, k, w, g in
        zip(size, kind, rng.random(m) * 5, grade)))
    bad = folder / "broken.csv"
    bad.write_bytes(b"\x00\x01\x02 not a table \xff\xfe")
    return {"people": a, "parts": b, "broken": bad}


class WindowSession(RuleBasedStateMachine):
    """One user's session; `qtbot` and `tables` are set by the test that runs it.

    No rule has a Hypothesis precondition: what a session can do next depends on
    timing (a Stop before or after a run's first tree), and Hypothesis must replay a
    session's choices exactly, so a rule that does not apply returns at once."""

    qtbot = None
    tables: dict[str, Path] = {}
    steps: Counter = Counter()   # rules taken, over every session (to say what was tried)

    def __init__(self) -> None:
        super().__init__()
        self.win = MainWindow()
        self.qtbot.addWidget(self.win)
        self.win.resize(1024, 640)
        self.win.show()
        self.win.set_algorithm("greedy")
        self._checked = None   # the draft and settings last found consistent

    # ------------------------------------------------------------- helpers
    def settle(self) -> None:
        self.steps[sys._getframe(1).f_code.co_name] += 1
        win = self.win
        self.qtbot.waitUntil(lambda: not win.loading and not win.preparing
                             and not win.running and not win.runner.queued,
                             timeout=WAIT_MS)

    @property
    def ready(self) -> bool:
        return self.win.raw is not None

    @property
    def finished_model(self) -> bool:
        """The selected run's model is on screen, and nothing runs (the newest run
        with a model is selected first when none is, as a user would pick one)."""
        run, win = self.win.current_run, self.win
        if run is None and not win.running:
            models = [r for r in win.state.runs if is_model(r.tree)]
            if models:
                win.results.select_runs([models[-1].number])
                run = win.current_run
        return run is not None and is_model(run.tree) and win.tree is run.tree \
            and not win.running

    # --------------------------------------------------------------- rules
    @rule(name=st.sampled_from(["people", "parts"]))
    def open_file(self, name):
        self.win.load_path(self.tables[name])
        self.settle()

    @rule(pick=st.integers(0, 10))
    def change_target(self, pick):
        if not self.ready:
            return
        combo = self.win.target_combo
        combo.setCurrentIndex(pick % combo.count())
        self.settle()

    @rule(text=st.sampled_from(["", "balanced"]), commit=st.booleans())
    def type_class_weights(self, text, commit):
        """Typed, and maybe left without pressing Enter (Run must count it)."""
        if not self.ready:
            return
        edit = self.win.data_panel.class_weight_edit
        edit.setText(text)
        if commit:
            edit.editingFinished.emit()
        self.settle()

    @rule(name=st.sampled_from(ALGORITHMS), depth=st.integers(1, 3))
    def choose_algorithm(self, name, depth):
        self.win.set_algorithm(name)
        self.win.depth_spin.setValue(depth)
        if name == "odd":
            self.win.time_spin.setValue(2)
        self.settle()

    @rule()
    def run(self):
        if not self.ready:
            return
        win = self.win
        weights = win.data_panel.class_weight_edit.text().strip()
        before = len(win.state.runs)
        win.run_button.click()
        self.settle()
        runs = win.state.runs
        if len(runs) > before:   # the run captured the draft at the click
            assert (runs[-1].data_settings.get("class_weight") or "") == weights

    @rule(after_ms=st.integers(0, 300))
    def run_then_stop(self, after_ms):
        """Stop soon after Run: a stopped run keeps its best tree or says it has none."""
        if not self.ready:
            return
        win = self.win
        before = win.algorithm(), win.depth_spin.value(), win.time_spin.value()
        win.set_algorithm("odd")
        win.depth_spin.setValue(3)
        win.time_spin.setValue(2)   # should the stop come after its end
        win.run_button.click()
        self.qtbot.wait(after_ms)
        win.stop_button.click()
        self.settle()
        win.set_algorithm(before[0])   # the session goes on with its own choices
        win.depth_spin.setValue(before[1])
        win.time_spin.setValue(before[2])
        self.settle()

    @rule(a=st.integers(0, 50), b=st.integers(0, 50))
    def compare_runs(self, a, b):
        if len(self.win.state.runs) < 2:
            return
        runs = self.win.state.runs
        numbers = sorted({runs[a % len(runs)].number, runs[b % len(runs)].number})
        self.win.results.select_runs(numbers)
        self.settle()
        if len(numbers) > 1:
            assert self.win.current_run.number in numbers

    @rule()
    def save_and_reopen_session(self):
        if not self.win.state.runs:
            return
        win = self.win
        path = self.tables["people"].parent / "session.orchard.json"
        numbers = [r.number for r in win.state.runs]
        assert win.files.save_session(path) and not win.unsaved
        assert win.files.open_session(path)
        self.settle()
        assert [r.number for r in win.state.runs] == numbers

    @rule(pick=st.integers(0, 50))
    def select_run(self, pick):
        """Pick a run of the history (with none yet, run the draft first: a session
        that never had a run to select would not test selecting)."""
        if not self.win.state.runs and self.ready:
            self.run()
        if not self.win.state.runs:
            return
        runs = self.win.state.runs
        self.win.results.select_runs([runs[pick % len(runs)].number])
        self.settle()

    @rule(pick=st.integers(0, 200))
    def click_node(self, pick):
        if not self.finished_model or not isinstance(self.win.tree, Tree):
            return
        self.steps["click_node"] += 1
        win = self.win
        run, tree = win.current_run, win.tree
        node = pick % tree.n_nodes
        rows = win.state.data_of(run)
        win.analysis.show_node(node)
        if rows is None or rows.raw is not win.raw:
            assert f"Run #{run.number}" in win.result_label.text()
            return
        expected, _ = node_rows(tree, rows.raw.frame, node)

        def shown() -> bool:
            rows_shown = win.data_view.preview._shown
            return rows_shown is not None and rows_shown.tolist() == expected.tolist() \
                and f"Run #{run.number}, node {node}:" in win.data_view.node_label.text()

        self.qtbot.waitUntil(shown, timeout=WAIT_MS)

    @rule(pick=st.integers(0, 10_000))
    def choose_row(self, pick):
        if not self.finished_model:
            return
        self.steps["choose_row"] += 1
        win = self.win
        run = win.current_run
        row = pick % len(win.raw.frame)
        win.analysis.show_row(row)
        rows = win.state.data_of(run)
        status = win.result_label.text()
        if rows is None or rows.raw is not win.raw:
            assert f"Run #{run.number}" in status
            return
        assert status.startswith(f"Row {row + 1}: run #{run.number} predicts") or \
            f"run #{run.number}" in status
        if status.startswith(f"Row {row + 1}: run #{run.number} predicts"):
            path, _, predicted = row_path(run.tree, win.raw.frame.iloc[[row]])
            assert win.view.tree_scene().highlighted_nodes() == sorted(path)
            assert f"predicts {prediction_text(run.tree, predicted)}" in status

    @rule(pick=st.integers(0, 200))
    def collapse_node(self, pick):
        if not self.finished_model or not isinstance(self.win.tree, Tree):
            return
        tree = self.win.tree
        inner = np.flatnonzero(tree.feature >= 0)
        if inner.size:
            self.win.analysis.collapse_node(int(inner[pick % inner.size]))
        self.settle()

    @rule(pick=st.integers(0, 200), row=st.integers(0, 50), optimise=st.booleans())
    def split_by_hand(self, pick, row, optimise):
        """Split by hand from the ranked candidates, maybe optimising below: a new
        edit of the run on screen whose errors are those counted on its rows."""
        win = self.win
        if not self.finished_model or not isinstance(win.tree, Tree) \
                or win.state.data_of(win.current_run) is None:
            return
        run, node = win.current_run, pick % win.tree.n_nodes
        dialog = win.analysis.open_split_dialog(node)
        if win.tree.regression:   # (a file's recalled target may be a number)
            assert dialog is None   # editing a regression by hand is not there yet
            return
        self.qtbot.waitUntil(lambda: dialog.splits is not None
                             or "cannot be ranked" in dialog.header.text(), timeout=WAIT_MS)
        if not dialog.table.rowCount():
            dialog.close()
            return
        dialog.table.selectRow(row % dialog.table.rowCount())
        chosen = dialog.chosen
        (dialog.optimise_button if optimise else dialog.split_button).click()
        self.settle()
        edits = [r for r in win.state.runs if r.edited_from == run.number]
        assert edits and f"'{chosen.condition}'" in edits[-1].message
        edited = win.current_run
        data = win.state.data_of(edited).dataset
        assert edited.train_error == pytest.approx(edited.tree.error(
            training_matrix(edited.tree, data), data.y, data.w))

    @rule(redo=st.booleans())
    def undo_or_redo(self, redo):
        """Edit → Undo / Redo as a user finds them: only ever the run on screen's own
        edit is taken out (never another run's, or another file's)."""
        win = self.win
        action = win.redo_action if redo else win.undo_action
        if not action.isEnabled():
            return
        selected, before = win.current_run, list(win.state.runs)
        action.trigger()
        self.settle()
        if not redo:
            gone = [r for r in before if not any(r is kept for kept in win.state.runs)]
            assert gone == [selected] and selected.edited_from is not None

    @rule(name=st.sampled_from(["people", "parts", "broken"]))
    def predict_file(self, name):
        if not self.finished_model:
            return
        self.steps["predict_file"] += 1
        dialog = self.win.analysis.predict_dialog()
        if dialog is None:
            return
        with self.qtbot.waitSignal(dialog.finished_reading, timeout=WAIT_MS):
            dialog.open_path(self.tables[name])
        # what can be saved is this file's predictions, never an earlier file's
        if name == "broken":
            assert dialog.predictions is None and not dialog.save_button.isEnabled()
        dialog.close()

    @rule(use=st.booleans())
    def tune_depth(self, use):
        """Tune on the table open now, whatever came before (other files, targets,
        runs): the dialog names that file, and its choice is the depth set."""
        win = self.win
        if not self.ready or win.algorithm() == "odd":   # (its MILP takes seconds a fit)
            return
        dialog = open_tune_dialog(win)
        assert win.state.draft.path.name in dialog.windowTitle()
        dialog.high_spin.setValue(1)   # (one depth, two folds: the suite's time is bounded)
        dialog.folds_spin.setValue(2)
        dialog.time_spin.setValue(2)
        dialog.start()
        self.qtbot.waitUntil(lambda: dialog._worker is None, timeout=WAIT_MS)
        tuning = dialog.tuning
        if tuning is not None and use:
            dialog.use_button.click()
            assert win.depth_spin.value() == tuning.params["depth"]
        else:
            dialog.close()
        self.settle()

    @rule(pick=st.integers(0, 100), clicks=st.sampled_from([-2, -1, 1, 2]))
    def scroll_over_a_setting(self, pick, clicks):
        """Issue 46: a wheel turn over a spin box or combo box the user has not clicked
        scrolls the panel and changes no setting."""
        win = self.win
        panel = win.findChild(PanelScroll)
        editors = [w for w in panel.widget().findChildren(QWidget)
                   if isinstance(w, WHEEL_EDITORS) and w.isVisible() and w.isEnabled()
                   and not w.hasFocus()]
        if not editors:
            return

        def settings():
            return (repr(win.data.prep_options()), win.algorithm(), repr(win.params()),
                    win.time_limit(), repr(win.evaluation_box.plan()))
        before = settings()
        editor = editors[pick % len(editors)]
        centre = QPointF(editor.rect().center())
        QApplication.sendEvent(editor, QWheelEvent(
            centre, QPointF(editor.mapToGlobal(centre.toPoint())), QPoint(),
            QPoint(0, 120 * clicks), Qt.NoButton, Qt.NoModifier, Qt.NoScrollPhase, False))
        self.settle()
        assert settings() == before

    # ---------------------------------------------------------- invariants
    @invariant()
    def the_screen_belongs_to_the_selected_run(self):
        win = self.win
        if win.running:
            return
        run = win.current_run
        header = win.summary_label.text()
        if run is None:
            assert win.tree is None or win.live_label is None
            return
        assert f"#{run.number} " in header, header
        assert f"{run.n_features:,} features" in header
        if is_model(run.tree):
            assert win.tree is run.tree
        selected = win.results.selected_runs()
        assert not selected or any(r is run for r in selected)
        assert win.state.run(run.number) is run   # a run of this session, not a stale one
        assert win.figures.text("status") == run.status_text

    @invariant()
    def the_accuracy_on_new_rows_is_the_selected_runs(self):
        """Estimated in the background after each run: its own, or still coming."""
        win, run = self.win, self.win.current_run
        if win.running or run is None:
            return
        evaluation, new_rows = run.evaluation, win.figures.text("new_rows")
        if win.validator.progress(run):
            assert new_rows == "new rows …"
        elif evaluation is not None and evaluation.folds:
            assert new_rows == (f"new rows R² {evaluation.mean_of('test_r2'):.3f}"
                                if evaluation.regression else
                                f"new rows {100 * evaluation.mean_test_accuracy:.1f}%")
        else:
            assert new_rows == "new rows —", new_rows

    @invariant()
    def the_draft_is_prepared_with_the_settings_shown(self):
        """Issue 46: after a depth change the text columns' value groups were those of
        the old depth, and a run proved a worse tree optimal on them.  When nothing is
        pending, the draft's features are those a fresh preparation of the table with
        the settings on screen gives (computed again only when those settings change)."""
        win = self.win
        if win.dataset is None or win.preparing or win.loading:
            return
        options = win.data.prep_options()
        if (options.class_weight or None) != (win.state.draft.settings.get("class_weight")
                                              or None):
            return   # typed and not committed yet: Run commits it (rule type_class_weights)
        key = (id(win.dataset), repr(options))
        if key == self._checked:
            return
        fresh = prepare(win.raw, replace(options, target=win.dataset.prep.target))
        assert list(win.dataset.prep.features) == list(fresh.prep.features)
        self._checked = key

    @invariant()
    def the_window_fits_a_small_screen(self):
        assert self.win.minimumSizeHint().width() <= MIN_WIDTH
        assert self.win.minimumWidth() <= MIN_WIDTH

    def teardown(self) -> None:
        self.win.close()
