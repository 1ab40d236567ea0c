"""0/1 training rows reduced the exact way the binary solvers (blossom, dl85) share.

* Rows of weight 0 are ignored; features constant on the rows, or equal or
  complementary to an earlier feature, can be dropped (they add no split); `fmap`
  maps the kept columns back to `data.X`'s.
* Identical rows are grouped by distinct feature vector with their class weights
  c_k.  Σ_vectors (Σ_k c_k - max_k c_k) is the weight no tree can classify correctly
  (identical inputs, different classes): the solvers' lower bound until a proof.
* `merged(subtract_least=True)` also removes m = min_k c_k from every class of each
  vector: whichever class a leaf predicts, its error on these rows drops by exactly
  (K-1)·m and the class it predicts is unchanged, so the search runs on fewer rows
  and adds the *offset* (K-1)·Σm back to every error it reports.
"""

from __future__ import annotations

import numpy as np

from engine.data.dataset import row_groups
from engine.errors import DataError
from engine.solvers.binary_columns import redundant_columns


class BinaryRows:
    """The positive-weight rows of a 0/1 Dataset over its kept columns, grouped."""

    def __init__(self, data, title: str, drop_redundant: bool = True, progress=None):
        """`progress(stage, fraction)` is called between steps (it may stop the work:
        on two million rows the reduction takes a few seconds)."""
        progress = progress or (lambda stage, fraction=None: None)
        stage = "grouping identical rows"
        progress(stage, 0.0)
        X = np.asarray(data.X)
        binary = X.max(initial=0) <= 1 if X.dtype == np.uint8 else np.isin(X, (0, 1)).all()
        if X.size and not binary:
            raise DataError(f"{title} needs 0/1 features: choose a binarisation.")
        w = np.asarray(data.w, dtype=np.float64)
        if (w < 0).any() or not np.isfinite(w).all():
            raise DataError("Row weights must be finite and not negative.")
        self.n_rows, self.n_features = X.shape
        self.n_classes = K = data.n_classes
        positive = w > 0
        Xp = (X if positive.all() else X[positive]).astype(np.uint8, copy=False)
        self.y = np.asarray(data.y, dtype=np.int64)[positive]
        self.w = w[positive]
        F = X.shape[1]
        if drop_redundant:
            progress(stage, 0.2)
            drop = redundant_columns(Xp, range(F)) if len(Xp) else set(range(F))
            self.fmap = np.array([j for j in range(F) if j not in drop], dtype=np.int64)
        else:
            self.fmap = np.arange(F, dtype=np.int64)
        progress(stage, 0.4)
        self.X = Xp if len(self.fmap) == F else np.take(Xp, self.fmap, axis=1)
        progress(stage, 0.5)
        if len(self.X):
            first, self.group = row_groups(self.X, lexicographic=False)
        else:
            first, self.group = np.zeros(0, np.int64), np.zeros(0, np.int64)
        progress(stage, 0.9)
        self.vectors = _rows(self.X, first)
        # (np.add.at would take half a second on two million rows)
        self.V = np.bincount(self.group * K + self.y, weights=self.w,
                             minlength=len(first) * K).reshape(len(first), K)
        progress(stage, 1.0)
        # per vector, the weight no leaf classifies correctly
        self.residual = self.V.sum(axis=1) - self.V.max(axis=1, initial=0.0)
        self.unavoidable = float(self.residual.sum())

    def merged(self, subtract_least: bool):
        """One row per (distinct vector, class) of positive weight, optionally after
        removing each vector's least class weight.  Returns the rows' vector index and
        class, their weights, the error offset and each vector's remaining
        unavoidable error."""
        V = self.V
        if subtract_least:
            least = V.min(axis=1, initial=np.inf) if len(V) else np.zeros(0)
            V = V - least[:, None]
            offset = float((self.n_classes - 1) * least.sum())
            residual = self.residual - (self.n_classes - 1) * least
        else:
            offset, residual = 0.0, self.residual
        gi, ki = np.nonzero(V > 0)
        return gi, ki, V[gi, ki], offset, residual

    def vectors_at(self, gi: np.ndarray) -> np.ndarray:
        """`vectors[gi]` (see `_rows`)."""
        return _rows(self.vectors, gi)

    def stats(self, rows_used: int, offset: float) -> dict:
        return {"rows": self.n_rows, "rows_used": rows_used, "distinct_rows": len(self.V),
                "features": int(self.n_features), "features_used": len(self.fmap),
                "inconsistent_offset": offset, "unavoidable_error": self.unavoidable}


def _rows(X: np.ndarray, index: np.ndarray) -> np.ndarray:
    """`X[index]`, without a copy when `index` lists every row in order: every row
    distinct and of one class, the usual case on millions of rows with continuous
    features, where a copy costs seconds and the matrix's size again."""
    if len(index) == len(X) and np.array_equal(index, np.arange(len(X))):
        return X
    return X[index]


def bound_weights(groups: np.ndarray, residual: np.ndarray) -> np.ndarray:
    """Each vector's unavoidable error put on its first row (rows given by vector
    index), so that any union of whole vectors (every branch) sums to its bound."""
    lbw = np.zeros(len(groups))
    if len(groups):
        _, firsts = np.unique(groups, return_index=True)
        lbw[firsts] = np.maximum(residual[groups[firsts]], 0.0)
    return lbw


def exactness(w: np.ndarray, lbw: np.ndarray) -> tuple[bool, float]:
    """Whether sums of these weights are exact in float64 (all integers, small total),
    and the tolerance for comparing errors otherwise."""
    everything = np.concatenate([w, lbw])
    exact = bool(np.all(everything == np.floor(everything)) and everything.sum() < 2.0 ** 52)
    return exact, 0.0 if exact else 1e-9 * max(float(w.sum()), 1.0)
