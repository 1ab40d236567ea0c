"""What the figures say (issue 34): axes from 0, a Results tab that scrolls instead
of clipping or widening the window, what `auto` ran and how deep the tree went, row
counts beside class weights, plurals and times a person reads, and hand edits named
by the node's rule rather than an id the window never shows."""

import re

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGroupBox, QLabel, QScrollArea
from test_gui_support import (  # noqa: F401
    LOANS,
    isolated_settings,
    open_window,
    run_and_validate,
    run_and_wait,
)

from engine.data.csv_reader import parse_text, read_table
from engine.data.dataset import PrepOptions, PrepReport
from engine.editing import collapse, node_depth, node_text, resolve_subtree
from engine.errors import ParameterError
from engine.featurize import prepare
from engine.metrics import confusion_matrix
from engine.solvers.auto import choose
from engine.training import train
from gui.confusion_view import WEIGHTED_NOTE
from gui.progress_chart import ProgressChart
from gui.results_panel import HISTORY_COLUMNS, HistoryModel, ResultsPanel, bound_text
from gui.run_report import report_for_run
from gui.runs import RunOutcome, RunRecord
from gui.status_bar import RunFigures

ALGORITHM, DEPTH = HISTORY_COLUMNS.index("Algorithm"), HISTORY_COLUMNS.index("Depth")


def record(data, algorithm="greedy", params=None, settings=None, depth=2, **fields):
    """A RunRecord of `algorithm` trained on `data` at `depth` (`params` as recorded)."""
    result = train(data, algorithm, {"depth": depth})
    matrix = confusion_matrix(data.y, result.tree.predict(data.X), data.n_classes, data.w)
    run = RunRecord.from_outcome(1, RunOutcome(result, matrix), data, algorithm,
                                 params or {"depth": depth}, settings or {}, None)
    for key, value in fields.items():
        setattr(run, key, value)
    return run


@pytest.fixture(scope="module")
def loans():
    return prepare(read_table(LOANS), PrepOptions())


# ------------------------------------------------------------------ chart
def view_range(chart):
    (x0, x1), (y0, y1) = chart.getPlotItem().viewRange()
    return x0, x1, y0, y1


@pytest.mark.parametrize("points", [[(0.0, 0.0, 0.0)], [(0.0, 5.0, 5.0)],
                                    [(0.002, 3.0, 1.0)],
                                    [(0.0, 12.0, 3.0), (0.5, 9.0, 9.0)]])
def test_the_chart_never_shows_negative_times_or_errors(qtbot, points):
    chart = ProgressChart()
    qtbot.addWidget(chart)
    chart.resize(400, 300)
    chart.show()
    chart.show_result("one run", points, points[-1][0], points[-1][1], points[-1][2])
    qtbot.wait(20)
    x0, x1, y0, y1 = view_range(chart)
    assert x0 == 0 and y0 == 0                     # no axis below 0
    assert x1 >= max(p[0] for p in points) and x1 > 0
    assert y1 >= max(p[1] for p in points) and y1 >= 1   # a single point: at least 1 row


# ----------------------------------------------------------- the Results tab
def clipped(panel) -> list[str]:
    """The texts of the panel that do not get the room they need (a scroll area's
    content may be larger than its viewport: it scrolls)."""
    out = []
    for label in panel.findChildren(QLabel):
        if not label.isVisibleTo(panel) or not label.text():
            continue
        if label.wordWrap():
            short = label.height() < label.heightForWidth(label.width()) or \
                label.width() < label.minimumSizeHint().width()
        else:
            short = label.width() < label.sizeHint().width()
        if short:
            out.append(label.text()[:60])
    out += [box.title() for box in panel.findChildren(QGroupBox)
            if box.isVisibleTo(panel) and box.width() < box.minimumSizeHint().width()]
    return out


