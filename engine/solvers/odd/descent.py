"""Node-by-node descent on a diagram: the best test and arcs of one node at a time.

Tree alternating optimisation (Carreira-Perpiñán and Tavallali, NeurIPS 2018)
improves a tree by re-optimising one node while the rest stays fixed: the rows
that reach the node are fixed by the nodes above it, and where each row would end
if sent to each child is fixed by the nodes below.  In a diagram the same holds,
and the node may also re-choose its arcs: any active node of the next layer (a
tree skeleton: its own child) or any class terminal, on each side.  So for one
node the exact best (feature, threshold, left target, right target) under
objective (18) is a scan of each feature's sorted values with prefix sums of
"row r ends correct through target t"; an arc change that leaves a node
unreachable also saves that node's cost.

`descend` sweeps the nodes bottom-up, layer by layer, applying every strict
improvement, until a sweep brings none, the time is up or a stop is requested.
Its tests are the MILP's (midpoints between values at least 2ε apart in the
[0, 1] scale) and it never sends both sides of a node to one child, so its
diagram stays a valid start for the MILP step.  Why it helps: the LNS's sub-MILPs
re-optimise whole layers but HiGHS often cannot finish them within their seconds
on a few hundred rows, while this scan takes milliseconds; the two find different
improvements.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engine.model.diagram import Diagram
from engine.solvers.odd.common import EPSILON, Scaling, Skeleton

DESCENT_SHARE = 0.25          # of the time left when the descent starts ...
DESCENT_CAP = 10.0            # ... and at most this many seconds
DESCENT_CELLS = 5_000_000     # most rows x arc targets (its matrices are that large)
MAX_SWEEPS = 100              # a bound that exact arithmetic never needs (each move
                              # gains a tolerance) but rounding might


class _State:
    """A diagram's univariate nodes as mutable arrays (terminal of class c: m + c).

    The rows reaching each node and where each row ends from each node change only
    with a move, so they are computed once per move, not once per node visited."""

    def __init__(self, diagram: Diagram, X: np.ndarray, y: np.ndarray):
        self.X, self.y = X, y
        self.m, self.K = diagram.n_internal, diagram.n_classes
        self.layer = diagram.layer.astype(np.int64)
        self.feature = diagram.feature.astype(np.int64)
        self.threshold = diagram.threshold.astype(np.float64)
        self.left = diagram.left.astype(np.int64)
        self.right = diagram.right.astype(np.int64)
        self.root = diagram.root
        self.active = np.ones(self.m, dtype=bool)
        self._reached: list[np.ndarray] | None = None
        self._correct: np.ndarray | None = None

    def move(self, k: int, feature: int, threshold: float, a: int, b: int) -> None:
        """Give node k this test and arcs; drop the nodes it leaves unreachable."""
        self.active &= self.reachable(k, a, b)
        self.feature[k], self.threshold[k], self.left[k], self.right[k] = \
            feature, threshold, a, b
        self._reached = self._correct = None

    def goes_left(self, k: int, rows=slice(None)) -> np.ndarray:
        return self.X[rows, self.feature[k]] <= self.threshold[k]

    def reached(self) -> list[np.ndarray]:
        """The rows that reach each node (nodes are numbered in layer order)."""
        if self._reached is not None:
            return self._reached
        at = np.full(len(self.y), self.root)
        rows = []
        for k in range(self.m):
            here = np.flatnonzero(at == k) if self.active[k] else np.zeros(0, np.int64)
            rows.append(here)
            if here.size:
                at[here] = np.where(self.goes_left(k, here), self.left[k], self.right[k])
        self._reached = rows
        return rows

    def correct(self) -> np.ndarray:
        """correct[t, r]: row r ends at its own class when it starts at node t."""
        if self._correct is not None:
            return self._correct
        ends = np.empty((self.m + self.K, len(self.y)), dtype=np.int64)
        ends[self.m:] = np.arange(self.K)[:, None]
        for k in reversed(range(self.m)):
            if self.active[k]:
                ends[k] = np.where(self.goes_left(k), ends[self.left[k]], ends[self.right[k]])
        self._correct = ends == self.y[None, :]
        return self._correct

    def reachable(self, k: int, a: int, b: int) -> np.ndarray:
        """Active nodes reachable from the root if node k's arcs were (a, b)."""
        seen = np.zeros(self.m, dtype=bool)
        stack = [self.root]
        while stack:
            u = stack.pop()
            if u >= self.m or seen[u]:
                continue
            seen[u] = True
            stack.extend((a, b) if u == k else (self.left[u], self.right[u]))
        return seen


