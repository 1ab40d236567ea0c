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

A quick search (`searched_first`: depth 2 or less on a small or mid table) comes
first and the greedy tree is grown only if the search ends without proving its
optimum: there the search usually proves it within a second, and growing the greedy
tree first was a fifth of a small fit (1.2 of 7 ms on the ConTree set bank at depth 2)
and 5-25% of a mid one at depth 2 (bidding, magic, page, room).  The live curve loses
nothing that matters at that length, and the guarantee stays: a stopped search still
ends on the greedy tree where it is better, grown just after the limit (milliseconds
at these sizes).  Deeper, the greedy tree always comes first, however small the
table: a deeper search may run for minutes, and one that publishes its trees only at
its end (ConTree on several threads) showed nothing until then (issue 49: 2 s, its
whole time limit, on 500 rows x 100 features at depth 4).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from engine.errors import Interrupted
from engine.solvers import compile_ahead
from engine.solvers.greedy import Greedy
from engine.solvers.monitor import Monitor
from engine.solvers.protocol import Result, Solver, error_scale
from engine.solvers.registry import get_solver

# Relative slack when comparing weighted errors summed in different orders.
TOLERANCE = 1e-9

# At depth 2 or less, up to this many cells (rows x features) the greedy tree is grown
# only after a search that did not prove its optimum; and up to QUICK_CELLS_DEPTH_TWO cells
# (the greedy tree then takes milliseconds, so a stopped search overruns its limit by
# little; 300,000 rows x 4 took 0.4 s) and QUICK_WORK_DEPTH_TWO rows x features² (the
# exact searches' work there grows about so: ConTree at depth 2 proved fault's
# 1,941 x 27² in 0.3 s and eeg's 14,980 x 14² in 0.43 s on a 2-core EPYC).
QUICK_CELLS = 50_000
QUICK_CELLS_DEPTH_TWO = 250_000
QUICK_WORK_DEPTH_TWO = 5_000_000


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


def greedy_tree(data, params: dict, monitor) -> Result:
    """The greedy tree of `params["depth"]` under the solver's least leaf and cost per
    leaf, so that it is a tree the solver could return."""
    return Greedy().solve(data, {"depth": params["depth"],
                                 "min_leaf": least_leaf(params),
                                 "leaf_cost": params.get("leaf_cost", 0.0)}, monitor)


def searched_first(data, params: dict) -> bool:
    """Whether the search is sure to be quick enough to go before the greedy tree."""
    rows, features = data.X.shape
    cells = rows * features
    return params["depth"] <= 2 and (cells <= QUICK_CELLS or (
        cells <= QUICK_CELLS_DEPTH_TWO and cells * features <= QUICK_WORK_DEPTH_TWO))


def warm_started(solver: Solver, data, params: dict, monitor,
                 reshape: Callable | None = None) -> Result:
    """`solver.solve` with the greedy tree of `params["depth"]` as its first incumbent.

    `reshape(data, greedy_result)` gives the table the solver searches (`auto`: the
    0/1 tests of continuous data, whose thresholds include the greedy tree's, so the
    solver can match it); the greedy tree stays the answer if the run stops while
    reshaping.  A quick search without `reshape` gets the greedy tree last (see the
    module docstring)."""
    if reshape is None and searched_first(data, params):
        return _greedy_last(solver, data, params, monitor)
    reference = greedy_tree(data, params, monitor)
    monitor.floor = reference.objective   # the solver's trees must beat it to show
    try:
        searched = data if reshape is None else reshape(data, reference)
        compile_ahead.wait(monitor, solver.name)   # its kernels, compiled meanwhile
        result = solver.solve(searched, params, monitor)
    except Interrupted:   # stopped while setting up: the greedy tree is the best there is
        return _kept(_stopped(reference, monitor), reference, monitor)
    return _not_worse(solver, data, result, reference, monitor)


def _greedy_last(solver: Solver, data, params: dict, monitor) -> Result:
    """The search first; then, unless it proved its optimum, the greedy tree (grown
    off the run's clock, a stopped run having no time left for it) where it is better."""
    try:
        compile_ahead.wait(monitor, solver.name)
        result = solver.solve(data, params, monitor)
    except Interrupted:
        result = None
    if result is not None and result.optimal:
        return _on_curve(result, monitor)
    reference = greedy_tree(data, params, Monitor())
    if result is None:
        monitor.publish(reference.tree, reference.objective, 0.0)
        return _kept(_stopped(reference, monitor), reference, monitor)
    if reference.objective < result.objective - slack(data):
        monitor.publish(reference.tree, reference.objective, result.lower_bound)
    return _on_curve(_not_worse(solver, data, result, reference, monitor), monitor)


def _on_curve(result: Result, monitor) -> Result:
    """`result` with its tree as the curve's last point (a search publishes only the
    trees that improve on its start, so an optimal leaf or first tree may be absent)."""
    if result.incumbents and result.incumbents[-1][1] <= result.objective:
        return result
    monitor.publish(result.tree, result.objective, result.lower_bound)
    return replace(result, incumbents=list(monitor.incumbents))


def slack(data) -> float:
    """How much smaller an objective must be to count as smaller: a share of the
    largest error a tree can have (sums of weights; a regression's root squared error,
    whose leaf means two searches round differently in the last bits)."""
    return TOLERANCE * max(error_scale(data), 1.0)


def _stopped(reference: Result, monitor) -> Result:
    """The greedy result of a run stopped before its search gave a tree."""
    return replace(reference, status=monitor.final_status(False), stats={})


def _kept(result: Result, reference: Result, monitor) -> Result:
    """`result` with the greedy tree as its answer, and the run's curve."""
    return replace(result, tree=reference.tree, train_error=reference.train_error,
                   lower_bound=min(result.lower_bound, reference.objective),
                   incumbents=list(monitor.incumbents),
                   stats={**result.stats, "warm_start_error": reference.train_error,
                          "kept_warm_start": True})


def _not_worse(solver: Solver, data, result: Result, reference: Result,
               monitor) -> Result:
    """`result`, or the greedy tree where that is better (a bug if `result` is proven)."""
    stats = {**result.stats, "warm_start_error": reference.train_error}
    if result.objective <= reference.objective + slack(data):
        return replace(result, stats=stats)
    if result.optimal:
        raise RuntimeError(
            f"'{solver.name}' proved an objective of {result.objective:g}, above the "
            f"greedy tree's {reference.objective:g} on the same features: this is a bug.")
    return _kept(replace(result, stats=stats), reference, monitor)
