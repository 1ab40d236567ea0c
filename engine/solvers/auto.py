"""`auto`: ConTree on the raw numbers when it will be quick, else Blossom on guided
thresholds, and a sentence saying which and why.

ConTree finds the optimal tree over *every* threshold of numeric columns, so nothing
beats it, but its time grows steeply with depth and data: at depth 3 it ranges from
0.03 s to over two minutes on tables of at most 21,000 rows.  Its time was measured
on the 14 ConTree sets (benchmarks/RESULTS.md, "ConTree vs pycontree") and fitted by
least squares as

    log t = a + b log n + c log F + d log U

with n rows, F continuous features and U the mean number of distinct values per
feature (`COST`; typical error a factor 3.4 at depth 3, 1.9 at depth 2).  `auto`
picks ConTree when that prediction fits the time limit (`BUDGET` seconds without
one).  It once allowed three times the limit, since a ConTree proof is the best answer
there is; but a ConTree run stopped by the limit had a worse tree than Blossom's on
guided thresholds gets in a fraction of it (a 20,000-row table of 8 numbers at depth
3, predicted 27 s: ConTree 3,895 errors after 5 s, Blossom 3,572 in 0.5 s), and the
window then said ConTree "should prove" the tree in more time than it had.  Otherwise, and always beyond depth 3 or when every feature is already
0/1, it runs Blossom, on the greedy tree's thresholds plus quantiles when the features
are continuous, so the tree is never worse than greedy's either.

With a least leaf size (`min_leaf` > 1) it runs Blossom with it on the same binary
route: ConTree's similarity rules assume that moving rows between two leaves changes
the error by at most their weight, which a least leaf size breaks, so ConTree then
tries every split point (bank at depth 3 with 5 rows a leaf: minutes instead of
0.1 s), while Blossom loses only its similarity bound (on three CP4IM sets at depth 4
with 5 or 20 rows a leaf, as fast as DL8.5 or faster: anneal 0.17 s against 0.64 s);
the greedy tree it starts from is grown with the same least leaf, so it is still
never worse than greedy's.

A cost per leaf (`leaf_cost`) goes to whichever of the two runs (each minimises the
error + that cost per leaf exactly), and the greedy tree it starts from is pruned for
the same cost.

Beyond depth `EXACT_DEPTH_LIMIT` (6, where `tune`'s depths stop too) it runs `hybrid`:
the top 3 levels searched exactly (by this same choice), the levels below grown
greedily.  An exact search's work is multiplied by about the number of tests at each
level (Blossom took 1.7 s at depth 3 and 13 s at depth 4 on segment's 2,310 rows × 18
numbers), so at the depths a tuned CART reaches (10 or more) none would end.  The
hybrid's own sentence (which levels are certified) follows auto's reason.
"""

from __future__ import annotations

import math

import numpy as np

from engine.data.dataset import Dataset, counted
from engine.data.features import format_number
from engine.featurize import binarized
from engine.solvers.protocol import DEPTH, LEAF_COST, Param, Result, Solver
from engine.solvers.registry import get_solver, register
from engine.vocabulary import CLASSIFICATION, REGRESSION
from engine.solvers.warm_start import warm_started

# depth -> (a, b, c, d) of the fitted cost model (module docstring).
COST = {1: (-15.70, 0.676, 1.918, 0.370), 2: (-15.70, 0.676, 1.918, 0.370),
        3: (-21.64, 0.994, 3.320, 0.974)}
EXACT_DEPTH_LIMIT = 6   # deeper: `hybrid` (module docstring)
BUDGET = 10.0     # seconds ConTree may take when the run has no time limit
BINARY_ROUTE = "guided"


def contree_seconds(data: Dataset, depth: int) -> float:
    """Predicted ConTree time on `data` at `depth` (1 to 3)."""
    continuous = [j for j, f in enumerate(data.features) if not f.binary]
    if not continuous:
        return 0.0
    distinct = np.mean([len(np.unique(data.X[:, j])) for j in continuous])
    a, b, c, d = COST[max(depth, 1)]
    return math.exp(a + b * math.log(max(data.n_rows, 1)) + c * math.log(len(continuous))
                    + d * math.log(max(distinct, 1.0)))


def seconds_text(seconds: float) -> str:
    """A predicted time as the reason reads it: "under 0.01 s" when too short to
    matter, else "about 0.35 s" or "about 1,200 s" (never "2.2e-07 s")."""
    if seconds < 0.01:
        return "under 0.01 s"
    return f"about {seconds:.2g} s" if seconds < 100 else f"about {seconds:,.0f} s"


