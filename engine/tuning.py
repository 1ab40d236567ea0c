"""Choose a tree's size by cross-validation, then train that tree on every row.

An optimal tree of a given depth fits its training rows as well as any tree of that
depth can; which depth (and which least leaf size) holds up on new rows is an empirical
question, and guessing it is what analysts otherwise do.  `tune` answers it the way
the tree literature does (Breiman et al.'s one-standard-error rule, here with half a
standard error: measured on 12 and 23 tables, it predicts new rows 0.2 points better
for 9-16% more leaves, still fewer than a tuned CART's; benchmarks/RESULTS.md):

1. every candidate setting (`candidates`: depths × least leaf sizes × costs per
   leaf, each where the algorithm has the parameter) is scored by an inner k-fold
   cross-validation on the rows given (`engine.evaluation`: each split's training
   rows are prepared on their own, so no threshold or value group sees a validation
   row, and once, for every candidate: preparing a large table costs more than
   training a shallow tree on it), or on a stratified sample of `SAMPLE_ROWS` of
   them when there are more (which depth holds up shows on 50,000 rows too, and the
   grid on five splits of 300,000 rows did not fit in a minute); the table and
   `--json` say which (`Tuning.scored_on`);
2. `choose` takes the best mean validation accuracy, then the *simplest* setting
   (fewest leaves on average, then the smaller depth, then the larger least leaf,
   then the larger cost per leaf) whose mean lies within `RULE_ERRORS` (a half) standard
   error of that best;
   only settings at or above the majority class (the training part's most frequent
   class, scored on the same validation rows) take part, and when none is, the choice
   says so (`Tuning.note`): a tree that predicts new rows worse than one class for
   all is no answer to give silently;
3. the chosen setting is trained on all rows.

A regression (a numeric target) is tuned the same way by the validation R² (the
default: the share of the rows' spread the tree explains, comparable across folds
whose spreads differ) or RMSE (in the target's unit; lower is better, so "best" and
"at least" turn around: `Scored.sign`), its folds stratified by the target's
quantiles (`engine.evaluation.quantile_folds`), and its floor is always predicting
the training part's mean instead of the majority class (R² about 0).  The measures
of the other task are refused in one sentence (`resolve_metric`).

One time limit covers the whole, and the final fit comes first in it: once the
splits are prepared, its time is kept from the grid (`Reserve`: preparing every row,
estimated from preparing a split, and training on them, an equal share or more when
the folds' training says so), and each candidate gets an equal share of the rest, so
settings that finish early leave their time to the others.  A candidate the grid's
time did not reach, or whose folds did not all finish, is listed with the reason and
takes no part in the choice; the final fit is never stopped by the time limit before
it has a tree (it would waste the whole tuning).  `Tuner.cancel()` (any thread)
stops the current fold or the final fit.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from engine.data import blocks
from engine.data.csv_reader import RawTable
from engine.data.dataset import PrepOptions
from engine.errors import DataError, Interrupted, ParameterError
from engine.evaluation import CrossValidation, FoldResult, Plan, PreparedSplit
from engine.featurize import prepare
from engine.metrics import matrix_balanced_accuracy
from engine.solvers import get_solver
from engine.solvers.monitor import Monitor
from engine.solvers.protocol import Result, Status
from engine.solvers.warm_start import LEAF_PARAMETERS, leaf_parameter
from engine.training import train
from engine.vocabulary import (
    CLASSIFICATION,
    LOWER_IS_BETTER,
    METRICS,
    REGRESSION,
    TASK_METRICS,
)

DEPTHS = (1, 2, 3, 4, 5, 6)
# Beyond them, the depths greedy and the hybrid (auto beyond depth 6) also try by
# default: the depths a tuned CART reaches (issue 45: 10-12 on car-evaluation, 14-16 on
# segment), every other one, as each costs an exact search no more (the hybrid's top
# is searched at depth 3) and a greedy tree little.
DEEP_DEPTHS = (8, 10, 12)
GREEDY_DEEP_DEPTHS = (8, 10, 12, 16)
MIN_LEAVES = (1, 5, 20)
# Costs per leaf (`leaf_cost`, a share of the rows) tried by default where the
# algorithm has one: none, and a split that must fix 1% of the rows (0.5% for the
# greedy tree, whose pruning is cheap).
LEAF_COSTS = (0.0, 0.01)
GREEDY_LEAF_COSTS = (0.0, 0.005, 0.02)
# A table with more rows (with a class) than this is tuned on a stratified sample of
# this many, the choice then trained on every row: on five splits of 300,000 rows the
# default minute scored 32 of greedy's 54 settings and left no time for the final fit;
# on 50,000 rows all 54 took 11 s (2 cores).
SAMPLE_ROWS = 50_000
# The final fit's time is kept from the grid by estimates (its preparation from the
# splits', its training from the folds'), each this many times the measure: a busy
# machine, and more rows cost a little more than their number (sorting).
MARGIN = 1.5
# Seconds of the grid's time below which no fold is started, nor a final training
# given less.
SHORTEST = 0.01
KEPT = "not scored: the time left was kept for the final fit"


def default_depths(algorithm: str) -> tuple[int, ...]:
    """The depths tried unless the user names some: `DEPTHS` for the exact searches,
    whose time grows steeply with depth; deeper ones too for greedy and for auto and
    hybrid, which grow the levels below depth 3 greedily there."""
    if algorithm == "greedy":
        return DEPTHS + GREEDY_DEEP_DEPTHS
    return DEPTHS + DEEP_DEPTHS if algorithm in ("auto", "hybrid") else DEPTHS


def default_leaves(algorithm: str) -> tuple[int, ...]:
    """The least leaf sizes tried unless the user names some: `MIN_LEAVES` for greedy,
    whose fits cost little; none (the depth alone) for the exact searches, which
    share the time limit with every depth, and on a large table cannot afford three
    times as many candidates (auto with a least leaf runs DL8.5, slower still)."""
    return MIN_LEAVES if algorithm == "greedy" else ()


def default_costs(algorithm: str) -> tuple[float, ...]:
    """The costs per leaf tried unless the user names some (`LEAF_COSTS`; more for
    greedy, whose fits cost little)."""
    return GREEDY_LEAF_COSTS if algorithm == "greedy" else LEAF_COSTS


@dataclass(frozen=True)
class Candidate:
    """One setting tried: a depth and, where the algorithm has them, a least leaf
    and a cost per leaf."""

    depth: int
    min_leaf: int | float | None = None
    leaf_cost: float | None = None

    def params(self, algorithm: str, base: dict[str, Any]) -> dict[str, Any]:
        params = {**base, "depth": self.depth}
        if self.min_leaf is not None:
            params[leaf_parameter(algorithm)] = self.min_leaf
        if self.leaf_cost is not None:
            params["leaf_cost"] = self.leaf_cost
        return params

    def label(self) -> str:
        leaf = "" if self.min_leaf is None else f", min leaf {self.min_leaf:g}"
        cost = "" if self.leaf_cost is None else f", leaf cost {self.leaf_cost:g}"
        return f"depth {self.depth}{leaf}{cost}"


def candidates(algorithm: str, depths: Sequence[int] | None = None,
               min_leaves: Sequence[float] | None = None,
               leaf_costs: Sequence[float] | None = None) -> list[Candidate]:
    """Depths × least leaf sizes × costs per leaf, cheapest first.  None means the
    defaults (`default_depths`, `default_leaves`, `default_costs`) where the algorithm
    has the parameter; values given for a parameter it lacks are refused in one
    sentence."""
    solver = get_solver(algorithm)
    depths = sorted({int(d) for d in (default_depths(algorithm) if depths is None
                                      else depths)})
    if not depths:
        raise ParameterError("Give at least one depth to try.")
    for depth in depths:
        solver.resolve({"depth": depth})   # out of range: one sentence
    name = leaf_parameter(algorithm)
    leaves: list = [None]
    min_leaves = default_leaves(algorithm) if min_leaves is None else min_leaves
    if name is None or not min_leaves:
        if min_leaves is not None and any(float(m) != 1 for m in min_leaves):
            raise ParameterError(f"'{algorithm}' has no minimum leaf size to tune: "
                                 "leave it out, or tune auto, greedy or dl85.")
    else:
        # whole sizes as integers (DL8.5's support and auto's least leaf take no other)
        leaves = sorted({int(m) if float(m).is_integer() else float(m)
                         for m in min_leaves})
        for leaf in leaves:
            solver.resolve({name: leaf})
    costs: list = [None]
    has_cost = "leaf_cost" in {p.name for p in solver.params}
    leaf_costs = (default_costs(algorithm) if has_cost else ()) if leaf_costs is None \
        else leaf_costs
    if not has_cost:
        if any(float(c) != 0 for c in leaf_costs):
            raise ParameterError(f"'{algorithm}' has no cost per leaf to tune: leave it "
                                 "out, or tune auto, greedy, contree, blossom or dl85.")
    elif leaf_costs:
        costs = sorted({float(c) for c in leaf_costs})
        for cost in costs:
            solver.resolve({"leaf_cost": cost})
    return [Candidate(d, m, c) for d in depths for m in leaves for c in costs]


@dataclass
class Scored:
    """A candidate's validation scores and leaf counts, one per fold.

    `accuracies` holds each fold's score under `metric` (named for the first one:
    a regression's R² or RMSE too); `to_dict` names them by their metric."""

    candidate: Candidate
    accuracies: list[float] = field(default_factory=list)
    leaves: list[int] = field(default_factory=list)
    folds: int = 0                 # folds planned
    note: str = ""                 # why it was not scored on every fold
    at_limit: int = 0              # folds whose search the time limit stopped
    seconds: list[float] = field(default_factory=list)   # each fold's training
    metric: str = "accuracy"       # what the scores are (`METRICS`)

    @property
    def sign(self) -> float:
        """1 when a higher score is better, -1 for an error (RMSE): `sign * mean` is
        what the choice maximises."""
        return -1.0 if self.metric in LOWER_IS_BETTER else 1.0

    @property
    def complete(self) -> bool:
        return self.folds > 0 and len(self.accuracies) == self.folds

    @property
    def mean(self) -> float:
        return float(np.mean(self.accuracies)) if self.accuracies else math.nan

    @property
    def standard_error(self) -> float:
        """Of the mean over folds (0 with a single fold)."""
        k = len(self.accuracies)
        return float(np.std(self.accuracies, ddof=1) / math.sqrt(k)) if k > 1 else 0.0

    @property
    def mean_leaves(self) -> float:
        return float(np.mean(self.leaves)) if self.leaves else math.nan

    def to_dict(self) -> dict:
        """Its JSON: a classification's scores as `mean_accuracy` and `accuracies`
        (under every classification metric, as before there were others); a
        regression's as `validation_r2` (the folds' mean) and `validation_r2_per_fold`
        (or `_rmse`), with `metric` naming it."""
        if self.metric in TASK_METRICS[REGRESSION]:
            scores = {"metric": self.metric, f"validation_{self.metric}": self.mean,
                      f"validation_{self.metric}_per_fold": list(self.accuracies)}
        else:
            scores = {"mean_accuracy": self.mean, "accuracies": list(self.accuracies)}
        return {"depth": self.candidate.depth, "min_leaf": self.candidate.min_leaf,
                "leaf_cost": self.candidate.leaf_cost, **scores,
                "standard_error": self.standard_error,
                "mean_leaves": self.mean_leaves, "leaves": list(self.leaves),
                "complete": self.complete, "folds_at_time_limit": self.at_limit,
                "note": self.note, "fold_seconds": list(self.seconds)}


