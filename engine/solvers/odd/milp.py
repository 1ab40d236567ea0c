"""Step 2 of Florio et al. (AAAI-23): the decision-diagram MILP, solved by HiGHS.

Variables (n rows, slots u of the skeleton, arcs a = (u, v) per side s):
`w[s, i, u]` flow of row i through side s of u, `z[s, i, a]` its flow along arc a,
`lam[i, l]` the side row i takes in layer l (binary), `d[u]` node active (binary,
the root always), `y[s, a]` arc used (binary), `a[u, j]` and `b[u]` the
hyperplane, `e[u, j]` the feature of a univariate split (binary).  Constraints
(1)-(16) and (19)-(20) are the paper's, numbered alike; (17) is substituted into the
objective (18), whose error part sums the flow along arcs into wrong terminals.
The symmetry breaking (12) orders the nodes of every layer below the root by
in-degree (the paper starts at layer 2; layer 1 is just as symmetric).  In a tree
skeleton a node links only to its heap children (negative side to 2u+1, positive
to 2u+2) or to terminals, and (12) is left out.

HiGHS has no indicator constraints, so (13)-(14) are big-M constraints with a
constant per row: on features scaled to [0, 1], `a.x_i` lies within +-max_j x_ij
(univariate) or +-sum_j x_ij (multivariate) and `b` in [-1, 1], which bounds how
far each side of the implication can be violated.  ε = 1e-4 (common.EPSILON)
makes the negative side strict; decoded thresholds sit in the middle of that
margin, then move to the midpoint between the training values they separate.

The objective is in training weight (common) and HiGHS runs with no relative
gap, and an absolute gap of 1e-6 times the total weight: `optimal` means optimal up
to that.  A warm start (the heuristic's diagram) is passed as a solution and its
objective as `objective_bound`.  With that bound HiGHS reports "optimal" or
"infeasible" when it proves that nothing beats the bound, so the caller must keep
the better of the heuristic and the MILP's solution (which `OddMilp.solve` does
not do itself).  Improving solutions reach the caller through HiGHS's callbacks,
and an interrupt callback stops the solver as soon as `should_stop()` says so
(HiGHS reads it only between steps: presolve and each LP of its search run to
their end, or to HiGHS's own time limit, so a stopped run may go on for seconds
in the background, and the interpreter waits for it at exit: see `_wait_at_exit`).
HiGHS never writes to stdout (`_QuietHighs`).
`restrict` confines the built model to a neighbourhood of a solution, for the
large-neighbourhood search of `lns`, and `release` gives the full model back.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import highspy
import numpy as np

from engine.data.preprocessing import Preprocessing
from engine.model.diagram import Diagram
from engine.solvers.odd.common import EPSILON, Scaling, SideConstraints, Skeleton

NEG, POS = 0, 1
FIXED, REWIRED, SHIFTED, OPEN = range(4)  # what `restrict` lets a slot change
TOLERANCE = 1e-7   # largest violation a warm start may have (HiGHS accepts 1e-6)
POLL = 0.02        # seconds between checks for incumbents and stop requests
STOP_GRACE = 0.1   # how long a stopped HiGHS may take to end before `solve` returns
_RUNNING: list[threading.Thread] = []  # stopped HiGHS runs still ending


def wait_idle(timeout: float | None = None) -> bool:
    """Join HiGHS runs that were stopped but had not ended; True when none is left.

    Benchmarks call it between runs so that a run ending in the background does
    not take CPU time from the next one.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    while _RUNNING:
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        _RUNNING[0].join(remaining)
        if _RUNNING[0].is_alive():
            return False
        _RUNNING.pop(0)
    return True


@atexit.register
def _wait_at_exit() -> None:
    """Let stopped HiGHS runs end before the interpreter finalizes.

    A HiGHS thread that returns into Python (or calls a callback) while the
    interpreter finalizes is ended by CPython with pthread_exit, whose unwinding
    through pybind11's noexcept GIL guard calls std::terminate: "terminate called
    without an active exception" and SIGABRT (exit 134) after `orchard fit` had
    printed its result.  atexit handlers run before that, while threads still run.
    A wait longer than a second (a stop came during a long LP) is said on stderr;
    a Ctrl-C during the wait exits at once, skipping the finalization (status 130).
    """
    try:
        if not wait_idle(1.0):
            print("orchard: waiting for HiGHS to end its current step (Ctrl-C quits at "
                  "once).", file=sys.stderr, flush=True)
            wait_idle()
    except KeyboardInterrupt:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)


