"""Shared fixtures and helpers of the GUI tests (this module holds no tests itself).

Test modules import what they use; `isolated_settings` is autouse wherever it is
imported, so no test reads or writes the user's real Orchard settings.
"""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("pytestqt")

from conftest import DATASETS, SAMPLES  # noqa: E402
from PySide6.QtCore import QSettings  # noqa: E402

from engine.model.tree import Tree  # noqa: E402
from engine.solvers.protocol import Result  # noqa: E402
from gui.main_window import MainWindow  # noqa: E402
from gui.settings import app_settings  # noqa: E402

LOAD_TIMEOUT = 30_000
RUN_TIMEOUT = 90_000   # a first blossom run may compile its numba kernel (cold cache)
LOANS = SAMPLES / "loans.csv"


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path_factory):
    """Orchard's INI settings go to a temporary folder of their own for the test."""
    folder = tmp_path_factory.mktemp("settings")
    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, str(folder))
    settings = app_settings()
    settings.setValue("ask_before_quit", "false")   # windows close without a question
    settings.sync()
    yield folder


def write_people_csv(path: Path, rows: int = 120) -> Path:
    lines = ["age,colour,income,buys"]
    for i in range(rows):
        age = 18 + (i * 7) % 60
        colour = ("red", "blue", "green")[i % 3]
        income = 1000 + (i * 37) % 900
        buys = "yes" if (age > 40 and colour != "blue") or income > 1750 else "no"
        lines.append(f"{age},{colour},{income},{buys}")
    path.write_text("\n".join(lines) + "\n")
    return path


def ready(win: MainWindow) -> bool:
    """Data prepared and nothing pending."""
    return win.dataset is not None and not win.loading and not win.preparing


def open_window(qtbot, path=None, algorithm: str | None = "greedy", **kwargs) -> MainWindow:
    """A shown window with `path` loaded and prepared (greedy chosen by default)."""
    win = MainWindow(**kwargs)
    qtbot.addWidget(win)
    win.show()
    if algorithm is not None:
        win.set_algorithm(algorithm)
    if path is not None:
        win.load_path(path)
        qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    return win


def wait_prepared(qtbot, win: MainWindow) -> None:
    qtbot.waitUntil(lambda: not win.loading and not win.preparing and win.prep is not None,
                    timeout=LOAD_TIMEOUT)


def run_and_wait(qtbot, win: MainWindow, timeout: int = RUN_TIMEOUT):
    with qtbot.waitSignal(win.run_ended, timeout=timeout) as ended:
        win.run_button.click()
    return ended.args[0]


def run_and_validate(qtbot, win: MainWindow, timeout: int = RUN_TIMEOUT):
    """Run, then wait for the run's accuracy on new rows (estimated in the background)."""
    result = run_and_wait(qtbot, win, timeout)
    qtbot.waitUntil(lambda: not win.validator.busy, timeout=timeout)
    return result


def leaf_search(data, monitor, every: float | None):
    """Stands in for an exact solver: publishes the best leaf every `every` seconds
    (its bound rising to its error), or once when `every` is None, until stopped."""
    counts = np.bincount(data.y, weights=data.w, minlength=data.n_classes)
    tree = Tree.leaf(counts, data.prep)
    error = float(counts.sum() - counts.max())
    monitor.start()
    step = 0
    while not monitor.should_stop():
        if every is not None or step == 0:
            monitor.publish(tree, error, min(step, error))
        step += 1
        time.sleep(every or 0.01)
    return Result(tree, error, 0.0, False, monitor.final_status(False), monitor.elapsed(),
                  list(monitor.incumbents))


def slow_anytime_train(data, algorithm, params=None, time_limit=None, monitor=None,
                       on_incumbent=None):
    """`engine.training.train`'s stand-in: a leaf published every 10 ms until stopped."""
    return leaf_search(data, monitor, 0.01)


def one_tree_then_wait(data, algorithm, params=None, time_limit=None, monitor=None,
                       on_incumbent=None):
    """`engine.training.train`'s stand-in: a first tree, then nothing until stopped."""
    return leaf_search(data, monitor, None)


def cp4im_files() -> list[Path]:
    folder = DATASETS / "cp4im"
    return sorted(folder.glob("*.txt")) if folder.is_dir() else []
