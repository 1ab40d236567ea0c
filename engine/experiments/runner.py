"""Run a sweep: skip what the journal holds, run the rest, record each row at once."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from engine.experiments.backends import Backend, ProcessPool
from engine.experiments.journal import (
    Journal,
    check_table_path,
    journal_path,
    results_table,
    row_key,
    write_table,
)
from engine.experiments.spec import Sweep
from engine.experiments.tasks import FAILED


@dataclass
class Outcome:
    table: pd.DataFrame      # every fit of the sweep recorded so far, in spec order
    out: Path
    journal: Path
    fits: int                # in the sweep
    ran: int                 # now
    skipped: int             # already in the journal
    failed: int              # rows of the table with a failure status
    seconds: float


# progress(finished, to_run, failed_now): once before the first fit and after each
Progress = Callable[[int, int, int], None]


def run_sweep(sweep: Sweep, out: str | Path, backend: Backend | None = None,
              progress: Progress | None = None) -> Outcome:
    """Run the fits of `sweep` that `out`'s journal lacks; write the table `out`.

    The table is written even when the sweep is interrupted (the exception then
    propagates), so it always shows what is finished; with nothing finished at all
    (say, the cluster could not be reached) no file is written.
    """
    start = time.monotonic()
    out = Path(out)
    check_table_path(out)
    backend = backend or ProcessPool()
    tasks = sweep.tasks()
    journal = Journal(journal_path(out))
    done = journal.read()
    todo = [task for task in tasks if task.key not in done]
    ran = failed_now = 0
    if progress is not None:
        progress(0, len(todo), 0)
    try:
        for row in backend.run(todo):
            journal.append(row)
            done[row_key(row)] = row
            ran += 1
            failed_now += row["status"] in FAILED
            if progress is not None:
                progress(ran, len(todo), failed_now)
    finally:
        journal.close()
        table = results_table(done[t.key] for t in tasks if t.key in done)
        if len(table):
            write_table(table, out)
    return Outcome(table, out, journal.path, len(tasks), ran, len(tasks) - len(todo),
                   int(table["status"].isin(FAILED).sum()), time.monotonic() - start)
