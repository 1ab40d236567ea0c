"""`hybrid`: deep trees whose top levels are searched exactly and whose levels below
are grown greedily (issue 45).

An exact search's work grows as features^depth, so Orchard's exact searches stop at
depth 6; but on tables such as segment (7 classes) a tuned CART grows 14-16 levels
and 64 leaves, and predicted 1.4 points better than Orchard's tuned trees.  The
published hybrids keep the exact search where it is affordable and matters most, near
the root: SPLIT and LicketySPLIT (ICML 2025) search exactly near the root and greedily
near the leaves, DPDT (KDD 2025) solves a dynamic program over the splits a greedy
heuristic proposes.  This solver is the simplest of the kind, built from what Orchard
has:

1. `auto` at `exact_depth` levels (at most 4: ConTree or Blossom, with the same least
   leaf and cost per leaf) on `EXACT_SHARE` of the time left, on a helper Monitor
   (its shallow trees and their bounds are not the deep tree's); the top is
   *certified* only when that search proved its optimum.  Unlike SPLIT, which
   chooses the top splits by the cost of their greedy completions, the top here is
   the optimal tree of its own depth: cheaper, and what Orchard's searches can
   prove, but blind to what the levels below will add;
2. under each leaf of that tree holding rows of two classes or more, with depth left,
   the greedy tree of the depth left on the rows reaching it (the same least leaf,
   pruned for the same cost per leaf), kept where it lowers the errors plus the
   leaves' cost: the window's re-solve of a node (`editing.solve_under`), then one
   `editing.graft`.  The exact tree is first put on the table's own features
   (`on_features`: `auto` may have searched 0/1 tests of its numeric columns), so the
   greedy subtrees split the same numbers as the greedy tree does;
3. the greedy tree of the whole depth, grown first (the curve's first point), stays
   the answer when the hybrid is not better on the training objective, or when the
   run stops before the hybrid is complete: never worse than greedy on the training
   rows.

Nothing is proven about the whole tree (lower bound 0, status `finished`, or
`time_limit` when the limit cut the exact search short).  `stats["exact_depth"]` is
the depth searched exactly, `stats["certified_depth"]` the depth proven optimal (0
when none), `stats["greedy_kept"]` is True when the answer is the greedy tree (`auto`
replaces `chosen_algorithm` with its own choice, `hybrid`), and `reason` says so in
one sentence.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.data.features import format_count
from engine.errors import Interrupted
from engine.model.feature_space import on_features
from engine.model.tree import Tree
from engine.solvers.auto import Auto
from engine.solvers.protocol import (DEPTH, LEAF_COST, Param, Result, Solver, Status,
                                     leaf_penalty)
from engine.solvers.registry import get_solver, register
from engine.solvers.warm_start import greedy_tree, slack

# The exact search gets this share of the time left after the greedy tree: the rest
# grows the greedy subtrees, about as long as the greedy tree of the whole depth took.
EXACT_SHARE = 0.8
# Each exact level multiplies the search's work by about the number of tests (on
# segment's 2,310 rows: 1.7 s at depth 3, 13 s at depth 4).
MAX_EXACT_DEPTH = 4
# The statuses of an exact search that the time or memory limit stopped before its proof.
CUT_SHORT = {Status.TIME_LIMIT: "time limit", Status.MEMORY_LIMIT: "memory limit"}


@register
class Hybrid(Solver):
    name = "hybrid"
    title = "Hybrid: exact top, greedy below"
    summary = ("Deep trees: the top levels searched exactly (as Automatic chooses), the "
               "levels below grown greedily; never worse than greedy.")
    needs = "any"
    proves_optimality = False
    params = (replace(DEPTH, default=8,
                      help="Maximum depth of the whole tree (0 = a single leaf)."),
              Param("exact_depth", "int", 3,
                    "Levels at the top searched exactly (ConTree or Blossom, as Automatic "
                    "chooses); the levels below are grown greedily.", 1, MAX_EXACT_DEPTH),
              Param("min_leaf", "int", 1,
                    "Least rows (total weight) in every leaf.", 1, None),
              LEAF_COST)
    # The exact top is `auto`'s: its kernels are this solver's (`compile_ahead`).
    delegates = Auto.delegates

    @classmethod
    def kernels(cls) -> tuple:
        return Auto.kernels()

    def solve(self, data, params, monitor) -> Result:
        depth = params["depth"]
        top = min(params["exact_depth"], depth)
        exact_params = Auto.resolve({"depth": top, "min_leaf": params["min_leaf"],
                                     "leaf_cost": params["leaf_cost"]})
        if depth == top:   # nothing below the exact part: `auto`'s tree and proof
            result = Auto().solve(data, exact_params, monitor)
            result.stats.update(exact_depth=top,
                                certified_depth=top if result.optimal else 0)
            return result
        greedy = greedy_tree(data, params, monitor)   # published: the curve's first point
        try:
            monitor.checkpoint(f"searching the top {top} levels exactly")
            with monitor.share(EXACT_SHARE):
                exact = Auto().solve(data, exact_params, monitor.helper())
            tree, grown = grown_below(on_features(exact.tree, data.prep), data, params,
                                      monitor)
        except Interrupted:   # Stop, or the time limit, the run's or the exact share's
            return _stopped(greedy, monitor, depth, top)
        cut = CUT_SHORT.get(exact.status)
        hybrid = Result(tree, tree.error(data.X, data.y, data.w), 0.0, False,
                        exact.status if cut else Status.FINISHED, monitor.elapsed(), [],
                        {"exact_depth": top, "greedy_error": greedy.train_error},
                        leaf_penalty(params, data.w.sum()))
        algorithm = exact.stats["chosen_algorithm"]
        title = get_solver(algorithm).title
        if hybrid.objective > greedy.objective + slack(data):
            return _kept(greedy, monitor, hybrid.status, {**hybrid.stats, "reason": (
                f"the greedy (CART) tree of depth {depth} fits the training rows better "
                f"than the hybrid (top {top} levels by {title}, greedy below): "
                f"{_objective_text(greedy)} against {_objective_text(hybrid)}, so it is "
                "kept")})
        if hybrid.objective < greedy.objective - slack(data):
            monitor.publish(tree, hybrid.objective, 0.0)
        hybrid.incumbents = list(monitor.incumbents)
        if exact.optimal:
            made = f"the optimal depth-{top} tree, proven by {title}"
        else:
            made = (f"the best depth-{top} tree {title} found in its share of the time "
                    "(not proven optimal)")
        if cut:
            hybrid.stats["message"] = (
                f"The {cut} stopped the exact search of the top {top} levels before its "
                "proof: they are the best tree it found, not proven optimal, and the "
                "levels below were grown greedily. Give it more time, or a smaller "
                "exact_depth.")
        hybrid.stats.update(
            chosen_algorithm=algorithm, certified_depth=top if exact.optimal else 0,
            reason=(f"the top {top} levels are {made}; greedy (CART) subtrees were grown "
                    f"under {grown} of its {exact.tree.n_leaves} leaves on their rows, to "
                    f"depth {depth}"))
        return hybrid


def grown_below(top: Tree, data, params: dict, monitor) -> tuple[Tree, int]:
    """`top` (on `data`'s features) with the greedy tree of the depth left under each
    leaf that holds rows of two classes or more, where it lowers the errors plus the
    leaves' cost, and how many leaves got one.  A checkpoint before each leaf obeys
    Stop and the time limit (`Interrupted`)."""
    from engine import editing   # (it trains through engine.training, which imports
    #                               every solver: loaded when first needed)
    depths = top.node_depths()
    leaves = [int(k) for k in np.flatnonzero(top.feature < 0)
              if depths[k] < params["depth"] and np.count_nonzero(top.value[k]) > 1]
    helper, grown = monitor.helper(), {}
    for i, leaf in enumerate(leaves):
        monitor.checkpoint("growing the levels below greedily", i / len(leaves))
        found = editing.solve_under(top, data, leaf, params["depth"] - int(depths[leaf]),
                                    helper, "greedy", params)
        if found.subtree is not None:
            grown[leaf] = found.subtree
    return editing.graft(top, grown), len(grown)


def _objective_text(result: Result) -> str:
    """"64 errors", or "64 errors + 12 for 40 leaves" with a cost per leaf."""
    errors = f"{format_count(result.train_error)} errors"
    if not result.leaf_penalty:
        return errors
    return (f"{errors} + {format_count(result.leaf_penalty * result.tree.n_leaves)} for "
            f"{result.tree.n_leaves} leaves")


def _kept(greedy: Result, monitor, status: Status, stats: dict) -> Result:
    """The greedy tree as the answer, with the run's curve and `stats` (its reason)."""
    return replace(greedy, status=status, time_s=monitor.elapsed(),
                   incumbents=list(monitor.incumbents),
                   stats={**stats, "chosen_algorithm": "greedy", "certified_depth": 0,
                          "greedy_kept": True})


def _stopped(greedy: Result, monitor, depth: int, top: int) -> Result:
    """The greedy tree of a run stopped before its hybrid was complete (by Stop or the
    time limit: the run's, or the exact search's share of it before any tree)."""
    status = monitor.stop_status() or Status.TIME_LIMIT
    cause = ("the run was stopped" if status == Status.CANCELLED else
             "the time limit came")
    shown = (f"the greedy (CART) tree of depth {depth}" if greedy.status == Status.FINISHED
             else "the greedy (CART) tree as far as it was grown")
    return _kept(greedy, monitor, status, {
        "exact_depth": top, "greedy_error": greedy.train_error,
        "reason": f"{cause} before the hybrid tree was complete, so {shown} is kept",
        "message": f"{cause[0].upper()}{cause[1:]} before the hybrid tree was complete: "
                   f"the tree shown is {shown}."})
