"""A table of numbers prepared from its arrays (`prepare_numbers`, the notebook's fast
path) equals the same numbers prepared as a table (`prepare`, the CLI's path): the
same Dataset (matrix, classes, weights, recipe, report) and the same features of new
rows, through the recipe itself and through its JSON.

One known difference is allowed for: a column holding both 0.0 and -0.0 keeps, in the
table, the sign of its first zero (pandas hashes them as one value); the two are
equal numbers, so every comparison here holds."""

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.data.csv_reader import RawTable
from engine.data.dataset import PrepOptions
from engine.data.preprocessing import Preprocessing
from engine.errors import DataError
from engine.estimators import OptimalTreeClassifier
from engine.featurize import prepare, prepare_numbers

TARGET = "__class__"
BINARIZE = ["none", "midpoints", "guided", "guided:3", "quantile:2", "quantile:5"]
MISSING = ["route", "impute", "indicator", "drop"]


def column(rows: int):
    """One column's values: a kind of column real tables have, NaN for missing."""
    ints = st.integers(-3, 3).map(float)
    floats = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
    values = st.one_of(
        st.just(st.just(4.0)),                                # constant
        st.just(st.sampled_from([0.0, 1.0])),                 # 0/1
        st.just(ints),                                        # few distinct
        st.just(floats),                                      # many distinct
        st.just(st.sampled_from([0.5, 2.25, -1.0])),
    )
    return values.flatmap(lambda cells: st.lists(
        st.one_of(cells, cells, cells, st.just(np.nan)), min_size=rows, max_size=rows))


@st.composite
def tables(draw):
    rows = draw(st.integers(2, 40))
    columns = draw(st.integers(1, 4))
    X = np.array([draw(column(rows)) for _ in range(columns)], dtype=np.float64).T
    if draw(st.booleans()):   # row numbers: an id column
        X = np.column_stack([X, np.arange(1.0, rows + 1)])
    labels = draw(st.lists(st.sampled_from(["0", "1", "2"]), min_size=rows,
                           max_size=rows))
    options = PrepOptions(target=TARGET, binarize=draw(st.sampled_from(BINARIZE)),
                          missing=draw(st.sampled_from(MISSING)),
                          depth=draw(st.sampled_from([None, 1, 2, 3])))
    return X, np.array(labels, dtype=object), options


def both(X, labels, options):
    """(text path, array path): each a Dataset or the DataError message."""
    names = [f"x{j}" for j in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=names)
    frame[TARGET] = labels
    out = []
    for run in (lambda: prepare(RawTable(frame, ",", True, "utf-8", False), options),
                lambda: prepare_numbers(X, names, labels, options)):
        try:
            out.append(run())
        except DataError as error:
            out.append(str(error))
    return out


def assert_same(text, numbers):
    if isinstance(text, str) or isinstance(numbers, str):
        assert text == numbers
        return
    assert text.X.dtype == numbers.X.dtype
    assert numbers.X.flags.c_contiguous   # laid out by rows, as the solvers read it
    np.testing.assert_array_equal(text.X, numbers.X)
    np.testing.assert_array_equal(text.y, numbers.y)
    np.testing.assert_array_equal(text.w, numbers.w)
    assert text.prep == numbers.prep
    assert text.report == numbers.report


