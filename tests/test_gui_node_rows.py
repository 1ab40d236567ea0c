"""Node -> rows: a click on a tree node shows exactly the rows that reach it in the
data table, with its rule, class counts and error; Show all rows undoes it."""

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from test_gui_support import LOANS, isolated_settings, open_window, run_and_wait  # noqa: F401

from engine.data.csv_reader import read_table
from gui.tree_scene import NodeItem


def click_node(qtbot, win, node: int) -> None:
    view = win.view
    item = next(i for i in view.tree_scene().items()
                if isinstance(i, NodeItem) and i.node == node)
    view.centerOn(item)
    point = view.mapFromScene(item.sceneBoundingRect().center())
    qtbot.mouseClick(view.viewport(), Qt.LeftButton, pos=point)
    qtbot.waitUntil(lambda: win.data_view.node_bar.isVisible(), timeout=10_000)


def test_a_click_on_a_node_filters_its_rows(qtbot):
    win = open_window(qtbot, LOANS, algorithm="greedy")
    win.depth_spin.setValue(2)
    run_and_wait(qtbot, win)
    tree = win.tree
    win.tabs.setCurrentIndex(1)
    qtbot.waitUntil(lambda: win.view.tree is tree, timeout=5000)
    node = int(tree.left[0])        # the root's left child
    click_node(qtbot, win, node)

    frame = read_table(LOANS).frame
    X = tree.prep.transform(frame)
    expected = np.flatnonzero(X[:, tree.feature[0]] <= tree.threshold[0])
    preview = win.data_view.preview
    assert preview.rowCount() == len(expected) == round(float(tree.value[node].sum()))
    shown = [int(preview.headerData(r, Qt.Vertical)) - 1 for r in range(preview.rowCount())]
    assert shown == expected.tolist()
    text = win.data_view.node_label.text()
    assert f"{len(expected):,} rows" in text and tree.condition(0, True) in win.data_view.node_rule
    assert win.tabs.currentIndex() == 0
    win.data_view.copy_rule_button.click()
    assert QApplication.clipboard().text() == win.data_view.node_rule
    win.data_view.all_rows_button.click()
    assert preview.rowCount() == 600 and not win.data_view.node_bar.isVisible()


def test_the_root_holds_every_row_and_a_leaf_its_error(qtbot):
    win = open_window(qtbot, LOANS, algorithm="greedy")
    win.depth_spin.setValue(1)
    run_and_wait(qtbot, win)
    tree = win.tree
    win.tabs.setCurrentIndex(1)
    qtbot.waitUntil(lambda: win.view.tree is tree, timeout=5000)
    leaf = int(tree.right[0])
    click_node(qtbot, win, leaf)
    counts = tree.value[leaf]
    errors = round(float(counts.sum() - counts.max()))
    assert f"{errors:,} of them misclassified" in win.data_view.node_label.text()
    # the right branch of a numeric test reads '>' on screen, not the entity '&gt;'
    label = win.data_view.node_label
    assert tree.branch_conditions(0)[1] in label.text() and "&gt;" not in label.text()
    assert label.textFormat() == Qt.PlainText
