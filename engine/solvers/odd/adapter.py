"""`odd`: optimal decision diagrams (Florio, Martins, Schiffer, Serra, Vidal; AAAI-23).

Two steps, as in the paper.  The multi-start heuristic (`heuristic`) builds a
diagram within the skeleton; then the MILP (`milp`, solved by HiGHS) starts
from it, with its objective as cutoff, and either improves it or proves it optimal.
Between the two, ConTree's optimal trees of depths 2 to 4 and sat-size's smallest
tree classifying every row, pruned for alpha and for the skeleton's widths
(`tree_seed`), are tried: the MILP step starts from the best
of them instead when it beats the heuristic's diagram (stats["tree_seed"] says what
became of it).  Then a node-by-node descent (`descent`) goes from that start and
from each of the heuristic's other constructions, and the MILP step starts from
the best diagram it reaches (stats["descent"]).

What is optimised is the paper's objective (18): misclassified training weight
plus `alpha * W / (|V_I| - 1)` per active decision node other than the root (W the
total training weight, |V_I| the skeleton's node count), subject to the side
constraints asked for.  `optimal` is True only when HiGHS proves that no diagram in
the skeleton has a smaller objective (up to an absolute gap of 1e-6 W).

- `train_error`: misclassified training weight of the returned diagram.
- `lower_bound`: a proven lower bound on the training error of every diagram in
  the skeleton that meets the side constraints: HiGHS's bound on (18) minus the
  largest possible regularisation term (so 0 unless alpha is small), never below 0.
- `n_leaves` (CLI JSON): the arcs into class terminals, which is the leaf count
  when the diagram is a tree; `n_nodes`: decision nodes plus terminals reached.

Time: the heuristic gets `heuristic_time` seconds (0 = automatic: a tenth of the
time limit, at most 60 s, or 10 s without a limit) and at most `restarts`
constructions; the tree seed and then the descent each get a quarter of the time
left (at most 10 s each); the MILP gets the rest.  Without a time limit the MILP
step (LNS and full MILP) gets `milp_seconds`: a second per 200 training rows,
between 1.5 and 30 s (HiGHS's proof may take hours beyond a few dozen rows: iris at
depth 3 had no end in 15 minutes); when it ends before the proof the status is
`time_limit` and stats["message"] says so.
With `milp_mode = lns` (the default) that time goes first to a large-neighbourhood
search (`lns`: the MILP re-optimises one part of the diagram at a time, small
sub-MILPs where HiGHS gets further within seconds than on the whole MILP) until no
neighbourhood improves, then to the full MILP, which alone proves optimality;
`full` gives it all to the full MILP.
Before building the MILP its size is computed; beyond `max_milp_nonzeros` the
MILP is skipped (stats["milp_skipped"] says why) and the heuristic's diagram is
returned with status `finished`.

Demographic parity (19): `parity_column` names a feature with exactly two values
in the training data, by the text Orchard shows for it (`sex = male`) or by its
column when that column gives a single feature.  Group 1 holds the rows at the
larger value.  For every class, the share of group 1's training weight predicted
as that class and the share of group 2's differ by at most `parity_tolerance`.
The heuristic ignores parity; when its diagram breaks the constraint it is not
used as warm start, and if the MILP finds no diagram in time the heuristic's is
returned with `stats["constraints_met"] = False`.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterable

import numpy as np

from engine.errors import ParameterError
from engine.model.diagram import Diagram
from engine.solvers import kernel_support as ks
from engine.solvers.odd.common import SideConstraints, Skeleton
from engine.solvers.odd.descent import (
    DESCENT_CAP,
    DESCENT_CELLS,
    DESCENT_SHARE,
    descend,
)
from engine.solvers.odd.heuristic import OddHeuristic
from engine.solvers.odd.lns import LnsOutcome, OddLns
from engine.solvers.odd.milp import OddMilp
from engine.solvers.odd.tree_seed import SEED_CAP, SEED_SHARE, compile_needed, tree_seed
from engine.solvers.protocol import Param, Result, Solver, Status
from engine.solvers.registry import register

AUTO_SHARE, AUTO_CAP, AUTO_UNLIMITED = 0.1, 60.0, 10.0
MILP_ROWS_PER_SECOND, MILP_LEAST, MILP_MOST = 200, 1.5, 30.0


def heuristic_seconds(requested: float, time_limit: float | None) -> float:
    """The heuristic's budget: `requested`, or automatic when it is 0."""
    if requested > 0:
        return requested
    return min(AUTO_CAP, AUTO_SHARE * time_limit) if time_limit else AUTO_UNLIMITED


