"""Latency: how long a user waits for a fit, next to the tools they would otherwise use.

Issue 35 asks that an exact fit be no slower than the reference implementations
(geometric mean of the time ratios ours / theirs ≤ 1.0, no set above 2.0), that a
grid search in a notebook take under a second, and that a first run be quick.  This
script measures all three and prints markdown tables as it goes (`--out FILE` also
appends them to FILE).

1. Whole fits, ratio ours / reference, on the same features in this process.  Ours
   is `orchard.OptimalTreeClassifier(algorithm=A, max_depth=d, time_limit=budget,
   params={"threads": 1}).fit(X, y)` (`greedy` and `auto` take no `threads`: they
   run with ORCHARD_THREADS=1, so `auto`'s inner search has one thread too), timed
   around `fit`, preparation included:
     - pystreed (`STreeDClassifier`, accuracy, max_depth d) vs `blossom` and `dl85`
       on the CP4IM sets (0/1 features), depths 3 and 4;
     - pycontree (`ConTree`, max_depth d) vs `contree` on the ConTree sets
       (continuous features), depths 2 and 3;
     - scikit-learn CART (`DecisionTreeClassifier(max_depth=d)`) vs `greedy` and
       `auto` on small and mid tables (iris, wine, breast cancer, a few of the above),
       depths 3 and 4.
   The kernels of our algorithms are loaded (or compiled) first, and the seconds it
   took printed.  Each side is called once first (warm-up, and the budget check: a side that does
   not finish within `--budget` seconds skips the set, said in its row), then the
   sides are called in turn until each has run at least 5 times and spent 0.3 s, at
   most 50 runs or 20 s; the table shows the median seconds.  Training errors are
   compared: exact solvers must equal the reference (pycontree reads values as
   float32, so a column whose float64 values collapse can differ), greedy must equal
   CART, auto must not be worse than CART; any other outcome is flagged MISMATCH
   in the row and listed at the end.  Per table: the geometric mean of each
   algorithm's ratios and its worst set, with the issue's targets where they apply.
2. `GridSearchCV(OptimalTreeClassifier(), {"max_depth": [1, 2, 3, 4]}, cv=5)` on
   iris, kernels compiled, threads as a notebook gets them (every core): median of
   3 runs (target < 1 s), and the same with scikit-learn's DecisionTreeClassifier.
3. `--cold`: each in a fresh process with an empty numba cache (a new
   NUMBA_CACHE_DIR, removed afterwards): the stages of a first use (imports,
   compiling every solver through `engine.warmup.warm_up`, once in the process
   itself (one core) and once in child processes on every core as the window does
   (`in_children=True`), each with its own empty cache, then preparing and
   searching a 1,000-row table of numeric and text columns); `orchard fit` on that
   table with the default algorithm and `--time-limit 20`, cold then warm; and the
   README's first command, `orchard` without a display (trains a bundled sample),
   whose wall time and tree status are shown.  First, the README's own path: a
   clone of HEAD in a fresh venv, `pip install -e .` (whose build step compiles the
   kernels) and the same two commands after it.  Compiling takes minutes on 2 cores.

Run it on an idle machine (the ratios move with load; the header gives the load
average when the script started):

    .venv/bin/python benchmarks/latency.py [--quick] [--sets a,b] [--depths 3,4]
        [--budget 60] [--parts pystreed,pycontree,cart,grid,cold] [--cold]
        [--out FILE]

`--quick` (two sets per table, fewer runs) is a smoke test, not a measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import numpy as np
from pystreed import STreeDClassifier
from sklearn import datasets
from sklearn.model_selection import GridSearchCV
from sklearn.tree import DecisionTreeClassifier

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))   # benchmarks/, this script's folder, is there

from big_tables import transport_log  # noqa: E402
from contree import CONTREE, load as load_contree, reference as pycontree_fit  # noqa: E402
from cp4im_exact import CP4IM, geomean, load as load_cp4im  # noqa: E402

from engine.solvers import get_solver  # noqa: E402
from engine.solvers.threads import ENVIRONMENT as THREADS_ENV  # noqa: E402
from engine.warmup import warm_up  # noqa: E402
from orchard import OptimalTreeClassifier  # noqa: E402

# (seconds, training error, finished): finished = proved optimal for an exact solver,
# ran to its end for a heuristic; False when the time limit stopped it.
Fit = tuple[float, float, bool]
FitMaker = Callable[[np.ndarray, np.ndarray, int, float], Callable[[], Fit]]

ORCHARD = Path(sys.executable).parent / "orchard"
CLI_TIME_LIMIT = "20"
GRID = {"max_depth": [1, 2, 3, 4]}
PARTS = ("pystreed", "pycontree", "cart", "grid", "cold")

# pycontree warns when its time limit stops a fit; the row says so instead.
warnings.filterwarnings("ignore", "Fitting exceeds time limit")


@dataclass(frozen=True)
class Repeats:
    """When a side has been timed enough: at least `least` runs and `seconds` spent,
    or `most` runs, or `cap` seconds spent."""

    least: int = 5
    seconds: float = 0.3
    most: int = 50
    cap: float = 20.0

    def want(self, times: list[float]) -> bool:
        spent = sum(times)
        return (len(times) < self.most and spent < self.cap
                and (len(times) < self.least or spent < self.seconds))


QUICK = Repeats(least=3, seconds=0.1, most=5, cap=5.0)


class Report:
    """Prints each line, and appends it to `path` when one is given."""

    def __init__(self, path: str | None):
        self.path = path

    def __call__(self, text: str = "") -> None:
        print(text, flush=True)
        if self.path:
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(text + "\n")


# ------------------------------------------------------------------ data

def cp4im_set(name: str) -> tuple[np.ndarray, np.ndarray]:
    data = load_cp4im(name)
    return data.X.astype(np.int32), data.y


def contree_set(name: str) -> tuple[np.ndarray, np.ndarray]:
    data = load_contree(name)
    return (np.ascontiguousarray(data.X, dtype=np.float64),
            np.ascontiguousarray(data.y, dtype=np.int32))


def sklearn_set(name: str) -> tuple[np.ndarray, np.ndarray]:
    return getattr(datasets, f"load_{name.replace('-', '_')}")(return_X_y=True)


def names_in(folder: Path) -> list[str]:
    return sorted(path.stem for path in folder.glob("*.txt"))


CART_SETS = {"iris": sklearn_set, "wine": sklearn_set, "breast-cancer": sklearn_set,
             "vote": cp4im_set, "tic-tac-toe": cp4im_set, "bank": contree_set,
             "rice": contree_set}


# ------------------------------------------------------------------ fits

def ours(algorithm: str) -> FitMaker:
    threads = "threads" in {p.name for p in get_solver(algorithm).params}

    def maker(X, y, depth, budget):
        def run() -> Fit:
            model = OptimalTreeClassifier(algorithm=algorithm, max_depth=depth,
                                          time_limit=budget,
                                          params={"threads": 1} if threads else None)
            start = time.perf_counter()
            model.fit(X, y)
            seconds = time.perf_counter() - start
            return seconds, model.train_error_, model.status_ in ("optimal", "finished")
        return run
    return maker


def pystreed(X, y, depth, budget):
    def run() -> Fit:
        model = STreeDClassifier(max_depth=depth, time_limit=budget)
        start = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - start
        return seconds, int((model.predict(X) != y).sum()), model.fit_result.is_optimal()
    return run


def pycontree(X, y, depth, budget):
    def run() -> Fit:
        error, seconds, status = pycontree_fit(X, y, depth, 0, budget)
        return seconds, error, status == "finished"
    return run


def cart(X, y, depth, budget):
    def run() -> Fit:
        model = DecisionTreeClassifier(max_depth=depth, random_state=0)
        start = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - start
        return seconds, int((model.predict(X) != y).sum()), True
    return run


@contextmanager
def one_thread() -> Iterator[None]:
    """Solvers without a `threads` parameter (auto's inner search) use one thread."""
    before = os.environ.get(THREADS_ENV)
    os.environ[THREADS_ENV] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ[THREADS_ENV]
        else:
            os.environ[THREADS_ENV] = before


def medians(runs: dict[str, Callable[[], Fit]],
            repeats: Repeats) -> dict[str, tuple[float, bool]]:
    """Median seconds of each side, and whether the time limit stopped one of its runs;
    the sides are called in turn so they share the load."""
    times: dict[str, list[float]] = {side: [] for side in runs}
    stopped = set()
    while pending := [side for side in runs if repeats.want(times[side])]:
        for side in pending:
            seconds, _, finished = runs[side]()
            times[side].append(seconds)
            if not finished:
                stopped.add(side)
    return {side: (statistics.median(values), side in stopped)
            for side, values in times.items()}


def seconds_cell(seconds: float, stopped: bool) -> str:
    return f"{seconds:.4f}" + (" (limit)" if stopped else "")


# ------------------------------------------------------------------ comparison tables

@dataclass
class Comparison:
    """One reference against some of our algorithms, a table per depth."""

    reference: str
    theirs: FitMaker
    algorithms: list[str]
    sets: dict[str, Callable[[str], tuple[np.ndarray, np.ndarray]]]
    depths: list[int]
    targets: bool            # the targets (mean ≤ 1.0, worst ≤ 2.0) apply
    at_most: tuple[str, ...] = ()   # algorithms whose error may be below the reference's


def error_problem(comparison: Comparison, algorithm: str, mine: float, theirs: float) -> bool:
    if algorithm in comparison.at_most:
        return mine > theirs + 1e-9
    return abs(mine - theirs) > 1e-9


def compare(comparison: Comparison, budget: float, repeats: Repeats, report: Report,
            mismatches: list[str]) -> None:
    algorithms = comparison.algorithms
    for depth in comparison.depths:
        report(f"\n### {' and '.join(algorithms)} vs {comparison.reference}, depth {depth}"
               f" (median whole-fit seconds, budget {budget:g} s)\n")
        report(f"| set | rows × features | {comparison.reference} s | "
               + " | ".join(f"{a} s | ratio" for a in algorithms)
               + f" | errors {comparison.reference} / {' / '.join(algorithms)} |")
        report("|---|---:|---:|" + "---:|---:|" * len(algorithms) + "---|")
        ratios: dict[str, dict[str, float]] = {a: {} for a in algorithms}
        for name, loader in comparison.sets.items():
            X, y = loader(name)
            cells, set_ratios = compare_set(comparison, name, X, y, depth, budget,
                                            repeats, mismatches)
            for algorithm, ratio in set_ratios.items():
                ratios[algorithm][name] = ratio
            report(f"| {name} | {X.shape[0]} × {X.shape[1]} | {' | '.join(cells)} |")
        report()
        for algorithm in algorithms:
            report(summary(f"{algorithm} / {comparison.reference}, depth {depth}",
                           ratios[algorithm], len(comparison.sets), comparison.targets))


def compare_set(comparison: Comparison, name: str, X, y, depth: int, budget: float,
                repeats: Repeats, mismatches: list[str]) -> tuple[list[str], dict]:
    """The cells of one set's row after its first two, and each algorithm's ratio."""
    reference = comparison.reference
    runs = {reference: comparison.theirs(X, y, depth, budget)}
    runs.update({a: ours(a)(X, y, depth, budget) for a in comparison.algorithms})
    first = {}
    for side, run in runs.items():   # warm-up, and the budget check
        first[side] = seconds, _, finished = run()
        if not finished or seconds > budget:
            return ([f"skipped: {side} took over the {budget:g} s budget"]
                    + [""] * (2 * len(comparison.algorithms) + 1)), {}
    timed = medians(runs, repeats)
    errors = {side: outcome[1] for side, outcome in first.items()}
    cells = [seconds_cell(*timed[reference])]
    ratios, flags = {}, []
    for algorithm in comparison.algorithms:
        ratios[algorithm] = timed[algorithm][0] / timed[reference][0]
        cells += [seconds_cell(*timed[algorithm]), f"{ratios[algorithm]:.2f}"]
        if error_problem(comparison, algorithm, errors[algorithm], errors[reference]):
            flags.append(f"MISMATCH {algorithm}")
            mismatches.append(f"{name} depth {depth}: {algorithm} {errors[algorithm]:g}, "
                              f"{reference} {errors[reference]:g}")
    cells.append(" / ".join(f"{errors[side]:g}" for side in runs) +
                 "".join(f" **{flag}**" for flag in flags))
    return cells, ratios


def summary(label: str, ratios: dict[str, float], sets: int, targets: bool) -> str:
    if not ratios:
        return f"{label}: no set timed ({sets} skipped)"
    mean = geomean(list(ratios.values()))
    worst = max(ratios, key=ratios.get)
    text = (f"{label}: geometric mean {mean:.2f} over {len(ratios)} sets "
            f"({sets - len(ratios)} skipped), worst {worst} {ratios[worst]:.2f}")
    if targets:
        text += (f"; targets: mean ≤ 1.0 {'met' if mean <= 1.0 else 'NOT MET'}, "
                 f"no set above 2.0 {'met' if ratios[worst] <= 2.0 else 'NOT MET'}")
    return text


# ------------------------------------------------------------------ grid search

def grid_search(report: Report, runs: int = 3) -> None:
    X, y = datasets.load_iris(return_X_y=True)
    report(f"\n### GridSearchCV({GRID}, cv=5) on iris, kernels compiled "
           f"(median of {runs} runs)\n")
    report("| estimator | seconds | target |\n|---|---:|---|")
    for label, estimator, target in (
            ("OptimalTreeClassifier()", OptimalTreeClassifier(), 1.0),
            ("DecisionTreeClassifier()", DecisionTreeClassifier(), None)):
        GridSearchCV(estimator, GRID, cv=5).fit(X, y)   # compiles or loads the kernels
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            GridSearchCV(estimator, GRID, cv=5).fit(X, y)
            times.append(time.perf_counter() - start)
        seconds = statistics.median(times)
        verdict = ("reference" if target is None else
                   f"< {target:g} s: {'met' if seconds < target else 'NOT MET'}")
        report(f"| {label} | {seconds:.3f} | {verdict} |")


# ------------------------------------------------------------------ cold start

COLD_STAGES = r"""
import json, sys, time

def stage(name, seconds):
    print(json.dumps([name, seconds]), flush=True)

start = time.perf_counter()
import engine
stage("import engine", time.perf_counter() - start)
start = time.perf_counter()
import orchard
stage("import orchard (the notebook API)", time.perf_counter() - start)
start = time.perf_counter()
from engine.data.csv_reader import read_table
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.solvers import default_solver_name, get_solver
from engine.training import default_binarization, train
from engine.warmup import warm_up
stage("import the rest (reading, training, warm-up)", time.perf_counter() - start)
start = time.perf_counter()
children = sys.argv[3] == "children"
report = warm_up(on_solver=lambda name, seconds: stage(f"compile {name}", seconds),
                 in_children=children)
stage(("every solver ready, compiled in child processes on every core (the window's "
       "warm-up)" if children else "every solver ready, compiled in this process")
      + "".join(f"; {n} FAILED: {e}" for n, e in report.errors.items()),
      time.perf_counter() - start)
algorithm = default_solver_name()
depth = get_solver(algorithm).resolve({})["depth"]
binarize = default_binarization(algorithm)
start = time.perf_counter()
data = prepare(read_table(sys.argv[1]), PrepOptions(binarize=binarize, depth=depth))
stage(f"read and prepare the {data.n_rows}-row table ({binarize}: "
      f"{data.n_features} features)", time.perf_counter() - start)
start = time.perf_counter()
result = train(data, algorithm, {}, time_limit=float(sys.argv[2]))
stage(f"search ({algorithm}, depth {depth}: {result.status.value})",
      time.perf_counter() - start)
"""


@contextmanager
def empty_cache() -> Iterator[dict[str, str]]:
    """The environment of a process whose numba cache starts empty (and is removed)."""
    with tempfile.TemporaryDirectory(prefix="orchard-numba-") as cache:
        yield dict(os.environ, NUMBA_CACHE_DIR=cache)


def timed_process(command: list[str], env: dict[str, str],
                  merged: bool = False) -> tuple[float, str]:
    """Seconds the command took and its output (stdout, with stderr when `merged`)."""
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT if merged else subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: "
                           f"{(done.stderr or done.stdout).strip()[-500:]}")
    return seconds, done.stdout


