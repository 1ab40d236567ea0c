"""Reading and preparing data: the slow steps the window runs in its workers.

Nothing here touches Qt, so these functions run in any thread.  A table that reads
fine but cannot be prepared as asked (one class, no usable column, ...) is not an
error of the load: the preview still appears and the problem is shown beside the
options in plain words (`Prepared.problem`), so the user can fix it there.

Every stage reports through a `Monitor` (`checkpoint`), whose `cancel()` the window's
Stop calls: the reading and preparing stop between chunks of work and raise
`Interrupted`.  `StageRelay` turns those reports into at most twenty messages a
second for the window.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


from engine.data.columns import ColumnInfo, choose_target, infer_columns
from engine.data.csv_reader import RawTable, read_table
from engine.data.dataset import Dataset, PrepOptions, inconsistent_rows
from engine.featurize import prepare
from engine.errors import DataError
from engine.solvers.monitor import Monitor

Report = Callable[[object], None]


class StageRelay:
    """`Monitor.on_progress` for a worker: ("stage", text, fraction) at most every
    `interval` seconds, and at once when the stage changes."""

    def __init__(self, report: Report, interval: float = 0.05):
        self.report, self.interval = report, interval
        self.last, self.stage = 0.0, None

    def __call__(self, stage: str, fraction: float | None = None) -> None:
        now = time.monotonic()
        if stage == self.stage and now - self.last < self.interval:
            return
        self.last, self.stage = now, stage
        done = "" if fraction is None else f" ({100 * fraction:.0f}%)"
        self.report(("stage", f"{stage[:1].upper()}{stage[1:]}{done}…",
                     0.0 if fraction is None else fraction))


@dataclass
class Prepared:
    """A raw table with its column kinds and, if the options allow, its training set."""

    path: Path | None
    raw: RawTable
    infos: list[ColumnInfo]
    options: PrepOptions
    target: str | None
    dataset: Dataset | None = None
    problem: str | None = None       # why `options` give no usable training set
    inconsistent: int = 0            # rows with identical inputs and another class
    seconds: float = 0.0

    @property
    def n_rows(self) -> int:
        return len(self.raw.frame)


def _stage(report: Report | None, text: str, fraction: float) -> None:
    if report is not None:
        report(("stage", text, fraction))


def read_and_prepare(path: str | Path, options: PrepOptions,
                     report: Report | None = None, monitor: Monitor | None = None,
                     adapt: Callable[[PrepOptions, list[str]], PrepOptions] | None = None
                     ) -> Prepared:
    """Read `path`, type its columns and prepare it (DataError if it cannot be read;
    `Interrupted` once `monitor` is cancelled); `adapt(options, columns)` fits the
    options to the columns read (a remembered column the file no longer has)."""
    started = time.perf_counter()
    path = Path(path)
    monitor = monitor or Monitor()
    size = path.stat().st_size if path.is_file() else 0
    _stage(report, f"Reading {path.name} ({_size_text(size)})…", 0.05)
    raw = read_table(path, progress=monitor.checkpoint)
    if len(raw.frame) == 0:
        raise DataError(f"File '{path.name}' holds no data rows.")
    _stage(report, f"Typing {len(raw.frame.columns)} columns of "
                   f"{len(raw.frame):,} rows…", 0.45)
    infos = infer_columns(raw.frame, progress=monitor.checkpoint)
    if adapt is not None:
        options = adapt(options, [str(c) for c in raw.frame.columns])
    prepared = prepare_table(raw, infos, options, report, path=path, monitor=monitor)
    prepared.seconds = time.perf_counter() - started
    return prepared


def prepare_table(raw: RawTable, infos: list[ColumnInfo], options: PrepOptions,
                  report: Report | None = None, path: Path | None = None,
                  monitor: Monitor | None = None) -> Prepared:
    """Prepare an already read table with `options` (problems become `problem`;
    `Interrupted` once `monitor` is cancelled)."""
    started = time.perf_counter()
    monitor = monitor or Monitor()
    columns = [str(c) for c in raw.frame.columns]
    try:
        target = choose_target(columns, options.target, raw)
    except DataError as exc:
        return Prepared(path, raw, infos, options, None, problem=str(exc))
    _stage(report, f"Preparing {len(raw.frame):,} rows…", 0.7)
    try:
        dataset = prepare(raw, options, progress=monitor.checkpoint)
    except DataError as exc:
        return Prepared(path, raw, infos, options, target, problem=str(exc),
                        seconds=time.perf_counter() - started)
    monitor.checkpoint("counting contradicting rows")
    inconsistent = inconsistent_rows(dataset)
    _stage(report, "Done.", 1.0)
    return Prepared(path, raw, infos, options, target, dataset, None, inconsistent,
                    time.perf_counter() - started)


def _size_text(size: int) -> str:
    if size >= 1 << 20:
        return f"{size / (1 << 20):.1f} MB"
    if size >= 1 << 10:
        return f"{size / (1 << 10):.0f} kB"
    return f"{size} bytes"
