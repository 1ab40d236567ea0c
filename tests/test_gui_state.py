"""What the window shows belongs to one run and says which (issue 14, "honest screens").

A new run clears the previous run's tree, curve and selected history row until its
own first tree arrives; a run that ends without a tree says so; the history, tree,
chart and status line agree after comparing runs and after sorting the history;
sessions keep each run's own data file; the side panel fits the window and stays put
after Stop; the Export dialog previews the whole picture.
"""

import json
import threading
import time

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QWidget
from test_gui_support import (  # noqa: F401
    LOAD_TIMEOUT,
    LOANS,
    isolated_settings,
    open_window,
    ready,
    run_and_wait,
    write_people_csv,
)

import gui.runs
from engine.model.tree import Tree
from engine.solvers import solver_names
from engine.solvers.protocol import Result
from gui.main_window import TAB_RESULTS, MainWindow
from gui.results_panel import HISTORY_COLUMNS
from gui.session import SUFFIX, load_session

DATASET = HISTORY_COLUMNS.index("Dataset")


def gated_train(gate: threading.Event):
    """A stand-in solver that finds nothing until `gate` opens, then publishes a leaf
    every 10 ms until stopped (stopped before the gate: no tree at all)."""
    def train(data, algorithm, params=None, time_limit=None, monitor=None,
              on_incumbent=None):
        monitor.start()
        counts = np.bincount(data.y, weights=data.w, minlength=data.n_classes)
        tree = Tree.leaf(counts, data.prep)
        error = float(counts.sum() - counts.max())
        while not monitor.should_stop():
            if gate.is_set():
                monitor.publish(tree, error, 0.0)
            time.sleep(0.01)
        found = bool(monitor.incumbents)
        return Result(tree if found else None, error if found else 0.0, 0.0, False,
                      monitor.final_status(False), monitor.elapsed(),
                      list(monitor.incumbents))
    return train


def selected_numbers(win) -> list[int]:
    return [r.number for r in win.results.selected_runs()]


def click_row(qtbot, win, number: int, modifier=Qt.NoModifier, double=False) -> None:
    """Click the history row of run `number` where the view shows it now."""
    view = win.results.history_view
    row = win.results.view_row(number)
    assert row >= 0
    rect = view.visualRect(win.results.sorted_history.index(row, 0))
    click = qtbot.mouseDClick if double else qtbot.mouseClick
    click(view.viewport(), Qt.LeftButton, modifier, rect.center())


def assert_shows(win, run) -> None:
    """Tree, Results summary, chart, figures and status line all describe `run`."""
    assert win.current_run is run
    if run.tree is not None:
        assert win.tree is run.tree and win.view.tree is run.tree
    assert f"(#{run.number})" in win.results.summary_text()
    assert win.result_label.text().startswith(f"#{run.number} {run.title}")
    assert win.figures.text("status") == run.status_text


# ------------------------------------------------------------ a new run
def test_a_second_run_shows_nothing_of_the_first_before_its_own_tree(qtbot, monkeypatch):
    win = open_window(qtbot, LOANS)
    win.depth_spin.setValue(2)
    first = run_and_wait(qtbot, win)
    qtbot.waitUntil(lambda: win.view.tree is first.tree, timeout=5000)
    assert win.chart.points and selected_numbers(win) == [1]

    gate = threading.Event()
    monkeypatch.setattr(gui.runs, "train", gated_train(gate))
    win.run_button.click()
    for _ in range(2):   # at once, and still after a while without a tree
        assert win.running
        assert win.view.tree is None and win.view.tree_scene() is None
        assert win.tree is None and win.current_run is None
        assert not win.export_action.isEnabled()
        xs, _ = win.chart.error_curve.getData()
        assert xs is None or len(xs) == 0
        assert win.chart.gap_fill.path().isEmpty() and win.chart.points == []
        assert win.chart.title.startswith("#2 ") and "#1" not in win.chart.title
        assert selected_numbers(win) == []
        assert "#2" in win.result_label.text()
        assert "#2" in win.results.summary_text() and "#1" not in win.results.summary_text()
        texts = [i.text() for i in win.view.scene().items() if hasattr(i, "text")]
        assert any("waiting for its first tree" in t and "#2" in t for t in texts)
        qtbot.wait(400)

    gate.set()   # its first tree arrives and is drawn as the run's own
    qtbot.waitUntil(lambda: win.view.tree is not None, timeout=5000)
    assert win.view.tree is not first.tree and win.tree is win.view.tree
    with qtbot.waitSignal(win.run_ended, timeout=10_000):
        win.stop()
    second = win.current_run
    assert second.number == 2 and selected_numbers(win) == [2]
    assert_shows(win, second)