def cold_stages(table: Path, report: Report) -> None:
    """The stages of a first use, compiling in this process (one core) and then, with
    another empty cache, in child processes (the window's warm-up); for a compile in
    the one-process run, the seconds after each solver are those it added."""
    for mode in ("one process", "children"):
        report(f"\n### Cold start in a fresh process, empty numba cache ({mode})\n")
        report("| stage | seconds |\n|---|---:|")
        with empty_cache() as env:
            total, out = timed_process([sys.executable, "-c", COLD_STAGES, str(table),
                                        CLI_TIME_LIMIT, mode], env)
        for name, seconds in map(json.loads, out.splitlines()):
            report(f"| {name} | {seconds:.2f} |")
        report(f"| whole process (interpreter start included) | {total:.2f} |")


def cli_runs(table: Path, report: Report) -> None:
    report(f"\n### The command line, wall time of the whole command "
           f"(time limit {CLI_TIME_LIMIT} s)\n")
    report("| command | numba cache | seconds | of which compiling (off the clock) "
           "| optimal tree |\n|---|---|---:|---:|---|")
    fit = [str(ORCHARD), "fit", str(table), "--time-limit", CLI_TIME_LIMIT, "--json"]
    shown = f"orchard fit {table.name} --time-limit {CLI_TIME_LIMIT} --json"
    with empty_cache() as env:
        for cache in ("empty", "warm"):
            seconds, out = timed_process(fit, env)
            answer = json.loads(out.splitlines()[-1])
            compiling = answer["stats"].get("compile_s", 0.0)
            report(f"| `{shown}` ({answer['chosen_algorithm']}) | {cache} | {seconds:.2f} |"
                   f" {compiling:.2f} | {'yes' if answer['optimal'] else 'no'} "
                   f"({answer['status']}) |")
    with empty_cache() as env:
        for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "ORCHARD_SMOKE_EXIT"):
            env.pop(name, None)
        seconds, out = timed_process([str(ORCHARD)], env)
    status = re.search(r"status (\w+)", out)   # "blossom: ... status optimal, 0.54 s"
    status = status.group(1) if status else "no tree printed"
    report(f"| `orchard` without a display (bundled sample) | empty | {seconds:.2f} | | "
           f"{'yes' if status == 'optimal' else 'no'} ({status}) |")


