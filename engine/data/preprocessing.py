"""The fitted recipe that turns raw text cells into the solver's feature matrix.

It is learnt once on the training table (`engine.featurize.recipe.fit`, which
chooses the features) and saved inside every model, so that `orchard predict
model.json new.csv` applies exactly the same missing-value fills and routes,
thresholds and value groups to new raw data as were used for training.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from engine.data import blocks
from engine.data.columns import ColumnKind, to_numbers
from engine.data.features import EQ, IN, LE, NUM, Feature
from engine.errors import DataError
from engine.vocabulary import CLASSIFICATION, REGRESSION

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
        return self.keeping(self.cut_points(values), keep)

    @staticmethod
    def keeping(cuts: np.ndarray, keep: np.ndarray | None) -> np.ndarray:
        """`cuts` (from `cut_points`) with the thresholds `keep` among them."""
        if keep is not None and len(keep):
            return np.unique(np.concatenate([keep, cuts]))
        return cuts

    def cut_points(self, values: np.ndarray) -> np.ndarray:
        """The thresholds the binarisation itself puts between the observed `values`
        (NaN: missing).  The values are sorted once: distinct values and quantiles
        both come from that order (each `np.quantile` would partition them again,
        and `np.unique` sort them again: 0.3 s a column of 3 million rows)."""
        ordered = np.sort(values[~np.isnan(values)])
        distinct = ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
        mids = (distinct[:-1] + distinct[1:]) / 2.0
        if self.mode == "midpoints" or len(mids) <= self.k - 1:
            return mids
        # Quantile cut points, each moved to the midpoint just above it so that the
        # test separates observed values and reads as a clean number.
        cuts = sorted_quantiles(ordered, np.arange(1, self.k) / self.k)
        index = np.searchsorted(distinct, cuts, side="right") - 1
        index = np.clip(index, 0, len(mids) - 1)
        return np.unique(mids[index])


def sorted_quantiles(ordered: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
    """`np.quantile(ordered, probabilities)` (its default, linear method, to the last
    bit: tests/test_value_groups.py) of values already sorted, without sorting them
    again."""
    position = probabilities * (len(ordered) - 1)
    below = np.floor(position).astype(np.int64)
    above = np.minimum(below + 1, len(ordered) - 1)
    gamma = position - below
    low, high = ordered[below], ordered[above]
    difference = high - low
    # numpy's lerp: from the nearer end, so a quantile never overshoots its neighbours
    return np.where(gamma >= 0.5, high - difference * (1 - gamma), low + difference * gamma)


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


@dataclass
class Preprocessing:
    """The recipe from a raw table to features, and what the target is: classes
    (`class_names`) or, for a regression `task`, numbers (no class names)."""

    target: str
    class_names: list[str]
    columns: list[InputColumn]
    features: list[Feature]
    missing: str = "route"
    binarize: str = "none"
    task: str = CLASSIFICATION
    _by_name: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def regression(self) -> bool:
        return self.task == REGRESSION

    # ---------------------------------------------------------------- applying
    @property
    def all_binary(self) -> bool:
        return bool(self.features) and all(f.binary for f in self.features)

    def transform(self, frame: pd.DataFrame, progress=None,
                  dtype: type = np.float64) -> np.ndarray:
        """Feature matrix of a raw table (`dtype`, float64 by default; 0/1 for binary
        features, so uint8 holds a matrix whose features are all binary).

        A missing cell goes where its feature's route says (`Feature.missing`), else it
        takes the training fill value, whatever the training policy, so every row gets
        a prediction; a text value never seen in training is in no group and equals no
        value.  Missing input columns are an error.  Each text column is coded once
        (its values against the values its features name), so a test on it is a
        table lookup.  `progress(stage, fraction)` is called between columns (it may
        stop the work).
        """
        absent = [c.name for c in self.columns if c.name not in frame.columns]
        if absent:
            raise DataError(f"The data lacks the column(s) the model needs: "
                            f"{', '.join(absent)}.")
        return self.transform_columns(frame, len(frame), progress, dtype)

    def transform_columns(self, frame: Mapping, n_rows: int, progress=None,
                          dtype: type = np.float64) -> np.ndarray:
        """`transform` of columns at hand, `frame[name]` for each column the model
        reads: text cells, or a numeric column's float values (NaN missing), as
        `prepare` and the notebook's numeric arrays give them, never written as text."""
        # Each column's cells are coded once, then every feature is a lookup
        # (`_numeric_tests`, `_text_tests`) on blocks of rows (`blocks.row_major`).
        test_of = {}
        for name in dict.fromkeys(f.column for f in self.features):
            if progress is not None:
                progress("building the features", 0.0)
            column = self.column(name)
            cells = frame[name]
            missing = blocks.missing(cells)
            test_of[name] = (_numeric_tests(to_numbers(cells), missing, column.fill)
                             if column.numeric else _text_tests(cells, missing, column.fill))
        features = self.features
        return blocks.row_major(
            n_rows, len(features), lambda j, rows: test_of[features[j].column](
                features[j], rows), dtype,
            None if progress is None else lambda done: progress("building the features",
                                                                done))

    def labels(self, cells: pd.Series) -> np.ndarray:
        """Class indices of raw target cells; -1 for a class the model never saw.  A
        regression's target values instead (float64, NaN where a cell is missing or
        not a number)."""
        if self.regression:
            if isinstance(cells, np.ndarray) and cells.dtype != np.float64:
                cells = pd.Series(cells, name=self.target)
            return to_numbers(cells)
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
                             self.missing, self.binarize, self.task)

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
            "task": self.task,
        }

    @classmethod
    def from_dict(cls, d: dict) -> Preprocessing:
        return cls(d["target"], list(d["class_names"]),
                   [InputColumn(c["name"], ColumnKind(c["kind"]), c["fill"])
                    for c in d["columns"]],
                   [Feature.from_dict(f) for f in d["features"]],
                   d["missing"], d["binarize"], d.get("task", CLASSIFICATION))


