"""Run → Tune depth…: the window's view of `engine.tuning` on the open table."""

import pytest
from test_gui_support import LOANS, isolated_settings, open_window, run_and_wait  # noqa: F401

from engine.data.dataset import PrepOptions
from engine.evaluation import Plan
from engine.tuning import Tuner, candidates
from gui.tune_dialog import open_tune_dialog


def test_tuning_in_the_window_scores_the_cli_s_candidates_and_sets_the_choice(qtbot):
    win = open_window(qtbot, LOANS, algorithm="greedy")
    assert win.tune_action.isEnabled()
    dialog = open_tune_dialog(win)   # the window's child, closed by "Use this setting"
    # an empty chart says what will fill it, with no made-up axis values
    assert dialog.plot_note.isVisible() and "press Start" in dialog.plot_note.text()
    assert not dialog.plot.getPlotItem().getAxis("left").style["showValues"]
    dialog.low_spin.setValue(1)
    dialog.high_spin.setValue(3)
    dialog.leaf_edit.setText("1, 20")
    dialog.cost_edit.setText("0")
    dialog.folds_spin.setValue(3)
    dialog.start()
    qtbot.waitUntil(lambda: dialog._worker is None, timeout=60_000)
    tuning = dialog.tuning
    assert tuning is not None and dialog.table.rowCount() == 6
    assert not dialog.plot_note.isVisible()
    assert dialog.plot.getPlotItem().getAxis("left").style["showValues"]
    # the same scores as the engine's run on the same table and settings
    same = Tuner(win.raw, win.data.prep_options(), "greedy",
                 candidates("greedy", [1, 2, 3], [1, 20], [0]), plan=Plan("kfold", 3)).run(
        refit=False)
    assert [s.accuracies for s in same.scored] == [s.accuracies for s in tuning.scored]
    assert "Chosen:" in dialog.status.text() and dialog.use_button.isEnabled()
    chosen = tuning.params
    dialog.use_button.click()
    assert win.algo_panel.depth_spin.value() == chosen["depth"]
    assert float(win.algo_panel.params()["min_leaf"]) == chosen["min_leaf"]
    record = run_and_wait(qtbot, win)
    assert record.tree.depth <= chosen["depth"]


def test_a_stopped_tuning_chooses_nothing_and_says_so(qtbot):
    win = open_window(qtbot, LOANS, algorithm="blossom")
    dialog = open_tune_dialog(win)
    qtbot.addWidget(dialog)
    assert dialog.cost_edit.isEnabled()      # Blossom has a cost per leaf
    dialog.high_spin.setValue(6)
    dialog.start()
    qtbot.waitUntil(lambda: dialog.table.rowCount() >= 1, timeout=60_000)
    dialog.stop()
    qtbot.waitUntil(lambda: dialog._worker is None, timeout=30_000)
    assert dialog.tuning is None and not dialog.use_button.isEnabled()
    assert "stopped" in dialog.status.text() and "Nothing is chosen" in dialog.status.text()


def test_tuning_uses_the_data_settings_of_the_window(qtbot):
    win = open_window(qtbot, LOANS, algorithm="greedy")
    dialog = open_tune_dialog(win)
    qtbot.addWidget(dialog)
    assert isinstance(dialog.options, PrepOptions)
    assert dialog.options.target == win.data.prep_options().target
    assert dialog.algorithm == "greedy" and "loans.csv" in dialog.windowTitle()


def test_an_algorithm_without_a_least_leaf_or_a_cost_tunes_the_depth_alone(qtbot):
    win = open_window(qtbot, LOANS, algorithm="sat-depth")
    dialog = open_tune_dialog(win)
    qtbot.addWidget(dialog)
    assert not dialog.leaf_edit.isEnabled() and not dialog.cost_edit.isEnabled()
    assert "no cost per leaf" in dialog.cost_edit.placeholderText()


