"""Where a sweep's fits run: this process, a pool of local processes, or Dask.

Every backend has one method, `run(tasks)`, yielding one result row per task as
fits finish (in any order); rows come from `Task.run`, so they agree across backends
apart from the timing columns.

- `InProcess`: one fit after the other in the calling process (tests, debugging).
  The time limit is the solver's own deadline; nothing kills a fit that ignores it,
  and a fit that crashes the interpreter ends the sweep (the journal keeps the rows
  already finished).
- `ProcessPool` (the default): `workers` processes, each running one fit at a
  time, so a fit that crashes or exhausts memory costs only its own row (`crashed`)
  and one that hangs past its time limit plus `grace` seconds is killed (`timeout`);
  a replacement process takes the next fit.  Workers are kept between fits so the
  solvers' compiled kernels are loaded once per worker, not once per fit (seconds
  saved per fit on sweeps of many small fits).  They fork from a server that has
  already imported the engine (`forkserver`; `spawn` where that is missing); as with
  any multiprocessing, a script that runs a sweep needs the
  `if __name__ == "__main__":` guard.
- `DaskCluster`: the fits as tasks on a Dask cluster (`tcp://HOST:PORT`, or `local`
  for a `LocalCluster` of worker processes on this machine).  Datasets are read by
  the workers, so their paths must be valid there (a shared file system).  Dask
  restarts a worker that dies and retries its fit; after its retries the fit is
  recorded as `crashed`.  A fit that hangs keeps its worker busy: Dask cannot stop a
  running task, so the solver's own deadline is the only limit.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any, Protocol

from engine.errors import ParameterError
from engine.experiments.tasks import Task
from engine.solvers import threads as threads_module
from engine.solvers.threads import cpu_count

DEFAULT_GRACE = 60.0  # seconds past the time limit: start-up, reading, first JIT compile
# The longest single wait for a worker: `wait` refuses timeouts of about 25 days and
# more (a time limit may be longer), and the pool's loop simply waits again.
LONGEST_WAIT = 86_400.0


class Backend(Protocol):
    def run(self, tasks: Sequence[Task]) -> Iterator[dict[str, Any]]: ...


class InProcess:
    def run(self, tasks: Sequence[Task]) -> Iterator[dict[str, Any]]:
        for task in tasks:
            yield task.run()


def _run(task: Task) -> dict[str, Any]:
    return task.run()


def _serve(conn, threads: int) -> None:
    """A pool worker's life: receive a task, send back its row, until stopped.
    Its searches use `threads` threads (its share of the cores) unless told otherwise."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is the parent's to handle
    os.environ[threads_module.ENVIRONMENT] = str(threads)
    while True:
        conn.send(_run(conn.recv()))


@dataclass
class _Worker:
    process: Any
    conn: Any
    task: Task | None = None
    started: float = 0.0


