"""Held-out evaluation and tuning of regression trees (issue 47, second part): folds
stratified by the target's quantiles, each split's RMSE, MAE and R² on new rows
beside the training rows' mean, the verdict when a tree loses to that mean, and
tuning by R² or RMSE from the API and the command line."""

import json
import math
from dataclasses import replace

import numpy as np
import pytest
from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score

from engine.cli import main
from engine.data.csv_reader import parse_text, read_table
from engine.data.dataset import PrepOptions
from engine.errors import ParameterError
from engine.evaluation import (
    CrossValidation,
    Evaluation,
    Plan,
    evaluate,
    quantile_folds,
    target_strata,
)
from engine.featurize import prepare
from engine.training import train
from engine.tuning import Candidate, Scored, Tuner, candidates, choose, resolve_metric
from test_regression import house_table
from conftest import SAMPLES


def table(columns: dict[str, np.ndarray]):
    """A raw table of the given numeric columns (text cells, as a CSV reads them)."""
    names = list(columns)
    rows = zip(*(columns[name] for name in names))
    text = ",".join(names) + "\n" + "".join(
        ",".join("" if isinstance(v, float) and math.isnan(v) else repr(float(v))
                 for v in row) + "\n" for row in rows)
    return parse_text(text)


def steps(rows=400, seed=0, noise=0.3):
    """y = 4[a > .5] + 2[b > .5] + [c > .5] + noise, and a useless column d: a tree
    needs depth 3 to find every step."""
    rng = np.random.default_rng(seed)
    a, b, c, d = (rng.random(rows).round(3) for _ in range(4))
    y = 4 * (a > 0.5) + 2 * (b > 0.5) + (c > 0.5) + rng.normal(0, noise, rows)
    return table({"a": a, "b": b, "c": c, "d": d, "y": y.round(4)})


def noise(rows=300, seed=1):
    """A target no column predicts."""
    rng = np.random.default_rng(seed)
    return table({**{name: rng.random(rows).round(3) for name in "abcdef"},
                  "y": rng.normal(50, 10, rows).round(3)})


# ---------------------------------------------------------------------- splits
def test_quantile_folds_partition_the_rows_and_each_spans_the_target():
    rng = np.random.default_rng(0)
    values = rng.lognormal(size=103)
    folds = quantile_folds(values, 5, seed=2)
    assert np.array_equal(np.sort(np.concatenate(folds)), np.arange(103))
    assert max(map(len, folds)) - min(map(len, folds)) <= 1
    # sorted by value, every run of 5 rows is dealt one to each fold
    fold_of = np.empty(103, dtype=int)
    for number, fold in enumerate(folds):
        fold_of[fold] = number
    ranked = fold_of[np.argsort(values, kind="stable")]
    for start in range(0, 100, 5):
        assert sorted(ranked[start:start + 5]) == [0, 1, 2, 3, 4]
    assert len(set(ranked[100:])) == 3
    # seeded: the same seed deals the same folds, another one others
    again, other = quantile_folds(values, 5, seed=2), quantile_folds(values, 5, seed=3)
    assert all(np.array_equal(x, y) for x, y in zip(folds, again))
    assert not all(np.array_equal(x, y) for x, y in zip(folds, other))


def test_target_strata_are_deciles():
    values = np.random.default_rng(1).normal(size=1000)
    strata = target_strata(values)
    assert np.bincount(strata).tolist() == [100] * 10
    order = np.argsort(values)
    assert (np.diff(strata[order]) >= 0).all()   # bins follow the target


def test_the_folds_of_a_regression_partition_the_rows_with_a_target():
    raw = steps(200)
    raw.frame.loc[[3, 50, 51], "y"] = None    # rows without a target: in no split
    validation = CrossValidation(raw, PrepOptions(), "greedy", {"depth": 2},
                                 Plan("kfold", 4, seed=5))
    rows, class_names, pairs = validation.splits()
    assert class_names == [] and validation.task == "regression"
    assert sorted(rows[np.concatenate([t for _, t in pairs])]) == \
        sorted(set(range(200)) - {3, 50, 51})
    for train_rows, test_rows in pairs:
        assert not set(train_rows) & set(test_rows)
        assert len(train_rows) + len(test_rows) == 197


