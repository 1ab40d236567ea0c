"""The greedy tree as the first incumbent of every anytime tree solver.

An "optimal" tree that loses to greedy CART destroys trust, and an anytime solver
stopped by its time limit may still hold a worse tree than CART's.  So before such a
solver starts, the greedy tree of the same depth is grown on the same features and
published as the run's first incumbent (the curve starts at CART's error at t ~ 0);
the Monitor then hides the solver's own trees until one beats it, and if the solver
ends on a worse tree, the greedy tree is the result.  With `guided` binarisation the
features hold every threshold of the greedy tree on the raw numeric columns, so the
result is never worse than `orchard fit --algo greedy` either.

The kernels do not use the greedy error as an upper bound for pruning (yet): the
guarantee comes from this wrapper, for every solver whose `warm_start(params)` says the
greedy tree is one it could return.  A solver with a least leaf weight (`min_leaf`,
DL8.5's `min_support`) gets the greedy tree grown under that same least leaf weight;
one with a cost per leaf (`leaf_cost`) gets it pruned for that cost, and the two are
compared on that objective (error + the leaves' cost).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from engine.errors import Interrupted
from engine.solvers import compile_ahead
from engine.solvers.greedy import Greedy
from engine.solvers.protocol import Result, Solver
from engine.solvers.registry import get_solver

# Relative slack when comparing weighted errors summed in different orders.
TOLERANCE = 1e-9


# Each solver's parameter for the least weight in a leaf (DL8.5 calls it a support, as
# its paper does).
LEAF_PARAMETERS = ("min_leaf", "min_support")


def leaf_parameter(algorithm: str) -> str | None:
    """The name of `algorithm`'s least-leaf-weight parameter, if it has one."""
    names = {p.name for p in get_solver(algorithm).params}
    return next((name for name in LEAF_PARAMETERS if name in names), None)


def least_leaf(params: dict) -> float:
    """The least leaf weight a solver's trees must have (its `min_leaf` or DL8.5's
    `min_support`; 1 without one): the greedy tree is grown under the same constraint,
    so it is a tree the solver could return."""
    return float(max(params.get("min_leaf", 1), params.get("min_support", 1), 1))


def warm_started(solver: Solver, data, params: dict, monitor,
                 reshape: Callable | None = None) -> Result:
    """`solver.solve` with the greedy tree of `params["depth"]` as its first incumbent.

    `reshape(data, greedy_result)` gives the table the solver searches (`auto`: the
    0/1 tests of continuous data, whose thresholds include the greedy tree's, so the
    solver can match it); the greedy tree stays the answer if the run stops while
    reshaping."""
    reference = Greedy().solve(data, {"depth": params["depth"],
                                      "min_leaf": least_leaf(params),
                                      "leaf_cost": params.get("leaf_cost", 0.0)}, monitor)
    monitor.floor = reference.objective   # the solver's trees must beat it to show
    try:
        searched = data if reshape is None else reshape(data, reference)
        compile_ahead.wait(monitor, solver.name)   # its kernels, compiled meanwhile
        result = solver.solve(searched, params, monitor)
    except Interrupted:   # stopped while setting up: the greedy tree is the best there is
        return replace(reference, status=monitor.final_status(False),
                       incumbents=list(monitor.incumbents),
                       stats={"warm_start_error": reference.train_error,
                              "kept_warm_start": True})
    slack = TOLERANCE * max(float(data.w.sum()), 1.0)
    stats = {**result.stats, "warm_start_error": reference.train_error}
    if result.objective <= reference.objective + slack:
        return replace(result, stats=stats)
    if result.optimal:
        raise RuntimeError(
            f"'{solver.name}' proved an objective of {result.objective:g}, above the "
            f"greedy tree's {reference.objective:g} on the same features: this is a bug.")
    return replace(result, tree=reference.tree, train_error=reference.train_error,
                   lower_bound=min(result.lower_bound, reference.objective),
                   incumbents=list(monitor.incumbents),
                   stats={**stats, "kept_warm_start": True})
