"""How responsive the window stays while a solver runs, and how fast it starts.

    xvfb-run -a -s "-screen 0 1400x900x24" .venv/bin/python benchmarks/gui_latency.py

1. Event-loop latency: the real main window loads a large CP4IM set and runs a long
   solve (blossom at depth 10 when it is registered, else greedy in a loop) for
   about `--seconds`, with live redraws of the incumbent tree and the curve.  A
   10 ms precise QTimer records when it actually fires; its drift (actual interval
   minus 10 ms) is the time the event loop could not react.  Reported: p50, p95, p99
   and max drift during the solve, and also while the file loads.
2. Launch time: a fresh `orchard`-like process (the same `MainWindow` the app
   opens, with JIT warm-up) is started; it reports when the window is shown and the
   event loop has processed its first event (usable), and when the background
   warm-up has finished (solvers ready).  Run with an empty numba cache (cold, a
   temporary NUMBA_CACHE_DIR) and again with that cache filled (warm).

Needs a display (Xvfb is fine); with QT_QPA_PLATFORM=offscreen it also runs but
measures less of the real painting path.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CP4IM = ROOT.parent / "shared" / "datasets" / "cp4im"
TICK_MS = 10


# --------------------------------------------------------------------- helpers
def wait_until(app, condition, timeout: float) -> bool:
    from PySide6.QtCore import QEventLoop
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            return False
        app.processEvents(QEventLoop.AllEvents, 20)
    return True


def percentiles(drift_ms: list[float]) -> dict:
    import numpy as np
    d = np.asarray(drift_ms)
    if not len(d):
        return {"ticks": 0}
    return {"ticks": len(d), "p50_ms": float(np.percentile(d, 50)),
            "p95_ms": float(np.percentile(d, 95)), "p99_ms": float(np.percentile(d, 99)),
            "max_ms": float(d.max())}


class DriftProbe:
    """A precise 10 ms timer; drift = actual interval - 10 ms, per phase.

    With `stalls` (an open file), every tick re-arms `faulthandler`'s C watchdog, which
    needs no GIL: when the event loop misses `STALL_S`, the Python stacks of all threads
    are written to the file, showing which line of which thread held the loop up.  It
    reads the other threads' frames while they run, which can crash the process (seen
    once in a few runs, while numba compiled): use it to find stalls, not to measure."""

    STALL_S = 0.05

    def __init__(self, stalls=None):
        from PySide6.QtCore import Qt, QTimer
        self.stalls = stalls
        self.timer = QTimer()
        self.timer.setTimerType(Qt.PreciseTimer)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self._tick)
        self.last = None
        self.phase = None
        self.drift: dict[str, list[float]] = {}

    def start(self) -> None:
        self.last = time.perf_counter()
        self.timer.start()

    def set_phase(self, phase: str | None) -> None:
        self.phase = phase
        self.last = time.perf_counter()

    def _tick(self) -> None:
        now = time.perf_counter()
        previous = self.last if self.last is not None else now
        if self.phase is not None and self.last is not None:
            self.drift.setdefault(self.phase, []).append(
                max(0.0, (now - self.last) * 1000 - TICK_MS))
        self.last = now
        if self.stalls is not None and self.phase is not None:
            late = (now - previous) * 1000 - TICK_MS
            if late > self.STALL_S * 1000:   # its stacks were written 50 ms into it
                self.stalls.write(f"STALL {late:.0f} ms in phase {self.phase}\n")
                self.stalls.flush()
            faulthandler.dump_traceback_later(self.STALL_S, file=self.stalls)

    def stop(self) -> None:
        self.timer.stop()
        if self.stalls is not None:
            faulthandler.cancel_dump_traceback_later()


def private_settings() -> None:
    """Orchard's settings in a temporary folder, never asking before quitting: a
    developer tool's runs are not the user's, nor are its recent files."""
    from PySide6.QtCore import QSettings

    from gui.settings import app_settings
    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope,
                      tempfile.mkdtemp(prefix="orchard-bench-settings-"))
    app_settings().setValue("ask_before_quit", "false")


def open_window(stalls=None):
    """The app's main window at 1400 x 860 with its JIT warm-up done, and a running
    drift probe."""
    from PySide6.QtWidgets import QApplication

    from gui.main_window import MainWindow

    app = QApplication.instance() or QApplication([sys.argv[0]])
    private_settings()
    window = MainWindow(warm_up=True)
    window.resize(1400, 860)
    window.show()
    probe = DriftProbe(stalls)
    probe.start()
    wait_until(app, lambda: window.warmup_report is not None, 600)
    return app, window, probe


# ------------------------------------------------------------------- latency
def latency(dataset: Path, seconds: float, depth: int) -> dict:
    from engine.solvers import solver_names

    app, window, probe = open_window()

    algorithm = "blossom" if "blossom" in solver_names() else "greedy"
    window.set_algorithm(algorithm)
    probe.set_phase("load")
    loaded_at = time.perf_counter()
    window.load_path(dataset)
    wait_until(app, lambda: window.prep is not None and not window.loading, 300)
    window.data_panel.set_target(window.target_combo.itemText(0))   # CP4IM: class first
    wait_until(app, lambda: window.dataset is not None and not window.preparing, 300)
    load_s = time.perf_counter() - loaded_at
    probe.set_phase(None)

    shown = []
    window.view.tree_shown.connect(lambda tree: shown.append(tree.n_nodes))
    ended = []
    window.run_ended.connect(ended.append)
    runs, solve_started = 0, time.perf_counter()
    probe.set_phase("solve")
    if algorithm == "blossom":
        window.depth_spin.setValue(depth)
        window.time_spin.setValue(seconds)
        window.run_button.click()
        wait_until(app, lambda: ended, seconds + 60)
        runs = 1
    else:  # greedy finishes at once: run it again and again for the same time
        window.depth_spin.setValue(depth)
        while time.perf_counter() - solve_started < seconds:
            ended.clear()
            window.run_button.click()
            wait_until(app, lambda: ended, 60)
            runs += 1
    solve_s = time.perf_counter() - solve_started
    probe.set_phase(None)
    wait_until(app, lambda: not window.view.is_building, 10)
    probe.stop()
    run = window.current_run
    window.close()
    return {
        "dataset": dataset.name, "algorithm": algorithm, "depth": depth, "runs": runs,
        "load_s": load_s, "solve_s": solve_s,
        "rows": run.n_rows if run else None, "features": run.n_features if run else None,
        "status": run.status if run else None,
        "incumbents": len(run.incumbents) if run else None,
        "redraws": len(shown), "largest_tree_nodes": max(shown, default=0),
        "drift_solve": percentiles(probe.drift.get("solve", [])),
        "drift_load": percentiles(probe.drift.get("load", [])),
    }


# ------------------------------------------------------------- heavy tables
def heavy(case: str, folder: Path, stalls=None) -> dict:
    """Drift while the window loads, prepares, trains, tests (5 folds) and shows the
    results of a generated table: `2m` (2,000,000 rows x 10 numeric columns, blossom
    depth 3, 10 s limit) or `499` (1,497 rows, a 499-class target, greedy depth 3)."""
    import numpy as np

    sys.path.insert(0, str(ROOT / "tests"))
    from big_tables import numeric_csv

    from engine.evaluation import Plan

    if case == "2m":
        path = numeric_csv(folder / "two-million.csv", 2_000_000)
        algorithm, limit = "blossom", 10
    else:
        rng = np.random.default_rng(0)
        label = np.arange(1497) % 499
        path = folder / "species.csv"
        path.write_text("x,size,species\n" + "".join(
            f"{k * 10 + rng.integers(0, 30)},{rng.integers(0, 100)},s{k}\n" for k in label))
        algorithm, limit = "greedy", 60
    app, window, probe = open_window(stalls)
    window.set_algorithm(algorithm)
    window.depth_spin.setValue(3)
    window.time_spin.setValue(limit)
    window.evaluation_box.set_plan(Plan("kfold", k=5))
    times = {}
    probe.set_phase("load")
    started = time.perf_counter()
    window.load_path(path)
    wait_until(app, lambda: window.dataset is not None and not window.loading
               and not window.preparing, 600)
    times["load_s"] = time.perf_counter() - started
    probe.set_phase("run")
    ended = []
    window.run_ended.connect(ended.append)
    started = time.perf_counter()
    window.run_button.click()
    wait_until(app, lambda: ended, 600)
    times["run_s"] = time.perf_counter() - started
    probe.set_phase("results")
    started = time.perf_counter()
    window.tabs.setCurrentWidget(window.results)
    window.results.show_run(window.current_run)
    wait_until(app, lambda: False, 1.0)   # a second of painting the results
    times["results_s"] = time.perf_counter() - started
    probe.set_phase(None)
    probe.stop()
    run = window.current_run
    window.close()
    return {"case": case, "rows": run.n_rows, "classes": len(run.class_names),
            "status": run.status, "folds": len(run.evaluation.folds) if run.evaluation
            else 0, **times, **{f"drift_{phase}": percentiles(probe.drift.get(phase, []))
                                for phase in ("load", "run", "results")}}


# -------------------------------------------------------------------- launch
CHILD = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv[:1])
from gui.main_window import MainWindow
window = MainWindow(warm_up=True)
window.show()
def usable():
    print("USABLE", time.time(), flush=True)
QTimer.singleShot(0, usable)
def warm(report):
    print("WARM", time.time(), report.total if report else -1, flush=True)
    window.close()
    app.quit()
window.warmed_up.connect(warm)
app.exec()
"""