def test_a_hold_out_of_a_regression_takes_its_share_of_every_decile():
    raw = steps(400)
    validation = CrossValidation(raw, PrepOptions(), "greedy", {"depth": 2},
                                 Plan("holdout", test_size=0.25, seed=3))
    rows, _, [(train_rows, test_rows)] = validation.splits()
    assert len(test_rows) == 100 and len(train_rows) == 300
    y = raw.frame["y"].astype(float).to_numpy()[rows]
    assert np.bincount(target_strata(y)[test_rows]).tolist() == [10] * 10
    evaluation = validation.run()
    assert len(evaluation.folds) == 1 and evaluation.folds[0].n_test == 100
    assert "hold-out 25%: test R²" in evaluation.summary()


# ---------------------------------------------------------------------- scores
def test_held_out_scores_are_scikit_learns_on_each_folds_predictions():
    """Each split's tree, trained on its training rows alone, predicts its test rows:
    R², RMSE and MAE are scikit-learn's of those predictions, the baseline is the
    training rows' mean (R² at most 0), and the tree's R² on its training rows is
    counted on them."""
    raw = steps(300, noise=0.8)
    plan = Plan("kfold", 3, seed=4)
    validation = CrossValidation(raw, PrepOptions(), "greedy", {"depth": 3}, plan,
                                 baselines=True)
    evaluation = validation.run()
    assert evaluation.regression and evaluation.complete and len(evaluation.folds) == 3
    rows, _, pairs = validation.splits()
    y = raw.frame["y"].astype(float).to_numpy()
    for fold, (train_pos, test_pos) in zip(evaluation.folds, pairs):
        train_frame, test_frame = (raw.frame.iloc[rows[part]].reset_index(drop=True)
                                   for part in (train_pos, test_pos))
        train_raw = replace(raw, frame=train_frame)
        tree = train(prepare(train_raw), "greedy", {"depth": 3}).tree
        truth, predicted = y[rows[test_pos]], tree.predict_frame(test_frame)
        assert fold.test_r2 == pytest.approx(r2_score(truth, predicted))
        assert fold.test_rmse == pytest.approx(
            math.sqrt(mean_squared_error(truth, predicted)))
        assert fold.test_mae == pytest.approx(mean_absolute_error(truth, predicted))
        mean = np.full(len(truth), y[rows[train_pos]].mean())
        assert fold.mean_r2 == pytest.approx(r2_score(truth, mean))
        assert -0.05 < fold.mean_r2 <= 0
        assert fold.train_r2 == pytest.approx(
            r2_score(y[rows[train_pos]], tree.predict_frame(train_raw.frame)))
        assert fold.test_r2 < fold.train_r2
        assert math.isnan(fold.test_accuracy) and fold.held_out is None
        assert math.isnan(fold.greedy_r2)     # greedy is its own greedy tree
    assert evaluation.mean_of("test_r2") == pytest.approx(
        np.mean([f.test_r2 for f in evaluation.folds]))
    assert 0.7 < evaluation.mean_of("test_r2") < 1
    assert evaluation.beats_baseline() is True and evaluation.verdict() == ""
    text = evaluation.summary()
    assert text.startswith("3-fold cross-validation: test R² 0.") and "RMSE" in text
    assert "better than the training rows' mean" in text and "no better" not in text
    assert "%" not in text + evaluation.baselines_text()


def test_each_split_keeps_the_tables_task():
    """21 different numbers make the table a regression, and a training part without
    the one row of the 21st would be a classification if its task were chosen anew."""
    values = np.r_[np.repeat(np.arange(20.0), 10), 99.0]
    raw = table({"x": np.arange(201.0), "y": values})
    evaluation = evaluate(raw, PrepOptions(), "greedy", {"depth": 2}, Plan("kfold", 4))
    assert evaluation.task == "regression"
    assert all(fold.regression for fold in evaluation.folds)


def test_a_tree_of_noise_is_said_to_lose_to_the_training_mean(tmp_path, capsys):
    evaluation = evaluate(noise(), PrepOptions(), "greedy", {"depth": 6},
                          Plan("kfold", 5))
    # without baselines nothing is claimed
    assert evaluation.beats_baseline() is None and evaluation.verdict() == ""
    validation = CrossValidation(noise(), PrepOptions(), "greedy", {"depth": 6},
                                 Plan("kfold", 5), baselines=True)
    evaluation = validation.run()
    assert evaluation.mean_of("test_r2") < evaluation.mean_of("mean_r2") <= 0
    assert evaluation.beats_baseline() is False
    assert evaluation.verdict().startswith(
        "On held-out rows this tree predicts worse than always answering the training "
        "rows' mean (R² -")
    assert evaluation.verdict().count(".") == 1 + 2   # one sentence (two decimals)
    assert "no better than the training rows' mean" in evaluation.summary()
    brief = evaluation.brief()
    assert brief["beats_mean"] is False and brief["verdict"] == evaluation.verdict()
    # the command line says it too
    path = tmp_path / "noise.csv"
    path.write_text(noise().frame.to_csv(index=False))
    assert main(["fit", str(path), "--algo", "greedy", "--depth", "6", "--validate",
                 "5"]) == 0
    out = capsys.readouterr().out
    assert "predicts worse than always answering the training rows' mean" in out


