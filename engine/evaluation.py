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
from engine.data.columns import choose_target
from engine.data.csv_reader import RawTable
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.data.preprocessing import class_label
from engine.data.task import choose_task
from engine.errors import DataError, Interrupted, ParameterError
from engine.importance import class_probabilities, feature_importance
from engine.metrics import confusion_matrix, matrix_from_json, matrix_to_json, roc_auc
from engine.solvers import get_solver
from engine.solvers.monitor import Monitor
from engine.solvers.protocol import Status
from engine.training import train
from engine.vocabulary import REGRESSION

METHODS = ("holdout", "kfold")

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
                "weighted_accuracy": self.weighted_accuracy}

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
                   float(d.get("weighted_accuracy", math.nan)))


@dataclass
class Evaluation:
    plan: Plan
    class_names: list[str]
    folds: list[FoldResult] = field(default_factory=list)
    complete: bool = True         # False when cancelled before every fold ran
    stopped_by: str = ""          # why it is incomplete, one sentence ("" if unknown)

    @property
    def n_folds(self) -> int:
        return 1 if self.plan.method == "holdout" else self.plan.k

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
        return float(np.mean(self.test_accuracies)) if self.folds else math.nan

    @property
    def std_test_accuracy(self) -> float:
        return float(np.std(self.test_accuracies)) if len(self.folds) > 1 else 0.0

    @property
    def mean_train_accuracy(self) -> float:
        return float(np.mean([f.train_accuracy for f in self.folds])) if self.folds else math.nan

    def _mean(self, values: list[float]) -> float:
        return float(np.mean(values)) if values and not np.isnan(values).any() else math.nan

    @property
    def mean_majority_accuracy(self) -> float:
        """Always answering each training part's most common class, on the test rows."""
        return self._mean([f.majority_accuracy for f in self.folds])

    @property
    def mean_greedy_accuracy(self) -> float:
        """The greedy tree of the same depth, on the same splits (NaN: not computed)."""
        return self._mean([f.greedy_accuracy for f in self.folds])

    def verdict(self) -> str:
        """One sentence when the tree loses on held-out rows to always answering the
        most common class (by any margin: such a tree says nothing), or to the greedy
        tree of the same depth by more than one standard error (a noise-sized gap is
        no loss), with what to try; '' otherwise (or when nothing was measured)."""
        if not self.folds:
            return ""
        test, majority = self.mean_test_accuracy, self.mean_majority_accuracy
        greedy = self.mean_greedy_accuracy
        if test < majority - LOSS_MARGIN:
            return (f"On held-out rows this tree is right less often than always answering "
                    f"the most common class ({100 * test:.1f}% against "
                    f"{100 * majority:.1f}%): lower the depth, raise the least leaf size "
                    "or let Tune choose them.")
        if greedy - test > max(self._paired_error(), LOSS_MARGIN):
            return (f"On held-out rows the greedy tree of the same depth does better, by "
                    f"more than a standard error ({100 * greedy:.1f}% against "
                    f"{100 * test:.1f}%): try Greedy, or let Tune choose the depth.")
        return ""

    def _paired_error(self) -> float:
        """The standard error of the tree's mean gain over the greedy tree: from the
        folds' paired differences, or for one split from its test rows (binomial)."""
        if len(self.folds) > 1:
            gains = [f.test_accuracy - f.greedy_accuracy for f in self.folds]
            return float(np.std(gains, ddof=1) / math.sqrt(len(gains)))
        fold = self.folds[0]
        share = fold.test_accuracy
        return math.sqrt(share * (1 - share) / max(fold.n_test, 1))

    def baselines_text(self) -> str:
        """" (most common class 70.0%, greedy tree 83.1%)", or '' when not scored."""
        parts = [f"{name} {100 * value:.1f}%" for name, value in (
            ("most common class", self.mean_majority_accuracy),
            ("greedy tree of the same depth", self.mean_greedy_accuracy))
            if not math.isnan(value)]
        return f" ({', '.join(parts)})" if parts else ""

    def brief(self) -> dict:
        """The figures a script wants (`orchard fit --validate`'s JSON); NaN as None."""
        def number(value: float) -> float | None:
            return None if math.isnan(value) else value
        return {"plan": self.plan.to_dict(), "complete": self.complete,
                "folds": len(self.folds), "test_accuracy": number(self.mean_test_accuracy),
                "test_accuracy_std": self.std_test_accuracy,
                "per_fold": self.test_accuracies,
                "majority_accuracy": number(self.mean_majority_accuracy),
                "greedy_accuracy": number(self.mean_greedy_accuracy),
                "mean_leaves": (float(np.mean([f.n_leaves for f in self.folds]))
                                if self.folds else None),
                "verdict": self.verdict(), "stopped_by": self.stopped_by}

    def test_confusion(self) -> np.ndarray:
        """Test confusion matrix summed over the folds (every test row counted once)."""
        size = len(self.class_names)
        total = np.zeros((size, size))
        for f in self.folds:
            total += f.test_confusion
        return total

    def summary(self) -> str:
        """One line, e.g. `5-fold cross-validation: test accuracy 84.2% ± 1.3`."""
        why = f" {self.stopped_by}" if self.stopped_by else ""
        if not self.folds:
            return f"{self.plan.describe()}: no fold finished.{why}"
        text = f"{self.plan.describe()}: test accuracy {100 * self.mean_test_accuracy:.1f}%"
        if len(self.folds) > 1:
            text += f" ± {100 * self.std_test_accuracy:.1f}"
        if not self.complete:
            text += f" ({len(self.folds)} of {self.n_folds} folds, stopped).{why}"
        return text

    def to_dict(self) -> dict:
        return {"plan": self.plan.to_dict(), "class_names": list(self.class_names),
                "folds": [f.to_dict() for f in self.folds], "complete": self.complete,
                "stopped_by": self.stopped_by}

    @classmethod
    def from_dict(cls, d: dict) -> Evaluation:
        return cls(Plan.from_dict(d["plan"]), list(d["class_names"]),
                   [FoldResult.from_dict(f) for f in d["folds"]], bool(d["complete"]),
                   str(d.get("stopped_by", "")))


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

    def _labelled(self) -> tuple[np.ndarray, list[str], np.ndarray]:
        """(rows with a class, class names, each of those rows' class index)."""
        frame = self.raw.frame
        target = choose_target([str(c) for c in frame.columns], self.options.target,
                               self.raw)
        task, _ = choose_task(target, frame[target], self.options.task)
        if task == REGRESSION:
            raise DataError(f"The target '{target}' holds numbers (a regression), and "
                            "held-out evaluation and tuning of regression trees are not "
                            "in Orchard yet: fit the tree without them, or ask for "
                            "classification.")
        # Every split prepares its rows with this target and task, not ones chosen on
        # them anew (a fold may hold fewer different numbers than the whole table).
        self.options = replace(self.options, target=target, task=task)
        codes, values = blocks.factorize(frame[target])
        rows = np.flatnonzero(codes >= 0)
        names = [class_label(v) for v in values]
        class_names = _class_order(sorted(set(names)))
        index = {name: i for i, name in enumerate(class_names)}
        labels = np.array([index[n] for n in names], dtype=np.int64)[codes[rows]]
        return rows, class_names, labels

    def splits(self) -> tuple[np.ndarray, list[str], list[tuple[np.ndarray, np.ndarray]]]:
        """(rows with a class, class names, [(train, test) positions into those rows])."""
        rows, class_names, labels = self._labelled()
        plan = self.plan
        if plan.method == "holdout":
            train_rows, test_rows = holdout_split(labels, plan.test_size, plan.seed)
            if len(test_rows) == 0 or len(train_rows) == 0:
                raise DataError("There are too few rows to hold some out for testing.")
            pairs = [(train_rows, test_rows)]
        else:
            if len(rows) < plan.k:
                raise DataError(f"{plan.k}-fold cross-validation needs at least {plan.k} "
                                f"rows with a class; the table has {len(rows)}.")
            tests = stratified_folds(labels, plan.k, plan.seed)
            pairs = [(_other_rows(len(rows), t), t) for t in tests]
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
        evaluation = Evaluation(self.plan, class_names)
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
        rows, _, labels = self._labelled()
        if len(rows) <= size:
            return self
        _, kept = holdout_split(labels, size / len(rows), self.plan.seed)
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
        `baselines`, score the majority class and the greedy tree on its test rows."""
        fold, data = split.fold, split.data
        train_frame, test_frame = split.train_frame, split.test_frame
        result = train(data, self.algorithm, params, monitor=monitor)
        tree = result.tree
        if tree is None:
            raise DataError(f"'{self.algorithm}' found no tree (status "
                            f"{result.status.value}).")
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
            score(train_frame, tree.predict_frame(train_frame)) if train_accuracy
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
            greedy_tree = self._greedy_tree(data, params, monitor)
            if greedy_tree is not None:
                greedy = score(test_frame, greedy_tree.predict(test_features))[0]
        return FoldResult(fold, len(train_frame), len(test_frame), train_accuracy,
                          test_accuracy, train_matrix, test_matrix, result.status,
                          bool(result.optimal), float(result.time_s),
                          float(result.train_error), float(result.lower_bound),
                          int(tree.n_leaves),
                          [(float(t), float(e)) for t, e, _ in result.incumbents],
                          majority, greedy, weighted, held_out, test_auc)

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
