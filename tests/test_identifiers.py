"""Issue 45: value groups that do not memorise, and identifier columns left out.

A text column that identifies things (a registration: thousands of values, a few rows
each) lets a greedy subset split sort its values by class share and fit the training
rows, and loses to the majority class on new ones.  So rare values are pooled for the
greedy guide as for the orders, and a column that looks like an identifier is left
out of the default with one sentence saying why and how to keep it, on every path
(`prepare`, the CLI, the notebook).
"""

from __future__ import annotations

import contextlib
import io
import warnings

import numpy as np
import pandas as pd
import pytest

from engine.cli import main
from engine.data.columns import ColumnKind
from engine.data.csv_reader import RawTable
from engine.data.dataset import PrepOptions
from engine.data.features import EQ, IN
from engine.featurize import prepare
from engine.featurize.categories import held_out_gain, pooled_codes, rare_floor
from engine.training import train

from big_tables import mixed_tables

def raw(frame: pd.DataFrame) -> RawTable:
    return RawTable(frame, ",", True, "utf-8", False)


@pytest.fixture(scope="module")
def transport() -> pd.DataFrame:
    return mixed_tables().make("transport", 6000, seed=3)


def halves(frame: pd.DataFrame):
    order = np.random.default_rng(0).permutation(len(frame))
    cut = len(frame) * 4 // 5
    return (frame.iloc[order[:cut]].reset_index(drop=True),
            frame.iloc[order[cut:]].reset_index(drop=True))


def test_an_identifier_is_left_out_with_one_sentence_saying_how_to_keep_it(transport):
    data = prepare(raw(transport), PrepOptions(target="status"))
    assert "reg" not in {c.name for c in data.prep.columns}
    reason = data.report.ignored_columns["reg"]
    assert "identifier" in reason and "--categorical reg" in reason
    assert any(w.startswith("Column 'reg' was left out") for w in data.report.warnings)
    assert any("'reg' was ignored" in line for line in data.report.lines())
    # the many-valued columns with a real signal stay
    assert {"depot", "carrier", "weekday"} <= {c.name for c in data.prep.columns}


def test_a_column_the_user_chose_as_categorical_is_kept(transport):
    options = PrepOptions(target="status", kinds={"reg": ColumnKind.CATEGORICAL})
    data = prepare(raw(transport), options)
    assert "reg" in {c.name for c in data.prep.columns}
    assert "reg" not in data.report.ignored_columns and not data.report.warnings


def test_many_valued_columns_with_a_signal_are_kept():
    survey = mixed_tables().make("survey", 4000, seed=1)
    data = prepare(raw(survey), PrepOptions(target="status"))
    assert not data.report.ignored_columns
    assert {"depot", "city"} <= {c.name for c in data.prep.columns}


def test_held_out_gain_tells_a_signal_from_an_identifier():
    rng = np.random.default_rng(5)
    n, V = 5000, 1000
    codes = rng.integers(0, V, n)
    noise = rng.integers(0, 2, n)
    assert held_out_gain(codes, V, noise, 2, rare_floor(n)) <= 0
    signal = ((codes % 2) ^ (rng.random(n) < 0.2)).astype(np.int64)
    assert held_out_gain(codes, V, signal, 2, rare_floor(n)) > 0
    # many classes are merged, not refused
    assert np.isfinite(held_out_gain(codes, V, rng.integers(0, 60, n), 60, 10))


def test_pooled_codes_put_rare_values_in_one_block_and_missing_in_another():
    counts = np.array([50, 3, 12, 0, 1, 7])     # five values, then missing cells
    blocks = pooled_codes(counts, floor=10)
    assert blocks[0] != blocks[2]
    assert blocks[1] == blocks[3] == blocks[4] not in (blocks[0], blocks[2])
    assert blocks[5] not in blocks[:5]
    assert list(pooled_codes(np.array([20, 30, 0]), 10)) == [0, 1, 2]


def test_the_guide_never_splits_rare_values_apart(transport):
    """The greedy guide's groups (as the orders' groups) hold every rare value of the
    identifier or none of them: before pooling, the guide's root was a group of 1,200
    registrations sorted by class share."""
    options = PrepOptions(target="status", kinds={"reg": ColumnKind.CATEGORICAL},
                          depth=4)
    data = prepare(raw(transport), options)
    counts = transport["reg"].value_counts()
    rare = set(counts.index[counts < rare_floor(len(transport))])
    assert len(rare) > 100
    for feature in data.prep.features:
        if feature.column == "reg" and feature.op in (EQ, IN):
            values = {feature.value} if feature.op == EQ else set(feature.value)
            inside = values & rare
            assert not inside or inside == rare or rare - values == set(), feature


@pytest.mark.parametrize("algorithm", ["greedy", "auto"])
def test_the_default_tree_holds_up_on_new_rows(transport, algorithm):
    """Trained on four fifths, the default tree beats the majority class on the other
    fifth, and no test in it reads the identifier."""
    learn, new = halves(transport)
    data = prepare(raw(learn), PrepOptions(target="status", depth=4))
    result = train(data, algorithm, {"depth": 4}, time_limit=20)
    tree = result.tree
    assert all(data.prep.features[f].column != "reg" for f in tree.feature if f >= 0)
    predicted = np.array(tree.class_names)[tree.predict_frame(new.drop(columns="status"))]
    majority = learn["status"].value_counts().idxmax()
    assert np.mean(predicted == new["status"].to_numpy()) > \
        np.mean(new["status"].to_numpy() == majority) + 0.01


def test_the_notebook_warns_and_keeps_a_chosen_column(transport):
    from engine.estimators import OptimalTreeClassifier
    X, y = transport.drop(columns="status"), transport["status"].to_numpy()
    with pytest.warns(UserWarning, match="Column 'reg' was left out"):
        model = OptimalTreeClassifier("greedy", max_depth=2).fit(X, y)
    assert "reg" not in {c.name for c in model.model_.prep.columns}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kept = OptimalTreeClassifier("greedy", max_depth=2, categorical=["reg"]).fit(X, y)
    assert "reg" in {c.name for c in kept.model_.prep.columns}


def test_the_command_line_says_why_and_how_to_keep_it(transport, tmp_path):
    path = tmp_path / "transport.csv"
    transport.to_csv(path, index=False)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["fit", str(path), "--algo", "greedy", "--depth", "2"])
    assert code == 0
    assert "Column 'reg' was left out" in err.getvalue()
    assert "--categorical reg" in err.getvalue()
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["fit", str(path), "--algo", "greedy", "--depth", "2",
                     "--categorical", "reg"])
    assert code == 0 and "left out" not in err.getvalue()
