"""Large-neighbourhood search (LNS) with the `odd` MILP around the incumbent diagram.

Given the whole MILP, HiGHS rarely improves the heuristic's diagram within seconds:
the big-M relaxation's bound is 0 and its search wanders.  Here the MILP
re-optimises one part of the incumbent at a time while the rest stays as it is
(`OddMilp.restrict`), which leaves HiGHS small sub-MILPs that it often solves
outright under a short time limit.  The neighbourhoods, in the order tried:

- every threshold and every arc (the features of all tests stay);
- windows of one, then `MAX_WINDOW`, consecutive layers, bottom-up: their nodes
  are re-optimised whole and the layer above them may rewire its arcs into them.

They are tried in rotations; an improving diagram (objective (18) recomputed on
the training data, smaller by more than the MILP's absolute gap) becomes the
incumbent at once, for the next neighbourhoods to start from.  The search ends
when a rotation brings nothing (see `OddLns.run`), the budget is spent or a stop
is requested.  Every solution of a sub-MILP is decoded and re-encoded with
`warm_start`, which numbers the slots as the full model's symmetry breaking wants,
so the incumbent always is a feasible start for the full MILP that the caller runs
next.  That full MILP is the only step that can prove optimality: a sub-MILP's
bound holds for its neighbourhood only, so none is passed on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from engine.data.preprocessing import Preprocessing
from engine.model.diagram import Diagram
from engine.solvers.odd.common import Skeleton
from engine.solvers.odd.milp import FIXED, OPEN, REWIRED, SHIFTED, OddMilp

MAX_WINDOW = 2          # most consecutive layers a neighbourhood re-optimises whole
SUB_SHARE = 1 / 8       # a sub-MILP's first time limit: this share of the LNS budget, ...
SUB_RANGE = (0.5, 10.0)  # ... within these seconds (the upper one without a budget)


def neighbourhoods(skeleton: Skeleton) -> list[np.ndarray]:
    """The freedom of every slot (see `OddMilp.restrict`) in each neighbourhood."""
    layer = skeleton.layer_of
    hoods = [np.full(skeleton.n_internal, SHIFTED)]
    for size in range(1, min(MAX_WINDOW, skeleton.depth - 1) + 1):
        for first in reversed(range(skeleton.depth - size + 1)):
            inside = (layer >= first) & (layer < first + size)
            hoods.append(np.where(inside, OPEN, np.where(layer == first - 1, REWIRED, FIXED)))
    return hoods


def sub_limit(budget: float | None) -> float:
    """Seconds for one sub-MILP in the first rotation, from the search's budget."""
    low, high = SUB_RANGE
    return high if budget is None else float(np.clip(budget * SUB_SHARE, low, high))


@dataclass
class LnsOutcome:
    diagram: Diagram        # the best diagram found (or the one given)
    objective: float        # its objective (18)
    columns: np.ndarray     # its columns in the MILP, from `warm_start`
    solves: int = 0         # sub-MILPs run
    improvements: int = 0   # incumbents they brought
    stopped: bool = False   # a stop request ended the search (HiGHS may still be ending)


class OddLns:
    def __init__(self, milp: OddMilp, prep: Preprocessing,
                 objective: Callable[[Diagram], float], seed: int = 0):
        """`milp` is built; `objective` is (18) of a diagram on the training data."""
        self.milp, self.prep, self.objective, self.seed = milp, prep, objective, seed
        self.tolerance = 1e-6 * max(1.0, float(milp.w.sum()))

    def run(self, diagram: Diagram, budget: float | None, should_stop: Callable[[], bool],
            on_diagram: Callable[[Diagram], None]) -> LnsOutcome:
        """Improve `diagram` (which `warm_start` must encode) for at most `budget` s.

        `on_diagram` sees each improving diagram as soon as HiGHS finds it.  A
        rotation that brings nothing ends the search if every sub-MILP in it was
        solved (nothing better exists in any neighbourhood); if some ran out of
        time, the next rotation gives each twice as long, up to `SUB_RANGE`'s top.
        """
        deadline = None if budget is None else time.monotonic() + budget
        limit = sub_limit(budget)
        hoods = neighbourhoods(self.milp.skeleton)
        best = LnsOutcome(diagram, self.objective(diagram), self.milp.warm_start(diagram))
        while True:
            before = best.objective
            timed_out = False
            for freedom in hoods:
                left = None if deadline is None else deadline - time.monotonic()
                if should_stop() or (left is not None and left <= 0):
                    return best
                seconds = limit if left is None else min(limit, left)
                timed_out |= self._solve(best, freedom, seconds, should_stop,
                                         on_diagram) == "time_limit"
                if best.stopped:
                    return best
            if best.objective < before:
                continue
            if not timed_out or limit >= SUB_RANGE[1]:
                return best
            limit = min(2 * limit, SUB_RANGE[1])

    def _solve(self, best: LnsOutcome, freedom: np.ndarray, seconds: float, should_stop,
               on_diagram) -> str:
        """One sub-MILP around `best.columns`; returns HiGHS's status.

        Every improving solution goes to `on_diagram` and, re-encoded, into `best`.
        """
        milp = self.milp

        def offer(values):
            diagram = milp.decode(values, self.prep)
            objective = self.objective(diagram)
            if objective >= best.objective - self.tolerance:
                return
            on_diagram(diagram)
            encoded = milp.warm_start(diagram)
            if encoded is not None:  # None if HiGHS's tolerances let a margin shrink
                best.diagram, best.objective, best.columns = diagram, objective, encoded
                best.improvements += 1

        start = best.columns
        milp.restrict(start, freedom)
        outcome = milp.solve(seconds, should_stop, start, best.objective + self.tolerance,
                             lambda values, objective, bound: offer(values), self.seed)
        best.solves += 1
        best.stopped = outcome.status == "interrupted"
        if not best.stopped:  # an interrupted HiGHS may still run: leave its model alone
            milp.release()
        if outcome.values is not None:
            offer(outcome.values)
        return outcome.status
