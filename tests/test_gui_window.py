"""The main window end to end (offscreen), and the background worker it relies on."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import threading  # noqa: E402
import time  # noqa: E402

import pytest  # noqa: E402

pytest.importorskip("pytestqt")

from test_gui_support import (  # noqa: E402, F401
    isolated_settings,
    ready,
    slow_anytime_train,
    write_people_csv,
)

from PySide6.QtWidgets import QApplication  # noqa: E402

import gui.runs  # noqa: E402
from engine.errors import DataError  # noqa: E402
from engine.solvers.protocol import Status  # noqa: E402
from gui.main_window import EXPORT_WRITERS, MainWindow  # noqa: E402
from gui.tree_scene import NodeItem  # noqa: E402
from gui.worker import Worker  # noqa: E402

LOAD_TIMEOUT = 20_000
RUN_TIMEOUT = 60_000  # the first greedy run may compile its numba kernel


@pytest.fixture
def window(qtbot, tmp_path):
    win = MainWindow(str(write_people_csv(tmp_path / "people.csv")))
    qtbot.addWidget(win)
    win.show()
    win.set_algorithm("greedy")
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    yield win
    win.close()


def start_greedy(win, depth=3):
    """Greedy of `depth`, run once the table is prepared for it (a depth change
    prepares a text column's value groups again; Run meanwhile would wait for it)."""
    win.set_algorithm("greedy")
    win.depth_spin.setValue(depth)
    deadline = time.monotonic() + LOAD_TIMEOUT / 1000
    while not ready(win) and time.monotonic() < deadline:
        QApplication.processEvents()
        time.sleep(0.005)
    win.run_button.click()


# ---------------------------------------------------------------------- window
def test_open_and_run_greedy(window, qtbot):
    assert "120 rows" in window.summary_label.text()
    assert "2 classes" in window.summary_label.text()
    assert window.target_combo.currentText() == "buys"
    assert window.run_button.isEnabled() and not window.stop_button.isEnabled()
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT) as ended:
        start_greedy(window)
    result = ended.args[0]
    assert result is not None and result.tree is not None
    status = window.result_label.text()
    assert "accuracy" in status and "%" in status and "finished" in status
    scene = window.view.tree_scene()
    nodes = [item for item in scene.items() if isinstance(item, NodeItem)]
    assert len(nodes) == result.tree.n_nodes > 1
    assert window.run_button.isEnabled()
    # Stop stays for the estimate on new rows while it runs (a race on a busy machine)
    qtbot.waitUntil(lambda: not window.validator.busy, timeout=RUN_TIMEOUT)
    assert not window.stop_button.isEnabled()
    assert window.export_image_action.isEnabled()


def test_stop_during_a_run_returns_quickly(window, qtbot):
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT):
        start_greedy(window, depth=6)
        assert window.stop_button.isEnabled()
        started = time.monotonic()
        window.stop_button.click()
    assert time.monotonic() - started < 10
    assert not window.running and window.run_button.isEnabled()
    assert window.result_label.text()  # whatever status: greedy may finish first


def test_closing_during_a_run_does_not_hang(qtbot, tmp_path):
    win = MainWindow(str(write_people_csv(tmp_path / "people.csv")))
    qtbot.addWidget(win)
    win.show()
    win.set_algorithm("greedy")
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    start_greedy(win, depth=8)
    worker = win.runner.worker
    assert worker is not None
    started = time.monotonic()
    win.close()
    assert time.monotonic() - started < 30
    assert worker.wait(0) and not win.running


def test_live_incumbents_and_stop(window, qtbot, monkeypatch):
    monkeypatch.setattr(gui.runs, "train", slow_anytime_train)
    start_greedy(window)
    # incumbents reach the view while the solver is still running
    qtbot.waitUntil(lambda: window.view.tree_scene() is not None, timeout=5000)
    assert window.running and "best so far" in window.result_label.text()
    with qtbot.waitSignal(window.run_ended, timeout=5000) as ended:
        started = time.monotonic()
        window.stop_button.click()
    assert time.monotonic() - started < 2
    assert ended.args[0].status == Status.CANCELLED
    assert "stopped" in window.result_label.text()
    assert not window.running and window.run_button.isEnabled()


def test_changing_binarisation_prepares_again(window, qtbot):
    before = window.dataset.n_features
    with qtbot.waitSignal(window.data_ready, timeout=LOAD_TIMEOUT):
        window.binarize_combo.setCurrentIndex(window.binarize_combo.findData("midpoints"))
    assert window.dataset.n_features > before
    assert window.dataset.is_binary


def test_changing_target(window, qtbot):
    with qtbot.waitSignal(window.data_ready, timeout=LOAD_TIMEOUT):
        window.target_combo.setCurrentText("colour")
    assert window.dataset.prep.target == "colour"
    assert window.dataset.n_classes == 3


