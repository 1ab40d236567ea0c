"""Test accuracy of an algorithm: hold-out split or stratified k-fold cross-validation.

Each split is treated like new data arriving after training: `prepare` runs again on
the *training rows only* of the raw table, so binarisation thresholds, fill values
and value groups never see a test row; the tree is trained with
`engine.training.train` and then predicts the raw test rows through its own
preprocessing (`Tree.predict_frame`), exactly as `orchard predict` would.

`CrossValidation.run` does every split in turn (the GUI's Test accuracy);
`CrossValidation.fold(i)` does split `i` alone, which is what one fit of a sweep
(`engine.experiments`) runs, possibly in another process or on another machine.  Both
go through the same split, preparation, training and scoring code.

Splits are stratified by class and reproducible from `seed`.  Rows without a class
take part in no split.  Class indices in the confusion matrices refer to
`Evaluation.class_names` (every class of the table), so folds add up even when a
fold's training part lacks a rare class; a test row of such a class is an error.

A regression (a numeric target, `engine.data.task`) is split stratified by its
target's quantiles, not plainly shuffled: for k folds (`quantile_folds`) the rows are
sorted by their target and dealt round-robin, k consecutive ones at a time in an
order shuffled by `seed`, so every fold spans the target's whole range (plain
shuffled folds can leave the few dearest houses in one fold, which the others' trees
never saw, and make the folds' R² vary for that alone); a hold-out split and a
sample take about their share of each tenth of the range (`target_strata`).  Rows
whose target is missing take part in no split.  Each split is scored by the RMSE,
MAE and R² of its tree on the test rows (R² against those rows' own mean,
scikit-learn's `r2_score`), beside always predicting the training part's mean (the
regression's most common class: its R² is 0 or a little below) and the greedy tree
of the same depth; a regression has no classes, confusion matrices nor accuracy
(NaN).

    evaluation = evaluate(raw, PrepOptions(binarize="quantile:10"), "blossom",
                          {"depth": 3}, Plan("kfold", k=5, seed=1), time_limit=10)
    evaluation.mean_test_accuracy, evaluation.test_confusion()
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from engine.data import blocks
from engine.data.columns import choose_target, to_numbers
from engine.data.csv_reader import RawTable
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.data.preprocessing import class_label
from engine.data.task import choose_task
from engine.errors import DataError, Interrupted, ParameterError
from engine.importance import class_probabilities, feature_importance
from engine.metrics import (
    confusion_matrix,
    matrix_from_json,
    matrix_to_json,
    regression_scores,
    roc_auc,
)
from engine.solvers import get_solver
from engine.solvers.monitor import Monitor
from engine.solvers.protocol import Status
from engine.training import train
from engine.vocabulary import CLASSIFICATION, REGRESSION

METHODS = ("holdout", "kfold")
# A regression's hold-out split and sample are stratified by this many quantile bins
# of its target (`target_strata`; its folds by runs of k rows: `quantile_folds`).
QUANTILE_BINS = 10

# How far below a baseline a mean test accuracy must be to be said to lose to it: a
# tie (the same leaves on a small table) is no loss.
LOSS_MARGIN = 1e-9


@dataclass(frozen=True)
class Plan:
    """How to estimate test accuracy: `holdout` (one split) or `kfold` (k splits)."""

    method: str = "kfold"
    k: int = 5                  # folds (kfold)
    test_size: float = 0.25     # share of the rows held out (holdout)
    seed: int = 0

    def check(self) -> None:
        if self.method not in METHODS:
            raise ParameterError(f"Unknown evaluation '{self.method}': use holdout or kfold.")
        if self.method == "kfold" and not 2 <= self.k <= 100:
            raise ParameterError("Cross-validation needs between 2 and 100 folds.")
        if self.method == "holdout" and not 0.0 < self.test_size < 1.0:
            raise ParameterError("The hold-out share must lie strictly between 0 and 1.")

    def describe(self) -> str:
        if self.method == "holdout":
            return f"hold-out {round(100 * self.test_size)}%"
        return f"{self.k}-fold cross-validation"

    def to_dict(self) -> dict:
        return {"method": self.method, "k": self.k, "test_size": self.test_size,
                "seed": self.seed}

    @classmethod
    def from_dict(cls, d: dict) -> Plan:
        return cls(str(d.get("method", "kfold")), int(d.get("k", 5)),
                   float(d.get("test_size", 0.25)), int(d.get("seed", 0)))


@dataclass
class HeldOut:
    """A split's predictions on its held-out rows, in the evaluation's classes: what
    the window's Evaluation views are computed on after a cross-validation or a
    hold-out (kept in memory only: a session keeps the figures, not every row's
    prediction)."""

    truth: np.ndarray        # int64[n]: each held-out row's class
    predicted: np.ndarray    # int64[n]: the split's tree's prediction
    proba: np.ndarray        # float[n, classes]: its leaf's class shares (ROC, gain)
    importance: dict[str, float] = field(default_factory=dict)  # per raw column, on them
    tested: frozenset[str] = frozenset()   # the raw columns the split's tree tests

    @staticmethod
    def joined(parts: list[HeldOut]) -> HeldOut:
        importance: dict[str, float] = {}
        for part in parts:
            for column, value in part.importance.items():
                importance[column] = importance.get(column, 0.0) + value
        return HeldOut(np.concatenate([p.truth for p in parts]),
                       np.concatenate([p.predicted for p in parts]),
                       np.concatenate([p.proba for p in parts]), importance,
                       frozenset().union(*(p.tested for p in parts)))


@dataclass
class FoldResult:
    fold: int                     # 0-based
    n_train: int
    n_test: int
    train_accuracy: float         # on the raw training rows, through the model's recipe
    test_accuracy: float
    train_confusion: np.ndarray   # rows: true class, columns: predicted (global classes)
    test_confusion: np.ndarray
    status: Status
    optimal: bool
    time_s: float
    # The solver's own figures on the prepared training part (sessions saved before
    # these existed read back as unknown).
    train_error: float = math.nan
    lower_bound: float = math.nan
    n_leaves: int = 0
    incumbents: list[tuple[float, float]] = field(default_factory=list)  # (t, error)
    # What the tree is measured against on the same test rows (`baselines`): always
    # answering the training part's most common class, and the greedy tree of the
    # same depth on the same features (NaN when not computed).
    majority_accuracy: float = math.nan
    greedy_accuracy: float = math.nan
    # The test accuracy with each row weighted by its class's factor (class weights):
    # what the trees were trained for, and what a tuning ranks by (NaN: unweighted).
    weighted_accuracy: float = math.nan
    held_out: HeldOut | None = None   # its held-out rows' predictions (with `baselines`)
    # The AUC of the second class against the first on the test rows, by leaf shares
    # (two classes, when asked: a tuning by AUC)
    test_auc: float = math.nan
    # A regression's figures (`REGRESSION_FIGURES`; NaN for a classification, whose
    # are those above): the tree's RMSE, MAE and R² on the test rows, its R² on the
    # raw training rows, and with `baselines` the test RMSE and R² of always
    # predicting the training part's mean and of the greedy tree of the same depth.
    test_rmse: float = math.nan
    test_mae: float = math.nan
    test_r2: float = math.nan
    train_r2: float = math.nan
    mean_rmse: float = math.nan
    mean_r2: float = math.nan
    greedy_rmse: float = math.nan
    greedy_r2: float = math.nan

    @property
    def regression(self) -> bool:
        """Whether this split scored numbers (R² is set for every regression split)."""
        return not math.isnan(self.test_r2)

    @property
    def score(self) -> float:
        """What a tuning compares: the weighted test accuracy under class weights,
        else the test accuracy."""
        return self.test_accuracy if math.isnan(self.weighted_accuracy) \
            else self.weighted_accuracy

    def to_dict(self) -> dict:
        return {"fold": self.fold, "n_train": self.n_train, "n_test": self.n_test,
                "train_accuracy": self.train_accuracy, "test_accuracy": self.test_accuracy,
                "train_confusion": matrix_to_json(self.train_confusion),
                "test_confusion": matrix_to_json(self.test_confusion),
                "status": self.status.value, "optimal": self.optimal, "time_s": self.time_s,
                "train_error": self.train_error, "lower_bound": self.lower_bound,
                "n_leaves": self.n_leaves, "incumbents": [list(x) for x in self.incumbents],
                "majority_accuracy": self.majority_accuracy,
                "greedy_accuracy": self.greedy_accuracy,
                "weighted_accuracy": self.weighted_accuracy,
                # a classification's split is saved as it was before regressions
                **({name: getattr(self, name) for name in REGRESSION_FIGURES}
                   if self.regression else {})}

    @classmethod
    def from_dict(cls, d: dict) -> FoldResult:
        return cls(int(d["fold"]), int(d["n_train"]), int(d["n_test"]),
                   float(d["train_accuracy"]), float(d["test_accuracy"]),
                   matrix_from_json(d["train_confusion"]),
                   matrix_from_json(d["test_confusion"]), Status(d["status"]),
                   bool(d["optimal"]), float(d["time_s"]),
                   float(d.get("train_error", math.nan)),
                   float(d.get("lower_bound", math.nan)), int(d.get("n_leaves", 0)),
                   [(float(t), float(e)) for t, e in d.get("incumbents", [])],
                   float(d.get("majority_accuracy", math.nan)),
                   float(d.get("greedy_accuracy", math.nan)),
                   float(d.get("weighted_accuracy", math.nan)),
                   **{name: float(d[name]) for name in REGRESSION_FIGURES if name in d})


REGRESSION_FIGURES = ("test_rmse", "test_mae", "test_r2", "train_r2", "mean_rmse",
                      "mean_r2", "greedy_rmse", "greedy_r2")


@dataclass
class Evaluation:
    plan: Plan
    class_names: list[str]        # [] for a regression
    folds: list[FoldResult] = field(default_factory=list)
    complete: bool = True         # False when cancelled before every fold ran
    stopped_by: str = ""          # why it is incomplete, one sentence ("" if unknown)
    task: str = CLASSIFICATION    # or REGRESSION: the folds' figures are R², RMSE, MAE

    @property
    def n_folds(self) -> int:
        return 1 if self.plan.method == "holdout" else self.plan.k

    @property
    def regression(self) -> bool:
        return self.task == REGRESSION

    def held_out(self) -> HeldOut | None:
        """Every split's held-out predictions together, when each split kept them."""
        parts = [f.held_out for f in self.folds]
        return HeldOut.joined(parts) if parts and all(p is not None for p in parts) \
            else None

    @property
    def test_accuracies(self) -> list[float]:
        return [f.test_accuracy for f in self.folds]

    @property
    def mean_test_accuracy(self) -> float:
        return self.mean_of("test_accuracy")

    @property
    def std_test_accuracy(self) -> float:
        return self.std_of("test_accuracy")

    @property
    def mean_train_accuracy(self) -> float:
        return self.mean_of("train_accuracy")

    def mean_of(self, figure: str) -> float:
        """The folds' mean of one of `FoldResult`'s figures, e.g. "test_r2" (NaN
        when no fold has it)."""
        return self._mean([getattr(f, figure) for f in self.folds])

    def std_of(self, figure: str) -> float:
        """Its standard deviation across the folds (0 for a single split)."""
        values = [getattr(f, figure) for f in self.folds]
        return float(np.std(values)) if len(values) > 1 else 0.0

    def _mean(self, values: list[float]) -> float:
        return float(np.mean(values)) if values and not np.isnan(values).any() else math.nan

    @property
    def mean_majority_accuracy(self) -> float:
        """Always answering each training part's most common class, on the test rows."""
        return self.mean_of("majority_accuracy")

    @property
    def mean_greedy_accuracy(self) -> float:
        """The greedy tree of the same depth, on the same splits (NaN: not computed)."""
        return self.mean_of("greedy_accuracy")

    def _headline(self) -> tuple[str, str, str, str, Callable[[float], str]]:
        """What the tree is judged by on held-out rows: (its figure, its baseline's,
        the greedy tree's, the baseline's name, how a value is written): the test
        accuracy against always answering the most common class, or a regression's
        test R² against always predicting the training rows' mean (both say the
        columns told the tree nothing that holds on new rows when it loses)."""
        if self.regression:
            return ("test_r2", "mean_r2", "greedy_r2", "the training rows' mean",
                    lambda value: f"R² {value:.3f}")
        return ("test_accuracy", "majority_accuracy", "greedy_accuracy",
                "most common class", lambda value: f"{100 * value:.1f}%")

    def beats_baseline(self) -> bool | None:
        """Whether the tree does better on held-out rows than its baseline (always
        answering the most common class; a regression's training mean), by more than
        a tie; None when the baseline was not scored."""
        figure, baseline, _, _, _ = self._headline()
        test, base = self.mean_of(figure), self.mean_of(baseline)
        return None if math.isnan(test) or math.isnan(base) else \
            test > base + LOSS_MARGIN

    def verdict(self) -> str:
        """One sentence when the tree loses on held-out rows to its baseline (always
        answering the most common class, or a regression's training mean: by any
        margin, such a tree says nothing), or to the greedy tree of the same depth by
        more than one standard error (a noise-sized gap is no loss), with what to
        try; '' otherwise (or when nothing was measured)."""
        if not self.folds:
            return ""
        figure, baseline, greedy_figure, _, shown = self._headline()
        test, base = self.mean_of(figure), self.mean_of(baseline)
        greedy = self.mean_of(greedy_figure)
        remedy = "lower the depth, raise the least leaf size or let Tune choose them."
        if test < base - LOSS_MARGIN and self.regression:
            return (f"On held-out rows this tree predicts worse than always answering "
                    f"the training rows' mean ({shown(test)} against {shown(base)}): "
                    + remedy)
        if test < base - LOSS_MARGIN:
            return (f"On held-out rows this tree is right less often than always answering "
                    f"the most common class ({shown(test)} against {shown(base)}): "
                    + remedy)
        if greedy - test > max(self._paired_error(), LOSS_MARGIN):
            return (f"On held-out rows the greedy tree of the same depth does better, by "
                    f"more than a standard error ({shown(greedy)} against "
                    f"{shown(test)}): try Greedy, or let Tune choose the depth.")
        return ""

    def _paired_error(self) -> float:
        """The standard error of the tree's mean gain over the greedy tree: from the
        folds' paired differences, or for one split from its test rows (binomial; a
        regression's single R² has no such error: infinite, no loss is claimed)."""
        figure, _, greedy, _, _ = self._headline()
        if len(self.folds) > 1:
            gains = [getattr(f, figure) - getattr(f, greedy) for f in self.folds]
            return float(np.std(gains, ddof=1) / math.sqrt(len(gains)))
        if self.regression:
            return math.inf
        fold = self.folds[0]
        share = fold.test_accuracy
        return math.sqrt(share * (1 - share) / max(fold.n_test, 1))

    def baselines_text(self) -> str:
        """" (most common class 70.0%, greedy tree 83.1%)" (a regression's: "the
        training rows' mean R² -0.004, ..."), or '' when not scored."""
        _, baseline, greedy, name, shown = self._headline()
        parts = [f"{label} {shown(value)}" for label, value in (
            (name, self.mean_of(baseline)),
            ("greedy tree of the same depth", self.mean_of(greedy)))
            if not math.isnan(value)]
        return f" ({', '.join(parts)})" if parts else ""

    def brief(self) -> dict:
        """The figures a script wants (`orchard fit --validate`'s JSON); NaN as None.

        A classification's: `test_accuracy` (the folds' mean) and `test_accuracy_std`,
        `per_fold` (each fold's test accuracy), `majority_accuracy` and
        `greedy_accuracy` (the baselines' mean test accuracy).  A regression's, its
        accuracy keys None: `test_rmse`, `test_mae`, `test_r2` (the folds' means of
        the tree's test RMSE, MAE and R²), each with `_std` (across the folds) and
        `per_fold_` (each fold's), `train_r2` (on the training rows), `mean_rmse`
        and `mean_r2` (always predicting the training rows' mean: R² about 0),
        `greedy_rmse` and `greedy_r2` (the greedy tree of the same depth; None for
        greedy itself), and `beats_mean` (whether the tree's test R² is above the
        mean's).  Both: `task`, `folds`, `complete`, `mean_leaves`, `verdict` (one
        sentence when the tree loses to a baseline) and `stopped_by`."""
        def number(value: float) -> float | None:
            return None if math.isnan(value) else value
        common = {"plan": self.plan.to_dict(), "task": self.task,
                  "complete": self.complete, "folds": len(self.folds),
                  "mean_leaves": (float(np.mean([f.n_leaves for f in self.folds]))
                                  if self.folds else None),
                  "verdict": self.verdict(), "stopped_by": self.stopped_by}
        if not self.regression:
            return {**common, "test_accuracy": number(self.mean_test_accuracy),
                    "test_accuracy_std": self.std_test_accuracy,
                    "per_fold": self.test_accuracies,
                    "majority_accuracy": number(self.mean_majority_accuracy),
                    "greedy_accuracy": number(self.mean_greedy_accuracy)}
        tested = ("test_rmse", "test_mae", "test_r2")
        return {**common, "test_accuracy": None, "test_accuracy_std": None,
                "per_fold": None, "majority_accuracy": None, "greedy_accuracy": None,
                **{name: number(self.mean_of(name)) for name in REGRESSION_FIGURES},
                **{f"{name}_std": self.std_of(name) for name in tested},
                **{f"per_fold_{name[5:]}": [getattr(f, name) for f in self.folds]
                   for name in tested},
                "beats_mean": self.beats_baseline()}

    def test_confusion(self) -> np.ndarray:
        """Test confusion matrix summed over the folds (every test row counted once)."""
        size = len(self.class_names)
        total = np.zeros((size, size))
        for f in self.folds:
            total += f.test_confusion
        return total

    def summary(self) -> str:
        """One line, e.g. `5-fold cross-validation: test accuracy 84.2% ± 1.3`, or a
        regression's `...: test R² 0.812 ± 0.031, RMSE 14.9 ± 0.62, MAE 11.8 ± 0.4,
        better than the training rows' mean`."""
        why = f" {self.stopped_by}" if self.stopped_by else ""
        if not self.folds:
            return f"{self.plan.describe()}: no fold finished.{why}"
        spread = len(self.folds) > 1
        if self.regression:
            text = f"{self.plan.describe()}: test " + ", ".join(
                f"{label} {self.mean_of(name):{form}}"
                + (f" ± {self.std_of(name):.2g}" if spread else "")
                for label, name, form in (("R²", "test_r2", ".3f"),
                                          ("RMSE", "test_rmse", ".4g"),
                                          ("MAE", "test_mae", ".4g")))
            beats = self.beats_baseline()
            if beats is not None:
                text += f", {'better' if beats else 'no better'} than the training " \
                        "rows' mean"
        else:
            text = (f"{self.plan.describe()}: test accuracy "
                    f"{100 * self.mean_test_accuracy:.1f}%")
            if spread:
                text += f" ± {100 * self.std_test_accuracy:.1f}"
        if not self.complete:
            text += f" ({len(self.folds)} of {self.n_folds} folds, stopped).{why}"
        return text

    def to_dict(self) -> dict:
        return {"plan": self.plan.to_dict(), "class_names": list(self.class_names),
                "folds": [f.to_dict() for f in self.folds], "complete": self.complete,
                "stopped_by": self.stopped_by, "task": self.task}

    @classmethod
    def from_dict(cls, d: dict) -> Evaluation:
        return cls(Plan.from_dict(d["plan"]), list(d["class_names"]),
                   [FoldResult.from_dict(f) for f in d["folds"]], bool(d["complete"]),
                   str(d.get("stopped_by", "")), str(d.get("task", CLASSIFICATION)))