# The choice rule: the simplest candidate within this many standard errors of the best
# (measured against one and none: benchmarks/RESULTS.md, issue 45).
RULE_ERRORS = 0.5
RULE = "half a standard error"


def choose(scored: Sequence[Scored], majority: float | None = None,
           errors: float | None = None) -> tuple[int, int]:
    """(best, chosen): the index of the best mean validation score, and of the
    simplest candidate within `errors` (`RULE_ERRORS` unless given) of its standard
    errors (fewest mean leaves, then the smaller depth, then the larger least leaf,
    then the larger cost per leaf, then the better mean), among the candidates whose
    mean is at least as good as `majority` (the majority class's, a regression's
    training mean's) if any is, else among all.  "Better" is higher, or lower for an
    error (`Scored.sign`)."""
    ready = [i for i, s in enumerate(scored) if s.complete]
    if not ready:
        raise DataError("No setting was cross-validated on every fold: raise the time "
                        "limit, or try fewer depths.")

    def good(i: int) -> float:   # higher is better, whatever the metric
        return scored[i].sign * scored[i].mean
    if majority is not None:
        ready = [i for i in ready
                 if scored[i].sign * (scored[i].mean - majority) >= -1e-12] or ready
    best = max(ready, key=lambda i: (good(i), -scored[i].mean_leaves))
    errors = RULE_ERRORS if errors is None else errors
    bar = good(best) - errors * scored[best].standard_error
    within = [i for i in ready if good(i) >= bar - 1e-12]

    def simplicity(i: int):
        c = scored[i]
        return (c.mean_leaves, c.candidate.depth, -(c.candidate.min_leaf or 0),
                -(c.candidate.leaf_cost or 0), -good(i))
    return best, min(within, key=simplicity)




