"""A first look at one column, by class: the histogram of a numeric column or the
most frequent values of a text column, each bar split by the target's classes, and
the missing cells counted apart (the Data tab's column chart, JMP's Distribution).

Plain numpy over the raw table's text cells, so the window can compute it in a
worker on two million rows (one pass to parse, one `bincount`).  `numeric_pairs` and
`tree_cuts` give a two-column scatter its points and the run's cut lines.

A regression's target (numbers, `task` "regression") has no classes: its rows are
split into `BANDS` bands of its values instead (quartiles: "price 1,010 to 1,180"),
so a bar says whether a value goes with low or high targets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.data import blocks
from engine.data.columns import to_numbers
from engine.data.features import LE, NUM, format_number
from engine.data.preprocessing import class_label
from engine.model.tree import Tree
from engine.vocabulary import CLASSIFICATION, REGRESSION

BINS = 20        # a numeric column's bars
TOP_VALUES = 15  # a text column's bars; the other values are one more bar
BANDS = 4        # a regression target's bands (quartiles), in place of classes


@dataclass
class ColumnSummary:
    """Bars of one column: `labels[i]` holds `counts[i, k]` rows of class k (rows
    without a class are left out); `missing[k]`, the rows of class k whose cell is
    missing.  A numeric column's bars are `edges[i]` to `edges[i + 1]`."""

    column: str
    numeric: bool
    class_names: list[str]
    labels: list[str]
    counts: np.ndarray            # float[bars, classes]
    missing: np.ndarray           # float[classes]
    edges: np.ndarray | None = None
    others: int = 0               # text values beyond the shown ones (in the last bar)
    ordered: bool = False         # the bars are an ordered column's levels, in order
    bands: bool = False           # `class_names` are bands of a regression's target

    @property
    def rows(self) -> int:
        return int(self.counts.sum() + self.missing.sum())

    def describe(self) -> str:
        """One sentence under the chart."""
        missing = int(self.missing.sum())
        shown = len(self.labels) - (self.others > 0)
        what = (f"{len(self.labels)} bins of equal width" if self.numeric else
                f"its {shown} levels in order" if self.ordered else
                f"the {shown} most frequent values"
                + (f" and the other {self.others:,}" if self.others else ""))
        by, having = ("band of the target's values", "a value") if self.bands else \
            ("class", "a class")
        return (f"{self.column}: {self.rows:,} rows with {having}, {missing:,} of them "
                f"missing here; {what}, each bar split by {by}.")


def _classes(frame: pd.DataFrame, target: str,
             task: str = CLASSIFICATION) -> tuple[np.ndarray, list[str]]:
    """Each row's class index (-1: missing) and the class names; a regression's
    band of its target's values instead."""
    if task == REGRESSION:
        return _bands(to_numbers(frame[target]), target)
    codes, values = blocks.factorize(frame[target])
    labels = [class_label(v) for v in values]
    names = sorted(set(labels))
    position = {name: k for k, name in enumerate(names)}
    index = np.array([position[label] for label in labels] + [-1], dtype=np.int64)
    return index[codes], names    # code -1 (a missing class) takes the last entry, -1


def _bands(values: np.ndarray, target: str) -> tuple[np.ndarray, list[str]]:
    """The band (quantile range, at most `BANDS`) of each target value, -1 missing."""
    present = ~np.isnan(values)
    if not present.any():
        return np.full(len(values), -1, dtype=np.int64), []
    cuts = np.unique(np.quantile(values[present], np.linspace(0, 1, BANDS + 1)[1:-1]))
    band = np.where(present, np.searchsorted(cuts, values, side="left"), -1)
    ends = [float(values[present].min()), *cuts.tolist(), float(values[present].max())]
    names = [f"{target} {format_number(a)} to {format_number(b)}"
             for a, b in zip(ends[:-1], ends[1:])]
    return band.astype(np.int64), names


def column_summary(frame: pd.DataFrame, column: str, target: str, numeric: bool,
                   bins: int = BINS, top: int = TOP_VALUES,
                   order: tuple[str, ...] = (), task: str = CLASSIFICATION
                   ) -> ColumnSummary:
    """The bars of `column` by the classes of `target` (see `ColumnSummary`; a
    regression `task`: by bands of the target's values); `numeric` says how to read
    the cells (the column's kind); `order`, an ordered column's levels: its bars in
    that order (the other values after them)."""
    y, names = _classes(frame, target, task)
    keep = y >= 0
    y = y[keep]
    cells = frame[column][keep]
    absent = blocks.missing(cells)
    if numeric:
        values = to_numbers(cells)
        absent = absent | np.isnan(values)
    missing = np.bincount(y[absent], minlength=len(names)).astype(float)
    present, yp = ~absent, y[~absent]
    if numeric:
        values = values[present]
        low, high = (float(values.min()), float(values.max())) if len(values) else (0.0, 1.0)
        edges = np.linspace(low, high if high > low else low + 1.0, bins + 1)
        at = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, bins - 1)
        counts = np.zeros((bins, len(names)))
        np.add.at(counts, (at, yp), 1.0)
        labels = [f"{format_number(a)} to {format_number(b)}"
                  for a, b in zip(edges[:-1], edges[1:])]
        return ColumnSummary(column, True, names, labels, counts, missing, edges,
                             bands=task == REGRESSION)
    codes, values = blocks.factorize(cells[present])
    totals = np.bincount(codes, minlength=len(values))
    if order:
        position = {str(v): k for k, v in enumerate(values)}
        shown = np.array([position[level] for level in order if level in position],
                         dtype=np.int64)
    else:
        shown = np.argsort(-totals, kind="stable")[:top]
    bar = np.full(len(values), len(shown), dtype=np.int64)
    bar[shown] = np.arange(len(shown))
    others = max(len(values) - len(shown), 0)
    counts = np.zeros((len(shown) + (others > 0), len(names)))
    np.add.at(counts, (bar[codes], yp), 1.0)
    labels = [str(values[k]) for k in shown] + (["(other values)"] if others else [])
    return ColumnSummary(column, False, names, labels, counts, missing, None, others,
                         bool(order), task == REGRESSION)


def tree_cuts(model, column: str) -> list[float]:
    """The thresholds a tree's tests put on numeric `column` (sorted, each once): the
    lines a scatter of that column draws.  A decision diagram's tests may combine
    columns: none are drawn for it."""
    if not isinstance(model, Tree):
        return []
    cuts = set()
    for node in range(model.n_nodes):
        if model.is_leaf(node):
            continue
        feature = model.features[model.feature[node]]
        if feature.column != column:
            continue
        if feature.op == LE:
            cuts.add(float(feature.value))
        elif feature.op == NUM:
            cuts.add(float(model.threshold[node]))
    return sorted(cuts)


def numeric_pairs(frame: pd.DataFrame, x: str, y: str, target: str,
                  limit: int = 5000, seed: int = 0, task: str = CLASSIFICATION
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """(x values, y values, class indices, class names) of the rows with a class (a
    regression's: its band) and both cells present, at most `limit` of them (a
    seeded sample): a scatter's points."""
    classes, names = _classes(frame, target, task)
    xs, ys = to_numbers(frame[x]), to_numbers(frame[y])
    keep = np.flatnonzero((classes >= 0) & ~np.isnan(xs) & ~np.isnan(ys))
    if len(keep) > limit:
        keep = np.sort(np.random.default_rng(seed).choice(keep, limit, replace=False))
    return xs[keep], ys[keep], classes[keep], names
