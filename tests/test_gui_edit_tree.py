"""Editing the tree by hand in the window: collapse a node, undo and redo, re-solve a
subtree optimally, and what the history, exports and menus say about it."""

import numpy as np
from PySide6.QtCore import QPoint
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication
from test_gui_support import LOANS, isolated_settings, open_window, run_and_wait  # noqa: F401

from engine.data.csv_reader import read_table
from engine.editing import node_depth, training_matrix
from gui.tree_scene import NodeItem


def trained(qtbot, depth=3):
    win = open_window(qtbot, LOANS, algorithm="greedy")
    win.depth_spin.setValue(depth)
    run_and_wait(qtbot, win)
    win.tabs.setCurrentIndex(1)
    return win


def error_on_rows(win, tree) -> float:
    """The tree's training error counted on the loaded rows, not from its leaves."""
    data = win.dataset
    return tree.error(training_matrix(tree, data), data.y, data.w)


def test_collapse_then_undo_restore_the_same_model_and_redo_the_edit(qtbot, tmp_path):
    win = trained(qtbot)
    run, tree = win.current_run, win.tree
    node = int(tree.left[0])
    win.analysis.collapse_node(node)
    edited = win.current_run
    assert edited is not run and edited.edited_from == run.number
    assert [r.number for r in win.results.runs] == [run.number, edited.number]
    assert win.tree is edited.tree and win.view.tree is edited.tree
    assert edited.tree.is_leaf(node) and edited.tree.n_leaves < tree.n_leaves
    assert edited.train_error == error_on_rows(win, edited.tree) > run.train_error
    assert edited.status_text == "edited by hand" and not edited.optimal
    assert f"#{run.number} edited" in edited.label and "collapsed the node" in edited.message
    path = tmp_path / "edited.txt"
    assert win.files.export("rules", path)
    assert "Edited by hand: collapsed the node" in path.read_text()

    assert win.undo_action.isEnabled() and not win.redo_action.isEnabled()
    win.undo_action.trigger()
    assert [r.number for r in win.results.runs] == [run.number]
    assert win.current_run is run and win.tree is tree and win.view.tree is tree
    assert win.figures.labels["status"].text() == run.status_text
    win.files.export("rules", path)
    assert "Edited by hand" not in path.read_text()

    assert win.redo_action.isEnabled()
    win.redo_action.trigger()
    assert win.current_run is edited and [r.number for r in win.results.runs] == [
        run.number, edited.number]
    win.close()


def test_undo_belongs_to_the_selected_runs_own_edit(qtbot, tmp_path):
    """Undo was enabled on a fresh run of another file and took the edit of the first
    file's run out of the history."""
    from test_gui_support import ready, write_people_csv

    win = trained(qtbot)
    first = win.current_run
    win.analysis.collapse_node(int(win.tree.left[0]))
    edited = win.current_run
    other = write_people_csv(tmp_path / "people.csv")
    win.load_path(other)
    qtbot.waitUntil(lambda: ready(win) and win.path == other, timeout=30_000)
    fresh = run_and_wait(qtbot, win) and win.current_run
    assert fresh.edited_from is None
    assert not win.undo_action.isEnabled() and not win.redo_action.isEnabled()
    win.undo_action.trigger()            # the shortcut, pressed anyway: nothing happens
    assert [r.number for r in win.state.runs] == [first.number, edited.number,
                                                    fresh.number]
    win.results.select_runs([first.number])
    assert win.current_run is first and not win.undo_action.isEnabled()
    win.results.select_runs([edited.number])
    assert win.undo_action.isEnabled()
    win.undo_action.trigger()
    assert [r.number for r in win.state.runs] == [first.number, fresh.number]
    assert win.current_run is first and win.redo_action.isEnabled()
    win.results.select_runs([fresh.number])
    assert not win.redo_action.isEnabled()   # the edit undone was first's, not this one's
    win.close()


def test_a_resolved_subtree_never_increases_the_error(qtbot):
    win = trained(qtbot)
    run, tree = win.current_run, win.tree
    for node in (int(tree.left[0]), 0):
        before = win.current_run
        win.analysis.resolve_node(node)
        assert win.running and win.editor.busy and not win.run_button.isEnabled()
        qtbot.waitUntil(lambda: not win.editor.busy, timeout=120_000)
        after = win.current_run
        assert after.train_error <= before.train_error
        assert after.train_error == error_on_rows(win, after.tree)
        assert after.tree.depth <= 3
        if after is not before:
            assert after.edited_from == before.number and "re-solved the " in after.message
    # the root re-solved at depth 3 is the optimal tree of depth 3
    assert win.current_run.train_error <= run.train_error
    assert "error went from" in win.result_label.text() or \
        "is optimal" in win.result_label.text()
    win.close()


