"""The selected run owns the screen (issue 34): each defect a user found, pinned.

An older run from another file, a changed target, a class weight typed and run at
once, a solver's binarisation left behind for the next solver: every view must
describe the selected run, from that run's own rows.
"""

import numpy as np
from test_gui_support import (  # noqa: F401 - isolated_settings is autouse
    LOAD_TIMEOUT,
    isolated_settings,
    open_window,
    ready,
    run_and_validate,
    run_and_wait,
    write_people_csv,
)

from PySide6.QtWidgets import QMessageBox

from engine.evaluation import Plan
from engine.prediction import node_rows
from gui.app_state import AppState, RunData, same_preparation
from gui.runs import RunRecord
from gui.settings import app_settings


def others_csv(path, rows=90):
    """Another file: other columns, three classes."""
    lines = ["height,shape,size"]
    for i in range(rows):
        height = 100 + (i * 13) % 90
        shape = ("round", "square")[i % 2]
        lines.append(f"{height},{shape},{('S', 'M', 'L')[height // 64 % 3]}")
    path.write_text("\n".join(lines) + "\n")
    return path


def shown_rows(win):
    return win.data_view.preview._shown


def test_an_older_run_of_another_file_keeps_its_own_header_and_rows(qtbot, tmp_path):
    people = write_people_csv(tmp_path / "people.csv")
    win = open_window(qtbot, people)
    run_and_wait(qtbot, win)
    first = win.current_run
    win.load_path(others_csv(tmp_path / "others.csv"))
    qtbot.waitUntil(lambda: ready(win) and win.path.name == "others.csv",
                    timeout=LOAD_TIMEOUT)
    assert win.current_run is None and win.tree is None   # a new file: no run selected
    run_and_wait(qtbot, win)
    second = win.current_run
    assert second.n_features != first.n_features or second.class_names != first.class_names

    win.results.select_runs([first.number])          # the older run, from people.csv
    assert win.current_run is first and win.tree is first.tree
    header = win.summary_label.text()
    assert "#1 " in header and "people.csv" in header and "others.csv" not in header
    assert f"{first.n_features:,} features" in header
    # its rows are not the table on screen: no node's rows from the wrong file
    before = shown_rows(win)
    win.analysis.show_node(0)
    assert "Run #1 trained on people.csv: open it again" in win.result_label.text()
    assert shown_rows(win) is before
    win.analysis.show_row(0)
    assert "Run #1 trained on people.csv" in win.result_label.text()
    assert win.analysis.row_form() is not None       # typed rows need no table

    win.results.select_runs([second.number])         # the newer run, from others.csv
    tree = second.tree
    node = int(tree.left[0]) if tree.feature[0] >= 0 else 0
    win.analysis.show_node(node)
    expected, _ = node_rows(tree, win.raw.frame, node)
    qtbot.waitUntil(lambda: shown_rows(win) is not None
                    and shown_rows(win).tolist() == expected.tolist(), timeout=LOAD_TIMEOUT)
    assert win.data_view.node_label.text().startswith(f"Run #{second.number}, node {node}:")


def test_a_changed_target_leaves_the_run_its_own_target(qtbot, tmp_path):
    win = open_window(qtbot, write_people_csv(tmp_path / "people.csv"))
    run_and_wait(qtbot, win)
    run = win.current_run
    assert run.tree.prep.target == "buys"
    win.data_panel.set_target("colour")
    qtbot.waitUntil(lambda: ready(win) and win.dataset.prep.target == "colour",
                    timeout=LOAD_TIMEOUT)
    assert win.current_run is run and "target 'buys'" in win.summary_label.text()
    win.analysis.show_row(4)
    status = win.result_label.text()
    assert status.startswith("Row 5: run #1 predicts ") and "(true buys: " in status
    # the run's rows are still its own: its node rows come from the table it read
    win.analysis.show_node(0)
    qtbot.waitUntil(lambda: shown_rows(win) is not None
                    and len(shown_rows(win)) == len(win.raw.frame), timeout=LOAD_TIMEOUT)