def test_missing_file_is_reported(qtbot, tmp_path):
    win = MainWindow()
    qtbot.addWidget(win)
    win.load_path(tmp_path / "absent.csv")
    qtbot.waitUntil(lambda: win.last_error is not None, timeout=LOAD_TIMEOUT)
    assert "does not exist" in win.last_error
    assert win.dataset is None and not win.loading
    assert not win.run_button.isEnabled()


def test_exports_from_the_window(window, qtbot, tmp_path):
    with qtbot.waitSignal(window.run_ended, timeout=RUN_TIMEOUT):
        start_greedy(window, depth=2)
    assert window.files.export_image(tmp_path / "tree.svg")
    assert "age" in (tmp_path / "tree.svg").read_text() or "income" in (
        tmp_path / "tree.svg").read_text()
    assert not window.files.export_image(tmp_path / "tree.bmp")  # a dialog, not a crash
    assert ".png, .svg or .pdf" in window.last_error
    if "rules" in EXPORT_WRITERS:
        assert window.files.export("rules", tmp_path / "rules.txt")
        assert (tmp_path / "rules.txt").read_text().strip()


# ---------------------------------------------------------------------- worker
def run_worker(qtbot, worker, signal):
    with qtbot.waitSignal(signal, timeout=10_000) as blocker:
        worker.start()
    worker.wait()
    return blocker.args


def test_worker_runs_off_the_gui_thread(qtbot):
    main = threading.get_ident()
    worker = Worker(lambda: threading.get_ident())
    seen = []
    worker.started.connect(lambda: seen.append("started"))
    (ident,) = run_worker(qtbot, worker, worker.finished)
    assert ident != main and seen == ["started"]
    assert not worker.is_running()


def test_worker_reports_partials_in_order(qtbot):
    got = []

    def job():
        for i in range(5):
            worker.report(i)
        return "done"

    worker = Worker(job)
    worker.partial.connect(got.append)
    assert run_worker(qtbot, worker, worker.finished) == ["done"]
    qtbot.waitUntil(lambda: len(got) == 5)
    assert got == [0, 1, 2, 3, 4]


def test_worker_turns_orchard_errors_into_their_sentence(qtbot):
    def job():
        raise DataError("The file is empty.")

    worker = Worker(job)
    assert run_worker(qtbot, worker, worker.errored) == ["The file is empty."]


def test_worker_reports_unexpected_errors(qtbot, capsys):
    def job():
        raise KeyError("boom")

    worker = Worker(job)
    (message,) = run_worker(qtbot, worker, worker.errored)
    assert message.startswith("Unexpected error:") and "boom" in message
    assert "Traceback" in capsys.readouterr().err


def test_worker_cancel_calls_the_hook_and_ends_cancelled(qtbot):
    stop = threading.Event()

    def job():
        if not stop.wait(10):
            return "not stopped"
        raise RuntimeError("interrupted")

    worker = Worker(job, on_cancel=stop.set)
    with qtbot.waitSignal(worker.cancelled, timeout=10_000):
        worker.start()
        worker.cancel()
    assert worker.cancel_requested and worker.wait()


def test_worker_cancelled_before_start(qtbot):
    worker = Worker(lambda: 1)
    worker.cancel()
    with qtbot.waitSignal(worker.cancelled, timeout=1000):
        worker.start()
    with pytest.raises(RuntimeError):
        worker.start()


def test_garbage_of_widgets_is_collected_in_the_gui_thread_only(qtbot):
    """A closed widget in a reference cycle, then a worker that allocates plenty:
    the cycle is freed by the GUI thread's timer, never by the worker (a widget
    destroyed outside the GUI thread can crash Qt).  The test fixture turned
    automatic collection off as the app does."""
    import gc

    from PySide6.QtWidgets import QWidget

    assert not gc.isenabled()
    freed_in = []

    class Cyclic(QWidget):
        def __del__(self):
            freed_in.append(threading.get_ident())

    widget = Cyclic()
    widget.me = widget
    del widget
    worker = Worker(lambda: (threading.get_ident(), [[i] for i in range(200_000)]))
    ((worker_ident, kept),) = run_worker(qtbot, worker, worker.finished)
    assert freed_in == []          # 200,000 allocations in the worker collected nothing
    qtbot.waitUntil(lambda: bool(freed_in), timeout=5_000)
    assert freed_in == [threading.get_ident()] != [worker_ident]


