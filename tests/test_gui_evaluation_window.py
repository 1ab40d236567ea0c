"""The analyst's evaluation in the window: the Evaluation tab scores the run on screen
(ROC AUC equal to scikit-learn's), a confusion-matrix cell shows the rows it counts,
and File → Save report writes one self-contained page of the run."""

import base64
import re

import numpy as np
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
from gui.main_window import TAB_DATA, TAB_EVALUATION


def trained(qtbot, algorithm="greedy", depth=3):
    win = open_window(qtbot, LOANS, algorithm=algorithm)
    win.depth_spin.setValue(depth)
    run_and_wait(qtbot, win)
    return win


def test_the_evaluation_tab_scores_the_run_on_screen(qtbot):
    win = trained(qtbot)
    views = win.evaluation_views
    assert views.auc_value is None            # not computed until the tab is opened
    win.tabs.setCurrentIndex(TAB_EVALUATION)
    qtbot.waitUntil(lambda: views.auc_value is not None, timeout=10_000)   # a worker
    data, tree = win.dataset, win.tree
    proba = class_probabilities(tree, data.X)
    assert views.auc_value == roc_auc_score(data.y, proba[:, 1], sample_weight=data.w)
    assert [row[0] for row in views.per_class_rows] == data.class_names
    assert views.importance_rows[0][1] > 0
    # a second run: the tab follows it at once
    win.depth_spin.setValue(1)
    run_and_wait(qtbot, win)
    win.tabs.setCurrentIndex(TAB_EVALUATION)
    one_split = win.tree
    qtbot.waitUntil(lambda: sum(value > 0 for _, value in views.importance_rows) == 1,
                    timeout=10_000)
    assert one_split.depth == 1
    assert sum(value > 0 for _, value in views.importance_rows) == 1
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
