"""One training run: the task a worker executes, and the record the session keeps.

`run_task` trains on all rows (the live run) and computes the training confusion
matrix.  No Qt here: it runs in a worker thread.  The run's accuracy on new rows
is estimated after it, in the background (`gui.validation_controller`), and
attached to its record (`RunRecord.evaluation`) when ready.

`RunRecord` is what the results panel lists and a session file stores: settings,
figures, the anytime curve and the model itself (as its JSON document).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from engine.data.dataset import Dataset
from engine.editing import training_confusion, training_error
from engine.evaluation import Evaluation
from engine.metrics import confusion_matrix, matrix_from_json, matrix_to_json
from engine.model import model_from_dict
from engine.solvers import get_solver
from engine.solvers.monitor import Monitor
from engine.solvers.protocol import Result, Status
from engine.training import train

STATUS_TEXT = {
    Status.OPTIMAL: "optimal",
    Status.FINISHED: "finished",
    Status.TIME_LIMIT: "time limit reached",
    Status.CANCELLED: "stopped",
    Status.MEMORY_LIMIT: "memory limit reached",
    Status.INFEASIBLE: "no tree found",
}


# The status of a run whose tree was edited by hand (not a solver's status).
EDITED = "edited"


def status_text(status: Status | str) -> str:
    try:
        return STATUS_TEXT[Status(status)]
    except ValueError:
        return "edited by hand" if status == EDITED else str(status)


@dataclass
class RunOutcome:
    result: Result
    train_confusion: np.ndarray


def run_task(data: Dataset, algorithm: str, params: dict[str, Any],
             monitor: Monitor) -> RunOutcome:
    """Train on `data` (the whole time limit is the search's) and compute the
    training confusion matrix; see the module doc."""
    result = train(data, algorithm, params, monitor=monitor)
    matrix = np.zeros((data.n_classes, data.n_classes))
    if result.tree is not None and hasattr(result.tree, "predict") and data.n_rows \
            and not data.regression:
        matrix = confusion_matrix(data.y, result.tree.predict(data.X), data.n_classes,
                                  data.w)
    return RunOutcome(result, matrix)


@dataclass
class RunRecord:
    number: int
    algorithm: str
    params: dict[str, Any]
    data_settings: dict[str, Any]       # target, binarisation, missing, ignored, kinds, ...
    n_rows: int
    n_features: int
    class_names: list[str]
    total_weight: float
    train_error: float
    lower_bound: float
    optimal: bool
    status: str
    time_s: float
    incumbents: list[tuple[float, float, float]]
    tree: Any
    train_confusion: np.ndarray
    evaluation: Evaluation | None = None
    time_limit: float | None = None
    finished_at: str = field(default_factory=lambda: time.strftime("%Y-%m-%d %H:%M:%S"))
    data_path: str | None = None        # the data file this run trained on (absolute)
    data_name: str = ""                 # its file name, shown in the history
    chosen: str = ""                    # what `auto` ran ("" for any other algorithm)
    reason: str = ""                    # and why, one sentence
    message: str = ""                   # a non-answer explained (no proof, a skipped step)
    edited_from: int | None = None      # the run whose tree was edited by hand into this
    class_factors: list[float] | None = None   # each class's row weight, when weighted
    leaf_penalty: float = 0.0           # weight each leaf cost the search (leaf_cost)
    certified: str = ""                 # the part proven, when only a part was searched
    name: str = ""                      # the user's name for the run (history, headers)
    note: str = ""                      # and their note on it
    tuning: dict | None = None          # the tuning that chose its setting (`Tuning.to_dict`)

    def edited(self, number: int, tree, time_s: float = 0.0) -> RunRecord:
        """This run's tree edited by hand (`engine.editing`) as run `number`.

        Its figures come from the edited tree's leaves; it is optimal only if this run
        was and the edit kept the error (a tree of the same depth and error); its
        lower bound still holds (the edit stays within the depth limit).  No curve:
        the anytime curve was this run's search, not the edit's.  Test accuracy is not
        re-estimated: the splits trained their own trees, not this one.
        """
        error = training_error(tree)
        return replace(
            self, number=number, tree=tree, train_error=error,
            optimal=self.optimal and error <= self.train_error + 1e-9 * max(1.0, error),
            status=EDITED, time_s=float(time_s), incumbents=[],
            train_confusion=training_confusion(tree), evaluation=None,
            finished_at=time.strftime("%Y-%m-%d %H:%M:%S"), edited_from=self.number,
            name="", note="", tuning=None,
            message=(f"Edited by hand from run #{self.number}: {tree.edits[-1]}; test "
                     "accuracy is not re-estimated for an edited tree."))

    @classmethod
    def from_outcome(cls, number: int, outcome: RunOutcome, data: Dataset, algorithm: str,
                     params: dict[str, Any], data_settings: dict[str, Any],
                     time_limit: float | None, data_path: str | None = None) -> RunRecord:
        result = outcome.result
        name = Path(data_path).name if data_path else str(data_settings.get("file") or "")
        return cls(number, algorithm, dict(params), dict(data_settings), data.n_rows,
                   data.n_features, list(data.class_names), float(data.w.sum()),
                   float(result.train_error), float(result.lower_bound),
                   bool(result.optimal), Status(result.status).value, float(result.time_s),
                   [tuple(map(float, x)) for x in result.incumbents], result.tree,
                   outcome.train_confusion, None, time_limit,
                   data_path=data_path, data_name=name,
                   chosen=str(result.stats.get("chosen_algorithm", "")),
                   reason=str(result.stats.get("reason", "")),
                   message=str(result.stats.get("message", "")),
                   class_factors=(None if data.class_weights is None
                                  else [float(f) for f in data.class_weights]),
                   leaf_penalty=float(result.leaf_penalty),
                   certified=certified_text(result.stats, params))

    # ------------------------------------------------------------- figures
    @property
    def title(self) -> str:
        try:
            return get_solver(self.algorithm).title
        except Exception:  # noqa: BLE001 - a session from a build with other solvers
            return self.algorithm

    @property
    def dataset_name(self) -> str:
        """The data file's name ("" when unknown)."""
        return self.data_name or (Path(self.data_path).name if self.data_path else "")

    @property
    def label(self) -> str:
        """"#3 Blossom on iris.csv" ("#4 Automatic (ConTree) on ..." for `auto`, "#5
        Blossom on iris.csv, #3 edited" for an edit): which run this is, in the words
        the window uses; a run the user named says its name after its number."""
        on = f" on {self.dataset_name}" if self.dataset_name else ""
        edit = f", #{self.edited_from} edited" if self.edited_from is not None else ""
        named = f" “{self.name}”" if self.name else ""
        return f"#{self.number}{named} {self.title}{self.chosen_text}{on}{edit}"

    @property
    def chosen_text(self) -> str:
        if not self.chosen:
            return ""
        try:
            return f" ({get_solver(self.chosen).title})"
        except Exception:  # noqa: BLE001 - a session from a build with other solvers
            return f" ({self.chosen})"

    @property
    def depth_limit(self) -> int | None:
        value = self.params.get("depth")
        return None if value is None else int(value)

    @property
    def regression(self) -> bool:
        """Whether the run's tree predicts numbers (its errors are squared errors)."""
        return bool(getattr(self.tree, "regression", False))

    @property
    def train_accuracy(self) -> float:
        """The share of training weight classified right (NaN for a regression)."""
        if self.total_weight <= 0 or self.regression:
            return math.nan
        return 1.0 - self.train_error / self.total_weight

    @property
    def train_r2(self) -> float:
        """A regression's R² on its training rows: 1 - its squared error / the squared
        error of their mean (the root's, which the tree keeps); NaN for classes."""
        if not self.regression:
            return math.nan
        spread = float(self.tree.value[0, 2])
        return 1.0 - self.train_error / spread if spread > 0 else 1.0

    @property
    def train_score(self) -> float:
        """The training figure the history ranks runs by: accuracy, or a regression's
        R²."""
        return self.train_r2 if self.regression else self.train_accuracy

    @property
    def train_rmse(self) -> float:
        """A regression's root mean squared error on its training rows."""
        if not self.regression or self.total_weight <= 0:
            return math.nan
        return math.sqrt(self.train_error / self.total_weight)

    @property
    def test_accuracy(self) -> float | None:
        """The mean accuracy on held-out rows (a regression's R² there); None
        without a test."""
        if self.evaluation is None or not self.evaluation.folds:
            return None
        return self.evaluation.mean_of("test_r2") if self.regression else \
            self.evaluation.mean_test_accuracy

    @property
    def objective(self) -> float:
        """What the search minimised: the error, plus the leaves' cost (leaf_cost)."""
        if not self.leaf_penalty or self.tree is None:
            return self.train_error
        return self.train_error + self.leaf_penalty * self.tree.n_leaves

    @property
    def gap(self) -> float:
        return relative_gap(self.objective, self.lower_bound)

    @property
    def status_text(self) -> str:
        return status_text(self.status)

    # --------------------------------------------------------- persistence
    def to_dict(self) -> dict:
        return {
            "number": self.number, "algorithm": self.algorithm, "params": self.params,
            "data_settings": self.data_settings, "n_rows": self.n_rows,
            "n_features": self.n_features, "class_names": self.class_names,
            "total_weight": self.total_weight, "train_error": self.train_error,
            "lower_bound": self.lower_bound, "optimal": self.optimal,
            "status": self.status, "time_s": self.time_s,
            "incumbents": [list(x) for x in self.incumbents],
            "model": self.tree.to_dict() if hasattr(self.tree, "to_dict") else None,
            "train_confusion": matrix_to_json(self.train_confusion),
            "evaluation": self.evaluation.to_dict() if self.evaluation else None,
            "time_limit": self.time_limit, "finished_at": self.finished_at,
            "data_path": self.data_path, "data_name": self.data_name,
            "chosen": self.chosen, "reason": self.reason, "message": self.message,
            "edited_from": self.edited_from, "class_factors": self.class_factors,
            "leaf_penalty": self.leaf_penalty, "certified": self.certified,
            "name": self.name, "note": self.note, "tuning": self.tuning,
        }

    @classmethod
    def from_dict(cls, d: dict) -> RunRecord:
        model = d.get("model")
        tree = model_from_dict(model) if model else None
        evaluation = Evaluation.from_dict(d["evaluation"]) if d.get("evaluation") else None
        return cls(int(d["number"]), str(d["algorithm"]), dict(d.get("params", {})),
                   dict(d.get("data_settings", {})), int(d["n_rows"]), int(d["n_features"]),
                   list(d["class_names"]), float(d["total_weight"]), float(d["train_error"]),
                   float(d["lower_bound"]), bool(d["optimal"]), str(d["status"]),
                   float(d["time_s"]), [tuple(map(float, x)) for x in d.get("incumbents", [])],
                   tree, matrix_from_json(d.get("train_confusion")), evaluation,
                   d.get("time_limit"), str(d.get("finished_at", "")),
                   data_path=d.get("data_path"),
                   # sessions before runs kept their file: the name in their settings
                   data_name=str(d.get("data_name") or (d.get("data_settings") or {})
                                 .get("file") or ""),
                   chosen=str(d.get("chosen", "")), reason=str(d.get("reason", "")),
                   message=str(d.get("message", "")),
                   edited_from=d.get("edited_from"),
                   class_factors=d.get("class_factors"),
                   leaf_penalty=float(d.get("leaf_penalty", 0.0)),
                   certified=str(d.get("certified", "")),
                   name=str(d.get("name", "")), note=str(d.get("note", "")),
                   tuning=d.get("tuning"))


def certified_text(stats: dict, params: dict) -> str:
    """Which levels of a tree searched exactly only at its top (`hybrid`, and `auto`
    beyond depth 6) are proven, for the chart's title; '' for a tree searched whole,
    or for the greedy tree kept instead."""
    top = stats.get("exact_depth")
    if top is None or stats.get("greedy_kept") or \
            int(params.get("depth", top)) <= int(top):
        return ""
    if stats.get("certified_depth"):
        return f"top {top} levels proven optimal, greedy below"
    return f"top {top} levels exact, not proven, greedy below"


def relative_gap(error: float, bound: float) -> float:
    """(error - bound) / error: 0 when the bound proves the error optimal."""
    if error <= 0 or error <= bound:
        return 0.0
    return (error - max(bound, 0.0)) / error
