"""Issue 33: text columns as value groups, missing cells routed inside the search.

A tree with grouped values and routed missing cells must predict the same through
every path: `predict` on the raw table, the exported Python and SQL (SQLite), and the
model saved and loaded, including for values never seen in training and missing
cells; and the exact solvers on these features are never worse than greedy.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from engine.data.csv_reader import RawTable
from engine.data.dataset import PrepOptions
from engine.data.features import EQ, IN, MISSING, NUM
from engine.export.python_code import to_python
from engine.export.sql import to_sql
from engine.featurize import prepare
from engine.featurize.categories import (MAX_ORDERS, PREFIX_CUTS, SMALL_COLUMN, TOP_VALUES,
                                         rare_floor, value_groups)
from engine.model import model_from_dict
from engine.training import train


def table(rows: int, seed: int, values: int = 60, classes: int = 2,
          missing: float = 0.08) -> pd.DataFrame:
    """Text columns of 3 and `values` values, a number, a class depending on groups of
    the big column and the number, some noise, and missing cells everywhere."""
    rng = np.random.default_rng(seed)
    big = rng.zipf(1.3, rows) % values
    small = rng.integers(0, 3, rows)
    x = rng.normal(50, 15, rows).round(1)
    score = (big % 3 == 0) * 1.0 + (x > 55) + (small == 1) * 0.5
    y = np.minimum((score + rng.random(rows) * 0.8).astype(int), classes - 1)
    frame = pd.DataFrame({
        "shipper": [f"s{v}" for v in big],
        "carrier": np.array(["AA", "UA", "DL"], dtype=object)[small],
        "x": x.astype(object).astype(str),
        "class": [f"k{c}" for c in y],
    }).astype(object)
    for name in ("shipper", "carrier", "x"):
        frame.loc[rng.random(rows) < missing, name] = None
    return frame


def raw(frame: pd.DataFrame) -> RawTable:
    return RawTable(frame, ",", True, "utf-8", False)


def new_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The table plus rows with values never seen in training and missing cells."""
    extra = pd.DataFrame({"shipper": ["never-seen", None, "s0", "never-seen", None],
                          "carrier": ["ZZ", "AA", None, None, None],
                          "x": ["12.5", None, "1e9", None, None],
                          "class": ["k0", "k1", "k0", "k1", "k0"]}, dtype=object)
    return pd.concat([frame, extra], ignore_index=True)


def through_python(model, frame) -> list[str]:
    space: dict = {}
    exec(compile(to_python(model), "model.py", "exec"), space)
    return [space["predict"](row) for row in frame.to_dict("records")]


def through_sql(model, frame) -> list[str]:
    con = sqlite3.connect(":memory:")
    numeric = {c.name for c in model.prep.columns if c.numeric}
    con.execute('CREATE TABLE t ("shipper" TEXT, "carrier" TEXT, "x" REAL, "class" TEXT)')
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", [
        [None if v is None else float(v) if k in numeric else v for k, v in row.items()]
        for row in frame.to_dict("records")])
    return [r[0] for r in con.execute(f"SELECT {to_sql(model)} FROM t ORDER BY rowid")]


CASES = [("greedy", 3, "route"), ("greedy", 4, "impute"), ("blossom", 2, "route"),
         ("contree", 2, "route"), ("dl85", 2, "impute"), ("auto", 3, "route")]


@pytest.mark.parametrize("algorithm, depth, missing", CASES)
def test_every_path_predicts_the_same_on_unseen_values_and_missing_cells(
        algorithm, depth, missing):
    frame = table(1500, seed=depth, classes=3 if algorithm == "greedy" else 2)
    data = prepare(raw(frame), PrepOptions(missing=missing, depth=depth,
                                           binarize="guided" if algorithm in (
                                               "blossom", "dl85") else "none"))
    model = train(data, algorithm, {"depth": depth}, time_limit=30).tree
    assert any(f.op == IN for f in model.features), "the big column offers groups"
    if missing == "route":
        assert all(f.missing is not None for f in model.features if f.op != MISSING)
    rows = new_rows(frame)
    expected = list(np.asarray(model.class_names)[model.predict_frame(rows)])
    assert through_python(model, rows) == expected
    assert through_sql(model, rows) == expected
    again = model_from_dict(json.loads(json.dumps(model.to_dict())))
    assert list(np.asarray(again.class_names)[again.predict_frame(rows)]) == expected


def test_a_value_never_seen_takes_the_not_in_branch_of_every_group():
    frame = table(800, seed=1)
    model = train(prepare(raw(frame), PrepOptions(depth=3)), "greedy", {"depth": 3}).tree
    groups = [j for j, f in enumerate(model.features) if f.column == "shipper"
              and f.op in (EQ, IN)]
    X = model.prep.transform(new_rows(frame).iloc[[-5]])
    assert groups and (X[0, groups] == 0).all()


