"""One fit of a sweep: a small picklable `Task` in, one flat result row out.

A task carries only what is needed to redo the fit anywhere (the dataset's path,
preparation options, algorithm, parameters, split and time limit), and `run_fit` is a
pure function of it, so every backend (this process, a pool of processes, a Dask
cluster) produces the same rows apart from the timing columns.  The fit itself is
`engine.evaluation.CrossValidation.fold`, the code the GUI's Test accuracy runs: the
split is re-prepared on its training rows only, trained with `engine.training.train`
and scored on the raw test rows.

A fit that raises becomes a row with status `error` and its message, never a lost
sweep.  The process pool adds `timeout` (killed after its time limit plus a grace
period) and `crashed` (its process died, e.g. out of memory).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from engine.data.csv_reader import read_table
from engine.data.dataset import PrepOptions
from engine.errors import Interrupted, OrchardError
from engine.evaluation import CrossValidation, Plan
from engine.metrics import primal_integral
from engine.warmup import warm_up

# The columns that identify a fit: a sweep that resumes skips rows already recorded.
KEY = ("dataset", "algorithm", "params", "depth", "fold", "seed")
COLUMNS = ("dataset", "algorithm", "depth", "params", "fold", "seed", "binarize",
           "time_limit", "status", "train_accuracy", "test_accuracy", "train_error",
           "lower_bound", "optimal", "n_leaves", "n_train", "n_test", "time_s",
           "primal_integral", "wall_s", "incumbents", "error_message",
           # a regression's (numbers to predict; its accuracies are empty)
           "task", "train_r2", "test_r2", "test_rmse", "test_mae")
# Columns that depend on the machine and its load, not on the fit's inputs.
TIMING = ("time_s", "primal_integral", "wall_s", "incumbents")
FAILED = ("error", "timeout", "crashed")


@dataclass(frozen=True)
class Task:
    """Everything one fit needs; `run()` does it here and returns its row."""

    dataset: str                 # as the spec names it: the row's label
    path: str                    # absolute path the worker reads
    algorithm: str
    depth: int
    params: str                  # the other solver parameters, JSON with sorted keys
    fold: int                    # 0-based split index (0 for a hold-out)
    plan: Plan                   # holds the split seed
    options: PrepOptions
    time_limit: float | None

    @property
    def seed(self) -> int:
        return self.plan.seed

    @property
    def key(self) -> tuple:
        return tuple(getattr(self, name) for name in KEY)

    def row(self, status: str, **values: Any) -> dict[str, Any]:
        """A result row: this task's identity, `status` and the measured `values`."""
        row = dict.fromkeys(COLUMNS)
        row.update({name: getattr(self, name) for name in KEY},
                   binarize=self.options.binarize, time_limit=self.time_limit,
                   status=status, **values)
        return row

    def failed(self, status: str, message: str, wall_s: float | None) -> dict[str, Any]:
        return self.row(status, error_message=message, wall_s=wall_s)

    def run(self) -> dict[str, Any]:
        return run_fit(self)


def run_fit(task: Task) -> dict[str, Any]:
    """Read, split, prepare, train and score one fit; see the module doc."""
    # Load (or compile) the solver's kernels first, so no fit's time includes it.
    warm_up([task.algorithm])
    start = time.perf_counter()
    try:
        raw = read_table(task.path)
        params = {**json.loads(task.params), "depth": task.depth}
        fold = CrossValidation(raw, task.options, task.algorithm, params, task.plan,
                               task.time_limit).fold(task.fold)
    except Interrupted as exc:   # its time limit ran out before it had a tree
        return task.failed(exc.status, str(exc), time.perf_counter() - start)
    except Exception as exc:  # noqa: BLE001 - recorded in the row; the sweep goes on
        message = str(exc) if isinstance(exc, OrchardError) else \
            f"{type(exc).__name__}: {exc}"
        return task.failed("error", message, time.perf_counter() - start)
    # Anytime quality over the whole budget, against the fit's own final error.
    horizon = task.time_limit or fold.time_s
    regression = fold.regression
    return task.row(
        fold.status.value, task="regression" if regression else "classification",
        **({name: getattr(fold, name) for name in
            ("train_r2", "test_r2", "test_rmse", "test_mae")} if regression else
           {"train_accuracy": fold.train_accuracy, "test_accuracy": fold.test_accuracy}),
        train_error=fold.train_error,
        lower_bound=fold.lower_bound, optimal=fold.optimal, n_leaves=fold.n_leaves,
        n_train=fold.n_train, n_test=fold.n_test, time_s=fold.time_s,
        primal_integral=primal_integral(fold.incumbents, fold.train_error, horizon),
        wall_s=time.perf_counter() - start,
        incumbents=json.dumps([[round(t, 4), e] for t, e in fold.incumbents]))
