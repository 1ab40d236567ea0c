"""Run one slow call (reading a file, training) off the GUI thread, with Qt signals.

    worker = Worker(train, data, "greedy", on_cancel=monitor.cancel)
    worker.finished.connect(show_result)
    worker.errored.connect(show_error)
    worker.start()

The call runs in its own QThread.  Signals are emitted from that thread and reach
slots of GUI objects through queued connections, so slots always run on the GUI
thread.  Exactly one of `finished(result)`, `errored(message)` or `cancelled()` ends
every started worker:

* `finished` when the call returns, even after a cancel request: anytime solvers
  return their best tree when stopped, and that result is worth showing;
* `errored` when it raises: an `OrchardError` gives its own sentence, anything else
  "Unexpected error: ..." (the traceback goes to stderr, it is a bug);
* `cancelled` when it raises after a cancel request (the exception is then only the
  way the call stopped), or when the worker was cancelled before it started.

`partial(object)` carries intermediate results: pass `worker.report` as a callback
to the call (it is safe to call from any thread), or name the call's keyword for it
with `report_arg="report"`.
"""

from __future__ import annotations

import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal

from engine.errors import OrchardError


def error_message(exc: BaseException) -> str:
    """The sentence shown to the user for an exception raised by a worker's call."""
    if isinstance(exc, OrchardError):
        return str(exc)
    text = str(exc) or type(exc).__name__
    return f"Unexpected error: {text}"


def collect_garbage_in_gui_thread():
    """Turn off Python's automatic cycle collection and collect on a timer in the GUI
    thread instead (pyqtgraph's `GarbageCollector`; keep the returned object).

    Automatic collection runs in whichever thread happens to allocate: a worker thread
    could then destroy a closed window's or dialog's widgets, and Qt crashes when a
    widget is destroyed outside the GUI thread.  Undo with `collector.timer.stop()`
    and `gc.enable()` (the tests do so after each window test)."""
    from pyqtgraph.util.garbage_collector import GarbageCollector
    return GarbageCollector(interval=0.5)


_LIVE: set[Worker] = set()  # started workers, kept alive until their thread has ended


def wait_for_workers() -> None:
    """Block until every started worker's thread has ended.  Called after the event
    loop, since a thread that just emitted its last signal may still be running, and
    Qt aborts the process if its QThread is destroyed at exit."""
    for worker in list(_LIVE):
        worker.wait()


class _Thread(QThread):
    def __init__(self, worker: Worker):
        super().__init__()
        self._worker = worker

    def run(self) -> None:
        self._worker._run()


class Worker(QObject):
    started = Signal()
    partial = Signal(object)
    finished = Signal(object)
    errored = Signal(str)
    cancelled = Signal()

    def __init__(self, fn: Callable[..., Any], *args: Any,
                 on_cancel: Callable[[], None] | None = None, name: str = "orchard-worker",
                 parent: QObject | None = None, report_arg: str | None = None,
                 **kwargs: Any):
        super().__init__(parent)
        if report_arg is not None:
            kwargs[report_arg] = self.report
        self._call = (fn, args, kwargs)
        self._on_cancel = on_cancel
        self._cancel_requested = threading.Event()
        self._thread = _Thread(self)
        self._thread.setObjectName(name)
        self._thread.finished.connect(self._release)
        self._launched = False
        self._ended = False

    # ---------------------------------------------------------------- control
    def start(self) -> None:
        """Start the call in its thread (once)."""
        if self._launched:
            raise RuntimeError("A Worker can only be started once.")
        self._launched = True
        if self._cancel_requested.is_set():
            self._ended = True
            self.cancelled.emit()
            return
        _LIVE.add(self)  # nobody may destroy the QThread while it runs
        self._thread.start()

    def cancel(self) -> None:
        """Ask the call to stop (through `on_cancel`); safe from any thread, idempotent."""
        if self._cancel_requested.is_set():
            return
        self._cancel_requested.set()
        if self._on_cancel is not None:
            self._on_cancel()

    def report(self, payload: Any) -> None:
        """Emit `partial(payload)`; meant to be called by the running call."""
        self.partial.emit(payload)

    def wait(self, timeout_ms: int | None = None) -> bool:
        """Block until the call has returned; True if it has (or never started)."""
        if not self._thread.isRunning():
            return True
        if timeout_ms is None:
            return self._thread.wait()
        return self._thread.wait(int(timeout_ms))

    # ------------------------------------------------------------------ state
    @property
    def cancel_requested(self) -> bool:
        return self._cancel_requested.is_set()

    def is_running(self) -> bool:
        """True from `start()` until the call has returned."""
        return self._launched and not self._ended

    # ----------------------------------------------------------------- thread
    def _release(self) -> None:
        _LIVE.discard(self)

    def _run(self) -> None:
        fn, args, kwargs = self._call
        self.started.emit()
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - every failure becomes a message
            self._ended = True
            if self._cancel_requested.is_set():
                self.cancelled.emit()
            else:
                if not isinstance(exc, OrchardError):
                    print(f"Orchard: unexpected error in {self._thread.objectName()}:",
                          file=sys.stderr)
                    traceback.print_exception(exc, file=sys.stderr)
                self.errored.emit(error_message(exc))
            return
        finally:
            self._call = None  # drop references to big inputs as soon as possible
        self._ended = True
        self.finished.emit(result)
