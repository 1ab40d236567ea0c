"""What a sweep is: datasets × algorithms × parameter grid × depths × seeds × splits.

A sweep is written once, as a JSON or TOML file or a dict, and checked completely
before any fit starts: a typo found after an hour of fitting wastes the hour.  Every
problem is one sentence (`ParameterError`, or `DataError` for a missing dataset).

    {"datasets": ["a.csv", "b.csv"], "target": "last",
     "algorithms": ["greedy", "blossom"], "depth": [2, 3],
     "folds": 3, "time_limit": 10, "seed": 0}

Keys: `datasets` (paths relative to the spec's folder), `algorithms`, and optionally
`target` (as `orchard fit --target`), `depth` (one or a list; default: each
solver's default), `folds` (k-fold, default 5) or `holdout` (share of rows held out,
instead of folds), `time_limit` (seconds per fit), `seed` (one or a list: the split's
seed, also given to solvers that take a `seed` parameter unless the grid sets one),
`binarize` (default: each algorithm's own), `missing` (drop | impute | indicator),
`task` (auto | classification | regression, as `orchard fit --task`; a regression's
rows hold its R², RMSE and MAE instead of accuracies) and `params` (per algorithm,
each parameter a value or a list of values to try, e.g.
`{"blossom": {"preprocess": [true, false]}}`).
"""

from __future__ import annotations

import itertools
import json
import math
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engine.data.dataset import PrepOptions
from engine.data.preprocessing import Binarization
from engine.errors import DataError, ParameterError
from engine.evaluation import Plan
from engine.experiments.tasks import Task
from engine.solvers import get_solver
from engine.training import default_binarization
from engine.data.task import AUTO
from engine.vocabulary import MISSING_POLICIES, TASKS

KEYS = ("datasets", "target", "algorithms", "depth", "folds", "holdout", "time_limit",
        "seed", "binarize", "missing", "task", "params")


@dataclass(frozen=True)
class Sweep:
    """A checked sweep; `tasks()` lists its fits in a fixed order."""

    datasets: tuple[str, ...]              # as the spec names them (the rows' labels)
    root: Path                             # the folder relative names resolve against
    algorithms: tuple[str, ...]
    depths: tuple[int | None, ...]         # None: the solver's default depth
    plan: Plan                             # method and folds; the seed comes from seeds
    seeds: tuple[int, ...]
    time_limit: float | None = None
    target: str | int | None = None
    missing: str = "route"
    task: str = AUTO                       # what the trees predict (`--task`)
    binarize: str | None = None            # None: each algorithm's default
    grids: dict[str, tuple[dict[str, Any], ...]] = field(default_factory=dict)

    @property
    def n_splits(self) -> int:
        return 1 if self.plan.method == "holdout" else self.plan.k

    def tasks(self) -> list[Task]:
        tasks = []
        for dataset in self.datasets:
            path = str((self.root / dataset).resolve())
            for algorithm in self.algorithms:
                solver = get_solver(algorithm)
                seeded = any(p.name == "seed" for p in solver.params)
                options = PrepOptions(target=self.target, missing=self.missing,
                                      task=self.task,
                                      binarize=self.binarize
                                      or default_binarization(algorithm))
                for grid_point, depth, seed in itertools.product(
                        self.grids.get(algorithm, ({},)), self.depths, self.seeds):
                    params = dict(grid_point)
                    if seeded:
                        params.setdefault("seed", seed)
                    if depth is None:
                        depth = solver.resolve(params)["depth"]
                    fit_options = replace(options, depth=depth)   # for guided thresholds
                    plan = Plan(self.plan.method, self.plan.k, self.plan.test_size, seed)
                    for fold in range(self.n_splits):
                        tasks.append(Task(dataset, path, algorithm, int(depth),
                                          json.dumps(params, sort_keys=True), fold,
                                          plan, fit_options, self.time_limit))
        return tasks


