"""Regression trees in the window (issue 47): a table whose target holds numbers
trains a regression tree from the window's defaults, and every view says numbers."""

import math

from test_gui_support import (  # noqa: F401
    LOAD_TIMEOUT,
    isolated_settings,
    open_window,
    ready,
    run_and_wait,
)
from test_regression import house_table

from engine.data.features import format_number


def test_a_numeric_target_trains_a_regression_tree_from_the_defaults(qtbot, tmp_path):
    win = open_window(qtbot, house_table(tmp_path / "house.csv"), algorithm=None)
    assert win.algorithm() == "auto" and win.data_panel.task() == "auto"
    features = win.data_panel.features_label.text()
    assert "a number (regression)" in features
    assert "so each leaf predicts their mean" in win.data_panel.notes_text()
    assert win.data_panel.problems_text() == ""
    run_and_wait(qtbot, win)
    run = win.current_run
    assert run.regression and run.chosen == "dl85" and run.optimal
    assert 0.5 < run.train_r2 <= 1 and run.train_rmse > 0
    assert math.isnan(run.train_accuracy)
    summary = win.results.summary_text()
    assert "Training RMSE" in summary and "Training R²" in summary
    assert "Training accuracy" not in summary
    assert "a number (regression)" in win.summary_label.text()
    # no confusion matrix: the fit drawn instead, on the run's own training rows
    plots = win.results.fit_plots
    qtbot.waitUntil(lambda: plots.points is not None, timeout=LOAD_TIMEOUT)
    assert plots.key == run.number and plots.points.rows == win.dataset.n_rows
    assert sorted(plots.points.actual) == sorted(win.dataset.y)
    assert set(plots.points.predicted) == set(run.tree.value[run.tree.feature < 0, 1])
    assert not win.results.matrix_pair.isVisible()
    # the tree's leaves say their means; the chart counts squared errors
    scene = win.view.scene()
    qtbot.waitUntil(lambda: scene.complete, timeout=LOAD_TIMEOUT)
    tree = run.tree
    leaves = [n for n in range(tree.n_nodes) if tree.is_leaf(n)]
    titles = {scene.node_items[n].title for n in leaves}
    assert titles == {format_number(float(tree.value[n, 1])) for n in leaves}
    assert all("rmse" in scene.node_items[n].subtitle for n in leaves)
    assert scene.legend.texts()[0].startswith("Each box: the mean")
    assert "squared error" in win.chart.getPlotItem().getAxis("left").labelText
    assert "⇒" in scene.hover_text(leaves[0])
    # the Evaluation tab: importance (squared error removed), the class views say why not
    views = win.evaluation_views
    win.tabs.setCurrentWidget(views)
    qtbot.waitUntil(lambda: views.importance is not None, timeout=LOAD_TIMEOUT)
    assert views.importance.columns[0] == "area" and views.importance.values[0] > 0
    assert views.currentWidget() is views.pages["importance"]
    assert "this tree predicts numbers" in views.pages["per_class"].note.text()


def test_asking_for_classes_of_a_measurement_says_why_not(qtbot, tmp_path):
    win = open_window(qtbot, house_table(tmp_path / "house.csv", rows=300),
                      algorithm=None)
    win.data_panel.set_task("classification")
    qtbot.waitUntil(lambda: not win.preparing and not win.loading, timeout=LOAD_TIMEOUT)
    assert "looks like a measurement" in win.data_panel.problems_text()
    win.data_panel.set_task("auto")
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    assert win.dataset.regression


def test_an_algorithm_without_regression_is_named_before_the_run(qtbot, tmp_path):
    win = open_window(qtbot, house_table(tmp_path / "house.csv", rows=300),
                      algorithm="blossom")
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    assert "grows classification trees only" in win.data_panel.problems_text()
    text = win.data_panel.problems_text()
    assert "choose Greedy (CART), Automatic, " in text and "or CA-DL8.5" in text


def test_a_classification_run_and_a_regression_run_each_show_their_own_figures(
        qtbot, tmp_path):
    """After a classification run on another file, a regression run, then the older
    run selected again: each shows its own kind of figures, never the other's."""
    from test_gui_support import LOANS
    win = open_window(qtbot, LOANS, algorithm=None)
    run_and_wait(qtbot, win)
    first = win.current_run
    assert not first.regression
    win.load_path(house_table(tmp_path / "house.csv", rows=400))
    qtbot.waitUntil(lambda: ready(win) and win.dataset.regression, timeout=LOAD_TIMEOUT)
    run_and_wait(qtbot, win)
    second = win.current_run
    assert second.regression
    results = win.results
    qtbot.waitUntil(lambda: results.fit_plots.key == second.number, timeout=LOAD_TIMEOUT)
    results.select_runs([first.number])
    qtbot.waitUntil(lambda: win.current_run is first, timeout=LOAD_TIMEOUT)
    assert results.matrix_pair.isVisibleTo(results) and \
        not results.fit_plots.isVisibleTo(results)
    assert results.matrices_box.title().startswith("Confusion matrices")
    assert "Training accuracy" in results.summary_text()
    assert "classes" in win.summary_label.text()
    results.select_runs([second.number])
    qtbot.waitUntil(lambda: win.current_run is second, timeout=LOAD_TIMEOUT)
    assert results.fit_plots.isVisibleTo(results)
    assert "Training R²" in results.summary_text()
    qtbot.waitUntil(lambda: results.fit_plots.key == second.number, timeout=LOAD_TIMEOUT)


def test_a_regression_run_survives_a_session(qtbot, tmp_path):
    import json

    from gui.session import SUFFIX
    win = open_window(qtbot, house_table(tmp_path / "house.csv", rows=300), algorithm=None)
    win.data_panel.set_task("regression")   # asked for, not only chosen
    qtbot.waitUntil(lambda: ready(win) and win.dataset.regression, timeout=LOAD_TIMEOUT)
    run_and_wait(qtbot, win)
    before = win.current_run
    qtbot.waitUntil(lambda: before.evaluation is not None, timeout=LOAD_TIMEOUT)
    path = tmp_path / f"work{SUFFIX}"
    assert win.files.save_session(path)
    saved = json.loads(path.read_text())
    assert saved["data_settings"]["task"] == "regression"
    other = open_window(qtbot, algorithm=None)
    with qtbot.waitSignal(other.prepared, timeout=LOAD_TIMEOUT):
        assert other.files.open_session(path)
    qtbot.waitUntil(lambda: ready(other), timeout=LOAD_TIMEOUT)
    assert other.data_panel.task() == "regression" and other.dataset.regression
    run = other.results.runs[0]
    assert run.regression and run.train_error == before.train_error
    assert run.evaluation.regression
    assert run.evaluation.mean_of("test_r2") == before.evaluation.mean_of("test_r2")
    assert (run.tree.predict(other.dataset.X) == before.tree.predict(win.dataset.X)).all()
