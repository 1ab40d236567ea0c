"""Hold-out and stratified k-fold evaluation: splits, no test leakage, scores, cancel."""

import math
from dataclasses import replace

import numpy as np
import pytest
from conftest import SAMPLES

import engine.evaluation as evaluation_module
from engine.data.csv_reader import parse_text, read_table
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.errors import DataError, ParameterError
from engine.evaluation import (
    CrossValidation,
    Evaluation,
    Plan,
    evaluate,
    holdout_split,
    stratified_folds,
)
from engine.metrics import confusion_matrix
from engine.training import train


def table(rows=60, seed=0, rare=False):
    """id, x (numeric), colour, y; y depends on x with some noise."""
    rng = np.random.default_rng(seed)
    lines = ["id,x,colour,y"]
    for i in range(rows):
        x = int(rng.integers(0, 1000))
        colour = ("red", "blue", "green")[i % 3]
        y = "a" if (x < 500) ^ (rng.random() < 0.1) else "b"
        lines.append(f"r{i},{x},{colour},{y}")
    if rare:
        lines.append("rare,5,red,c")
    return parse_text("\n".join(lines) + "\n")


# ---------------------------------------------------------------------- splits
def test_stratified_folds_partition_the_rows_and_balance_classes():
    labels = np.array([0] * 23 + [1] * 11 + [2] * 6)
    folds = stratified_folds(labels, 5, seed=3)
    everything = np.sort(np.concatenate(folds))
    assert np.array_equal(everything, np.arange(len(labels)))
    for value in (0, 1, 2):
        per_fold = [int((labels[f] == value).sum()) for f in folds]
        assert max(per_fold) - min(per_fold) <= 1
    sizes = [len(f) for f in folds]
    assert max(sizes) - min(sizes) <= 1


def test_folds_are_seeded():
    labels = np.array([0, 1] * 30)
    a = stratified_folds(labels, 4, seed=1)
    b = stratified_folds(labels, 4, seed=1)
    c = stratified_folds(labels, 4, seed=2)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))


def test_holdout_is_stratified_and_disjoint():
    labels = np.array([0] * 80 + [1] * 20 + [2] * 1)
    train_rows, test_rows = holdout_split(labels, 0.25, seed=0)
    assert not set(train_rows) & set(test_rows)
    assert len(train_rows) + len(test_rows) == len(labels)
    assert (labels[test_rows] == 0).sum() == 20 and (labels[test_rows] == 1).sum() == 5
    assert 2 in labels[train_rows]  # a single-row class stays in training


# -------------------------------------------------------------- no leakage
def test_preparation_only_sees_training_rows(monkeypatch):
    raw = table(60)
    seen = []
    real_prepare = evaluation_module.prepare

    def spy(raw_part, options, progress=None):
        seen.append(set(raw_part.frame["id"]))
        return real_prepare(raw_part, options, progress)

    monkeypatch.setattr(evaluation_module, "prepare", spy)
    options = PrepOptions(target="y", ignore=("id",), binarize="quantile:4")
    cv = CrossValidation(raw, options, "greedy", {"depth": 2}, Plan("kfold", k=4, seed=5))
    rows, _, pairs = cv.splits()
    result = cv.run()
    assert len(result.folds) == 4 and len(seen) == 4
    ids = raw.frame["id"].to_numpy()
    for (train_pos, test_pos), train_ids in zip(pairs, seen):
        assert train_ids == set(ids[rows[train_pos]])
        assert not train_ids & set(ids[rows[test_pos]])


def test_thresholds_come_from_the_training_rows_only(monkeypatch):
    """A test row with an extreme value must not move any quantile threshold."""
    raw = table(40)
    frame = raw.frame.astype(object)
    frame.loc[len(frame)] = ["outlier", "999999", "red", "b"]
    raw = replace(raw, frame=frame)
    options = PrepOptions(target="y", ignore=("id",), binarize="midpoints")
    outlier = len(frame) - 1
    for seed in range(50):  # a seed whose hold-out part holds the outlier
        cv = CrossValidation(raw, options, "greedy", {"depth": 2}, Plan("holdout", 0, 0.3, seed))
        rows, _, [(_, test_pos)] = cv.splits()
        if outlier in rows[test_pos]:
            break
    else:
        pytest.fail("no seed holds the outlier out")
    seen = []
    real_prepare = evaluation_module.prepare

    def spy(raw_part, opts, progress=None):
        data = real_prepare(raw_part, opts, progress)
        seen.append([f.value for f in data.features if f.column == "x"])
        return data

    monkeypatch.setattr(evaluation_module, "prepare", spy)
    cv.run()
    assert seen and max(seen[0]) < 1000  # the outlier's 999999 moved no threshold


