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
"""

from __future__ import annotations

import math
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable

import numpy as np

from engine.data.preprocessing import Preprocessing
from engine.errors import Interrupted
from engine.model.feature_space import on_features
from engine.solvers import kernel_support as ks
from engine.solvers.protocol import Status

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

    def start(self) -> None:
        """(Re)start the clock; the deadline counts from here."""
        now = time.monotonic()
        self.control[ks.C_START] = now
        if self.time_limit is not None:
            self.control[ks.C_DEADLINE] = now + self.time_limit

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
        saved = self.control[ks.C_DEADLINE]
        now = time.monotonic()
        if self.time_limit is not None and fraction < 1:
            self.control[ks.C_DEADLINE] = min(saved, now + (saved - now) * fraction)
        self.control[ks.C_DEADLINE] = min(self.control[ks.C_DEADLINE], now + cap)
        try:
            yield
        finally:
            self.control[ks.C_DEADLINE] = saved
            if self.control[ks.C_STOP] == ks.STOP_TIME and time.monotonic() < saved:
                self.control[ks.C_STOP] = 0.0

    def checkpoint(self, stage: str, fraction: float | None = None) -> None:
        """Report that `stage` is `fraction` done; raise `Interrupted` if the run must stop.

        Data stages call this between chunks of work (at least every ~0.3 s on the
        largest tables), which is what makes Stop and the time limit work before any
        solver has started.
        """
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
        warm-start tree are left out: the curve never goes up.
        """
        t = self.elapsed() if t is None else t
        if error >= self.floor:
            return
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