def _numeric_tests(numbers, missing, fill):
    """The function giving a feature's values on rows `rows` (a slice) of one
    numeric column's cells."""
    filled = np.where(missing, fill, numbers)

    def test(f: Feature, rows: slice) -> np.ndarray:
        values, absent = filled[rows], missing[rows]
        if f.op == NUM:
            return values if f.missing is None else np.where(absent, f.value,
                                                             numbers[rows])
        holds = values <= f.value if f.op == LE else (
            values == f.value if f.op == EQ else absent)
        if f.missing is not None and f.op in (LE, EQ):
            holds = np.where(absent, f.missing, holds)
        return holds
    return test


def _text_tests(cells, missing, fill):
    """The function giving a feature's values on rows `rows` (a slice) of one text
    column's cells: the cells are coded once by their text (missing cells as the
    fill), then each test is a lookup table over the codes."""
    codes, uniques = blocks.factorize(cells)
    index: dict[str, int] = {}
    lookup = np.array([index.setdefault(str(v), len(index)) for v in uniques] + [0],
                      dtype=np.int64)
    coded = lookup[codes]
    coded[missing] = index.setdefault(str(fill), len(index))
    tables: dict[tuple, np.ndarray] = {}

    def table(f: Feature) -> np.ndarray:
        """Whether each code passes the test of f, which names values (EQ, IN)."""
        key = (f.op, f.value)
        if key not in tables:
            holds = np.zeros(len(index), dtype=bool)
            for value in (f.value if f.op == IN else (f.value,)):
                if str(value) in index:
                    holds[index[str(value)]] = True
            tables[key] = holds
        return tables[key]

    def test(f: Feature, rows: slice) -> np.ndarray:
        if f.op not in (EQ, IN):
            return missing[rows]
        holds = table(f)[coded[rows]]
        if f.missing is not None:
            holds = np.where(missing[rows], f.missing, holds)
        return holds
    return test
