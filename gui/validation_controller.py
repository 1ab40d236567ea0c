"""Accuracy on new rows for a finished run, estimated in the background.

A run's tree is shown as soon as its search ends; the run's test plan (5-fold
cross-validation by default) then re-trains on the plan's splits in a worker
(`engine.evaluation`), and the estimate is attached to the run's record when it is
ready: the tree is never delayed by it.  Each fold also scores always answering the
most common class and the greedy tree of the same depth, so the window can say when
the tree loses to either (`Evaluation.verdict`).

One estimate runs at a time, on two cores beside the window: a new run, Stop, a
session opened or the window closing stops it, and the folds done so far are kept
(marked incomplete, with why).  The folds share the run's time limit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QObject, Signal

from engine.evaluation import CrossValidation, Evaluation
from engine.solvers.monitor import Monitor
from gui.app_state import AppState
from gui.runs import RunRecord
from gui.worker import Worker


@dataclass
class _Estimate:
    """One run's estimate under way: its worker, and what the window says of it."""

    record: RunRecord
    worker: Worker
    progress: str
    stopped_by: str = ""                                   # why it was stopped, if it was
    accuracies: list[float] = field(default_factory=list)   # of the splits done


class ValidationController(QObject):
    progressed = Signal(object)   # the RunRecord whose estimate moved on
    busy_changed = Signal()

    def __init__(self, parent, state: AppState):
        super().__init__(parent)
        self.state = state
        self.current: _Estimate | None = None   # the estimate Stop and a new run stop
        self._estimates: dict[Worker, _Estimate] = {}   # every one not ended yet
        self._closed = False

    @property
    def estimating(self) -> bool:
        """An estimate is under way that Stop would stop."""
        return self.current is not None

    @property
    def busy(self) -> bool:
        """An estimate is under way, or a stopped one has yet to hand in its splits."""
        return bool(self._estimates)

    def progress(self, run: RunRecord | None) -> str:
        """What the estimate of `run` is doing now ('' when none is under way)."""
        current = self.current
        return current.progress if current is not None and run is current.record else ""

    def start(self, record: RunRecord, validation: CrossValidation,
              time_limit: float | None) -> None:
        """Estimate `record`'s accuracy on new rows with `validation` (its plan, and
        the run's algorithm and settings on the rows it trained on)."""
        self.stop("Stopped when a later run's estimate started.")
        worker = Worker(validation.run, on_cancel=validation.cancel,
                        name="orchard-validation", clock=Monitor(time_limit),
                        on_fold=lambda fold, n: worker.report((fold, n)))
        estimate = _Estimate(record, worker, f"estimating on new rows: "
                                             f"{validation.plan.describe()}…")
        self._estimates[worker] = estimate
        worker.partial.connect(self._fold_done)
        worker.finished.connect(self._finished)
        worker.errored.connect(self._failed)
        worker.cancelled.connect(self._failed)
        self.current = estimate
        worker.start()
        self.busy_changed.emit()
        self.progressed.emit(record)

    def stop(self, why: str = "Testing was stopped.") -> None:
        """Stop the estimate under way (if any); `why` is what its record will say.
        Its worker ends on its own (the split being trained stops at once) and its
        splits done are then attached to its run."""
        estimate, self.current = self.current, None
        if estimate is not None:
            estimate.stopped_by = why
            estimate.worker.cancel()
            self.busy_changed.emit()   # nothing left for Stop
            self.progressed.emit(estimate.record)

    def close(self) -> None:
        """The window closes: stop them all and wait, so no thread outlives it."""
        self._closed, self.current = True, None
        for worker in list(self._estimates):
            worker.cancel()
        for worker in list(self._estimates):
            worker.wait()
        self._estimates.clear()

    # ------------------------------------------------------------------ worker
    def _estimate(self) -> _Estimate | None:
        """The estimate whose worker sent the signal being handled (None once the
        window is closing)."""
        return None if self._closed else self._estimates.get(self.sender())

    def _fold_done(self, payload) -> None:
        estimate = self._estimate()
        if estimate is None:
            return
        fold, n = payload
        estimate.accuracies.append(fold.test_accuracy)
        mean = 100 * sum(estimate.accuracies) / len(estimate.accuracies)
        estimate.progress = (f"estimating on new rows: {len(estimate.accuracies)} of {n} "
                             f"splits done, {mean:.1f}% so far…")
        if estimate is self.current:
            self.progressed.emit(estimate.record)

    def _finished(self, evaluation: Evaluation) -> None:
        estimate = self._estimate()
        if estimate is None:
            return
        if estimate.stopped_by and not evaluation.complete:
            evaluation.stopped_by = estimate.stopped_by
        estimate.record.evaluation = evaluation
        self._end(estimate)

    def _failed(self, message: str = "") -> None:
        """The estimate ended without an evaluation: the record says why."""
        estimate = self._estimate()
        if estimate is None:
            return
        record = estimate.record
        record.message = " ".join(filter(None, (
            record.message, "Accuracy on new rows was not estimated: "
            + (message or estimate.stopped_by or "it was stopped."))))
        self._end(estimate)

    def _end(self, estimate: _Estimate) -> None:
        del self._estimates[estimate.worker]
        if estimate is self.current:
            self.current = None
        self.busy_changed.emit()
        self.state.update_run(estimate.record)