def milp_seconds(rows: int, time_limit: float | None) -> float:
    """The MILP step's budget: unbounded under a time limit (the run's deadline
    rules), else the default (see the module docstring), so that `orchard fit` and
    a notebook's fit without a time limit end within about a minute."""
    if time_limit:
        return math.inf
    return min(max(rows / MILP_ROWS_PER_SECOND, MILP_LEAST), MILP_MOST)


def parity_groups(data, name: str) -> np.ndarray:
    """True for the rows of group 1 (the larger value of the feature `name`)."""
    names = [f.condition(True) if f.binary else f.column for f in data.features]
    matches = [j for j, text in enumerate(names) if text == name]
    if not matches:
        matches = [j for j, f in enumerate(data.features) if f.column == name]
    if len(matches) != 1:
        found = ", ".join(names[j] for j in matches) if matches else "no feature"
        raise ParameterError(f"The parity column '{name}' must name one feature "
                             f"(it matches {found}).")
    values = np.unique(data.X[:, matches[0]])
    if len(values) != 2:
        raise ParameterError(f"The parity column '{name}' must take exactly two values "
                             f"in the training data, not {len(values)}.")
    return data.X[:, matches[0]] == values[1]


@register
class Odd(Solver):
    name = "odd"
    title = "Optimal decision diagram (MILP)"
    summary = ("Decision diagrams whose nodes share children (Florio et al. 2023): a "
               "multi-start heuristic, then a MILP solved by HiGHS; any data, proves "
               "optimality on small data.")
    needs = "any"
    proves_optimality = True
    params = (
        Param("depth", "int", 3, "Number of decision layers when no skeleton is given "
              "(widths 1, 2, 4, 8, 8, ...).", 1, 20),
        Param("skeleton", "text", "", "Width of each layer, e.g. 1-2-4-8 or 1-2-4-4-4 "
              "(overrides the depth)."),
        Param("tree", "bool", False, "Restrict to a tree skeleton (1-2-4-...): an "
              "optimal decision tree."),
        Param("split", "choice", "univariate", "One feature per test, or a weighted "
              "sum of features (multivariate).", choices=("univariate", "multivariate")),
        Param("alpha", "float", 0.01, "Cost of each decision node beyond the root, as a "
              "share of the training weight spread over the skeleton.", 0.0, 10.0),
        Param("heuristic_time", "float", 0.0, "Seconds for the heuristic (0: a tenth of "
              "the time limit, at most 60 s; 10 s without a limit).", 0.0, None),
        Param("restarts", "int", 200, "Most constructions the heuristic makes.", 1, None),
        Param("milp", "bool", True, "Run the MILP after the heuristic."),
        Param("milp_mode", "choice", "lns", "lns: re-optimise one part of the diagram at a "
              "time with the MILP (large-neighbourhood search), then the whole MILP in the "
              "time left; full: the whole MILP from the start.", choices=("lns", "full")),
        Param("tree_seed", "bool", True, "Start the MILP step from the best of ConTree's "
              "optimal trees (depth 2 to 4) and sat-size's smallest perfect tree, pruned "
              "for alpha and the skeleton's widths, when it beats the heuristic's diagram."),
        Param("descent", "bool", True, "Before the MILP, improve the start and each of the "
              "heuristic's constructions one node at a time (best test and arcs of a node, "
              "the rest fixed) and start the MILP from the best diagram reached."),
        Param("max_milp_nonzeros", "int", 2_000_000, "Skip the MILP when it would have "
              "more nonzeros than this (memory guard).", 1, None),
        Param("min_flow", "float", 0.0, "Least training weight through every decision "
              "node but the root (0: none).", 0.0, None),
        Param("max_active_nodes", "int", 0, "Most decision nodes (0: no limit).", 0, None),
        Param("parity_column", "text", "", "Two-valued feature whose groups must get "
              "each class at similar rates (empty: no parity constraint)."),
        Param("parity_tolerance", "float", 0.1, "Largest gap between the two groups' "
              "shares of each predicted class.", 0.0, 1.0),
        Param("seed", "int", 0, "Seed of the heuristic's feature subsets and of HiGHS.",
              0, None),
    )

    def solve(self, data, params, monitor) -> Result:
        skeleton = Skeleton.parse(params["skeleton"], params["depth"], params["tree"])
        group = parity_groups(data, params["parity_column"]) \
            if params["parity_column"].strip() else None
        constraints = SideConstraints(params["min_flow"], params["max_active_nodes"],
                                      group, params["parity_tolerance"])
        X = ks.kernel_array(data.X, np.float64, monitor.checkpoint)
        y = np.asarray(data.y, dtype=np.int64)
        w = np.asarray(data.w, dtype=np.float64)
        run = _Run(data, X, y, w, skeleton, params["alpha"], constraints, monitor)
        heuristic = OddHeuristic(X, y, w, data.n_classes, skeleton, params["alpha"],
                                 constraints, params["seed"])
        seconds = heuristic_seconds(params["heuristic_time"], monitor.time_limit)
        diagram, objective, restarts = heuristic.run(
            data.prep, params["restarts"], seconds, monitor.should_stop,
            lambda d, obj: run.offer(d, 0.0))
        run.stats.update(heuristic_objective=objective, heuristic_restarts=restarts,
                         heuristic_error=diagram.error(X, y, w))
        if monitor.should_stop():
            run.stats["message"] = ("The time ran out during the heuristic, so the MILP "
                                    "step never started: the diagram is the heuristic's, not "
                                    "proven optimal; give it more time.")
            return run.result(proven=False, interrupted=True)
        if not params["milp"]:
            run.stats["message"] = ("The MILP step is turned off (milp = false): the diagram "
                                    "is the heuristic's, not proven optimal.")
            return run.result(proven=False)
        milp = OddMilp(X, y, w, data.n_classes, skeleton, params["alpha"],
                       params["split"] == "multivariate", constraints)
        size = milp.size()
        run.stats["milp_size"] = vars(size)
        if size.nonzeros > params["max_milp_nonzeros"]:
            run.stats["milp_skipped"] = (f"the MILP would have {size.nonzeros:,} nonzeros, "
                                         f"more than max_milp_nonzeros = "
                                         f"{params['max_milp_nonzeros']:,}")
            run.stats["message"] = (
                f"The MILP step was skipped: it would have {size.nonzeros:,} nonzeros, more "
                f"than the guard max_milp_nonzeros = {params['max_milp_nonzeros']:,}; the "
                "diagram is the heuristic's, not proven optimal. Raise the guard (--param "
                f"max_milp_nonzeros={size.nonzeros}, more memory) or use fewer layers or "
                "features.")
            return run.result(proven=False)
        return run.milp(milp, diagram, heuristic.constructions(data.prep), params)


