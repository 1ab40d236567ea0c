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


def test_a_value_group_is_cut_between_values_and_copied_whole(qtbot, tmp_path):
    """Value groups were cut mid-word on the nodes ("carrier in {Alaska Air, Unit…")
    and Copy rule copied the group's first four values only."""
    from PySide6.QtWidgets import QApplication

    from gui.tree_scene import NodeItem

    names = [f"Carrier number {i} Airlines" for i in range(24)]
    rng = np.random.default_rng(3)
    cells = rng.choice(names, 600)
    path = tmp_path / "carriers.csv"
    path.write_text("carrier,late\n" + "".join(
        f"{c},{'yes' if int(c.split()[2]) % 2 else 'no'}\n" for c in cells))
    win = open_window(qtbot, path, algorithm="greedy")
    win.depth_spin.setValue(1)
    run_and_wait(qtbot, win)
    tree = win.tree
    group = tree.features[tree.feature[0]].value
    assert len(group) > 4
    item = next(i for i in win.view.tree_scene().items()
                if isinstance(i, NodeItem) and i.node == 0)
    shown = item.title
    if shown.endswith(" values}"):   # not even one value fits the box
        assert shown.endswith(f"{{{len(group)} values}}")
    else:
        assert shown.endswith("more}") and "…" not in shown.replace("… and", "")
        inner = shown[shown.index("{") + 1:shown.rindex(", … and")]
        assert all(value in group for value in inner.split(", "))   # whole values only
    leaf = int(tree.left[0])
    win.analysis.show_node(leaf)
    qtbot.waitUntil(lambda: win.data_view.copy_rule_button.isVisible(), timeout=10_000)
    win.data_view.copy_rule_button.click()
    copied = QApplication.clipboard().text()
    assert "more}" not in copied
    assert set(copied[copied.index("{") + 1:copied.rindex("}")].split(", ")) == set(group)
    win.close()


def test_fewer_values_drops_whole_values_then_counts_them():
    from gui.tree_scene import fewer_values

    assert fewer_values("carrier in {AA, UA, DL, WN, … and 12 more} (missing: no)") == [
        "carrier in {AA, UA, DL, … and 13 more} (missing: no)",
        "carrier in {AA, UA, … and 14 more} (missing: no)",
        "carrier in {AA, … and 15 more} (missing: no)",
        "carrier in {16 values} (missing: no)"]
    assert fewer_values("age <= 37.5") == []