def descend(diagram: Diagram, X: np.ndarray, y: np.ndarray, w: np.ndarray,
            skeleton: Skeleton, penalty: float,
            should_stop: Callable[[], bool]) -> Diagram | None:
    """`diagram` improved node by node (see the module docstring), or None when no
    node improved before the end or a stop, or the diagram has a multivariate test."""
    if not diagram.n_internal or (diagram.feature < 0).any():
        return None
    state = _State(diagram, X, y)
    scaled = Scaling.fit(X).apply(X)
    tolerance = 1e-6 * max(1.0, float(w.sum()))
    improved, swept = False, True
    for _ in range(MAX_SWEEPS):
        if not swept:
            break
        swept = False
        for k in sorted(range(state.m), key=lambda k: (-state.layer[k], k)):
            if should_stop():
                swept = False
                break
            if state.active[k] and _improve(state, k, scaled, w, skeleton, penalty,
                                            tolerance, should_stop):
                swept = improved = True
    return _diagram(state, diagram, X, y, w) if improved else None


def _targets(state: _State, k: int, skeleton: Skeleton) -> tuple[list[int], list[int]]:
    """What node k's left and right arcs may reach."""
    terminals = list(range(state.m, state.m + state.K))
    if skeleton.tree:
        return ([state.left[k]] if state.left[k] < state.m else []) + terminals, \
               ([state.right[k]] if state.right[k] < state.m else []) + terminals
    below = [u for u in range(state.m) if state.active[u]
             and state.layer[u] == state.layer[k] + 1]
    return below + terminals, below + terminals


def _costs(state: _State, k: int, lefts: list[int], rights: list[int],
           penalty: float) -> np.ndarray:
    """cost[i, j]: the node cost of the diagram if node k's arcs were (lefts[i],
    rights[j]); infinite where both reach one child, which (8) forbids.  Only the
    decision nodes among the two targets matter, so each pair of them is counted once."""
    cost = {}

    def of(a: int, b: int) -> float:
        key = (min(a, state.m), min(b, state.m))
        if key not in cost:
            cost[key] = penalty * (np.count_nonzero(state.reachable(k, a, b)) - 1)
        return cost[key]

    return np.array([[np.inf if a == b else of(a, b) for b in rights] for a in lefts])


def _improve(state: _State, k: int, scaled: np.ndarray, w: np.ndarray,
             skeleton: Skeleton, penalty: float, tolerance: float,
             should_stop: Callable[[], bool]) -> bool:
    """Give node k its best test and arcs if that beats the current ones by more
    than `tolerance`; False as well when a stop comes first."""
    rows = state.reached()[k]
    lefts, rights = _targets(state, k, skeleton)
    union = sorted(set(lefts) | set(rights))
    column = {t: i for i, t in enumerate(union)}
    li, ri = [column[t] for t in lefts], [column[t] for t in rights]
    gain = (state.correct()[union][:, rows] * w[rows][None, :]).T   # rows x targets
    total = gain.sum(axis=0)
    cost = _costs(state, k, lefts, rights, penalty)
    holds = state.goes_left(k, rows)
    best = (gain[holds, column[state.left[k]]].sum()
            + gain[~holds, column[state.right[k]]].sum()
            - cost[lefts.index(state.left[k]), rights.index(state.right[k])] + tolerance)
    choice = None
    for j in range(state.X.shape[1]):
        if should_stop():
            return False
        order = np.argsort(state.X[rows, j], kind="stable")
        cuts = np.flatnonzero(np.diff(scaled[rows[order], j]) >= 2 * EPSILON) + 1
        if not cuts.size:
            continue
        below = np.cumsum(gain[order], axis=0)[cuts - 1]              # cuts x targets
        above = total[ri][None, :] - below[:, ri]
        for a in range(len(lefts)):   # one left target at a time: cuts x rights
            score = below[:, li[a], None] + above - cost[a][None, :]
            p, b = np.unravel_index(int(np.argmax(score)), score.shape)
            if score[p, b] > best:
                best = score[p, b]
                low, high = state.X[rows[order[cuts[p] - 1]], j], state.X[rows[order[cuts[p]]], j]
                choice = (j, float((low + high) / 2), lefts[a], rights[b])
    if choice is None:
        return False
    state.move(k, *choice)
    return True


def _diagram(state: _State, original: Diagram, X, y, w) -> Diagram:
    """The state's active nodes as a diagram, renumbered in layer order."""
    keep = np.flatnonzero(state.active)
    m = len(keep)
    index = {int(u): i for i, u in enumerate(keep)}

    def child(t: int) -> int:
        return index[t] if t < state.m else m + (t - state.m)

    return Diagram.build(state.layer[keep], state.feature[keep],
                         np.zeros((m, X.shape[1])), state.threshold[keep],
                         [child(int(t)) for t in state.left[keep]],
                         [child(int(t)) for t in state.right[keep]], original.prep,
                         X, y, w, root=index[state.root])