def test_class_weights_typed_then_run_at_once_are_the_runs(qtbot, tmp_path):
    win = open_window(qtbot, write_people_csv(tmp_path / "people.csv"))
    win.data_panel.class_weight_edit.setText("balanced")   # no Enter, no focus change
    run_and_wait(qtbot, win)
    run = win.current_run
    assert run.data_settings["class_weight"] == "balanced"
    counts = np.bincount(win.dataset.y, minlength=win.dataset.n_classes)
    assert not np.allclose(counts, counts[0])              # the classes are unequal,
    assert np.allclose(run.tree.value[0], run.tree.value[0][0])   # their weights equal
    # the boxes count rows, not weights ("36.2319 of 70.16 rows" before)
    qtbot.waitUntil(lambda: win.view.tree_scene() is not None and not win.view.is_building)
    scene = win.view.tree_scene()
    root = scene.node_items[0].subtitle
    assert root == f"{len(win.dataset.y):,} rows", root
    for item in scene.node_items:
        if item is not None:
            assert "." not in item.subtitle, item.subtitle


def test_a_binarisation_chosen_for_one_solver_goes_back_for_the_next(qtbot, tmp_path):
    win = open_window(qtbot, write_people_csv(tmp_path / "people.csv"), algorithm="auto")
    assert win.data_panel.binarize() == "none"
    for binary in ("sat-depth", "dl85"):
        win.set_algorithm(binary)
        qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
        assert win.data_panel.binarize() != "none"
        assert "needs 0/1 features" in win.data_panel.notes_label.text()
        win.set_algorithm("odd" if binary == "sat-depth" else "auto")
        qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
        assert win.data_panel.binarize() == "none"
        assert "needs 0/1 features" not in win.data_panel.notes_label.text()
        assert win.dataset.n_features == 3 + 2   # age, income and colour's tests


def test_the_window_fits_1024_pixels_after_a_many_class_run(qtbot, tmp_path):
    """It grew to 1472 px after a 6-class run with cross-validation, and could not
    be made narrower."""
    path = tmp_path / "six.csv"
    rng = np.random.default_rng(1)
    path.write_text("x,y,label\n" + "".join(
        f"{a:.2f},{b:.2f},class number {int(a * 6)}\n"
        for a, b in rng.random((240, 2))))
    win = open_window(qtbot, path)
    win.data_panel.set_target("label")
    qtbot.waitUntil(lambda: ready(win) and win.dataset.n_classes == 6, timeout=LOAD_TIMEOUT)
    win.resize(1024, 640)
    win.evaluation_box.set_plan(Plan("kfold", k=5))
    run_and_wait(qtbot, win)
    qtbot.waitUntil(lambda: not win.validator.busy, timeout=LOAD_TIMEOUT)
    assert len(win.current_run.class_names) == 6 and win.current_run.evaluation
    for tab in range(win.tabs.count()):
        win.tabs.setCurrentIndex(tab)
        qtbot.wait(20)
        assert win.minimumSizeHint().width() <= 1024 and win.width() <= 1024


def test_run_and_stop_do_not_move_when_a_run_starts(qtbot, tmp_path):
    win = open_window(qtbot, write_people_csv(tmp_path / "people.csv"))
    qtbot.wait(50)
    where = win.run_button.mapTo(win, win.run_button.rect().topLeft())
    win.side_panel.set_hint("Running… Stop keeps the best tree found so far, and a "
                            "long hint wraps onto a second line within the panel.")
    qtbot.wait(50)
    assert win.stop_button.mapTo(win, win.stop_button.rect().topLeft()).y() == where.y()
    assert win.run_button.mapTo(win, win.run_button.rect().topLeft()) == where


def test_runs_keep_their_rows_and_release_old_ones():
    """The state alone: a run's rows are its own; only the newest tables stay."""
    state = AppState()
    datasets = [object() for _ in range(8)]
    for k, dataset in enumerate(datasets, start=1):
        run = RunRecord(k, "greedy", {}, {"target": "y"}, 1, 1, ["a"], 1.0, 0.0, 0.0, True,
                        "optimal", 0.0, [], None, np.zeros((1, 1)))
        state.add_run(run, RunData(None, object(), dataset, {}))
    kept = [r.number for r in state.runs if state.data_of(r) is not None]
    assert kept == [4, 5, 6, 7, 8]   # the newest KEPT_DATASETS and the draft's
    state.select(state.run(2))
    assert state.data_of(state.run(2)) is None   # released before it was selected
    assert state.data_of(state.run(8)).dataset is datasets[7]
    assert same_preparation({"target": "y", "class_weight": ""}, {"target": "y"})
    assert not same_preparation({"target": "y"}, {"target": "z"})