def test_resolving_at_the_depth_limit_says_why_not(qtbot, monkeypatch):
    win = trained(qtbot, depth=2)
    tree = win.tree
    deepest = max(range(tree.n_nodes), key=lambda k: node_depth(tree, k))
    shown = []
    monkeypatch.setattr(win, "show_error", shown.append)
    win.analysis.resolve_node(deepest)
    qtbot.waitUntil(lambda: not win.editor.busy, timeout=30_000)
    assert shown and "no depth is left" in shown[0]
    assert win.current_run.tree is tree and len(win.results.runs) == 1
    win.close()


def test_the_node_menu_offers_the_edits(qtbot):
    win = trained(qtbot, depth=2)
    tree = win.tree
    view = win.view
    leaf = int(np.flatnonzero(tree.feature < 0)[0])

    def right_click(point):
        QApplication.sendEvent(view.viewport(), QContextMenuEvent(
            QContextMenuEvent.Mouse, point, view.viewport().mapToGlobal(point)))
        menu = win.analysis.node_menu
        if menu is None:
            return None
        offered = {a.text(): a.isEnabled() for a in menu.actions() if a.text()}
        menu.close()
        win.analysis.node_menu = None
        return offered

    offered = []
    for node in (0, leaf):
        item = next(i for i in view.tree_scene().items()
                    if isinstance(i, NodeItem) and i.node == node)
        view.centerOn(item)
        offered.append(right_click(view.mapFromScene(item.sceneBoundingRect().center())))
    assert offered[0]["Collapse into a leaf"] and offered[0]["Re-solve this subtree optimally"]
    assert offered[0]["Change its split by hand…"] and offered[0]["Optimise below this split"]
    assert not offered[1]["Collapse into a leaf"]   # a leaf has nothing to collapse
    assert offered[1]["Split by hand…"] and not offered[1]["Optimise below this split"]
    assert "Show its rows" in offered[1]
    assert right_click(QPoint(1, 1)) is None   # no menu off the nodes
    win.close()


def test_an_edited_run_survives_a_session(qtbot, tmp_path):
    win = trained(qtbot, depth=2)
    run = win.current_run
    win.analysis.collapse_node(0)
    path = tmp_path / "s.orchard"
    assert win.files.save_session(path)
    win.close()
    other = open_window(qtbot, None)
    assert other.files.open_session(path)
    edited = other.results.runs[-1]
    assert edited.edited_from == run.number and edited.tree.edits
    frame = read_table(LOANS).frame
    assert (edited.tree.predict_frame(frame) == edited.tree.label[0]).all()
    other.close()


def ranked_dialog(qtbot, win, node):
    dialog = win.analysis.open_split_dialog(node)
    qtbot.waitUntil(lambda: dialog.splits is not None, timeout=60_000)
    return dialog