def install_runs(table: Path, folder: Path, report: Report) -> None:
    """The README's path: a clone of this repository's HEAD in a fresh venv, `pip
    install -e .` (whose build step compiles every solver's kernels into the clone's
    `__pycache__`, packaging/install_kernels.py), then the first commands."""
    report("\n### After `pip install -e .` in a fresh clone and venv (numba's cache in "
           "the clone, as a user's)\n")
    report("| step | seconds | note |\n|---|---:|---|")
    clone = folder / "clone"
    env = {name: value for name, value in os.environ.items()
           if name not in ("NUMBA_CACHE_DIR", "PYTHONPATH", "VIRTUAL_ENV")}
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    subprocess.run([sys.executable, "-m", "venv", str(clone / ".venv")], check=True)
    seconds, out = timed_process([str(clone / ".venv/bin/pip"), "install", "-v", "-e",
                                  str(clone)], env, merged=True)
    said = re.search(r"orchard: kernels compiled in (\d+) s", out)
    report(f"| `pip install -e .` | {seconds:.1f} | build step compiling the kernels: "
           f"{said.group(1) + ' s' if said else 'not said'} |")
    orchard = str(clone / ".venv/bin/orchard")
    seconds, out = timed_process([orchard, "fit", str(table), "--time-limit",
                                  CLI_TIME_LIMIT, "--json"], env)
    answer = json.loads(out.splitlines()[-1])
    report(f"| first `orchard fit {table.name} --time-limit {CLI_TIME_LIMIT}` "
           f"({answer['chosen_algorithm']}) | {seconds:.2f} | {answer['status']}; "
           f"compiling {answer['stats'].get('compile_s', 0.0):.2f} s |")
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "ORCHARD_SMOKE_EXIT"):
        env.pop(name, None)
    seconds, out = timed_process([orchard], env)
    status = re.search(r"status (\w+)", out)
    report(f"| `orchard` without a display (bundled sample) | {seconds:.2f} | "
           f"{status.group(1) if status else 'no tree printed'} |")


