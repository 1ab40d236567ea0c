"""Row -> path: choosing a row in the data table lights its path in the tree and
says its prediction; within a node's rows the file's row is the one routed."""

import numpy as np
from optimal_trees import path_to_leaf
from test_gui_support import LOANS, isolated_settings, open_window, run_and_wait  # noqa: F401

from engine.data.csv_reader import read_table


def choose(win, row: int) -> None:
    view = win.data_view.preview_view
    view.setCurrentIndex(view.model().index(row, 0))


def test_a_chosen_row_lights_its_path(qtbot):
    win = open_window(qtbot, LOANS, algorithm="greedy")
    win.depth_spin.setValue(3)
    run_and_wait(qtbot, win)
    tree = win.tree
    qtbot.waitUntil(lambda: win.view.tree is tree, timeout=5000)
    X = tree.prep.transform(read_table(LOANS).frame)
    predicted = tree.predict(X)
    for row in (0, 5, 123, 599):
        choose(win, row)
        assert win.view.tree_scene().highlighted_nodes() == sorted(path_to_leaf(tree, X[row]))
        status = win.result_label.text()
        assert status.startswith(f"Row {row + 1}: run #1 predicts {tree.class_names[predicted[row]]}")

    win.analysis.node_found(win.current_run, int(tree.left[0]), "rule",
                    np.flatnonzero(X[:, tree.feature[0]] <= tree.threshold[0]),
                    np.zeros(tree.value.shape[1], dtype=int))
    first = int(np.flatnonzero(X[:, tree.feature[0]] <= tree.threshold[0])[3])
    choose(win, 3)
    assert win.result_label.text().startswith(f"Row {first + 1}:")
    assert win.view.tree_scene().highlighted_nodes() == sorted(path_to_leaf(tree, X[first]))
