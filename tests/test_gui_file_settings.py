"""Settings that belong to a file follow the file, not the window (issue 46): a least
leaf of 500 chosen for one table gave one leaf "proven optimal" on the next file of
267 rows, and class weights, cost per leaf and test plan carried over silently."""

from test_gui_support import (  # noqa: F401 - isolated_settings: autouse fixture
    LOANS,
    isolated_settings,
    open_window,
    ready,
    run_and_wait,
    write_people_csv,
)

from engine.evaluation import Plan


def open_file(qtbot, win, path):
    win.load_path(path)
    qtbot.waitUntil(lambda: ready(win) and win.path == path, timeout=30_000)


def test_a_file_brings_its_own_settings_back_and_a_new_file_starts_from_defaults(
        qtbot, tmp_path):
    win = open_window(qtbot, LOANS, algorithm="greedy")
    form = win.algo_panel.form
    form.set_values({"min_leaf": 50.0})
    win.data_panel.class_weight_edit.setText("balanced")
    win.data_panel.commit_edits()
    win.evaluation_box.set_plan(Plan("holdout", test_size=0.3))
    qtbot.waitUntil(lambda: ready(win), timeout=30_000)
    run_and_wait(qtbot, win)
    assert win.current_run.params["min_leaf"] == 50

    people = write_people_csv(tmp_path / "people.csv")
    open_file(qtbot, win, people)
    # nothing of the loans file's own settings reaches the people file ...
    assert form.values()["min_leaf"] == 1
    assert win.data_panel.class_weight_edit.text() == ""
    assert win.dataset.class_weights is None
    assert win.evaluation_box.settings() == Plan().to_dict()
    # ... and the window says so
    status = win.result_label.text()
    assert "people.csv starts from the default" in status
    assert "class weights" in status and "min leaf" in status and "test plan" in status
    # the window's own choices stay
    assert win.algorithm() == "greedy"

    open_file(qtbot, win, LOANS)
    assert form.values()["min_leaf"] == 50
    assert win.data_panel.class_weight_edit.text() == "balanced"
    assert win.dataset.class_weights is not None
    assert win.evaluation_box.settings() == Plan("holdout", test_size=0.3).to_dict()
    status = win.result_label.text()
    assert "loans.csv: its settings from its last run are back" in status
    assert "class weights balanced" in status and "min leaf 50" in status
    win.close()


def test_a_remembered_target_the_file_no_longer_has_is_left_out(qtbot, tmp_path):
    path = write_people_csv(tmp_path / "people.csv")
    win = open_window(qtbot, path, algorithm="greedy")
    win.data_panel.set_target("colour")
    qtbot.waitUntil(lambda: ready(win) and win.dataset.prep.target == "colour",
                    timeout=30_000)
    run_and_wait(qtbot, win)
    text = path.read_text().replace("colour", "shade")
    path.write_text(text)
    open_file(qtbot, win, path)
    assert win.dataset is not None and win.dataset.prep.target == "buys"
    win.close()