@st.composite
def two_valued_tables(draw):
    """Tables whose every column holds at most two numbers (0/1 data, which arrays
    prepare as a whole, `recipe.fit_two_valued`), now and then with a missing cell
    (which sends them column by column)."""
    rows = draw(st.integers(1, 30))
    values = st.sampled_from([0.0, -0.0, 1.0, 2.5, -7.0, np.inf, -np.inf])
    columns = []
    for _ in range(draw(st.integers(1, 6))):
        pair = draw(st.lists(values, min_size=1, max_size=2))
        columns.append(draw(st.lists(st.sampled_from(pair), min_size=rows, max_size=rows)))
    X = np.array(columns, dtype=np.float64).T
    if draw(st.integers(0, 9)) == 0:
        X[draw(st.integers(0, rows - 1)), draw(st.integers(0, X.shape[1] - 1))] = np.nan
    if draw(st.booleans()):   # laid out by columns, as a frame's values may be
        X = np.asfortranarray(X)
    labels = draw(st.lists(st.sampled_from(["0", "1", "2"]), min_size=rows,
                           max_size=rows))
    options = PrepOptions(target=TARGET, binarize=draw(st.sampled_from(BINARIZE)),
                          missing=draw(st.sampled_from(MISSING)),
                          depth=draw(st.sampled_from([None, 1, 2, 3])),
                          merge_duplicates=draw(st.booleans()))
    return X, np.array(labels, dtype=object), options


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), st.data())
def test_arrays_prepare_as_their_table(table, data):
    check_table(table, data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(two_valued_tables(), st.data())
def test_two_valued_arrays_prepare_as_their_table(table, data):
    check_table(table, data)


def check_table(table, data):
    """Both paths make the same Dataset, or the same error, and the same features of
    new rows (through the recipe and through its JSON)."""
    X, labels, options = table
    text, numbers = both(X, labels, options)
    assert_same(text, numbers)
    if isinstance(text, str):
        return
    new = np.array(data.draw(st.lists(st.lists(
        st.one_of(st.sampled_from([np.nan, 0.0, 1.0, -3.0, 4.0, 1e7]),
                  st.floats(-1e6, 1e6)), min_size=X.shape[1], max_size=X.shape[1]),
        min_size=1, max_size=8)), dtype=np.float64)
    names = [f"x{j}" for j in range(X.shape[1])]
    expected = text.prep.transform(pd.DataFrame(new, columns=names))
    for prep in (numbers.prep, Preprocessing.from_dict(json.loads(
            json.dumps(numbers.prep.to_dict())))):
        np.testing.assert_array_equal(
            prep.transform_columns(dict(zip(names, new.T)), len(new)), expected)


def test_kinds_and_ignore_options_apply_to_arrays():
    """A numeric column made categorical, and an ignored one, as in the table."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 5, (60, 3)).astype(float)
    labels = np.array([str(v) for v in rng.integers(0, 2, 60)], dtype=object)
    from engine.data.columns import ColumnKind
    options = PrepOptions(target=TARGET, kinds={"x0": ColumnKind.CATEGORICAL},
                          ignore=("x2",), binarize="guided")
    assert_same(*both(X, labels, options))


@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.uint8])
def test_numeric_frames_fit_as_arrays(dtype):
    """A DataFrame of numbers takes the array path; with a text column added and
    ignored by no tree, the table path gives the same tree."""
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.integers(0, 6, (80, 3)).astype(dtype), columns=["a", "b", "c"])
    y = (X["a"] + X["b"] > 5).to_numpy()
    fast = OptimalTreeClassifier(algorithm="blossom", max_depth=2).fit(X, y)
    slow = OptimalTreeClassifier(algorithm="blossom", max_depth=2).fit(
        X.assign(d=pd.Series(["k"] * 80, dtype=object)), y)   # constant: left out
    assert fast.model_.prep.features == slow.model_.prep.features
    assert fast.model_.to_dict()["nodes"] == slow.model_.to_dict()["nodes"]
    np.testing.assert_array_equal(fast.predict(X), slow.predict(X.assign(d="k")))


@pytest.mark.parametrize("layout", ["frame", "array by rows", "array by columns"])
def test_zeros_and_ones_fit_as_their_table(layout):
    """0/1 data, a frame or an array laid out either way, takes the whole-table path,
    `recipe.fit_two_valued`, and gives the table path's tree."""
    rng = np.random.default_rng(2)
    X = pd.DataFrame(rng.integers(0, 2, (300, 70)), columns=[f"x{j}" for j in range(70)])
    X["x6"] = 1   # constant: left out by both (and rows of more than 64 features)
    y = ((X["x0"] & X["x1"]) | X["x2"]).to_numpy()
    given = {"frame": X, "array by rows": np.ascontiguousarray(X.to_numpy()),
             "array by columns": np.asfortranarray(X.to_numpy())}[layout]
    fast = OptimalTreeClassifier(algorithm="blossom", max_depth=2).fit(given, y)
    slow = OptimalTreeClassifier(algorithm="blossom", max_depth=2).fit(
        X.assign(text=pd.Series(["k"] * 300, dtype=object)), y)   # constant text too
    assert fast.model_.prep == slow.model_.prep
    assert fast.model_.to_dict()["nodes"] == slow.model_.to_dict()["nodes"]
    assert fast.train_error_ == slow.train_error_
