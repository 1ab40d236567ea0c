"""Where a sweep's rows go: a JSON-lines journal as they finish, a table at the end.

Fits can take minutes and sweeps hours, so nothing finished may be lost to Ctrl+C,
a reboot or a killed job: each row is appended to the journal (`results.csv.jsonl`
beside `results.csv`) and flushed to disk before the next one is awaited.  A sweep
started again with the same output reads the journal and runs only the fits it does
not hold.  The table (CSV, or Parquet when the name ends in .parquet) is rebuilt from
the journal whenever a sweep stops, so it always lists the spec's fits in spec order.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from engine.errors import DataError, ParameterError
from engine.experiments.tasks import COLUMNS, KEY
from engine.export.files import check_output, write_atomically

TABLE_SUFFIXES = (".csv", ".parquet")


def journal_path(out: str | Path) -> Path:
    out = Path(out)
    return out.with_name(out.name + ".jsonl")


def row_key(row: dict[str, Any]) -> tuple:
    return tuple(row[name] for name in KEY)


class Journal:
    """Append-only record of finished rows, one JSON object a line."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._file = None

    def read(self) -> dict[tuple, dict[str, Any]]:
        """Rows recorded so far, by key; a line cut short by a crash is dropped."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise DataError(f"Cannot read the journal '{self.path}' ({exc}).") from None
        complete = data[:data.rfind(b"\n") + 1]
        if len(complete) < len(data):          # the write of the last row was cut off
            with self.path.open("r+b") as handle:
                handle.truncate(len(complete))
        rows = {}
        for number, line in enumerate(complete.decode("utf-8").splitlines(), 1):
            try:
                row = json.loads(line)
                rows[row_key(row)] = row
            except (ValueError, KeyError, TypeError):
                raise DataError(f"Line {number} of the journal '{self.path}' is damaged: "
                                "repair or delete that line to resume.") from None
        return rows

    def append(self, row: dict[str, Any]) -> None:
        if self._file is None:
            self._file = self.path.open("a", encoding="utf-8")
        self._file.write(json.dumps(row) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def check_table_path(out: str | Path) -> None:
    """Refuse an output the sweep could not write at the end, before any fit runs."""
    suffix = Path(out).suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise ParameterError(f"The results file '{out}' must end in .csv or .parquet.")
    if not Path(out).resolve().parent.is_dir():
        raise DataError(f"The folder of the results file '{out}' does not exist.")
    check_output(journal_path(out))   # e.g. a name the file system allows, but not +.jsonl


def results_table(rows: Iterable[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(list(rows), columns=list(COLUMNS))


def write_table(table: pd.DataFrame, out: str | Path) -> None:
    if Path(out).suffix.lower() == ".parquet":
        write_atomically(out, lambda path: table.to_parquet(path, index=False))
    else:
        write_atomically(out, lambda path: table.to_csv(path, index=False))