def test_a_chosen_cost_per_leaf_reaches_the_algorithm_panel_exactly(qtbot):
    """"Use this setting" with a cost per leaf of 0.005: the form keeps it (a share
    needs more than two decimals), and Run trains with it."""
    win = open_window(qtbot, LOANS, algorithm="contree")
    dialog = open_tune_dialog(win)
    qtbot.addWidget(dialog)
    assert dialog.cost_edit.isEnabled() and dialog.cost_edit.text() == "0, 0.01"
    dialog.apply({"depth": 2, "leaf_cost": 0.005})
    assert win.algo_panel.params()["leaf_cost"] == 0.005
    run_and_wait(qtbot, win)
    record = win.current_run
    assert record.params["leaf_cost"] == 0.005
    assert record.leaf_penalty == pytest.approx(0.005 * record.total_weight)
    assert record.objective == pytest.approx(
        record.train_error + record.leaf_penalty * record.tree.n_leaves)
    assert win.figures.labels["error"].text().startswith("objective")


def test_the_dialog_tries_the_command_line_s_depths_by_default(qtbot):
    """Issue 45: its range starts at the default depths' deepest, and beyond 6 it tries
    only every other depth, as `orchard tune` does."""
    win = open_window(qtbot, LOANS, algorithm="greedy")
    dialog = open_tune_dialog(win)
    assert dialog.depths() == [1, 2, 3, 4, 5, 6, 8, 10, 12, 16]
    dialog.high_spin.setValue(9)
    assert dialog.depths() == [1, 2, 3, 4, 5, 6, 8, 9]
    dialog.reject()


def test_the_dialog_tunes_by_the_measure_chosen_and_says_which(qtbot):
    win = open_window(qtbot, LOANS, algorithm="greedy")
    dialog = open_tune_dialog(win)
    assert "validation accuracy" in dialog.status.text()
    dialog.metric_combo.setCurrentIndex(dialog.metric_combo.findData("balanced"))
    assert "validation balanced accuracy" in dialog.status.text()
    assert dialog.table.horizontalHeaderItem(1).text() == "validation balanced accuracy"
    assert "balanced" in dialog.plot.getPlotItem().getAxis("left").labelText
    dialog.high_spin.setValue(2)
    dialog.leaf_edit.setText("1")
    dialog.cost_edit.setText("0")
    dialog.folds_spin.setValue(3)
    dialog.start()
    assert not dialog.metric_combo.isEnabled()
    qtbot.waitUntil(lambda: dialog._worker is None, timeout=60_000)
    assert dialog.tuning.metric == "balanced"
    dialog.close()
    win.close()


def test_a_run_of_the_tuned_setting_reports_its_tuning_curve(qtbot, tmp_path):
    """Issue 46: the report includes the tuning curve of the run's setting; a run of
    another setting does not claim it."""
    from test_gui_support import run_and_wait

    win = open_window(qtbot, LOANS, algorithm="greedy")
    dialog = open_tune_dialog(win)
    dialog.high_spin.setValue(3)
    dialog.leaf_edit.setText("1")
    dialog.cost_edit.setText("0")
    dialog.folds_spin.setValue(3)
    dialog.start()
    qtbot.waitUntil(lambda: dialog._worker is None, timeout=60_000)
    tuning = dialog.tuning
    dialog.use_button.click()
    run_and_wait(qtbot, win)
    run = win.current_run
    assert run.tuning is not None and run.tuning["chosen"] == tuning.chosen
    path = tmp_path / "report.html"
    assert win.files.save_report(path)
    page = path.read_text(encoding="utf-8")
    assert "<h2>Tuning</h2>" in page and 'class="chosen"' in page
    assert page.count("<circle") == sum(s.complete for s in tuning.scored)
    session = tmp_path / "s.orchard"
    assert win.files.save_session(session)
    # another depth: not the tuned setting, no tuning claimed
    win.depth_spin.setValue(tuning.params["depth"] % 3 + 1)
    run_and_wait(qtbot, win)
    assert win.current_run.tuning is None
    win.close()
    other = open_window(qtbot, None)
    assert other.files.open_session(session)
    assert other.state.run(run.number).tuning["chosen"] == tuning.chosen
    other.close()
