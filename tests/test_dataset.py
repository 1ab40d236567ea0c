"""Column typing, target choice, missing values, binarisation provenance, Blossom preprocessing."""

import numpy as np
import pandas as pd
import pytest

from engine.data.columns import ColumnKind, choose_target, infer_column
from engine.data.csv_reader import parse_text
from engine.data.dataset import (PrepOptions, drop_inconsistent, inconsistent_rows, merge_duplicates)
from engine.featurize import prepare
from engine.data.features import EQ, IN, LE, MISSING, NUM, Feature
from engine.data.preprocessing import Binarization
from engine.errors import DataError

MIXED = """id,age,colour,smoker,height,const,label
1,25,red,yes,1.70,k,a
2,37,blue,no,1.80,k,b
3,52,red,no,,k,a
4,?,green,yes,1.65,k,b
5,41,blue,,1.90,k,b
6,33,red,yes,1.75,k,a
7,60,green,no,1.60,k,a
8,29,blue,yes,1.85,k,b
9,45,red,no,1.72,k,a
10,38,green,yes,1.68,k,b
11,50,blue,no,1.77,k,a
12,27,red,yes,1.81,k,b
13,31,green,no,1.66,k,a
14,44,blue,yes,1.79,k,b
15,36,red,no,1.71,k,a
16,58,green,yes,1.62,k,b
17,23,blue,no,1.88,k,a
18,47,red,yes,1.74,k,b
19,39,green,no,1.69,k,a
20,34,blue,yes,1.83,k,b
21,55,red,no,1.64,k,a
"""


def table(text=MIXED):
    return parse_text(text)


def cells(*values, name="c"):
    return pd.Series(list(values), name=name, dtype=object)


def test_column_kinds():
    raw = table().frame
    kinds = {c: infer_column(raw[c]).kind for c in raw.columns}
    assert kinds == {"id": ColumnKind.ID, "age": ColumnKind.NUMERIC,
                     "colour": ColumnKind.CATEGORICAL, "smoker": ColumnKind.BINARY,
                     "height": ColumnKind.NUMERIC, "const": ColumnKind.CONSTANT,
                     "label": ColumnKind.BINARY}
    assert infer_column(cells("1", "2", "3")).kind == ColumnKind.NUMERIC  # too few for an id
    assert infer_column(cells("0", "1", None)).n_missing == 1


@pytest.mark.parametrize("columns, spec, expected", [
    (["a", "b", "Class", "d"], None, "Class"),
    (["a", "y", "c"], None, "y"),
    (["a", "b", "c"], None, "c"),
    (["a", "b", "c"], "first", "a"),
    (["a", "b", "c"], "last", "c"),
    (["a", "b", "c"], "1", "b"),
    (["a", "b", "c"], -1, "c"),
    (["0", "1", "y"], "1", "1"),   # a column name wins over an index
])
def test_choose_target(columns, spec, expected):
    assert choose_target(columns, spec) == expected


@pytest.mark.parametrize("spec", ["nope", "7", "-4"])
def test_choose_target_errors(spec):
    with pytest.raises(DataError):
        choose_target(["a", "b", "c"], spec)


def test_prepare_ignores_id_and_constant_and_reports():
    data = prepare(table())
    assert data.prep.target == "label"
    assert {c.name for c in data.prep.columns} == {"age", "colour", "smoker", "height"}
    assert set(data.report.ignored_columns) == {"id", "const"}
    assert data.class_names == ["a", "b"]
    assert data.n_rows == 21
    assert data.report.cells_routed == 3 and data.report.cells_imputed == 0
    assert any("3 missing cells are routed" in line for line in data.report.lines())
    filled = prepare(table(), PrepOptions(missing="impute"))
    assert filled.report.cells_imputed == 3 and filled.report.cells_routed == 0
    assert any("filled" in line for line in filled.report.lines())


