"""Row -> path by typing: Run → Test a row lights the typed row's path in the tree, and
a row chosen in the data table lights its path through a decision diagram too."""

import pytest
from conftest import SAMPLES
from optimal_trees import path_to_leaf
from test_gui_row_path import choose
from test_gui_support import LOANS, isolated_settings, open_window, run_and_wait  # noqa: F401

from engine.data.csv_reader import read_table
from engine.model.diagram import Diagram
from engine.solvers import solver_names


def test_a_typed_row_lights_its_path_and_says_its_class(qtbot):
    win = open_window(qtbot, LOANS, algorithm="greedy")
    win.depth_spin.setValue(3)
    run_and_wait(qtbot, win)
    tree = win.tree
    qtbot.waitUntil(lambda: win.view.tree is tree, timeout=5000)
    form = win.analysis.row_form()
    frame = read_table(LOANS).frame
    assert list(form.fields) == [c.name for c in tree.prep.columns]
    assert form.fields["age"].text() == frame["age"].iloc[0]   # starts from row 1
    X = tree.prep.transform(frame)
    for row in (7, 250):
        form.set_values({name: frame[name].iloc[row] or "" for name in form.fields})
        form.show_button.click()
        assert win.view.tree_scene().highlighted_nodes() == sorted(path_to_leaf(tree, X[row]))
        assert form.answer.text().startswith(
            f"This row: run #1 predicts {tree.class_names[tree.predict(X[row:row + 1])[0]]}")
    # every field empty: each value missing, filled as in training
    form.set_values({})
    form.show_button.click()
    filled = tree.prep.transform(form.row())
    assert win.view.tree_scene().highlighted_nodes() == sorted(path_to_leaf(tree, filled[0]))
    form.fields["age"].setText("not a number")
    form.show_button.click()
    assert form.answer.text() == ("This row cannot go through run #1: Column 'age' "
                                  "has the non-numeric value 'not a number' (row 1).")
    form.close()
    win.close()


def test_a_chosen_row_lights_its_path_through_a_diagram(qtbot):
    if "odd" not in solver_names():
        pytest.skip("the 'odd' solver is not registered")
    path = SAMPLES / "play_tennis.csv"
    win = open_window(qtbot, path, algorithm="odd")
    win.depth_spin.setValue(3)
    win.time_spin.setValue(60)
    diagram = run_and_wait(qtbot, win).tree
    assert isinstance(diagram, Diagram)
    qtbot.waitUntil(lambda: win.view.tree is diagram, timeout=5000)
    X = diagram.prep.transform(read_table(path).frame)
    for row in range(len(X)):
        visited = []
        end = diagram.walk(X[row:row + 1], lambda node, rows, seen=visited: rows.size and seen.append(node))
        choose(win, row)
        assert win.view.tree_scene().highlighted_nodes() == sorted(visited + [int(end[0])])
        name = diagram.class_names[diagram.label(int(end[0]))]
        assert win.result_label.text().startswith(f"Row {row + 1}: run #1 predicts {name}")
    win.close()


def test_a_text_column_offers_the_values_seen_not_only_the_tested_one(qtbot, tmp_path):
    """A two-valued column (one 0/1 feature, "colour = red") offered "red" alone."""
    from test_gui_support import ready

    path = tmp_path / "two.csv"
    path.write_text("colour,size,buys\n" + "".join(
        f"{c},{s},{'yes' if c == 'red' else 'no'}\n"
        for c, s in [("red", 1)] * 40 + [("blue", 2)] * 20))
    win = open_window(qtbot, path, algorithm="greedy")
    qtbot.waitUntil(lambda: ready(win), timeout=30_000)
    win.depth_spin.setValue(1)
    run_and_wait(qtbot, win)
    form = win.analysis.row_form()
    field = form.fields["colour"]
    offered = [field.itemData(i) for i in range(field.count())]
    assert [f.value for f in win.tree.features if f.column == "colour"] == ["red"]
    assert {"red", "blue"} <= set(offered)
    field.set_value("blue")
    form.show_button.click()
    assert "predicts no" in form.answer.text()
    form.close()
    win.close()
