"""`orchard.OptimalTreeRegressor` (issue 47): a regression tree in a notebook passes
scikit-learn's estimator checks, equals `orchard fit`'s tree on the same table and
scikit-learn's own `DecisionTreeRegressor` on numbers, and shares the model file."""

from __future__ import annotations

import pickle
import time

import numpy as np
import orchard
import pandas as pd
import pytest
from sklearn.metrics import r2_score
from sklearn.tree import DecisionTreeRegressor
from sklearn.utils.estimator_checks import parametrize_with_checks

from engine.cli import main
from engine.model import load_model
from test_regression import house_table

ESTIMATORS = [orchard.OptimalTreeRegressor(),
              orchard.OptimalTreeRegressor(algorithm="greedy", max_depth=2, min_leaf=3.0,
                                           leaf_cost=0.001)]


@parametrize_with_checks(ESTIMATORS)
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


def houses(rows: int = 600) -> tuple[pd.DataFrame, np.ndarray]:
    """The house prices of tests/test_regression.py as a notebook holds them: text and
    missing cells in the frame, the price apart."""
    rng = np.random.default_rng(7)
    area = rng.uniform(30, 200, rows).round(1)
    town = rng.choice(["north", "south", "east", "west", "centre"], rows)
    bonus = pd.Series(town).map({"north": 20, "south": -10, "east": 0, "west": 5,
                                 "centre": 90}).to_numpy()
    frame = pd.DataFrame({"area": area, "rooms": rng.integers(1, 7, rows),
                          "town": town})
    price = (area * 2.5 + bonus + rng.normal(0, 15, rows)).round(2) + 1000
    for column in ("area", "town"):
        frame.loc[rng.random(rows) < 0.05, column] = None
    return frame, price


def test_the_same_tree_as_orchard_fit(tmp_path, capsys):
    path = house_table(tmp_path / "house.csv")
    assert main(["fit", str(path), "--depth", "3", "--json",   # both by default
                 "--out", str(tmp_path / "m.json")]) == 0
    capsys.readouterr()
    table = pd.read_csv(path)
    X, y = table.drop(columns=["price"]), table["price"].to_numpy()
    assert X["town"].isna().any() and X["area"].isna().any()
    model = orchard.OptimalTreeRegressor(max_depth=3).fit(X, y)
    cli = load_model(tmp_path / "m.json")
    ours = model.tree_
    assert ours.regression and cli.regression
    assert [f.to_dict() for f in ours.prep.features] == \
        [f.to_dict() for f in cli.prep.features]
    for name in ("feature", "threshold", "left", "right", "value"):
        np.testing.assert_array_equal(getattr(ours, name), getattr(cli, name), name)
    loaded = orchard.OptimalTreeRegressor.load(tmp_path / "m.json")
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_scikit_learns_tree_on_numbers(depth):
    """On numbers float32 holds exactly (scikit-learn's trees compare in float32),
    CART's squared-error tree is one tree: the same predictions."""
    rng = np.random.default_rng(depth)
    X = rng.normal(size=(400, 4)).round(3)
    y = X[:, 0] * 4 - X[:, 1] ** 2 + np.sin(3 * X[:, 2]) + rng.normal(0, 0.2, 400)
    model = orchard.OptimalTreeRegressor(algorithm="greedy", max_depth=depth).fit(X, y)
    reference = DecisionTreeRegressor(max_depth=depth, random_state=0).fit(X, y)
    fresh = rng.normal(size=(200, 4)).round(3)
    for rows in (X, fresh):
        predicted = model.predict(rows)
        assert predicted.dtype == np.float64
        np.testing.assert_allclose(predicted, reference.predict(rows), rtol=1e-12)
    assert model.tree_.n_leaves == reference.get_n_leaves()
    assert model.train_error_ == pytest.approx(((y - reference.predict(X)) ** 2).sum())
    assert model.score(X, y) == pytest.approx(r2_score(y, model.predict(X)))
    assert model.score(fresh, fresh[:, 0]) == \
        pytest.approx(r2_score(fresh[:, 0], model.predict(fresh)))


def test_sample_weights_weigh_rows_and_zero_weights_drop_them():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 2)).round(3)
    y = 3 * X[:, 0] + rng.normal(0, 0.1, 200)
    w = rng.integers(0, 4, 200).astype(float)
    weighted = orchard.OptimalTreeRegressor(algorithm="greedy", max_depth=3).fit(
        X, y, sample_weight=w)
    repeated = orchard.OptimalTreeRegressor(algorithm="greedy", max_depth=3).fit(
        np.repeat(X, w.astype(int), axis=0), np.repeat(y, w.astype(int)))
    np.testing.assert_allclose(weighted.predict(X), repeated.predict(X))
    assert weighted.score(X, y, sample_weight=w) == \
        pytest.approx(r2_score(y, weighted.predict(X), sample_weight=w))