class _Run:
    """Bookkeeping of one solve: the best diagram, its objective, the statistics."""

    def __init__(self, data, X, y, w, skeleton: Skeleton, alpha: float,
                 constraints: SideConstraints, monitor):
        self.data, self.X, self.y, self.w = data, X, y, w
        self.skeleton = skeleton
        self.constraints = constraints
        self.monitor = monitor
        self.penalty = skeleton.penalty(alpha, float(w.sum()))
        most = min(skeleton.n_internal, constraints.max_active or skeleton.n_internal)
        self.max_regularisation = self.penalty * (most - 1)
        self.best: Diagram | None = None
        self.best_objective = np.inf
        self.best_meets = False  # whether the best diagram meets the side constraints
        self.lower_bound = 0.0
        self.stats: dict = {"skeleton": str(skeleton), "tree": skeleton.tree}

    def objective(self, diagram: Diagram) -> float:
        return (diagram.error(self.X, self.y, self.w)
                + self.penalty * max(diagram.n_internal - 1, 0))

    def offer(self, diagram: Diagram, objective_bound: float) -> None:
        """Keep `diagram` if it is better than the best so far; publish any progress.

        A diagram meeting the side constraints beats one that does not; otherwise
        the smaller objective wins.
        """
        objective = self.objective(diagram)
        meets = not self.constraints.violations(diagram, self.X, self.w)
        bound = max(self.lower_bound, objective_bound - self.max_regularisation)
        improved = (meets, -objective) > (self.best_meets, -self.best_objective + 1e-9)
        if improved:
            self.best, self.best_objective, self.best_meets = diagram, objective, meets
        if improved or bound > self.lower_bound:
            self.lower_bound = bound
            self.monitor.publish(self.best, self.best.error(self.X, self.y, self.w), bound)

    def milp(self, milp: OddMilp, heuristic: Diagram, constructions: Iterable[Diagram],
             params: dict) -> Result:
        """The MILP step from the heuristic's diagram, or from the tree seed when that
        is better, or from the best diagram the descent reaches from either or from
        the heuristic's `constructions`: the LNS first if asked, then the full MILP
        from the best diagram so far, in the time left."""
        milp.build()
        start_diagram = self.seeded(milp, heuristic) if params["tree_seed"] else heuristic
        if params["descent"] and not self.monitor.should_stop():
            start_diagram = self.descended(milp, start_diagram, heuristic, constructions)
        if self.monitor.should_stop():
            self.stats.update(milp_status="not run: stopped before the MILP",
                              message="The run stopped during the tree seed or the descent, "
                              "before the MILP: the diagram is the best of the "
                              "heuristic's, the seed's and the descent's, not proven "
                              "optimal; give it more time.")
            return self.result(proven=False, interrupted=True)
        broken = self.constraints.violations(start_diagram, self.X, self.w)
        start = None if broken else milp.warm_start(start_diagram)
        self.stats["warm_start"] = ("used" if start is not None else
                                    "breaks " + "; ".join(broken) if broken else
                                    "not representable")
        budget = milp_seconds(len(self.y), self.monitor.time_limit)
        with self.monitor.share(1.0, budget):
            result = self.milp_steps(milp, start, start_diagram, params)
        if budget < math.inf and result.status == Status.TIME_LIMIT:
            self.stats["message"] = (
                f"The MILP's default budget of {budget:.3g} s (a second per "
                f"{MILP_ROWS_PER_SECOND} training rows, {MILP_LEAST:g} to {MILP_MOST:g} s, "
                "when no time limit is given) ended before the proof: the diagram shown "
                "is the best found, not proven optimal; give a time limit (--time-limit, "
                "time_limit=) for more.")
        return result

    def milp_steps(self, milp: OddMilp, start: np.ndarray | None, start_diagram: Diagram,
                   params: dict) -> Result:
        """The LNS if asked (and `start` is a MILP start), then the full MILP."""
        seed = params["seed"]
        if params["milp_mode"] == "lns" and start is not None:
            outcome = self.lns(milp, start_diagram, seed)
            self.stats["milp_improved"] = self.best is not start_diagram
            if outcome.stopped or self.monitor.should_stop():
                self.stats.update(milp_status="not run: stopped during the LNS")
                return self.result(proven=False, interrupted=True)
            start = outcome.columns
        return self.full_milp(milp, start, start_diagram, seed)

    def seconds_left(self) -> float:
        """Seconds to the deadline in force, a `Monitor.share`'s included (which
        `Monitor.remaining` leaves out when the run has no time limit)."""
        return max(0.0, float(self.monitor.control[ks.C_DEADLINE]) - time.monotonic())

    def seeded(self, milp: OddMilp, heuristic: Diagram) -> Diagram:
        """The tree seed (`tree_seed`) if it beats the heuristic's diagram, meets the
        side constraints and is a start the MILP can take; else the heuristic's."""
        if self.monitor.time_limit is not None and compile_needed():
            self.stats["tree_seed"] = ("skipped: ConTree's kernels are not compiled yet, and "
                                       "compiling them would overrun the time limit (a run "
                                       "without one compiles them)")
            return heuristic
        started = self.monitor.elapsed()
        with self.monitor.share(SEED_SHARE, SEED_CAP):
            seed = tree_seed(self.data, self.X, self.y, self.w, self.skeleton, self.penalty,
                             self.objective, self.monitor)
        self.stats["tree_seed_seconds"] = float(self.monitor.elapsed() - started)
        if seed is None:
            self.stats["tree_seed"] = ("none: the skeleton has one layer, no pruned tree fits "
                                       "it, or the time ran out first")
            return heuristic
        objective = self.objective(seed)
        self.stats["tree_seed_objective"] = objective
        tolerance = 1e-6 * max(1.0, float(self.w.sum()))
        if objective >= self.objective(heuristic) - tolerance:
            self.stats["tree_seed"] = "not better than the heuristic's diagram"
        elif self.constraints.violations(seed, self.X, self.w):
            self.stats["tree_seed"] = "breaks the side constraints"
        elif milp.warm_start(seed) is None:
            self.stats["tree_seed"] = "not representable in the MILP"
        else:
            self.stats["tree_seed"] = "used"
            self.offer(seed, 0.0)
            return seed
        return heuristic

    def descended(self, milp: OddMilp, start: Diagram, heuristic: Diagram,
                  constructions: Iterable[Diagram]) -> Diagram:
        """The best diagram the descent reaches from `start`, then from each of the
        heuristic's `constructions` (least objective first), if it beats `start`,
        meets the side constraints and is a start the MILP can take; else `start`.
        Within `DESCENT_SHARE` of the time left, at most `DESCENT_CAP` seconds."""
        targets = max(self.skeleton.widths) + self.data.n_classes
        if len(self.y) * targets > DESCENT_CELLS:
            self.stats["descent"] = (f"skipped: {len(self.y):,} rows x {targets} arc targets "
                                     f"is more than {DESCENT_CELLS:,}")
            return start
        started = self.monitor.elapsed()
        best, best_objective, tried = start, self.objective(start), 0
        tolerance = 1e-6 * max(1.0, float(self.w.sum()))
        starts = constructions if start is heuristic else itertools.chain([start],
                                                                           constructions)
        with self.monitor.share(DESCENT_SHARE, DESCENT_CAP):
            for diagram in starts:
                if self.monitor.should_stop():
                    break
                tried += 1
                found = descend(diagram, self.X, self.y, self.w, self.skeleton, self.penalty,
                                self.monitor.should_stop)
                objective = np.inf if found is None else self.objective(found)
                if (objective < best_objective - tolerance
                        and not self.constraints.violations(found, self.X, self.w)
                        and milp.warm_start(found) is not None):
                    best, best_objective = found, objective
                    self.offer(found, 0.0)
        self.stats.update(descent_starts=tried, descent_objective=best_objective,
                          descent_seconds=float(self.monitor.elapsed() - started))
        self.stats["descent"] = ("used" if best is not start else
                                 f"no better diagram from {tried} starts")
        return best

    def lns(self, milp: OddMilp, diagram: Diagram, seed: int) -> LnsOutcome:
        """The large-neighbourhood search (`lns`), its diagrams published as found."""
        started = self.monitor.elapsed()
        outcome = OddLns(milp, self.data.prep, self.objective, seed).run(
            diagram, self.seconds_left(), self.monitor.should_stop,
            lambda d: self.offer(d, 0.0))
        self.stats.update(lns_solves=outcome.solves, lns_improvements=outcome.improvements,
                          lns_objective=outcome.objective,
                          lns_seconds=float(self.monitor.elapsed() - started))
        return outcome

    def full_milp(self, milp: OddMilp, start: np.ndarray | None, start_diagram: Diagram,
                  seed: int) -> Result:
        """The whole MILP from `start` (the best diagram's columns, or None);
        `start_diagram` is the one the MILP step started from."""
        tolerance = 1e-6 * max(1.0, float(self.w.sum()))
        cutoff = self.best_objective + tolerance if start is not None else None

        def on_solution(values, objective, bound):
            self.offer(milp.decode(values, self.data.prep), bound if np.isfinite(bound) else 0.0)

        outcome = milp.solve(self.seconds_left(), self.monitor.should_stop, start, cutoff,
                             on_solution, seed)
        if outcome.values is not None:
            decoded = milp.decode(outcome.values, self.data.prep)
            self.stats["milp_objective"] = self.objective(decoded)
            self.stats["milp_flows_match"] = bool(
                np.array_equal(milp.terminal_classes(outcome.values), decoded.predict(self.X)))
            self.offer(decoded, 0.0)
        self.stats.update(milp_status=outcome.status,
                          milp_improved=self.best is not start_diagram)
        proven = outcome.status == "optimal" or (outcome.status == "infeasible"
                                                 and cutoff is not None)
        if proven:
            self.lower_bound = max(self.lower_bound, self.best_objective - tolerance
                                   - self.max_regularisation)
        elif np.isfinite(outcome.dual_bound):
            self.lower_bound = max(self.lower_bound, min(outcome.dual_bound, self.best_objective)
                                   - self.max_regularisation)
        if outcome.status == "infeasible" and cutoff is None:
            return self.result(proven=False, status=Status.INFEASIBLE)
        timed_out = outcome.status in ("time_limit", "interrupted")
        return self.result(proven=proven, interrupted=timed_out)

    def result(self, proven: bool, interrupted: bool = False,
               status: Status | None = None) -> Result:
        broken = self.constraints.violations(self.best, self.X, self.w)
        proven = proven and not broken
        if status is None:
            status = (self.monitor.final_status(proven) if interrupted or proven
                      else Status.FINISHED)
            if interrupted and status == Status.FINISHED:
                status = Status.TIME_LIMIT
        error = self.best.error(self.X, self.y, self.w)
        lower = min(max(self.lower_bound, 0.0), error)
        self.stats.update(objective=self.best_objective, constraints_met=not broken)
        if broken:
            self.stats["constraints_broken"] = broken
        return Result(self.best, error, lower, proven, status, self.monitor.elapsed(),
                      list(self.monitor.incumbents), self.stats)
