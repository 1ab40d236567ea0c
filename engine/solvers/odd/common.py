"""What the `odd` heuristic, its MILP and its adapter share: skeleton, scale, objective.

Florio et al. (AAAI-23) train a decision diagram inside a *skeleton*: the widths of
its layers (`1-2-4-8`), each node of layer l linking to nodes of layer l+1 or, by a
long arc, to the terminal of a class.  With `tree=True` each node may only link to
its own two children (heap numbering), which turns the model into an optimal
decision tree of that depth.

The MILP needs features in [0, 1] for its big-M constants and its strict-inequality
margin ε; the heuristic must only choose splits the MILP can represent (a gap of
at least 2ε between the scaled values it separates), or its warm start and cutoff
would be wrong.  Both therefore take their scaling from `Scaling` here.

The objective (18) is expressed in training weight: misclassified weight plus
`alpha * W / (|V_I| - 1)` per active non-root node, W the total weight.  This is the
paper's objective multiplied by W, so errors stay integers on unweighted data.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from engine.errors import ParameterError

EPSILON = 1e-4        # strict-inequality margin of the splits, in the [0, 1] scale
DEFAULT_MAX_WIDTH = 8  # widths of the default skeleton: 1, 2, 4, 8, 8, ...


@dataclass(frozen=True)
class Skeleton:
    """Layer widths of the diagram's graph G, and whether it is a tree skeleton.

    Internal nodes ("slots") are numbered layer by layer from 0 (the root); the
    terminal of class c is slot `n_internal + c`.
    """

    widths: tuple[int, ...]
    tree: bool = False

    @classmethod
    def parse(cls, text: str, depth: int, tree: bool) -> Skeleton:
        """Skeleton from `1-2-4-8` text, or from `depth` when the text is empty.

        The default has widths `min(2**l, 8)`; a tree skeleton has widths `2**l`.
        """
        text = text.strip()
        if not text:
            cap = None if tree else DEFAULT_MAX_WIDTH
            return cls(tuple(2 ** l if cap is None else min(2 ** l, cap)
                             for l in range(depth)), tree)
        parts = [p for p in re.split(r"[-,;\s]+", text) if p]
        if not parts or not all(p.isdigit() for p in parts):
            raise ParameterError(f"The skeleton '{text}' should be layer widths such as "
                                 "1-2-4-8.")
        widths = tuple(int(p) for p in parts)
        if widths[0] != 1:
            raise ParameterError("The first layer of a skeleton is the root: width 1.")
        for above, below in itertools.pairwise(widths):
            if not 1 <= below <= 2 * above:
                raise ParameterError(f"In the skeleton '{text}' a layer can hold 1 to "
                                     "twice as many nodes as the layer above it.")
        if tree and widths != tuple(2 ** l for l in range(len(widths))):
            raise ParameterError(f"A tree skeleton doubles at every layer (1-2-4-...), "
                                 f"not '{text}'.")
        return cls(widths, tree)

    def __str__(self) -> str:
        return "-".join(map(str, self.widths))

    @property
    def depth(self) -> int:
        return len(self.widths)

    @property
    def n_internal(self) -> int:
        return sum(self.widths)

    @cached_property
    def starts(self) -> tuple[int, ...]:
        """First slot of each layer, plus the total as a sentinel."""
        return tuple(int(s) for s in np.concatenate([[0], np.cumsum(self.widths)]))

    def layer_slots(self, layer: int) -> range:
        return range(self.starts[layer], self.starts[layer + 1])

    @cached_property
    def layer_of(self) -> np.ndarray:
        return np.repeat(np.arange(self.depth), self.widths)

    def targets(self, slot: int, positive: bool, n_classes: int) -> list[int]:
        """Slots that `slot`'s negative or positive side may link to, ascending."""
        layer = int(self.layer_of[slot])
        terminals = list(range(self.n_internal, self.n_internal + n_classes))
        if layer == self.depth - 1:
            return terminals
        if self.tree:
            return [2 * slot + (2 if positive else 1)] + terminals
        return list(self.layer_slots(layer + 1)) + terminals

    def penalty(self, alpha: float, total_weight: float) -> float:
        """Cost in the objective of each active internal node other than the root."""
        return alpha * total_weight / (self.n_internal - 1) if self.n_internal > 1 else 0.0


@dataclass(frozen=True)
class Scaling:
    """Min-max scaling of each feature to [0, 1] (constant features become 0)."""

    low: np.ndarray
    span: np.ndarray

    @classmethod
    def fit(cls, X: np.ndarray) -> Scaling:
        low = X.min(axis=0) if len(X) else np.zeros(X.shape[1])
        span = (X.max(axis=0) - low) if len(X) else np.zeros(X.shape[1])
        return cls(low, span)

    def apply(self, X: np.ndarray) -> np.ndarray:
        safe = np.where(self.span > 0, self.span, 1.0)
        return np.where(self.span > 0, (X - self.low) / safe, 0.0)


@dataclass(frozen=True)
class SideConstraints:
    """The paper's extensions: minimum flow (20), node budget, demographic parity (19).

    `min_flow`: every active internal node but the root receives at least this much
    training weight.  `max_active`: at most this many active internal nodes, root
    included (0: no limit).  Parity: `group` is True for the rows of group 1, False
    for group 2; for every class c, the share of group 1's weight predicted c and
    the share of group 2's weight predicted c differ by at most `tolerance`.
    """

    min_flow: float = 0.0
    max_active: int = 0
    group: np.ndarray | None = None
    tolerance: float = 0.0

    def parity_gap(self, predicted: np.ndarray, w: np.ndarray, n_classes: int) -> float:
        """Largest difference over classes between the groups' predicted shares."""
        if self.group is None:
            return 0.0
        shares = []
        for members in (self.group, ~self.group):
            counts = np.bincount(predicted[members], weights=w[members], minlength=n_classes)
            shares.append(counts / w[members].sum())
        return float(np.abs(shares[0] - shares[1]).max())

    def violations(self, diagram, X: np.ndarray, w: np.ndarray) -> list[str]:
        """The side constraints `diagram` breaks on the training data, in words."""
        broken = []
        if self.max_active and diagram.n_internal > self.max_active:
            broken.append(f"{diagram.n_internal} decision nodes (at most "
                          f"{self.max_active} allowed)")
        flows = diagram.value[:diagram.n_internal].sum(axis=1)
        light = [k for k in range(diagram.n_internal)
                 if k != diagram.root and flows[k] < self.min_flow - 1e-9]
        if light:
            broken.append(f"{len(light)} nodes receive less than {self.min_flow:g} rows")
        gap = self.parity_gap(diagram.predict(X), w, diagram.n_classes)
        if gap > self.tolerance + 1e-9:
            broken.append(f"a parity gap of {gap:.4f} (at most {self.tolerance:g} allowed)")
        return broken
