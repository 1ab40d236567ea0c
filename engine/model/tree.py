"""The decision tree every tree solver returns: flat arrays plus what they mean.

Node 0 is the root.  An internal node sends a row to `left` when
`x[feature] <= threshold`, else to `right`; binary features use threshold 0.5, so
their right branch is where the feature's test holds.  `value` holds the training
weight of each class at every node (for display and rule confidence) and `label`
the class a node predicts, so empty leaves still predict something sensible.  A
regression tree (`prep.task`) holds each node's training weight, mean target (what
it predicts) and squared error in `value` (three columns) instead; its `label` is 0.
The tree keeps the `Preprocessing` it was trained through, which lets it predict on
raw tables and be saved and reloaded as one JSON document.  A tree edited by hand
lists its edits (`edits`), which its JSON and exports repeat (`edit_note`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from engine.data.features import Feature
from engine.data.preprocessing import Preprocessing
from engine.errors import DataError

FORMAT = "orchard-tree"
FORMAT_VERSION = 1


@dataclass
class Tree:
    feature: np.ndarray    # int32[m], -1 at leaves
    threshold: np.ndarray  # float64[m]
    left: np.ndarray       # int32[m], -1 at leaves
    right: np.ndarray      # int32[m], -1 at leaves
    value: np.ndarray      # float64[m, n_classes]
    label: np.ndarray      # int32[m]
    prep: Preprocessing
    edits: tuple[str, ...] = ()   # what was changed by hand, in order (engine.editing)

    @classmethod
    def from_arrays(cls, feature, threshold, left, right, value,
                    prep: Preprocessing) -> Tree:
        """Tree from solver arrays; each node predicts its majority class (regression:
        `value` rows of weight, mean and squared error; a node predicts its mean).

        A node without training weight predicts its parent's class or mean (ties
        between classes go to the smallest class index).
        """
        feature = np.asarray(feature, dtype=np.int32)
        left = np.asarray(left, dtype=np.int32)
        right = np.asarray(right, dtype=np.int32)
        value = np.array(value, dtype=np.float64).reshape(len(feature), -1)
        if prep.regression:
            label = np.zeros(len(feature), dtype=np.int32)
            for node in range(len(feature)):  # parents come before children
                for child in (left[node], right[node]):
                    if child >= 0 and value[child, 0] == 0:
                        value[child, 1] = value[node, 1]
            return cls(feature, np.asarray(threshold, dtype=np.float64), left, right,
                       value, label, prep)
        label = np.argmax(value, axis=1).astype(np.int32)
        for node in range(len(feature)):  # parents come before children
            for child in (left[node], right[node]):
                if child >= 0 and value[child].sum() == 0:
                    label[child] = label[node]
        return cls(feature, np.asarray(threshold, dtype=np.float64), left, right,
                   value, label, prep)

    @classmethod
    def leaf(cls, class_weights: np.ndarray, prep: Preprocessing) -> Tree:
        return cls.from_arrays([-1], [0.0], [-1], [-1], [class_weights], prep)

    # ----------------------------------------------------------- structure
    @property
    def features(self) -> list[Feature]:
        return self.prep.features

    @property
    def class_names(self) -> list[str]:
        return self.prep.class_names

    @property
    def n_nodes(self) -> int:
        return len(self.feature)

    @property
    def regression(self) -> bool:
        return self.prep.regression

    @property
    def node_weights(self) -> np.ndarray:
        """The training weight reaching each node."""
        return self.value[:, 0].copy() if self.regression else self.value.sum(axis=1)

    @property
    def node_errors(self) -> np.ndarray:
        """Each node's training error were it a leaf: its misclassified weight, or its
        squared error in regression."""
        if self.regression:
            return self.value[:, 2].copy()
        return self.value.sum(axis=1) - self.value[np.arange(self.n_nodes), self.label]

    @property
    def predicted(self) -> np.ndarray:
        """What each node predicts: a class index, or a regression's mean."""
        return self.value[:, 1].copy() if self.regression else self.label.astype(np.int64)

    def is_leaf(self, node: int) -> bool:
        return self.feature[node] < 0

    @property
    def n_leaves(self) -> int:
        return int((self.feature < 0).sum())

    def pruned(self, leaf_penalty: float) -> Tree:
        """The pruning of this tree with the least training error + leaf_penalty x
        leaves (minimal cost-complexity pruning at one penalty, from the class weights
        every node keeps): how a greedy tree meets a cost per leaf.  A split that does
        not pay for its extra leaf becomes a leaf (ties too: the smaller tree)."""
        n = self.n_nodes
        leaf_cost = self.node_errors + leaf_penalty
        cost, cut = leaf_cost.copy(), self.feature < 0
        for node in range(n - 1, -1, -1):   # children come after their parents
            if not cut[node]:
                split = cost[self.left[node]] + cost[self.right[node]]
                cut[node] = leaf_cost[node] <= split
                cost[node] = min(leaf_cost[node], split)
        kept, stack = [], [0]
        while stack:   # the nodes still reached, parents first
            node = stack.pop()
            kept.append(node)
            if not cut[node]:
                stack += [int(self.right[node]), int(self.left[node])]
        index = np.full(n, -1, dtype=np.int32)
        index[kept] = np.arange(len(kept), dtype=np.int32)
        kept = np.array(kept)
        inner = ~cut[kept]
        child = lambda side: np.where(inner, index[side[kept]], -1).astype(np.int32)
        return Tree(np.where(inner, self.feature[kept], -1).astype(np.int32),
                    np.where(inner, self.threshold[kept], 0.0), child(self.left),
                    child(self.right), self.value[kept], self.label[kept], self.prep,
                    self.edits)

    def node_depths(self) -> np.ndarray:
        """How many tests lie between the root and each node."""
        depth = np.zeros(self.n_nodes, dtype=np.int64)
        for node in range(self.n_nodes):   # parents come before children
            for child in (self.left[node], self.right[node]):
                if child >= 0:
                    depth[child] = depth[node] + 1
        return depth

    @property
    def depth(self) -> int:
        return int(self.node_depths().max())

    @property
    def edit_note(self) -> str:
        """"Edited by hand: ..." on one line (exports put it in a comment, so no line
        break from a loaded file may end that comment), or "" for a solver's tree."""
        text = " ".join("; ".join(self.edits).split())
        return f"Edited by hand: {text}." if self.edits else ""

    def condition(self, node: int, holds: bool = True) -> str:
        """Readable test of an internal node; `holds` is the branch where it is true.

        For a binary feature the test holds on the right branch; for a continuous
        feature `x <= t` holds on the left branch.
        """
        f = self.features[self.feature[node]]
        return f.condition(holds, float(self.threshold[node]))

    def branch_conditions(self, node: int) -> tuple[str, str]:
        """Readable conditions of the (left, right) branches of an internal node."""
        f = self.features[self.feature[node]]
        left_holds = not f.binary
        return self.condition(node, left_holds), self.condition(node, not left_holds)

    # ---------------------------------------------------------- prediction
    def apply(self, X: np.ndarray) -> np.ndarray:
        """Leaf reached by each row of the feature matrix X."""
        node = np.zeros(len(X), dtype=np.int64)
        active = np.flatnonzero(self.feature[node] >= 0)
        while active.size:
            current = node[active]
            go_left = X[active, self.feature[current]] <= self.threshold[current]
            node[active] = np.where(go_left, self.left[current], self.right[current])
            active = active[self.feature[node[active]] >= 0]
        return node

    def reaches(self, X: np.ndarray, node: int) -> np.ndarray:
        """Which rows of the feature matrix X pass through `node` (its rows)."""
        at = np.zeros(len(X), dtype=np.int64)
        hit = at == node
        active = np.flatnonzero((self.feature[at] >= 0) & ~hit)
        while active.size:
            current = at[active]
            go_left = X[active, self.feature[current]] <= self.threshold[current]
            at[active] = np.where(go_left, self.left[current], self.right[current])
            hit[active] = at[active] == node
            active = active[(self.feature[at[active]] >= 0) & ~hit[active]]
        return hit

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Class index (regression: value) predicted for each row of the feature
        matrix X."""
        return self.predicted[self.apply(X)]

    def predict_frame(self, frame: pd.DataFrame) -> np.ndarray:
        """Class index (regression: value) for each row of a raw table (text cells),
        via `prep`."""
        return self.predict(self.prep.transform(frame))

    def error(self, X: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> float:
        """Total weight of misclassified rows; a regression's weighted sum of squared
        errors."""
        if self.regression:
            squared = (np.asarray(y, dtype=np.float64) - self.predict(X)) ** 2
            return float(squared.sum() if w is None else w @ squared)
        wrong = self.predict(X) != y
        return float(wrong.sum() if w is None else w[wrong].sum())

    # ---------------------------------------------------------- persistence
    def to_dict(self) -> dict:
        edits = {"edits": list(self.edits)} if self.edits else {}
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "preprocessing": self.prep.to_dict(),
            "nodes": {
                "feature": self.feature.tolist(),
                "threshold": self.threshold.tolist(),
                "left": self.left.tolist(),
                "right": self.right.tolist(),
                "value": self.value.tolist(),
                "label": self.label.tolist(),
            },
            **edits,
        }

    @classmethod
    def from_dict(cls, d: dict) -> Tree:
        if d.get("format") != FORMAT:
            raise DataError("This JSON file is not an Orchard tree model.")
        if d.get("version", 0) > FORMAT_VERSION:
            raise DataError("This model was saved by a newer Orchard; please upgrade.")
        n = d["nodes"]
        prep = Preprocessing.from_dict(d["preprocessing"])
        return cls(np.array(n["feature"], dtype=np.int32),
                   np.array(n["threshold"], dtype=np.float64),
                   np.array(n["left"], dtype=np.int32),
                   np.array(n["right"], dtype=np.int32),
                   np.array(n["value"], dtype=np.float64).reshape(len(n["feature"]), -1),
                   np.array(n["label"], dtype=np.int32), prep,
                   tuple(d.get("edits", ())))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1))

    @classmethod
    def load(cls, path: str | Path) -> Tree:
        from engine.model import load_model  # the package reads and dispatches files
        model = load_model(path)
        if not isinstance(model, cls):
            raise DataError(f"The model file '{path}' holds a decision diagram, not a tree.")
        return model
