"""Shared test setup: Qt offscreen, and the papers' datasets beside the project."""

import gc
import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

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


@pytest.fixture
def datasets_dir() -> Path:
    if not DATASETS.is_dir():
        pytest.skip("the shared datasets folder is absent")
    return DATASETS


@pytest.fixture(autouse=True)
def _windows_collected_in_the_main_thread(request):
    """After a test with widgets (pytest-qt closes them first), collect its garbage
    here, in the main thread.  Left to chance, a closed window's Python wrappers were
    once collected by the next test's reading thread: it destroyed the window's menus
    holding a Qt lock while waiting for the GIL, which the main thread held while
    waiting for that lock (a hang in test_gui_responsive)."""
    yield
    if "qtbot" in request.fixturenames:
        gc.collect()
