"""One entry point to train any registered solver on a prepared dataset.

The CLI and the GUI both come through here, so parameter validation, the check that
a solver gets the kind of data it needs, and the final bookkeeping live in one place.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from engine.data.dataset import Dataset, inconsistent_rows
from engine.errors import DataError, ParameterError
from engine.model.feature_space import on_features
from engine.solvers import compile_ahead, get_solver, solvers_for
from engine.solvers.monitor import Monitor
from engine.solvers.protocol import Result, Status
from engine.solvers.warm_start import warm_started


# Binary-only solvers get the greedy tree's thresholds plus deciles of each numeric
# column unless the user chooses (so their trees are never worse than greedy's).
BINARY_DEFAULT = "guided"

# The time limit of a run nobody gave one: the window's and the notebook's.
DEFAULT_TIME_LIMIT = 60.0


def default_binarization(algorithm: str) -> str:
    """Binarisation to use when the user did not choose one."""
    solver = get_solver(algorithm)
    if solver.binarization is not None:
        return solver.binarization
    return BINARY_DEFAULT if solver.needs == "binary" else "none"


def check_data(algorithm: str, data: Dataset) -> None:
    """Raise a DataError when `algorithm` cannot use `data` as prepared."""
    solver = get_solver(algorithm)
    if solver.needs == "binary" and not data.is_binary:
        raise DataError(f"Algorithm '{algorithm}' needs 0/1 features: choose a "
                        "binarisation (quantile:K or midpoints) for the numeric columns.")
    if data.n_rows == 0:
        raise DataError("There are no rows to train on.")
    if data.prep.task not in solver.tasks:
        able = ", ".join(solvers_for(data.prep.task))
        raise DataError(f"'{algorithm}' grows classification trees only, and the target "
                        f"'{data.prep.target}' holds numbers (a regression): use {able}, "
                        "or ask for classification.")
    if solver.consistent_only:
        contradicting = inconsistent_rows(data)
        if contradicting:
            rows = "1 row has" if contradicting == 1 else f"{contradicting} rows have"
            raise DataError(
                f"{rows} the same features as rows of another class, so no tree "
                f"classifies every row correctly and '{algorithm}' finds none: drop them "
                "with --drop-inconsistent (in the app, tick “Drop rows contradicting "
                "identical rows”).")


def train(data: Dataset, algorithm: str, params: dict[str, Any] | None = None,
          time_limit: float | None = None, monitor: Monitor | None = None,
          on_incumbent: Callable | None = None) -> Result:
    """Train `algorithm` on `data`; `params` may hold text (CLI) or typed values.

    A given `monitor` keeps its clock: it was started when the user pressed Run, so
    its time limit already covers reading and preparing the data.  A stop that comes
    before the solver has a tree raises `Interrupted`.
    """
    solver = get_solver(algorithm)
    resolved = solver.resolve(params or {})
    check_data(algorithm, data)
    if time_limit is not None and not time_limit > 0:
        raise ParameterError("The time limit must be a positive number of seconds.")
    if monitor is None:
        monitor = Monitor(time_limit, on_incumbent)
    monitor.checkpoint("starting the solver")
    monitor.space = data.prep
    try:
        if solver.warm_start(resolved):   # (it waits for compile_ahead after greedy)
            result = warm_started(solver(), data, resolved, monitor)
        else:
            compile_ahead.wait(monitor, algorithm)
            result = solver().solve(data, resolved, monitor)
    finally:
        monitor.finish()
    if monitor.compile_seconds > 0:   # off the clock (see engine.solvers.monitor)
        result.stats["compile_s"] = round(monitor.compile_seconds, 3)
    # The one place a solver's model becomes the program's: on the table's own features.
    result = replace(result, tree=on_features(result.tree, data.prep))
    if solver.proves_optimality and not result.optimal and "message" not in result.stats \
            and result.status in _STOPPED:
        result.stats["message"] = stopped_message(result)
    return result


_STOPPED = {Status.TIME_LIMIT: "The time limit", Status.MEMORY_LIMIT: "The memory limit",
            Status.CANCELLED: "Stop"}


def stopped_message(result: Result) -> str:
    """One sentence for a search stopped before its proof: what is shown, what to try."""
    greedy = (" (no tree better than the greedy one was found, so that is the one kept)"
              if result.stats.get("kept_warm_start") else "")
    if result.leaf_penalty:   # the search's bound is on errors + the leaves' cost
        found = (f"{result.train_error:g} errors ({result.objective:g} with the cost per "
                 "leaf)")
        bound = (f"; no tree can have errors + cost per leaf below {result.lower_bound:g}"
                 if result.lower_bound > 0 else "")
    else:
        found = f"{result.train_error:g} errors"
        bound = (f"; no tree can have fewer than {result.lower_bound:g} errors"
                 if result.lower_bound > 0 else "")
    return (f"{_STOPPED[result.status]} came before the proof: the tree shown is the best "
            f"found, with {found}{greedy}, not proven optimal{bound}. "
            "Give it more time, or a smaller depth.")