def test_a_reopened_session_selects_its_own_run_in_the_history(qtbot, tmp_path):
    """Found by the random sessions: the history kept the records the session replaced
    (same numbers), so its selected row was a stale run."""
    win = open_window(qtbot, write_people_csv(tmp_path / "people.csv"))
    run_and_wait(qtbot, win)
    path = tmp_path / "s.orchard.json"
    assert win.files.save_session(path) and win.files.open_session(path)
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    run = win.current_run
    assert win.results.runs[0] is run and win.results.selected_runs()[0] is run


def test_the_node_menu_folds_and_unfolds(qtbot, tmp_path):
    """Alt+click is taken by most Linux window managers: the node menu folds too."""
    win = open_window(qtbot, write_people_csv(tmp_path / "people.csv"))
    run_and_wait(qtbot, win)
    qtbot.waitUntil(lambda: not win.view.is_building)
    win.analysis.open_node_menu(0, win.mapToGlobal(win.rect().center()))
    fold = next(a for a in win.analysis.node_menu.actions() if a.text() == "Fold its subtree")
    fold.trigger()
    assert win.view.collapsed_nodes() == [0]
    win.analysis.node_menu.close()
    win.analysis.open_node_menu(0, win.mapToGlobal(win.rect().center()))
    unfold = next(a for a in win.analysis.node_menu.actions()
                  if a.text() == "Unfold its subtree")
    unfold.trigger()
    assert win.view.collapsed_nodes() == []
    win.analysis.node_menu.close()


def test_quit_asks_before_unsaved_runs_are_lost(qtbot, tmp_path):
    app_settings().setValue("ask_before_quit", "true")
    win = open_window(qtbot, write_people_csv(tmp_path / "people.csv"))
    run_and_wait(qtbot, win)
    assert win.unsaved
    win.close()
    box = win._message_box
    assert win.isVisible() and box is not None and "not saved" in box.text()
    box.button(QMessageBox.Cancel).click()
    assert win.isVisible()                       # Cancel keeps the window and its runs
    win.close()
    win._message_box.button(QMessageBox.Discard).click()
    qtbot.waitUntil(lambda: not win.isVisible())
    other = open_window(qtbot, write_people_csv(tmp_path / "other.csv"))
    run_and_validate(qtbot, other)
    run_and_validate(qtbot, other)
    assert other.files.save_session(tmp_path / "saved.orchard.json") and not other.unsaved
    run_and_validate(qtbot, other)
    other.close()                                # only the run after the save counts
    assert "1 run is not saved" in other._message_box.text()
    other._message_box.button(QMessageBox.Cancel).click()
    assert other.files.save_session(tmp_path / "saved.orchard.json") and not other.unsaved
    other.close()                                # saved: no question
    assert not other.isVisible()


def test_save_session_starts_where_the_last_session_was_kept(qtbot, tmp_path, monkeypatch):
    """It started in the data's folder every time (a shared or read-only one, often)."""
    from gui import settings as user_settings
    from gui.file_actions import QFileDialog

    (tmp_path / "data").mkdir()
    win = open_window(qtbot, write_people_csv(tmp_path / "data" / "people.csv"))
    asked = []
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda parent, title, start, kinds: (
                            asked.append(start) or ("", ""))))
    win.files.save_session_dialog()
    assert asked[-1] == str(tmp_path / "data" / "people.orchard.json")   # the first time
    (tmp_path / "sessions").mkdir()
    user_settings.remember_folder("session", tmp_path / "sessions" / "old.orchard.json")
    win.files.save_session_dialog()
    assert asked[-1] == str(tmp_path / "sessions" / "people.orchard.json")


def test_a_run_of_an_earlier_reading_of_the_file_open_says_run_again(qtbot, tmp_path):
    """"open it again" was the advice while that very file was open (read again
    since, so the run's rows are another reading of it)."""
    people = write_people_csv(tmp_path / "people.csv")
    win = open_window(qtbot, people)
    run_and_wait(qtbot, win)
    first = win.current_run
    win.load_path(people)
    qtbot.waitUntil(lambda: ready(win) and win.raw is not win.state.data_of(first).raw,
                    timeout=LOAD_TIMEOUT)
    win.results.select_runs([first.number])
    win.analysis.show_node(0)
    text = win.result_label.text()
    assert "Run #1 trained on an earlier reading of people.csv: run again" in text
    assert "open it again" not in text
    win.close()