def test_the_results_tab_scrolls_and_never_widens_the_window(qtbot):
    win = open_window(qtbot, LOANS)
    box = win.evaluation_box
    box.method_combo.setCurrentIndex(box.method_combo.findData("kfold"))
    box.folds_spin.setValue(5)
    run_and_validate(qtbot, win)
    panel = win.results
    win.tabs.setCurrentWidget(panel)
    assert "5-fold cross-validation: test" in panel.summary_text()
    # a 1024-pixel window keeps a ~340-pixel side panel beside the tab
    assert panel.minimumSizeHint().width() <= 650
    for width, height in ((1024, 640), (1280, 720)):
        win.resize(width, height)
        qtbot.wait(50)
        assert win.width() == width, "the Results tab forced the window wider"
        assert clipped(panel) == [], (width, height)
        scroll = panel.summary_label.parentWidget().parentWidget()
        assert isinstance(scroll, QScrollArea) and scroll.widgetResizable()
        if panel.summary_label.height() > scroll.viewport().height():
            assert scroll.verticalScrollBar().maximum() > 0   # the rest is a scroll away
    win.resize(1024, 640)
    qtbot.wait(50)
    scroll = panel.summary_label.parentWidget().parentWidget()
    assert scroll.verticalScrollBar().maximum() > 0   # 13 lines do not fit 640 pixels
    win.close()


def test_the_results_tab_fits_many_classes(qtbot):
    panel = ResultsPanel()
    qtbot.addWidget(panel)
    names = [f"class {k}" for k in range(40)]
    panel.train_matrix.show_matrix(np.arange(1600.0).reshape(40, 40), names)
    panel.test_matrix.show_matrix(np.arange(1600.0).reshape(40, 40), names)
    panel.show()
    qtbot.wait(20)
    smallest = panel.minimumSizeHint()
    assert smallest.width() <= 650 and smallest.height() <= 400


# ------------------------------------------------------------------ history
def test_history_says_what_auto_ran_and_how_deep_the_tree_went(loans):
    model = HistoryModel()
    auto = record(loans, params={"depth": 2}, algorithm="auto")
    assert auto.chosen
    assert model.cell(auto, ALGORITHM) == f"Automatic{auto.chosen_text}"
    assert re.fullmatch(r"Automatic \((ConTree|Blossom)\)", model.cell(auto, ALGORITHM))

    shallow = record(loans, depth=2, params={"depth": 4})
    assert shallow.tree.depth == 2
    assert model.cell(shallow, DEPTH) == "2 (limit 4)"
    exact = record(loans, depth=2)
    assert model.cell(exact, DEPTH) == "2"
    assert model.cell(exact, ALGORITHM) == "Greedy (CART)"
    none = record(loans, depth=2, tree=None)
    assert model.cell(none, DEPTH) == "— (limit 2)"
    assert model.sort_key(shallow, DEPTH) == model.sort_key(exact, DEPTH) == 2


# ------------------------------------------------------------ class weights
def test_weights_are_shown_beside_the_rows(qtbot):
    data = prepare(read_table(LOANS), PrepOptions(class_weight="declined=3"))
    run = record(data, settings={"class_weight": "declined=3"})
    assert run.total_weight != run.n_rows == 600
    panel = ResultsPanel()
    qtbot.addWidget(panel)
    panel.show_run(run)
    summary = panel.summary_text()
    assert "weighted errors of" in summary and "600 rows, weighted by class" in summary
    assert "weighted by class" in panel.train_title.text()
    assert panel.train_matrix.note.text() == WEIGHTED_NOTE
    tip = panel.train_matrix.model.data(panel.train_matrix.model.index(0, 0),
                                        Qt.ToolTipRole)
    assert ": weight " in tip and "rows" not in tip.split(":")[1]

    figures = RunFigures()
    qtbot.addWidget(figures)
    figures.show_run(run)
    assert figures.text("error").startswith("weighted error ")
    assert figures.text("bound").startswith("weighted bound ")
    assert "600 rows, weighted by class" in figures.labels["error"].toolTip()
    figures.set_figures("idle", None, None, None, None)   # the next run unweighted
    assert figures.text("error") == "error —" and "600" not in \
        figures.labels["error"].toolTip()

    page = report_for_run(run, None)
    assert "600 rows, weighted by class" in page and "a cell is its rows" in page


def test_unweighted_figures_count_rows(qtbot, loans):
    run = record(loans)
    panel = ResultsPanel()
    qtbot.addWidget(panel)
    panel.show_run(run)
    assert f"({run.train_error:,.0f} errors of 600)" in panel.summary_text()
    assert panel.train_title.text() == "Training rows"
    assert not panel.train_matrix.note.text()
    tip = panel.train_matrix.model.data(panel.train_matrix.model.index(0, 0),
                                        Qt.ToolTipRole)
    assert re.search(r": [\d,]+ rows? \(", tip)