def test_a_split_by_hand_at_the_root_then_optimised_below(qtbot, tmp_path):
    """JMP's Split on Orchard's objective: the candidates ranked, a competitor chosen
    at the root, the optimal subtrees grown under it; each step an edit Undo knows,
    and a session keeps them."""
    win = trained(qtbot, depth=3)
    run = win.current_run
    dialog = ranked_dialog(qtbot, win, 0)
    splits = dialog.splits
    assert "Run #" in dialog.header.text() and "the root" in dialog.header.text()
    worths = [c.worth for c in splits.candidates]
    assert worths == sorted(worths, reverse=True)
    assert dialog.table.rowCount() == min(len(splits.candidates), 400)
    assert any("(its split now)" in dialog.table.item(i, 0).text()
               for i in range(dialog.table.rowCount()))
    # a competitor: the best split on a column the root does not test
    root_column = run.tree.features[run.tree.feature[0]].column
    row = next(i for i, c in enumerate(dialog._rows)
               if win.dataset.features[c.feature].column != root_column)
    competitor = dialog._rows[row]
    dialog.table.selectRow(row)
    assert dialog.chosen is competitor
    dialog.optimise_button.click()
    split = win.current_run
    assert split.edited_from == run.number and f"'{competitor.condition}'" in split.message
    assert split.tree.is_leaf(int(split.tree.left[0]))
    assert split.train_error == error_on_rows(win, split.tree)
    qtbot.waitUntil(lambda: not win.editor.busy, timeout=120_000)
    optimised = win.current_run
    assert optimised.edited_from == split.number
    assert "optimised below the root" in optimised.message
    assert optimised.tree.features[optimised.tree.feature[0]].condition(
        True, float(optimised.tree.threshold[0])) == competitor.condition
    assert optimised.train_error == error_on_rows(win, optimised.tree) <= split.train_error
    assert optimised.tree.depth <= 3

    path = tmp_path / "s.orchard"
    assert win.files.save_session(path)
    win.undo_action.trigger()
    assert win.current_run is split
    win.undo_action.trigger()
    assert win.current_run is run and [r.number for r in win.state.runs] == [run.number]
    win.close()
    other = open_window(qtbot, None)
    assert other.files.open_session(path)
    reopened = other.results.runs[-1]
    assert reopened.tree.edits == optimised.tree.edits
    frame = read_table(LOANS).frame
    assert (reopened.tree.predict_frame(frame) == optimised.tree.predict_frame(frame)).all()
    other.close()


def test_a_typed_threshold_splits_a_leaf_where_the_user_says(qtbot):
    win = trained(qtbot, depth=1)
    tree = win.tree
    leaf = int(np.flatnonzero(tree.feature < 0)[0])
    dialog = ranked_dialog(qtbot, win, leaf)
    assert not dialog.surrogates.isVisible()   # a leaf has no split to stand in for
    row = next(i for i, c in enumerate(dialog._rows)
               if not win.dataset.features[c.feature].binary)
    dialog.table.selectRow(row)
    assert dialog.threshold_edit.isEnabled()
    dialog.threshold_edit.setText("not a number")
    dialog.try_button.click()
    assert "is not a number" in dialog.choice_label.text()
    column = win.dataset.features[dialog._rows[row].feature].column
    values = win.dataset.X[:, dialog._rows[row].feature]
    typed = float(np.median(values))
    dialog.threshold_edit.setText(str(typed))
    dialog.try_button.click()
    assert dialog.chosen.threshold == typed and dialog.chosen.condition.startswith(column)
    dialog.split_button.click()
    edited = win.current_run
    assert edited.tree.threshold[leaf] == typed and not edited.tree.is_leaf(leaf)
    assert edited.train_error == error_on_rows(win, edited.tree)
    # a 0/1 candidate takes no threshold of its own
    dialog = ranked_dialog(qtbot, win, int(edited.tree.left[leaf]))
    binary = [i for i, c in enumerate(dialog._rows) if win.dataset.features[c.feature].binary]
    if binary:
        dialog.table.selectRow(binary[0])
        assert not dialog.threshold_edit.isEnabled()
    # another run selected: the dialog, which belongs to this one, closes
    win.results.select_runs([win.state.runs[0].number])
    assert win.analysis.split_dialog is None
    win.close()


def test_a_group_of_values_typed_by_hand_splits_the_root(qtbot, tmp_path):
    from test_gui_support import write_people_csv

    win = open_window(qtbot, write_people_csv(tmp_path / "people.csv"), algorithm="greedy")
    win.depth_spin.setValue(2)
    run_and_wait(qtbot, win)
    dialog = ranked_dialog(qtbot, win, 0)
    row = next(i for i, c in enumerate(dialog._rows)
               if win.dataset.features[c.feature].column == "colour")
    dialog.table.selectRow(row)
    assert dialog.values_button.isEnabled()
    numeric = next(i for i, c in enumerate(dialog._rows)
                   if win.dataset.features[c.feature].column == "age")
    dialog.table.selectRow(numeric)
    assert not dialog.values_button.isEnabled()   # a number has thresholds, not values
    dialog.table.selectRow(row)
    dialog.choose_values(["red", "green"])
    assert dialog.chosen.condition.startswith("colour in {")
    dialog.optimise_button.click()
    qtbot.waitUntil(lambda: not win.editor.busy, timeout=60_000)
    root = win.tree.features[win.tree.feature[0]]
    assert root.column == "colour" and set(root.value) == {"red", "green"}
    assert win.current_run.train_error == error_on_rows(win, win.tree)
    win.close()