def test_a_regression_evaluation_round_trips_through_a_session():
    validation = CrossValidation(steps(120), PrepOptions(), "greedy", {"depth": 2},
                                 Plan("kfold", 3), baselines=True)
    evaluation = validation.run()
    back = Evaluation.from_dict(json.loads(json.dumps(evaluation.to_dict())))
    assert back.regression and back.brief() == evaluation.brief()
    assert back.summary() == evaluation.summary()
    # a classification's saved folds are as before regressions
    classes = evaluate(read_table(SAMPLES / "loans.csv"),
                       PrepOptions(binarize="quantile:4"), "greedy", {"depth": 2},
                       Plan("kfold", 3))
    assert "test_r2" not in classes.to_dict()["folds"][0]
    assert Evaluation.from_dict(classes.to_dict()).task == "classification"


# ---------------------------------------------------------------------- tuning
def test_the_rule_prefers_a_lower_rmse_and_the_means_floor():
    def rmse(depth, values, leaves):
        return Scored(Candidate(depth), list(values), [leaves] * len(values),
                      folds=len(values), metric="rmse")
    rows = [rmse(1, [9.0, 9.2, 9.1], 2), rmse(3, [5.0, 5.2, 4.8], 8),
            rmse(4, [5.05, 5.1, 5.0], 6), rmse(6, [6.0, 6.5, 6.2], 40)]
    assert choose(rows) == (1, 2)      # the lowest RMSE, then the simplest within
    # only settings at or below the mean's RMSE take part when one is
    assert choose(rows, majority=8.0) == (1, 2)
    assert choose([rows[0], rows[3]], majority=7.0) == (1, 1)
    assert choose([rows[0]], majority=7.0) == (0, 0)   # none is: the rule alone


@pytest.mark.parametrize("metric", ["r2", "rmse", None])
def test_tuning_a_regression_finds_the_depth_its_signal_needs(metric):
    raw = steps(400)
    options = PrepOptions()
    plan = Plan("kfold", 3)
    grid = candidates("greedy", [1, 2, 3, 4, 5, 6], [1], [0])
    tuning = Tuner(raw, options, "greedy", grid, {}, plan, metric=metric).run()
    chosen = tuning.scored[tuning.chosen]
    assert tuning.metric == (metric or "r2") and tuning.regression
    assert chosen.candidate.depth >= 3
    assert tuning.result.tree.regression and tuning.params["depth"] >= 3
    # every score is the cross-validation of its setting, as `evaluate` measures it
    score = tuning.scored[2]
    folds = evaluate(raw, replace(options, depth=6), "greedy",
                     score.candidate.params("greedy", {}), plan).folds
    assert score.accuracies == pytest.approx([getattr(f, f"test_{tuning.metric}")
                                              for f in folds])
    document = tuning.to_dict()
    assert f"mean_{tuning.metric}" in document and "majority_accuracy" not in document
    row = document["candidates"][tuning.chosen]
    assert row["metric"] == tuning.metric and "mean_accuracy" not in row
    assert row[f"validation_{tuning.metric}"] == pytest.approx(chosen.mean)
    assert row[f"validation_{tuning.metric}_per_fold"] == chosen.accuracies
    assert tuning.note == ""
    table = "\n".join(tuning.table())
    assert "%" not in table and "the training rows' mean" in table


def test_the_tunings_floor_is_the_training_means_score():
    raw = steps(300)
    plan = Plan("kfold", 3)
    tuning = Tuner(raw, PrepOptions(), "greedy", candidates("greedy", [2], [1], [0]),
                   {}, plan, metric="rmse").run()
    folds = CrossValidation(raw, PrepOptions(depth=2), "greedy", {"depth": 2}, plan,
                            baselines=True).run().folds
    assert tuning.majority == pytest.approx(np.mean([f.mean_rmse for f in folds]))
    assert tuning.majority > tuning.scored[0].mean   # the tree's error is the lower


