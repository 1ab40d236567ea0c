"""Feature importance, class probabilities and the ROC of one class (engine.importance)
and their CSV files: checked by hand on a tiny tree, by brute force on trained ones,
and against scikit-learn."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from conftest import SAMPLES
from sklearn.metrics import roc_auc_score

from engine.data.csv_reader import parse_text, read_table
from engine.data.dataset import PrepOptions
from engine.featurize import binarized, prepare
from engine.data.features import EQ, NUM, Feature
from engine.errors import DataError
from engine.export.evaluation_csv import (
    IMPORTANCE_HEADER,
    PER_CLASS_HEADER,
    ROC_HEADER,
    write_importance_csv,
    write_per_class_csv,
    write_roc_csv,
)
from engine.importance import class_probabilities, feature_importance, roc_for_class
from engine.metrics import per_class
from engine.model import Diagram, Tree
from engine.training import train

# Ten rows worked by hand in `test_importance_by_hand`.
TINY = """a,colour,class
1,red,yes
2,red,yes
2,blue,no
3,green,no
3,red,no
5,blue,yes
6,blue,yes
7,green,no
8,red,no
9,blue,yes
"""


@pytest.fixture
def tiny():
    return prepare(parse_text(TINY), PrepOptions(target="class"))


def hand_tree(data) -> Tree:
    """a <= 3 ? (colour = red ? ... : ...) : (colour = blue ? ... : ...)."""
    f = data.features.index
    a, red, blue = f(Feature("a", NUM)), f(Feature("colour", EQ, "red")), \
        f(Feature("colour", EQ, "blue"))
    # nodes: 0 root, 1 left (red?), 2 right (blue?), 3-6 leaves
    feature = [a, red, blue, -1, -1, -1, -1]
    threshold = [3.0, 0.5, 0.5, 0, 0, 0, 0]
    left, right = [1, 3, 5, -1, -1, -1, -1], [2, 4, 6, -1, -1, -1, -1]
    tree = Tree.from_arrays(feature, threshold, left, right, np.zeros((7, 2)), data.prep)
    nodes = np.arange(7)
    tree.value = np.array([np.bincount(data.y[tree.reaches(data.X, k)], minlength=2)
                           for k in nodes], dtype=float)
    return Tree.from_arrays(feature, threshold, left, right, tree.value, data.prep)


def test_importance_by_hand(tiny):
    """Root (5 yes, 5 no) errs 5; a <= 3 leaves 2 + 2, so `a` removes 1.  Left: red
    (2 yes, 1 no) errs 1, not red (2 no) 0: 1 removed.  Right: blue (3 yes) and not
    blue (2 no) err 0: 2 removed.  `colour` sums its two one-hot features: 3."""
    tree = hand_tree(tiny)
    importance = feature_importance(tree, tiny.X, tiny.y, tiny.w)
    assert importance.rows == [("colour", 3.0), ("a", 1.0)]
    assert importance.root_error == 5.0 and importance.model_error == 1.0
    f = tiny.features.index
    assert importance.per_feature[f(Feature("colour", EQ, "red"))] == 1.0
    assert importance.per_feature[f(Feature("colour", EQ, "blue"))] == 2.0
    assert importance.per_feature[f(Feature("colour", EQ, "green"))] == 0.0
    np.testing.assert_allclose(importance.shares, [0.75, 0.25])


def brute_force(tree: Tree, X, y, w, n_classes) -> dict[str, float]:
    """Every internal node's rows found by `Tree.reaches`, one node at a time."""
    def error(rows):
        counts = np.bincount(y[rows], weights=w[rows], minlength=n_classes)
        return counts.sum() - counts.max()

    out: dict[str, float] = {}
    for node in np.flatnonzero(tree.feature >= 0):
        here = tree.reaches(X, node)
        gain = error(here) - error(tree.reaches(X, tree.left[node])) - \
            error(tree.reaches(X, tree.right[node]))
        column = tree.features[tree.feature[node]].column
        out[column] = out.get(column, 0.0) + gain
    return out


def loans(**options):
    return prepare(read_table(SAMPLES / "loans.csv"), PrepOptions(**options))


