"""The analyst's evaluation in the window: the Evaluation tab scores the run on screen
(ROC AUC equal to scikit-learn's), a confusion-matrix cell shows the rows it counts,
and File → Save report writes one self-contained page of the run."""

import base64
import re

import numpy as np
import pytest
from PySide6.QtCore import Qt
from sklearn.metrics import balanced_accuracy_score, roc_auc_score
from test_gui_support import (  # noqa: F401
    LOANS,
    isolated_settings,
    open_window,
    run_and_validate,
    run_and_wait,
)

from engine.data.csv_reader import read_table
from engine.importance import class_probabilities
from gui.evaluation_views import ROWS_HELD_OUT, ROWS_TRAINING
from gui.main_window import TAB_DATA, TAB_EVALUATION


def trained(qtbot, algorithm="greedy", depth=3):
    win = open_window(qtbot, LOANS, algorithm=algorithm)
    win.depth_spin.setValue(depth)
    run_and_wait(qtbot, win)
    return win


def choose_rows(views, which):
    views.rows_combo.setCurrentIndex(views.rows_combo.findData(which))


def test_the_evaluation_tab_scores_the_run_on_screen(qtbot):
    win = open_window(qtbot, LOANS, algorithm="greedy")
    win.depth_spin.setValue(3)
    run_and_validate(qtbot, win)
    views = win.evaluation_views
    assert views.auc_value is None            # not computed until the tab is opened
    win.tabs.setCurrentIndex(TAB_EVALUATION)
    assert views.rows_choice() == ROWS_HELD_OUT   # the figures that matter, first
    choose_rows(views, ROWS_TRAINING)
    qtbot.waitUntil(lambda: views.auc_value is not None, timeout=10_000)   # a worker
    data, tree = win.dataset, win.tree
    proba = class_probabilities(tree, data.X)
    assert views.auc_value == roc_auc_score(data.y, proba[:, 1], sample_weight=data.w)
    assert [row[0] for row in views.per_class_rows] == data.class_names
    assert views.importance_rows[0][1] > 0
    # a second run: the tab follows it at once
    win.depth_spin.setValue(1)
    run_and_validate(qtbot, win)
    win.tabs.setCurrentIndex(TAB_EVALUATION)
    choose_rows(views, ROWS_TRAINING)
    one_split = win.tree
    qtbot.waitUntil(lambda: sum(value > 0 for _, value in views.importance_rows) == 1,
                    timeout=10_000)
    assert one_split.depth == 1
    assert sum(value > 0 for _, value in views.importance_rows) == 1
    win.close()


def test_the_evaluation_views_are_computed_on_the_held_out_rows_and_say_so(qtbot, tmp_path):
    """Issue 46: after a cross-validation the per-class table, ROC, gain and importance
    are the held-out rows' (each split's tree on the rows it did not see)."""
    import csv

    from sklearn.metrics import precision_recall_fscore_support

    win = open_window(qtbot, LOANS, algorithm="greedy")
    win.depth_spin.setValue(3)
    run_and_validate(qtbot, win)
    run = win.current_run
    held = run.evaluation.held_out()
    assert held is not None and len(held.truth) == 600   # every row held out once
    # the held-out predictions are the folds' test confusion matrices, row by row
    matrix = sum(f.test_confusion for f in run.evaluation.folds)
    counted = np.zeros_like(matrix)
    np.add.at(counted, (held.truth, held.predicted), 1)
    assert (counted == matrix).all()
    views = win.evaluation_views
    win.tabs.setCurrentIndex(TAB_EVALUATION)
    assert views.rows_choice() == ROWS_HELD_OUT and views.rows_combo.isVisible()
    assert views.auc_value == pytest.approx(roc_auc_score(held.truth, held.proba[:, 1]),
                                            abs=1e-12)
    precision, recall, _, _ = precision_recall_fscore_support(
        held.truth, held.predicted, labels=[0, 1], zero_division=0)
    np.testing.assert_allclose([r[1] for r in views.per_class_rows], precision)
    np.testing.assert_allclose([r[2] for r in views.per_class_rows], recall)
    note = views.pages["per_class"].note.text()
    assert "held-out rows (5-fold cross-validation)" in note
    assert "held-out rows" in views.pages["importance"].note.text()
    gain = views.gain
    assert gain.taken[0] == 0 and gain.taken[-1] == 1 and gain.gained[-1] == 1
    assert "lift" in views.pages["gain"].note.text()
    out = tmp_path / "gain.csv"
    views.export_csv("gain", out)
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == len(gain.taken) and float(rows[-1]["share_of_rows"]) == 1
    # the training rows on request: a different AUC (the tree saw those rows)
    choose_rows(views, ROWS_TRAINING)
    qtbot.waitUntil(lambda: views.auc_value is not None and
                    "training rows" in views.pages["per_class"].note.text(),
                    timeout=10_000)
    assert views.auc_value != roc_auc_score(held.truth, held.proba[:, 1])
    win.close()


