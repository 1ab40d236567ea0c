"""Results and what leaves the window: test accuracy, confusion matrices, the run
history, exports (written and read back), and saved / reopened sessions."""

import json
import math
import sqlite3
import threading
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from test_gui_support import (  # noqa: F401
    LOAD_TIMEOUT,
    LOANS,
    isolated_settings,
    open_window,
    ready,
    RUN_TIMEOUT,
    run_and_validate,
    run_and_wait,
    write_people_csv,
)

from engine.data.csv_reader import read_table
from engine.errors import DataError
from engine.model.tree import Tree
from engine.solvers import solver_names
from gui.export_dialog import FORMATS
from gui.session import SUFFIX, load_session


def class_names(tree, frame):
    return [tree.class_names[i] for i in tree.predict_frame(frame)]


def raw_rows(frame):
    def cell(v):
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else v
    return [{k: cell(v) for k, v in zip(frame.columns, row)}
            for row in frame.itertuples(index=False, name=None)]


# --------------------------------------------------------------- evaluation
def test_cross_validation_results_and_confusion_matrices(qtbot):
    win = open_window(qtbot, LOANS)
    win.depth_spin.setValue(3)
    box = win.evaluation_box
    box.method_combo.setCurrentIndex(box.method_combo.findData("kfold"))
    box.folds_spin.setValue(4)
    box.seed_spin.setValue(3)
    run_and_validate(qtbot, win)
    run = win.current_run
    ev = run.evaluation
    assert ev is not None and ev.complete and len(ev.folds) == 4 and ev.plan.seed == 3
    assert ev.test_confusion().sum() == 600
    assert 0.5 < ev.mean_test_accuracy <= 1.0
    assert run.train_confusion.sum() == 600
    assert np.trace(run.train_confusion) == 600 - run.train_error
    panel = win.results
    assert "4-fold cross-validation: test accuracy" in panel.summary_text()
    assert panel.train_matrix.rowCount() == 2 and panel.test_matrix.rowCount() == 2
    assert panel.test_matrix.text(0, 0) == f"{ev.test_confusion()[0, 0]:,.0f}"
    assert panel.history.cell(run, 6) == f"{100 * ev.mean_test_accuracy:.1f}%"
    assert "test accuracy" in win.result_label.text()


def test_holdout_split(qtbot):
    win = open_window(qtbot, LOANS)
    box = win.evaluation_box
    box.method_combo.setCurrentIndex(box.method_combo.findData("holdout"))
    box.holdout_spin.setValue(20)
    run_and_validate(qtbot, win)
    ev = win.current_run.evaluation
    assert len(ev.folds) == 1 and ev.folds[0].n_test == 120 and ev.folds[0].n_train == 480
    assert "hold-out 20%" in win.results.summary_text()


def test_stop_during_testing_keeps_the_tree(qtbot, monkeypatch):
    import engine.evaluation

    real_train = engine.evaluation.train
    win = open_window(qtbot, LOANS)

    def train(data, algorithm, params, monitor):
        # as if Stop was pressed once the first split's solver had a tree
        monitor.on_incumbent = lambda *_: win.validator.stop()
        return real_train(data, algorithm, params, monitor=monitor)

    monkeypatch.setattr(engine.evaluation, "train", train)
    assert win.evaluation_box.plan().method == "kfold"   # the default
    result = run_and_validate(qtbot, win)
    assert result.tree is not None and win.tree is result.tree
    ev = win.current_run.evaluation
    assert not ev.complete and len(ev.folds) == 1
    assert "Testing was stopped." in win.results.summary_text()
    assert "1 of 5 folds, stopped" in win.results.summary_text()