def test_routed_missing_cells_follow_each_test_s_own_side():
    frame = table(600, seed=2)
    data = prepare(raw(frame), PrepOptions(depth=2))
    x = [j for j, f in enumerate(data.features) if f.column == "x"]
    assert [data.features[j].missing for j in x] == [False, True]
    assert all(data.features[j].op == NUM for j in x)
    missing = pd.isna(frame["x"]).to_numpy()
    high, low = (data.features[j].value for j in x)   # missing: no, then yes
    present = data.X[~missing][:, x[0]]
    assert high > present.max() and low < present.min()
    assert (data.X[missing][:, x[0]] == high).all() and (data.X[missing][:, x[1]] == low).all()


@pytest.mark.parametrize("seed", range(4))
def test_the_exact_solvers_on_value_groups_are_never_worse_than_greedy(seed):
    """The greedy tree's own groups are among the features (as guided thresholds
    are), so an optimal tree of the same depth is at least as good."""
    frame = table(700, seed=seed, values=40)
    for depth in (2, 3):
        data = prepare(raw(frame), PrepOptions(depth=depth, binarize="guided"))
        greedy = train(data, "greedy", {"depth": depth}).train_error
        for algorithm in ("blossom", "dl85"):
            result = train(data, algorithm, {"depth": depth})
            assert result.optimal and result.train_error <= greedy + 1e-9


def test_value_groups_are_bounded_pooled_and_listed_by_frequency():
    rng = np.random.default_rng(0)
    n, V = 20_000, 3_000
    codes = np.minimum(rng.zipf(1.2, n) - 1, V - 1)
    y = (codes % 7 < 3).astype(np.int64) ^ (rng.random(n) < 0.1)
    values = [f"v{i:04d}" for i in range(V)]
    groups = value_groups("c", values, codes, y, np.ones(n), 2, route=False)
    counts = np.bincount(codes, minlength=V)
    singles = [f for f in groups if f.op == EQ]
    assert [f.value for f in singles] == \
        [values[c] for c in np.lexsort((np.arange(V), -counts))[:TOP_VALUES]]
    assert len(groups) <= TOP_VALUES + PREFIX_CUTS - 1
    for f in groups:
        if f.op == IN:
            members = [int(v[1:]) for v in f.value]
            assert len(members) <= V // 2     # the smaller side
            assert list(counts[members]) == sorted(counts[members], reverse=True)
            rare = counts[members] < rare_floor(n)
            # rare values travel together: a group holds all of them or none
            assert rare.all() or not rare.any() or \
                set(np.flatnonzero((counts < rare_floor(n)) & (counts > 0))) <= set(members)
    # more classes: one order per large class, at most MAX_ORDERS of them
    y5 = codes % 5
    many = value_groups("c", values, codes, y5, np.ones(n), 5, route=True)
    assert len(many) <= TOP_VALUES + MAX_ORDERS * (PREFIX_CUTS - 1)


def test_a_small_column_keeps_a_test_per_value():
    values = [f"v{i}" for i in range(SMALL_COLUMN)]
    codes = np.arange(800) % SMALL_COLUMN
    y = (codes < 3).astype(np.int64)
    groups = value_groups("c", values, codes, y, np.ones(800), 2, route=False)
    assert {f.value for f in groups if f.op == EQ} == set(values)


def test_a_matrix_that_would_not_fit_is_refused_before_it_is_built(monkeypatch):
    """Issue 33: one sentence with what to try instead of minutes of swapping."""
    import importlib

    from engine.errors import DataError
    preparing = importlib.import_module("engine.featurize.prepare")
    frame = table(500, seed=3)
    monkeypatch.setattr(preparing, "available_memory", lambda: 10_000)
    with pytest.raises(DataError, match=r"would take .* GB, more than this computer has "
                                        r"free .*: use fewer columns"):
        prepare(raw(frame))
    monkeypatch.setattr(preparing, "available_memory", lambda: None)
    assert prepare(raw(frame)).n_rows == 500


def test_the_matrix_is_the_same_whatever_the_stage_it_is_built_in(monkeypatch):
    """`transform` fills the matrix a block of rows at a time (one row, a few, all
    of them at once): the matrix must not depend on it."""
    from engine.data import blocks
    data = prepare(raw(table(900, seed=4)), PrepOptions(binarize="quantile:5"))
    rows = new_rows(table(900, seed=4))
    built = []
    for stage in (1, 900 * 3, 1 << 26):
        monkeypatch.setattr(blocks, "STAGE_BYTES", stage)
        built.append(data.prep.transform(rows, dtype=np.uint8))
    assert data.prep.all_binary and built[0].flags.c_contiguous
    assert all(np.array_equal(built[0], X) for X in built[1:])
    # a column's features need not be adjacent (an edited or older model)
    order = np.random.default_rng(0).permutation(data.n_features)
    shuffled = replace(data.prep, features=[data.prep.features[j] for j in order])
    for stage in (1, 900 * 3, 1 << 26):
        monkeypatch.setattr(blocks, "STAGE_BYTES", stage)
        assert np.array_equal(shuffled.transform(rows, dtype=np.uint8), built[0][:, order])