def choose(data: Dataset, depth: int, time_limit: float | None,
           min_leaf: int = 1) -> tuple[str, str]:
    """(algorithm, reason in one sentence) for `data` at `depth`."""
    if data.regression:
        return _regression(data, depth)
    if depth > EXACT_DEPTH_LIMIT:
        return "hybrid", (f"an exact search beyond depth {EXACT_DEPTH_LIMIT} would not end "
                          "in reasonable time, so the hybrid runs (never worse than "
                          "greedy)")
    if min_leaf > 1:
        return "blossom", (f"with at least {counted(min_leaf, 'row')} in every leaf, "
                           "Blossom searches (ConTree would have to try every split point "
                           "under a least leaf size), on the greedy tree's thresholds plus "
                           "quantiles when the features are numbers (never worse than "
                           "greedy with the same least leaf)")
    if data.is_binary:
        return "blossom", ("every feature is 0/1, where Blossom finds a first tree at "
                           "once and proves optimality fastest")
    if depth > max(COST):
        return "blossom", (f"ConTree beyond depth {max(COST)} takes too long, so Blossom "
                           "runs on the greedy tree's thresholds plus quantiles (never "
                           "worse than greedy)")
    budget = BUDGET if time_limit is None else time_limit
    predicted = contree_seconds(data, depth)
    # (a routed column is two continuous features: count columns, as the user sees them)
    numeric = len({f.column for f in data.features if not f.binary})
    size = f"{counted(data.n_rows, 'row')} × {counted(numeric, 'numeric column')}"
    if predicted <= budget:
        return "contree", (f"ConTree searches every threshold of the numbers and should "
                           f"prove the optimal tree on {size} in {seconds_text(predicted)}")
    return "blossom", (f"ConTree would need {seconds_text(predicted)} on {size}, far more "
                       f"than the {format_number(budget)} s available, so Blossom runs on "
                       "the greedy tree's thresholds plus quantiles (never worse than "
                       "greedy)")


def _regression(data: Dataset, depth: int) -> tuple[str, str]:
    """`choose` for a regression: up to depth 2, ConTree's regression search over every
    threshold of the numbers (its depth-two solver: 100,000 rows x 10 columns in about
    half a second); deeper, DL8.5, the exact search of least squared error on 0/1 tests,
    on the greedy regression tree's thresholds plus quantiles when the features are
    numbers (so never worse than greedy; ConTree's deeper search, without the similarity
    bounds squared errors lack, took 8-16 s at depth 4 on 1,000 rows x 4); beyond
    `EXACT_DEPTH_LIMIT` the greedy tree (no hybrid grows regression trees yet)."""
    if depth > EXACT_DEPTH_LIMIT:
        return "greedy", (f"an exact search beyond depth {EXACT_DEPTH_LIMIT} would not end "
                          "in reasonable time, so the greedy (CART) regression tree is "
                          "grown, not proven optimal")
    if data.is_binary:
        return "dl85", ("every feature is 0/1, where DL8.5 finds the regression tree of "
                        "least squared error (starting from the greedy tree)")
    if depth <= 2:
        return "contree", ("ConTree's regression search tries every threshold of the "
                           "numbers and proves the tree of least squared error at this "
                           "depth quickly")
    return "dl85", ("DL8.5 finds the regression tree of least squared error on the greedy "
                    "tree's thresholds plus quantiles (never worse than greedy)")


@register
class Auto(Solver):
    name = "auto"
    title = "Automatic"
    summary = ("Picks for you: ConTree on numeric data when it will be quick, else "
               "Blossom on the greedy tree's thresholds, beyond depth 6 the hybrid (an "
               "exact top, greedy below); says which and why.")
    needs = "any"
    proves_optimality = True
    tasks = (CLASSIFICATION, REGRESSION)
    params = (DEPTH,
              Param("min_leaf", "int", 1,
                    "Least rows (total weight) in every leaf; above 1 Blossom searches "
                    "(ConTree would have to try every split point).", 1, None),
              LEAF_COST)
    # The solvers it may run: their kernels are its own (`compile_ahead`).
    delegates = ("blossom", "contree", "dl85")

    @classmethod
    def kernels(cls) -> tuple:
        return tuple(k for name in cls.delegates for k in get_solver(name).kernels())

    def solve(self, data, params, monitor) -> Result:
        depth = params["depth"]
        min_leaf = int(params["min_leaf"])
        name, reason = choose(data, depth, monitor.time_limit, min_leaf)
        solver = get_solver(name)
        resolved = solver.resolve({"depth": depth, "leaf_cost": params["leaf_cost"],
                                   **({"min_leaf": min_leaf} if min_leaf > 1 else {})})
        monitor.checkpoint(f"starting {solver.title}")
        if solver.needs == "binary" and not data.is_binary:
            # The greedy tree on the numbers first: the answer if time runs out while
            # the 0/1 tests are built, and the tree whose thresholds they keep.
            def tests(numbers, greedy):
                tested = binarized(numbers, BINARY_ROUTE, depth, monitor.checkpoint,
                                   guide=greedy.tree)
                monitor.checkpoint(f"starting {solver.title}")
                return tested
            result = warm_started(solver(), data, resolved, monitor, reshape=tests)
        elif solver.warm_start(resolved):
            result = warm_started(solver(), data, resolved, monitor)
        else:
            result = solver().solve(data, resolved, monitor)
        if "reason" in result.stats:   # the hybrid's: which levels are certified
            reason = f"{reason}: {result.stats['reason']}"
        result.stats.update({"chosen_algorithm": name, "reason": reason})
        return result
