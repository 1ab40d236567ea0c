"""Hundreds of classes: the results stay quick to show and small to save.

A 499-class target with 5-fold cross-validation used to freeze the window for
minutes (two 499 x 499 matrices built as table items) and made a 36 MB session.
"""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import csv  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("pytestqt")

from PySide6.QtCore import QTimer  # noqa: E402
from test_gui_support import isolated_settings, open_window, ready  # noqa: E402, F401

from engine.data.csv_reader import read_table  # noqa: E402
from engine.evaluation import Plan  # noqa: E402
from engine.metrics import matrix_from_json, matrix_to_json  # noqa: E402
from gui.confusion_view import MAX_SHOWN, OTHER, capped, write_confusion_csv  # noqa: E402
from gui.session import load_session, save_session  # noqa: E402

CLASSES = 499


@pytest.fixture
def many_classes_csv(tmp_path):
    rng = np.random.default_rng(0)
    rows = 3 * CLASSES
    label = np.arange(rows) % CLASSES
    x = label * 10 + rng.integers(0, 30, rows)
    lines = ["x,size,noise,species"] + [f"{a},{b},{c},s{k}" for a, b, c, k in
                                      zip(x, rng.integers(0, 100, rows),
                                          rng.normal(size=rows).round(3), label)]
    path = tmp_path / "species.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_499_class_cross_validation_renders_without_blocking(qtbot, many_classes_csv,
                                                               tmp_path):
    win = open_window(qtbot, many_classes_csv)
    assert win.dataset.n_classes == CLASSES
    win.depth_spin.setValue(3)
    win.evaluation_box.set_plan(Plan("kfold", k=5))
    ticks = []
    timer = QTimer(interval=10)
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start()
    started = time.monotonic()
    with qtbot.waitSignal(win.run_ended, timeout=120_000):
        win.run_button.click()
    qtbot.waitUntil(lambda: not win.validator.busy, timeout=120_000)
    run = win.results.runs[-1]
    win.results.show_run(run)          # what a click in the history does
    win.tabs.setCurrentWidget(win.results)
    qtbot.wait(300)
    elapsed = time.monotonic() - started
    timer.stop()
    # The loop kept ticking: no gap between ticks longer than a fraction of a second.
    gaps = np.diff([started, *ticks])
    assert len(ticks) > elapsed / 0.01 * 0.3 and gaps.max() < 0.5, (len(ticks), gaps.max())
    assert run.evaluation is not None and len(run.evaluation.folds) == 5
    panel = win.results
    assert panel.train_matrix.rowCount() == panel.test_matrix.rowCount() == MAX_SHOWN + 1
    assert panel.test_matrix.note.isVisible() and OTHER in panel.test_matrix.note.text()
    # Compact sessions: a few hundred kilobytes, not tens of megabytes.
    path = tmp_path / "many.orchard.json"
    save_session(win.files.session(), path)
    assert path.stat().st_size < 1_000_000
    again = load_session(path).runs[-1]
    assert np.array_equal(again.evaluation.test_confusion(), run.evaluation.test_confusion())
    assert np.array_equal(again.train_confusion, run.train_confusion)
    win.close()


def test_capped_matrix_keeps_the_busiest_classes_and_every_row():
    rng = np.random.default_rng(1)
    matrix = rng.integers(0, 4, size=(60, 60)).astype(float)
    matrix[7] *= 50          # class 7 is the largest
    names = [f"c{i}" for i in range(60)]
    shown, labels = capped(matrix, names, limit=10)
    assert shown.shape == (11, 11) and labels[-1] == OTHER and "c7" in labels
    assert shown.sum() == matrix.sum()
    keep = [names.index(n) for n in labels[:-1]]
    assert keep == sorted(keep)                  # the original class order
    assert np.array_equal(shown[:10, :10], matrix[np.ix_(keep, keep)])
    small = matrix[:5, :5]
    assert capped(small, names[:5])[0] is small


def test_the_csv_export_writes_the_full_matrix(tmp_path):
    matrix = np.arange(40 * 40, dtype=float).reshape(40, 40)
    names = [f"k{i}" for i in range(40)]
    path = tmp_path / "confusion.csv"
    write_confusion_csv(path, matrix, names)
    rows = list(csv.reader(path.open()))
    assert rows[0][1:] == names and len(rows) == 41
    assert [float(v.replace(",", "")) for v in rows[40][1:]] == list(matrix[39])


def test_sparse_matrices_round_trip_and_old_sessions_still_read():
    matrix = np.zeros((499, 499))
    matrix[3, 3], matrix[10, 2], matrix[498, 0] = 5, 1.5, 2
    stored = matrix_to_json(matrix)
    assert len(stored["cells"]) == 3
    assert np.array_equal(matrix_from_json(stored), matrix)
    assert np.array_equal(matrix_from_json([[1, 2], [3, 4]]), np.array([[1, 2], [3, 4]]))
    assert matrix_from_json(None).size == 0


def test_reading_the_many_classes_file_keeps_every_class(many_classes_csv):
    raw = read_table(many_classes_csv)
    assert raw.frame["species"].nunique() == CLASSES