def test_features_have_readable_provenance():
    data = prepare(table(), PrepOptions(binarize="quantile:3"))
    texts = [f.condition(True) for f in data.features]
    assert "colour = red" in texts and "colour = blue" in texts
    # smoker has a missing cell: its test exists with missing cells on either side
    assert "smoker = yes (missing: no)" in texts and "smoker = yes (missing: yes)" in texts
    imputed = prepare(table(), PrepOptions(binarize="quantile:3", missing="impute"))
    assert "smoker = yes" in [f.condition(True) for f in imputed.features]
    assert any(t.startswith("age <= ") for t in texts)
    assert not any(t.startswith("f") and t[1:].isdigit() for t in texts)
    assert Feature("smoker", EQ, "yes").condition(False) == "smoker != yes"
    assert Feature("age", LE, 37.5).condition(False) == "age > 37.5"
    assert Feature("age", NUM).condition(True, 40.25) == "age <= 40.25"
    assert Feature("age", MISSING).condition(False) == "age is present"
    assert Feature("age", LE, 37.5, True).condition(True) == "age <= 37.5 (missing: yes)"
    assert Feature("age", LE, 37.5, True).condition(False) == "age > 37.5 (missing: no)"
    assert Feature("c", IN, ("a", "b", "c", "d", "e", "f")).condition(False) == \
        "c not in {a, b, c, d, … and 2 more}"


def test_binarised_matrix_matches_provenance():
    raw = table()
    data = prepare(raw, PrepOptions(binarize="midpoints", missing="drop"))
    assert data.X.dtype == np.uint8
    rows = raw.frame[raw.frame[["age", "colour", "smoker", "height"]].notna().all(axis=1)]
    for j, f in enumerate(data.features):
        if f.op == LE:
            expected = rows[f.column].astype(float) <= f.value
        else:
            expected = rows[f.column] == f.value
        assert np.array_equal(data.X[:, j], expected.to_numpy().astype(np.uint8)), f


def test_missing_policies():
    raw = table()
    drop = prepare(raw, PrepOptions(missing="drop"))
    assert drop.n_rows == 18 and drop.report.rows_missing_values == 3
    impute = prepare(raw, PrepOptions(missing="impute"))
    ages = impute.X[:, [f.column for f in impute.features].index("age")]
    assert not np.isnan(impute.X).any()
    assert ages[3] == np.median(raw.frame["age"].dropna().astype(float))
    indicator = prepare(raw, PrepOptions(missing="indicator"))
    flags = [f for f in indicator.features if f.op == MISSING]
    assert {f.column for f in flags} == {"age", "smoker", "height"}
    j = indicator.features.index(Feature("age", MISSING))
    assert indicator.X[:, j].tolist() == [0, 0, 0, 1] + [0] * 17
    with pytest.raises(DataError):
        prepare(raw, PrepOptions(missing="guess"))


def test_binarization_thresholds():
    values = np.array([1, 2, 2, 3, 4, 5, 6, 7, 8, 9, np.nan])
    assert Binarization.parse("midpoints").thresholds(values).tolist() == [
        1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5]
    q = Binarization.parse("quantile:3").thresholds(values)
    assert len(q) == 2 and all(t in (1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5) for t in q)
    assert Binarization.parse("quantile:20").thresholds(values).size == 8
    for bad in ["quantile:1", "quantile:x", "deciles"]:
        with pytest.raises(DataError):
            Binarization.parse(bad)


def test_quantiles_of_sorted_values_are_numpys_to_the_last_bit():
    """`cut_points` sorts a column once and reads its quantiles off the order; they
    must be `np.quantile`'s own, ties, tiny and huge numbers included."""
    from engine.data.preprocessing import sorted_quantiles
    rng = np.random.default_rng(0)
    for trial in range(600):
        n = int(rng.integers(1, 60))
        values = [rng.normal(size=n) * 10.0 ** rng.integers(-5, 8),
                  rng.integers(0, 5, n).astype(float),
                  np.round(rng.normal(size=n), 1)][trial % 3]
        ordered = np.sort(values)
        for k in (2, 3, 7, 10, 11):
            probabilities = np.arange(1, k) / k
            assert np.array_equal(sorted_quantiles(ordered, probabilities),
                                  np.quantile(ordered, probabilities))


def test_target_with_one_class_is_refused():
    with pytest.raises(DataError, match="single class"):
        prepare(parse_text("a,b,class\n1,2,x\n3,4,x\n5,6,x\n"))


def test_rows_without_class_are_dropped_and_reported():
    data = prepare(parse_text("a,b,class\n1,2,x\n3,4,?\n5,6,y\n7,1,x\n"))
    assert data.n_rows == 3 and data.report.rows_missing_target == 1


def test_numeric_class_labels_are_canonical():
    data = prepare(parse_text("a,b,target\n1,2,1.0\n3,4,0\n5,6,2.0\n7,1,1\n"))
    assert data.class_names == ["0", "1", "2"]
    assert data.y.tolist() == [1, 0, 2, 1]