def test_test_accuracy_arrives_after_the_tree(qtbot, monkeypatch):
    """The tree is on screen (and the window free) while its folds still train; the
    estimate then fills the run's summary, history row, figures and status line."""
    import engine.evaluation

    real_train, gate = engine.evaluation.train, threading.Event()

    def train(data, algorithm, params, monitor):
        gate.wait(10)
        return real_train(data, algorithm, params, monitor=monitor)

    monkeypatch.setattr(engine.evaluation, "train", train)
    win = open_window(qtbot, LOANS, algorithm="blossom")
    win.depth_spin.setValue(2)
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    result = run_and_wait(qtbot, win)
    run = win.current_run
    assert win.tree is result.tree and not win.running and win.validator.busy
    assert run.evaluation is None and win.figures.text("new_rows") == "new rows …"
    assert "estimating on new rows" in win.results.summary_text()
    assert win.stop_button.isEnabled() and win.run_button.isEnabled()
    gate.set()
    qtbot.waitUntil(lambda: not win.validator.busy, timeout=RUN_TIMEOUT)
    ev = run.evaluation
    assert ev.complete and len(ev.folds) == 5
    shown = f"{100 * ev.mean_test_accuracy:.1f}%"
    assert win.figures.text("new_rows") == f"new rows {shown}"
    assert win.results.history.cell(run, 6) == shown
    assert "5-fold cross-validation: test accuracy" in win.result_label.text()
    # each fold scored the baselines on its own test rows
    assert all(0 < f.majority_accuracy < 1 and 0 < f.greedy_accuracy <= 1
               for f in ev.folds)
    summary = win.results.summary_text()
    assert "Most common class, same rows" in summary and "Greedy tree, same depth" in summary


def test_a_new_run_stops_the_last_estimate(qtbot, monkeypatch):
    import engine.evaluation

    real_train, gate = engine.evaluation.train, threading.Event()

    def train(data, algorithm, params, monitor):
        gate.wait(10)
        return real_train(data, algorithm, params, monitor=monitor)

    monkeypatch.setattr(engine.evaluation, "train", train)
    win = open_window(qtbot, LOANS)
    run_and_wait(qtbot, win)
    first = win.current_run
    assert win.validator.busy
    gate.set()
    run_and_validate(qtbot, win)
    assert first.evaluation is None or not first.evaluation.complete
    said = first.evaluation.stopped_by if first.evaluation else first.message
    assert "Stopped when run #2 started" in said
    assert win.current_run.number == 2 and win.current_run.evaluation.complete


# ------------------------------------------------------------------ history
def test_history_compares_runs_side_by_side(qtbot):
    win = open_window(qtbot, LOANS)
    win.depth_spin.setValue(1)
    first = run_and_wait(qtbot, win)
    other = "blossom" if "blossom" in solver_names() else "greedy"
    win.set_algorithm(other)
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    win.depth_spin.setValue(3)
    second = run_and_wait(qtbot, win)
    history = win.results.history
    assert history.rowCount() == 2
    assert [history.cell(r, 0) for r in history.runs] == ["1", "2"]
    assert history.cell(history.runs[0], 2) == "1" and history.cell(history.runs[1], 2) == "3"
    assert history.runs[1].train_error <= history.runs[0].train_error
    win.results.select_runs([1, 2])
    assert len(win.chart._comparison) == 2          # both curves overlaid
    assert win.view.tree is second.tree
    win.results.run_activated.emit(history.runs[0])  # what a double-click does
    qtbot.waitUntil(lambda: win.view.tree is first.tree, timeout=5000)
    assert win.current_run.number == 1 and win.tree is first.tree
    assert win.results.summary_text().count("#1") == 1


