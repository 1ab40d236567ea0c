"""The decision diagram the `odd` solver returns: a layered DAG with long arcs.

Internal nodes are numbered 0..m-1 layer by layer (`layer[k]` is non-decreasing)
and node `root` (0 unless the diagram is a bare terminal) is where every row
starts.  The terminal of class c is node `m + c`.  An internal node sends a row to
`left[k]` when its test holds and to `right[k]` otherwise, where the test is

- univariate (`feature[k] >= 0`): `x[feature] <= threshold`, as in `Tree`;
- multivariate (`feature[k] == -1`): `sum_j weights[k, j] * x[j] <= threshold`,
  summed left to right over the non-zero weights in feature order, so the Python
  and SQL exports can repeat the very same floating-point operations.  A node
  without weights sends everything one way (`0 <= threshold`).

Children are nodes of the next layer or terminals (long arcs), and several parents
may share a child.  Thresholds live in the scale of the prepared feature matrix
(`Dataset.X`), so `predict` works on it directly; the diagram keeps its
`Preprocessing` to predict on raw tables and to be saved as one JSON document.
`value[k]` holds the training weight of each class through node k (terminals
included), for display and exports.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from engine.data.features import Feature, format_number
from engine.data.preprocessing import Preprocessing
from engine.errors import DataError

FORMAT = "orchard-diagram"
FORMAT_VERSION = 1


@dataclass
class Diagram:
    layer: np.ndarray      # int32[m]
    feature: np.ndarray    # int32[m]; -1 for a multivariate (or constant) test
    weights: np.ndarray    # float64[m, F]; used where feature == -1, zero elsewhere
    threshold: np.ndarray  # float64[m]
    left: np.ndarray       # int32[m]: child when the test holds
    right: np.ndarray      # int32[m]: child otherwise
    value: np.ndarray      # float64[m + K, K]: training class weights through each node
    prep: Preprocessing
    root: int = 0

    @classmethod
    def build(cls, layer, feature, weights, threshold, left, right, prep: Preprocessing,
              X: np.ndarray, y: np.ndarray, w: np.ndarray, root: int = 0) -> Diagram:
        """Diagram from node arrays, with `value` counted on the training data."""
        m = len(layer)
        n_classes = len(prep.class_names)
        diagram = cls(np.asarray(layer, dtype=np.int32).reshape(m),
                      np.asarray(feature, dtype=np.int32).reshape(m),
                      np.asarray(weights, dtype=np.float64).reshape(m, len(prep.features)),
                      np.asarray(threshold, dtype=np.float64).reshape(m),
                      np.asarray(left, dtype=np.int32).reshape(m),
                      np.asarray(right, dtype=np.int32).reshape(m),
                      np.zeros((m + n_classes, n_classes)), prep, int(root))
        diagram.value = diagram.flows(X, y, w)
        return diagram

    # ----------------------------------------------------------- structure
    @property
    def features(self) -> list[Feature]:
        return self.prep.features

    @property
    def class_names(self) -> list[str]:
        return self.prep.class_names

    @property
    def n_internal(self) -> int:
        return len(self.layer)

    @property
    def regression(self) -> bool:
        """Always False: a diagram's terminals are classes (no regression diagrams)."""
        return False

    @property
    def node_weights(self) -> np.ndarray:
        """The training weight reaching each node (terminals included)."""
        return self.value.sum(axis=1)

    @property
    def n_classes(self) -> int:
        return len(self.prep.class_names)

    def is_terminal(self, node: int) -> bool:
        return node >= self.n_internal

    def terminal(self, class_index: int) -> int:
        return self.n_internal + class_index

    def label(self, node: int) -> int:
        """Class of a terminal node."""
        return node - self.n_internal

    def children(self, node: int) -> tuple[int, int]:
        """(child when the test holds, child otherwise) of an internal node."""
        return int(self.left[node]), int(self.right[node])

    @property
    def layers(self) -> list[list[int]]:
        """Internal node ids of each layer, top to bottom."""
        return [list(map(int, np.flatnonzero(self.layer == l))) for l in range(self.depth)]

    @property
    def depth(self) -> int:
        """Number of decision layers (0 for a bare terminal)."""
        return int(self.layer.max()) + 1 if self.n_internal else 0

    @property
    def n_leaves(self) -> int:
        """Arcs into class terminals: equals the leaf count when the diagram is a tree."""
        if not self.n_internal:
            return 1
        return int((self.left >= self.n_internal).sum() + (self.right >= self.n_internal).sum())

    @property
    def terminals_used(self) -> list[int]:
        if not self.n_internal:
            return [self.root]
        heads = np.concatenate([self.left, self.right])
        return sorted(set(map(int, heads[heads >= self.n_internal])))

    @property
    def n_nodes(self) -> int:
        """Internal nodes plus the class terminals reached by an arc."""
        return self.n_internal + len(self.terminals_used)

    def is_univariate(self, node: int) -> bool:
        return self.feature[node] >= 0

    def terms(self, node: int) -> list[tuple[int, float]]:
        """(feature, weight) of a multivariate test, in summation order."""
        row = self.weights[node]
        return [(int(j), float(row[j])) for j in np.flatnonzero(row)]

    def node_text(self, node: int) -> str:
        """The test of an internal node in positive words, as every picture shows it
        (`colour = red`, not `colour != red`, even where it holds on the right)."""
        from engine.export.walk import branches  # the exports' view builds on the model
        return branches(self, node).text

    def branch_conditions(self, node: int) -> tuple[str, str]:
        """Readable conditions of the (left, right) branches of an internal node."""
        t = float(self.threshold[node])
        if self.is_univariate(node):
            f = self.features[self.feature[node]]
            if not f.binary:
                return f.condition(True, t), f.condition(False, t)
            zero_left, one_left = 0.0 <= t, 1.0 <= t
            if zero_left == one_left:
                return ("always", "never") if zero_left else ("never", "always")
            return f.condition(not zero_left), f.condition(zero_left)
        terms = self.terms(node)
        if not terms:
            return ("always", "never") if 0.0 <= t else ("never", "always")
        text = _linear_text(terms, self.features)
        return f"{text} <= {format_number(t)}", f"{text} > {format_number(t)}"

    # ---------------------------------------------------------- prediction
    def projection(self, node: int, X: np.ndarray) -> np.ndarray:
        """The value each row compares with the node's threshold."""
        if self.is_univariate(node):
            return X[:, self.feature[node]]
        total = np.zeros(len(X))
        for j, weight in self.terms(node):
            total = total + weight * X[:, j]
        return total

    def walk(self, X: np.ndarray, on_node=None) -> np.ndarray:
        """Node reached by each row after the last layer (always a terminal)."""
        at = np.full(len(X), self.root, dtype=np.int64)
        for node in range(self.n_internal):  # children always have larger ids
            rows = np.flatnonzero(at == node)
            if on_node is not None:
                on_node(node, rows)
            if rows.size:
                holds = self.projection(node, X[rows]) <= self.threshold[node]
                at[rows] = np.where(holds, self.left[node], self.right[node])
        return at

    def apply(self, X: np.ndarray) -> np.ndarray:
        """Terminal node reached by each row of the feature matrix X."""
        return self.walk(X)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Class index predicted for each row of the feature matrix X."""
        return self.apply(X) - self.n_internal

    def predict_frame(self, frame: pd.DataFrame) -> np.ndarray:
        """Class index for each row of a raw table (text cells), via `prep`."""
        return self.predict(self.prep.transform(frame))

    def error(self, X: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> float:
        """Total weight of misclassified rows."""
        wrong = self.predict(X) != y
        return float(wrong.sum() if w is None else w[wrong].sum())

    def flows(self, X: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Class weights through every node (terminals included), shape (m + K, K)."""
        value = np.zeros((self.n_internal + self.n_classes, self.n_classes))

        def count(node, rows):
            value[node] = np.bincount(y[rows], weights=w[rows], minlength=self.n_classes)

        at = self.walk(X, count)
        for c in range(self.n_classes):
            rows = at == self.terminal(c)
            value[self.terminal(c)] = np.bincount(y[rows], weights=w[rows],
                                                  minlength=self.n_classes)
        return value

    # ---------------------------------------------------------- persistence
    def to_dict(self) -> dict:
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "preprocessing": self.prep.to_dict(),
            "root": self.root,
            "nodes": {
                "layer": self.layer.tolist(),
                "feature": self.feature.tolist(),
                "weights": [None if self.is_univariate(k) else [list(t) for t in self.terms(k)]
                            for k in range(self.n_internal)],
                "threshold": self.threshold.tolist(),
                "left": self.left.tolist(),
                "right": self.right.tolist(),
            },
            "value": self.value.tolist(),
        }

    @classmethod
    def from_dict(cls, d: dict) -> Diagram:
        if d.get("format") != FORMAT:
            raise DataError("This JSON file is not an Orchard decision diagram.")
        if d.get("version", 0) > FORMAT_VERSION:
            raise DataError("This model was saved by a newer Orchard; please upgrade.")
        n = d["nodes"]
        prep = Preprocessing.from_dict(d["preprocessing"])
        m = len(n["layer"])
        weights = np.zeros((m, len(prep.features)))
        for k, terms in enumerate(n["weights"]):
            for j, weight in terms or ():
                weights[k, int(j)] = float(weight)
        return cls(np.array(n["layer"], dtype=np.int32),
                   np.array(n["feature"], dtype=np.int32), weights,
                   np.array(n["threshold"], dtype=np.float64),
                   np.array(n["left"], dtype=np.int32),
                   np.array(n["right"], dtype=np.int32),
                   np.array(d["value"], dtype=np.float64).reshape(
                       m + len(prep.class_names), len(prep.class_names)),
                   prep, int(d["root"]))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1))

    @classmethod
    def load(cls, path: str | Path) -> Diagram:
        from engine.model import load_model  # the package reads and dispatches files
        model = load_model(path)
        if not isinstance(model, cls):
            raise DataError(f"The model file '{path}' holds a tree, not a diagram.")
        return model


def _linear_text(terms: list[tuple[int, float]], features: list[Feature]) -> str:
    """`0.5*age - 2*[colour = red]`: binary features read as their 0/1 test."""
    parts = []
    for j, weight in terms:
        f = features[j]
        name = f"[{f.condition(True)}]" if f.binary else f.column
        sign = "-" if weight < 0 else "+"
        parts.append(f"{sign} {format_number(abs(weight))}*{name}")
    text = " ".join(parts)
    return text[2:] if text.startswith("+ ") else "-" + text[2:]
