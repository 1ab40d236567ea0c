"""Shared test setup: Qt offscreen, and the papers' datasets beside the project."""

import gc
import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# Each pytest-xdist worker searches on its share of the cores, as a sweep's worker
# processes do (`engine.solvers.threads`): two workers on two cores each starting a
# thread per core ran every time-limited search on twice the cores there are.  Tests
# of several threads ask for them (`threads=2`).
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _WORKERS > 1:
    os.environ.setdefault("ORCHARD_THREADS",
                          str(max(1, len(os.sched_getaffinity(0)) // _WORKERS)
                              if hasattr(os, "sched_getaffinity") else 1))

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ROOT.parent / "shared" / "datasets"
SAMPLES = ROOT / "resources" / "samples"


def dataset_files(*folders: str, suffix: str | None = None) -> list[Path]:
    """Shared benchmark files (empty when the folder is absent: tests then skip)."""
    files = []
    for folder in folders:
        path = DATASETS / folder
        if path.is_dir():
            files += sorted(p for p in path.iterdir()
                            if p.suffix in (".csv", ".txt") and (suffix is None or p.suffix == suffix))
    return files


def sizes(ci: int, long: int) -> list:
    """The two sizes of a generated check, for `pytest.mark.parametrize`: `ci` in the
    test command, `long` in CI's second step (`pytest -m slow`)."""
    return [pytest.param(ci, id="ci"), pytest.param(long, id="long", marks=pytest.mark.slow)]


def pytest_collection_modifyitems(items) -> None:
    """The tests marked `slow` first: started last, one of them kept a worker busy for
    minutes after the other had finished (the longest first is the classic remedy)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture
def datasets_dir() -> Path:
    if not DATASETS.is_dir():
        pytest.skip("the shared datasets folder is absent")
    return DATASETS


@pytest.fixture(autouse=True)
def _windows_collected_in_the_main_thread(request):
    """During a test with widgets, Python collects cycles only in the main thread (as
    the app does: `gui.worker.collect_garbage_in_gui_thread`), and after it (pytest-qt
    closes the widgets first) its garbage is collected here.  Left to chance, a
    closed window's Python wrappers were once collected by the next test's reading
    thread: it destroyed the window's menus holding a Qt lock while waiting for the
    GIL, which the main thread held while waiting for that lock (a hang in
    test_gui_responsive).  What earlier tests left alive is frozen out of the
    collections meanwhile (`gc.freeze`): two thousand tests into the suite, each
    collection in the window's thread scanned their whole heap, and a test of the
    window's responsiveness saw its event loop tick a quarter as often as alone."""
    if "qtbot" not in request.fixturenames:
        yield
        return
    from gui.worker import collect_garbage_in_gui_thread
    gc.collect()
    gc.freeze()
    collector = collect_garbage_in_gui_thread()   # as the app does (see there)
    yield
    collector.timer.stop()
    gc.unfreeze()
    gc.collect()
    gc.enable()