def test_a_run_stopped_before_its_first_tree_says_so(qtbot, monkeypatch):
    win = open_window(qtbot, LOANS)
    first = run_and_wait(qtbot, win)
    monkeypatch.setattr(gui.runs, "train", gated_train(threading.Event()))
    win.run_button.click()
    qtbot.wait(200)
    with qtbot.waitSignal(win.run_ended, timeout=10_000):
        win.stop()
    run = win.current_run
    assert run.number == 2 and run.tree is None and run.status == "cancelled"
    assert win.view.tree is None and win.tree is None and first.tree is not None
    texts = [i.text() for i in win.view.scene().items() if hasattr(i, "text")]
    assert any("#2" in t and "stopped before it found a tree" in t and "longer" in t
               for t in texts)
    assert win.result_label.text().startswith("#2 ") and "no tree" in win.result_label.text()
    assert selected_numbers(win) == [2]
    assert not win.export_action.isEnabled()


# ------------------------------------------------- history, tree, status
def three_runs(qtbot, win, depths=(1, 2, 3)) -> list:
    for k, depth in enumerate(depths, 1):
        win.depth_spin.setValue(depth)
        run_and_wait(qtbot, win)
        assert selected_numbers(win) == [k]          # the new run's row, alone
        assert_shows(win, win.current_run)
    return win.results.runs


def test_compare_then_single_select_keeps_history_tree_chart_and_status_together(qtbot):
    win = open_window(qtbot, LOANS)
    runs = three_runs(qtbot, win)
    win.tabs.setCurrentIndex(TAB_RESULTS)
    click_row(qtbot, win, 1)
    assert selected_numbers(win) == [1]
    assert_shows(win, runs[0])
    assert win.chart.title.startswith("#1 ") and not win.chart._comparison

    click_row(qtbot, win, 2, Qt.ControlModifier)   # compare #1 and #2
    assert selected_numbers(win) == [1, 2]
    assert len(win.chart._comparison) == 2
    assert_shows(win, runs[1])                      # the row clicked last
    assert "#2" in win.chart.title and "comparing" in win.result_label.text()

    click_row(qtbot, win, 3, Qt.ControlModifier)
    assert selected_numbers(win) == [1, 2, 3] and len(win.chart._comparison) == 3
    assert_shows(win, runs[2])

    click_row(qtbot, win, 1)                         # back to one run: #1 everywhere
    assert selected_numbers(win) == [1]
    assert_shows(win, runs[0])
    assert not win.chart._comparison and win.chart.title.startswith("#1 ")
    assert "comparing" not in win.result_label.text()
    assert win.chart.points[-1][1] == runs[0].train_error

    # a new run clears the comparison and the selection, then selects its own row
    win.depth_spin.setValue(1)
    click_row(qtbot, win, 2, Qt.ControlModifier)
    assert len(win.chart._comparison) == 2
    run_and_wait(qtbot, win)
    assert selected_numbers(win) == [4] and not win.chart._comparison
    assert_shows(win, win.results.runs[-1])


