"""The history of a session as a CSV file, one run a row, for a report or a
spreadsheet: what the history table shows, as numbers rather than display text,
with each run's name, note, parameters and data file."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

from engine.export.files import write_atomically
from gui.models import is_model
from gui.results_panel import algorithm_text, proves_bounds, reached_depth
from gui.runs import RunRecord

COLUMNS = ("run", "name", "note", "dataset", "algorithm", "depth", "depth_limit",
           "binarize", "features", "train_accuracy", "test_accuracy", "train_error",
           "lower_bound", "optimal", "status", "time_s", "leaves", "params",
           "edited_from", "finished_at", "data_path")


def _number(value) -> str:
    """A figure as CSV text: empty when there is none (NaN, None)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def history_row(run: RunRecord) -> list[str]:
    tree = run.tree
    bound = run.lower_bound if proves_bounds(run.chosen or run.algorithm) else None
    return [str(run.number), run.name, run.note, run.dataset_name, algorithm_text(run),
            _number(reached_depth(run)), _number(run.depth_limit),
            str(run.data_settings.get("binarize", "")), str(run.n_features),
            _number(run.train_accuracy), _number(run.test_accuracy),
            _number(run.train_error), _number(bound), str(bool(run.optimal)).lower(),
            run.status_text, f"{run.time_s:.3f}", str(tree.n_leaves) if is_model(tree) else "",
            json.dumps(run.params, sort_keys=True), _number(run.edited_from),
            run.finished_at, run.data_path or ""]


def write_history_csv(path: str | Path, runs: list[RunRecord]) -> None:
    """Write `runs` (in their order) to `path` as CSV, atomically."""
    def write(target: Path) -> None:
        with open(target, "w", newline="", encoding="utf-8") as handle:
            out = csv.writer(handle)
            out.writerow(COLUMNS)
            out.writerows(history_row(run) for run in runs)
    write_atomically(path, write)