def test_a_confusion_cell_shows_the_rows_it_counts(qtbot):
    win = trained(qtbot, depth=2)
    tree = win.tree
    frame = read_table(LOANS).frame
    truth = tree.prep.labels(frame[tree.prep.target])
    predicted = tree.predict_frame(frame)
    wrong = np.flatnonzero((truth == 0) & (predicted == 1))
    matrix = win.results.train_matrix
    assert matrix.text(0, 1) == f"{len(wrong):,}"
    matrix.table.clicked.emit(matrix.model.index(0, 1))
    qtbot.waitUntil(lambda: win.data_view.node_bar.isVisible(), timeout=10_000)
    preview = win.data_view.preview
    shown = [int(preview.headerData(r, Qt.Vertical)) - 1 for r in range(preview.rowCount())]
    assert shown == wrong.tolist()
    assert win.tabs.currentIndex() == TAB_DATA
    names = tree.class_names
    assert (f"class {names[0]} predicted as {names[1]}"
            in win.data_view.node_label.text())
    assert not win.data_view.copy_rule_button.isVisible()   # a cell has no rule
    win.close()


def test_save_report_writes_one_page_with_the_tree_and_its_rules(qtbot, tmp_path):
    win = trained(qtbot, algorithm="blossom", depth=2)   # a search: a curve to draw
    run = win.current_run
    assert run.incumbents
    path = tmp_path / "report.html"
    assert win.files.save_report(path)
    page = path.read_text(encoding="utf-8")
    assert run.label in page and "<svg" in page
    png = re.search(r'src="data:image/png;base64,([^"]+)"', page)
    assert png and base64.b64decode(png.group(1)).startswith(b"\x89PNG")
    for line in run.tree.edits + tuple(run.class_names):
        assert line in page
    # nothing fetched from elsewhere (the SVG namespace is a name, not a link)
    assert not re.search(r'(src|href)="https?:', page) and "<script" not in page
    assert f"report of run #{run.number}" in win.result_label.text()
    qtbot.waitUntil(lambda: not win.validator.busy, timeout=60_000)
    assert run.evaluation is not None and win.files.save_report(path)
    page = path.read_text(encoding="utf-8")
    assert "<h2>Held-out rows</h2>" in page and "5-fold cross-validation" in page
    win.close()


def test_training_and_test_balanced_accuracy_are_reported(qtbot):
    win = open_window(qtbot, LOANS, algorithm="greedy")
    win.depth_spin.setValue(2)
    box = win.evaluation_box
    box.method_combo.setCurrentIndex(box.method_combo.findData("kfold"))
    run_and_validate(qtbot, win)
    run = win.current_run
    data, tree = win.dataset, win.tree
    train_score = balanced_accuracy_score(data.y, tree.predict(data.X),
                                          sample_weight=data.row_counts)
    summary = " ".join(re.sub("<[^>]+>", " ", win.results.summary_text()).split())
    assert f"Balanced accuracy {100 * train_score:.1f}%" in summary
    test = run.evaluation.test_confusion()
    true, predicted = np.nonzero(test)
    test_score = balanced_accuracy_score(true, predicted, sample_weight=test[true, predicted])
    assert f"Test balanced accuracy {100 * test_score:.1f}%" in summary
    win.close()


def test_a_two_class_cutoff_shows_its_confusion_and_finds_the_cheapest(qtbot):
    """Issue 46: a cutoff for a two-class target, with the confusion matrix and the
    errors' cost there, on the held-out rows."""
    win = open_window(qtbot, LOANS, algorithm="greedy")
    win.depth_spin.setValue(3)
    run_and_validate(qtbot, win)
    views = win.evaluation_views
    win.tabs.setCurrentIndex(TAB_EVALUATION)
    held = win.current_run.evaluation.held_out()
    panel = views.cutoff
    assert not panel.isHidden() and panel.cutoffs is not None
    # it starts where the tree cuts: the matrix is the folds' test confusion matrix
    tp, fp, fn, tn = panel.cutoffs.at(panel.threshold)
    matrix = sum(f.test_confusion for f in win.current_run.evaluation.folds)
    assert (tn, fp, fn, tp) == tuple(matrix.ravel())
    assert "held-out rows" in panel.matrix_label.text()
    # a false negative costing 10 times more moves the cutoff down, and is cheapest
    panel.fn_cost.setValue(10)
    panel.cheapest_button.click()
    cheap = panel.threshold
    assert cheap <= 0.5
    costs = {}
    for t in [float("inf")] + list(np.unique(held.proba[:, 1])):
        called = held.proba[:, 1] >= t
        costs[t] = ((called & (held.truth == 0)).sum()
                    + 10 * (~called & (held.truth == 1)).sum())
    assert costs[cheap] == min(costs.values())
    assert f"cost {costs[cheap]:,}" in panel.matrix_label.text()
    win.close()


def test_an_edited_tree_is_evaluated_on_its_training_rows_and_says_how_to_judge_it(qtbot):
    win = open_window(qtbot, LOANS, algorithm="greedy")
    win.depth_spin.setValue(2)
    run_and_validate(qtbot, win)
    win.analysis.collapse_node(int(win.tree.left[0]))
    edited = win.current_run
    assert edited.evaluation is None
    views = win.evaluation_views
    win.tabs.setCurrentIndex(TAB_EVALUATION)
    assert views.rows_choice() == ROWS_TRAINING and not views.rows_combo.isVisible()
    qtbot.waitUntil(lambda: views.auc_value is not None, timeout=10_000)
    assert "Predict a file judges it" in views.pages["per_class"].note.text()
    assert "edited by hand" in win.results.test_title.text()
    win.close()
