"""Runs named and annotated in the history, kept by sessions, and the history
exported as CSV (issue 46, item 5)."""

import csv

from PySide6.QtCore import Qt
from test_gui_support import LOANS, isolated_settings, open_window, run_and_wait  # noqa: F401

from gui.results_panel import HISTORY_COLUMNS


def history_index(win, run, column):
    view = win.results
    return view.sorted_history.index(view.view_row(run.number),
                                     HISTORY_COLUMNS.index(column))


def test_a_named_and_annotated_run_is_kept_by_the_session_and_the_csv(qtbot, tmp_path):
    win = open_window(qtbot, LOANS, algorithm="greedy")
    win.depth_spin.setValue(2)
    first = run_and_wait(qtbot, win) and win.current_run
    win.depth_spin.setValue(3)
    second = run_and_wait(qtbot, win) and win.current_run
    session = tmp_path / "s.orchard"
    assert win.files.save_session(session) and not win.unsaved

    model = win.results.sorted_history
    index = history_index(win, second, "Name")
    assert model.flags(index) & Qt.ItemIsEditable
    assert not model.flags(history_index(win, second, "Error")) & Qt.ItemIsEditable
    assert model.setData(index, "  deeper\n  tree ")   # one line, spaces tidied
    assert model.setData(history_index(win, second, "Note"), "for the credit committee")
    assert second.name == "deeper tree"
    assert second.label.startswith(f"#{second.number} “deeper tree” ")
    assert win.current_run is second and "“" in win.summary_label.text()
    assert win.unsaved   # naming is a change a session would save

    out = tmp_path / "history.csv"
    assert win.files.export_history(out)
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert [r["run"] for r in rows] == [str(first.number), str(second.number)]
    assert rows[1]["name"] == second.name and rows[1]["note"] == "for the credit committee"
    assert float(rows[0]["train_error"]) == first.train_error
    assert int(rows[1]["leaves"]) == second.tree.n_leaves
    assert rows[1]["depth_limit"] == "3" and rows[0]["name"] == ""

    assert win.files.save_session(session)
    win.close()
    other = open_window(qtbot, None)
    assert other.files.open_session(session)
    reopened = other.state.run(second.number)
    assert (reopened.name, reopened.note) == (second.name, second.note)
    other.close()
