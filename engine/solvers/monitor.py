"""How a run is watched and steered: cancel, time limit, progress, incumbents.

One Monitor per run, created when the user presses Run (or the CLI starts), so the
time limit covers every stage: reading, preparing, the search and testing.  The GUI
calls `cancel()` from its thread (the CLI from its Ctrl-C handler).  Data stages call
`checkpoint(stage, fraction)` between chunks of work: it reports progress to
`on_progress` and raises `Interrupted` once the run should stop, so a stop during
preparation ends the run instead of waiting for the solver.  Solvers poll
`should_stop()` (Python) or `kernel_support.should_stop(monitor.control)` (numba,
GIL released) and report each improving tree with `publish`, which records the
anytime curve and forwards the tree to an optional callback (the GUI's live view).

Compiling is off the clock.  A kernel missing from numba's disk cache compiles at its
first call, for seconds, once per computer; while a run's own thread compiles one,
the run's deadline is suspended, and afterwards it and the run's clock are moved on
by the compile's length, so a cold first run searches as long as a warm one, never
returns a worse tree for it, and its curve and time count the search alone.  The
run's stage meanwhile reads `COMPILING`.  (A compile in another thread, e.g. the
window's warm-up, does not stop a run's clock.)
"""

from __future__ import annotations

import math
import threading
import time
import weakref
from contextlib import contextmanager
from typing import Any, Callable

import numpy as np
from numba.core import event

from engine.data.preprocessing import Preprocessing
from engine.errors import Interrupted
from engine.model.feature_space import on_features
from engine.solvers import kernel_support as ks
from engine.solvers.protocol import Status

COMPILING = "compiling (once for this computer)"

_STOP_STATUS = {ks.STOP_CANCEL: Status.CANCELLED, ks.STOP_TIME: Status.TIME_LIMIT,
                ks.STOP_MEMORY: Status.MEMORY_LIMIT}