DUPES = "a,b,y\n0,0,p\n0,0,p\n0,0,n\n0,1,n\n0,1,n\n1,1,p\n1,0,n\n1,0,p\n"


def test_merge_duplicates_keeps_total_weight():
    data = prepare(parse_text(DUPES))
    merged = merge_duplicates(data)
    assert merged.n_rows == 6 and merged.w.sum() == 8
    assert merged.report.duplicates_merged == 2
    pairs = {(tuple(x), y): w for x, y, w in zip(merged.X.tolist(), merged.y.tolist(), merged.w)}
    p, n = data.class_names.index("p"), data.class_names.index("n")
    assert pairs[((0, 0), p)] == 2 and pairs[((0, 0), n)] == 1 and pairs[((0, 1), n)] == 2


def test_drop_inconsistent_keeps_majority():
    data = prepare(parse_text(DUPES))
    assert inconsistent_rows(data) == 2
    clean = drop_inconsistent(data)
    assert clean.n_rows == 6 and clean.report.inconsistent_dropped == 2
    seen = {}
    for x, y in zip(map(tuple, clean.X.tolist()), clean.y.tolist()):
        assert seen.setdefault(x, y) == y, "identical rows left with different classes"


def test_remove_redundant_features():
    text = "a,b,c,d,y\n0,1,0,5,p\n1,0,1,5,n\n0,1,0,6,n\n1,0,1,6,p\n"
    data = prepare(parse_text(text), PrepOptions(remove_redundant=True))
    # b is the complement of a, c equals a: only a and d remain
    assert [f.column for f in data.features] == ["a", "d"]
    assert data.report.redundant_features == 2
    assert data.prep.transform(parse_text(text).frame).shape == (4, 2)


def test_unknown_column_in_options():
    with pytest.raises(DataError, match="no column named 'zz'"):
        prepare(table(), PrepOptions(ignore=("zz",)))


def test_numeric_override_on_text_column_is_refused():
    with pytest.raises(DataError, match="cannot be numeric"):
        prepare(table(), PrepOptions(kinds={"colour": ColumnKind.NUMERIC}))


def test_categorical_override_groups_numbers_as_text_values():
    """age as text: 20 values, more than a small column's one test per value, so the
    most frequent values alone (each with missing cells on either side: age has one)
    and groups of the class-share order (issue 33).  Here every value is on one row,
    so all are pooled (issue 45): no group sets some of them apart from the others."""
    data = prepare(table(), PrepOptions(kinds={"age": ColumnKind.CATEGORICAL}))
    tests = [f for f in data.features if f.column == "age"]
    assert EQ in {f.op for f in tests} <= {EQ, IN, MISSING}
    assert sum(f.op == EQ for f in tests) == 2 * 4 and len(tests) <= 2 * 4 + 7
    assert all(isinstance(f.value, str) for f in tests if f.op == EQ)
    assert not [f for f in tests if f.op == IN]
    # with ten rows a value, the class-share order's groups are there
    doubled = "\n".join([MIXED.strip()] + [
        ",".join([str(100 + i), row.split(",")[1]] + row.split(",")[2:])
        for _ in range(9) for i, row in enumerate(MIXED.strip().splitlines()[1:])])
    data = prepare(table(doubled), PrepOptions(kinds={"age": ColumnKind.CATEGORICAL}))
    groups = [f for f in data.features if f.column == "age" and f.op == IN]
    assert groups and all(isinstance(v, str) for f in groups for v in f.value)


def test_a_measurement_as_target_is_a_regression_and_refused_as_a_class():
    rows = "\n".join(f"{i % 3} {i * 0.37:.2f}" for i in range(120))
    data = prepare(parse_text(rows))
    assert data.regression and data.n_classes == 0 and data.y.dtype == np.float64
    np.testing.assert_allclose(data.y, [round(i * 0.37, 2) for i in range(120)])
    assert "120 different values" in data.report.task_reason
    with pytest.raises(DataError, match="looks like a measurement"):
        prepare(parse_text(rows), PrepOptions(task="classification"))
    assert prepare(parse_text(rows), PrepOptions(target="first")).n_classes == 3


def test_a_table_without_a_usable_column_says_which_were_left_out_and_what_to_try():
    text = "a,b,class\n" + "\n".join(f"same,id{i},{i % 2}" for i in range(30))
    with pytest.raises(DataError) as error:
        prepare(parse_text(text), PrepOptions())
    message = str(error.value)
    assert "'a' (a single value)" in message and "'b'" in message
    assert "--categorical" in message and message.count(".") == 1