# ------------------------------------------------------------------ app entry
def test_orchard_data_opens_the_window_with_the_file_loaded(qtbot, tmp_path, monkeypatch):
    import sys

    from PySide6.QtWidgets import QApplication

    import gui.app

    path = write_people_csv(tmp_path / "people.csv")
    windows = []
    monkeypatch.setattr(gui.app, "has_display", lambda: True)
    monkeypatch.setattr(sys, "excepthook", lambda *exc: None)   # restored afterwards

    def exec_(app):
        windows.extend(w for w in app.topLevelWidgets() if isinstance(w, MainWindow)
                       and w.isVisible())
        return 0

    monkeypatch.setattr(QApplication, "exec", exec_)
    assert gui.app.main([str(path)]) == 0
    (win,) = windows
    qtbot.addWidget(win)
    qtbot.waitUntil(lambda: win.prep is not None and not win.loading, timeout=LOAD_TIMEOUT)
    assert win.path.name == "people.csv" and win.dataset is not None
    assert "compiling solvers" in win.figures.text("warmup") or win.warmup_report
    # a bug in a slot becomes a dialog through the installed hook
    sys.excepthook(ValueError, ValueError("boom"), None)
    assert win.last_error == "Unexpected error: boom" and win._message_box.isVisible()
    win.close()


def test_the_mouse_wheel_scrolls_the_panel_not_the_settings_under_it(window, qtbot):
    """Scrolling the side panel changed Maximum depth and the time limit whenever a
    spin box passed under the pointer; a setting takes the wheel once clicked."""
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QComboBox

    def wheel(widget, clicks=-1) -> None:
        centre = QPointF(widget.rect().center())
        event = QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())),
                            QPoint(), QPoint(0, 120 * clicks), Qt.NoButton,
                            Qt.NoModifier, Qt.NoScrollPhase, False)
        QApplication.sendEvent(widget, event)

    window.resize(1024, 480)   # the settings are taller than the panel: it scrolls
    scroll = window.depth_spin
    while scroll is not None and not hasattr(scroll, "verticalScrollBar"):
        scroll = scroll.parentWidget()
    window.run_button.setFocus()
    depth, limit = window.depth_spin.value(), window.time_spin.value()
    combo = window.findChild(QComboBox)
    index = combo.currentIndex()
    for editor in (window.depth_spin, window.time_spin, combo):
        wheel(editor)
    assert window.depth_spin.value() == depth and window.time_spin.value() == limit
    assert combo.currentIndex() == index
    assert scroll.verticalScrollBar().value() > 0   # the panel scrolled instead
    window.depth_spin.setFocus()                     # clicked: now it is the user's
    wheel(window.depth_spin, clicks=1)
    assert window.depth_spin.value() == depth + 1


def test_the_window_fits_a_small_screen_even_when_not_maximised(qtbot):
    """On a 1280x720 screen the window opened maximised, but un-maximised it went
    back to 1320x840 and its status line fell off the screen."""
    from PySide6.QtCore import QRect

    from gui.app import FRAME_ROOM, fit_to_screen

    small = MainWindow()
    qtbot.addWidget(small)
    assert fit_to_screen(small, QRect(0, 0, 1280, 690))   # a panel takes 30 pixels
    assert small.height() + FRAME_ROOM <= 690 and small.width() <= 1280
    large = MainWindow()
    qtbot.addWidget(large)
    size = (large.width(), large.height())
    assert not fit_to_screen(large, QRect(0, 0, 2560, 1400))
    assert (large.width(), large.height()) == size


def test_the_field_being_typed_in_stays_put_while_the_data_are_prepared_again(qtbot):
    """The panel jumped by 32 pixels under the typing: a depth change prepares the
    value groups again, and the progress bar appearing above moved every field."""
    import time

    from PySide6.QtCore import QPoint
    from PySide6.QtTest import QTest

    from gui.side_panel import PanelScroll
    from test_gui_support import LOANS, open_window, ready

    win = open_window(qtbot, LOANS, algorithm="greedy")
    win.resize(1280, 720)
    scroll = win.findChild(PanelScroll)
    bar = scroll.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=5_000)
    bar.setValue(bar.maximum())
    spin = win.depth_spin
    spin.setFocus()
    qtbot.waitUntil(spin.hasFocus, timeout=5_000)
    where = lambda: spin.mapTo(scroll.viewport(), QPoint(0, 0)).y()   # noqa: E731
    seen = {where()}
    spin.selectAll()
    QTest.keyClicks(spin, "4")
    assert win.preparing or win.data.depends_on_depth(win.data.prep_options())
    end = time.monotonic() + 20
    while (win.preparing or not ready(win)) and time.monotonic() < end:
        QApplication.processEvents()
        seen.add(where())
    qtbot.wait(50)
    seen.add(where())
    assert ready(win) and spin.value() == 4
    assert seen == {min(seen)}, f"the depth field moved: {sorted(seen)}"
    win.close()