def measure(options: PrepOptions, metric: str = "accuracy") -> str:
    """What the candidates are ranked by: the accuracy on the validation rows (with
    class weights, each row counted with its class's weight: what the trees are
    trained for, and a tuning by plain accuracy undoes the weights), or the balanced
    accuracy (the mean recall of the classes present, which class weights leave as
    it is), the AUC, or a regression's R² or RMSE (`METRICS`' words)."""
    if metric in ("balanced", "auc", "r2", "rmse"):
        return f"validation {METRICS[metric].split(' (')[0]}"
    return "weighted validation accuracy" if options.class_weight else \
        "validation accuracy"


def check_metric(metric: str) -> None:
    if metric not in METRICS:
        raise ParameterError(f"Unknown measure '{metric}': use one of "
                             f"{', '.join(METRICS)}.")


def resolve_metric(metric: str | None, task: str) -> str:
    """The measure a tuning of `task` ranks by: `metric`, or the task's default
    (accuracy; a regression's R²) when None; a measure of the other task is refused
    in one sentence (a number has no accuracy, a class no squared error)."""
    if metric is None:
        return TASK_METRICS[task][0]
    check_metric(metric)
    if metric not in TASK_METRICS[task]:
        other = REGRESSION if task == CLASSIFICATION else CLASSIFICATION
        what = "holds numbers (a regression)" if task == REGRESSION else \
            "holds classes (a classification)"
        name = METRICS[metric].split(" (")[0]
        *some, last = TASK_METRICS[task]
        raise ParameterError(f"{name[:1].upper()}{name[1:]} ranks the settings of a "
                             f"{other}, and this target {what}: rank by "
                             f"{', '.join(some)} or {last} instead.")
    return metric