class _QuietHighs(highspy.Highs):
    """`highspy.Highs` that never prints HiGHS's banner ("Running HiGHS ...
    Copyright ...") on stdout, which made `orchard fit --json` invalid JSON and
    disturbed the window's warm-up.  The banner is logged by the first HiGHS call
    made while `output_flag` is on, which is `setCallback` in `Highs.__init__`'s
    `enableCallbacks`: logging goes off just before it."""

    def enableCallbacks(self):
        self.setOptionValue("output_flag", False)
        super().enableCallbacks()


@dataclass(frozen=True)
class MilpSize:
    columns: int
    rows: int
    nonzeros: int


@dataclass
class MilpOutcome:
    status: str                   # "optimal", "infeasible", "time_limit", "interrupted", ...
    values: np.ndarray | None     # best solution found by HiGHS (None if none)
    objective: float              # its objective (inf if none)
    dual_bound: float             # HiGHS's lower bound on the objective


class _Columns:
    """Allocates blocks of variables with bounds, costs and integrality."""

    def __init__(self):
        self.count = 0
        self.lower, self.upper, self.cost, self.integer = [], [], [], []

    def block(self, shape, low: float, high: float, integer: bool = False) -> np.ndarray:
        size = int(np.prod(shape))
        index = np.arange(self.count, self.count + size).reshape(shape)
        self.count += size
        self.lower.append(np.full(size, float(low)))
        self.upper.append(np.full(size, float(high)))
        self.cost.append(np.zeros(size))
        self.integer.append(np.full(size, int(integer), dtype=np.int32))
        return index


class _Rows:
    """Accumulates constraint rows as (row, column, value) triplets and bounds."""

    def __init__(self):
        self.count = 0
        self.r, self.c, self.v, self.lower, self.upper = [], [], [], [], []

    def add(self, count: int, entries, low, high) -> None:
        """`entries`: (local row, column, value) arrays broadcast together."""
        for rows, columns, values in entries:
            rows, columns, values = np.broadcast_arrays(rows, columns, values)
            self.r.append(self.count + rows.ravel())
            self.c.append(columns.ravel())
            self.v.append(values.ravel().astype(np.float64))
        self.lower.append(np.broadcast_to(np.asarray(low, dtype=np.float64), (count,)))
        self.upper.append(np.broadcast_to(np.asarray(high, dtype=np.float64), (count,)))
        self.count += count


