"""From a raw table to the weighted training set every solver receives.

`prepare` applies the user's choices (target, ignored columns, column kinds, missing
values, binarisation) through a recipe fitted on the table (`recipe.fit`, which
chooses the features) and records in a `PrepReport` everything it changed, so nothing
happens silently.  `binarized` turns a prepared table's continuous features into 0/1
tests, the route `auto` takes to Blossom.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pandas as pd

from engine.data import blocks
from engine.data.class_weights import class_factors
from engine.data.columns import (USABLE_KINDS, ColumnKind, choose_target, number_column,
                                 parse_column)
from engine.data.csv_reader import RawTable
from engine.data.dataset import (MANY_CLASSES, MANY_NUMBER_CLASSES, MAX_CLASSES_PER_ROWS,
                                 Dataset, PrepOptions, PrepReport, drop_inconsistent,
                                 merge_duplicates)
from engine.data.features import LE, NUM, Feature
from engine.data.preprocessing import Binarization
from engine.data.task import choose_task
from engine.errors import DataError, Progress
from engine.featurize import recipe
from engine.vocabulary import CLASSIFICATION, REGRESSION


def prepare(raw: RawTable, options: PrepOptions = PrepOptions(),
            progress: Progress | None = None) -> Dataset:
    """Training set from a raw table according to `options` (see PrepOptions).

    Each column's text is parsed once; `progress(stage, fraction)` is called between
    columns and may raise `Interrupted` to stop.  The result holds no text cell, so a
    caller that reads a table only to train on it once (the CLI, the notebook) can
    drop `raw` before training.
    """
    progress = progress or _no_progress
    frame = raw.frame
    report = PrepReport(rows_read=len(frame), reading=list(raw.notes))
    target = choose_target(list(frame.columns), options.target, raw)
    _check_names(list(frame.columns), target, options)
    has_target = ~blocks.missing(frame[target])
    report.rows_missing_target = int((~has_target).sum())
    if report.rows_missing_target:
        frame = frame[has_target]
    report.task, report.task_reason = choose_task(target, frame[target], options.task)
    names = [name for name in frame.columns if name != target]
    columns, missing = _typed_inputs(names, lambda j: _text_column(frame[names[j]]),
                                     options, report, progress)
    return _prepared(columns, missing, target, frame[target].to_numpy(), options,
                     report, progress)


def prepare_numbers(X: np.ndarray, names: list[str], labels: np.ndarray,
                    options: PrepOptions, progress: Progress | None = None) -> Dataset:
    """`prepare` of a table of numbers (the notebook's numeric arrays and frames), with
    no text in between: X (float64, rows by columns, NaN missing) holds the columns
    `names`, `labels` each row's class (text, none missing), `options.target` names
    the class column.  The Dataset equals what `prepare` makes of the same numbers
    written as a table (tests/test_numeric_prepare.py): the columns are typed by the
    same rule (`columns.column_info`) and go through the same recipe and transform;
    only the text parsing is skipped, which cost about 1 ms a column.
    """
    progress = progress or _no_progress
    report = PrepReport(rows_read=len(X))
    target = str(options.target)
    _check_names([*names, target], target, options)
    labels = np.asarray(labels, dtype=object)
    report.task, report.task_reason = choose_task(target, labels, options.task)
    if not options.ignore and not options.kinds and report.task == CLASSIFICATION:
        two_valued = recipe.fit_two_valued(X, names, target, labels, options.missing,
                                           Binarization.parse(options.binarize))
        if two_valued is not None:
            prep, matrix, constant = two_valued
            report.ignored_columns.update((name, "a single value") for name in constant)
            _check_classes(prep, target, len(matrix), report)
            return _dataset(prep, matrix, labels, options, report, progress)
    columns, missing = _typed_inputs(names, lambda j: _number_column(names[j], X[:, j]),
                                     options, report, progress)
    return _prepared(columns, missing, target, labels, options, report, progress)


def _check_names(names: list[str], target: str, options: PrepOptions) -> None:
    """Refuse options naming columns the table lacks, or ignoring the target."""
    for name in list(options.ignore) + list(options.kinds):
        if name not in names:
            raise DataError(f"There is no column named '{name}'.")
    if target in options.ignore:
        raise DataError(f"Column '{target}' is the class column, so it cannot be ignored: "
                        "choose another class column (--target) or keep it.")


def _prepared(columns: dict, missing: dict, target: str, classes: np.ndarray,
              options: PrepOptions, report: PrepReport, progress: Progress) -> Dataset:
    """The Dataset of typed input columns (`_typed_inputs`) and the target's cells."""
    if not columns:
        raise DataError(_nothing_left(report.ignored_columns))
    kinds = {name: kind for name, (kind, _) in columns.items()}
    absent = np.column_stack(list(missing.values()))
    keep = slice(None)
    if options.missing == "drop":
        complete = ~absent.any(axis=1)
        report.rows_missing_values = int((~complete).sum())
        keep = complete
    elif options.missing == "route":
        report.cells_routed = int(absent.sum())
    else:
        report.cells_imputed = int(absent.sum())
    # Numeric columns as float arrays, text ones as categorical Series (`blocks.coded`).
    table = {name: cells[keep] if isinstance(cells, np.ndarray)
             else pd.Series(cells.array[keep]) for name, (_, cells) in columns.items()}
    table[target] = classes[keep]
    n_rows = len(table[target])
    if n_rows == 0:
        raise DataError("No rows are left after removing rows with missing values.")

    identifiers: dict[str, str] = {}
    if report.task == REGRESSION:
        _check_regression(options)
    prep = recipe.fit(table, target, kinds, options.missing,
                      Binarization.parse(options.binarize), progress, options.depth,
                      options.class_weight, chosen=options.kinds, left_out=identifiers,
                      orders=options.orders, notes=report.warnings, task=report.task)
    report.ignored_columns.update(identifiers)
    report.warnings.extend(f"Column '{name}' was left out: {reason}."
                           for name, reason in identifiers.items())
    if not prep.columns:
        raise DataError(_nothing_left(report.ignored_columns))
    if not prep.regression:
        _check_classes(prep, target, n_rows, report)
    dtype = np.uint8 if prep.all_binary else np.float64
    _check_room(n_rows, len(prep.features), np.dtype(dtype).itemsize)
    X = prep.transform_columns(table, n_rows, progress, dtype)
    return _dataset(prep, X, table[target], options, report, progress)


def _check_regression(options: PrepOptions) -> None:
    """Refuse the options that need classes when the target is a regression's."""
    for wanted, what in ((options.class_weight is not None, "class weights do"),
                         (options.drop_inconsistent, "dropping contradicting rows does")):
        if wanted:
            raise DataError(f"The target holds numbers (a regression), so {what} not "
                            "apply: leave that option out, or ask for classification.")


def _check_classes(prep, target: str, n_rows: int, report: PrepReport) -> None:
    """Refuse a target of one class or of a class per row; doubt an odd one."""
    if len(prep.class_names) < 2:
        raise DataError(f"The target column '{target}' has a single class "
                        f"('{prep.class_names[0]}'); a tree needs at least two.")
    if len(prep.class_names) > max(MAX_CLASSES_PER_ROWS * n_rows, MANY_CLASSES):
        raise DataError(f"The target column '{target}' has {len(prep.class_names)} "
                        "different values, which looks like a measurement rather than a "
                        "class: choose the class column (--target).")
    _doubt_target(target, prep.class_names, report)


def _dataset(prep, X: np.ndarray, classes, options: PrepOptions, report: PrepReport,
             progress: Progress) -> Dataset:
    """The Dataset of a fitted recipe, its feature matrix and the target's cells, with
    the options' row and class changes made."""
    data = Dataset(X, prep.labels(classes), np.ones(len(X)), prep, report)
    if options.remove_redundant:
        progress("removing redundant features", None)
        data = remove_redundant_features(data)
    if options.drop_inconsistent:
        progress("dropping contradicting rows", None)
        data = drop_inconsistent(data)
    if options.merge_duplicates:
        progress("merging duplicate rows", None)
        data = merge_duplicates(data)
    if options.class_weight is not None:
        data.class_weights = class_factors(options.class_weight, data.y, data.class_names,
                                           data.w)
        data.counts, data.w = data.w, data.w * data.class_weights[data.y]
        shown = [f"{name} × {factor:.4g}"
                 for name, factor in zip(data.class_names, data.class_weights)]
        data.report.class_weights = ", ".join(shown[:20]) + (", ..." if len(shown) > 20 else "")
    return data


def binarized(data: Dataset, spec: str, depth: int | None = None,
              progress: Progress | None = None, guide=None) -> Dataset:
    """`data` with each continuous feature replaced by 0/1 tests `column <= t` chosen by
    the binarisation `spec`, as if the table had been prepared that way: the `auto`
    algorithm's route from continuous data to Blossom.

    `guided` keeps the thresholds of the greedy tree of `depth` on these rows, or of
    `guide` (that tree, already grown: `auto` grows it first as its answer should time
    run out, and it need not be grown twice).  `progress(stage, fraction)` is called
    between features and between blocks of rows (it may stop the work).  The 0/1
    matrix is written a block of rows at a time, never as a float copy: at 3 million
    rows a column-by-column build took 11 GB.
    """
    progress = progress or _no_progress
    binarization = Binarization.parse(spec)
    keep: dict[int, np.ndarray] = {}
    if binarization.mode == "guided":
        keep = (recipe.tree_thresholds(guide.feature, guide.threshold, data.features)
                if guide is not None
                else recipe.greedy_thresholds(data.features, data.X, data.y, data.w,
                                              data.n_classes, depth, progress))
    features, sources, cuts = [], [], []
    for j, feature in enumerate(data.features):
        progress("choosing thresholds", j / max(data.n_features, 1))
        if feature.op != NUM:
            features.append(feature)
            sources.append(j)
            cuts.append(None)
            continue
        values = np.asarray(data.X[:, j], dtype=np.float64)
        observed = values if feature.missing is None else values[values != feature.value]
        thresholds = binarization.thresholds(observed, keep.get(j))
        features.extend(Feature(feature.column, LE, float(t), feature.missing)
                        for t in thresholds)
        sources.append(j)
        cuts.append(thresholds)
    prep = replace(data.prep, features=features, binarize=str(binarization))
    binary = all(f.binary for f in features)
    X = np.empty((data.n_rows, len(features)), dtype=np.uint8 if binary else np.float64)
    for start in range(0, data.n_rows, BINARIZE_BLOCK_ROWS):
        progress("building the 0/1 tests", start / max(data.n_rows, 1))
        rows = slice(start, start + BINARIZE_BLOCK_ROWS)
        block = np.asarray(data.X[rows], dtype=np.float64)
        column = 0
        for j, thresholds in zip(sources, cuts):
            if thresholds is None:
                X[rows, column] = block[:, j]
                column += 1
            else:
                X[rows, column:column + len(thresholds)] = block[:, j, None] <= thresholds
                column += len(thresholds)
    return Dataset(X, data.y, data.w, prep, data.report, data.counts, data.class_weights)


# Rows `binarized` writes at a time (a few MB of the source and the result).
BINARIZE_BLOCK_ROWS = 1 << 14


def remove_redundant_features(data: Dataset) -> Dataset:
    """Drop binary features that are constant, or equal / complementary to an earlier one."""
    from engine.solvers.binary_columns import redundant_columns  # numba: loaded when used
    drop = redundant_columns(data.X, [j for j, f in enumerate(data.features) if f.binary])
    if not drop:
        return data
    keep = [j for j in range(data.n_features) if j not in drop]
    report = replace(data.report, redundant_features=data.report.redundant_features
                     + len(drop))
    return Dataset(data.X[:, keep], data.y, data.w, data.prep.without_features(drop), report)


# The feature matrix may take at most this share of the memory available now (the
# solvers need room of their own).
MATRIX_SHARE = 0.6


def _check_room(rows: int, features: int, itemsize: int) -> None:
    """Refuse, in one sentence with what to try, a feature matrix that would not fit
    in the memory available, before building it (rather than swapping for minutes or
    being killed)."""
    needed = rows * features * itemsize
    free = available_memory()
    if free is None or needed <= MATRIX_SHARE * free:
        return
    raise DataError(
        f"The {features:,} features of {rows:,} rows would take {needed / 2**30:.1f} GB, "
        f"more than this computer has free ({free / 2**30:.1f} GB): use fewer columns "
        "(--ignore, or “Use as: ignore”), fewer thresholds (--binarize quantile:4) or "
        "a sample of the rows.")


def available_memory() -> int | None:
    """Bytes of memory available now, None where unknown: Linux's MemAvailable (free
    memory plus the file cache it can drop), else the free pages (macOS)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _nothing_left(ignored: dict[str, str]) -> str:
    """Why no input column is left, and what to try, in one sentence."""
    named = [f"'{name}' ({why})" for name, why in list(ignored.items())[:3]]
    more = f" and {len(ignored) - 3} more" if len(ignored) > 3 else ""
    verb = "was" if len(ignored) == 1 else "were"
    reasons = f": {', '.join(named)}{more} {verb} left out" if named else ""
    return (f"No usable feature column is left besides the target{reasons}; use one "
            "anyway with --categorical COLUMN (in the app, “Use as” in the column "
            "table), or choose another class column.")


def _doubt_target(target: str, class_names: list[str], report: PrepReport) -> None:
    """Record a doubt about a target with many classes (see MANY_CLASSES)."""
    n = len(class_names)
    numbers = n > MANY_NUMBER_CLASSES and bool(
        np.isfinite(pd.to_numeric(pd.Series(class_names), errors="coerce")).all())
    if n <= MANY_CLASSES and not numbers:
        return
    what = "different numbers" if numbers else "different values"
    report.target_doubt = (f"The class column '{target}' has {n} {what}; is it really "
                           "the class?")
    report.warnings.append(
        f"The class column '{target}' has {n} {what}, so it may be a measurement or an "
        "id rather than a class; training goes on (choose the class column with "
        "--target).")


def _no_progress(stage: str, fraction: float | None = None) -> None:
    """The progress callback of a caller that wants none."""


def _typed_inputs(names: list[str], typed: Callable, options: PrepOptions,
                  report: PrepReport, progress: Progress):
    """The input columns to use: name -> (kind, cells), numeric ones as floats, text
    ones coded (a categorical Series), and name -> missing mask.  `typed(j)` gives the
    j-th column's (ColumnInfo, float values or None, its coded Series when asked)."""
    columns, missing = {}, {}
    for position, name in enumerate(names):
        progress("typing the columns", position / max(len(names), 1))
        if name in options.ignore:
            report.ignored_columns[name] = "as asked"
            continue
        info, numbers, coded = typed(position)
        kind = options.kinds.get(name, info.kind)
        if kind == ColumnKind.NUMERIC and not info.numeric:
            raise DataError(f"Column '{name}' cannot be numeric: it holds text.")
        if kind in USABLE_KINDS and info.n_distinct >= 2:
            if kind in (ColumnKind.NUMERIC, ColumnKind.BINARY) and numbers is not None:
                columns[name], missing[name] = (kind, numbers), np.isnan(numbers)
            else:
                cells = coded()
                columns[name], missing[name] = (kind, cells), blocks.missing(cells)
        else:
            report.ignored_columns[name] = ("a single value" if info.n_distinct <= 1
                                            else info.reason
                                            or "a different value on every row")
    return columns, missing


def _text_column(cells: pd.Series):
    """`_typed_inputs`' view of a column of text cells: each text hashed once."""
    cells = blocks.coded(cells)
    info, numbers = parse_column(cells)
    return info, numbers, lambda: cells


def _number_column(name: str, numbers: np.ndarray):
    """`_typed_inputs`' view of a column of numbers; its text form (coded floats) is
    made only for a column the options make categorical."""
    numbers = np.ascontiguousarray(numbers, dtype=np.float64)
    return (number_column(name, numbers), numbers,
            lambda: blocks.coded(pd.Series(numbers, name=name)))