def test_the_figures_show_no_bound_or_gap_for_greedy_and_no_zero_gap_unproven(
        qtbot, loans):
    """Greedy has no lower bound: "bound 0 · gap 100.0%" said nothing true; and an
    unproven tree's gap rounded to "gap 0.0%" beside "optimal: no"."""
    figures = RunFigures()
    qtbot.addWidget(figures)
    greedy = record(loans, "greedy")
    figures.show_run(greedy)
    assert (figures.text("bound"), figures.text("gap")) == ("bound —", "gap —")
    assert bound_text(greedy) == "none (this algorithm proves no bound)"
    assert HistoryModel().cell(greedy, HISTORY_COLUMNS.index("Lower bound")) == "—"
    exact = record(loans, "contree")
    figures.show_run(exact)
    assert exact.optimal and figures.text("gap") == "gap 0.0%"
    figures.set_figures("time limit reached", 1.0, 2000.0, 1999.5, False)
    assert figures.text("gap") == "gap < 0.1%" and figures.text("optimal") == "optimal: no"
    figures.set_figures("time limit reached", 1.0, 20.0, 10.0, False)
    assert figures.text("gap") == "gap 50.0%"


# ------------------------------------------------------------ plurals, times
def test_the_reason_auto_gives_has_plurals_and_readable_times():
    one = prepare(parse_text("x,class\n" + "".join(f"{k},{'ab'[k % 2]}\n"
                                                      for k in range(12))), PrepOptions())
    algorithm, reason = choose(one, 2, None)
    assert algorithm == "contree"
    assert "12 rows × 1 numeric column in under 0.01 s" in reason
    assert not re.search(r"\d e?[-+]\d|e-\d", reason)


def test_the_preparation_report_counts_in_words():
    one = PrepReport(rows_missing_target=1, rows_missing_values=1, cells_imputed=1,
                     cells_routed=1, redundant_features=1, duplicates_merged=1,
                     inconsistent_dropped=1).lines()
    assert one == ["1 row without a class was dropped.",
                   "1 row with missing values was dropped.",
                   "1 missing cell was filled (median or most frequent value).",
                   "1 missing cell is routed: each test sends it to one side, chosen "
                   "with the tree.",
                   "1 redundant feature was removed.",
                   "1 duplicate row was merged into weights.",
                   "1 row contradicting identical rows of another class was dropped."]
    many = PrepReport(rows_missing_target=1234, cells_routed=3).lines()
    assert many == ["1,234 rows without a class were dropped.",
                    "3 missing cells are routed: each test sends them to one side, "
                    "chosen with the tree."]


# ------------------------------------------------------------------ editing
def test_edits_name_the_node_by_its_rule(loans):
    tree = train(loans, "greedy", {"depth": 3}).tree
    node = int(tree.left[0])
    test = tree.condition(node)
    path = tree.branch_conditions(0)[0]
    assert node_text(tree, 0) == f"the root '{tree.condition(0)}'"
    assert node_text(tree, node) == f"the node '{test}' under '{path}'"
    edited = collapse(tree, node)
    assert edited.edits[-1].startswith(f"collapsed the node '{test}' under '{path}' into a "
                                       "leaf (")
    assert not re.search(r"node \d", edited.edit_note)
    leaf = next(k for k in range(tree.n_nodes) if tree.is_leaf(k))
    assert node_text(tree, leaf).startswith("the leaf under '")
    with pytest.raises(ParameterError, match="already a leaf") as refused:
        collapse(tree, leaf)
    assert not re.search(r"[Nn]ode \d", str(refused.value))
    deepest = max(range(tree.n_nodes), key=lambda k: node_depth(tree, k))
    with pytest.raises(ParameterError, match="no depth is left") as refused:
        resolve_subtree(tree, loans, deepest, node_depth(tree, deepest))
    assert str(refused.value).startswith("The leaf under '")
    out = resolve_subtree(tree, loans, node, 3)
    assert out.name == node_text(tree, node) and out.name in out.summary()
    assert not re.search(r"[Nn]ode \d", out.summary())