class OddMilp:
    def __init__(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int,
                 skeleton: Skeleton, alpha: float, multivariate: bool,
                 constraints: SideConstraints):
        self.X, self.y, self.w = X, y, w
        self.K = n_classes
        self.skeleton = skeleton
        self.multivariate = multivariate
        self.constraints = constraints
        self.scaling = Scaling.fit(X)
        self.scaled = self.scaling.apply(X)
        self.penalty = skeleton.penalty(alpha, float(w.sum()))
        m = skeleton.n_internal
        # Arcs per side: tail and head slots (heads >= m are class terminals).
        self.tail, self.head = [], []
        for side in (NEG, POS):
            pairs = [(u, v) for u in range(m) for v in skeleton.targets(u, side == POS, self.K)]
            self.tail.append(np.array([p[0] for p in pairs], dtype=np.int64))
            self.head.append(np.array([p[1] for p in pairs], dtype=np.int64))
        self.arc = [{(int(u), int(v)): k for k, (u, v) in enumerate(zip(t, h))}
                    for t, h in zip(self.tail, self.head)]
        self.highs = None

    # --------------------------------------------------------------- size
    def _pairs(self) -> list[tuple[int, int]]:
        return sorted(set(self.arc[NEG]) | set(self.arc[POS]))

    def _in_degree_pairs(self) -> list[tuple[int, int]]:
        """Consecutive slots (u, u+1) of each layer below the root, for (12)."""
        if self.skeleton.tree:
            return []
        return [(u, u + 1) for l in range(1, self.skeleton.depth)
                for u in list(self.skeleton.layer_slots(l))[:-1]]

    def size(self) -> MilpSize:
        """Exact size of the model `build` would make, computed without building it."""
        n, m, D, F = len(self.y), self.skeleton.n_internal, self.skeleton.depth, self.X.shape[1]
        A0, A1 = len(self.tail[NEG]), len(self.tail[POS])
        A = A0 + A1
        internal = int(sum((h < m).sum() for h in self.head))
        into = np.zeros(m + self.K, dtype=np.int64)
        for h in self.head:
            np.add.at(into, h, 1)
        pairs = self._pairs()
        sym11 = sum(1 + int(((self.tail[POS] == u) & (self.head[POS] <= v)).sum())
                    for u, v in zip(self.tail[NEG], self.head[NEG]))
        sym12 = self._in_degree_pairs()
        univariate = 0 if self.multivariate else 1
        nnz_x = int(np.count_nonzero(self.scaled))
        columns = 2 * n * m + n * A + n * D + 2 * m + A + m * F * (1 + univariate)
        rows = (5 * n * m + 2 * n * D + 3 * m - 1 + len(pairs) + n * A + A0 + len(sym12)
                + univariate * (m + 2 * m * F))
        nonzeros = (2 * n * m + n * internal + 2 * n * m + n * A + 2 * n * m + 2 * n * D
                    + A + 2 * m + (m - 1) + internal + A + sum(v < m for _, v in pairs)
                    + 2 * n * A + sym11 + sum(into[u] + into[v] for u, v in sym12)
                    + 2 * m * nnz_x + 4 * n * m + univariate * 5 * m * F)
        if self.constraints.group is not None:
            rows += self.K
            nonzeros += n * int(into[m:].sum())
        if self.constraints.min_flow > 0:
            rows += m - 1
            nonzeros += n * internal + m - 1
        if self.constraints.max_active:
            rows += 1
            nonzeros += m
        return MilpSize(columns, rows, nonzeros)

    # -------------------------------------------------------------- build
    def build(self) -> None:
        """Make the HiGHS model (the caller checked `size()` first)."""
        n, m, D, F = len(self.y), self.skeleton.n_internal, self.skeleton.depth, self.X.shape[1]
        K, sk = self.K, self.skeleton
        cols, rows = _Columns(), _Rows()
        self.W = cols.block((2, n, m), 0, 1)
        self.Z = [cols.block((n, len(self.tail[s])), 0, 1) for s in (NEG, POS)]
        self.LAM = cols.block((n, D), 0, 1, integer=True)
        self.D = cols.block(m, 0, 1, integer=True)
        self.Y = [cols.block(len(self.tail[s]), 0, 1, integer=True) for s in (NEG, POS)]
        self.A = cols.block((m, F), -1, 1)
        self.B = cols.block(m, -1, 1)
        self.E = None if self.multivariate else cols.block((m, F), 0, 1, integer=True)
        lower, upper = np.concatenate(cols.lower), np.concatenate(cols.upper)
        cost, integer = np.concatenate(cols.cost), np.concatenate(cols.integer)
        lower[self.D[0]] = 1.0                                   # the root is active
        for s in (NEG, POS):                                     # (17)-(18): errors
            terminal = self.head[s] >= m
            wrong = self.y[:, None] != (self.head[s][terminal] - m)[None, :]
            cost[self.Z[s][:, terminal]] = self.w[:, None] * wrong
        cost[self.D[1:]] = self.penalty                          # (18): regularisation

        I = np.arange(n)[:, None]
        ones = np.ones(1, dtype=np.int64)
        # (1) flow conservation into every node
        entries = [(I * m + np.arange(m), self.W[s], 1.0) for s in (NEG, POS)]
        for s in (NEG, POS):
            k = np.flatnonzero(self.head[s] < m)
            entries.append((I * m + self.head[s][k], self.Z[s][:, k], -1.0))
        source = np.zeros(n * m)
        source[::m] = 1.0
        rows.add(n * m, entries, source, source)
        # (2)-(3) each side's flow leaves along its arcs
        for s in (NEG, POS):
            rows.add(n * m, [(I * m + np.arange(m), self.W[s], 1.0),
                             (I * m + self.tail[s], self.Z[s], -1.0)], 0.0, 0.0)
        # (4)-(5) one side per row and layer, chosen by lam
        layer = sk.layer_of
        rows.add(n * D, [(I * D + layer, self.W[NEG], 1.0),
                         (I * D + np.arange(D), self.LAM, 1.0)], -np.inf, 1.0)
        rows.add(n * D, [(I * D + layer, self.W[POS], 1.0),
                         (I * D + np.arange(D), self.LAM, -1.0)], -np.inf, 0.0)
        # (6) an active node has one arc per side
        for s in (NEG, POS):
            rows.add(m, [(self.tail[s], self.Y[s], 1.0), (np.arange(m), self.D, -1.0)], 0, 0)
        # (7) an active node other than the root has an incoming arc
        entries = [(np.arange(m - 1), self.D[1:], 1.0)]
        for s in (NEG, POS):
            k = np.flatnonzero(self.head[s] < m)
            entries.append((self.head[s][k] - 1, self.Y[s][k], -1.0))
        rows.add(m - 1, entries, -np.inf, 0.0)
        # (8) arcs only into active nodes, never both sides into the same one
        pairs = self._pairs()
        entries, bound = [], np.zeros(len(pairs))
        for r, (u, v) in enumerate(pairs):
            for s in (NEG, POS):
                if (u, v) in self.arc[s]:
                    entries.append((r * ones, self.Y[s][self.arc[s][u, v]] * ones, 1.0))
            if v < m:
                entries.append((r * ones, self.D[v] * ones, -1.0))
            else:
                bound[r] = 1.0
        rows.add(len(pairs), entries, -np.inf, bound)
        # (9)-(10) flow only along used arcs
        for s in (NEG, POS):
            A_s = len(self.tail[s])
            local = I * A_s + np.arange(A_s)
            rows.add(n * A_s, [(local, self.Z[s], 1.0), (local, self.Y[s][None, :], -1.0)],
                     -np.inf, 0.0)
        # (11) the negative side links to a smaller slot than the positive side
        entries = []
        for r, (u, v) in enumerate(zip(self.tail[NEG], self.head[NEG])):
            k = np.flatnonzero((self.tail[POS] == u) & (self.head[POS] <= v))
            entries += [(r * ones, self.Y[NEG][r] * ones, 1.0), (r, self.Y[POS][k], 1.0)]
        rows.add(len(self.tail[NEG]), entries, -np.inf, 1.0)
        # (12) in-degrees never increase along a layer
        sym = self._in_degree_pairs()
        self.symmetry_rows = np.arange(rows.count, rows.count + len(sym), dtype=np.int32)
        entries = []
        for r, (u, v) in enumerate(sym):
            for s in (NEG, POS):
                entries += [(r, self.Y[s][self.head[s] == u], 1.0),
                            (r, self.Y[s][self.head[s] == v], -1.0)]
        rows.add(len(sym), entries, 0.0, np.inf)
        # (13)-(14) big-M hyperplane constraints with a tight M per row
        spread = self.scaled.sum(axis=1) if self.multivariate else self.scaled.max(axis=1,
                                                                                 initial=0.0)
        m_neg, m_pos = spread + EPSILON + 1.0, spread + 1.0
        ii, jj = np.nonzero(self.scaled)
        xv = self.scaled[ii, jj]
        u = np.arange(m)[:, None]
        local = I * m + np.arange(m)
        rows.add(n * m, [(ii[None, :] * m + u, self.A[u, jj[None, :]], xv[None, :]),
                         (local, self.B[None, :], -1.0),
                         (local, self.W[NEG], m_neg[:, None])],
                 -np.inf, np.repeat(m_neg - EPSILON, m))
        rows.add(n * m, [(ii[None, :] * m + u, self.A[u, jj[None, :]], -xv[None, :]),
                         (local, self.B[None, :], 1.0),
                         (local, self.W[POS], m_pos[:, None])],
                 -np.inf, np.repeat(m_pos, m))
        # (15)-(16) univariate: one feature per node carries the coefficient
        if self.E is not None:
            rows.add(m, [(np.arange(m)[:, None], self.E, 1.0)], 1.0, 1.0)
            local = np.arange(m * F).reshape(m, F)
            for sign in (1.0, -1.0):
                rows.add(m * F, [(local, self.A, sign), (local, self.E, -1.0)], -np.inf, 0.0)
        # (19) demographic parity between the two groups, for every class
        group = self.constraints.group
        if group is not None:
            share = np.where(group, self.w / self.w[group].sum(), -self.w / self.w[~group].sum())
            entries = []
            for s in (NEG, POS):
                k = np.flatnonzero(self.head[s] >= m)
                entries.append((self.head[s][k] - m, self.Z[s][:, k], share[:, None]))
            tolerance = self.constraints.tolerance
            rows.add(K, entries, -tolerance, tolerance)
        # (20) minimum flow through every active node but the root
        if self.constraints.min_flow > 0:
            entries = [(np.arange(m - 1), self.D[1:], -self.constraints.min_flow)]
            for s in (NEG, POS):
                k = np.flatnonzero(self.head[s] < m)
                entries.append((self.head[s][k] - 1, self.Z[s][:, k], self.w[:, None]))
            rows.add(m - 1, entries, 0.0, np.inf)
        # parsimony: a budget of active nodes
        if self.constraints.max_active:
            rows.add(1, [(np.zeros(m, dtype=np.int64), self.D, 1.0)], -np.inf,
                     float(self.constraints.max_active))
        self._pass(cols.count, rows, lower, upper, cost, integer)

    def _pass(self, n_cols, rows: _Rows, lower, upper, cost, integer) -> None:
        r, c, v = np.concatenate(rows.r), np.concatenate(rows.c), np.concatenate(rows.v)
        order = np.lexsort((r, c))
        r, c, v = r[order], c[order], v[order]
        start = np.zeros(n_cols + 1, dtype=np.int32)
        np.cumsum(np.bincount(c, minlength=n_cols), out=start[1:])
        self.matrix = (start, r.astype(np.int32), v)
        self.row_lower = np.concatenate(rows.lower)
        self.row_upper = np.concatenate(rows.upper)
        self.col_lower, self.col_upper, self.cost = lower, upper, cost
        highs = _QuietHighs()
        highs.passModel(n_cols, rows.count, len(v), 1, 1, 0.0, cost, lower, upper,
                        self.row_lower, self.row_upper, start, r.astype(np.int32), v, integer)
        self.highs = highs

    def violation(self, x: np.ndarray) -> float:
        """Largest bound or row violation of column values x (0 when feasible)."""
        start, index, value = self.matrix
        columns = np.repeat(np.arange(len(x)), np.diff(start))
        activity = np.bincount(index, weights=value * x[columns], minlength=len(self.row_lower))
        return float(max(np.max(self.row_lower - activity, initial=0.0),
                         np.max(activity - self.row_upper, initial=0.0),
                         np.max(self.col_lower - x, initial=0.0),
                         np.max(x - self.col_upper, initial=0.0)))

    # ----------------------------------------------------- neighbourhoods
    def restrict(self, x: np.ndarray, freedom: np.ndarray) -> None:
        """Confine the model to a neighbourhood of the solution x (for `lns`).

        `freedom[u]` says what slot u may change.  OPEN: everything.  Any other
        slot keeps x's direction a (the feature of a univariate split) and can only
        drop out, not become active; SHIFTED: its threshold b and its arcs are
        free; REWIRED: its arcs are free (so that the layer below can get other
        parents and new active nodes), b stays; FIXED: b stays and its arcs can
        only drop out.  At a hyperplane that stays whole each row's side is known;
        bounding the other side's flow by 0 tells the LP relaxation so, which the
        big-M rows alone do not.  The in-degree order (12) is lifted: with
        hyperplanes fixed on their slots it would forbid diagrams that are a
        renumbering away from allowed ones, and the caller renumbers every solution
        by decoding it and taking its `warm_start`.  `release` undoes all of this.
        """
        lower, upper = self.col_lower.copy(), self.col_upper.copy()
        kept = np.flatnonzero(freedom < OPEN)
        direction = [self.A[kept].ravel()] + ([] if self.E is None else [self.E[kept].ravel()])
        for columns in direction + [self.B[freedom < SHIFTED]]:
            lower[columns] = upper[columns] = x[columns]
        upper[self.D[kept]] = x[self.D[kept]]
        for s in (NEG, POS):
            arcs = np.flatnonzero(freedom[self.tail[s]] == FIXED)
            upper[self.Y[s][arcs]] = x[self.Y[s][arcs]]
        whole = np.flatnonzero(freedom < SHIFTED)
        projection = self.scaled @ x[self.A[whole]].T
        b = x[self.B[whole]]
        upper[self.W[NEG][:, whole][projection > b - EPSILON + TOLERANCE]] = 0.0
        upper[self.W[POS][:, whole][projection < b - TOLERANCE]] = 0.0
        self._set_bounds(lower, upper, -np.inf, np.inf)

    def release(self) -> None:
        """Back to the full model after `restrict`."""
        self._set_bounds(self.col_lower, self.col_upper, self.row_lower[self.symmetry_rows],
                         self.row_upper[self.symmetry_rows])

    def _set_bounds(self, lower, upper, symmetry_lower, symmetry_upper) -> None:
        columns = np.arange(len(lower), dtype=np.int32)
        self.highs.changeColsBounds(len(columns), columns, lower, upper)
        rows = self.symmetry_rows
        count = len(rows)
        self.highs.changeRowsBounds(count, rows, np.broadcast_to(symmetry_lower, count).copy(),
                                    np.broadcast_to(symmetry_upper, count).copy())

    # --------------------------------------------------------- warm start
    def _slots(self, diagram: Diagram) -> tuple[dict[int, int], dict[int, int]] | None:
        """Slot of each node and the side (NEG/POS) its left branch takes, or None."""
        m, sk = self.skeleton.n_internal, self.skeleton
        if diagram.depth > sk.depth or any(
                len(nodes) > sk.widths[l] for l, nodes in enumerate(diagram.layers)):
            return None
        slot: dict[int, int] = {}
        if sk.tree:
            slot[diagram.root] = 0
            for k in range(diagram.n_internal):
                internal = [c for c in diagram.children(k) if not diagram.is_terminal(c)]
                for position, c in enumerate(internal):
                    slot[c] = 2 * slot[k] + 1 + position
        else:
            heads = np.concatenate([diagram.left, diagram.right])
            for l, nodes in enumerate(diagram.layers):
                by_degree = sorted(nodes, key=lambda k: -int((heads == k).sum()))
                slot.update({k: sk.starts[l] + r for r, k in enumerate(by_degree)})
        for c in range(self.K):
            slot[diagram.terminal(c)] = m + c
        left_side = {}
        for k in range(diagram.n_internal):
            a, b = (slot[c] for c in diagram.children(k))
            left_side[k] = NEG if a < b else POS
            if a == b:
                return None
        return slot, left_side

    def warm_start(self, diagram: Diagram) -> np.ndarray | None:
        """Column values of a diagram, or None.

        None when the diagram does not fit the skeleton or the MILP cannot represent
        one of its tests (a multivariate test in a univariate model, scaled values
        closer than ε); the result is checked against every constraint.
        """
        if not diagram.n_internal or (self.E is not None and any(
                diagram.terms(k) for k in range(diagram.n_internal))):
            return None
        placed = self._slots(diagram)
        if placed is None:
            return None
        slot, left_side = placed
        x = np.zeros(len(self.col_lower))
        if self.E is not None:
            x[self.E[:, 0]] = 1.0  # inactive slots pick any one feature
        at = np.full(len(self.y), diagram.root)
        for k in range(diagram.n_internal):
            u = slot[k]
            rows = np.flatnonzero(at == k)
            holds = diagram.projection(k, self.X[rows]) <= diagram.threshold[k]
            hyperplane = self._hyperplane(diagram, k, rows, holds, left_side[k])
            if hyperplane is None:
                return None
            x[self.D[u]] = 1.0
            x[self.A[u]], x[self.B[u]] = hyperplane
            if self.E is not None and hyperplane[0].any():
                x[self.E[u, 0]], x[self.E[u, int(np.argmax(np.abs(hyperplane[0])))]] = 0.0, 1.0
            for branch, child in zip((True, False), diagram.children(k)):
                side = left_side[k] if branch else 1 - left_side[k]
                arc = self.arc[side].get((u, slot[child]))
                if arc is None:
                    return None
                x[self.Y[side][arc]] = 1.0
                going = rows[holds == branch]
                x[self.W[side][going, u]] = 1.0
                x[self.Z[side][going, arc]] = 1.0
                x[self.LAM[going, self.skeleton.layer_of[u]]] = side
                at[going] = child
        return x if self.violation(x) <= TOLERANCE else None

    def _direction(self, diagram: Diagram, k: int) -> np.ndarray:
        """Node k's test on the scaled features: it holds where `scaled @ d` is small
        (zero for a constant test)."""
        if diagram.is_univariate(k):
            direction = np.zeros(self.X.shape[1])
            direction[diagram.feature[k]] = 1.0
        else:
            direction = diagram.weights[k] * self.scaling.span
        return np.where(self.scaling.span > 0, direction, 0.0)

    def _hyperplane(self, diagram: Diagram, k: int, rows, holds, left_side: int):
        """(a, b) putting node k's rows on their MILP sides, or None.

        The negative side needs `a.x <= b - ε`, the positive one `a.x >= b`.  The
        direction is scaled up as far as |a_j| <= 1 and b in [-1, 1] allow, which
        widens the margin between the sides (HiGHS returns multivariate tests with
        coefficients near 1e-3 and a margin of ε within its tolerance), and b sits
        in the middle of the margin; a margin narrower than ε by `TOLERANCE` still
        counts.  A side without rows makes a constant test (a = 0).
        """
        negative = holds if left_side == NEG else ~holds
        direction = self._direction(diagram, k)
        if negative.all() or not negative.any() or not direction.any():
            return np.zeros_like(direction), 1.0 if negative.all() else -1.0
        a = direction if left_side == NEG else -direction
        projection = self.scaled[rows] @ a
        low, high = projection[negative].max(), projection[~negative].min()
        limits = [1.0 / np.abs(a).max()]  # |a_j| <= 1; room for b within [-1, 1]:
        if low > 0:
            limits.append((1.0 - EPSILON) / low)
        if high < 0:
            limits.append(-1.0 / high)
        scale = min(limits)
        a, low, high = a * scale, low * scale, high * scale
        b = min(max((low + high + EPSILON) / 2, low + EPSILON, -1.0), high, 1.0)
        return (a, b) if b >= max(low + EPSILON - TOLERANCE, -1.0) else None

    # -------------------------------------------------------------- solve
    def solve(self, time_limit: float | None, should_stop: Callable[[], bool],
              start: np.ndarray | None = None, cutoff: float | None = None,
              on_solution: Callable[[np.ndarray, float, float], None] | None = None,
              seed: int = 0) -> MilpOutcome:
        """Run HiGHS; `on_solution(values, objective, dual_bound)` sees each incumbent.

        The model may be solved again (with other bounds, see `restrict`) once a
        `solve` has returned without being stopped; the options and callbacks of
        the earlier run are replaced.

        HiGHS runs in a helper thread while this one hands its incumbents to
        `on_solution` (so callers never see two threads) and polls `should_stop`.
        HiGHS checks its interrupt callback only between steps of its search,
        seconds apart while it separates cuts at the root, so a stop request makes
        `solve` return within `STOP_GRACE` seconds with the best incumbent so far;
        HiGHS, told to stop, then ends in the background (`wait_idle` joins it).
        So does a run that an exception leaves behind (one of `on_solution`, or
        Ctrl-C), instead of running on unstopped.
        """
        highs = self.highs
        highs.setOptionValue("mip_rel_gap", 0.0)
        highs.setOptionValue("mip_abs_gap", 1e-6 * max(1.0, float(self.w.sum())))
        highs.setOptionValue("random_seed", int(seed))
        highs.setOptionValue("time_limit", np.inf if time_limit is None
                             else max(float(time_limit), 1e-3))
        highs.setOptionValue("objective_bound", np.inf if cutoff is None else float(cutoff))
        if start is not None:
            highs.setSolution(len(start), np.arange(len(start), dtype=np.int32), start)
        highs.clearCallbacks()  # those of an earlier `solve` of this model
        stop = threading.Event()
        found: list[tuple[np.ndarray, float, float]] = []
        bound = [-np.inf]

        def interrupt(event):
            if stop.is_set():
                event.interrupt()

        def mip_interrupt(event):
            bound[0] = max(bound[0], float(event.data_out.mip_dual_bound))
            interrupt(event)

        highs.cbMipInterrupt.subscribe(mip_interrupt)
        for hook in (highs.cbSimplexInterrupt, highs.cbIpmInterrupt):
            hook.subscribe(interrupt)
        highs.cbMipImprovingSolution.subscribe(lambda e: found.append((
            np.array(e.data_out.mip_solution), float(e.data_out.objective_function_value),
            float(e.data_out.mip_dual_bound))))
        worker = threading.Thread(target=highs.run, name="orchard-highs", daemon=True)
        worker.start()
        best: list = [None, np.inf]
        stopped_at = None

        def drain():
            while found:
                values, objective, dual = found.pop(0)
                bound[0] = max(bound[0], dual)
                if objective < best[1]:
                    best[:] = [values, objective]
                if on_solution is not None:
                    on_solution(values, objective, dual)

        try:
            while worker.is_alive():
                worker.join(POLL)
                drain()
                if stopped_at is None and should_stop():
                    stop.set()
                    stopped_at = time.monotonic()
                if stopped_at is not None and time.monotonic() - stopped_at > STOP_GRACE:
                    return MilpOutcome("interrupted", best[0], best[1], bound[0])
        finally:
            if worker.is_alive():
                stop.set()
                _RUNNING.append(worker)
        drain()
        status = highs.getModelStatus()
        info = highs.getInfo()
        values, objective = best
        if info.primal_solution_status == 2:  # kSolutionStatusFeasible
            values = np.array(highs.getSolution().col_value)
            objective = float(info.objective_function_value)
        names = {highspy.HighsModelStatus.kOptimal: "optimal",
                 highspy.HighsModelStatus.kInfeasible: "infeasible",
                 highspy.HighsModelStatus.kTimeLimit: "time_limit",
                 highspy.HighsModelStatus.kInterrupt: "interrupted"}
        return MilpOutcome(names.get(status, highs.modelStatusToString(status)), values,
                           objective, max(bound[0], float(info.mip_dual_bound)))

    # ------------------------------------------------------------- decode
    def decode(self, x: np.ndarray, prep: Preprocessing) -> Diagram:
        """The diagram of a solution; thresholds in the feature matrix's own scale."""
        m, sk = self.skeleton.n_internal, self.skeleton
        active = [u for u in range(m) if x[self.D[u]] > 0.5]
        ids = {u: i for i, u in enumerate(active)}
        n_active = len(active)

        def target(side: int, u: int) -> int:
            k = np.flatnonzero((self.tail[side] == u) & (x[self.Y[side]] > 0.5))[0]
            v = int(self.head[side][k])
            return ids[v] if v < m else n_active + (v - m)

        F = self.X.shape[1]
        feature = np.full(n_active, -1)
        weights = np.zeros((n_active, F))
        threshold = np.zeros(n_active)
        left, right = np.zeros(n_active, dtype=np.int64), np.zeros(n_active, dtype=np.int64)
        draft = Diagram(sk.layer_of[active], feature, weights, threshold, left, right,
                        np.zeros((n_active + self.K, self.K)), prep)
        at = np.zeros(len(self.y), dtype=np.int64)
        for i, u in enumerate(active):
            negative, positive = target(NEG, u), target(POS, u)
            rows = np.flatnonzero(at == i)
            self._decode_test(draft, i, x[self.A[u]], float(x[self.B[u]]), rows,
                              negative, positive)
            holds = draft.projection(i, self.X[rows]) <= threshold[i]
            at[rows] = np.where(holds, left[i], right[i])
        return Diagram.build(draft.layer, feature, weights, threshold, left, right, prep,
                             self.X, self.y, self.w)

    def _decode_test(self, draft: Diagram, i: int, a: np.ndarray, b: float, rows,
                     negative: int, positive: int) -> None:
        """Fill node i's test and children; the left branch is where the test holds."""
        a = np.where((np.abs(a) > 1e-9) & (self.scaling.span > 0), a, 0.0)
        bound = b - EPSILON / 2  # the middle of the margin: negative iff a.x' <= bound
        draft.left[i], draft.right[i] = negative, positive
        if not a.any():  # a constant test: every row to one side
            draft.threshold[i] = 0.0 if bound >= 0 else -1.0
            return
        if not self.multivariate:
            j = int(np.argmax(np.abs(a)))
            t = self.scaling.low[j] + self.scaling.span[j] * bound / a[j]
            values = self.X[rows, j]
            below, above = values[values <= t], values[values > t]
            if below.size and above.size:
                t = float((below.max() + above.min()) / 2)
            if a[j] < 0:  # small values on the positive side
                draft.left[i], draft.right[i] = positive, negative
            if draft.features[j].binary and not (below.size and above.size or 0 <= t < 1):
                small = draft.left[i]  # 0 and 1 both go one way: a constant test
                draft.left[i], draft.right[i] = negative, positive
                draft.threshold[i] = 0.0 if (t >= 1) == (small == negative) else -1.0
                return
            draft.feature[i] = j
            draft.threshold[i] = 0.5 if draft.features[j].binary else t
            return
        a, bound = self._sparser(a, bound, rows)
        span = np.where(self.scaling.span > 0, self.scaling.span, 1.0)
        draft.weights[i] = a / span
        draft.threshold[i] = bound + float(np.sum(a * self.scaling.low / span))
        projection = draft.projection(i, self.X[rows])
        below = projection[projection <= draft.threshold[i]]
        above = projection[projection > draft.threshold[i]]
        if below.size and above.size:
            middle = (below.max() + above.min()) / 2
            if below.max() <= middle < above.min():
                draft.threshold[i] = middle

    def _sparser(self, a: np.ndarray, bound: float, rows) -> tuple[np.ndarray, float]:
        """Drop the coefficients HiGHS left near zero when the rows still separate.

        Solutions carry residues like 2e-6 on features that play no part; they make
        the test unreadable.  Coefficients below 1e-3 of the largest are dropped if
        the node's training rows keep their sides (a new bound between them).
        """
        negative = self.scaled[rows] @ a <= bound
        sparse = np.where(np.abs(a) >= 1e-3 * np.abs(a).max(), a, 0.0)
        projection = self.scaled[rows] @ sparse
        if negative.all() or not negative.any():
            return a, bound
        low, high = projection[negative].max(), projection[~negative].min()
        return (sparse, float((low + high) / 2)) if low < high else (a, bound)

    def terminal_classes(self, x: np.ndarray) -> np.ndarray:
        """Class of the terminal each row reaches according to the MILP's flows."""
        m = self.skeleton.n_internal
        reached = np.full(len(self.y), -1)
        for s in (NEG, POS):
            k = np.flatnonzero(self.head[s] >= m)
            flow = x[self.Z[s][:, k]]
            rows, arcs = np.nonzero(flow > 0.5)
            reached[rows] = self.head[s][k][arcs] - m
        return reached
