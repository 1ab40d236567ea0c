"""Check the standalone app the way a user receives it.

    python packaging/smoke_test.py [--reuse] [--onefile] [--level LEVEL]

Builds the app (`--reuse`: takes the last build; `--level`: its kernels for one CPU
level, as CI does to save minutes), then runs it from an empty
temporary folder with an almost empty environment: no virtual environment, PATH of
the system only, HOME in that folder so numba's cache starts cold.  It checks

1. `orchard fit <bundled sample> --json`, cold (first launch, empty cache folder):
   the JSON of DESIGN.md, a sane accuracy, and not one kernel compiled (the app
   counts compilations when ORCHARD_COUNT_COMPILES is set): they all come from the
   cache shipped in the app for this CPU's level, unzipped into the user's cache
   folder; and every shipped CPU level (ORCHARD_CPU_LEVEL) likewise;
2. the same again, warm; then every algorithm once, again without compiling, and
   the shipped cache left unchanged;
3. every export (model, rules, Python, SQL, DOT, PNG) written, `orchard predict`
   on the model, and the exported Python module (run by this Python, isolated, so
   with the standard library only) predicting the same classes;
4. a bad input: exit status 2 and one sentence on stderr;
5. `orchard sweep` on two worker processes, which the app starts by running itself;
6. `orchard` without a display (Linux only): trains on the sample it finds in itself;
7. the window (QT_QPA_PLATFORM=offscreen) opening the sample, warming up every
   solver and quitting (gui/app.py's ORCHARD_SMOKE_EXIT).

It prints the measurements and exits with status 1 at the first failure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from build import build, cpu_levels, executable, kernel_cache, shipped_levels, shipped_size

ROOT = Path(__file__).resolve().parents[1]
KEYS = {"algorithm", "n_rows", "n_features", "n_classes", "depth", "train_error",
        "train_accuracy", "lower_bound", "optimal", "status", "time_s", "n_leaves",
        "incumbents"}
NOTICE = "Compiling the solver once"
COUNT = {"ORCHARD_COUNT_COMPILES": "1"}
NONE_COMPILED = "orchard: compiled 0 kernels"
ALGORITHMS = ("blossom", "contree", "dl85", "cadl85", "greedy", "sat-depth", "sat-size",
              "odd", "auto")
GUI_SECONDS = 600  # the window warms up every solver from a cold cache first

# Runs the exported module on the sample with nothing but the standard library.
PREDICT_WITH_EXPORT = """
import csv, json, sys
sys.path.insert(0, '.')
from model import predict
with open(sys.argv[1], newline='', encoding='utf-8') as f:
    print(json.dumps([predict(row) for row in csv.DictReader(f)]))