def fold_score(fold: FoldResult, metric: str) -> float:
    """A fold's score under `metric` (`FoldResult.score`, the balanced accuracy of its
    validation confusion matrix, its validation AUC, or a regression's validation
    R² or RMSE)."""
    if metric in ("auc", "r2", "rmse"):
        return getattr(fold, f"test_{metric}")
    return matrix_balanced_accuracy(fold.test_confusion) if metric == "balanced" \
        else fold.score


def baseline_score(split: PreparedSplit, metric: str) -> float:
    """What the floor of the choice scores on a split's validation rows under
    `metric`: always answering the training part's most common class (weighted as
    the trees were trained, under class weights), a coin's 0.5 AUC, or always
    predicting the training part's mean (a regression)."""
    if metric in ("r2", "rmse"):
        return split.mean_scores()[metric]
    if metric == "auc":
        return 0.5
    return split.majority_balanced_accuracy() if metric == "balanced" else \
        split.majority_accuracy(weighted=True)


def shown(metric: str, value: float, error: bool = False) -> str:
    """A score (or with `error`, its standard error) as the table and the progress
    line write it: a share as a percentage (`84.2%`, `± 1.3`), R² as a number
    (`0.812`, `± 0.021`), an RMSE in the target's unit (`14.93`, `± 0.41`)."""
    if metric == "rmse":
        return f"{value:.2g}" if error else f"{value:.4g}"
    if metric == "r2":
        return f"{value:.3f}"
    return f"{100 * value:.1f}" if error else f"{100 * value:.1f}%"


