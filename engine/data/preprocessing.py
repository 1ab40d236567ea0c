"""The fitted recipe that turns raw text cells into the solver's feature matrix.

It is learnt once on the training table and saved inside every model, so that
`orchard predict model.json new.csv` applies exactly the same missing-value fills,
thresholds and one-hot tests to new raw data as were used for training.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from engine.data import blocks
from engine.data.class_weights import class_factors
from engine.data.columns import ColumnKind, to_numbers
from engine.data.features import EQ, LE, MISSING, NUM, Feature
from engine.errors import DataError

MISSING_POLICIES = ("drop", "impute", "indicator")


# `guided` tops the greedy trees' thresholds up with this many quantile bins.
GUIDED_QUANTILES = 10
# `guided` without a depth (a table prepared before any algorithm was chosen).
GUIDED_DEPTH = 3


@dataclass(frozen=True)
class Binarization:
    """How numeric columns become features: `none`, `quantile:K`, `midpoints` or
    `guided[:K]`.

    `guided` (the threshold guessing of McTavish et al., AAAI 2022) keeps every
    threshold a greedy CART tree of the requested depth uses, so an optimal tree on
    these features is never worse than that greedy tree, and adds the cut points of
    `quantile:K` (K = 10 by default) for the search to find better trees with.
    """

    mode: str
    k: int = 0

    @classmethod
    def parse(cls, text: str) -> Binarization:
        text = str(text).strip().lower()
        if text in ("none", "midpoints"):
            return cls(text)
        if text == "guided":
            return cls("guided", GUIDED_QUANTILES)
        mode, _, count = text.partition(":")
        if mode in ("quantile", "guided"):
            try:
                k = int(count)
            except ValueError:
                k = 0
            if k >= 2:
                return cls(mode, k)
        raise DataError(f"Unknown binarisation '{text}': use none, quantile:K (K >= 2), "
                        "midpoints or guided.")

    def __str__(self) -> str:
        if self.mode == "quantile" or (self.mode == "guided" and self.k != GUIDED_QUANTILES):
            return f"{self.mode}:{self.k}"
        return self.mode

    def thresholds(self, values: np.ndarray, keep: np.ndarray | None = None) -> np.ndarray:
        """Thresholds `t` (features `x <= t`) between distinct observed values, with
        those of `keep` (the greedy trees' own, for `guided`) among them."""
        distinct = np.unique(values[~np.isnan(values)])
        mids = (distinct[:-1] + distinct[1:]) / 2.0
        if keep is not None and len(keep):
            return np.unique(np.concatenate([keep, self._cuts(distinct, mids, values)]))
        return self._cuts(distinct, mids, values)

    def _cuts(self, distinct: np.ndarray, mids: np.ndarray, values: np.ndarray) -> np.ndarray:
        if self.mode == "midpoints" or len(mids) <= self.k - 1:
            return mids
        # Quantile cut points, each moved to the midpoint just above it so that the
        # test separates observed values and reads as a clean number.
        cuts = np.quantile(values[~np.isnan(values)], np.arange(1, self.k) / self.k)
        index = np.searchsorted(distinct, cuts, side="right") - 1
        index = np.clip(index, 0, len(mids) - 1)
        return np.unique(mids[index])


@dataclass(frozen=True)
class InputColumn:
    """A raw column used by the model, with the value that replaces a missing cell."""

    name: str
    kind: ColumnKind
    fill: float | str

    @property
    def numeric(self) -> bool:
        return not isinstance(self.fill, str)


def class_label(text: str) -> str:
    """Canonical class name: `1.0` and `1` are the same class."""
    try:
        value = float(text)
    except ValueError:
        return text
    return str(int(value)) if value.is_integer() else text


def _sort_key(names: list[str]):
    try:
        return sorted(names, key=float)
    except ValueError:
        return sorted(names)


@dataclass
class Preprocessing:
    target: str
    class_names: list[str]
    columns: list[InputColumn]
    features: list[Feature]
    missing: str = "impute"
    binarize: str = "none"
    _by_name: dict = field(default_factory=dict, repr=False, compare=False)

    # ----------------------------------------------------------------- fitting
    @classmethod
    def fit(cls, frame: pd.DataFrame, target: str, kinds: dict[str, ColumnKind],
            missing: str, binarize: Binarization, progress=None,
            depth: int | None = None, class_weight=None) -> Preprocessing:
        """Learn fills, thresholds and categories from `frame` (text cells, or floats
        for numeric columns already parsed).

        `kinds` maps each input column to use onto its kind; `frame` already has the
        rows the model trains on (with `drop`, rows with missing cells are gone).
        `progress(stage, fraction)` is called between columns (it may stop the work).
        `depth` is the depth of the greedy trees whose thresholds `guided` keeps,
        grown with the rows weighted by `class_weight` (as the solvers will weigh them).
        """
        if missing not in MISSING_POLICIES:
            raise DataError(f"Unknown missing-value policy '{missing}': use "
                            f"{', '.join(MISSING_POLICIES)}.")
        keep = {}
        if binarize.mode == "guided":
            continuous = cls.fit(frame, target, kinds, missing, Binarization("none"),
                                 progress)
            keep = greedy_thresholds(continuous, frame, depth, progress, class_weight)
        present = blocks.factorize(frame[target])[1]
        class_names = _sort_key(list(dict.fromkeys(class_label(c) for c in present)))
        columns, features = [], []
        for position, (name, kind) in enumerate(kinds.items()):
            if progress is not None:
                progress("choosing thresholds", position / len(kinds))
            cells = frame[name]
            column, column_features = _fit_column(cells, kind, binarize, keep.get(name))
            columns.append(column)
            if missing == "indicator" and blocks.missing(cells).any():
                column_features.append(Feature(name, MISSING))
            features.extend(column_features)
        return cls(target, class_names, columns, features, missing, str(binarize))

    # ---------------------------------------------------------------- applying
    @property
    def all_binary(self) -> bool:
        return bool(self.features) and all(f.binary for f in self.features)

    def transform(self, frame: pd.DataFrame, progress=None,
                  dtype: type = np.float64) -> np.ndarray:
        """Feature matrix of a raw table (`dtype`, float64 by default; 0/1 for binary
        features, so uint8 holds a matrix whose features are all binary).

        Missing cells take the training fill value, whatever the training policy, so
        every row gets a prediction; missing input columns are an error.
        `progress(stage, fraction)` is called between columns (it may stop the work).
        """
        absent = [c.name for c in self.columns if c.name not in frame.columns]
        if absent:
            raise DataError(f"The data lacks the column(s) the model needs: "
                            f"{', '.join(absent)}.")
        filled, missing = {}, {}
        for position, column in enumerate(self.columns):
            if progress is not None:
                progress("building the features", 0.5 * position / len(self.columns))
            cells = frame[column.name]
            missing[column.name] = blocks.missing(cells)
            if column.numeric:
                filled[column.name] = np.where(missing[column.name], column.fill,
                                               to_numbers(cells))
            else:
                filled[column.name] = blocks.blockwise(
                    lambda part, fill=column.fill: part.fillna(fill).astype(str), cells,
                    object)
        # Filled column by column (Fortran order, contiguous writes), then laid out by
        # rows as the solvers read it.
        X = np.empty((len(frame), len(self.features)), dtype=dtype, order="F")
        for j, f in enumerate(self.features):
            if progress is not None and j % 16 == 0:
                progress("building the features", 0.5 + 0.5 * j / len(self.features))
            blocks.hand_over()   # numpy releases and retakes the GIL at each operation
            values = filled[f.column]
            if f.op == NUM:
                X[:, j] = values
            elif f.op == LE:
                X[:, j] = values <= f.value
            elif f.op == EQ:
                X[:, j] = values == f.value
            else:
                X[:, j] = missing[f.column]
        return np.ascontiguousarray(X)

    def labels(self, cells: pd.Series) -> np.ndarray:
        """Class indices of raw target cells; -1 for a class the model never saw."""
        index = {name: i for i, name in enumerate(self.class_names)}
        codes, values = blocks.factorize(cells)
        lookup = np.array([index.get(class_label(v), -1) for v in values] + [-1],
                          dtype=np.int64)
        return lookup[codes]   # code -1 (missing) takes the last entry, -1

    def column(self, name: str) -> InputColumn:
        if not self._by_name:
            self._by_name.update({c.name: c for c in self.columns})
        return self._by_name[name]

    def without_features(self, drop: set[int]) -> Preprocessing:
        kept = [f for j, f in enumerate(self.features) if j not in drop]
        used = {f.column for f in kept}
        return Preprocessing(self.target, self.class_names,
                             [c for c in self.columns if c.name in used], kept,
                             self.missing, self.binarize)

    # ------------------------------------------------------------ persistence
    def to_dict(self) -> dict:
        return {
            "target": self.target,
            "class_names": self.class_names,
            "columns": [{"name": c.name, "kind": c.kind.value, "fill": c.fill}
                        for c in self.columns],
            "features": [f.to_dict() for f in self.features],
            "missing": self.missing,
            "binarize": self.binarize,
        }

    @classmethod
    def from_dict(cls, d: dict) -> Preprocessing:
        return cls(d["target"], list(d["class_names"]),
                   [InputColumn(c["name"], ColumnKind(c["kind"]), c["fill"])
                    for c in d["columns"]],
                   [Feature.from_dict(f) for f in d["features"]],
                   d["missing"], d["binarize"])


def greedy_thresholds(continuous: Preprocessing, frame: pd.DataFrame, depth: int | None,
                      progress=None, class_weight=None) -> dict[str, np.ndarray]:
    """Column name -> thresholds of the greedy CART tree of `depth` on the table's
    continuous features (what `orchard fit --algo greedy` grows on these rows, with
    the same class weights), so an optimal tree on them is never worse than it."""
    y = continuous.labels(frame[continuous.target])
    known = y >= 0
    y = y[known]
    w = np.ones(len(y))
    if class_weight is not None:
        w = class_factors(class_weight, y, continuous.class_names, w)[y]
    X = continuous.transform(frame, progress)
    return greedy_splits(continuous.features, X[known], y, w, len(continuous.class_names),
                         depth, progress)


def greedy_splits(features: list[Feature], X: np.ndarray, y: np.ndarray, w: np.ndarray,
                  n_classes: int, depth: int | None, progress=None) -> dict[str, np.ndarray]:
    """Column name -> thresholds that the greedy tree of `depth` on the feature matrix
    X uses on its continuous (`NUM`) features.

    A greedy tree of depth D is the top of the greedy tree of any larger depth, so
    these thresholds serve every depth up to D.
    """
    from engine.solvers.greedy.kernel import grow_tree  # numba: loaded only when used

    depth = GUIDED_DEPTH if depth is None else max(int(depth), 0)
    if progress is not None:
        progress("growing the greedy tree for guided thresholds", None)
    control = np.zeros(4)   # control[0] != 0 stops the kernel
    feature, threshold, *_ = _polling(
        grow_tree, (np.ascontiguousarray(X, dtype=np.float64),
                    np.ascontiguousarray(y, dtype=np.int64),
                    np.ascontiguousarray(w, dtype=np.float64), n_classes, depth, 1.0,
                    control), control, progress)
    found: dict[str, list[float]] = {}
    for f, t in zip(feature, threshold):
        if f >= 0 and features[f].op == NUM:
            found.setdefault(features[f].column, []).append(float(t))
    return {name: np.array(values) for name, values in found.items()}


def _polling(kernel, args: tuple, control: np.ndarray, progress):
    """Run a nogil kernel in a thread and call `progress` every 50 ms meanwhile; when
    `progress` raises (a stop), stop the kernel through `control` and re-raise."""
    if progress is None:
        return kernel(*args)
    outcome = {}

    def target():
        try:
            outcome["value"] = kernel(*args)
        except BaseException as exc:  # re-raised in the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="orchard-guide", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(0.05)
            progress("growing the greedy tree for guided thresholds", None)
    except BaseException:
        control[0] = 1.0
        thread.join()
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _fit_column(cells: pd.Series, kind: ColumnKind, binarize: Binarization,
                keep: np.ndarray | None = None) -> tuple[InputColumn, list[Feature]]:
    name = str(cells.name)
    present = cells.dropna()
    if present.empty:
        raise DataError(f"Column '{name}' has no values.")
    numeric = kind == ColumnKind.NUMERIC or (
        kind == ColumnKind.BINARY and bool(pd.to_numeric(present, errors="coerce").notna().all()))
    if numeric:
        values = to_numbers(cells)
        if kind == ColumnKind.BINARY:
            fill = float(pd.Series(values).dropna().value_counts().sort_index().idxmax())
            return InputColumn(name, kind, fill), [Feature(name, EQ, float(np.nanmax(values)))]
        column = InputColumn(name, kind, float(np.median(values[~np.isnan(values)])))
        if binarize.mode == "none":
            return column, [Feature(name, NUM)]
        return column, [Feature(name, LE, float(t))
                        for t in binarize.thresholds(values, keep)]
    counts = present.astype(str).value_counts()
    categories = sorted(counts.index)
    column = InputColumn(name, kind, str(counts.sort_index().idxmax()))
    if kind == ColumnKind.BINARY:
        return column, [Feature(name, EQ, categories[-1])]
    return column, [Feature(name, EQ, c) for c in categories]