"""


class SmokeFailure(Exception):
    pass


def check(condition: bool, message: str) -> None:
    if not condition:
        raise SmokeFailure(message)


class App:
    """The frozen program, run from `home` with a clean environment."""

    def __init__(self, program: Path, home: Path):
        self.program, self.home = program, home
        self.env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
        if sys.platform == "win32":  # what Windows programs cannot start without
            self.env = {"SYSTEMROOT": os.environ["SYSTEMROOT"], "USERPROFILE": str(home),
                        "LOCALAPPDATA": str(home),
                        "PATH": os.path.join(os.environ["SYSTEMROOT"], "System32")}

    def run(self, *args: str, status: int = 0, env: dict | None = None,
            timeout: float = 300) -> tuple[subprocess.CompletedProcess, float]:
        """Run `orchard ARGS`; return the process and its wall time in seconds."""
        started = time.perf_counter()
        done = subprocess.run([str(self.program), *args], cwd=self.home, text=True,
                              capture_output=True, env={**self.env, **(env or {})},
                              timeout=timeout, check=False)
        seconds = time.perf_counter() - started
        check(done.returncode == status,
              f"'orchard {' '.join(args)}' exited {done.returncode}, not {status}:\n"
              f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
        return done, seconds


def fit_summary(done: subprocess.CompletedProcess) -> dict:
    summary = json.loads(done.stdout)
    check(KEYS <= summary.keys(), f"JSON keys missing: {sorted(KEYS - summary.keys())}")
    check(summary["n_rows"] == 600 and 0.75 <= summary["train_accuracy"] <= 1,
          f"implausible result on loans.csv: {summary}")
    check(summary["optimal"] and summary["status"] == "optimal",
          f"depth 3 on loans.csv should be solved to optimality: {summary['status']}")
    return summary


def files_of(folder: Path) -> dict[str, int]:
    return {str(f.relative_to(folder)): f.stat().st_size for f in folder.rglob("*")}


def check_cli(app: App, sample: Path, shipped: Path) -> dict:
    figures = {}
    before = files_of(shipped)
    cold, figures["cold_s"] = app.run("fit", str(sample), "--depth", "3", "--json", env=COUNT)
    summary = fit_summary(cold)
    check(NONE_COMPILED in cold.stderr and NOTICE not in cold.stderr,
          f"the first launch compiled kernels instead of using the shipped cache: "
          f"{cold.stderr!r}")
    warm, figures["warm_s"] = app.run("fit", str(sample), "--depth", "3", "--json", env=COUNT)
    check(NONE_COMPILED in warm.stderr, f"the second launch compiled: {warm.stderr!r}")
    check(fit_summary(warm)["train_error"] == summary["train_error"], "runs disagree")
    figures["accuracy"] = summary["train_accuracy"]
    caches = [p.name for p in app.home.rglob("numba/*") if p.is_dir()]
    levels = shipped_levels(shipped)
    check(len(caches) == 1 and caches[0].endswith(tuple(levels)),
          f"expected one unzipped kernel cache in the user's cache folder: {caches}")
    print(f"Kernel cache chosen for this CPU: {caches[0]}")
    for level in levels:  # every shipped level works, whichever this CPU gets
        done, _ = app.run("fit", str(sample), "--depth", "3", "--json",
                          env={**COUNT, "ORCHARD_CPU_LEVEL": level})
        check(NONE_COMPILED in done.stderr, f"level {level} compiled: {done.stderr!r}")
        check(fit_summary(done)["train_error"] == summary["train_error"], f"{level} disagrees")
    for algorithm in ALGORITHMS:
        done, _ = app.run("fit", str(sample), "--algo", algorithm, "--depth", "2",
                          "--time-limit", "10", env=COUNT)
        check(NONE_COMPILED in done.stderr, f"{algorithm} compiled: {done.stderr[-500:]!r}")
    check(files_of(shipped) == before, "the app wrote into its shipped kernel cache")

    outputs = {"out": "model.json", "rules": "rules.txt", "python": "model.py",
               "sql": "model.sql", "dot": "tree.dot", "image": "tree.png"}
    flags = [arg for flag, name in outputs.items() for arg in (f"--{flag}", name)]
    app.run("fit", str(sample), "--depth", "3", *flags)
    for name in outputs.values():
        path = app.home / name
        check(path.is_file() and path.stat().st_size > 0, f"export {name} not written")
    check((app.home / "tree.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG")
    predicted, _ = app.run("predict", "model.json", str(sample), "--json")
    prediction = json.loads(predicted.stdout)
    check(prediction["accuracy"] == summary["train_accuracy"],
          f"predict: accuracy {prediction['accuracy']} != {summary['train_accuracy']}")
    exported = subprocess.run([sys.executable, "-I", "-c", PREDICT_WITH_EXPORT, str(sample)],
                              cwd=app.home, capture_output=True, text=True, env=app.env,
                              check=False)
    check(exported.returncode == 0, f"the exported model.py failed: {exported.stderr}")
    check(json.loads(exported.stdout) == prediction["predictions"],
          "the exported Python predicts differently from the model")

    bad, _ = app.run("fit", "no-such-file.csv", status=2)
    check(bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr,
          f"a bad input should give one sentence: {bad.stderr!r}")
    return figures


def check_sweep(app: App, sample: Path) -> None:
    spec = {"datasets": [str(sample)], "algorithms": ["greedy"], "depth": 2, "folds": 2}
    (app.home / "sweep.json").write_text(json.dumps(spec))
    done, _ = app.run("sweep", "sweep.json", "--workers", "2", "--json")
    summary = json.loads(done.stdout.splitlines()[-1])
    check(summary["ran"] == 2 and summary["failed"] == 0, f"sweep: {summary}")


def check_bundled_sample(app: App) -> None:
    """Without a display, `orchard` trains on the sample inside the app."""
    done, _ = app.run()
    check("No display found" in done.stdout and "training accuracy" in done.stdout,
          f"the headless demo did not train: {done.stdout[-1000:]}")


def check_window(app: App, sample: Path) -> float:
    done, seconds = app.run(str(sample), env={"QT_QPA_PLATFORM": "offscreen",
                                              "ORCHARD_SMOKE_EXIT": str(GUI_SECONDS)},
                            timeout=GUI_SECONDS + 60)
    check(f"'Orchard — {sample.name}'" in done.stdout, f"window: {done.stdout[-1000:]}")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description="Smoke-test the standalone app.")
    parser.add_argument("--reuse", action="store_true", help="test the last build")
    parser.add_argument("--onefile", action="store_true", help="the one-file variant")
    parser.add_argument("--level", action="append", choices=cpu_levels(),
                        help="build for this CPU level only (repeatable; default: "
                             f"{', '.join(cpu_levels())})")
    args = parser.parse_args()
    figures = {}
    if args.reuse:
        program = executable(args.onefile)
        check(program.is_file(), f"no build to reuse at {program}")
    else:
        started = time.perf_counter()
        program = build(args.onefile, args.level)
        figures["build_s"] = time.perf_counter() - started
    figures["size_mb"] = shipped_size(args.onefile) / 1e6
    # The one-folder app's own copy of the sample, to show it is bundled.
    sample = (ROOT / "resources" if args.onefile
              else program.parent / "_internal" / "resources") / "samples" / "loans.csv"
    check(sample.is_file(), f"sample not bundled: {sample}")
    home = Path(tempfile.mkdtemp(prefix="orchard-smoke-"))
    try:
        app = App(program, home)
        figures.update(check_cli(app, sample, kernel_cache()))
        check_sweep(app, sample)
        if sys.platform.startswith("linux"):  # elsewhere there is always a display
            check_bundled_sample(app)
        figures["window_s"] = check_window(app, sample)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    print("Smoke test passed: " + ", ".join(f"{k} {v:.3g}" for k, v in figures.items()))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (SmokeFailure, subprocess.SubprocessError, OSError, ValueError) as failure:
        print(f"Smoke test FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