@dataclass
class Tuning:
    """The outcome: every candidate's scores, the choice and the final fit."""

    algorithm: str
    plan: Plan
    scored: list[Scored]
    best: int
    chosen: int
    result: Result | None          # the chosen setting trained on every row (refit)
    data: Any                      # its Dataset
    options: PrepOptions
    params: dict[str, Any]         # the final fit's parameters
    # the floor's mean validation score: the majority class's (a regression: always
    # predicting the training part's mean) under `metric`
    majority: float = math.nan
    rows: int = 0                  # the table's
    sample_rows: int | None = None  # the stratified sample scored (None: every row)
    reserved_s: float = 0.0        # seconds kept for the final fit when the grid ended
    metric: str = "accuracy"       # what the settings were ranked by (`METRICS`)

    def scored_on(self) -> str:
        """What each candidate was scored on, e.g. `5-fold cross-validation on a
        stratified sample of 50,000 of the 300,000 rows`."""
        return self.plan.describe() + self._sample()

    def _sample(self) -> str:
        return "" if self.sample_rows is None else \
            f" on a stratified sample of {self.sample_rows:,} of the {self.rows:,} rows"

    @property
    def regression(self) -> bool:
        return self.metric in TASK_METRICS[REGRESSION]

    @property
    def baseline(self) -> str:
        """What the floor of the choice is, in words."""
        return "the training rows' mean" if self.regression else "majority class"

    @property
    def note(self) -> str:
        """One sentence when the chosen setting is below the majority class (a
        regression's training mean) on validation ('' otherwise)."""
        chosen = self.scored[self.chosen]
        if not chosen.sign * (chosen.mean - self.majority) < -1e-12:
            return ""
        if self.regression:
            return (f"No setting predicted the validation rows better than always "
                    f"answering the training rows' mean ({self.measure} "
                    f"{shown(self.metric, self.majority)} for the mean, against "
                    f"{shown(self.metric, chosen.mean)} for the chosen setting): the "
                    "columns may not predict the target, or need more rows; check the "
                    "columns used, or try a least leaf size or a cost per leaf.")
        return (f"No setting predicted the validation rows better than the majority "
                f"class ({100 * self.majority:.1f}% {self.measure} by always answering "
                "the most "
                f"frequent class, against {100 * chosen.mean:.1f}% for the chosen "
                "setting): the columns may not tell the classes apart, or need more "
                "rows; check the columns used, or try a least leaf size or a cost per "
                "leaf.")

    def to_dict(self) -> dict:
        """Its JSON; the floor's score is `majority_accuracy`, or a regression's
        `mean_r2` / `mean_rmse` (always predicting the training rows' mean)."""
        floor = f"mean_{self.metric}" if self.regression else "majority_accuracy"
        return {"algorithm": self.algorithm, "plan": self.plan.to_dict(),
                "measure": self.measure, "metric": self.metric,
                "candidates": [s.to_dict() for s in self.scored], "best": self.best,
                "chosen": self.chosen, "rule": RULE,
                floor: self.majority, "note": self.note,
                "rows": self.rows, "sample_rows": self.sample_rows,
                "scored_on": self.scored_on(), "final_fit_reserved_s": self.reserved_s,
                "chosen_params": {k: v for k, v in self.params.items()
                                  if k in ("depth", "leaf_cost", *LEAF_PARAMETERS)}}

    @property
    def measure(self) -> str:
        return measure(self.options, self.metric)

    def table(self) -> list[str]:
        """One line per candidate, the best and the chosen marked."""
        lines = [f"{self.plan.describe()} of {self.algorithm}{self._sample()}"
                 + (" (the choice then trained on every row)" if self.sample_rows else "")
                 + f", the simplest within {RULE} of the best {self.measure}:"]
        for i, s in enumerate(self.scored):
            mark = ("chosen" if i == self.chosen else "") + \
                   (" best" if i == self.best else "")
            if s.complete:
                text = (f"{shown(self.metric, s.mean):>6s} ± "
                        f"{shown(self.metric, s.standard_error, error=True)}, "
                        f"{s.mean_leaves:.1f} leaves")
                if s.at_limit:
                    text += f" ({s.at_limit} of {s.folds} folds stopped by the time limit)"
            else:
                text = s.note or "not scored"
            lines.append(f"  {s.candidate.label():38s} {text}"
                         + (f"  <- {mark.strip()}" if mark else ""))
        lines.append(f"  {self.baseline:38s} {shown(self.metric, self.majority):>6s}")
        kept = sum(s.note == KEPT for s in self.scored)
        if kept:
            lines.append(f"{kept} of {len(self.scored)} settings were not scored in the "
                         f"time limit (its last {self.reserved_s:.1f} s were kept for the "
                         "final fit on every row): raise the time limit to score them.")
        if self.note:
            lines.append(self.note)
        return lines