def load_spec(path: str | Path) -> Sweep:
    """The sweep in a .json or .toml file; relative dataset paths start at its folder."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(f"The sweep spec '{path}' does not exist.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"The sweep spec '{path}' cannot be read ({exc}).") from None
    try:
        spec = tomllib.loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParameterError(f"The sweep spec '{path}' is not valid JSON (line "
                             f"{exc.lineno}, column {exc.colno}: {exc.msg}).") from None
    except tomllib.TOMLDecodeError as exc:
        raise ParameterError(f"The sweep spec '{path}' is not valid TOML "
                             f"({exc}).") from None
    return sweep_from_dict(spec, path.parent)


def sweep_from_dict(spec: dict, root: str | Path = ".") -> Sweep:
    """Check `spec` (see the module doc) and build the Sweep."""
    if not isinstance(spec, dict):
        raise ParameterError("A sweep spec must be an object of keys such as "
                             "\"datasets\" and \"algorithms\".")
    unknown = sorted(set(spec) - set(KEYS))
    if unknown:
        raise ParameterError(f"Unknown key '{unknown[0]}' in the sweep spec (known: "
                             f"{', '.join(KEYS)}).")
    root = Path(root)
    datasets = _strings(spec, "datasets")
    for name in datasets:
        if not (root / name).exists():
            raise DataError(f"Dataset '{name}' of the sweep does not exist (looked for "
                            f"{(root / name).resolve()}).")
    algorithms = _strings(spec, "algorithms")
    for name in algorithms:
        get_solver(name)
    depths = tuple(_ints(spec, "depth", low=1)) if "depth" in spec else (None,)
    seeds = tuple(_ints(spec, "seed", low=0)) if "seed" in spec else (0,)
    sweep = Sweep(tuple(datasets), root, tuple(algorithms), depths, _plan(spec), seeds,
                  time_limit=_time_limit(spec), target=_target(spec),
                  missing=_choice(spec, "missing", MISSING_POLICIES, "route"),
                  task=_choice(spec, "task", (AUTO, *TASKS), AUTO),
                  binarize=_binarize(spec), grids=_grids(spec, algorithms))
    for algorithm in algorithms:               # every combination must be accepted
        for point, depth in itertools.product(sweep.grids.get(algorithm, ({},)), depths):
            get_solver(algorithm).resolve(point if depth is None
                                          else {**point, "depth": depth})
    return sweep


# ------------------------------------------------------------------ key checks
def _listed(value: Any) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _strings(spec: dict, key: str) -> list[str]:
    if key not in spec:
        raise ParameterError(f"The sweep spec needs \"{key}\": a list of names.")
    values = _listed(spec[key])
    if not values or not all(isinstance(v, str) and v.strip() for v in values):
        raise ParameterError(f"\"{key}\" in the sweep spec must be a non-empty list of "
                             "names.")
    if len(set(values)) < len(values):
        raise ParameterError(f"\"{key}\" in the sweep spec names something twice.")
    return values


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _ints(spec: dict, key: str, low: int) -> list[int]:
    values = _listed(spec[key])
    if not values or not all(_is_int(v) and v >= low for v in values):
        raise ParameterError(f"\"{key}\" in the sweep spec must be a whole number of at "
                             f"least {low}, or a list of them.")
    return sorted(set(values), key=values.index)


def _plan(spec: dict) -> Plan:
    if "folds" in spec and "holdout" in spec:
        raise ParameterError("The sweep spec gives both \"folds\" and \"holdout\": "
                             "choose one.")
    if "holdout" in spec:
        share = spec["holdout"]
        if not _is_number(share) or not 0 < share < 1:
            raise ParameterError("\"holdout\" in the sweep spec must be the share of rows "
                                 "held out, between 0 and 1 (e.g. 0.25).")
        return Plan("holdout", test_size=float(share))
    folds = spec.get("folds", Plan.k)
    if not _is_int(folds) or not 2 <= folds <= 100:
        raise ParameterError("\"folds\" in the sweep spec must be a whole number from 2 "
                             "to 100.")
    return Plan("kfold", k=folds)


def _time_limit(spec: dict) -> float | None:
    """Seconds per fit.  JSON as Python reads it (and TOML) allows Infinity and NaN,
    which no deadline can use: leave the key out for no limit."""
    value = spec.get("time_limit")
    if value is not None and not (_is_number(value) and 0 < value < math.inf):
        raise ParameterError("\"time_limit\" in the sweep spec must be a positive, "
                             "finite number of seconds (leave it out for no limit).")
    return None if value is None else float(value)


def _target(spec: dict) -> str | int | None:
    value = spec.get("target")
    if value is not None and not (_is_int(value) or isinstance(value, str)):
        raise ParameterError("\"target\" in the sweep spec must be a column name, an "
                             "index, \"first\" or \"last\".")
    return value


def _choice(spec: dict, key: str, choices: Sequence[str], default: str) -> str:
    value = spec.get(key, default)
    if value not in choices:
        raise ParameterError(f"\"{key}\" in the sweep spec must be one of "
                             f"{', '.join(choices)}.")
    return value


def _binarize(spec: dict) -> str | None:
    value = spec.get("binarize")
    if value is None:
        return None
    if not isinstance(value, str):
        raise ParameterError("\"binarize\" in the sweep spec must be none, quantile:K or "
                             "midpoints.")
    return str(Binarization.parse(value))


def _grids(spec: dict, algorithms: list[str]) -> dict[str, tuple[dict[str, Any], ...]]:
    """Per algorithm, every combination of the listed parameter values."""
    given = spec.get("params", {})
    if not isinstance(given, dict) or not all(isinstance(v, dict) for v in given.values()):
        raise ParameterError("\"params\" in the sweep spec must map algorithms to "
                             "{parameter: value or list of values}.")
    grids = {}
    for algorithm, values in given.items():
        if algorithm not in algorithms:
            raise ParameterError(f"\"params\" in the sweep spec names '{algorithm}', which "
                                 "is not among its algorithms.")
        if "depth" in values:
            raise ParameterError("Give depths with the sweep spec's \"depth\" key, not "
                                 "inside \"params\".")
        names = sorted(values)
        options = [_listed(values[name]) for name in names]
        if any(not o for o in options):
            raise ParameterError(f"A parameter of '{algorithm}' in the sweep spec has an "
                                 "empty list of values.")
        grids[algorithm] = tuple(dict(zip(names, combo))
                                 for combo in itertools.product(*options))
    return grids
