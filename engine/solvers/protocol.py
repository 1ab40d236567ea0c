"""The contract between Orchard and its algorithms.

Each solver is a class with a stable `name`, a one-line `summary`, what data it
`needs`, whether it proves optimality, and a declarative parameter schema.  The GUI
builds its form and the CLI parses `--param KEY=VALUE` from that one schema.
`solve(data, params, monitor)` returns a `Result`; progress goes through the Monitor.
"""

from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar

import numpy as np

from engine.errors import ParameterError
from engine.vocabulary import CLASSIFICATION


class Status(str, Enum):
    OPTIMAL = "optimal"            # proven optimal
    FINISHED = "finished"          # a heuristic ran to its end (no optimality claim)
    TIME_LIMIT = "time_limit"
    CANCELLED = "cancelled"
    MEMORY_LIMIT = "memory_limit"
    INFEASIBLE = "infeasible"      # e.g. no consistent tree exists


@dataclass(frozen=True)
class Param:
    """One solver parameter: `kind` is int, float, bool, choice or text (free text).

    Numbers are checked here, once for every solver: NaN and ±inf are refused (no
    parameter gives them a meaning), then the bounds `low`/`high`."""

    name: str
    kind: str
    default: Any
    help: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()

    def parse(self, text: str) -> Any:
        """Value from command-line text (then validated)."""
        text = str(text).strip()
        try:
            if self.kind == "int":
                value = int(text)
            elif self.kind == "float":
                value = float(text)
            elif self.kind == "bool":
                if text.lower() not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                    raise ValueError
                value = text.lower() in ("1", "true", "yes", "on")
            else:
                value = text
        except ValueError:
            raise ParameterError(f"Parameter '{self.name}' expects a {self.kind} value, "
                                 f"not '{text}'.") from None
        return self.validate(value)

    def validate(self, value: Any) -> Any:
        if self.kind == "choice" and value not in self.choices:
            raise ParameterError(f"Parameter '{self.name}' must be one of "
                                 f"{', '.join(self.choices)}, not '{value}'.")
        if self.kind == "text" and not isinstance(value, str):
            raise ParameterError(f"Parameter '{self.name}' expects text.")
        # (numpy's numbers too: a value read from a DataFrame, e.g. a tuning's table)
        if self.kind == "int" and (isinstance(value, bool | np.bool_)
                                   or not isinstance(value, numbers.Integral)):
            raise ParameterError(f"Parameter '{self.name}' expects an integer.")
        if self.kind == "float" and (isinstance(value, bool | np.bool_)
                                     or not isinstance(value, numbers.Real)):
            raise ParameterError(f"Parameter '{self.name}' expects a number.")
        if isinstance(value, np.generic):   # as Python's own, for JSON and messages
            value = value.item()
        if self.kind == "float" and not math.isfinite(value):
            raise ParameterError(f"Parameter '{self.name}' must be a finite number, "
                                 f"not {value}.")
        if self.kind in ("int", "float"):
            if (self.low is not None and value < self.low) or (
                    self.high is not None and value > self.high):
                raise ParameterError(f"Parameter '{self.name}' must be {self.bounds()}, "
                                     f"not {_number(value)}.")
        return value

    def bounds(self) -> str:
        """The allowed range in words: "between 0 and 1", "at least 1", "at most 20"."""
        low, high = _number(self.low), _number(self.high)
        if self.low is not None and self.high is not None:
            return f"between {low} and {high}"
        return f"at least {low}" if self.low is not None else f"at most {high}"


def _number(value: float | None) -> str:
    """A bound or value as people write it: whole numbers without ".0" (bounds are
    often given as floats, e.g. 1.0 for an int parameter), others as Python does."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)


DEPTH = Param("depth", "int", 3, "Maximum depth of the tree (0 = a single leaf).", 0, 20)

# The cost of a leaf as a share of the training weight W: a solver with this parameter
# minimises error / W + leaf_cost * leaves, i.e. error + leaf_cost * W per leaf (its
# `leaf_penalty`).  Per leaf or per split is the same choice (leaves = splits + 1), so
# this is pycontree's `complexity_cost` and pystreed's `cost_complexity`.
LEAF_COST = Param("leaf_cost", "float", 0.0,
                  "Cost of each leaf as a share of all rows: the search minimises "
                  "errors / rows + leaf_cost x leaves, so a split must classify that "
                  "share of the rows better to be worth it (0.01: 1%); 0: errors alone.",
                  0.0, 1.0)


def leaf_penalty(params: dict[str, Any], total_weight: float) -> float:
    """The weight one leaf costs (`leaf_cost` x the training weight; 0 without one)."""
    return float(params.get("leaf_cost", 0.0)) * float(total_weight)


def error_scale(data) -> float:
    """What `leaf_cost` is a share of: the training weight (the most rows a tree can
    misclassify), or a regression's squared error around its mean (a single leaf's
    error, as pystreed's `cost_complexity` for regression)."""
    w = np.asarray(data.w, dtype=np.float64)
    if not data.regression:
        return float(w.sum())
    mean = float(w @ data.y) / max(float(w.sum()), 1e-300)
    return float(w @ (data.y - mean) ** 2)