class ProcessPool:
    def __init__(self, workers: int | None = None, grace: float = DEFAULT_GRACE):
        self.workers = workers or cpu_count()
        self.grace = grace

    def run(self, tasks: Sequence[Task]) -> Iterator[dict[str, Any]]:
        context = _context()
        pending = deque(tasks)
        pool: list[_Worker] = []
        try:
            while pending or any(w.task is not None for w in pool):
                pool = [w for w in pool if w.process.is_alive()]
                busy = sum(w.task is not None for w in pool)
                wanted = min(self.workers, busy + len(pending))
                threads = max(1, cpu_count() // self.workers)
                pool += [_start(context, threads) for _ in range(wanted - len(pool))]
                for worker in pool:
                    if worker.task is None and pending:
                        worker.task, worker.started = pending.popleft(), time.monotonic()
                        worker.conn.send(worker.task)
                running = {w.conn: w for w in pool if w.task is not None}
                for conn in wait(list(running), timeout=self._wait(running.values())):
                    yield self._receive(running[conn])
                for worker in running.values():
                    if worker.task is not None and self._wait([worker]) == 0.0:
                        yield self._stop_overrun(worker)
        finally:
            for worker in pool:          # idle ones hold nothing, busy ones were cut off
                _stop(worker)

    def _kill_after(self, task: Task | None) -> float | None:
        if task is None or task.time_limit is None:
            return None
        return task.time_limit + self.grace

    def _wait(self, running) -> float | None:
        """Seconds until the next fit overruns (at most LONGEST_WAIT), 0 if one has
        (None: no limit)."""
        limits = [w.started + limit - time.monotonic() for w in running
                  if (limit := self._kill_after(w.task)) is not None]
        return max(0.0, min(*limits, LONGEST_WAIT)) if limits else None

    def _stop_overrun(self, worker: _Worker) -> dict[str, Any]:
        task, worker.task = worker.task, None
        _stop(worker)
        seconds = time.monotonic() - worker.started
        return task.failed("timeout", f"The fit ran {seconds:.0f} s, past its time limit "
                           f"plus {self.grace:g} s, and was stopped.", seconds)

    @staticmethod
    def _receive(worker: _Worker) -> dict[str, Any]:
        """The row of the worker's fit; a crashed worker is stopped and its fit failed."""
        task, worker.task = worker.task, None
        try:
            return worker.conn.recv()
        except EOFError:                          # died before sending its row
            pass
        _stop(worker)
        code = worker.process.exitcode
        how = (f"killed by {signal.Signals(-code).name}" if code is not None and code < 0
               else f"exit code {code}")
        return task.failed("crashed", f"The fit's process died ({how}; out of memory?).",
                           time.monotonic() - worker.started)


def _context():
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() \
        else "spawn"
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        context.set_forkserver_preload(["engine.experiments.tasks"])
    return context


def _start(context, threads: int) -> _Worker:
    conn, child = context.Pipe()
    process = context.Process(target=_serve, args=(child, threads), daemon=True)
    process.start()
    child.close()
    return _Worker(process, conn)


def _stop(worker: _Worker) -> None:
    worker.process.kill()
    worker.process.join()
    worker.conn.close()


class DaskCluster:
    def __init__(self, address: str, workers: int | None = None):
        self.address = address
        self.workers = workers or cpu_count()

    def run(self, tasks: Sequence[Task]) -> Iterator[dict[str, Any]]:
        try:
            from dask import distributed
        except ImportError:
            raise ParameterError('Running on a Dask cluster needs Dask: pip install '
                                 '"orchard[cluster]".') from None
        cluster = None
        if self.address == "local":
            cluster = distributed.LocalCluster(
                n_workers=self.workers, threads_per_worker=1, processes=True,
                dashboard_address=None, silence_logs=logging.ERROR)
        try:
            client = distributed.Client(cluster or self.address, timeout="20s")
        except (OSError, TimeoutError) as exc:
            if cluster is not None:
                cluster.close()
            raise ParameterError(f"Cannot reach the Dask scheduler at {self.address} "
                                 f"({exc}).") from None
        try:
            futures = {client.submit(_run, task, pure=False): task for task in tasks}
            for future in distributed.as_completed(futures):
                task = futures.pop(future)
                try:
                    row = future.result()
                except Exception as exc:  # noqa: BLE001 - e.g. KilledWorker
                    row = task.failed("crashed", f"The fit failed on the cluster "
                                      f"({type(exc).__name__}: {exc}).", None)
                future.release()
                yield row
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


def make_backend(workers: int | None = None, scheduler: str | None = None) -> Backend:
    """The CLI's choice: a Dask cluster when `scheduler` is given, else a process pool."""
    if workers is not None and workers < 1:
        raise ParameterError("--workers must be at least 1.")
    if scheduler is None:
        return ProcessPool(workers)
    if scheduler != "local" and "://" not in scheduler:
        raise ParameterError(f"The scheduler '{scheduler}' should look like "
                             "tcp://HOST:PORT, or be 'local'.")
    return DaskCluster(scheduler, workers)