class Monitor:
    def __init__(self, time_limit: float | None = None,
                 on_incumbent: Callable[[Any, float, float, float], None] | None = None,
                 on_progress: Callable[[str, float | None], None] | None = None,
                 control: np.ndarray | None = None):
        """`on_incumbent(tree, t, error, lower_bound)` is called from the solving thread,
        `on_progress(stage, fraction)` from whichever thread runs a data stage.

        `control`: another Monitor's control array, for a helper search inside that
        run (`odd`'s tree seed): it obeys that run's Stop, deadline and clock, while
        its trees stay its own (`time_limit` then only words its messages)."""
        if time_limit is not None and not time_limit > 0:
            raise ValueError("time_limit must be positive")
        self.time_limit = time_limit
        self.on_incumbent = on_incumbent
        self.on_progress = on_progress
        self.stage = "starting"
        self.incumbents: list[tuple[float, float, float]] = []
        self.best_tree = None
        self.best_error = math.inf
        self.floor = math.inf   # a warm start's error: worse trees are not shown
        self.compile_seconds = 0.0   # compiling during the run: not on its clock
        self.threads: set[int] = set()   # the threads working for this run
        # The features of the table being trained on (set by `engine.training.train`):
        # every published tree is re-expressed on them (`on_features`), so the live view
        # never sees the derived features a solver searched (`auto`'s thresholds).
        self.space: Preprocessing | None = None
        if control is not None:
            self.control = control
            return
        self.control = np.zeros(ks.CONTROL_SIZE)
        self.control[ks.C_DEADLINE] = math.inf
        self.start()

    def helper(self) -> Monitor:
        """A Monitor for a search inside this run whose trees are not the run's (the
        run publishes what it makes of them: `hybrid`'s exact top): it obeys the run's
        Stop and deadline, its time limit is what is left of them (a `share` in force
        included), and a compile in its threads is off the run's clock (one set of
        threads)."""
        left = self.remaining()
        helper = Monitor(None if left is None else max(left, 1e-3), control=self.control)
        helper.threads = self.threads
        return helper

    def start(self) -> None:
        """(Re)start the clock; the deadline counts from here."""
        now = time.monotonic()
        self.control[ks.C_START] = now
        if self.time_limit is not None:
            self.control[ks.C_DEADLINE] = now + self.time_limit
        self.threads.add(threading.get_ident())
        _COMPILE_CLOCK.runs.add(self)

    @contextmanager
    def off_clock(self):
        """Within the block the run is compiling (its stage says so) and its clock is
        stopped, e.g. while it waits for kernels another process compiles for it."""
        started, paused = time.monotonic(), _pause([self])
        try:
            yield
        finally:
            _resume(paused, time.monotonic() - started)

    def finish(self) -> None:
        """The run's solving is over: later compiles (another run's) no longer move
        its deadline or change its stage."""
        _COMPILE_CLOCK.runs.discard(self)

    def elapsed(self) -> float:
        return time.monotonic() - self.control[ks.C_START]

    def cancel(self) -> None:
        if self.control[ks.C_STOP] == 0.0:
            self.control[ks.C_STOP] = ks.STOP_CANCEL

    def should_stop(self) -> bool:
        if self.control[ks.C_STOP] == 0.0 and time.monotonic() >= self.control[ks.C_DEADLINE]:
            self.control[ks.C_STOP] = ks.STOP_TIME
        return self.control[ks.C_STOP] != 0.0

    def remaining(self) -> float | None:
        """Seconds left before the deadline (None without a time limit)."""
        if self.time_limit is None:
            return None
        return max(0.0, self.control[ks.C_DEADLINE] - time.monotonic())

    @contextmanager
    def share(self, fraction: float, cap: float = math.inf):
        """Within the block the deadline is at most `fraction` of the time left away
        (and at most `cap` seconds, with or without a time limit): the training fit
        of a run that then tests folds gets its share of the one time limit.
        Afterwards the run's own deadline is back in force."""
        saved, compiled = self.control[ks.C_DEADLINE], self.compile_seconds
        now = time.monotonic()
        if self.time_limit is not None and fraction < 1:
            self.control[ks.C_DEADLINE] = min(saved, now + (saved - now) * fraction)
        self.control[ks.C_DEADLINE] = min(self.control[ks.C_DEADLINE], now + cap)
        try:
            yield
        finally:
            self.control[ks.C_DEADLINE] = saved + (self.compile_seconds - compiled)
            if self.control[ks.C_STOP] == ks.STOP_TIME and time.monotonic() < saved:
                self.control[ks.C_STOP] = 0.0

    def checkpoint(self, stage: str, fraction: float | None = None) -> None:
        """Report that `stage` is `fraction` done; raise `Interrupted` if the run must stop.

        Data stages call this between chunks of work (at least every ~0.3 s on the
        largest tables), which is what makes Stop and the time limit work before any
        solver has started.
        """
        self.threads.add(threading.get_ident())   # e.g. a GUI worker's
        self.stage = stage
        if self.on_progress is not None:
            self.on_progress(stage, fraction)
        if self.should_stop():
            raise self.interruption()

    def interruption(self) -> Interrupted:
        """The error that ends a run stopped before it had a model, in one sentence."""
        status = self.stop_status() or Status.CANCELLED
        where = self.stage[:1].lower() + self.stage[1:]
        if status == Status.TIME_LIMIT:
            return Interrupted(
                f"The time limit of {self.time_limit:g} s ran out while {where}, before "
                "any tree was trained: raise the time limit (it covers reading and "
                "preparing the data too).", status.value)
        return Interrupted(f"Stopped while {where}; no tree was trained.", status.value)

    def stop_status(self) -> Status | None:
        """Why the run was stopped early, or None."""
        return _STOP_STATUS.get(float(self.control[ks.C_STOP]))

    def final_status(self, proven: bool, heuristic_done: bool = False) -> Status:
        """Status of a finished solve: proof beats an interruption that came too late."""
        if proven:
            return Status.OPTIMAL
        stopped = self.stop_status()
        if stopped is not None and not heuristic_done:
            return stopped
        return Status.FINISHED

    def publish(self, tree: Any, error: float, lower_bound: float,
                t: float | None = None) -> None:
        """Record an improving incumbent (the curve) and hand it to the callback.

        After a warm start (`floor`), a solver's own trees that are no better than the
        warm-start tree are left out: the curve never goes up.  Nor does it go back in
        time: threads stamp their trees when found, and a later-drained thread's better
        tree may be stamped before the last one shown; it counts from that one's time
        (it became the best then), or the chart's steps would loop back.
        """
        t = self.elapsed() if t is None else t
        if error >= self.floor:
            return
        if self.incumbents:
            t = max(t, self.incumbents[-1][0])
        self.incumbents.append((t, float(error), float(lower_bound)))
        if tree is not None and self.space is not None:
            tree = on_features(tree, self.space)
        if tree is not None and error <= self.best_error:
            self.best_tree, self.best_error = tree, float(error)
        if self.on_incumbent is not None and tree is not None:
            self.on_incumbent(tree, t, float(error), float(lower_bound))

    def run_kernel(self, kernel: Callable, args: tuple, sink: ks.IncumbentSink | None = None,
                   make_tree: Callable | None = None, poll: float = 0.02):
        """Run a nogil kernel in a thread, draining `sink` into `publish` meanwhile.

        `make_tree(feature, threshold, left, right, value)` turns drained arrays into
        a model.  Returns the kernel's return value (exceptions are re-raised).
        """
        sinks = [sink] if sink is not None else []
        return self.run_threads([lambda: kernel(*args)], sinks, make_tree, poll)[0]

    def run_threads(self, targets: list[Callable], sinks: list[ks.IncumbentSink],
                    make_tree: Callable | None = None, poll: float = 0.02) -> list:
        """Run each of `targets` (calling nogil kernels) in a thread of its own, draining
        every sink into `publish` meanwhile; returns their return values in order (the
        first exception is re-raised once all have ended).

        With several sinks (threads searching parts of one problem) only trees better
        than every one published before (in this call or an earlier one) are passed
        on, so the curve never goes up.
        """
        outcomes: list[dict[str, Any]] = [{} for _ in targets]

        def run(target, outcome):
            self.threads.add(threading.get_ident())   # its compiles are this run's
            try:
                outcome["value"] = target()
            except BaseException as exc:  # re-raised in the caller's thread
                outcome["error"] = exc

        threads = [threading.Thread(target=run, args=(target, outcome), daemon=True,
                                    name=f"orchard-kernel-{i}")
                   for i, (target, outcome) in enumerate(zip(targets, outcomes))]
        for thread in threads:
            thread.start()
        # (below what was published before: one search may run threads several times)
        best = [self.incumbents[-1][1] if self.incumbents else math.inf] \
            if len(sinks) > 1 else None
        for thread in threads:
            while thread.is_alive():
                thread.join(poll)
                self.should_stop()   # turns a passed deadline into the stop code kernels poll
                for sink in sinks:
                    self._drain(sink, make_tree, best)
        for sink in sinks:
            self._drain(sink, make_tree, best)
        for outcome in outcomes:
            if "error" in outcome:
                raise outcome["error"]
        return [outcome["value"] for outcome in outcomes]

    def _drain(self, sink: ks.IncumbentSink, make_tree: Callable | None,
               best: list[float] | None) -> None:
        """Publish the sink's new events, the sink's best tree with the last of them
        that has its error; with `best`, only events below best[0], which they lower."""
        events, arrays, tree_error = sink.drain()
        kept = []
        for t, error, lower_bound in events:
            if best is not None:
                if error >= best[0]:
                    continue
                best[0] = error
            kept.append((t, error, lower_bound))
        for i, (t, error, lower_bound) in enumerate(kept):
            last = i == len(kept) - 1
            tree = (make_tree(*arrays) if last and arrays and make_tree
                    and error == tree_error else None)
            self.publish(tree, error, lower_bound, t)