def test_sorting_the_history_keeps_rows_mapped_to_their_runs(qtbot):
    win = open_window(qtbot, LOANS)
    runs = three_runs(qtbot, win, depths=(1, 3, 2))
    win.tabs.setCurrentIndex(TAB_RESULTS)
    view = win.results.history_view
    header = view.horizontalHeader()
    depth = HISTORY_COLUMNS.index("Depth")
    x = header.sectionViewportPosition(depth) + header.sectionSize(depth) // 2
    qtbot.mouseClick(header.viewport(), Qt.LeftButton, pos=QPoint(x, header.height() // 2))
    proxy = win.results.sorted_history
    order = [proxy.index(r, depth).data() for r in range(proxy.rowCount())]
    assert order in (["1", "2", "3"], ["3", "2", "1"]) and order != ["1", "3", "2"]
    for row in range(proxy.rowCount()):
        run = win.results.run_at(proxy.index(row, 0))
        assert proxy.index(row, 0).data() == str(run.number)
        assert proxy.index(row, depth).data() == str(run.depth_limit)
    assert selected_numbers(win) == [3]              # the selection followed its run

    top = win.results.run_at(proxy.index(0, 0))
    click_row(qtbot, win, top.number)
    assert view.selectionModel().selectedRows()[0].row() == 0
    assert_shows(win, top)
    click_row(qtbot, win, 2)                         # the run with depth 3
    assert win.current_run is runs[1] and win.current_run.depth_limit == 3
    assert_shows(win, runs[1])
    win.show_run(runs[2], switch_tab=False)          # from the window: its row follows
    assert selected_numbers(win) == [3]
    assert view.selectionModel().selectedRows()[0].row() == win.results.view_row(3)

    # a new run lands in its sorted place and is the row selected
    win.depth_spin.setValue(2)
    run_and_wait(qtbot, win)
    assert selected_numbers(win) == [4]
    row = view.selectionModel().selectedRows()[0].row()
    assert win.results.run_at(proxy.index(row, 0)).number == 4
    assert_shows(win, win.results.runs[-1])
    # a double-click shows that row's run, wherever sorting put it
    win.tabs.setCurrentIndex(TAB_RESULTS)
    click_row(qtbot, win, 1, double=True)
    assert_shows(win, runs[0])


# ---------------------------------------------------------------- sessions
def test_a_session_keeps_each_runs_data_file(qtbot, tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    people = write_people_csv(tmp_path / "a" / "people.csv")
    others = write_people_csv(tmp_path / "b" / "others.csv", rows=90)
    win = open_window(qtbot, people)
    run_and_wait(qtbot, win)
    win.load_path(others)
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    assert selected_numbers(win) == [] and win.current_run is None
    run_and_wait(qtbot, win)
    first, second = win.results.runs
    assert (first.data_name, second.data_name) == ("people.csv", "others.csv")
    assert first.data_path == str(people.resolve())
    history = win.results.history
    assert history.cell(first, DATASET) == "people.csv"
    assert history.cell(second, DATASET) == "others.csv"
    assert win.result_label.text().startswith("#2 Greedy") and "others.csv" in \
        win.result_label.text()

    path = tmp_path / f"two-files{SUFFIX}"
    assert win.files.save_session(path)
    saved = json.loads(path.read_text())
    assert [r["data_name"] for r in saved["runs"]] == ["people.csv", "others.csv"]
    assert [r["data_path"] for r in saved["runs"]] == [str(people.resolve()),
                                                       str(others.resolve())]

    other = open_window(qtbot)
    with qtbot.waitSignal(other.prepared, timeout=LOAD_TIMEOUT):
        assert other.files.open_session(path)
    qtbot.waitUntil(lambda: ready(other), timeout=LOAD_TIMEOUT)
    restored = other.results.runs
    assert [r.data_name for r in restored] == ["people.csv", "others.csv"]
    assert [r.data_path for r in restored] == [str(people.resolve()), str(others.resolve())]
    assert [other.results.history.cell(r, DATASET) for r in restored] == \
        ["people.csv", "others.csv"]
    assert selected_numbers(other) == [2] and other.current_run is restored[1]
    other.show_run(restored[0])
    assert "people.csv" in other.result_label.text() and "people.csv" in \
        other.results.summary_text()

    # a session saved before runs kept their file: the session's file is theirs
    old = json.loads(path.read_text())
    for run in old["runs"]:
        del run["data_name"], run["data_path"]
        run["data_settings"].pop("file", None)
    old_path = tmp_path / f"old{SUFFIX}"
    old_path.write_text(json.dumps(old))
    session = load_session(old_path)
    assert [r.data_name for r in session.runs] == ["others.csv", "others.csv"]
    assert all(r.data_path == saved["data_path"] for r in session.runs)
    # ... unless the run's own settings name its file
    old["runs"][0]["data_settings"]["file"] = "people.csv"
    old_path.write_text(json.dumps(old))
    session = load_session(old_path)
    assert [r.data_name for r in session.runs] == ["people.csv", "others.csv"]
    assert session.runs[0].data_path is None
    assert session.runs[1].data_path == saved["data_path"]


# ------------------------------------------------------------------ layout
def panel_clipped(win: MainWindow) -> list[str]:
    """The side panel's visible widgets that stick out sideways: the settings out of
    the scroll area's viewport, Run / Stop and their hint out of the side panel."""
    scroll = win.panel_scroll
    out = []
    for frame, inner in ((scroll.viewport(), scroll.widget()), (win.side_panel, win.run_bar)):
        for widget in inner.findChildren(QWidget):
            if not widget.isVisibleTo(inner) or widget.width() == 0:
                continue
            left = widget.mapTo(frame, QPoint(0, 0)).x()
            if left < 0 or left + widget.width() > frame.width():
                name = widget.text() if hasattr(widget, "text") else ""
                out.append(f"{type(widget).__name__} {name!r}: x {left}.."
                           f"{left + widget.width()} of {frame.width()}")
    return out


def fully_in_window(win: MainWindow, widget: QWidget) -> bool:
    top_left = widget.mapTo(win, QPoint(0, 0))
    return win.rect().contains(widget.rect().translated(top_left))


def panel_place(win: MainWindow) -> tuple[int, ...]:
    scroll = win.panel_scroll
    panel = scroll.widget()
    return (win.side_panel.mapTo(win, QPoint(0, 0)).x(), win.side_panel.width(),
            scroll.width(), panel.mapTo(win, QPoint(0, 0)).x(), panel.width(),
            win.run_button.mapTo(win, QPoint(0, 0)).x(), win.stop_button.width())


@pytest.mark.parametrize("size", [(1280, 720), (1600, 1000)])
def test_side_panel_fits_and_stays_put_after_stop(qtbot, monkeypatch, size):
    algorithm = "blossom" if "blossom" in solver_names() else "greedy"
    monkeypatch.setattr(gui.runs, "train", gated_train(threading.Event()))
    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(*size)
    win.show()
    win.activateWindow()
    win.set_algorithm(algorithm)   # blossom: quantile thresholds, the widest panel
    win.load_path(LOANS)
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    qtbot.wait(100)
    assert panel_clipped(win) == []
    assert fully_in_window(win, win.run_button) and fully_in_window(win, win.stop_button)
    before = panel_place(win)
    QTest.mouseClick(win.run_button, Qt.LeftButton)  # as the user does: Run takes focus
    qtbot.waitUntil(lambda: win.running, timeout=5000)
    qtbot.wait(200)
    assert panel_clipped(win) == []
    with qtbot.waitSignal(win.run_ended, timeout=10_000):
        QTest.mouseClick(win.stop_button, Qt.LeftButton)
    qtbot.wait(200)
    assert panel_clipped(win) == []
    assert panel_place(win) == before
    assert win.panel_scroll.horizontalScrollBar().value() == 0


# ------------------------------------------------------------------ export
def test_export_preview_shows_the_whole_picture(qtbot):
    win = open_window(qtbot, LOANS)
    win.depth_spin.setValue(4)
    run_and_wait(qtbot, win)
    dialog = win.files.export_dialog_all()   # a child of the window, deleted when closed
    keys = [dialog.format_list.item(i).data(Qt.UserRole)
            for i in range(dialog.format_list.count())]
    dialog.format_list.setCurrentRow(keys.index("png"))
    qtbot.waitExposed(dialog)
    label = dialog.image_preview
    for width, height in ((860, 560), (700, 420), (1200, 800)):
        dialog.resize(width, height)
        qtbot.wait(50)
        pixmap = label.pixmap()
        shown = pixmap.deviceIndependentSize()
        room = label.contentsRect()
        assert shown.width() <= room.width() and shown.height() <= room.height()
        scene = win.view.tree_scene().sceneRect()   # proportions kept (to a pixel)
        aspect = scene.width() / scene.height()
        assert abs(shown.width() / aspect - shown.height()) <= 1.5   # rounded twice
        assert shown.width() >= room.width() - 10 or shown.height() >= room.height() - 10
    dialog.close()