def test_a_missing_target_is_refused_in_a_sentence():
    X, y = houses(100)
    for bad in (np.r_[y[:-1], np.nan], np.array([*y[:-1], None], dtype=object)):
        with pytest.raises(ValueError, match="NaN|missing"):
            orchard.OptimalTreeRegressor().fit(X, bad)
    with pytest.raises(ValueError, match="could not convert|numeric"):
        orchard.OptimalTreeRegressor().fit(X, np.array(["cheap"] * 100))


def test_an_algorithm_without_regression_says_which_have_it():
    X, y = houses(100)
    with pytest.raises(ValueError, match="grows classification trees only, and the "
                                         "target y holds numbers.*use greedy"):
        orchard.OptimalTreeRegressor(algorithm="blossom").fit(X, y)
    with pytest.raises(ValueError, match="Unknown algorithm 'cart'"):
        orchard.OptimalTreeRegressor(algorithm="cart").fit(X, y)


def test_save_load_pickle_and_the_exports_agree(tmp_path):
    X, y = houses()
    model = orchard.OptimalTreeRegressor(max_depth=3, categorical=["rooms"]).fit(X, y)
    assert {f.op for f in model.tree_.prep.features if f.column == "rooms"} <= {"=", "in"}
    model.save(tmp_path / "m.json")
    loaded = orchard.OptimalTreeRegressor.load(tmp_path / "m.json")
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    assert "rmse" in model.export_text() and "CASE" in model.to_sql().upper()
    namespace: dict = {}
    exec(model.to_python(), namespace)
    rows = X.astype(object).where(X.notna(), None).to_dict("records")
    np.testing.assert_allclose([namespace["predict"](row) for row in rows],
                               model.predict(X))


def test_a_model_of_the_other_task_is_refused_on_load(tmp_path):
    X, y = houses(200)
    orchard.OptimalTreeRegressor(max_depth=2).fit(X, y).save(tmp_path / "r.json")
    classes = np.where(y > 1300, "dear", "cheap")
    orchard.OptimalTreeClassifier(algorithm="greedy", max_depth=2).fit(X, classes).save(
        tmp_path / "c.json")
    with pytest.raises(ValueError, match="is a regression tree.*OptimalTreeRegressor.load"):
        orchard.OptimalTreeClassifier.load(tmp_path / "r.json")
    with pytest.raises(ValueError, match="is a classification tree.*"
                                         "OptimalTreeClassifier.load"):
        orchard.OptimalTreeRegressor.load(tmp_path / "c.json")
    assert orchard.OptimalTreeClassifier.load(tmp_path / "c.json").predict(X).size == 200


def test_callback_and_the_cost_per_leaf():
    X, y = houses()
    seen = []
    full = orchard.OptimalTreeRegressor(max_depth=4, callback=seen.append).fit(X, y)
    assert seen and all(tree.regression for tree in seen)
    cheap = orchard.OptimalTreeRegressor(max_depth=4, leaf_cost=0.01).fit(X, y)
    assert cheap.tree_.n_leaves < full.tree_.n_leaves
    assert cheap.objective_ > cheap.train_error_ >= full.train_error_
    large = orchard.OptimalTreeRegressor(max_depth=4, min_leaf=100).fit(X, y)
    assert large.tree_.value[large.tree_.feature < 0, 0].min() >= 100


def test_a_large_frame_with_a_text_column_of_many_values_fits_soon():
    """50,000 rows, a text column of 2,000 values, 5% of its cells missing."""
    rng = np.random.default_rng(11)
    n = 50_000
    shop = rng.integers(0, 2000, n)
    effect = rng.normal(0, 10, 2000)
    frame = pd.DataFrame({"shop": np.array([f"shop {k}" for k in range(2000)],
                                           dtype=object)[shop],
                          "size": rng.uniform(1, 100, n).round(2)})
    frame.loc[rng.random(n) < 0.05, "shop"] = None
    y = effect[shop] + 0.3 * frame["size"].to_numpy() + rng.normal(0, 1, n)
    started = time.monotonic()
    model = orchard.OptimalTreeRegressor(max_depth=4).fit(frame, y)
    seconds = time.monotonic() - started
    assert seconds < 30, f"{seconds:.1f} s"   # 0.3 s when written
    # the shops' effects hold half the variance: a depth-4 tree takes part of it
    assert model.status_ != "time_limit" and model.score(frame, y) > 0.3
    assert "shop" in {f.column for f in model.tree_.prep.features}


# ------------------------------------------------------------------ orchard.tune
def steps(rows: int = 600) -> tuple[np.ndarray, np.ndarray]:
    """A price made of three steps in three columns (and a column of noise): a tree
    needs depth 3 to take all three, and greedy finds them."""
    rng = np.random.default_rng(5)
    X = rng.uniform(0, 1, (rows, 4)).round(3)
    y = 8 * (X[:, 0] > 0.5) + 4 * (X[:, 1] > 0.3) + 2 * (X[:, 2] > 0.7) + \
        rng.normal(0, 0.3, rows)
    return X, y