class _CompileClock(event.Listener):
    """Takes numba's compiling off the clock of the run in progress (in `runs`) whose
    thread compiles.

    numba announces a compilation only when a kernel is missing from its disk cache,
    and holds one lock while it compiles, so compiles never overlap; a kernel compiled
    inside another counts with the outer one.  While one lasts, each run's deadline is
    infinite (threads of the run polling `should_stop` meanwhile must not see it
    pass); at its end the deadline is the old one plus the compile's seconds.
    """

    def __init__(self):
        self.runs: weakref.WeakSet[Monitor] = weakref.WeakSet()
        self._depth = 0
        self._started = 0.0
        self._paused: list[tuple[Monitor, float, str]] = []

    def on_start(self, ev) -> None:
        self._depth += 1
        if self._depth == 1:
            thread = threading.get_ident()
            self._started = time.monotonic()
            self._paused = _pause([run for run in list(self.runs) if thread in run.threads])

    def on_end(self, ev) -> None:
        self._depth -= 1
        if self._depth == 0:
            _resume(self._paused, time.monotonic() - self._started)
            self._paused = []


def _pause(runs: list[Monitor]) -> list[tuple[Monitor, float, str]]:
    """Suspend the deadlines of `runs` and show them compiling; returns what `_resume`
    needs."""
    paused = [(run, float(run.control[ks.C_DEADLINE]), run.stage) for run in runs]
    for run, _, _ in paused:
        run.control[ks.C_DEADLINE] = math.inf
        _tell(run, COMPILING)
    return paused


def _resume(paused: list[tuple[Monitor, float, str]], seconds: float) -> None:
    """Each paused run's deadline back, `seconds` later, and its stage back; its clock
    (`elapsed`, the times of its trees) moves on too, so it counts the search alone."""
    moved: set[int] = set()   # a helper run shares its parent's control array
    for run, deadline, stage in paused:
        run.compile_seconds += seconds
        if id(run.control) not in moved:
            moved.add(id(run.control))
            run.control[ks.C_DEADLINE] = deadline + seconds
            run.control[ks.C_START] += seconds
        _tell(run, stage)


def _tell(run: Monitor, stage: str) -> None:
    """Show `stage` for `run` without ever disturbing the compile under way."""
    run.stage = stage
    if run.on_progress is not None:
        try:
            run.on_progress(stage, None)
        except Exception:  # noqa: BLE001 - a progress display must not break compiling
            pass


_COMPILE_CLOCK = _CompileClock()
event.register("numba:compile", _COMPILE_CLOCK)
