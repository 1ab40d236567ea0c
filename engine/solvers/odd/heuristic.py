"""Step 1 of Florio et al. (AAAI-23): a good diagram quickly, to warm-start the MILP.

One construction goes top-down through the skeleton.  Each node takes the
univariate split of least weighted entropy (the largest information gain) among
the splits the MILP can represent (scaled values at least 2ε apart).  The two
flows leaving each node of layer l either end at the terminal of their majority
class (pure flows, the last layer, flows lighter than `min_flow`) or go on to a
node of layer l+1: while there are more flows than the layer's width, the pair
whose union loses the least information gain is merged, never two flows out of
the same node (its two arcs would reach one child, which (8) forbids).  In a tree
skeleton nothing is merged.  Bottom-up pruning then removes any node linked only
to terminals whose removal does not worsen objective (18) (ties prune, so that no
node sends both sides to one terminal), and enforces the node budget.

`run` repeats the construction, the first time with every feature and then on
random 60% subsets of the features at each split, for a number of restarts or a
time budget, and keeps the best objective.  The random generator is seeded, so a
given seed and number of restarts always gives the same diagram.  Every distinct
construction is kept too (`constructions`): they are the starts of the descent
step (`descent`), which often takes a worse construction further than the best.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from engine.data.preprocessing import Preprocessing
from engine.model.diagram import Diagram
from engine.solvers.odd.common import EPSILON, Scaling, SideConstraints, Skeleton

FEATURE_SHARE = 0.6
LEFT, RIGHT = 0, 1


def _terminal(c: int) -> int:
    """Child code of the terminal of class c (internal nodes are >= 0)."""
    return -1 - c


@dataclass
class _Node:
    layer: int
    rows: np.ndarray
    feature: int = -1          # -1: a constant test sending every row left
    threshold: float = 0.0
    side_rows: list = field(default_factory=list)   # rows going [left, right]
    children: list = field(default_factory=lambda: [None, None])  # node id or terminal code
    parents: list = field(default_factory=list)     # (parent, side) arcs into the node
    alive: bool = True


@dataclass
class _Flow:
    parent: int
    side: int
    rows: np.ndarray


def _xlogx(v: np.ndarray) -> np.ndarray:
    return np.where(v > 0, v * np.log(np.where(v > 0, v, 1.0)), 0.0)


def _entropy(counts: np.ndarray) -> np.ndarray:
    """Weight times entropy of class-weight rows: sum_c -n_c log(n_c / n)."""
    return _xlogx(counts.sum(axis=-1)) - _xlogx(counts).sum(axis=-1)


class OddHeuristic:
    def __init__(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int,
                 skeleton: Skeleton, alpha: float, constraints: SideConstraints,
                 seed: int = 0):
        self.X, self.y, self.w = X, y, w
        self.K = n_classes
        self.skeleton = skeleton
        self.constraints = constraints
        self.scaled = Scaling.fit(X).apply(X)
        self.order = np.argsort(self.scaled, axis=0, kind="stable").T  # per feature
        self.class_weight = np.zeros((len(y), n_classes))
        self.class_weight[np.arange(len(y)), y] = w
        self.penalty = skeleton.penalty(alpha, float(w.sum()))
        self.rng = np.random.default_rng(seed)
        self._shapes: dict[bytes, tuple[float, tuple]] = {}  # distinct constructions

    # ------------------------------------------------------------ pieces
    def _counts(self, rows: np.ndarray) -> np.ndarray:
        return self.class_weight[rows].sum(axis=0)

    def _wrong(self, rows: np.ndarray, c: int) -> float:
        """Weight of `rows` misclassified by the terminal of class c."""
        return float(self.w[rows].sum() - self.class_weight[rows, c].sum())

    def _majority(self, rows: np.ndarray) -> int:
        return int(np.argmax(self._counts(rows)))

    def _features(self, randomised: bool) -> np.ndarray:
        n_features = self.X.shape[1]
        if not randomised:
            return np.arange(n_features)
        k = max(1, round(FEATURE_SHARE * n_features))
        return np.sort(self.rng.choice(n_features, k, replace=False))

    def best_split(self, rows: np.ndarray, features: np.ndarray):
        """(feature, threshold) of least child entropy, or None if nothing splits."""
        member = np.zeros(len(self.y), dtype=bool)
        member[rows] = True
        total = self._counts(rows)
        best, choice = np.inf, None
        for j in features:
            index = self.order[j][member[self.order[j]]]
            cuts = np.flatnonzero(np.diff(self.scaled[index, j]) >= 2 * EPSILON)
            if not cuts.size:
                continue
            below = np.cumsum(self.class_weight[index], axis=0)[cuts]
            score = _entropy(below) + _entropy(total - below)
            p = int(np.argmin(score))
            if score[p] < best - 1e-12:
                best = score[p]
                low, high = self.X[index[cuts[p]], j], self.X[index[cuts[p] + 1], j]
                choice = (int(j), float((low + high) / 2))
        return choice

    # ------------------------------------------------------ construction
    def construct(self, randomised: bool) -> list[_Node]:
        nodes = [_Node(0, np.arange(len(self.y)))]
        current = [0]
        for layer in range(self.skeleton.depth):
            flows: list[_Flow] = []
            for u in current:
                if self._split(nodes, u, randomised):
                    flows += [_Flow(u, side, nodes[u].side_rows[side]) for side in (LEFT, RIGHT)]
            current = []
            if layer + 1 < self.skeleton.depth:
                open_flows = [f for f in flows if np.count_nonzero(self._counts(f.rows)) > 1]
                for group in self._merge(open_flows, self.skeleton.widths[layer + 1]):
                    rows = np.concatenate([f.rows for f in group])
                    if self.w[rows].sum() < self.constraints.min_flow:
                        continue
                    nodes.append(_Node(layer + 1, rows,
                                       parents=[(f.parent, f.side) for f in group]))
                    for f in group:
                        nodes[f.parent].children[f.side] = len(nodes) - 1
                    current.append(len(nodes) - 1)
            for f in flows:  # every flow not given to a node ends at its majority class
                if nodes[f.parent].children[f.side] is None:
                    nodes[f.parent].children[f.side] = _terminal(self._majority(f.rows))
        return nodes

    def _split(self, nodes: list[_Node], u: int, randomised: bool) -> bool:
        """Give node u its split; a node other than the root that cannot split goes."""
        node = nodes[u]
        choice = self.best_split(node.rows, self._features(randomised))
        if choice is None:
            if u != 0:
                self._collapse(nodes, u)
                return False
            node.side_rows = [node.rows, node.rows[:0]]
            return True
        node.feature, node.threshold = choice
        left = self.X[node.rows, node.feature] <= node.threshold
        node.side_rows = [node.rows[left], node.rows[~left]]
        return True

    def _merge(self, flows: list[_Flow], width: int) -> list[list[_Flow]]:
        """Group flows into at most `width` nodes, cheapest information loss first."""
        groups = [[f] for f in flows]
        if self.skeleton.tree:
            return groups
        counts = [self._counts(f.rows) for f in flows]
        while len(groups) > width:
            best, pair = np.inf, None
            for a in range(len(groups)):
                for b in range(a + 1, len(groups)):
                    if {f.parent for f in groups[a]} & {f.parent for f in groups[b]}:
                        continue
                    loss = (_entropy(counts[a] + counts[b]) - _entropy(counts[a])
                            - _entropy(counts[b]))
                    if loss < best - 1e-12:
                        best, pair = loss, (a, b)
            if pair is None:  # every pair shares a parent: end the cheapest group
                drop = min(range(len(groups)),
                           key=lambda g: counts[g].sum() - counts[g].max())
                del groups[drop], counts[drop]
                continue
            a, b = pair
            groups[a] += groups.pop(b)
            counts[a] = counts[a] + counts.pop(b)
        return groups

    # ------------------------------------------------------------ pruning
    def _collapse(self, nodes: list[_Node], u: int) -> None:
        """Remove node u: its parents send its rows to its majority class instead."""
        c = self._majority(nodes[u].rows)
        for parent, side in nodes[u].parents:
            nodes[parent].children[side] = _terminal(c)
        nodes[u].alive = False

    def _node_error(self, node: _Node) -> float:
        return sum(self._wrong(node.side_rows[s], -1 - node.children[s])
                   for s in (LEFT, RIGHT) if node.children[s] < 0)

    def prune(self, nodes: list[_Node]) -> None:
        budget = self.constraints.max_active
        while True:
            candidates = [u for u, node in enumerate(nodes)
                          if u and node.alive and max(node.children) < 0]
            if not candidates:
                break
            delta = {u: self._wrong(nodes[u].rows, self._majority(nodes[u].rows))
                     - self._node_error(nodes[u]) - self.penalty for u in candidates}
            u = min(candidates, key=lambda v: delta[v])
            over_budget = budget and sum(node.alive for node in nodes) > budget
            if delta[u] > 1e-9 * max(1.0, float(self.w.sum())) and not over_budget:
                break
            self._collapse(nodes, u)
        self._separate_root(nodes[0])

    def _separate_root(self, root: _Node) -> None:
        """The root must reach two different children: re-route its cheaper side."""
        if root.children[LEFT] != root.children[RIGHT] or self.K < 2:
            return
        c = -1 - root.children[LEFT]
        side, other = min(((s, k) for s in (LEFT, RIGHT) for k in range(self.K) if k != c),
                          key=lambda sk: self._wrong(root.side_rows[sk[0]], sk[1]))
        root.children[side] = _terminal(other)

    # ---------------------------------------------------------- results
    def objective(self, nodes: list[_Node]) -> float:
        alive = [node for node in nodes if node.alive]
        return sum(map(self._node_error, alive)) + self.penalty * (len(alive) - 1)

    def _shape(self, nodes: list[_Node]) -> tuple:
        """The alive nodes as (layer, feature, threshold, left, right) arrays in
        layer order, terminals numbered after the nodes (a diagram's numbering)."""
        alive = sorted((u for u, node in enumerate(nodes) if node.alive),
                       key=lambda u: (nodes[u].layer, u))
        ids = {u: i for i, u in enumerate(alive)}
        m = len(alive)

        def child(code: int) -> int:
            return ids[code] if code >= 0 else m + (-1 - code)

        return (np.array([nodes[u].layer for u in alive], dtype=np.int32),
                np.array([nodes[u].feature for u in alive], dtype=np.int32),
                np.array([nodes[u].threshold for u in alive]),
                np.array([child(nodes[u].children[LEFT]) for u in alive], dtype=np.int32),
                np.array([child(nodes[u].children[RIGHT]) for u in alive], dtype=np.int32))

    def _diagram(self, shape: tuple, prep: Preprocessing) -> Diagram:
        layer, feature, threshold, left, right = shape
        return Diagram.build(layer, feature, np.zeros((len(layer), self.X.shape[1])),
                             threshold, left, right, prep, self.X, self.y, self.w)

    def constructions(self, prep: Preprocessing):
        """The distinct diagrams `run` constructed, least objective first (built one
        at a time: a pool of diagrams of 10,000 features each would be large)."""
        for _, shape in sorted(self._shapes.values(), key=lambda item: item[0]):
            yield self._diagram(shape, prep)

    def run(self, prep: Preprocessing, restarts: int, seconds: float,
            should_stop: Callable[[], bool],
            on_improve: Callable[[Diagram, float], None] | None = None
            ) -> tuple[Diagram, float, int]:
        """Best diagram of up to `restarts` constructions within `seconds`.

        Returns the diagram, its objective and the number of constructions made;
        the first construction always completes.
        """
        deadline = time.monotonic() + seconds
        best, best_objective, done = None, np.inf, 0
        while done < restarts and (done == 0 or (time.monotonic() < deadline
                                                 and not should_stop())):
            nodes = self.construct(randomised=done > 0)
            self.prune(nodes)
            done += 1
            objective = self.objective(nodes)
            shape = self._shape(nodes)
            self._shapes.setdefault(b"".join(a.tobytes() for a in shape), (objective, shape))
            if objective < best_objective - 1e-9:
                best, best_objective = self._diagram(shape, prep), objective
                if on_improve is not None:
                    on_improve(best, best_objective)
        return best, float(best_objective), done
