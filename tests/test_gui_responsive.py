"""The window at a user's scale: Stop works while a large file is read, and a run's
time limit holds even when preparing its test folds alone would take longer."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import time  # noqa: E402

import pytest  # noqa: E402

pytest.importorskip("pytestqt")

from big_tables import numeric_csv  # noqa: E402
from PySide6.QtCore import QTimer  # noqa: E402
from conftest import SAMPLES  # noqa: E402
from test_gui_support import isolated_settings, open_window, ready  # noqa: E402, F401

from engine.evaluation import Plan  # noqa: E402

ROWS = 600_000          # reading and preparing take a few seconds here
LOAD_TIMEOUT = 120_000


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory):
    return numeric_csv(tmp_path_factory.mktemp("big") / "big.csv", ROWS)


class Ticks:
    """Counts a 20 ms timer's ticks: the event loop is alive while they grow."""

    def __init__(self):
        self.count = 0
        self.timer = QTimer(interval=20)
        self.timer.timeout.connect(self._tick)
        self.timer.start()

    def _tick(self):
        self.count += 1


def test_stop_while_a_large_file_is_read(qtbot, big_csv):
    win = open_window(qtbot)
    try:
        ticks = Ticks()
        win.load_path(big_csv)
        qtbot.waitUntil(lambda: "Splitting" in win.result_label.text(),
                        timeout=LOAD_TIMEOUT)
        assert win.stop_button.isEnabled()
        before = ticks.count
        pressed = time.monotonic()
        win.stop_button.click()
        qtbot.waitUntil(lambda: not win.loading, timeout=5_000)
        assert time.monotonic() - pressed < 1.0
        assert "Stopped reading" in win.result_label.text()
        assert win.raw is None and not win.stop_button.isEnabled()
        # The event loop runs on: a stop can take less than one 20 ms tick.
        qtbot.waitUntil(lambda: ticks.count > before, timeout=1_000)
    finally:
        win.close()


def test_a_time_limit_covers_the_test_folds_preparation(qtbot, big_csv):
    win = open_window(qtbot, big_csv, algorithm="blossom")
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    win.depth_spin.setValue(2)   # guided thresholds for depth 2: prepared again
    win.time_spin.setValue(2)
    win.evaluation_box.set_plan(Plan("kfold", k=5))
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    ticks = Ticks()
    pressed = time.monotonic()
    with qtbot.waitSignal(win.run_ended, timeout=LOAD_TIMEOUT) as ended:
        win.run_button.click()
    elapsed = time.monotonic() - pressed
    assert elapsed < 2 + 1.0
    assert ticks.count >= elapsed / 0.2   # never blocked for long
    result = ended.args[0]
    assert result is not None and result.tree is not None
    # the folds then share a time limit of their own, in the background
    qtbot.waitUntil(lambda: not win.validator.busy, timeout=LOAD_TIMEOUT)
    assert time.monotonic() - pressed < 2 * (2 + 1.0)
    run = win.results.runs[-1]
    assert run.evaluation is not None and not run.evaluation.complete
    assert "raise the time limit" in run.evaluation.summary()
    win.close()


def test_run_pressed_while_preparing_starts_when_the_data_is_ready(qtbot):
    win = open_window(qtbot, SAMPLES / "loans.csv", algorithm="blossom")
    assert win.data_panel.binarize() == "guided"
    win.depth_spin.setValue(4)        # guided thresholds follow the depth
    assert win.preparing and win.run_button.isEnabled()
    with qtbot.waitSignal(win.run_ended, timeout=LOAD_TIMEOUT) as ended:
        win.run_button.click()
        assert not win.running and "starts as soon as it is ready" in win.result_label.text()
    assert ended.args[0] is not None and win.prep.options.depth == 4
    assert win.results.runs[-1].params["depth"] == 4
    win.close()
