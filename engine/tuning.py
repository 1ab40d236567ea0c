"""Choose a tree's size by cross-validation, then train that tree on every row.

An optimal tree of a given depth fits its training rows as well as any tree of that
depth can; which depth (and which least leaf size) holds up on new rows is an empirical
question, and guessing it is what analysts otherwise do.  `tune` answers it the way
the tree literature does (Breiman et al.'s one-standard-error rule):

1. every candidate setting (`candidates`: depths × least leaf sizes, where the
   algorithm has a least-leaf parameter) is scored by an inner k-fold
   cross-validation on the rows given (`engine.evaluation`: each fold prepares its
   own training rows, so no threshold or value group sees a validation row);
2. `choose` takes the best mean validation accuracy, then the *simplest* setting
   (fewest leaves on average, then the smaller depth, then the larger least leaf)
   whose mean lies within one standard error of that best;
3. the chosen setting is trained on all rows.

One time limit covers the whole: each candidate gets an equal share of what is left
(the last share is the final fit's), so settings that finish early leave their time to
the others.  A candidate whose folds did not all finish is listed with the reason and
takes no part in the choice.  `Tuning.cancel()` (any thread) stops the current fold.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from engine.data.csv_reader import RawTable
from engine.data.dataset import PrepOptions
from engine.errors import DataError, Interrupted, ParameterError
from engine.evaluation import CrossValidation, Evaluation, Plan
from engine.featurize import prepare
from engine.solvers import get_solver
from engine.solvers.monitor import Monitor
from engine.solvers.protocol import Result, Status
from engine.training import train

DEPTHS = (1, 2, 3, 4, 5, 6)
MIN_LEAVES = (1, 5, 20)
# Seconds a candidate gets at least (when that much is left): a fold's preparation
# must fit, even when many candidates share a short time limit.
MIN_SHARE = 2.0
# Each algorithm's parameter for the least weight in a leaf, under the one name
# `min_leaf` here (DL8.5 calls it a support, as its paper does).
LEAF_PARAMETERS = ("min_leaf", "min_support")


def leaf_parameter(algorithm: str) -> str | None:
    """The name of `algorithm`'s least-leaf-weight parameter, if it has one."""
    names = {p.name for p in get_solver(algorithm).params}
    return next((name for name in LEAF_PARAMETERS if name in names), None)


@dataclass(frozen=True)
class Candidate:
    """One setting tried: a depth and, where the algorithm has one, a least leaf."""

    depth: int
    min_leaf: float | None = None

    def params(self, algorithm: str, base: dict[str, Any]) -> dict[str, Any]:
        params = {**base, "depth": self.depth}
        if self.min_leaf is not None:
            params[leaf_parameter(algorithm)] = self.min_leaf
        return params

    def label(self) -> str:
        leaf = "" if self.min_leaf is None else f", min leaf {self.min_leaf:g}"
        return f"depth {self.depth}{leaf}"


def candidates(algorithm: str, depths: Sequence[int] = DEPTHS,
               min_leaves: Sequence[float] | None = None) -> list[Candidate]:
    """Depths × least leaf sizes, cheapest first; `min_leaves` None means the defaults
    for an algorithm with a least-leaf parameter, and none otherwise."""
    solver = get_solver(algorithm)
    depths = sorted({int(d) for d in depths})
    if not depths:
        raise ParameterError("Give at least one depth to try.")
    for depth in depths:
        solver.resolve({"depth": depth})   # out of range: one sentence
    name = leaf_parameter(algorithm)
    if name is None:
        if min_leaves is not None and any(float(m) != 1 for m in min_leaves):
            raise ParameterError(f"'{algorithm}' has no minimum leaf size to tune: "
                                 "leave it out, or tune greedy or dl85.")
        return [Candidate(d) for d in depths]
    leaves = sorted({float(m) for m in (MIN_LEAVES if min_leaves is None else min_leaves)})
    if not leaves:
        raise ParameterError("Give at least one minimum leaf size to try.")
    for leaf in leaves:
        solver.resolve({name: int(leaf) if leaf == int(leaf) else leaf})
    return [Candidate(d, m) for d in depths for m in leaves]


@dataclass
class Scored:
    """A candidate's validation accuracies and leaf counts, one per fold."""

    candidate: Candidate
    accuracies: list[float] = field(default_factory=list)
    leaves: list[int] = field(default_factory=list)
    folds: int = 0                 # folds planned
    note: str = ""                 # why it was not scored on every fold
    at_limit: int = 0              # folds whose search the time limit stopped

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
        return {"depth": self.candidate.depth, "min_leaf": self.candidate.min_leaf,
                "mean_accuracy": self.mean, "standard_error": self.standard_error,
                "mean_leaves": self.mean_leaves, "accuracies": list(self.accuracies),
                "leaves": list(self.leaves), "complete": self.complete,
                "folds_at_time_limit": self.at_limit, "note": self.note}