# --------------------------------------------------------------------- splits
def stratified_folds(labels: np.ndarray, k: int, seed: int = 0) -> list[np.ndarray]:
    """Row indices of k test folds: every class is dealt round-robin, shuffled.

    Fold sizes differ by at most one per class; each row is in exactly one fold.
    """
    rng = np.random.default_rng(seed)
    fold_of = np.empty(len(labels), dtype=np.int64)
    start = 0
    for value in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == value))
        fold_of[members] = (start + np.arange(len(members))) % k
        start = (start + len(members)) % k  # keep fold sizes balanced across classes
    return [np.flatnonzero(fold_of == fold) for fold in range(k)]


def quantile_folds(values: np.ndarray, k: int, seed: int = 0) -> list[np.ndarray]:
    """Row indices of k test folds of a regression, stratified by its target
    `values`: the rows sorted by value (ties in row order) are dealt round-robin,
    each run of k consecutive ones to the k folds in an order drawn with `seed` (the
    last, shorter run to as many different folds).  So every fold holds rows from
    the whole range of the target, its sizes differ by at most one, and each row is
    in exactly one fold.  (`stratified_folds` with a class per run of k would do the
    same one run at a time: 10,000 runs on 50,000 rows.)"""
    n = len(values)
    runs = -(-n // k)
    dealt = np.argsort(np.random.default_rng(seed).random((runs, k)), axis=1).ravel()
    fold_of = np.empty(n, dtype=np.int64)
    fold_of[np.argsort(values, kind="stable")] = dealt[:n]
    return [np.flatnonzero(fold_of == fold) for fold in range(k)]


def target_strata(values: np.ndarray, bins: int = QUANTILE_BINS) -> np.ndarray:
    """Each row's quantile bin (0 to `bins` - 1, about as many rows each) of a
    regression's target `values`: the classes a hold-out split or a sample of a
    regression is stratified by (`holdout_split`), so it spans the target's range."""
    strata = np.empty(len(values), dtype=np.int64)
    strata[np.argsort(values, kind="stable")] = \
        np.arange(len(values)) * bins // max(len(values), 1)
    return strata


def _other_rows(n: int, rows: np.ndarray) -> np.ndarray:
    """The positions below `n` that are not in `rows`, in order."""
    keep = np.ones(n, dtype=bool)
    keep[rows] = False
    return np.flatnonzero(keep)


def holdout_split(labels: np.ndarray, test_size: float,
                  seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(train rows, test rows), stratified: each class gives about `test_size` of its rows.

    A class with at least two rows keeps at least one in the training part.
    """
    rng = np.random.default_rng(seed)
    test: list[np.ndarray] = []
    for value in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == value))
        n_test = round(test_size * len(members))
        if len(members) >= 2:
            n_test = min(max(n_test, 1 if test_size * len(members) >= 0.5 else 0),
                         len(members) - 1)
        test.append(members[:n_test])
    test_rows = np.sort(np.concatenate(test)) if test else np.zeros(0, np.int64)
    train_rows = _other_rows(len(labels), test_rows)
    return train_rows, test_rows


def _class_order(names: list[str]) -> list[str]:
    try:
        return sorted(names, key=float)
    except ValueError:
        return sorted(names)


# ------------------------------------------------------------------ evaluation
@dataclass
class PreparedSplit:
    """One split's raw rows and its prepared training part."""

    fold: int
    data: Any                     # the training rows' Dataset
    train_frame: pd.DataFrame
    test_frame: pd.DataFrame
    seconds: float = 0.0          # cutting and preparing it took (`prepared_splits`)
    _test_features: np.ndarray | None = field(default=None, repr=False)

    def majority_balanced_accuracy(self) -> float:
        """The balanced accuracy on the test rows of always answering the training
        part's most common class: 1 / the classes present there when it is one of
        them, else 0."""
        data = self.data
        common = data.class_names[int(np.argmax(np.bincount(
            data.y, weights=data.w, minlength=data.n_classes)))]
        _, values = blocks.factorize(self.test_frame[data.prep.target])
        present = {class_label(v) for v in values}
        return (1.0 / len(present) if common in present else 0.0) if present else math.nan

    def majority_accuracy(self, weighted: bool = False) -> float:
        """The share of the test rows in the training part's most common class (by
        weight, as the trees count it): what a one-leaf tree scores there; with
        `weighted`, each row counted with its class's factor (class weights)."""
        data = self.data
        common = int(np.argmax(np.bincount(data.y, weights=data.w,
                                           minlength=data.n_classes)))
        codes, values = blocks.factorize(self.test_frame[data.prep.target])
        if not len(codes):
            return math.nan
        index = {name: i for i, name in enumerate(data.class_names)}
        of_value = np.array([index.get(class_label(v), -1) for v in values],
                            dtype=np.int64)[codes]
        factors = np.ones(len(codes))
        if weighted and data.class_weights is not None:
            known = of_value >= 0   # a class the training part lacks counts once
            factors[known] = data.class_weights[of_value[known]]
        return float(factors[of_value == common].sum() / factors.sum())

    def test_values(self) -> np.ndarray:
        """A regression's target on the test rows (float64), read from their raw cells
        by the training part's recipe, as `orchard predict` reads them."""
        return self.data.prep.labels(self.test_frame[self.data.prep.target])

    def mean_scores(self) -> dict:
        """The RMSE, MAE and R² (`regression_scores`) on the test rows of always
        predicting the training part's mean (weighted as the trees weigh rows: what a
        one-leaf regression tree predicts), a regression's baseline as the most
        common class is a classification's.  Its R² is 0 less the test rows' mean's
        distance from the training one: about 0, a little below."""
        data, truth = self.data, self.test_values()
        mean = float(np.average(data.y, weights=data.w))
        return regression_scores(truth, np.full(len(truth), mean))

    def test_features(self) -> np.ndarray:
        """The test rows through the training part's recipe, transformed once for
        every setting trained on the split (`train` returns every tree on the
        training part's features): half of a greedy fold's time was transforming them."""
        if self._test_features is None:
            self._test_features = self.data.prep.transform(self.test_frame)
        return self._test_features


class CrossValidation:
    """One evaluation run; `cancel()` (any thread) stops it after the current fold.

    The fold being trained is stopped too (its solver returns its best tree so far,
    which is still evaluated); the folds not started are skipped and the
    `Evaluation` is marked incomplete.
    """

    def __init__(self, raw: RawTable, options: PrepOptions, algorithm: str,
                 params: dict[str, Any] | None = None, plan: Plan = Plan(),
                 time_limit: float | None = None, baselines: bool = False):
        plan.check()
        if time_limit is not None and not time_limit > 0:
            raise ParameterError("The time limit must be a positive number of seconds.")
        self.raw, self.options, self.algorithm = raw, options, algorithm
        self.params = dict(params or {})
        self.plan, self.time_limit = plan, time_limit
        self.baselines = baselines   # each fold also scores the majority and greedy
        self._lock = threading.Lock()
        self._cancelled = False
        self._monitor: Monitor | None = None

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            if self._monitor is not None:
                self._monitor.cancel()

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    @property
    def task(self) -> str:
        """What the trees predict: CLASSIFICATION or REGRESSION, as `prepare` chooses
        it for the whole table (`choose_task`), and then for every split: a fold may
        hold fewer different numbers than the whole table, and must not become a
        classification for that."""
        frame = self.raw.frame
        target = choose_target([str(c) for c in frame.columns], self.options.target,
                               self.raw)
        task, _ = choose_task(target, frame[target], self.options.task)
        self.options = replace(self.options, target=target, task=task)
        return task

    def _labelled(self) -> tuple[np.ndarray, list[str], np.ndarray, str]:
        """(rows with a target, class names, each of those rows' class index, the
        task); for a regression no class names, and each row's target value."""
        task = self.task
        frame, target = self.raw.frame, self.options.target
        if task == REGRESSION:
            values = to_numbers(frame[target])
            rows = np.flatnonzero(np.isfinite(values))
            return rows, [], values[rows], task
        codes, values = blocks.factorize(frame[target])
        rows = np.flatnonzero(codes >= 0)
        names = [class_label(v) for v in values]
        class_names = _class_order(sorted(set(names)))
        index = {name: i for i, name in enumerate(class_names)}
        labels = np.array([index[n] for n in names], dtype=np.int64)[codes[rows]]
        return rows, class_names, labels, task

    @staticmethod
    def _strata(labels: np.ndarray, task: str) -> np.ndarray:
        """What a hold-out split or a sample is stratified by: the classes, or a
        regression's quantile bins (`target_strata`)."""
        return target_strata(labels) if task == REGRESSION else labels

    def splits(self) -> tuple[np.ndarray, list[str], list[tuple[np.ndarray, np.ndarray]]]:
        """(rows with a target, class names, [(train, test) positions into those
        rows]); a regression's folds are `quantile_folds`."""
        rows, class_names, labels, task = self._labelled()
        plan = self.plan
        if plan.method == "holdout":
            train_rows, test_rows = holdout_split(self._strata(labels, task),
                                                  plan.test_size, plan.seed)
            if len(test_rows) == 0 or len(train_rows) == 0:
                raise DataError("There are too few rows to hold some out for testing.")
            pairs = [(train_rows, test_rows)]
        else:
            regression = task == REGRESSION
            if len(rows) < plan.k:
                raise DataError(f"{plan.k}-fold cross-validation needs at least {plan.k} "
                                f"rows with {'a number to predict' if regression else 'a class'}"
                                f"; the table has {len(rows)}.")
            deal = quantile_folds if regression else stratified_folds
            pairs = [(_other_rows(len(rows), t), t)
                     for t in deal(labels, plan.k, plan.seed)]
        return rows, class_names, pairs

    @property
    def n_splits(self) -> int:
        return 1 if self.plan.method == "holdout" else self.plan.k

    def run(self, on_fold: Callable[[FoldResult, int], None] | None = None,
            clock: Monitor | None = None) -> Evaluation:
        """Train and test every split; `on_fold(result, n_folds)` after each one.

        With `clock` (the Monitor of the run this evaluation belongs to), the folds
        share what is left of its time limit equally, and stop with it; a fold
        stopped before it had a tree ends the evaluation, marked incomplete.
        """
        rows, class_names, pairs = self.splits()
        evaluation = Evaluation(self.plan, class_names, task=self.options.task)
        for fold in range(len(pairs)):
            limit = self.time_limit
            if clock is not None and clock.time_limit is not None:
                limit = clock.remaining() / (len(pairs) - fold)
            if self._cancelled or (clock is not None and clock.should_stop()) or \
                    (limit is not None and limit <= 0):
                evaluation.stopped_by = _stop_reason(
                    self._cancelled or (clock is not None
                                        and clock.stop_status() == Status.CANCELLED), None,
                    self._fold_name(fold, len(pairs)).lower())
                break
            try:
                result = self._split(fold, rows, class_names, pairs, limit)
            except Interrupted as exc:
                evaluation.stopped_by = _stop_reason(
                    exc.status == Status.CANCELLED.value, limit,
                    self._fold_name(fold, len(pairs)).lower())
                break
            evaluation.folds.append(result)
            if on_fold is not None:
                on_fold(result, len(pairs))
        evaluation.complete = len(evaluation.folds) == len(pairs)
        return evaluation

    def fold(self, index: int) -> FoldResult:
        """Train and test split `index` (0-based) alone: one fit of a sweep."""
        rows, class_names, pairs = self.splits()
        if not 0 <= index < len(pairs):
            raise ParameterError(f"There is no split {index}: the plan has {len(pairs)}.")
        return self._split(index, rows, class_names, pairs, self.time_limit)

    def _split(self, fold: int, rows: np.ndarray, class_names: list[str],
               pairs: list[tuple[np.ndarray, np.ndarray]],
               time_limit: float | None) -> FoldResult:
        train_pos, test_pos = pairs[fold]
        with self._lock:
            monitor = Monitor(time_limit)   # its clock covers cutting and preparing too
            self._monitor = monitor
            if self._cancelled:
                monitor.cancel()
        copies: list[np.ndarray] = []
        try:
            frame = self.raw.frame
            train_frame = _rows(frame, rows[train_pos], monitor, copies)
            test_frame = _rows(frame, rows[test_pos], monitor, copies)
            return self._fold(fold, train_frame, test_frame, class_names, monitor)
        except DataError as exc:
            raise DataError(f"{self._fold_name(fold, len(pairs))}: {exc}") from None
        finally:
            blocks.release(copies)
            with self._lock:
                self._monitor = None

    def _fold_name(self, fold: int, n: int) -> str:
        return "The hold-out split" if n == 1 and self.plan.method == "holdout" else \
            f"Fold {fold + 1} of {n}"

    def _fold(self, fold: int, train_frame, test_frame, class_names: list[str],
              monitor: Monitor) -> FoldResult:
        """One split: its time limit covers preparing its training rows too."""
        train_raw = replace(self.raw, frame=train_frame)
        data = prepare(train_raw, self.options, progress=monitor.checkpoint)
        return self.trained(PreparedSplit(fold, data, train_frame, test_frame),
                            class_names, self.params, monitor, baselines=self.baselines)

    def sampled(self, size: int, clock: Monitor,
                copies: list[np.ndarray]) -> CrossValidation:
        """This evaluation on a stratified sample of `size` of the table's rows with a
        class (each class about its share, drawn with the plan's seed), or itself when
        the table has no more: settings are compared on a sample of a table too large
        to split and train whole many times (`engine.tuning`).  `clock` and `copies`
        as in `prepared_splits`."""
        rows, _, labels, task = self._labelled()
        if len(rows) <= size:
            return self
        _, kept = holdout_split(self._strata(labels, task), size / len(rows),
                                self.plan.seed)
        frame = _rows(self.raw.frame, rows[kept], clock, copies)
        return CrossValidation(replace(self.raw, frame=frame), self.options,
                               self.algorithm, self.params, self.plan, self.time_limit,
                               self.baselines)

    def prepared_splits(self, clock: Monitor,
                        copies: list[np.ndarray]) -> tuple[list[str], list[PreparedSplit]]:
        """(class names, every split with its training rows prepared once), for fitting
        several settings on the same splits (`engine.tuning`): `clock`'s stop and time
        limit cover the cutting and preparing, and its clock times each split (compiling
        left out); the cut columns are added to `copies` (for `blocks.release` once the
        splits are no longer needed)."""
        rows, class_names, pairs = self.splits()
        splits = []
        for fold, (train_pos, test_pos) in enumerate(pairs):
            started = clock.elapsed()
            try:
                train_frame = _rows(self.raw.frame, rows[train_pos], clock, copies)
                test_frame = _rows(self.raw.frame, rows[test_pos], clock, copies)
                data = prepare(replace(self.raw, frame=train_frame), self.options,
                               progress=clock.checkpoint)
            except DataError as exc:
                raise DataError(f"{self._fold_name(fold, len(pairs))}: {exc}") from None
            splits.append(PreparedSplit(fold, data, train_frame, test_frame,
                                        clock.elapsed() - started))
        return class_names, splits

    def trained(self, split: PreparedSplit, class_names: list[str], params: dict,
                monitor: Monitor, train_accuracy: bool = True,
                baselines: bool = False, auc: bool = False) -> FoldResult:
        """Train `params` on a prepared split and score it on its raw rows (the
        training rows too unless `train_accuracy` is False: NaN then); with
        `baselines`, score the majority class (a regression: the training part's
        mean) and the greedy tree on its test rows (`_class_figures`,
        `_regression_figures`)."""
        result = train(split.data, self.algorithm, params, monitor=monitor)
        tree = result.tree
        if tree is None:
            raise DataError(f"'{self.algorithm}' found no tree (status "
                            f"{result.status.value}).")
        greedy = self._greedy_tree(split.data, params, monitor) if baselines else None
        figures = _regression_figures(split, tree, greedy, train_accuracy, baselines) \
            if split.data.regression else \
            _class_figures(split, tree, greedy, class_names, train_accuracy, baselines, auc)
        return FoldResult(fold=split.fold, n_train=len(split.train_frame),
                          n_test=len(split.test_frame), status=result.status,
                          optimal=bool(result.optimal), time_s=float(result.time_s),
                          train_error=float(result.train_error),
                          lower_bound=float(result.lower_bound),
                          n_leaves=int(tree.n_leaves),
                          incumbents=[(float(t), float(e))
                                      for t, e, _ in result.incumbents], **figures)

    def _greedy_tree(self, data, params: dict, monitor: Monitor):
        """The greedy tree of the algorithm's depth on a split's features, the tree an
        exact one should beat on new rows too (None for greedy itself, or when it
        could not be grown in the fold's time)."""
        if self.algorithm == "greedy":
            return None
        depth = get_solver(self.algorithm).resolve(params)["depth"]
        try:
            result = train(data, "greedy", {"depth": depth}, monitor=monitor.helper())
        except Interrupted:
            return None
        return result.tree if result.status in (Status.OPTIMAL, Status.FINISHED) else None


def _class_figures(split: PreparedSplit, tree, greedy_tree, class_names: list[str],
                   train_scores: bool, baselines: bool, auc: bool) -> dict:
    """A classification split's `FoldResult` figures: accuracies and confusion
    matrices in the evaluation's classes, the weighted accuracy under class weights,
    the AUC (`auc`, two classes), and with `baselines` the held-out predictions, the
    majority class's and `greedy_tree`'s test accuracy."""
    data, train_frame, test_frame = split.data, split.train_frame, split.test_frame
    to_global = np.array([class_names.index(n) for n in tree.class_names],
                         dtype=np.int64)
    index = {name: i for i, name in enumerate(class_names)}
    size = len(class_names)

    def truth_of(frame) -> np.ndarray:
        codes, values = blocks.factorize(frame[data.prep.target])
        return np.array([index[class_label(v)] for v in values], dtype=np.int64)[codes]

    def score(frame, predicted: np.ndarray) -> tuple[float, np.ndarray]:
        matrix = confusion_matrix(truth_of(frame), to_global[predicted], size)
        total = matrix.sum()
        return (float(np.trace(matrix) / total) if total else math.nan), matrix

    test_features = split.test_features()
    test_predicted = tree.predict(test_features)
    test_accuracy, test_matrix = score(test_frame, test_predicted)
    weighted = math.nan
    if data.class_weights is not None and test_matrix.sum():
        factors = np.ones(size)   # a class the training part lacks counts once
        factors[[index[n] for n in data.class_names]] = data.class_weights
        weighted = float((factors * np.diag(test_matrix)).sum()
                         / (factors * test_matrix.sum(axis=1)).sum())
    train_accuracy, train_matrix = (
        score(train_frame, tree.predict_frame(train_frame)) if train_scores
        else (math.nan, np.zeros_like(test_matrix)))
    majority = greedy = test_auc = math.nan
    held_out = None
    if auc and size == 2:
        truth = truth_of(test_frame)
        proba = np.zeros((len(truth), size))
        proba[:, to_global] = class_probabilities(tree, test_features)
        if 0 < truth.sum() < len(truth):
            test_auc = roc_auc(truth == 1, proba[:, 1])
    if baselines:
        held_out = _held_out(tree, test_features, truth_of(test_frame),
                             to_global[test_predicted], to_global, size)
        majority = split.majority_accuracy()
        if greedy_tree is not None:
            greedy = score(test_frame, greedy_tree.predict(test_features))[0]
    return {"train_accuracy": train_accuracy, "test_accuracy": test_accuracy,
            "train_confusion": train_matrix, "test_confusion": test_matrix,
            "majority_accuracy": majority, "greedy_accuracy": greedy,
            "weighted_accuracy": weighted, "held_out": held_out, "test_auc": test_auc}


def _regression_figures(split: PreparedSplit, tree, greedy_tree, train_scores: bool,
                        baselines: bool) -> dict:
    """A regression split's `FoldResult` figures: the tree's RMSE, MAE and R² on the
    test rows (unweighted, as `orchard predict` scores a table), its R² on the raw
    training rows (`train_scores`), and with `baselines` the test RMSE and R² of
    always predicting the training part's mean and of `greedy_tree`.  No accuracy,
    confusion matrix nor held-out class shares: NaN, empty and None."""
    truth = split.test_values()
    test = regression_scores(truth, tree.predict(split.test_features()))
    figures = {"test_rmse": test["rmse"], "test_mae": test["mae"], "test_r2": test["r2"]}
    if train_scores:
        frame = split.train_frame
        figures["train_r2"] = regression_scores(
            split.data.prep.labels(frame[split.data.prep.target]),
            tree.predict_frame(frame))["r2"]
    if baselines:
        mean = split.mean_scores()
        figures.update(mean_rmse=mean["rmse"], mean_r2=mean["r2"])
    if greedy_tree is not None:
        greedy = regression_scores(truth, greedy_tree.predict(split.test_features()))
        figures.update(greedy_rmse=greedy["rmse"], greedy_r2=greedy["r2"])
    return {"train_accuracy": math.nan, "test_accuracy": math.nan,
            "train_confusion": np.zeros((0, 0)), "test_confusion": np.zeros((0, 0)),
            **figures}


def _rows(frame: pd.DataFrame, positions: np.ndarray, monitor: Monitor,
          copies: list[np.ndarray]) -> pd.DataFrame:
    """The rows at `positions` of a raw table (text cells), a column at a time (a stop
    is honoured between columns: two million text cells take a while to copy).  The
    new columns' cell arrays are added to `copies`, for `blocks.release`."""
    columns = {}
    for number, name in enumerate(frame.columns):
        monitor.checkpoint("cutting the table into splits", number / len(frame.columns))
        columns[name] = blocks.take(frame[name], positions)
        copies.append(columns[name])
    return pd.DataFrame(columns, columns=frame.columns, dtype=object, copy=False)


def _stop_reason(cancelled: bool, limit: float | None = None, fold: str = "") -> str:
    if cancelled:
        return "Testing was stopped."
    if limit is None:
        return (f"The time limit ran out before {fold} could start: raise the time "
                "limit (the splits share one).")
    return (f"The time limit left {limit:.2g} s for {fold}, too little to prepare and "
            "train it: raise the time limit (the splits share one).")


def evaluate(raw: RawTable, options: PrepOptions, algorithm: str,
             params: dict[str, Any] | None = None, plan: Plan = Plan(),
             time_limit: float | None = None,
             on_fold: Callable[[FoldResult, int], None] | None = None) -> Evaluation:
    """Run `plan` for `algorithm` on `raw` prepared with `options` (see the module doc)."""
    return CrossValidation(raw, options, algorithm, params, plan, time_limit).run(on_fold)


def _held_out(tree, X: np.ndarray, truth: np.ndarray, predicted: np.ndarray,
              to_global: np.ndarray, size: int) -> HeldOut:
    """A split's tree on its held-out rows (`X`, in its features; `truth` and
    `predicted` in the evaluation's classes): class shares, and the error its splits
    remove on those rows per raw column (rows of a class the tree never saw left out
    of that)."""
    proba = np.zeros((len(X), size))
    proba[:, to_global] = class_probabilities(tree, X)
    local = np.full(size, -1, dtype=np.int64)
    local[to_global] = np.arange(len(to_global))
    known = local[truth] >= 0
    importance = feature_importance(tree, X[known], local[truth[known]], None,
                                    len(to_global))
    return HeldOut(truth, predicted, proba, dict(importance.rows), importance.tested)
