"""The evaluation views show exactly scikit-learn's numbers for a trained tree, say why
a ROC curve is missing, and export PNG and CSV without dialogs."""

from __future__ import annotations

import csv

import numpy as np
import pyqtgraph as pg
import pytest
from conftest import SAMPLES
from PySide6.QtGui import QImage
from sklearn.metrics import precision_recall_fscore_support, roc_auc_score

from engine.data.csv_reader import parse_text, read_table
from engine.data.dataset import PrepOptions
from engine.featurize import binarized, prepare
from engine.errors import DataError
from engine.importance import class_probabilities
from engine.training import train
from gui.evaluation_views import MAX_BARS, EvaluationViews


@pytest.fixture(scope="module")
def loans():
    data = prepare(read_table(SAMPLES / "loans.csv"), PrepOptions(class_weight="balanced"))
    return data, train(data, "greedy", {"depth": 3}).tree


def three_classes(n: int = 90, columns: int = 3, noise: bool = False):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 10, (n, columns))
    y = np.where(X[:, 0] < 3, "low", np.where(X[:, 1] < 5, "mid", "high"))
    if noise:
        y = rng.choice(["low", "mid", "high"], n)
    lines = [",".join([f"c{j}" for j in range(columns)] + ["class"])]
    lines += [",".join(map(str, row)) + f",{label}" for row, label in zip(X, y)]
    return prepare(parse_text("\n".join(lines) + "\n"), PrepOptions(target="class"))


def read_csv(path) -> list[list[str]]:
    return list(csv.reader(path.read_text(encoding="utf-8").splitlines()))


@pytest.fixture
def views(qtbot):
    widget = EvaluationViews()
    qtbot.addWidget(widget)
    return widget


def test_two_classes_match_scikit_learn(views, loans):
    data, tree = loans
    views.show_model(tree, data.X, data.y, data.w, data.class_names)
    proba = class_probabilities(tree, data.X)
    assert views.auc_value == pytest.approx(
        roc_auc_score(data.y, proba[:, 1], sample_weight=data.w), abs=1e-12)
    assert f"AUC = {views.auc_value:.3f}" in views.roc_plot.getPlotItem().titleLabel.text
    precision, recall, f1, _ = precision_recall_fscore_support(
        data.y, tree.predict(data.X), labels=[0, 1], sample_weight=data.w, zero_division=0)
    rows = views.per_class_rows
    assert [r[0] for r in rows] == data.class_names
    np.testing.assert_allclose([r[1] for r in rows], precision, rtol=0, atol=1e-12)
    np.testing.assert_allclose([r[2] for r in rows], recall, rtol=0, atol=1e-12)
    np.testing.assert_allclose([r[3] for r in rows], f1, rtol=0, atol=1e-12)
    np.testing.assert_allclose([r[4] for r in rows], np.bincount(data.y, weights=data.w))
    values = [v for _, v in views.importance_rows]
    assert values == sorted(values, reverse=True) and values[0] > 0
    assert views.importance_rows[0][0] == "late_payments"
    assert {name for name, _ in views.importance_rows} == {f.column for f in data.features}


def test_more_classes_draw_one_class_against_the_rest(views):
    data = three_classes()
    tree = train(data, "greedy", {"depth": 2}).tree
    views.show_model(tree, data.X, data.y, data.w, data.class_names)
    proba = class_probabilities(tree, data.X)
    for k in range(3):
        views.set_positive_class(k)
        assert views.positive_combo.currentIndex() == k
        assert views.auc_value == pytest.approx(
            roc_auc_score(data.y == k, proba[:, k], sample_weight=data.w), abs=1e-12)
        assert "against the rest" in views.roc_plot.getPlotItem().titleLabel.text
    assert views.positive_combo.count() == 3 and views.roc_message == ""
    assert len(views.per_class_rows) == 3


def test_rows_of_one_class_explain_the_missing_curve(views, loans, tmp_path):
    data, tree = loans
    only = data.y == 0
    views.show_model(tree, data.X[only], data.y[only], data.w[only], data.class_names)
    assert views.auc_value is None
    assert views.roc_message == ("A ROC curve needs rows of both sides, and these rows "
                                 "hold no class 'declined'.")
    assert views.roc_stack.currentWidget() is views.roc_explanation
    assert not views.pages["roc"].csv_button.isEnabled()
    with pytest.raises(DataError, match="needs rows of both sides"):
        views.export_csv("roc", tmp_path / "roc.csv")
    assert len(views.per_class_rows) == 2 and views.importance_rows


