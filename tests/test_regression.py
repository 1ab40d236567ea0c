"""Regression trees (issue 47): a numeric target gets a tree whose leaves predict
means, from the table to the exports, the model file and the command line."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeRegressor

from engine.cli import main
from engine.data.csv_reader import parse_text, read_table
from engine.data.dataset import PrepOptions
from engine.data.task import choose_task
from engine.errors import DataError, ParameterError
from engine.featurize import prepare
from engine.model import load_model
from engine.model.schema import validate
from engine.model.tree import Tree
from engine.training import train
from test_exports import python_predict, raw_rows, sql_classes


def house_table(path, rows=600, seed=0):
    """Prices from an area, a town (text) and noise, with missing cells and a street
    name on a few rows each (an identifier)."""
    rng = np.random.default_rng(seed)
    area = rng.uniform(30, 200, rows).round(1)
    town = rng.choice(["north", "south", "east", "west", "centre"], rows)
    bonus = pd.Series(town).map({"north": 20, "south": -10, "east": 0, "west": 5,
                                 "centre": 90}).to_numpy()
    frame = pd.DataFrame({"area": area, "rooms": rng.integers(1, 7, rows), "town": town,
                          "street": [f"s{k}" for k in rng.integers(0, rows, rows)],
                          "price": (area * 2.5 + bonus + rng.normal(0, 15, rows)).round(2)
                          + 1000})
    for column in ("area", "town"):
        frame.loc[rng.random(rows) < 0.05, column] = None
    frame.to_csv(path, index=False)
    return path


# ------------------------------------------------------------ the task
@pytest.mark.parametrize("cells, task", [
    (["a", "b", "a"], "classification"),
    ([str(i % 20) for i in range(100)], "classification"),   # 20 numbers: classes
    ([str(i % 21) for i in range(100)], "regression"),
    ([f"{i * 0.5}" for i in range(40)] + [None], "regression"),
    (["1", "1.0", "2"] * 10, "classification"),              # 1 and 1.0: one class
])
def test_the_task_follows_the_target(cells, task):
    chosen, reason = choose_task("y", pd.Series(cells, dtype=object))
    assert chosen == task
    assert reason.count(".") <= 2 and "'y'" in reason


def test_a_regression_of_text_is_refused_naming_a_cell():
    with pytest.raises(DataError, match="text such as 'b'"):
        choose_task("y", pd.Series(["1", "b"]), "regression")
    with pytest.raises(DataError, match="Unknown task"):
        choose_task("y", pd.Series(["1"]), "numbers")
    assert choose_task("y", pd.Series(["1", "2"]), "regression")[0] == "regression"
    assert choose_task("y", pd.Series(["1.5", "2.5"] * 30), "classification")[0] == \
        "classification"


# ------------------------------------------------------------ preparing
def test_a_table_with_text_and_missing_cells_prepares_as_a_regression(tmp_path):
    data = prepare(read_table(house_table(tmp_path / "house.csv", rows=3000)))
    assert data.regression and data.n_classes == 0 and data.prep.class_names == []
    assert data.y.dtype == np.float64 and np.isfinite(data.y).all()
    assert data.report.task == "regression" and "different values" in \
        data.report.task_reason
    # the street names identify rows: left out, with the regression's wording
    assert "means predicted nothing" in data.report.ignored_columns["street"]
    # the town's groups follow mean prices: 'centre' (the dearest) is a test
    assert any(f.column == "town" and "centre" in str(f.value) for f in data.features)
    with pytest.raises(DataError, match="class weights do not apply"):
        prepare(read_table(tmp_path / "house.csv"), PrepOptions(class_weight="balanced"))


# ------------------------------------------------------------ the greedy tree
@pytest.mark.parametrize("depth", [1, 3, 6])
def test_greedy_equals_scikit_learns_regressor_on_numbers(depth):
    rng = np.random.default_rng(depth)
    X = rng.normal(size=(300, 3)).round(3)
    y = X[:, 0] * 4 - X[:, 1] ** 2 + rng.normal(0, 0.2, 300)
    text = "a,b,c,y\n" + "\n".join(",".join(repr(float(v)) for v in row)
                                   for row in np.column_stack([X, y])) + "\n"
    data = prepare(parse_text(text))
    result = train(data, "greedy", {"depth": depth})
    reference = DecisionTreeRegressor(max_depth=depth, random_state=0).fit(X, y)
    predicted = result.tree.predict(data.X)
    np.testing.assert_allclose(predicted, reference.predict(X))
    assert result.train_error == pytest.approx(((y - reference.predict(X)) ** 2).sum())
    assert result.tree.n_leaves == reference.get_n_leaves()


def test_a_cost_per_leaf_is_a_share_of_the_roots_squared_error(tmp_path):
    data = prepare(read_table(house_table(tmp_path / "house.csv")))
    root = float(((data.y - data.y.mean()) ** 2).sum())
    full = train(data, "greedy", {"depth": 4})
    assert full.tree.n_leaves > 4 and full.leaf_penalty == 0
    cheap = train(data, "greedy", {"depth": 4, "leaf_cost": 0.01})
    assert cheap.leaf_penalty == pytest.approx(0.01 * root)
    assert cheap.tree.n_leaves < full.tree.n_leaves
    # each kept split pays for its leaf: no worse than the whole greedy tree
    assert cheap.objective <= full.train_error + cheap.leaf_penalty * full.tree.n_leaves
    assert cheap.objective == pytest.approx(cheap.train_error
                                            + cheap.leaf_penalty * cheap.tree.n_leaves)
    assert train(data, "greedy", {"depth": 4, "leaf_cost": 1.0}).tree.n_leaves == 1


def test_pruning_keeps_the_cheapest_subtree_by_brute_force():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(80, 2)).round(2)
    y = np.sign(X[:, 0]) * 3 + X[:, 1] + rng.normal(0, 0.5, 80)
    text = "a,b,y\n" + "\n".join(",".join(repr(float(v)) for v in row)
                                 for row in np.column_stack([X, y])) + "\n"
    data = prepare(parse_text(text))
    tree = train(data, "greedy", {"depth": 3}).tree

    def cheapest(node, penalty):   # least SSE + penalty x leaves below `node`
        leaf = tree.value[node, 2] + penalty
        if tree.is_leaf(node):
            return leaf
        return min(leaf, cheapest(tree.left[node], penalty)
                   + cheapest(tree.right[node], penalty))
    for penalty in (0.0, 1.0, 10.0, 50.0, 1e6):
        pruned = tree.pruned(penalty)
        cost = pruned.error(data.X, data.y) + penalty * pruned.n_leaves
        assert cost == pytest.approx(cheapest(0, penalty))


# ------------------------------------------------------------ the model file
def test_a_regression_tree_round_trips_through_its_file(tmp_path):
    data = prepare(read_table(house_table(tmp_path / "house.csv")))
    tree = train(data, "greedy", {"depth": 3}).tree
    tree.save(tmp_path / "m.json")
    loaded = load_model(tmp_path / "m.json")
    assert loaded.regression and loaded.prep.task == "regression"
    np.testing.assert_array_equal(loaded.predict(data.X), tree.predict(data.X))
    document = json.loads((tmp_path / "m.json").read_text())
    document["nodes"]["value"][0] = [1.0, 2.0]
    with pytest.raises(DataError, match="weight, mean, squared error"):
        validate(document)
    document = json.loads((tmp_path / "m.json").read_text())
    document["preprocessing"]["class_names"] = ["a"]
    with pytest.raises(DataError, match="names classes, but the task is regression"):
        validate(document)
    document = json.loads((tmp_path / "m.json").read_text())
    document["preprocessing"]["task"] = "ranking"
    with pytest.raises(DataError, match="not one of classification, regression"):
        validate(document)
    # a file from before regression trees (no task) is a classification's
    document = Tree.leaf(np.array([3.0, 1.0]), prepare(parse_text(
        "x,c\n1,a\n2,b\n3,a\n")).prep).to_dict()
    del document["preprocessing"]["task"]
    validate(document)
    assert not Tree.from_dict(document).regression


# ------------------------------------------------------------ exports
def test_python_sql_and_rules_predict_the_models_numbers_on_every_row(tmp_path):
    path = house_table(tmp_path / "house.csv", rows=800)
    raw = read_table(path)
    tree = train(prepare(raw), "greedy", {"depth": 4}).tree
    # new rows too: unseen towns, missing and extreme areas
    extra = pd.DataFrame({"area": ["1e9", None, "-5"], "rooms": ["2", "3", None],
                          "town": ["atlantis", None, "centre"], "street": [None] * 3,
                          "price": ["1", "2", "3"]})
    frame = pd.concat([raw.frame, extra], ignore_index=True)
    expected = tree.predict_frame(frame)
    assert len(set(expected)) == tree.n_leaves > 4
    predict = python_predict(tree)
    assert [predict(row) for row in raw_rows(frame)] == list(expected)
    assert sql_classes(tree, frame) == list(expected)


# ------------------------------------------------------------ the command line
def test_the_command_line_fits_and_predicts_a_regression(tmp_path, capsys):
    path = house_table(tmp_path / "house.csv")
    model = tmp_path / "m.json"
    assert main(["fit", str(path), "--depth", "3", "--json", "--out", str(model)]) == 0
    summary = json.loads(capsys.readouterr().out)
    # by default an exact search of least squared error, which it names
    assert summary["task"] == "regression" and summary["algorithm"] == "auto"
    assert summary["chosen_algorithm"] == "dl85" and summary["optimal"]
    assert summary["train_accuracy"] is None and summary["n_classes"] == 0
    assert 0.5 < summary["train_r2"] <= 1 and summary["train_rmse"] > 0
    assert summary["train_error"] == pytest.approx(
        summary["train_rmse"] ** 2 * summary["n_rows"])
    assert main(["predict", str(model), str(path), "--json"]) == 0
    predicted = json.loads(capsys.readouterr().out)
    assert predicted["rmse"] == pytest.approx(summary["train_rmse"])
    assert len(predicted["predictions"]) == 600
    # in words: the tree, its leaves' means, why it is a regression
    assert main(["fit", str(path), "--depth", "2"]) == 0
    out = capsys.readouterr().out
    assert "training RMSE" in out and "rmse" in out and "regression tree" in out
    assert "Accuracy on new rows" not in out


@pytest.mark.parametrize("flags, words", [
    (["--algo", "blossom"], "grows classification trees only"),
    (["--task", "regression", "--target", "town"], "holds text such as"),
])
def test_what_regression_cannot_do_yet_is_said_in_one_sentence(tmp_path, capsys, flags,
                                                                  words):
    path = house_table(tmp_path / "house.csv", rows=200)
    assert main(["fit", str(path), "--depth", "2", *flags]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert words in err[-1] and err[-1].startswith("orchard: ")


def test_a_regression_is_validated_and_tuned_on_new_rows(tmp_path, capsys):
    """Held-out evaluation and tuning of regression trees (tests/
    test_regression_evaluation.py checks their figures)."""
    path = house_table(tmp_path / "house.csv", rows=200)
    assert main(["fit", str(path), "--depth", "2", "--validate", "3"]) == 0
    captured = capsys.readouterr()
    assert "3-fold cross-validation: test R² 0." in captured.out
    assert "not estimated" not in captured.err
    assert main(["tune", str(path), "--depths", "1-2", "--json"]) == 0
    tuning = json.loads(capsys.readouterr().out)["tuning"]
    assert tuning["metric"] == "r2" and tuning["chosen_params"]["depth"] in (1, 2)


def test_classification_can_still_be_asked_for(tmp_path, capsys):
    path = tmp_path / "scores.csv"
    path.write_text("x,score\n" + "".join(f"{i % 7},{i % 30}\n" for i in range(200)))
    assert main(["fit", str(path), "--depth", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["task"] == "regression"
    assert main(["fit", str(path), "--depth", "1", "--json", "--task",
                 "classification"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["task"] == "classification" and summary["n_classes"] == 30
    assert summary["algorithm"] == "blossom" and summary["train_accuracy"] > 0


def test_the_column_chart_splits_a_regressions_bars_by_bands_of_the_target(tmp_path):
    from engine.column_summary import column_summary, numeric_pairs
    frame = read_table(house_table(tmp_path / "house.csv", rows=800)).frame
    summary = column_summary(frame, "town", "price", False, task="regression")
    assert len(summary.class_names) == 4 and summary.bands
    assert summary.class_names[0].startswith("price ") and " to " in summary.class_names[0]
    assert summary.rows == 800 and "band of the target" in summary.describe()
    price = pd.to_numeric(frame["price"]).to_numpy()
    # each band holds about a quarter of the rows, the dearest town most of the top one
    per_band = summary.counts.sum(axis=0) + summary.missing
    assert per_band.sum() == 800 and per_band.min() >= 190
    centre = summary.labels.index("centre")
    assert summary.counts[centre, 3] > summary.counts[centre, 0]
    xs, ys, bands, names = numeric_pairs(frame, "area", "rooms", "price",
                                         task="regression")
    assert set(bands) <= set(range(len(names))) and len(names) == 4
    assert np.isfinite(price).all()


def test_importance_of_a_regression_counts_the_squared_error_its_splits_remove(tmp_path):
    from engine.importance import feature_importance
    data = prepare(read_table(house_table(tmp_path / "house.csv", rows=500)))
    tree = train(data, "greedy", {"depth": 3}).tree
    importance = feature_importance(tree, data.X, data.y, data.w)
    root = float(((data.y - data.y.mean()) ** 2).sum())
    # on the training rows the splits remove the root's error less the tree's, exactly
    assert importance.root_error == pytest.approx(root)
    assert importance.values.sum() == pytest.approx(root - tree.error(data.X, data.y))
    assert importance.columns[0] == "area" and importance.values[0] > 0


def test_a_sweep_of_a_regression_records_its_r2_and_errors(tmp_path):
    from engine.experiments import InProcess, run_sweep
    from engine.experiments.spec import sweep_from_dict
    house_table(tmp_path / "house.csv", rows=300)
    sweep = sweep_from_dict({"datasets": ["house.csv"], "algorithms": ["greedy"],
                             "depth": [1, 3], "folds": 3}, tmp_path)
    table = run_sweep(sweep, tmp_path / "out.csv", InProcess()).table
    assert len(table) == 6 and set(table["task"]) == {"regression"}
    assert table["test_accuracy"].isna().all()
    deeper = table[table["depth"] == 3]["test_r2"].mean()
    assert table[table["depth"] == 1]["test_r2"].mean() < deeper <= 1
    assert (table["test_rmse"] > 0).all() and (table["test_mae"] > 0).all()
    with pytest.raises(ParameterError, match="task"):
        sweep_from_dict({"datasets": ["house.csv"], "algorithms": ["greedy"],
                         "task": "numbers"}, tmp_path)