@pytest.mark.parametrize("weighted", [False, True])
def test_importance_equals_brute_force_and_sums_to_the_error_removed(tiny, weighted):
    rng = np.random.default_rng(3)
    for data, tree in [(tiny, hand_tree(tiny)),
                       (loans(), train(loans(), "greedy", {"depth": 4}).tree)]:
        w = rng.integers(1, 5, len(data.y)).astype(float) if weighted else data.w
        importance = feature_importance(tree, data.X, data.y, w)
        expected = brute_force(tree, data.X, data.y, w, len(data.class_names))
        got = dict(importance.rows)
        assert set(got) == {f.column for f in data.features}
        for column, value in got.items():
            assert value == pytest.approx(expected.get(column, 0.0), abs=1e-9)
        assert list(importance.values) == sorted(importance.values, reverse=True)
        assert (importance.values >= 0).all()
        root = np.bincount(data.y, weights=w)
        assert importance.root_error == pytest.approx(root.sum() - root.max())
        assert importance.values.sum() == pytest.approx(
            importance.root_error - tree.error(data.X, data.y, w), abs=1e-9)
        assert importance.per_feature.sum() == pytest.approx(importance.values.sum())


def test_a_single_leaf_has_no_importance(tiny):
    leaf = Tree.leaf(np.bincount(tiny.y, minlength=2).astype(float), tiny.prep)
    importance = feature_importance(leaf, tiny.X, tiny.y)
    assert (importance.values == 0).all() and (importance.shares == 0).all()
    assert importance.root_error == importance.model_error == 5.0