# ---------------------------------------------------------------- accuracy
def test_holdout_scores_match_a_manual_computation():
    raw = read_table(SAMPLES / "loans.csv")
    options = PrepOptions(binarize="quantile:5")
    plan = Plan("holdout", test_size=0.3, seed=7)
    cv = CrossValidation(raw, options, "greedy", {"depth": 3}, plan)
    rows, class_names, [(train_pos, test_pos)] = cv.splits()
    result = cv.run()
    fold = result.folds[0]

    train_frame = raw.frame.iloc[rows[train_pos]]
    test_frame = raw.frame.iloc[rows[test_pos]]
    data = prepare(replace(raw, frame=train_frame), options)
    tree = train(data, "greedy", {"depth": 3}).tree
    truth = data.prep.labels(test_frame[data.prep.target])
    predicted = tree.predict_frame(test_frame)
    assert fold.test_accuracy == pytest.approx(float((truth == predicted).mean()))
    assert fold.n_test == len(test_frame) and fold.n_train == len(train_frame)
    assert np.array_equal(fold.test_confusion,
                          confusion_matrix(truth, predicted, len(class_names)))
    assert result.summary().startswith("hold-out 30%: test accuracy")


def test_baselines_match_a_manual_computation():
    """With `baselines`, a split also scores always answering its training part's most
    common class and the greedy tree of the algorithm's depth, on its test rows."""
    raw = read_table(SAMPLES / "loans.csv")
    options = PrepOptions(binarize="quantile:5")
    plan = Plan("holdout", test_size=0.3, seed=7)
    cv = CrossValidation(raw, options, "blossom", {"depth": 2}, plan, baselines=True)
    rows, _, [(train_pos, test_pos)] = cv.splits()
    fold = cv.run().folds[0]
    train_frame = raw.frame.iloc[rows[train_pos]]
    test_frame = raw.frame.iloc[rows[test_pos]]
    data = prepare(replace(raw, frame=train_frame), options)
    truth = data.prep.labels(test_frame[data.prep.target])
    common = np.bincount(data.y, minlength=data.n_classes).argmax()
    assert fold.majority_accuracy == pytest.approx(float((truth == common).mean()))
    greedy = train(data, "greedy", {"depth": 2}).tree
    assert fold.greedy_accuracy == pytest.approx(
        float((truth == greedy.predict_frame(test_frame)).mean()))
    # and round-trip through a session; sessions from before read back as unknown
    again = evaluation_module.FoldResult.from_dict(fold.to_dict())
    assert again.greedy_accuracy == fold.greedy_accuracy
    old = {k: v for k, v in fold.to_dict().items() if not k.endswith("_accuracy")
           or k in ("train_accuracy", "test_accuracy")}
    assert math.isnan(evaluation_module.FoldResult.from_dict(old).majority_accuracy)
    # greedy is not measured against itself; without baselines nothing is scored
    own = CrossValidation(raw, options, "greedy", {"depth": 2}, plan, baselines=True)
    assert math.isnan(own.run().mean_greedy_accuracy)
    assert math.isnan(CrossValidation(raw, options, "blossom", {"depth": 2},
                                      plan).run().mean_majority_accuracy)


def test_the_verdict_names_the_baseline_a_tree_loses_to():
    def ev(tests, majority, greedies):
        folds = [evaluation_module.FoldResult(
            i, 80, 20, 1.0, test, np.eye(2), np.eye(2), evaluation_module.Status.OPTIMAL,
            True, 0.1, majority_accuracy=majority, greedy_accuracy=greedy)
            for i, (test, greedy) in enumerate(zip(tests, greedies))]
        return Evaluation(Plan(), ["a", "b"], folds)
    # below the most common class by any margin
    assert "most common class (69.0% against 70.0%)" in \
        ev([0.69, 0.69], 0.7, [0.5, 0.5]).verdict()
    # below the greedy tree on every fold: more than a standard error
    assert "greedy tree of the same depth does better, by more than a standard error " \
        "(80.0% against 75.0%)" in ev([0.74, 0.76], 0.7, [0.79, 0.81]).verdict()
    # a gap of noise's size is no loss: paired differences -0.05 and +0.04
    assert ev([0.75, 0.84], 0.7, [0.80, 0.80]).verdict() == ""
    assert ev([0.8], 0.7, [0.8]).verdict() == "" == ev([0.8], 0.7, [math.nan]).verdict()
    # one split: a binomial standard error on its 20 test rows (about 9 points)
    assert ev([0.75], 0.7, [0.8]).verdict() == ""
    assert "greedy tree" in ev([0.6], 0.5, [0.8]).verdict()
    assert ev([0.8, 0.8], 0.7, [0.75, 0.75]).baselines_text() == \
        " (most common class 70.0%, greedy tree of the same depth 75.0%)"