class Tuner:
    """One tuning run (see the module docstring); `cancel()` from any thread."""

    def __init__(self, raw: RawTable, options: PrepOptions, algorithm: str,
                 grid: Sequence[Candidate], params: dict[str, Any] | None = None,
                 plan: Plan = Plan(), time_limit: float | None = None,
                 metric: str | None = None):
        """`metric` (`METRICS`) must suit the target's task; None: the task's default
        (accuracy, a regression's R²: `resolve_metric`, once the table is read)."""
        plan.check()
        if metric is not None:
            check_metric(metric)
        if time_limit is not None and not time_limit > 0:
            raise ParameterError("The time limit must be a positive number of seconds.")
        self.raw, self.options, self.algorithm = raw, options, algorithm
        self.grid, self.params = list(grid), dict(params or {})
        self.plan, self.time_limit, self.metric = plan, time_limit, metric
        self._lock = threading.Lock()
        self._cancelled = False
        self._current: Monitor | None = None   # the fit or stage running now

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            if self._current is not None:
                self._current.cancel()

    def _running(self, task) -> None:
        with self._lock:
            self._current = task
            if self._cancelled and task is not None:
                task.cancel()

    def run(self, on_candidate: Callable[[Scored, int, int], None] | None = None,
            clock: Monitor | None = None, refit: bool = True) -> Tuning:
        """Score every candidate, choose, and (`refit`) train the choice on all rows.
        `clock` is the whole run's Monitor if it started earlier (the CLI's covers
        reading the file too); the final fit reports its stages and trees to its
        callbacks.  Without `refit` the final fit's time is still kept from the grid:
        the caller trains the choice in it (the notebook)."""
        own = clock is None
        clock = Monitor(self.time_limit) if own else clock
        try:
            return self._run(clock, on_candidate, refit)
        finally:
            if own:
                clock.finish()

    def _run(self, clock: Monitor, on_candidate, refit: bool) -> Tuning:
        # Every split's training rows are prepared once, for the deepest candidate
        # (a guided binarisation's thresholds for depth d hold those for every
        # shallower depth), and each candidate is trained on the same features.
        options = replace(self.options, depth=max(c.depth for c in self.grid))
        validation = CrossValidation(self.raw, options, self.algorithm, self.params,
                                     self.plan)
        self.metric = resolve_metric(self.metric, validation.task)
        copies: list[np.ndarray] = []
        splits: list = []
        self._running(clock)
        try:
            validation = validation.sampled(SAMPLE_ROWS, clock, copies)
            class_names, splits = validation.prepared_splits(clock, copies)
            if self.metric == "auc" and len(class_names) != 2:
                raise ParameterError(f"AUC ranks settings for a target of two classes; "
                                     f"this one has {len(class_names)}: rank by balanced "
                                     "accuracy instead.")
            majority = float(np.mean([baseline_score(split, self.metric)
                                      for split in splits]))
            reserve = Reserve.measured(clock, len(self.grid), len(self.raw.frame), splits)
            scored = self._score_all(reserve, clock, validation, class_names, splits,
                                     on_candidate)
        finally:
            del splits
            blocks.release(copies)
        if self._stopped(clock):
            raise Interrupted("Tuning was stopped.", Status.CANCELLED.value)
        best, chosen = choose(scored, majority)
        params = self.grid[chosen].params(self.algorithm, self.params)
        sample = len(validation.raw.frame) if validation.raw is not self.raw else None
        tuning = Tuning(self.algorithm, self.plan, scored, best, chosen, None, None,
                        options, params, majority, len(self.raw.frame), sample,
                        reserve.seconds(), self.metric)
        if refit:
            tuning.data, tuning.result = self._final_fit(
                clock, options, params, reserve.training_needs(scored[chosen]))
        self._running(None)
        return tuning

    def _final_fit(self, clock: Monitor, options: PrepOptions, params: dict[str, Any],
                   least: float) -> tuple[Any, Result]:
        """The chosen setting trained on every row.  The time limit never stops it
        before it has a tree, which would waste the whole tuning: its preparation
        (measured and kept from the grid) runs to its end, and its training gets what
        is left of the time limit, at least `least` seconds.  `cancel()` stops both."""
        preparing = Monitor(on_progress=clock.on_progress)
        self._running(preparing)
        try:
            data = prepare(self.raw, options, progress=preparing.checkpoint)
        finally:
            preparing.finish()
        left = clock.remaining()
        training = Monitor(None if left is None else max(left, least, SHORTEST),
                           clock.on_incumbent, clock.on_progress)
        self._running(training)
        return data, train(data, self.algorithm, params, monitor=training)

    def _score_all(self, reserve: Reserve, clock: Monitor, validation: CrossValidation,
                   class_names: list[str], splits: list, on_candidate) -> list[Scored]:
        scored = []
        n = len(self.grid)
        for i, candidate in enumerate(self.grid):
            score = Scored(candidate, folds=len(splits), metric=self.metric)
            scored.append(score)
            if self._stopped(clock):
                score.note = "not scored: stopped"
            elif reserve.grid_over():
                score.note = KEPT
            else:   # an equal share of what is left
                left = reserve.grid_left()
                self._score(score, reserve, clock, validation, class_names, splits,
                            None if left is None else left / (n - i))
            if on_candidate is not None:
                on_candidate(score, i, n)
        return scored

    def _stopped(self, clock: Monitor) -> bool:
        """Whether Stop was pressed (`cancel()`, or the run's own Monitor)."""
        return self._cancelled or clock.stop_status() == Status.CANCELLED

    def _score(self, score: Scored, reserve: Reserve, clock: Monitor,
               validation: CrossValidation, class_names: list[str], splits: list,
               share: float | None) -> None:
        """Every fold of one candidate, each with an equal part of its share: a fold
        that overruns its part (a stage no stop interrupts) takes from the candidates
        after it, never from this one's other folds nor from the final fit."""
        params = score.candidate.params(self.algorithm, self.params)
        fold_limit = None if share is None else share / len(splits)
        for split in splits:
            if self._stopped(clock) or reserve.grid_over():
                break
            monitor = Monitor(fold_limit)
            self._running(monitor)
            try:
                fold = validation.trained(split, class_names, params, monitor,
                                          train_accuracy=False,
                                          auc=self.metric == "auc")
            except Interrupted:
                break
            finally:
                monitor.finish()
                self._running(None)
            score.accuracies.append(fold_score(fold, self.metric))
            score.leaves.append(fold.n_leaves)
            score.seconds.append(fold.time_s)
            score.at_limit += fold.status == Status.TIME_LIMIT
        reserve.learn(score)
        if self._stopped(clock):
            score.note = "not scored: stopped"
        elif not score.complete:
            score.note = KEPT if reserve.grid_over() else \
                "not scored: the time limit ran out before every fold had a tree"