def launch(cache_dir: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    started = time.time()
    done = subprocess.run([sys.executable, "-c", CHILD, str(ROOT)], env=env, check=False,
                          capture_output=True, text=True, timeout=900)
    out = {}
    for line in done.stdout.splitlines():
        parts = line.split()
        if parts and parts[0] in ("USABLE", "WARM"):
            out[parts[0]] = float(parts[1]) - started
    if "USABLE" not in out:
        raise RuntimeError(f"launch failed: {done.stdout}\n{done.stderr}")
    return {"usable_s": out["USABLE"], "solvers_ready_s": out.get("WARM")}


# ---------------------------------------------------------------------- main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default=str(CP4IM / "splice-1.txt"))
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-launch", action="store_true",
                        help="skip the launch-time measurement")
    parser.add_argument("--heavy", choices=("2m", "499"),
                        help="only the heavy generated table: 2 million rows or 499 classes")
    parser.add_argument("--stalls", metavar="FILE",
                        help="with --heavy: write every thread's stack to FILE whenever "
                             f"the event loop misses {DriftProbe.STALL_S * 1000:.0f} ms")
    args = parser.parse_args()
    if args.heavy:
        with tempfile.TemporaryDirectory(prefix="orchard-heavy-") as folder, \
                (open(args.stalls, "w") if args.stalls else open(os.devnull, "w")) as out:
            result = heavy(args.heavy, Path(folder), out if args.stalls else None)
        print(json.dumps(result, indent=1))
        return

    cold = warm = {"usable_s": float("nan"), "solvers_ready_s": float("nan")}
    if not args.no_launch:
        with tempfile.TemporaryDirectory(prefix="orchard-numba-") as cache:
            cold = launch(cache)
            warm = launch(cache)
    result = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, "
                         f"Python {platform.python_version()}",
              "qt_platform": os.environ.get("QT_QPA_PLATFORM") or "xcb",
              "date": time.strftime("%Y-%m-%d"),
              "launch_cold": cold, "launch_warm": warm,
              "latency": latency(Path(args.dataset), args.seconds, args.depth)}
    if args.json:
        print(json.dumps(result, indent=1))
        return
    lat = result["latency"]
    print(f"{result['date']}  {result['machine']}  Qt platform {result['qt_platform']}")
    for name, phase in (("solve", lat["drift_solve"]), ("load", lat["drift_load"])):
        if phase.get("ticks"):
            print(f"drift during {name:5s}: p50 {phase['p50_ms']:.1f} ms, p95 "
                  f"{phase['p95_ms']:.1f} ms, p99 {phase['p99_ms']:.1f} ms, max "
                  f"{phase['max_ms']:.1f} ms ({phase['ticks']} ticks)")
    print(f"solve: {lat['algorithm']} depth {lat['depth']} on {lat['dataset']} "
          f"({lat['rows']} rows, {lat['features']} features) for {lat['solve_s']:.1f} s, "
          f"{lat['incumbents']} incumbents, {lat['redraws']} redraws, largest tree "
          f"{lat['largest_tree_nodes']} nodes, status {lat['status']}; load "
          f"{lat['load_s']:.1f} s")
    for name in ("cold", "warm"):
        launch_times = result[f"launch_{name}"]
        print(f"launch ({name} numba cache): usable window {launch_times['usable_s']:.2f} s,"
              f" solvers ready {launch_times['solvers_ready_s']:.2f} s")


if __name__ == "__main__":
    main()