def test_kfold_confusion_counts_every_row_once():
    raw = table(90, seed=2)
    options = PrepOptions(target="y", ignore=("id",))
    result = evaluate(raw, options, "greedy", {"depth": 2}, Plan("kfold", k=3, seed=0))
    assert result.complete and len(result.folds) == 3
    matrix = result.test_confusion()
    assert matrix.sum() == 90
    pooled = np.trace(matrix) / matrix.sum()
    assert result.mean_test_accuracy == pytest.approx(pooled, abs=0.02)
    assert 0.6 < result.mean_test_accuracy <= 1.0
    assert all(f.train_accuracy >= 0.6 for f in result.folds)
    again = evaluate(raw, options, "greedy", {"depth": 2}, Plan("kfold", k=3, seed=0))
    assert again.test_accuracies == result.test_accuracies  # seeded: reproducible
    restored = Evaluation.from_dict(result.to_dict())
    assert restored.test_accuracies == result.test_accuracies
    assert np.array_equal(restored.test_confusion(), matrix)


def test_class_missing_from_a_training_part_is_an_error_on_its_test_row():
    raw = table(40, rare=True)
    result = evaluate(raw, PrepOptions(target="y", ignore=("id",)), "greedy",
                      {"depth": 2}, Plan("kfold", k=4, seed=0))
    assert result.class_names == ["a", "b", "c"]
    matrix = result.test_confusion()
    assert matrix.shape == (3, 3) and matrix[2].sum() == 1 and matrix[2, 2] == 0


def test_rows_without_a_class_take_no_part():
    raw = table(40)
    frame = raw.frame.copy()
    frame.loc[3, "y"] = None
    result = evaluate(replace(raw, frame=frame), PrepOptions(target="y", ignore=("id",)),
                      "greedy", {"depth": 1}, Plan("kfold", k=4))
    assert result.test_confusion().sum() == 39


# --------------------------------------------------------- cancel and errors
def test_cancel_after_the_first_fold_keeps_it():
    raw = table(60)
    cv = CrossValidation(raw, PrepOptions(target="y", ignore=("id",)), "greedy",
                         {"depth": 2}, Plan("kfold", k=5))
    result = cv.run(on_fold=lambda fold, n: cv.cancel())
    assert len(result.folds) == 1 and not result.complete
    assert "1 of 5 folds, stopped" in result.summary()


def test_cancel_before_running():
    cv = CrossValidation(table(30), PrepOptions(target="y", ignore=("id",)), "greedy",
                         {"depth": 2}, Plan("kfold", k=3))
    cv.cancel()
    result = cv.run()
    assert result.folds == [] and not result.complete
    assert math.isnan(result.mean_test_accuracy)


def test_bad_plans_and_data():
    raw = table(6)
    options = PrepOptions(target="y", ignore=("id",))
    with pytest.raises(ParameterError):
        Plan("bootstrap").check()
    with pytest.raises(ParameterError):
        CrossValidation(raw, options, "greedy", plan=Plan("kfold", k=1))
    with pytest.raises(ParameterError):
        CrossValidation(raw, options, "greedy", plan=Plan("holdout", test_size=1.5))
    with pytest.raises(DataError, match="at least 10 rows"):
        evaluate(raw, options, "greedy", plan=Plan("kfold", k=10))


def test_fold_problems_name_the_fold():
    # class "b" has a single row: the fold that holds it out trains on one class
    raw = parse_text("x,y\n" + "".join(f"{i},a\n" for i in range(9)) + "50,b\n")
    with pytest.raises(DataError, match=r"Fold \d of 5: .*single class"):
        evaluate(raw, PrepOptions(target="y"), "greedy", {"depth": 1}, Plan("kfold", k=5))
