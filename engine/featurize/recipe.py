"""Fitting the recipe (`Preprocessing`) that turns a table's cells into features.

This is where the features are chosen, above both the data layer (which reads tables
and applies a fitted recipe) and the solvers (whose greedy kernel chooses some of the
features): guided thresholds and the groups of a text column are the splits of a
greedy tree grown on the table's own columns.

The greedy tree (`guide`) sees each numeric column as numbers and each text column
as value codes (the kernel's subset splits, CART's), missing cells as the search
will see them: filled (impute), or routed (`route`: a numeric column twice, missing
below and above every value; a text column with missing as a value of its own).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Collection, Mapping
from dataclasses import dataclass

import numpy as np

from engine.data import blocks
from engine.data.class_weights import class_factors
from engine.data.columns import ColumnKind
from engine.data.features import EQ, LE, MISSING, NUM, Feature
from engine.data.preprocessing import (GUIDED_DEPTH, Binarization, InputColumn,
                                       Preprocessing, class_label)
from engine.errors import DataError
from engine.featurize.categories import (SMALL_COLUMN, distinct, group, identifier_reason,
                                         pooled_codes, ranked, rare_floor, value_groups)
from engine.featurize.ordered import guess_order, ordered_features, unordered_values
from engine.vocabulary import CLASSIFICATION, MISSING_POLICIES, REGRESSION


@dataclass
class _Column:
    """One input column as the guide and the feature choice see it."""

    input: InputColumn
    numbers: np.ndarray | None = None    # numeric columns: the values (NaN missing)
    values: list[str] | None = None      # text columns: the distinct values
    codes: np.ndarray | None = None      # text: value codes, len(values) for missing
    missing: np.ndarray | None = None    # where cells are missing
    route: bool = False                  # missing cells are routed by each test

    @property
    def routed(self) -> bool:
        return self.route and bool(self.missing.any())


def fit(frame: Mapping, target: str, kinds: dict[str, ColumnKind], missing: str,
        binarize: Binarization, progress=None, depth: int | None = None,
        class_weight=None, chosen: Collection[str] = (),
        left_out: dict[str, str] | None = None,
        orders: dict[str, tuple[str, ...]] | None = None,
        notes: list[str] | None = None, task: str = CLASSIFICATION) -> Preprocessing:
    """Learn fills, thresholds and value groups from `frame` (`frame[name]`: a numeric
    column's float values, NaN missing, as `prepare` parsed them; a text column's
    cells, a categorical Series; the target's cells).

    `kinds` maps each input column to use onto its kind; `frame` already has the rows
    the model trains on (with `drop`, rows with missing cells are gone).
    `progress(stage, fraction)` is called between columns (it may stop the work).
    `depth` is the depth of the greedy tree whose splits `guided` thresholds and text
    columns keep, grown with the rows weighted by `class_weight` (as the solvers will
    weigh them).  A text column that looks like an identifier
    (`categories.identifier_reason`) is left out, and why is written into `left_out`
    (name -> reason), unless its kind was `chosen` by the user.  An ordered column
    is split between its `orders` levels (`featurize.ordered`), guessed when not
    given; a sentence about values outside them goes to `notes`.  A regression `task`
    has numbers for a target: the guide is a regression tree and groups follow means.
    """
    if missing not in MISSING_POLICIES:
        raise DataError(f"Unknown missing-value policy '{missing}': use "
                        f"{', '.join(MISSING_POLICIES)}.")
    route = missing == "route"
    regression = task == REGRESSION
    class_names = [] if regression else _class_names(frame[target])
    y = Preprocessing(target, class_names, [], [], task=task).labels(frame[target])
    known = ~np.isnan(y) if regression else y >= 0
    n_classes = len(class_names)   # 0: the target's numbers
    w = np.ones(int(known.sum()))
    if class_weight is not None:
        w = class_factors(class_weight, y[known], class_names, w)[y[known]]
    columns = []
    for position, (name, kind) in enumerate(kinds.items()):
        if progress is not None:
            progress("counting each column's values", position / len(kinds))
        column = _column(name, frame[name], kind, route)
        reason = None if name in chosen or kind != ColumnKind.CATEGORICAL else \
            identifier_reason(name, np.where(column.missing, len(column.values),
                                             column.codes)[known],
                              len(column.values), y[known], n_classes)
        if reason is None:
            columns.append(column)
        elif left_out is not None:
            left_out[name] = reason
    texts = [c for c in columns if c.values is not None
             and c.input.kind not in (ColumnKind.BINARY, ColumnKind.ORDERED)]
    keep: dict = {}
    # (0/1 columns have one test each: a guide would choose nothing for them)
    several = any(c.input.kind != ColumnKind.BINARY for c in columns)
    if (binarize.mode == "guided" and several) or any(len(c.values) > SMALL_COLUMN
                                                      for c in texts):
        keep = guide([c for c in columns if c.input.kind != ColumnKind.ORDERED], y[known],
                     w, known, n_classes, depth, progress)
    features = []
    for position, column in enumerate(columns):
        if progress is not None:
            progress("choosing thresholds and groups", position / len(columns))
        if column.input.kind == ColumnKind.ORDERED:
            levels = tuple((orders or {}).get(column.input.name)
                           or guess_order(column.values))
            features.extend(ordered_features(column.input.name, levels, column.routed))
            note = unordered_values(column.input.name, levels, column.values)
            if note and notes is not None:
                notes.append(note)
        else:
            features.extend(_features(column, binarize, keep, y[known], w, known,
                                      n_classes, route))
        if missing == "indicator" and column.missing.any():
            features.append(Feature(column.input.name, MISSING))
    return Preprocessing(target, class_names, [c.input for c in columns], features,
                         missing, str(binarize), task)


def _class_names(cells) -> list[str]:
    """The classes of the target's cells, in the model's order."""
    present = blocks.factorize(cells)[1]
    return _sort_key(list(dict.fromkeys(class_label(c) for c in present)))


# Up to this many cells `fit_two_valued` works on the whole table at once; a larger
# table goes column by column, where progress and Stop are heard between columns.
TWO_VALUED_CELLS = 4_000_000


def fit_two_valued(X: np.ndarray, names: list[str], target: str, classes: np.ndarray,
                   missing: str, binarize: Binarization):
    """`fit` and `transform_columns` at once for a table of numbers whose every column
    holds at most two values and no missing cell (0/1 data: the CP4IM sets, one-hot
    encodings), or None for any other table: (the recipe, its 0/1 matrix, the
    constant columns left out).

    The same recipe `fit` would make (tests/test_numeric_prepare.py), by whole-table
    numpy operations: column by column, typing, fitting and transforming 36 such
    columns took 2.5 ms of a 5 ms fit.  Every column with two values is one feature
    `column == larger value` whatever the binarisation, its fill the more frequent
    value (the lower on a tie); a constant column is left out.
    """
    if missing not in MISSING_POLICIES:
        raise DataError(f"Unknown missing-value policy '{missing}': use "
                        f"{', '.join(MISSING_POLICIES)}.")
    if X.size > TWO_VALUED_CELLS or not len(X):
        return None
    low, high = X.min(axis=0), X.max(axis=0)   # NaN where a cell is missing
    if np.isnan(low).any() or not all(((part == low) | (part == high)).all()
                                      for part in (X[:64], X)):   # most tables fail early
        return None
    varied = np.flatnonzero(low != high)
    if not len(varied):
        return None
    hits = np.ascontiguousarray(X[:, varied] == high[varied])   # rows, as solvers read
    fills = np.where(2 * np.count_nonzero(hits, axis=0) > len(X), high[varied], low[varied])
    columns = [InputColumn(names[j], ColumnKind.BINARY, float(fill))
               for j, fill in zip(varied, fills)]
    features = [Feature(names[j], EQ, float(high[j]), None) for j in varied]
    prep = Preprocessing(target, _class_names(classes), columns, features, missing,
                         str(binarize))
    constant = [names[j] for j in np.flatnonzero(low == high)]
    return prep, hits.view(np.uint8), constant


def _column(name: str, cells, kind: ColumnKind, route: bool) -> _Column:
    absent = blocks.missing(cells)
    if absent.all():
        raise DataError(f"Column '{name}' has no values.")
    if isinstance(cells, np.ndarray):   # numbers (a numeric or 0/1 numeric column)
        present = cells[~absent]
        if kind == ColumnKind.BINARY:   # the more frequent value, the lower on a tie
            low, high = present.min(), present.max()
            fill = float(high if 2 * np.count_nonzero(present == high) > len(present)
                         else low)
        else:
            fill = float(np.median(present))
        return _Column(InputColumn(name, kind, fill), numbers=cells, missing=absent,
                       route=route)
    codes, uniques = blocks.factorize(cells)
    names = [str(v) for v in uniques]
    order = np.argsort(np.array(names, dtype=object), kind="stable")
    values = [names[i] for i in order]
    recode = np.empty(len(names) + 1, dtype=np.int64)
    recode[order] = np.arange(len(names))
    counts = np.bincount(recode[codes[~absent]], minlength=len(values))
    fill_code = int(np.argmax(counts))     # the most frequent, first by name on ties
    recode[-1] = len(values) if route else fill_code   # code -1: a missing cell
    return _Column(InputColumn(name, kind, values[fill_code]), values=values,
                   codes=recode[codes], missing=absent, route=route)


def _features(column: _Column, binarize: Binarization, keep: dict, y, w, known,
              n_classes: int, route: bool) -> list[Feature]:
    name, kind = column.input.name, column.input.kind
    flags = (False, True) if column.routed else (None,)
    if column.values is not None:
        if kind == ColumnKind.BINARY:
            return [Feature(name, EQ, column.values[-1], m) for m in flags]
        groups = value_groups(name, column.values, column.codes[known], y, w, n_classes,
                              route)
        return distinct(groups + keep.get(name, []))
    present = column.numbers[~np.isnan(column.numbers)]
    if kind == ColumnKind.BINARY:
        return [Feature(name, EQ, float(present.max()), m) for m in flags]
    if binarize.mode == "none":
        return [Feature(name, NUM, _stand_in(present, m), m) for m in flags]
    cuts = binarize.cut_points(present)   # once for both routes
    return [Feature(name, LE, float(t), m) for m in flags
            for t in binarize.keeping(cuts, keep.get((name, m)))]


def _stand_in(present: np.ndarray, missing: bool | None) -> float | None:
    """The number a missing cell becomes in a routed continuous feature: below every
    observed value (missing goes with `<=`) or above (with `>`); None without a route.
    A whole number one past the range, so thresholds around it read cleanly; an
    infinite end of the range is its own stand-in (missing cells join those cells)."""
    if missing is None:
        return None
    low, high = float(present.min()), float(present.max())
    if not math.isfinite(low if missing else high):
        return low if missing else high   # nothing lies beyond: missing joins -inf / inf
    value = math.floor(low) - 1.0 if missing else math.ceil(high) + 1.0
    if missing and not value < low:
        value = float(np.nextafter(low, -np.inf))
    if not missing and not value > high:
        value = float(np.nextafter(high, np.inf))
    return value


def guide(columns: list[_Column], y: np.ndarray, w: np.ndarray, known: np.ndarray,
          n_classes: int, depth: int | None, progress=None) -> dict:
    """The splits of the greedy tree of `depth` on the columns: (column name, route
    flag) -> its thresholds on a numeric column, column name -> the groups it splits a
    text column by (as `Feature`s).  `n_classes` 0: `y` holds a regression's numbers
    (the tree is a regression tree)."""
    from engine.solvers.greedy.kernel import grow_tree, target_arguments  # numba: here

    matrix, meaning, n_categories = [], [], []
    floor = rare_floor(int(known.sum()))
    for column in columns:
        if column.values is not None:
            blocks_of = pooled_codes(np.bincount(column.codes[known],
                                                 minlength=len(column.values) + 1), floor)
            matrix.append(blocks_of[column.codes])
            meaning.append((column, blocks_of))
            n_categories.append(int(blocks_of.max()) + 1)
            continue
        for flag in ((False, True) if column.routed else (None,)):
            stand_in = _stand_in(column.numbers[~np.isnan(column.numbers)], flag)
            fill = column.input.fill if stand_in is None else stand_in
            matrix.append(np.where(np.isnan(column.numbers), fill, column.numbers))
            meaning.append((column, flag))
            n_categories.append(0)
    if not known.all():
        matrix = [values[known] for values in matrix]
    X = blocks.row_major(int(known.sum()), len(matrix), lambda j, rows: matrix[j][rows])
    del matrix   # its columns are in X now (at 3 M rows, 0.5 GB less while the tree grows)
    depth = GUIDED_DEPTH if depth is None else max(int(depth), 0)
    control = np.zeros(4)   # control[0] != 0 stops the kernel
    labels, n_classes, target = target_arguments(y, n_classes)
    feature, threshold, _, _, _, subset, _ = _polling(
        grow_tree, (X, labels, np.ascontiguousarray(w, dtype=np.float64), n_classes,
                    depth, 1.0, control, np.array(n_categories, dtype=np.int64), target),
        control, progress)
    found: dict = {}
    for node, (f, t) in enumerate(zip(feature, threshold)):
        if f < 0:
            continue
        column, how = meaning[f]
        name = column.input.name
        if column.values is None:
            found.setdefault((name, how), []).append(float(t))
            continue
        V = len(column.values)
        inside = subset[node][how].astype(bool)   # each value's block, missing last
        members = inside[:V]
        missing = bool(inside[V]) if column.routed else None
        split = group(name, column.values, members, missing, ranked(column.codes, V))
        if split is not None:
            found.setdefault(name, []).append(split)
    return {key: (np.array(v) if isinstance(key, tuple) else v) for key, v in found.items()}


def greedy_thresholds(features: list[Feature], X: np.ndarray, y: np.ndarray,
                      w: np.ndarray, n_classes: int, depth: int | None,
                      progress=None) -> dict[int, np.ndarray]:
    """Feature index -> thresholds that the greedy tree of `depth` on the feature
    matrix X uses on its continuous (`NUM`) features (`guided` binarisation of a
    prepared table).

    A greedy tree of depth D is the top of the greedy tree of any larger depth, so
    these thresholds serve every depth up to D.
    """
    from engine.solvers.greedy.kernel import grow_tree, target_arguments  # numba: here

    depth = GUIDED_DEPTH if depth is None else max(int(depth), 0)
    control = np.zeros(4)
    labels, n_classes, target = target_arguments(y, n_classes)
    feature, threshold, *_ = _polling(
        grow_tree, (np.ascontiguousarray(X, dtype=np.float64), labels,
                    np.ascontiguousarray(w, dtype=np.float64), n_classes, depth, 1.0,
                    control, np.zeros(X.shape[1], dtype=np.int64), target),
        control, progress)
    return tree_thresholds(feature, threshold, features)


def tree_thresholds(feature: np.ndarray, threshold: np.ndarray,
                    features: list[Feature]) -> dict[int, np.ndarray]:
    """Feature index -> the thresholds a tree (its `feature` and `threshold` arrays)
    tests its continuous (`NUM`) features at."""
    found: dict[int, list[float]] = {}
    for f, t in zip(feature, threshold):
        if f >= 0 and features[f].op == NUM:
            found.setdefault(int(f), []).append(float(t))
    return {j: np.array(values) for j, values in found.items()}


# Cells times depth of a greedy tree grown in the calling thread, without `progress`
# calls: at most about 30 ms (see `engine.solvers.greedy.adapter.work`), less than the
# 50 ms between two calls, and than starting a thread and waking its waiter on busy
# cores.
INLINE_CELLS = 100_000


def _polling(kernel, args: tuple, control: np.ndarray, progress):
    """Run a nogil kernel in a thread and call `progress` every 50 ms meanwhile; when
    `progress` raises (a stop), stop the kernel through `control` and re-raise.  A
    small tree (INLINE_CELLS) is grown in this thread."""
    X, depth = args[0], args[4]
    if progress is None or X.size * max(depth, 1) <= INLINE_CELLS:
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
            progress("growing the greedy tree that guides the features", None)
    except BaseException:
        control[0] = 1.0
        thread.join()
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _sort_key(names: list[str]):
    try:
        return sorted(names, key=float)
    except ValueError:
        return sorted(names)
