"""Compile (or load from numba's on-disk cache) every solver's kernels ahead of use.

The first call of a numba kernel compiles it, which takes seconds with an empty cache
and a fraction of a second with a warm one.  The GUI calls `warm_up` in a background
worker at start-up, so the user's first Run starts searching at once; the CLI and
benchmarks may call it to keep compilation out of their timings.

Each registered solver is trained on a tiny built-in table prepared with the
solver's default binarisation (and, for solvers that also take continuous
features, once more on the binarised table), through the same `engine.training.train`
the application uses, so every kernel specialisation a normal run needs is built.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from numba.core import event

from engine.data.csv_reader import parse_text
from engine.data.dataset import Dataset, PrepOptions
from engine.featurize import prepare
from engine.solvers import compile_ahead, get_solver, solver_names
from engine.solvers.monitor import Monitor
from engine.training import default_binarization, train
from engine.vocabulary import CLASSIFICATION, REGRESSION

# 24 rows, numeric + categorical + yes/no inputs, two classes, one pair of identical
# inputs with different classes (so inconsistent-row handling runs too).
TINY_TABLE = """age,colour,member,spend,buys
23,red,yes,120,no
35,blue,no,340,yes
47,green,yes,90,no
52,red,no,410,yes
19,blue,yes,60,no
61,green,no,300,yes
33,red,yes,220,yes
28,blue,no,150,no
44,green,yes,380,yes
39,red,no,95,no
57,blue,yes,260,yes
25,green,no,130,no
31,red,yes,310,yes
49,blue,no,70,no
36,green,yes,280,yes
42,red,no,190,no
29,blue,yes,350,yes
54,green,no,110,no
38,red,yes,240,yes
46,blue,no,160,no
21,green,yes,330,yes
58,red,no,140,no
33,red,yes,220,no
40,blue,yes,270,yes
"""

WARMUP_DEPTH = 2
THREADED_DEPTH = 3   # the least depth at which every solver with `threads` uses them


@dataclass
class WarmupReport:
    """Seconds each solver took to train the first time, and the solvers that failed."""

    timings: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    stopped: bool = False
    compiled_elsewhere: float = 0.0   # seconds the child processes took, before

    @property
    def total(self) -> float:
        """Seconds from the start to every solver ready."""
        return self.compiled_elsewhere + float(sum(self.timings.values()))


def tiny_dataset(binarize: str = "none", drop_inconsistent: bool = False,
                 task: str = CLASSIFICATION) -> Dataset:
    """The built-in warm-up table, prepared with `binarize` (and without the
    contradicting row for solvers that only accept consistent data); a regression's
    predicts `spend` (the kernels a solver runs for numbers compile too)."""
    regression = task == REGRESSION
    return prepare(parse_text(TINY_TABLE), PrepOptions(
        target="spend" if regression else "buys", binarize=binarize, task=task,
        drop_inconsistent=drop_inconsistent and not regression))


def _variants(name: str) -> list[str]:
    first = default_binarization(name)
    if get_solver(name).needs == "any" and first == "none":
        return ["none", "quantile:4"]
    return [first]


def _params(solver) -> dict:
    """The warm-up's parameters: a small depth, or, for solvers with `threads`, two
    threads at the depth where they start (the kernels threads use, whatever the
    cores)."""
    names_of = {p.name for p in solver.params}
    params = {"depth": WARMUP_DEPTH} if "depth" in names_of else {}
    if "threads" in names_of:
        params.update(threads=2, depth=THREADED_DEPTH)
    return params


def warm_up(names: list[str] | None = None,
            on_solver: Callable[[str, float], None] | None = None,
            should_stop: Callable[[], bool] | None = None,
            in_children: bool = False) -> WarmupReport:
    """Train each solver in `names` (default: all registered) once on the tiny table.

    `on_solver(name, seconds)` is called after each solver; `should_stop()` is
    checked between solvers (a compilation in progress cannot be interrupted).
    Failures are collected in the report rather than raised: warming up is only an
    optimisation, and the real run will report the problem to the user.

    `in_children`: first compile the kernels the disk cache lacks in child processes,
    on every core (`compile_ahead.compile_all`), so that this process mostly loads
    them: the window's warm-up, which must not hold its interpreter for a minute.
    """
    names = solver_names() if names is None else list(names)
    should_stop = should_stop or (lambda: False)
    report = WarmupReport()
    if in_children:
        started = time.perf_counter()
        compile_ahead.compile_all(names, should_stop, on_done=lambda name: on_solver and
                                  on_solver(name, time.perf_counter() - started))
        report.compiled_elsewhere = time.perf_counter() - started
    for name in names:
        if should_stop():
            report.stopped = True
            break
        started = time.perf_counter()
        try:
            solver = get_solver(name)
            for task in solver.tasks:
                for binarize in _variants(name):
                    train(tiny_dataset(binarize, solver.consistent_only, task), name,
                          _params(solver), monitor=Monitor(None))
        except Exception as exc:  # noqa: BLE001 - reported, never fatal
            report.errors[name] = f"{type(exc).__name__}: {exc}"
            continue
        seconds = time.perf_counter() - started
        report.timings[name] = seconds
        if on_solver is not None:
            on_solver(name, seconds)
    return report


def own_kernels(name: str) -> None:
    """Compile (or load) the kernels of solver `name` alone, as `warm_up` would, but
    on a table binarised without greedy thresholds and without the greedy warm start:
    what `engine.solvers.compile_ahead` runs in a child process while the parent
    compiles the preparation's and greedy's kernels itself."""
    solver = get_solver(name)
    for binarize in _variants(name):
        binarize = "quantile:4" if binarize == "guided" else binarize
        solver().solve(tiny_dataset(binarize, solver.consistent_only),
                       solver.resolve(_params(solver)), Monitor(None))


class _FirstCompile(event.Listener):
    def __init__(self, callback: Callable[[], None]):
        self.callback = callback

    def on_start(self, ev) -> None:
        if self.callback is not None:
            callback, self.callback = self.callback, None
            callback()

    def on_end(self, ev) -> None:
        pass


@contextmanager
def on_first_compile(callback: Callable[[], None]) -> Iterator[None]:
    """Call `callback` once if numba starts compiling a kernel inside the block.

    numba announces a compilation only when a kernel is missing from its disk cache,
    so this is how the CLI tells a cold first run (seconds of compiling) from a warm
    one without guessing.
    """
    with event.install_listener("numba:compile", _FirstCompile(callback)):
        yield


class CompileCounter(event.Listener):
    """Counts the kernels numba compiles (those missing from its disk cache); a kernel
    compiled as part of another counts once, with the outer one."""

    def __init__(self):
        self.count = 0
        self._depth = 0

    def on_start(self, ev) -> None:
        self.count += self._depth == 0
        self._depth += 1

    def on_end(self, ev) -> None:
        self._depth -= 1


def count_compiles() -> CompileCounter:
    """Start counting compilations for the rest of the process (the frozen app reports
    the count when asked, to prove its kernels came from the shipped cache)."""
    counter = CompileCounter()
    event.register("numba:compile", counter)
    return counter


def install() -> int:
    """Every solver's kernels into the disk cache, on every core, saying each one as it
    is ready: `pip install`'s build step (packaging/install_kernels.py)."""
    report = warm_up(in_children=True)
    for name, seconds in report.timings.items():
        print(f"orchard: {name} ready ({seconds:.1f} s in this process)", flush=True)
    for name, error in report.errors.items():
        print(f"orchard: {name} failed to warm up: {error}", flush=True)
    print(f"orchard: every solver ready in {report.total:.0f} s "
          f"({report.compiled_elsewhere:.0f} s of it in child processes)", flush=True)
    return 1 if report.errors else 0


if __name__ == "__main__":
    import sys
    if sys.argv[1:2] == ["--own"] and len(sys.argv) == 3:   # compile_ahead's child
        own_kernels(sys.argv[2])
    else:   # --install
        sys.exit(install())