# ------------------------------------------------------------------ exports
def test_exports_are_written_and_round_trip(qtbot, tmp_path):
    win = open_window(qtbot, LOANS)
    win.depth_spin.setValue(3)
    result = run_and_wait(qtbot, win)
    tree = result.tree
    dialog = win.files.export_dialog_all()
    assert dialog.isVisible()
    dialog.folder_edit.setText(str(tmp_path))
    dialog.name_edit.setText("loans")
    dialog.set_checked([f.key for f in FORMATS])
    for row in range(dialog.format_list.count()):   # every preview renders
        dialog.format_list.setCurrentRow(row)
    dialog.format_list.setCurrentRow(3)
    assert tree.condition(0, True) in dialog.text_preview.toPlainText()
    written = dialog.export_checked()
    assert sorted(p.name for p in written) == sorted(f"loans{f.suffix}" for f in FORMATS)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in written)

    frame = read_table(LOANS).frame
    expected = class_names(tree, frame)
    # JSON model: reloads and predicts the same
    again = Tree.load(tmp_path / "loans-model.json")
    assert class_names(again, frame) == expected
    # Python: the written module predicts every row as the model does
    namespace = {}
    exec(compile((tmp_path / "loans-model.py").read_text(), "loans-model.py", "exec"),  # noqa: S102
         namespace)
    assert [namespace["predict"](row) for row in raw_rows(frame)] == expected
    # SQL: the written expression, run by SQLite on the raw table
    numeric = {c.name for c in tree.prep.columns if c.numeric}
    con = sqlite3.connect(":memory:")
    names = list(frame.columns)
    con.execute("CREATE TABLE t (" + ", ".join(
        f'"{n}" {"REAL" if n in numeric else "TEXT"}' for n in names) + ")")
    con.executemany(f"INSERT INTO t VALUES ({', '.join('?' * len(names))})",
                    [[None if r[n] is None else float(r[n]) if n in numeric else r[n]
                      for n in names] for r in raw_rows(frame)])
    sql = (tmp_path / "loans-model.sql").read_text()
    expression = "\n".join(line for line in sql.splitlines() if not line.startswith("--"))
    assert [r[0] for r in con.execute(f"SELECT {expression} FROM t ORDER BY rowid")] == \
        expected
    # rules, DOT, pictures
    rules = (tmp_path / "loans-rules.txt").read_text()
    assert tree.condition(0, True) in rules
    assert (tmp_path / "loans-tree.dot").read_text().lstrip().startswith("digraph")
    image = QImage(str(tmp_path / "loans-tree.png"))
    assert not image.isNull() and image.width() > 200
    svg_text = " ".join(ET.parse(tmp_path / "loans-tree.svg").getroot().itertext())
    assert tree.condition(0, True) in svg_text
    assert (tmp_path / "loans-tree.pdf").read_bytes().startswith(b"%PDF")
    assert "Exported 8 file(s)" in win.result_label.text()


def test_export_errors_become_dialogs(qtbot, tmp_path):
    win = open_window(qtbot, LOANS)
    run_and_wait(qtbot, win)
    assert not win.files.export_image(tmp_path / "tree.bmp")
    assert ".png, .svg or .pdf" in win.last_error and win._message_box.isVisible()
    assert not win.files.export("rules", tmp_path / "missing" / "rules.txt")
    assert "Cannot write" in win.last_error
    dialog = win.files.export_dialog_all()
    dialog.folder_edit.setText(str(tmp_path / "nowhere"))
    assert dialog.export_checked() == []
    assert "does not exist" in win.last_error
    assert list(tmp_path.iterdir()) == []


def test_export_actions_follow_the_tree(qtbot):
    win = open_window(qtbot, LOANS)
    assert not win.export_action.isEnabled() and win.files.export_dialog_all() is None
    run_and_wait(qtbot, win)
    assert win.export_action.isEnabled() and win.export_image_action.isEnabled()
    assert all(a.isEnabled() for a in win.export_actions.values())


# ----------------------------------------------------------------- sessions
def configured_run(qtbot, win):
    win.data_panel.set_binarize("quantile:4")
    row = win.columns.names().index("income")
    win.columns.setData(win.columns.index(row, 4), "ignore")
    win.data_panel.set_missing("indicator")
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    win.depth_spin.setValue(2)
    win.algo_panel.form.editors["min_leaf"].setValue(3.0)
    box = win.evaluation_box
    box.method_combo.setCurrentIndex(box.method_combo.findData("kfold"))
    box.folds_spin.setValue(3)
    return run_and_validate(qtbot, win)


