"""`sat-depth` and `sat-size`: smallest trees classifying every row (Avellaneda, AAAI-20).

`sat-depth` (the paper's DT_depth) finds the least depth k for which a perfect tree of
depth k is consistent with the training rows; `sat-size` (DT_size) then finds, at that
depth, the fewest leaves with the unary counter of labelled leaves, asking for one leaf
fewer than the best tree until that is refuted (or halving, the paper's way).
Size is counted as the paper does: nodes, internal ones and leaves, so 2L - 1 for L
leaves.  The clauses are those of `encoding`; this module runs the searches.

Incremental inference (Algorithm 3): each formula starts with no example; whenever
the solver's tree misclassifies a training row, that row's clauses are added and the
solver runs again, so only the rows that matter enter the formula
(`stats["examples_used"]`).  The row added is the first misclassified one in the
table's order (the paper's code takes the first in table order within the first class
that has one; with a random row car took twice as long).  Formulas grow
monotonically, so one incremental solver serves each depth, and the size search asks
one formula under assumptions: the minimum depth's own when it runs on the same SAT
solver, else a new one seeded with the rows that depth needed.  A new depth starts from
the rows the previous one needed: they refuted a shallower tree and usually shape the
deeper one too (car: 21 s instead of 54 s).

Before encoding, rows of weight 0 are ignored, identical rows merged, and features
constant or equal / complementary to an earlier one dropped (a consistent tree never
needs them).  Rows with equal features and different classes make every depth
unsatisfiable: `engine.training` refuses such data (`consistent_only`); called
directly, the search stops at the depth bound with status `infeasible`.

Each tree the solver proposes is checked on every training row; only trees passing
are published (error 0).  The returned tree is compacted: splits with an empty side
are skipped and a node whose rows all have one class becomes a leaf.  The SAT calls
run on one helper thread per run while the calling thread polls the Monitor every 20 ms and
interrupts the solver when asked to stop, so signal handlers (Ctrl-C in the CLI) keep
running too.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor, wait
from typing import ClassVar

import numpy as np
from pysat.solvers import Solver as SatSolver

from engine.data.dataset import row_groups
from engine.errors import DataError
from engine.model.tree import Tree
from engine.solvers import kernel_support as ks
from engine.solvers.binary_columns import redundant_columns
from engine.solvers.protocol import Param, Result, Solver, Status
from engine.solvers.registry import register
from engine.solvers.sat.encoding import (
    Clauses,
    LeafCounter,
    PerfectTree,
    counter_clauses,
    decode,
    example_clauses,
    leaf_of,
    node_clauses,
)

# Bundled solvers that can be interrupted (CaDiCaL, Kissat and Lingeling cannot be in
# pysat; Glucose 4.1 took up to 1 s to notice).  `benchmarks/sat.py --compare` times
# them: MapleSAT, the default, found car's minimum depth in 21-27 s where the others
# took 137 s or more, and is among the fastest on the small sets.
SAT_SOLVERS = ("minisat22", "glucose3", "glucose42", "maplechrono", "maplecm",
               "maplesat", "mergesat3", "minisatep")
# Seconds between two looks at the Monitor while a SAT call runs.
POLL = 0.02
# Literals the formula of one depth may hold before the run stops with `memory_limit`
# (the solvers keep about 4-8 bytes per literal).
LITERAL_BUDGET = 200_000_000

MAX_DEPTH = Param("depth", "int", 10,
                  "Largest depth to try: the search stops with status 'infeasible' when "
                  "no tree up to this depth classifies every row.", 0, 20)
SAT_SOLVER = Param("sat_solver", "choice", "maplesat",
                   "SAT solver (bundled with python-sat) that decides each formula of "
                   "the depth search.", choices=SAT_SOLVERS)
# The size search asks one formula many questions "at most b labelled leaves": MiniSat
# 2.2 answered them in 5.0 s on monk2 and 2.1 s on monk3 where MapleSAT, the depth
# search's solver, took 18 s and 3.0 s (`benchmarks/sat.py --compare-size`, RESULTS.md).
SIZE_SAT_SOLVER = Param("size_sat_solver", "choice", "minisat22",
                        "SAT solver for the size search of sat-size (the depth search "
                        "uses sat_solver).", choices=SAT_SOLVERS)
SIZE_SEARCH = Param("size_search", "choice", "descending",
                    "How sat-size closes in on the fewest leaves: 'descending' asks for "
                    "one leaf fewer than the best tree until refuted; 'binary' halves "
                    "the interval (the paper's).", choices=("descending", "binary"))


class _Stopped(Exception):
    """The Monitor asked to stop (cancel, time or memory limit)."""


class Examples:
    """The distinct training rows on the useful features (see the module docstring)."""

    def __init__(self, data, progress):
        progress("grouping identical rows", None)
        X = np.asarray(data.X)
        if X.size and not np.isin(X, (0, 1)).all():
            raise DataError("SAT solvers need 0/1 features: choose a binarisation.")
        w = np.asarray(data.w, dtype=np.float64)
        positive = w > 0
        Xp = X[positive].astype(np.uint8)
        yp = np.asarray(data.y, dtype=np.int64)[positive]
        drop = redundant_columns(Xp, range(X.shape[1])) if len(Xp) else set()
        self.fmap = np.array([j for j in range(X.shape[1]) if j not in drop], dtype=np.int64)
        Xf = np.ascontiguousarray(Xp[:, self.fmap])
        first, _ = row_groups(Xf, yp) if len(Xf) else (np.zeros(0, np.int64), None)
        first = np.sort(first)
        self.X, self.y = Xf[first], yp[first]
        self.n_classes = data.n_classes
        self.classes_present = len(np.unique(self.y))

    @property
    def n(self) -> int:
        return len(self.y)

    @property
    def n_features(self) -> int:
        return len(self.fmap)

    def depth_floor(self) -> int:
        """No tree shallower than this separates the classes present."""
        return math.ceil(math.log2(self.classes_present)) if self.classes_present > 1 else 0

    def depth_ceiling(self) -> int:
        """A consistent tree, if any, exists at this depth: no path needs a feature
        twice, and n rows need at most n - 1 splits on a path."""
        return min(self.n_features, max(self.n - 1, 0))


class Formula:
    """One incremental SAT solver for the perfect trees of one depth."""

    def __init__(self, examples: Examples, depth: int, solver_name: str, monitor,
                 executor: ThreadPoolExecutor):
        self.examples, self.monitor, self.executor = examples, monitor, executor
        self.tree = PerfectTree(depth, examples.n_features, examples.n_classes)
        self.solver_name = solver_name
        self.sat = SatSolver(name=solver_name)
        self.next_var = self.tree.first_free
        self.used: list[int] = []
        self.literals = 0
        self.calls = 0
        self.counter: LeafCounter | None = None
        self._add(node_clauses(self.tree))

    def close(self) -> None:
        self.sat.delete()

    def _add(self, clauses: Clauses) -> None:
        self.literals += sum(map(len, clauses))
        self.sat.append_formula(clauses)

    def example_literals(self) -> int:
        """Literals one more example adds (to check the budget before building them)."""
        t = self.tree
        inner = sum((1 << level) * t.n_features * (level + 2) for level in range(t.depth))
        return inner + t.n_leaves * t.n_classes * (t.depth + 1)

    def add_example(self, index: int) -> None:
        depth = self.tree.depth
        x_vars = range(self.next_var, self.next_var + depth)
        self.next_var += depth
        self._add(example_clauses(self.tree, x_vars, self.examples.X[index],
                                  int(self.examples.y[index])))
        self.used.append(index)

    def add_counter(self, width: int) -> None:
        """Formulas (7)-(10) for bounds up to `width` labelled leaves."""
        self.counter = LeafCounter(self.tree, self.next_var, width)
        self.next_var = self.counter.next_free
        self._add(counter_clauses(self.counter))

    def solve(self, assumptions: list[int]) -> list[int] | None:
        """A model, or None when unsatisfiable; raises _Stopped when interrupted.

        The call runs on the Run's one SAT thread while this thread polls the
        Monitor (a thread started for every call made the small sets' searches
        20-35% slower: monk2's depth search makes 87 calls).  A conflict budget
        for a first try in this thread would save the hand-over too, but changes
        the solver's course: car's depth search took 137 s instead of 27 s."""
        if self.monitor.should_stop():
            raise _Stopped
        self.calls += 1
        call = self.executor.submit(self.sat.solve_limited, assumptions=assumptions,
                                    expect_interrupt=True)
        while not wait([call], timeout=POLL).done:
            if self.monitor.should_stop():
                self.sat.interrupt()
        answer = call.result()
        if answer is None:
            raise _Stopped
        return self.sat.get_model() if answer else None


class Run:
    """One solve: the bounds proven so far, the best tree, and the searches."""

    def __init__(self, data, params, monitor):
        self.data, self.monitor = data, monitor
        self.max_depth = params["depth"]
        self.solver_name = params["sat_solver"]
        self.size_solver_name = params.get("size_sat_solver", self.solver_name)
        self.size_search = params.get("size_search", SIZE_SEARCH.default)
        self.examples = Examples(data, monitor.checkpoint)
        self.depth_lb = self.examples.depth_floor()
        self.leaves_lb = max(self.examples.classes_present, 1)
        self.best: Tree | None = None
        self.found_depth: int | None = None
        self.formula: Formula | None = None
        self.literals = 0
        self.calls = 0
        self.executor = ThreadPoolExecutor(1, thread_name_prefix="orchard-sat")

    # ------------------------------------------------------------- searches
    def infer(self, formula: Formula, assumptions: list[int]):
        """Algorithm 3: a perfect tree consistent with every row, or None."""
        ex = self.examples
        while True:
            model = formula.solve(assumptions)
            if model is None:
                return None
            features, labels = decode(formula.tree, model)
            wrong = np.flatnonzero(labels[leaf_of(features, ex.X, formula.tree.depth)]
                                   != ex.y)
            if len(wrong) == 0:
                return features
            # Rows already in the formula are classified correctly by every model, so
            # each step adds a new row and the loop ends after at most n steps.
            assert wrong[0] not in formula.used, "a row of the formula was misclassified"
            self._add_example(formula, int(wrong[0]))

    def min_depth(self) -> None:
        """DT_depth: depths from the floor up, each seeded with the previous rows."""
        if self.depth_lb == 0:      # a single class: one leaf, nothing to ask a solver
            self.found_depth = 0
            self._accept(0, np.zeros(0, dtype=np.int64))
            return
        seeds: list[int] = []
        ceiling = min(self.max_depth, self.examples.depth_ceiling())
        for depth in range(self.depth_lb, ceiling + 1):
            formula = self._open(depth, seeds)
            features = self.infer(formula, [])
            if features is not None:
                self.found_depth = depth
                self._accept(depth, features)
                return
            seeds = list(formula.used)
            self.depth_lb = depth + 1
            self.leaves_lb = max(self.leaves_lb, depth + 2)

    def min_size(self) -> None:
        """DT_size: the fewest labelled leaves at the minimum depth, asked of one
        formula with the bound as an assumption.

        `descending` (the default) asks for one leaf fewer than the best tree until
        that is refuted: every answer but the last is a smaller tree, usually found
        in seconds, and the one refutation comes last, when the formula holds the
        most rows and learnt clauses.  `binary` (the paper's) halves the interval,
        so its first questions are refutations far below the optimum, which can be
        the hardest of all (car: 187 s for "at most 61 leaves" at the start; the
        optimum is 72).  With a size solver other than the depth search's, a new
        formula starts from the rows the minimum depth needed."""
        formula = self.formula
        self.leaves_lb = max(self.leaves_lb, self.found_depth + 1)
        high = self.best.n_leaves
        if self.leaves_lb >= high:
            return
        if self.size_solver_name != formula.solver_name:
            formula = self._open(formula.tree.depth, list(formula.used),
                                 self.size_solver_name)
        formula.add_counter(high - 1)
        while self.leaves_lb < high:
            bound = high - 1 if self.size_search == "descending" else (
                (self.leaves_lb + high) // 2)
            features = self.infer(formula, [formula.counter.at_most(bound)])
            if features is None:
                self.leaves_lb = bound + 1
            else:
                self._accept(formula.tree.depth, features)
                assert self.best.n_leaves <= bound, "the leaf bound was not respected"
                high = self.best.n_leaves

    # ------------------------------------------------------------- helpers
    def _open(self, depth: int, seeds: list[int], solver_name: str | None = None) -> Formula:
        self.close()
        self.formula = Formula(self.examples, depth, solver_name or self.solver_name,
                               self.monitor, self.executor)
        for index in seeds:
            self._add_example(self.formula, index)
        return self.formula

    def _add_example(self, formula: Formula, index: int) -> None:
        # An example of a deep tree over many features is tens of thousands of
        # literals built in Python (up to 50 ms): a formula reopened with its seed rows
        # must stop between two of them, not after all (a cancel landed 0.2-0.3 s late).
        if self.monitor.should_stop():
            raise _Stopped
        if formula.literals + formula.example_literals() > LITERAL_BUDGET:
            self.monitor.control[ks.C_STOP] = ks.STOP_MEMORY
            raise _Stopped
        formula.add_example(index)

    def infeasible_message(self) -> str:
        if self.depth_lb > self.examples.depth_ceiling():
            return ("Rows with identical features have different classes, so no tree "
                    "classifies every training row correctly.")
        return (f"No tree of depth at most {self.max_depth} classifies every training "
                "row correctly: raise the maximum depth.")

    def stopped_message(self, status: Status) -> str:
        """Why a stopped run has no proven answer, what is known, and what to try."""
        why = "The memory limit" if status == Status.MEMORY_LIMIT else (
            "Stop" if status == Status.CANCELLED else "The time limit")
        refuted = (f"no consistent tree of depth {self.depth_lb - 1} or less exists"
                   if self.depth_lb > 0 else "no depth was refuted yet")
        if self.best is None:
            found = (f"none of depth {self.depth_lb} to {self.max_depth} was found yet, so "
                     "the tree shown is a single leaf")
        else:
            found = (f"one of depth {self.best.depth} was found, not yet proven the "
                     "smallest")
        return (f"{why} came before the SAT search finished: {refuted}, and {found}. Try "
                "more time, dropping rows that contradict identical rows, a coarser "
                "binarisation (fewer features), or a larger maximum depth.")

    def finish(self) -> None:
        """End the SAT thread (interrupting a call still running, which only an
        exception in the calling thread can leave behind) and free the formula."""
        if self.formula is not None:
            self.formula.sat.interrupt()
        self.executor.shutdown(wait=True)
        self.close()

    def close(self) -> None:
        if self.formula is not None:
            self.literals += self.formula.literals
            self.calls += self.formula.calls
            self.formula.close()
            self.formula = None

    def _accept(self, depth: int, features: np.ndarray) -> None:
        """Publish the compacted tree of a perfect tree consistent with every row."""
        self.best = compact(depth, self.examples.fmap[features], self.data)
        self.monitor.publish(self.best, 0.0, 0.0)

    def stats(self, with_size: bool) -> dict:
        formula = self.formula
        stats = {"depth_lower_bound": self.depth_lb,
                 "examples_used": len(formula.used) if formula else 0,
                 "distinct_rows": self.examples.n,
                 "features_used": self.examples.n_features,
                 "sat_calls": self.calls + (formula.calls if formula else 0),
                 "literals_added": self.literals + (formula.literals if formula else 0),
                 "sat_solver": self.solver_name}
        if with_size:
            stats["size_lower_bound"] = 2 * self.leaves_lb - 1
            stats["size_sat_solver"] = self.size_solver_name
            stats["size_search"] = self.size_search
        return stats


def compact(depth: int, features: np.ndarray, data) -> Tree:
    """The Tree of a consistent perfect tree (`features` of nodes 1..2^k-1, columns
    of data.X): only rows of positive weight count; splits with an empty side are
    skipped, pure nodes become leaves, `value` holds the class weights of the rows
    reaching each node."""
    X, y = np.asarray(data.X), np.asarray(data.y, dtype=np.int64)
    w = np.asarray(data.w, dtype=np.float64)
    K = data.n_classes
    feature, left, right, value = [], [], [], []

    def build(node: int, level: int, rows: np.ndarray) -> int:
        mixed = len(np.unique(y[rows])) > 1
        while mixed and level < depth:
            goes_right = X[rows, features[node - 1]] > 0.5
            if goes_right.any() and not goes_right.all():
                break
            node, level = 2 * node + int(goes_right[0]), level + 1   # one side is empty
        index = len(feature)
        feature.append(-1)
        left.append(-1)
        right.append(-1)
        value.append(np.bincount(y[rows], weights=w[rows], minlength=K))
        if mixed and level < depth:
            feature[index] = features[node - 1]
            left[index] = build(2 * node, level + 1, rows[~goes_right])
            right[index] = build(2 * node + 1, level + 1, rows[goes_right])
        return index

    build(1, 0, np.flatnonzero(w > 0))
    return Tree.from_arrays(feature, [0.5 if f >= 0 else 0.0 for f in feature], left,
                            right, value, data.prep)


class _SatBase(Solver):
    needs = "binary"
    proves_optimality = True
    binarization = "midpoints"
    consistent_only = True
    params = (MAX_DEPTH, SAT_SOLVER)
    minimise_size: ClassVar[bool] = False

    def solve(self, data, params, monitor) -> Result:
        run = Run(data, params, monitor)
        proven = False
        try:
            run.min_depth()
            if run.best is not None and self.minimise_size:
                run.min_size()
            proven = run.best is not None
        except _Stopped:
            pass
        finally:
            stats = run.stats(self.minimise_size)
            run.finish()
        if run.best is None:
            weights = np.bincount(data.y, weights=data.w, minlength=data.n_classes)
            tree = Tree.leaf(weights, data.prep)
            status = monitor.final_status(False)
            if status == Status.FINISHED:
                status = Status.INFEASIBLE
                stats["message"] = run.infeasible_message()
            else:
                stats["message"] = run.stopped_message(status)
        else:
            tree = run.best
            status = monitor.final_status(proven)
            if not proven:
                stats["message"] = run.stopped_message(status)
        stats["nodes"] = tree.n_nodes
        error = tree.error(data.X, data.y, data.w)
        return Result(tree, error, 0.0, proven, status, monitor.elapsed(),
                      list(monitor.incumbents), stats)


@register
class SatDepth(_SatBase):
    name = "sat-depth"
    title = "SAT minimum depth"
    summary = ("Shallowest tree classifying every training row (Avellaneda's incremental "
               "SAT encoding); proves the depth minimal (0/1 features).")


@register
class SatSize(_SatBase):
    name = "sat-size"
    title = "SAT minimum size"
    summary = ("Shallowest tree classifying every training row, then the fewest nodes "
               "at that depth (Avellaneda's SAT encoding); proves both (0/1 features).")
    minimise_size = True
    params = (MAX_DEPTH, SAT_SOLVER, SIZE_SAT_SOLVER, SIZE_SEARCH)