def test_tune_of_numbers_chooses_the_depth_the_signal_needs_and_fits_every_row():
    X, y = steps()
    model = orchard.tune(X, y, depths=[1, 2, 3, 4], min_leaf=[1, 20], cv=3)
    assert isinstance(model, orchard.OptimalTreeRegressor)
    # the regression default: an exact search (ConTree up to depth 2, else DL8.5)
    assert model.algorithm == "auto" and model.algorithm_ in ("contree", "dl85")
    table = model.tuning_
    assert table.attrs["metric"] == "r2" and "validation_r2" in table
    assert (table["metric"] == "r2").all() and "mean_accuracy" not in table
    assert table["chosen"].sum() == 1 and table["best"].sum() == 1
    row, best = table[table["chosen"]].iloc[0], table[table["best"]].iloc[0]
    assert row["validation_r2"] >= best["validation_r2"] - best["standard_error"] - 1e-12
    assert row["validation_r2"] > 0.9 > table.attrs["majority"]   # the mean's R² ~ 0
    chosen = model.tuned_params_
    assert chosen == {"max_depth": row["depth"], "min_leaf": row["min_leaf"],
                      "leaf_cost": row["leaf_cost"]}
    assert chosen["max_depth"] >= 3
    assert model.get_params()["max_depth"] == chosen["max_depth"]
    # the Tuner's final fit is the estimator's: the tree a direct fit of the choice gives
    direct = orchard.OptimalTreeRegressor(**chosen).fit(X, y)
    np.testing.assert_array_equal(model.predict(X), direct.predict(X))
    assert model.train_error_ == direct.train_error_
    assert model.n_features_in_ == 4 and model.score(X, y) > 0.95


def test_tune_of_numbers_ranks_by_rmse_on_a_table_with_text():
    X, y = houses(400)
    model = orchard.tune(X, y, depths=[1, 2, 3], min_leaf=[5], leaf_cost=[0], cv=3,
                         metric="rmse")
    table = model.tuning_
    assert table.attrs["metric"] == "rmse" and "validation_rmse" in table
    row, best = table[table["chosen"]].iloc[0], table[table["best"]].iloc[0]
    assert best["validation_rmse"] == table["validation_rmse"].min()   # lower is better
    assert row["validation_rmse"] <= \
        best["validation_rmse"] + 0.5 * best["standard_error"] + 1e-12
    assert row["validation_rmse"] < table.attrs["majority"]   # beats the training mean
    direct = orchard.OptimalTreeRegressor(**model.tuned_params_).fit(X, y)
    np.testing.assert_array_equal(model.predict(X), direct.predict(X))
    assert list(model.feature_names_in_) == ["area", "rooms", "town"]


def test_tune_says_when_the_metric_or_the_task_does_not_fit_y():
    X, y = steps(120)
    with pytest.raises(ValueError, match="Accuracy ranks the settings of a "
                                         "classification.*r2 or rmse.*"
                                         "task='classification'"):
        orchard.tune(X, y, metric="accuracy", depths=[1], cv=3)
    classes = (y > 6).astype(int)
    with pytest.raises(ValueError, match="RMSE ranks the settings of a regression.*"
                                         "accuracy, balanced or auc.*task='regression'"):
        orchard.tune(X, classes, metric="rmse", depths=[1], cv=3)
    with pytest.raises(ValueError, match="RMSE ranks the settings of a regression"):
        orchard.tune(X, y, task="classification", metric="rmse", depths=[1], cv=3)
    with pytest.raises(ValueError, match="Column y holds text such as 'dear'"):
        orchard.tune(X, np.where(y > 6, "dear", "cheap"), task="regression",
                     depths=[1], cv=3)
    with pytest.raises(ValueError, match="Unknown task 'numbers'"):
        orchard.tune(X, y, task="numbers", depths=[1], cv=3)
    with pytest.raises(ValueError, match="'blossom' grows classification trees only"):
        orchard.tune(X, y, algorithm="blossom", depths=[1], cv=3)


def test_tune_of_classes_still_returns_a_classifier():
    X, y = steps(300)
    few = np.digitize(y, [4, 8, 12])   # four numbers: classes
    model = orchard.tune(X, few, algorithm="greedy", depths=[1, 2], min_leaf=[1],
                         leaf_cost=[0], cv=3)
    assert isinstance(model, orchard.OptimalTreeClassifier)
    assert list(model.classes_) == [0, 1, 2, 3] and "mean_accuracy" in model.tuning_
    assert model.tuning_.attrs["metric"] == "accuracy"
    # 25 numbers are a regression unless classification is asked for
    many = np.argsort(np.argsort(y)) // 12   # y's rank in 25 groups of 12 rows
    regressor = orchard.tune(X, many, algorithm="greedy", depths=[1], min_leaf=[1],
                             leaf_cost=[0], cv=3)
    assert type(regressor) is orchard.OptimalTreeRegressor
    with pytest.warns(UserWarning, match="The class column y has 25 different numbers"):
        asked = orchard.tune(X, many, task="classification", algorithm="greedy",
                             depths=[1], min_leaf=[1], leaf_cost=[0], cv=3)
    assert type(asked) is orchard.OptimalTreeClassifier