def test_session_saves_and_reopens(qtbot, tmp_path):
    win = open_window(qtbot, LOANS)
    result = configured_run(qtbot, win)
    features = win.dataset.n_features
    path = tmp_path / f"work{SUFFIX}"
    assert win.files.save_session(path)
    saved = json.loads(path.read_text())
    assert saved["format"] == "orchard-session" and len(saved["runs"]) == 1
    assert saved["data_settings"]["columns"] == {"income": "ignore"}

    other = open_window(qtbot)
    with qtbot.waitSignal(other.prepared, timeout=LOAD_TIMEOUT):
        assert other.files.open_session(path)
    qtbot.waitUntil(lambda: ready(other), timeout=LOAD_TIMEOUT)
    assert other.path.resolve() == LOANS.resolve()
    assert other.data_panel.binarize() == "quantile:4"
    assert other.data_panel.missing() == "indicator"
    assert other.columns.choice("income") == "ignore"
    assert other.dataset.n_features == features
    assert other.algorithm() == "greedy" and other.depth_spin.value() == 2
    assert other.params()["min_leaf"] == 3.0
    assert other.evaluation_box.plan().k == 3
    runs = other.results.runs
    assert len(runs) == 1
    frame = read_table(LOANS).frame
    assert class_names(runs[0].tree, frame) == class_names(result.tree, frame)
    assert runs[0].evaluation.test_accuracies == win.current_run.evaluation.test_accuracies
    assert runs[0].incumbents == win.current_run.incumbents
    assert other.view.tree is runs[0].tree
    # the next run continues the numbering
    assert run_and_wait(qtbot, other) is not None
    assert [r.number for r in other.results.runs] == [1, 2]


def test_session_next_to_its_data_survives_a_move(qtbot, tmp_path):
    data = write_people_csv(tmp_path / "a" / "people.csv") if (tmp_path / "a").mkdir() \
        is None else None
    win = open_window(qtbot, data)
    run_and_wait(qtbot, win)
    win.files.save_session(tmp_path / "a" / f"s{SUFFIX}")
    moved = tmp_path / "b"
    (tmp_path / "a").rename(moved)
    other = open_window(qtbot)
    with qtbot.waitSignal(other.prepared, timeout=LOAD_TIMEOUT):
        other.load_path(moved / f"s{SUFFIX}")      # a session opens through Open too
    assert other.path.resolve() == (moved / "people.csv").resolve()


def test_session_whose_data_is_gone_still_shows_its_runs(qtbot, tmp_path):
    data = write_people_csv(tmp_path / "people.csv")
    win = open_window(qtbot, data)
    run_and_wait(qtbot, win)
    win.files.save_session(tmp_path / f"s{SUFFIX}")
    data.unlink()
    other = open_window(qtbot)
    assert other.files.open_session(tmp_path / f"s{SUFFIX}")
    assert "no longer exists" in other.last_error and other._message_box.isVisible()
    assert len(other.results.runs) == 1 and other.view.tree is other.results.runs[0].tree


@pytest.mark.parametrize("content", ["{not json", json.dumps({"format": "something"}),
                                     json.dumps({"format": "orchard-session", "runs": [{}]})])
def test_a_bad_session_file_is_a_dialog(qtbot, tmp_path, content):
    path = tmp_path / f"bad{SUFFIX}"
    path.write_text(content)
    win = open_window(qtbot)
    assert not win.files.open_session(path)
    assert win._message_box.isVisible() and "session" in win.last_error
    with pytest.raises(DataError):
        load_session(path)


def test_history_table_is_sortable_text(qtbot):
    win = open_window(qtbot, LOANS)
    run_and_wait(qtbot, win)
    model = win.results.history
    headers = [model.headerData(c, Qt.Horizontal) for c in range(model.columnCount())]
    assert headers[:3] == ["#", "Algorithm", "Depth"] and "Test acc." in headers
    assert model.data(model.index(0, 6)) == "—"    # no test plan: no test accuracy


def test_a_run_without_a_curve_says_why_over_the_empty_chart(qtbot):
    """A greedy run's chart was empty, without a word."""
    from test_gui_support import LOANS, open_window, run_and_wait

    win = open_window(qtbot, LOANS, algorithm="greedy")
    run_and_wait(qtbot, win)
    note = win.chart.note
    assert note.isVisible() and "found its tree in one step" in note.text()
    assert "Training error" in note.text()
    win.analysis.collapse_node(0)
    assert note.isVisible() and "Edited by hand from run #1" in note.text()
    win.set_algorithm("blossom")
    win.depth_spin.setValue(3)
    from test_gui_support import ready
    qtbot.waitUntil(lambda: ready(win), timeout=30_000)
    run_and_wait(qtbot, win)
    if len(win.current_run.incumbents) >= 2:
        assert not note.isVisible()
    win.close()