def choose(scored: Sequence[Scored]) -> tuple[int, int]:
    """(best, chosen): the index of the best mean validation accuracy, and of the
    simplest candidate within one standard error of it (fewest mean leaves, then the
    smaller depth, then the larger least leaf, then the higher mean)."""
    ready = [i for i, s in enumerate(scored) if s.complete]
    if not ready:
        raise DataError("No setting was cross-validated on every fold: raise the time "
                        "limit, or try fewer depths.")
    best = max(ready, key=lambda i: (scored[i].mean, -scored[i].mean_leaves))
    bar = scored[best].mean - scored[best].standard_error
    within = [i for i in ready if scored[i].mean >= bar - 1e-12]

    def simplicity(i: int):
        c = scored[i]
        return (c.mean_leaves, c.candidate.depth, -(c.candidate.min_leaf or 0), -c.mean)
    return best, min(within, key=simplicity)


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

    def to_dict(self) -> dict:
        return {"algorithm": self.algorithm, "plan": self.plan.to_dict(),
                "candidates": [s.to_dict() for s in self.scored], "best": self.best,
                "chosen": self.chosen, "rule": "one standard error",
                "chosen_params": {k: v for k, v in self.params.items()
                                  if k in ("depth", *LEAF_PARAMETERS)}}

    def table(self) -> list[str]:
        """One line per candidate, the best and the chosen marked."""
        lines = [f"{self.plan.describe()} of {self.algorithm}, one-standard-error rule:"]
        for i, s in enumerate(self.scored):
            mark = ("chosen" if i == self.chosen else "") + \
                   (" best" if i == self.best else "")
            if s.complete:
                text = (f"{100 * s.mean:5.1f}% ± {100 * s.standard_error:.1f}, "
                        f"{s.mean_leaves:.1f} leaves")
            else:
                text = s.note or "not scored"
            lines.append(f"  {s.candidate.label():24s} {text}"
                         + (f"  <- {mark.strip()}" if mark else ""))
        return lines


class Tuner:
    """One tuning run (see the module docstring); `cancel()` from any thread."""

    def __init__(self, raw: RawTable, options: PrepOptions, algorithm: str,
                 grid: Sequence[Candidate], params: dict[str, Any] | None = None,
                 plan: Plan = Plan(), time_limit: float | None = None):
        plan.check()
        if time_limit is not None and not time_limit > 0:
            raise ParameterError("The time limit must be a positive number of seconds.")
        self.raw, self.options, self.algorithm = raw, options, algorithm
        self.grid, self.params = list(grid), dict(params or {})
        self.plan, self.time_limit = plan, time_limit
        self._lock = threading.Lock()
        self._cancelled = False
        self._current: CrossValidation | Monitor | None = None

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
        reading the file too); the final fit runs on it, so its live trees and stages
        go where it says."""
        own = clock is None
        clock = Monitor(self.time_limit) if own else clock
        try:
            return self._run(clock, on_candidate, refit)
        finally:
            if own:
                clock.finish()

    def _run(self, clock: Monitor, on_candidate, refit: bool) -> Tuning:
        scored = []
        n = len(self.grid)
        for i, candidate in enumerate(self.grid):
            score = Scored(candidate, folds=self.plan.k if self.plan.method == "kfold"
                           else 1)
            scored.append(score)
            left = clock.remaining()
            # an equal share of what is left (the last share is the final fit's), but
            # never so little that a fold's preparation cannot fit in it
            share = None if left is None else \
                max(left / (n - i + 1), min(MIN_SHARE, left / 2))
            if self._cancelled or clock.stop_status() == Status.CANCELLED:
                score.note = "not scored: stopped"
            elif share is not None and share < 0.05:
                score.note = "not scored: the time limit ran out"
            else:
                self._score(score, share)
            if on_candidate is not None:
                on_candidate(score, i, n)
        if self._cancelled or clock.stop_status() == Status.CANCELLED:
            raise Interrupted("Tuning was stopped.", Status.CANCELLED.value)
        best, chosen = choose(scored)
        candidate = self.grid[chosen]
        params = candidate.params(self.algorithm, self.params)
        options = replace(self.options, depth=candidate.depth)
        data = result = None
        if refit:
            self._running(clock)
            data = prepare(self.raw, options, progress=clock.checkpoint)
            result = train(data, self.algorithm, params, monitor=clock)
            self._running(None)
        return Tuning(self.algorithm, self.plan, scored, best, chosen, result, data,
                      options, params)

    def _score(self, score: Scored, limit: float | None) -> None:
        candidate = score.candidate
        validation = CrossValidation(
            self.raw, replace(self.options, depth=candidate.depth), self.algorithm,
            candidate.params(self.algorithm, self.params), self.plan)
        self._running(validation)
        evaluation: Evaluation = validation.run(clock=Monitor(limit))
        self._running(None)
        score.accuracies = evaluation.test_accuracies
        score.leaves = [f.n_leaves for f in evaluation.folds]
        score.at_limit = sum(f.status == Status.TIME_LIMIT for f in evaluation.folds)
        if validation.cancelled:
            score.note = "not scored: stopped"
        elif not evaluation.complete:
            score.note = (f"not scored: its share of the time limit ({limit:.2g} s) ran "
                          "out before every fold finished")


def tune(raw: RawTable, options: PrepOptions, algorithm: str,
         grid: Sequence[Candidate] | None = None, params: dict[str, Any] | None = None,
         plan: Plan = Plan(), time_limit: float | None = None,
         on_candidate: Callable[[Scored, int, int], None] | None = None) -> Tuning:
    """`Tuner(...).run(on_candidate)` with the default grid when `grid` is None."""
    grid = candidates(algorithm) if grid is None else grid
    return Tuner(raw, options, algorithm, grid, params, plan, time_limit).run(on_candidate)
