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

from PySide6.QtCore import QObject, Signal

from engine.evaluation import CrossValidation, Evaluation
from engine.solvers.monitor import Monitor
from gui.app_state import AppState
from gui.runs import RunRecord
from gui.worker import Worker


class ValidationController(QObject):
    progressed = Signal(object)   # the RunRecord whose estimate moved on or ended
    busy_changed = Signal()

    def __init__(self, parent, state: AppState):
        super().__init__(parent)
        self.state = state
        self.worker: Worker | None = None
        self.record: RunRecord | None = None
        self._progress = ""
        self._stopped_by = ""
        self._folds: list[float] = []   # the test accuracies of the splits done

    @property
    def busy(self) -> bool:
        return self.worker is not None

    def progress(self, run: RunRecord | None) -> str:
        """What the estimate of `run` is doing now ('' when none is under way)."""
        return self._progress if run is not None and run is self.record else ""

    def start(self, record: RunRecord, validation: CrossValidation,
              time_limit: float | None) -> None:
        """Estimate `record`'s accuracy on new rows with `validation` (its plan, and
        the run's algorithm and settings on the rows it trained on)."""
        self.stop("")
        clock = Monitor(time_limit)
        worker = Worker(validation.run, on_cancel=validation.cancel,
                        name="orchard-validation", clock=clock,
                        on_fold=lambda fold, n: worker.report((fold, n)))
        worker.partial.connect(self._fold_done)
        worker.finished.connect(self._finished)
        worker.errored.connect(self._failed)
        worker.cancelled.connect(lambda: self._failed(""))
        self.worker, self.record, self._stopped_by, self._folds = worker, record, "", []
        self._progress = f"estimating on new rows: {validation.plan.describe()}…"
        worker.start()
        self.busy_changed.emit()
        self.progressed.emit(record)

    def stop(self, why: str = "Testing was stopped.") -> None:
        """Stop the estimate under way (if any); `why` is what its record will say."""
        if self.worker is not None:
            self._stopped_by = why
            self.worker.cancel()

    def close(self) -> None:
        """The window closes: stop and wait, so no thread outlives it."""
        worker = self.worker
        if worker is not None:
            self.worker = None
            worker.cancel()
            worker.wait()

    # ------------------------------------------------------------------ worker
    def _fold_done(self, payload) -> None:
        if self.sender() is not self.worker:
            return
        fold, n = payload
        self._folds.append(fold.test_accuracy)
        mean = 100 * sum(self._folds) / len(self._folds)
        self._progress = (f"estimating on new rows: {len(self._folds)} of {n} splits "
                          f"done, {mean:.1f}% so far…")
        self.progressed.emit(self.record)

    def _finished(self, evaluation: Evaluation) -> None:
        if self.sender() is not self.worker:
            return
        if self._stopped_by and not evaluation.complete:
            evaluation.stopped_by = self._stopped_by
        record = self._end()
        record.evaluation = evaluation
        self.state.update_run(record)

    def _failed(self, message: str) -> None:
        """The estimate ended without an evaluation: the record says why."""
        if self.sender() is not self.worker:
            return
        record = self._end()
        record.message = " ".join(filter(None, (
            record.message, f"Accuracy on new rows was not estimated: "
            f"{message or self._stopped_by or 'it was stopped.'}")))
        self.state.update_run(record)

    def _end(self) -> RunRecord:
        record = self.record
        self.worker, self.record, self._progress = None, None, ""
        self.busy_changed.emit()
        return record