def test_exports_write_pictures_and_tables(views, loans, tmp_path):
    data, tree = loans
    views.show_model(tree, data.X, data.y, data.w, data.class_names)
    for view in ("per_class", "roc", "importance"):
        path = tmp_path / f"{view}.png"
        views.export_png(view, path)
        image = QImage(str(path))
        assert path.stat().st_size > 1000 and image.width() >= 400 and image.height() >= 80

    views.export_csv("per_class", tmp_path / "per_class.csv")
    rows = read_csv(tmp_path / "per_class.csv")
    assert rows[0] == ["class", "precision", "recall", "f1", "support"]
    assert [r[0] for r in rows[1:]] == data.class_names
    np.testing.assert_allclose(np.array([r[1:] for r in rows[1:]], dtype=float),
                               [r[1:] for r in views.per_class_rows], rtol=1e-15)

    views.export_csv("roc", tmp_path / "roc.csv")
    rows = read_csv(tmp_path / "roc.csv")
    assert rows[0] == ["threshold", "false_positive_rate", "true_positive_rate"]
    curve = np.array(rows[1:], dtype=float)
    assert curve[0].tolist() == [np.inf, 0, 0] and curve[-1, 1:].tolist() == [1, 1]
    assert np.trapezoid(curve[:, 2], curve[:, 1]) == pytest.approx(views.auc_value)

    views.export_csv("importance", tmp_path / "importance.csv")
    rows = read_csv(tmp_path / "importance.csv")
    assert rows[0] == ["column", "importance", "share"]
    assert [(r[0], float(r[1])) for r in rows[1:]] == views.importance_rows
    assert sum(float(r[2]) for r in rows[1:]) == pytest.approx(1.0)

    with pytest.raises(DataError, match="no evaluation view 'tree'"):
        views.export_png("tree", tmp_path / "x.png")


def test_a_binarised_tree_is_shown_on_the_windows_data(views, loans, qtbot):
    """`auto` binarises for Blossom: `show_dataset` finds the tree's own features, and
    scores in a worker, saying so meanwhile."""
    data, _ = loans
    guided = binarized(data, "quantile:4")
    tree = train(guided, "blossom", {"depth": 2}).tree
    views.show_dataset(tree, data)
    # the answer comes through the event loop: until then the views say what is going on
    assert views.auc_value is None
    assert views.pages["per_class"].note.text() == (f"Scoring the model on {data.n_rows:,} "
                                                    "training rows…")
    qtbot.waitUntil(lambda: views.auc_value is not None, timeout=10_000)
    proba = class_probabilities(tree, guided.X)
    assert views.auc_value == pytest.approx(
        roc_auc_score(guided.y, proba[:, 1], sample_weight=guided.w), abs=1e-12)
    assert all(name in {f.column for f in data.features} for name, _ in views.importance_rows)


def test_clear_empties_every_view_and_a_wide_table_is_capped(views, loans, tmp_path):
    data, tree = loans
    views.show_model(tree, data.X, data.y, data.w)
    views.clear("The run was stopped before it had a tree.")
    assert views.auc_value is None and views.per_class_rows == [] == views.importance_rows
    assert views.pages["importance"].note.text() == "The run was stopped before it had a tree."
    assert not any(p.png_button.isEnabled() or p.csv_button.isEnabled()
                   for p in views.pages.values())
    with pytest.raises(DataError, match="empty"):
        views.export_csv("importance", tmp_path / "x.csv")

    wide = three_classes(n=600, columns=40, noise=True)
    tree = train(wide, "greedy", {"depth": 7}).tree
    views.show_model(tree, wide.X, wide.y)
    used = sum(v > 0 for _, v in views.importance_rows)
    assert used > MAX_BARS
    bars = [i for i in views.bar_plot.getPlotItem().items if isinstance(i, pg.BarGraphItem)]
    assert len(bars) == 1 and len(bars[0].opts["width"]) == MAX_BARS
    assert f"The {MAX_BARS} largest of {used} columns" in views.pages["importance"].note.text()


def test_a_tested_column_that_removes_no_error_is_not_called_never_tested(views, loans):
    """A column tested at a node whose sides predict the same class scores 0; the
    note said every column scoring 0 was never tested."""
    from engine.importance import feature_importance
    from engine.splits import rank_splits, split_node

    data, _ = loans
    tree = train(data, "greedy", {"depth": 1}).tree
    root = tree.features[tree.feature[0]].column
    leaf = int(tree.left[0])
    idle = next(c for c in rank_splits(tree, data, leaf).candidates
                if c.worth == 0 and data.features[c.feature].column != root)
    tree = split_node(tree, data, leaf, idle)   # a split that removes no error
    importance = feature_importance(tree, data.X, data.y, data.w)
    column = data.features[idle.feature].column
    assert importance.tested == {root, column}
    assert dict(importance.rows)[column] == 0
    views.show_model(tree, data.X, data.y, data.w, data.class_names)
    note = views.pages["importance"].note.text()
    assert "1 column the model tests removes no error" in note
    never = len({f.column for f in data.features}) - 2
    assert f"{never} columns the model never tests score 0" in note