@dataclass
class Reserve:
    """The final fit's time, kept from the grid: an estimate of preparing every row
    (a split's preparation, the median, per row, times the table's rows: the first
    split also loads the kernels) and of training the choice on them (an equal share,
    as one more candidate, or more when the folds' training, per row, times the
    table's rows, says so).  Each estimate is `MARGIN` times the measure."""

    clock: Monitor
    scale: float           # the table's rows per training row of a split
    preparing: float       # seconds kept for preparing every row
    training: float        # and for training the choice on them

    @classmethod
    def measured(cls, clock: Monitor, candidates: int, rows: int,
                 splits: list[PreparedSplit]) -> Reserve:
        scale = rows / max(min(len(s.train_frame) for s in splits), 1)
        preparing = MARGIN * scale * float(np.median([s.seconds for s in splits]))
        left = clock.remaining()
        share = 0.0 if left is None else max(left - preparing, 0.0) / (candidates + 1)
        return cls(clock, scale, preparing, share)

    def seconds(self) -> float:
        return self.preparing + self.training

    def grid_left(self) -> float | None:
        """Seconds the grid may still use (None without a time limit)."""
        left = self.clock.remaining()
        return None if left is None else left - self.seconds()

    def grid_over(self) -> bool:
        """Whether the grid's time is over (and stays so: a candidate skipped leaves
        no more to those after it)."""
        left = self.grid_left()
        return left is not None and left < SHORTEST

    def training_needs(self, score: Scored) -> float:
        """Seconds training `score`'s setting on every row takes, by its folds."""
        return MARGIN * self.scale * max(score.seconds, default=0.0)

    def learn(self, score: Scored) -> None:
        """Keep at least what training `score`'s setting on every row would take."""
        self.training = max(self.training, self.training_needs(score))


def tune(raw: RawTable, options: PrepOptions, algorithm: str,
         grid: Sequence[Candidate] | None = None, params: dict[str, Any] | None = None,
         plan: Plan = Plan(), time_limit: float | None = None,
         on_candidate: Callable[[Scored, int, int], None] | None = None,
         metric: str | None = None) -> Tuning:
    """`Tuner(...).run(on_candidate)` with the default grid when `grid` is None."""
    grid = candidates(algorithm) if grid is None else grid
    return Tuner(raw, options, algorithm, grid, params, plan, time_limit,
                 metric).run(on_candidate)