@dataclass
class Result:
    """A solver's answer.  With a cost per leaf (`leaf_penalty` > 0) the search
    minimises the `objective`, error + leaf_penalty x leaves: `lower_bound`, the
    incumbents' values and `optimal` are about that objective, `train_error` stays the
    tree's misclassified weight."""

    tree: Any                      # engine.model.tree.Tree (or a Diagram)
    train_error: float             # total weight of misclassified training rows
    lower_bound: float             # proven lower bound on the optimal objective
    optimal: bool
    status: Status
    time_s: float
    incumbents: list[tuple[float, float, float]] = field(default_factory=list)  # (t, objective, lb)
    stats: dict = field(default_factory=dict)
    leaf_penalty: float = 0.0      # weight each leaf costs (0: the objective is the error)

    @property
    def objective(self) -> float:
        """What the search minimised: the error plus the leaves' cost."""
        if not self.leaf_penalty:
            return self.train_error
        return self.train_error + self.leaf_penalty * self.tree.n_leaves


class Solver(ABC):
    name: ClassVar[str]
    title: ClassVar[str]
    summary: ClassVar[str]          # one line for the algorithm picker
    needs: ClassVar[str] = "any"    # "binary": only 0/1 features; "any": also continuous
    proves_optimality: ClassVar[bool] = False
    # Binarisation to use when the user chooses none (None: `training.default_binarization`'s
    # general rule).  Exact consistent-tree solvers want every threshold (`midpoints`):
    # coarser cuts merge rows of different classes.
    binarization: ClassVar[str | None] = None
    # True when the solver only accepts data some tree classifies without error: rows
    # with identical features and different classes must be dropped first.
    consistent_only: ClassVar[bool] = False
    # What the solver's trees predict: classes, and numbers too for a solver that also
    # minimises squared error (a regression target; `error_scale`).
    tasks: ClassVar[tuple[str, ...]] = (CLASSIFICATION,)
    params: ClassVar[tuple[Param, ...]] = (DEPTH,)
    # Other names a parameter answers to: the one word every tree solver takes for the
    # same thing (DL8.5's `min_support` is everyone's `min_leaf`).
    aliases: ClassVar[dict[str, str]] = {}

    @classmethod
    def kernels(cls) -> tuple:
        """The solver's own numba kernels (their entry points): a first run compiles
        them when numba's disk cache lacks them, which `engine.solvers.compile_ahead`
        does in a process of its own meanwhile.  Solvers without kernels: ()."""
        return ()

    @classmethod
    def warm_start(cls, params: dict[str, Any]) -> bool:
        """Whether the greedy tree of the same depth is a tree this solver could return
        with `params` (`engine.solvers.warm_start` then makes it the first incumbent,
        so the result is never worse).  Anytime tree solvers say yes."""
        return False

    @classmethod
    def param(cls, name: str) -> Param:
        name = cls.aliases.get(name, name)
        for p in cls.params:
            if p.name == name:
                return p
        raise ParameterError(f"Algorithm '{cls.name}' has no parameter '{name}' "
                             f"(it has: {', '.join(p.name for p in cls.params)}).")

    @classmethod
    def resolve(cls, given: dict[str, Any]) -> dict[str, Any]:
        """All parameters: defaults overridden by validated `given` values."""
        values = {p.name: p.default for p in cls.params}
        for name, value in given.items():
            p = cls.param(name)
            values[p.name] = p.parse(value) if isinstance(value, str) else p.validate(value)
        return values

    @abstractmethod
    def solve(self, data, params: dict[str, Any], monitor) -> Result:
        """Train on `data` (engine.data.Dataset) with resolved `params`."""
