"""The Data tab's column chart (issue 46, item 4): a column's values by class, and a
scatter of two numeric columns with the selected run's cut lines."""

from test_gui_support import (  # noqa: F401 - isolated_settings: autouse fixture
    LOANS,
    isolated_settings,
    open_window,
    ready,
    run_and_wait,
    write_people_csv,
)

from engine.column_summary import tree_cuts


def choose_column(qtbot, win, name):
    view = win.data_view
    view.columns_view.setCurrentIndex(win.columns.index(win.columns.names().index(name), 0))
    qtbot.waitUntil(lambda: view.column_chart.title.text().startswith(name), timeout=10_000)


def test_a_chosen_column_shows_its_values_by_class_then_against_another(qtbot, tmp_path):
    win = open_window(qtbot, LOANS, algorithm="greedy")
    chart = win.data_view.column_chart
    assert chart.empty.isVisible() or "Choose a column" in chart.empty.text()
    choose_column(qtbot, win, "job")
    assert "job: 600 rows with a class, 14 of them missing here" in chart.note.text()
    choose_column(qtbot, win, "income")
    assert "20 bins" in chart.note.text()
    run_and_wait(qtbot, win)
    run = win.current_run
    chart.against_combo.setCurrentIndex(chart.against_combo.findData("late_payments"))
    qtbot.waitUntil(lambda: "against income" in chart.title.text(), timeout=10_000)
    cuts = len(tree_cuts(run.tree, "income")) + len(tree_cuts(run.tree, "late_payments"))
    lines = [i for i in chart.plot.getPlotItem().items if type(i).__name__ == "InfiniteLine"]
    assert len(lines) == cuts > 0
    assert f"run #{run.number} puts on these columns" in chart.note.text()
    # another file: the column chosen is forgotten
    win.load_path(write_people_csv(tmp_path / "people.csv"))
    qtbot.waitUntil(lambda: ready(win) and win.path.name == "people.csv", timeout=30_000)
    assert "Choose a column" in chart.empty.text() and chart.title.text() == ""
    assert chart.against_combo.findData("late_payments") < 0
    win.close()