def cold(report: Report) -> None:
    with tempfile.TemporaryDirectory(prefix="orchard-latency-") as folder:
        table = transport_log(Path(folder) / "transport-1000.csv", 1000)
        report(f"\nGenerated table: {table.name}, 1,000 rows, 15 input columns "
               "(4 text, 11 numeric, 2% missing cells), 2 classes "
               "(tests/big_tables.transport_log).")
        install_runs(table, Path(folder), report)
        cold_stages(table, report)
        cli_runs(table, report)


# ------------------------------------------------------------------ main

def machine_facts() -> str:
    cpu = platform.processor() or platform.machine()
    with open("/proc/cpuinfo", encoding="utf-8") as info:
        cpu = next((line.split(":", 1)[1].strip() for line in info
                    if line.startswith("model name")), cpu)
    versions = ", ".join(f"{name} {version(name)}" for name in
                         ("numba", "pystreed", "pycontree", "scikit-learn"))
    return (f"{time.strftime('%Y-%m-%d %H:%M')}; {cpu}, {os.cpu_count()} cores, "
            f"load average {os.getloadavg()[0]:.2f}; Python {platform.python_version()}, "
            f"{versions}")


def comparisons(args) -> list[Comparison]:
    def chosen(sets: dict, quick: list[str]) -> dict:
        if args.sets:
            return {name: sets[name] for name in args.sets.split(",") if name in sets}
        return {name: sets[name] for name in quick} if args.quick else sets

    def depths(default: list[int]) -> list[int]:
        return [int(d) for d in args.depths.split(",")] if args.depths else default

    parts = []
    if "pystreed" in args.parts:
        sets = chosen({name: cp4im_set for name in names_in(CP4IM)}, ["zoo-1", "vote"])
        parts.append(Comparison("pystreed", pystreed, ["blossom", "dl85"], sets,
                                depths([3, 4]), targets=True))
    if "pycontree" in args.parts:
        sets = chosen({name: contree_set for name in names_in(CONTREE)}, ["bank", "raisin"])
        parts.append(Comparison("pycontree", pycontree, ["contree"], sets,
                                depths([2, 3]), targets=True))
    if "cart" in args.parts:
        parts.append(Comparison("CART", cart, ["greedy", "auto"],
                                chosen(CART_SETS, ["iris", "wine"]), depths([3, 4]),
                                targets=False, at_most=("auto",)))
    return parts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", default=",".join(PARTS[:-1]),
                        help=f"which of {', '.join(PARTS)} to run")
    parser.add_argument("--cold", action="store_true", help="also run the cold starts")
    parser.add_argument("--sets", help="comma-separated set names (default: all)")
    parser.add_argument("--depths", help="comma-separated depths for every table "
                        "(default: 3,4 vs pystreed and CART, 2,3 vs pycontree)")
    parser.add_argument("--budget", type=float, default=60.0,
                        help="seconds allowed to each fit (ours and the references')")
    parser.add_argument("--quick", action="store_true",
                        help="two sets per table and few runs: a smoke test")
    parser.add_argument("--out", help="also append the tables to this file")
    args = parser.parse_args()
    args.parts = args.parts.split(",") + (["cold"] if args.cold else [])
    if unknown := set(args.parts) - set(PARTS):
        parser.error(f"unknown parts: {', '.join(sorted(unknown))}")
    known = set(names_in(CP4IM)) | set(names_in(CONTREE)) | set(CART_SETS)
    if args.sets and (unknown := set(args.sets.split(",")) - known):
        parser.error(f"unknown sets: {', '.join(sorted(unknown))}")
    report = Report(args.out)

    report(f"\n## Latency (benchmarks/latency.py{' --quick' if args.quick else ''}) — "
           f"{machine_facts()}")
    parts = comparisons(args)
    algorithms = {a for part in parts for a in part.algorithms} | (
        {"auto"} if "grid" in args.parts else set())
    if algorithms:
        timings = warm_up(sorted(algorithms)).timings
        report("JIT warm-up before any timing (kernels loaded from numba's cache, or "
               "compiled): " + ", ".join(f"{n} {s:.2f} s" for n, s in timings.items()))
    mismatches: list[str] = []
    with one_thread():
        for comparison in parts:
            compare(comparison, args.budget, QUICK if args.quick else Repeats(), report,
                    mismatches)
    if "grid" in args.parts:
        grid_search(report)
    if "cold" in args.parts:
        cold(report)
    if mismatches:
        report("\n**TRAINING ERRORS DIFFER** (see the rows flagged MISMATCH):")
        for line in mismatches:
            report(f"- {line}")
    elif any(part in args.parts for part in ("pystreed", "pycontree", "cart")):
        report("\nTraining errors: every timed set as expected.")


if __name__ == "__main__":
    main()