def test_a_tree_shaped_diagram_sums_to_the_error_removed():
    data = loans(target="decision")
    diagram = train(data, "odd", {"depth": 2, "tree": True, "milp": False,
                                  "heuristic_time": 0.2}).tree
    assert isinstance(diagram, Diagram)
    importance = feature_importance(diagram, data.X, data.y, data.w)
    assert (importance.values >= 0).all() and importance.values.max() > 0
    assert importance.values.sum() == pytest.approx(
        importance.root_error - diagram.error(data.X, data.y, data.w), abs=1e-9)
    proba = class_probabilities(diagram, data.X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_other_models_and_other_matrices_are_refused_in_one_sentence(tiny):
    with pytest.raises(DataError, match="trees and decision diagrams only"):
        feature_importance(object(), tiny.X, tiny.y)
    with pytest.raises(DataError, match="not in the model's features"):
        feature_importance(hand_tree(tiny), tiny.X[:, :2], tiny.y)


def test_class_probabilities_are_leaf_shares_and_an_empty_leaf_its_class(tiny):
    tree = hand_tree(tiny)
    proba = class_probabilities(tree, tiny.X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    leaves = tree.apply(tiny.X)
    np.testing.assert_allclose(proba, tree.value[leaves] /
                               tree.value[leaves].sum(axis=1, keepdims=True))
    assert (np.argmax(proba, axis=1) == tree.predict(tiny.X)).all()
    # a leaf no training row reached predicts its parent's class with certainty
    empty = tree.value.copy()
    empty[3] = 0.0
    hollow = Tree.from_arrays(tree.feature, tree.threshold, tree.left, tree.right, empty,
                              tiny.prep)
    rows = hollow.apply(tiny.X) == 3
    assert rows.any()
    expected = np.zeros(2)
    expected[hollow.label[1]] = 1.0
    np.testing.assert_array_equal(class_probabilities(hollow, tiny.X)[rows],
                                  np.tile(expected, (rows.sum(), 1)))


@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_roc_auc_of_a_trained_tree_equals_scikit_learn(class_weight):
    data = loans(class_weight=class_weight)
    tree = train(data, "greedy", {"depth": 3}).tree
    proba = class_probabilities(tree, data.X)
    roc = roc_for_class(proba, data.y, 1, data.w, data.class_names)
    assert roc.auc == pytest.approx(roc_auc_score(data.y, proba[:, 1],
                                                  sample_weight=data.w), abs=1e-12)
    assert len(roc.thresholds) == len(roc.fpr) == len(roc.tpr) == 1 + len(
        np.unique(proba[:, 1]))
    assert (roc.fpr[0], roc.tpr[0], roc.fpr[-1], roc.tpr[-1]) == (0, 0, 1, 1)
    # with two classes, either class as positive gives the same area
    assert roc_for_class(proba, data.y, 0, data.w).auc == pytest.approx(roc.auc)


def test_roc_of_binarised_blossom_tree_and_a_one_sided_subset():
    data = binarized(loans(), "quantile:4")
    tree = train(data, "blossom", {"depth": 2}).tree
    proba = class_probabilities(tree, data.X)
    assert roc_for_class(proba, data.y, 1).auc == pytest.approx(
        roc_auc_score(data.y, proba[:, 1]), abs=1e-12)
    only = data.y == 0
    with pytest.raises(DataError, match="hold no class 'declined'"):
        roc_for_class(proba[only], data.y[only], 1, None, data.class_names)
    with pytest.raises(DataError, match="hold only class 'approved'"):
        roc_for_class(proba[only], data.y[only], 0, None, data.class_names)


def read(path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_csv_writers_write_every_row_at_full_precision(tiny, tmp_path):
    tree = hand_tree(tiny)
    importance = feature_importance(tree, tiny.X, tiny.y)
    write_importance_csv(tmp_path / "importance.csv", importance)
    assert read(tmp_path / "importance.csv") == [IMPORTANCE_HEADER, ["colour", "3", "0.75"],
                                                 ["a", "1", "0.25"]]

    scores = per_class(tiny.y, tree.predict(tiny.X), 2, tiny.w)
    write_per_class_csv(tmp_path / "per_class.csv", tiny.class_names, scores)
    rows = read(tmp_path / "per_class.csv")
    assert rows[0] == PER_CLASS_HEADER and [r[0] for r in rows[1:]] == ["no", "yes"]
    for k, row in enumerate(rows[1:]):
        assert [float(v) for v in row[1:]] == [
            scores[key][k] for key in ("precision", "recall", "f1", "support")]
    assert rows[1][4] == "5"          # whole supports without ".0"

    proba = class_probabilities(tree, tiny.X)
    roc = roc_for_class(proba, tiny.y, 1)
    write_roc_csv(tmp_path / "roc.csv", roc)
    rows = read(tmp_path / "roc.csv")
    assert rows[0] == ROC_HEADER and rows[1] == ["inf", "0", "0"]
    values = np.array(rows[1:], dtype=float)
    np.testing.assert_array_equal(values[:, 0], roc.thresholds)
    np.testing.assert_array_equal(values[:, 1], roc.fpr)
    np.testing.assert_array_equal(values[:, 2], roc.tpr)


def test_csv_writers_refuse_a_missing_folder_in_one_sentence(tiny, tmp_path):
    importance = feature_importance(hand_tree(tiny), tiny.X, tiny.y)
    with pytest.raises(DataError, match="does not exist"):
        write_importance_csv(tmp_path / "nowhere" / "x.csv", importance)


def test_the_gain_curve_counts_the_positive_rows_among_the_highest_scores():
    """Cumulative gain (and lift) against a count made row by row: at each distinct
    score, the rows scoring at least that much and the positive rows among them."""
    from engine.importance import gain_for_class

    rng = np.random.default_rng(5)
    for _ in range(20):
        n = int(rng.integers(2, 40))
        y = rng.integers(0, 3, n)
        if not (y == 1).any():
            y[0] = 1
        proba = np.round(rng.random((n, 3)), 1)
        w = rng.integers(1, 4, n).astype(float)
        gain = gain_for_class(proba, y, 1, w)
        cuts = np.unique(proba[:, 1])[::-1]
        taken = [0.0] + [w[proba[:, 1] >= c].sum() / w.sum() for c in cuts]
        gained = [0.0] + [w[(proba[:, 1] >= c) & (y == 1)].sum() / w[y == 1].sum()
                          for c in cuts]
        np.testing.assert_allclose(gain.taken, taken)
        np.testing.assert_allclose(gain.gained, gained)
        np.testing.assert_allclose(gain.lift[1:], np.array(gained[1:]) / taken[1:])
        assert gain.at(1.0) == 1.0 and gain.at(0.0) == 0.0


def test_cutoffs_count_every_threshold_and_find_the_cheapest_row_by_row():
    from engine.importance import cutoffs_for_class

    rng = np.random.default_rng(8)
    for _ in range(20):
        n = int(rng.integers(2, 40))
        y = rng.integers(0, 2, n)
        proba = np.round(rng.random(n), 1)
        proba = np.column_stack([1 - proba, proba])
        w = rng.integers(1, 4, n).astype(float)
        cuts = cutoffs_for_class(proba, y, 1, w)
        for t in list(np.unique(proba[:, 1])) + [0.0, 0.55, 2.0]:
            called = proba[:, 1] >= t
            expected = (w[called & (y == 1)].sum(), w[called & (y == 0)].sum(),
                        w[~called & (y == 1)].sum(), w[~called & (y == 0)].sum())
            assert cuts.at(t) == pytest.approx(expected)
        for cost_fp, cost_fn in ((1, 1), (1, 5), (5, 1)):
            options = sorted(set(proba[:, 1])) + [np.inf]
            costs = {t: cost_fp * cuts.at(t)[1] + cost_fn * cuts.at(t)[2] for t in options}
            best = cuts.cheapest(cost_fp, cost_fn)
            assert costs[best] == pytest.approx(min(costs.values()))