def test_tuning_noise_says_no_setting_beat_the_training_mean():
    tuning = Tuner(noise(), PrepOptions(), "greedy",
                   candidates("greedy", [4, 6], [1], [0]), {}, Plan("kfold", 3)).run()
    assert tuning.scored[tuning.chosen].mean < tuning.majority
    assert tuning.note.startswith("No setting predicted the validation rows better "
                                  "than always answering the training rows' mean")


def test_a_measure_of_the_other_task_is_refused_in_one_sentence():
    grid = candidates("greedy", [1], [1], [0])
    for metric in ("accuracy", "balanced", "auc"):
        with pytest.raises(ParameterError, match="this target holds numbers .a "
                                                 "regression.: rank by r2 or rmse"):
            Tuner(steps(60), PrepOptions(), "greedy", grid, {}, Plan("kfold", 3),
                  metric=metric).run()
    with pytest.raises(ParameterError, match="R² ranks the settings of a regression.*"
                                             "rank by accuracy, balanced or auc"):
        Tuner(read_table(SAMPLES / "loans.csv"), PrepOptions(), "greedy", grid, {},
              Plan("kfold", 3), metric="r2").run()
    assert resolve_metric(None, "regression") == "r2"
    assert resolve_metric(None, "classification") == "accuracy"


def test_classification_candidates_keep_their_keys():
    row = Scored(Candidate(2, 1, 0.0), [0.8, 0.9], [3, 3], folds=2).to_dict()
    assert set(row) == {"depth", "min_leaf", "leaf_cost", "mean_accuracy",
                        "standard_error", "mean_leaves", "accuracies", "leaves",
                        "complete", "folds_at_time_limit", "note", "fold_seconds"}


# ---------------------------------------------------------------- command line
def test_fit_validate_reports_a_regressions_held_out_scores(tmp_path, capsys):
    path = house_table(tmp_path / "house.csv", rows=400)
    assert main(["fit", str(path), "--algo", "greedy", "--depth", "3", "--validate", "4",
                 "--json"]) == 0
    validation = json.loads(capsys.readouterr().out)["validation"]
    expected = evaluate(read_table(path), PrepOptions(), "greedy", {"depth": 3},
                        Plan("kfold", 4))
    assert validation["task"] == "regression" and validation["folds"] == 4
    assert validation["per_fold_r2"] == pytest.approx([f.test_r2 for f in expected.folds])
    assert validation["test_r2"] == pytest.approx(expected.mean_of("test_r2"))
    assert validation["test_rmse_std"] == pytest.approx(expected.std_of("test_rmse"))
    assert 0.5 < validation["test_r2"] < validation["train_r2"] <= 1
    assert validation["test_mae"] < validation["test_rmse"] < validation["mean_rmse"]
    assert -0.05 < validation["mean_r2"] <= 0 and validation["beats_mean"] is True
    assert validation["test_accuracy"] is None and validation["greedy_r2"] is None
    assert validation["verdict"] == ""
    assert main(["fit", str(path), "--algo", "greedy", "--depth", "3", "--validate",
                 "4"]) == 0
    out = capsys.readouterr().out
    assert "4-fold cross-validation: test R² 0." in out and "RMSE" in out and "MAE" in out
    assert "(the training rows' mean R² " in out


def test_orchard_tune_ranks_a_regression_by_r2_or_rmse(tmp_path, capsys):
    path = house_table(tmp_path / "house.csv", rows=400)
    assert main(["tune", str(path), "--algo", "greedy", "--depths", "1-4", "--min-leaf",
                 "1", "--leaf-cost", "0", "--folds", "3", "--json"]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    tuning = summary["tuning"]
    assert summary["task"] == "regression" and summary["algorithm"] == "greedy"
    assert tuning["metric"] == "r2" and tuning["measure"] == "validation R²"
    assert "4 of 4: depth 4, min leaf 1, leaf cost 0: validation R² 0." in captured.err
    assert "%" not in captured.err
    assert main(["tune", str(path), "--algo", "greedy", "--depths", "1-4", "--folds",
                 "3", "--metric", "rmse"]) == 0
    out = capsys.readouterr().out
    assert "of the best validation RMSE" in out and "<- chosen" in out
    assert main(["tune", str(path), "--depths", "1-2", "--metric", "balanced"]) == 2
    err = capsys.readouterr().err
    assert "rank by r2 or rmse instead" in err and err.count("\n") == 1
