"""The `orchard` command: the desktop app, or the headless `fit` / `tune` / `predict`.

`orchard [DATA]` opens the window.  On a machine without a display it still does
its main job: it trains on DATA (or a bundled sample) and prints the tree.
The engine's CLI gets the Qt image renderer injected here, so `engine/` itself never
imports Qt.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from engine.cli import main as cli_main
from resources import ICON, SAMPLES_DIR

CLI_COMMANDS = ("fit", "tune", "predict", "sweep")
SAMPLE = SAMPLES_DIR / "loans.csv"
HEADLESS_TIME_LIMIT = "30"  # seconds: the headless demo shows the best tree by then
# Set to a number of seconds, the window quits on its own once its data is loaded and
# the solvers are warm, printing what it saw; for packaging/smoke_test.py.
SMOKE_EXIT = "ORCHARD_SMOKE_EXIT"


def render_image(tree, path) -> None:
    """Render a tree picture with Qt (imported only when an image is asked for)."""
    from gui.image_export import save_tree_image
    save_tree_image(tree, path)


def has_display() -> bool:
    if sys.platform.startswith("linux"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def run_headless(data: str | None) -> int:
    data = data or str(SAMPLE)
    print(f"No display found, so Orchard trains headless on {data} "
          "(see 'orchard fit --help' for all options).", flush=True)
    return cli_main(["fit", data, "--time-limit", HEADLESS_TIME_LIMIT],
                    render_image=render_image)


def install_excepthook(window) -> None:
    """A bug in a slot becomes a dialog (and a traceback on stderr), not a silent failure."""
    previous = sys.excepthook

    def hook(kind, value, tb):
        previous(kind, value, tb)
        from gui.worker import error_message
        with contextlib.suppress(Exception):  # never fail while reporting a failure
            window.show_error(error_message(value))

    sys.excepthook = hook


def quit_when_ready(app, window, seconds: float) -> None:
    """Quit once the window has prepared its data and warmed up the solvers (status 0),
    or with status 1 on a failure or after `seconds`; one line on stdout says which."""
    from PySide6.QtCore import QTimer

    seen = {}

    def finish(status: int, text: str) -> None:
        print(f"smoke: {text}", flush=True)
        app.exit(status)
        window.close()  # stops and waits for the work still running

    def check(key, value) -> None:
        seen[key] = value
        if len(seen) < 2:
            return
        report = seen["warm"]
        failures = report.errors if report is not None else "the warm-up crashed"
        solvers = ", ".join(report.timings) if report is not None else "none"
        finish(1 if failures or seen["data"] is None else 0,
               f"'{window.windowTitle()}'; solvers warm: {solvers}; "
               f"failures: {failures or 'none'}")

    window.data_ready.connect(lambda data: check("data", data))
    window.warmed_up.connect(lambda report: check("warm", report))
    QTimer.singleShot(round(seconds * 1000), lambda: finish(
        1, f"not ready after {seconds:g} s (seen: {sorted(seen)})"))


def run_gui(data: str | None) -> int:
    from gui.qt_platform import missing_platform_library
    if (problem := missing_platform_library()) is not None:
        print(problem, file=sys.stderr)
        return 2

    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from gui.main_window import MainWindow
    from gui.worker import collect_garbage_in_gui_thread, wait_for_workers

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Orchard")
    app.setWindowIcon(QIcon(str(ICON)))
    app.setOrganizationName("Orchard")
    collector = collect_garbage_in_gui_thread()  # noqa: F841 - kept while the app runs
    window = MainWindow(data, warm_up=True)
    install_excepthook(window)
    if fit_to_screen(window, window.screen().availableGeometry()):
        window.showMaximized()
    else:
        window.show()
    if os.environ.get(SMOKE_EXIT):
        quit_when_ready(app, window, float(os.environ[SMOKE_EXIT]))
    status = app.exec()
    wait_for_workers()
    return status


# Room the window manager's title bar and frame take above and around the window.
FRAME_ROOM = 40


def fit_to_screen(window, available) -> bool:
    """Size `window` to fit the screen's `available` rectangle, frame included; True
    when the screen is smaller than its preferred size (1280x720 laptops), where it
    should open maximised.  Its normal size then fits too: un-maximised, the window
    kept its preferred 1320x840 and its status line fell off a 720-pixel screen."""
    width = min(window.width(), available.width() - FRAME_ROOM // 4)
    height = min(window.height(), available.height() - FRAME_ROOM)
    smaller = (width, height) != (window.width(), window.height())
    window.resize(max(width, window.minimumWidth()), max(height, window.minimumHeight()))
    return smaller


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # A flag is the command line's to explain ('orchard --bogus'), not a file to open.
    if argv and (argv[0] in CLI_COMMANDS or argv[0].startswith("-")):
        return cli_main(argv, render_image=render_image)
    if len(argv) > 1:
        print("orchard: Give at most one data file to open (or use 'orchard fit').",
              file=sys.stderr)
        return 2
    data = argv[0] if argv else None
    if data is not None and not Path(data).is_file():
        print(f"orchard: The file '{data}' does not exist.", file=sys.stderr)
        return 2
    # The smoke test opens the window even without a display (QT_QPA_PLATFORM=offscreen).
    window = has_display() or os.environ.get(SMOKE_EXIT)
    return run_gui(data) if window else run_headless(data)


if __name__ == "__main__":
    sys.exit(main())
