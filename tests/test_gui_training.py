"""Training from the window: blossom to completion, the live view, Stop, closing
during a solve, the parameter form, the JIT warm-up, hover, and run errors."""

import gc
import threading
import time

import numpy as np
import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QLineEdit, QSpinBox
from test_gui_render import full_tree
from test_gui_support import (  # noqa: F401
    LOAD_TIMEOUT,
    LOANS,
    RUN_TIMEOUT,
    cp4im_files,
    isolated_settings,
    open_window,
    ready,
    one_tree_then_wait,
    run_and_wait,
    slow_anytime_train,
)

import gui.runs
from engine.errors import DataError
from engine.model.tree import Tree
from engine.solvers import get_solver, solver_names
from engine.solvers.protocol import Status
from gui.tree_scene import NodeItem, class_colour, fewer_values
from gui.tree_view import TreeView


def require(name: str) -> None:
    if name not in solver_names():
        pytest.skip(f"the '{name}' solver is not registered yet")


def nodes_on_screen(win):
    scene = win.view.tree_scene()
    return [item for item in scene.items() if isinstance(item, NodeItem)]


# -------------------------------------------------------------- blossom run
def test_blossom_runs_to_completion_and_the_view_shows_its_nodes(qtbot):
    require("blossom")
    win = open_window(qtbot, LOANS, algorithm="blossom")
    assert win.data_panel.binarize() == "guided" and win.dataset.is_binary
    win.depth_spin.setValue(3)
    result = run_and_wait(qtbot, win)
    assert result is not None and result.status == Status.OPTIMAL and result.optimal
    tree = result.tree
    qtbot.waitUntil(lambda: win.view.tree is tree, timeout=5000)
    items = {item.node: item for item in nodes_on_screen(win)}
    assert len(items) == tree.n_nodes > 1
    for node, item in items.items():
        if tree.is_leaf(node):
            assert item.leaf_class == tree.label[node]
            assert item.title == tree.class_names[tree.label[node]]
        else:
            # the test as it reads, a value group with fewer whole values (or their
            # count), or the shortest of those elided in its middle to fit the box
            full = tree.condition(node, True)
            shorter = fewer_values(full)
            head, _, tail = item.title.partition("…")
            last = shorter[-1] if shorter else full
            assert item.leaf_class is None and (
                item.title in [full, *shorter]
                or last.startswith(head) and last.endswith(tail))
        assert item.subtitle.split()[-1] in ("rows", "row")
    run = win.current_run
    assert run.optimal and run.train_error == result.train_error
    assert win.figures.text("optimal") == "optimal: yes"
    assert win.figures.text("gap") == "gap 0.0%"
    assert "optimal" in win.result_label.text() and "accuracy" in win.result_label.text()
    assert win.results.history.rowCount() == 1
    # Stop stays for the accuracy on new rows, estimated after the tree is shown
    assert not win.running and win.run_button.isEnabled()
    assert win.stop_button.isEnabled() == win.validator.estimating
    qtbot.waitUntil(lambda: not win.validator.busy, timeout=RUN_TIMEOUT)
    assert not win.stop_button.isEnabled() and "new rows" in win.figures.text("new_rows")


# ----------------------------------------------------------------- long Stop
def long_run_solver() -> tuple[str, int]:
    """`dl85` when it exists; until then `blossom` at depth 10 (see the test below)."""
    if "dl85" in solver_names():
        return "dl85", 10
    require("blossom")
    return "blossom", 10


def largest_cp4im_set():
    """The CP4IM set with the most binary features: splice-1 (3190 rows x 287).

    pendigits has more rows, but at depth 10 its classes separate and blossom proves
    the optimum within a second, so it makes no long run.
    """
    files = cp4im_files()
    if not files:
        pytest.skip("the shared CP4IM datasets are absent")
    widths = {p: len(p.open().readline().split()) for p in files}
    return max(files, key=lambda p: widths[p])


def test_stop_during_a_long_run_returns_within_a_second(qtbot):
    # The issue asks for `dl85`; it is not registered yet (a later issue), so the test
    # runs blossom at depth 10 on the largest CP4IM set, and switches to dl85 by itself.
    algorithm, depth = long_run_solver()
    win = open_window(qtbot, largest_cp4im_set(), algorithm=algorithm)
    # a CP4IM file: its first column is the class, found without being told
    assert win.target_combo.currentText() == win.target_combo.itemText(0)
    assert win.dataset.prep.target == win.target_combo.itemText(0)
    win.depth_spin.setValue(depth)
    win.time_spin.setValue(0)          # no limit: only Stop ends it
    win.run_button.click()
    # a new depth re-prepares the data first (guided thresholds: a cold kernel cache
    # compiles the greedy kernel), and the run starts when it is ready
    qtbot.waitUntil(lambda: win.running, timeout=60_000)
    qtbot.wait(1500)                   # well into the search (kernel compiled, searching)
    assert win.running, "the run ended by itself: it is not a long run"
    with qtbot.waitSignal(win.run_ended, timeout=10_000) as ended:
        started = time.monotonic()
        win.stop_button.click()
    latency = time.monotonic() - started
    assert latency < 1.0, f"Stop took {latency:.2f} s"
    result = ended.args[0]
    assert result is not None and result.status == Status.CANCELLED
    assert result.tree is not None and win.current_run.status == "cancelled"
    assert "stopped" in win.result_label.text()


# ------------------------------------------------------------ live and close
def test_live_incumbents_are_drawn_throttled_with_chart_and_clock(qtbot, tmp_path,
                                                                  monkeypatch):
    monkeypatch.setattr(gui.runs, "train", slow_anytime_train)   # 100 incumbents / s
    win = open_window(qtbot, LOANS)
    shown = []
    win.view.tree_shown.connect(lambda tree: shown.append(time.monotonic()))
    win.run_button.click()
    qtbot.wait(1600)
    assert win.running and "best so far" in win.result_label.text()
    assert 3 <= len(shown) <= 1.6 * 5 + 2          # at most five redraws a second
    assert len(win.chart.points) > 50               # every incumbent is on the curve
    elapsed = float(win.figures.text("elapsed").split()[0])
    assert 1.0 < elapsed < 3.0
    assert win.figures.text("status") == "running"
    assert win.figures.text("error").startswith("error ")
    with qtbot.waitSignal(win.run_ended, timeout=5000):
        win.stop_button.click()
    assert win.current_run.status == "cancelled"


def test_a_runs_first_tree_is_drawn_as_soon_as_it_arrives(qtbot, monkeypatch):
    """Issue 49: the first tree waited for the live redraw's 200 ms timer, two thirds
    of the 0.3 s a first tree may take from Run; later trees stay throttled."""
    monkeypatch.setattr(gui.runs, "train", one_tree_then_wait)
    win = open_window(qtbot, LOANS)
    win.time_spin.setValue(0)
    win.run_button.click()
    qtbot.waitUntil(lambda: "best so far" in win.result_label.text(), timeout=10_000)
    assert win.view.tree is not None and win.view.tree.n_leaves == 1
    with qtbot.waitSignal(win.run_ended, timeout=5000):
        win.stop_button.click()


def test_time_limit_stops_the_run(qtbot, monkeypatch):
    monkeypatch.setattr(gui.runs, "train", slow_anytime_train)
    win = open_window(qtbot, LOANS)
    win.time_spin.setValue(1)
    result = run_and_wait(qtbot, win, timeout=10_000)
    assert result.status == Status.TIME_LIMIT
    assert "time limit" in win.result_label.text()


def test_closing_during_a_solve_stops_it_cleanly(qtbot, monkeypatch):
    monkeypatch.setattr(gui.runs, "train", slow_anytime_train)
    win = open_window(qtbot, LOANS)
    win.time_spin.setValue(0)  # no limit: only closing can stop it
    before = {t.name for t in threading.enumerate()}
    win.run_button.click()
    qtbot.wait(300)
    worker = win.runner.worker
    assert worker is not None and worker.is_running()
    ended = []
    win.run_ended.connect(ended.append)
    started = time.monotonic()
    assert win.close()
    assert time.monotonic() - started < 2
    assert worker.wait(0) and not worker.is_running()
    assert not win.running and ended == []          # nothing touched the closed window
    qtbot.waitUntil(lambda: {t.name for t in threading.enumerate()} <= before | {"Dummy"},
                    timeout=3000)


def test_closing_during_a_real_greedy_solve(qtbot, tmp_path):
    win = open_window(qtbot, LOANS)
    win.depth_spin.setValue(12)   # the text columns' value groups are prepared again
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    win.run_button.click()
    worker = win.runner.worker
    started = time.monotonic()
    win.close()
    assert time.monotonic() - started < 5 and worker.wait(0)


# -------------------------------------------------------- picker and the form
def test_algorithm_picker_describes_each_solver(qtbot):
    win = open_window(qtbot)
    assert win.algorithm_combo.count() == len(solver_names())
    for name in solver_names():
        solver = get_solver(name)
        win.set_algorithm(name)
        text = win.algo_panel.description.text()
        assert solver.summary.split(",")[0] in text.replace("&#x27;", "'")
        assert ("Needs 0/1 features" if solver.needs == "binary" else "Any data") in text
        assert ("proves optimality" if solver.proves_optimality else "heuristic") in text


def test_parameter_form_is_built_from_the_schema(qtbot):
    win = open_window(qtbot)
    kinds = {"int": QSpinBox, "float": QDoubleSpinBox, "bool": QCheckBox,
             "choice": QComboBox, "text": QLineEdit}
    for name in solver_names():
        win.set_algorithm(name)
        params = [p for p in get_solver(name).params if p.name != "depth"]
        editors = win.algo_panel.form.editors
        assert list(editors) == [p.name for p in params]
        for p in params:
            assert isinstance(editors[p.name], kinds[p.kind])
            assert editors[p.name].toolTip() == p.help
        assert get_solver(name).resolve(win.params()) == win.params() | {
            k: v for k, v in get_solver(name).resolve({}).items() if k not in win.params()}
    win.set_algorithm("greedy")
    win.algo_panel.form.editors["min_leaf"].setValue(7.0)
    win.depth_spin.setValue(4)
    assert win.params() == {"min_leaf": 7.0, "leaf_cost": 0.0, "depth": 4}
    other = next((n for n in solver_names() if n != "greedy"), None)
    if other:
        win.set_algorithm(other)
        win.set_algorithm("greedy")
        assert win.params()["min_leaf"] == 7.0      # remembered per algorithm


def test_form_values_reach_the_solver(qtbot):
    win = open_window(qtbot, LOANS)
    win.algo_panel.form.editors["min_leaf"].setValue(40.0)
    win.depth_spin.setValue(4)
    result = run_and_wait(qtbot, win)
    leaves = result.tree.value[result.tree.feature < 0].sum(axis=1)
    assert leaves.min() >= 40 and result.tree.depth <= 4
    assert win.current_run.params == {"min_leaf": 40.0, "leaf_cost": 0.0, "depth": 4}


# ------------------------------------------------------------------ warm-up
def test_warm_up_runs_in_the_background_with_a_visible_status(qtbot):
    win = open_window(qtbot, warm_up=True)
    with qtbot.waitSignal(win.warmed_up, timeout=RUN_TIMEOUT) as done:
        assert "compiling solvers" in win.figures.text("warmup")  # shown at once
    report = done.args[0]
    assert set(report.timings) == set(solver_names()) and not report.errors
    assert win.figures.text("warmup").startswith("solvers ready")


# -------------------------------------------------------------------- hover
def test_hovering_a_node_highlights_its_path(qtbot):
    win = open_window(qtbot, LOANS)
    win.depth_spin.setValue(3)
    result = run_and_wait(qtbot, win)
    tree = result.tree
    qtbot.waitUntil(lambda: win.view.tree is tree, timeout=5000)
    scene = win.view.tree_scene()
    leaf = max((n for n in range(tree.n_nodes) if tree.is_leaf(n)),
               key=lambda n: len(scene.path_to(n)))
    path = scene.path_to(leaf)
    assert path[0] == 0 and path[-1] == leaf and len(path) >= 3
    scene.hover_node(leaf)
    assert scene.highlighted_nodes() == sorted(path)
    assert sum(e.highlighted for e in scene.edge_items) == len(path) - 1
    text = win.path_label.text()
    for condition in scene.path_conditions(leaf):
        assert condition in text
    assert tree.class_names[tree.label[leaf]] in text
    scene.hover_node(None)
    assert scene.highlighted_nodes() == [] and "Hover" in win.path_label.text()
    # the real mouse: entering a leaf's box highlights the same path
    item = scene.node_items[leaf]
    win.view.centerOn(item)
    qtbot.mouseMove(win.view.viewport(),
                    win.view.mapFromScene(item.sceneBoundingRect().center()))
    qtbot.waitUntil(lambda: scene.hovered_node == leaf, timeout=2000)
    assert scene.highlighted_nodes() == sorted(path)
    assert "Split" in scene.node_items[0].toolTip()


def test_leaves_are_coloured_by_class(qtbot):
    win = open_window(qtbot, LOANS)
    result = run_and_wait(qtbot, win)
    qtbot.waitUntil(lambda: win.view.tree is result.tree, timeout=5000)
    for item in nodes_on_screen(win):
        if item.is_leaf:
            assert item._pen.color().name() == class_colour(item.leaf_class).darker(125).name()


# ------------------------------------------------------- large trees, no stall
def test_a_2047_node_tree_is_drawn_without_stalling_the_event_loop(qtbot):
    view = TreeView()
    qtbot.addWidget(view)
    view.resize(900, 600)
    view.show()
    tree = full_tree(10)
    gc.collect()   # the garbage of the tests before is not the view's stall
    ticks = []
    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    with qtbot.waitSignal(view.tree_shown, timeout=10_000):
        view.show_tree(tree)
        assert view.is_building and view.tree is None   # old drawing stays meanwhile
    timer.stop()
    gaps = np.diff(ticks)
    assert len(nodes_on_screen_view(view)) == 2047
    # 1% of the gaps may exceed 50 ms, and one at least (the build lasts about a
    # hundred ticks, where a 99th percentile is the largest gap but one), none 100 ms
    slow = int((gaps > 0.05).sum())
    assert slow <= max(1, len(gaps) // 100) and gaps.max() < 0.1, (slow, len(gaps), gaps.max())


def nodes_on_screen_view(view):
    return [i for i in view.tree_scene().items() if isinstance(i, NodeItem)]


# ------------------------------------------------------------------ errors
def test_a_solver_error_becomes_a_dialog(qtbot, monkeypatch):
    def failing(*args, **kwargs):
        raise DataError("The solver could not use these data.")

    monkeypatch.setattr(gui.runs, "train", failing)
    win = open_window(qtbot, LOANS)
    assert run_and_wait(qtbot, win) is None
    assert win.last_error == "The solver could not use these data."
    assert win._message_box.isVisible() and win.run_button.isEnabled()


def test_an_unexpected_solver_crash_becomes_a_dialog(qtbot, monkeypatch, capsys):
    def crashing(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(gui.runs, "train", crashing)
    win = open_window(qtbot, LOANS)
    assert run_and_wait(qtbot, win) is None
    assert win.last_error.startswith("Unexpected error:")
    assert win._message_box.isVisible()


def test_an_untouched_depth_follows_the_algorithm_default(qtbot):
    """SAT solvers search depths up to 10; a depth the user chose is kept."""
    win = open_window(qtbot)
    win.set_algorithm("blossom")
    assert win.depth_spin.value() == 3
    win.set_algorithm("sat-depth")
    assert win.depth_spin.value() == get_solver("sat-depth").param("depth").default == 10
    win.set_algorithm("blossom")
    assert win.depth_spin.value() == 3
    win.depth_spin.setValue(5)
    win.set_algorithm("sat-size")
    assert win.depth_spin.value() == 5


def test_a_binarisation_orchard_chose_follows_the_algorithm(qtbot):
    """guided chosen automatically for blossom becomes midpoints for a SAT solver
    (coarse bins make contradicting rows), and back."""
    win = open_window(qtbot)
    win.set_algorithm("greedy")
    win.data_panel.set_binarize("none")
    win.set_algorithm("blossom")
    assert win.data_panel.binarize() == "guided"
    win.set_algorithm("sat-depth")
    assert win.data_panel.binarize() == "midpoints"
    win.set_algorithm("blossom")
    assert win.data_panel.binarize() == "guided"


def test_the_default_algorithm_at_depth_5_on_numbers_shows_a_blossom_tree(qtbot, tmp_path):
    """`auto` beyond depth 3 runs Blossom on thresholds it made itself; the window gets
    the tree on the file's own numeric columns (it once crashed on them)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(600, 4)).round(3)
    y = (X[:, 0] + 0.5 * X[:, 1] * X[:, 2] > 0).astype(int)
    path = tmp_path / "numbers.csv"
    lines = ["w,x,v,z,class"] + [",".join(map(str, row)) + f",{c}" for row, c in zip(X, y)]
    path.write_text("\n".join(lines) + "\n")
    win = open_window(qtbot, path, algorithm=None)
    assert win.algorithm() == "auto" and win.data_panel.binarize() == "none"
    win.depth_spin.setValue(5)
    result = run_and_wait(qtbot, win)
    assert result is not None, win.last_error
    run = win.current_run
    assert run.chosen == "blossom" and "Blossom" in run.label
    assert result.tree.prep is win.dataset.prep
    qtbot.waitUntil(lambda: win.view.tree is result.tree, timeout=5000)
    assert len(nodes_on_screen(win)) == result.tree.n_nodes > 1
    assert result.tree.error(win.dataset.X, win.dataset.y) == run.train_error


def test_a_failed_run_spends_its_number_and_leaves_no_tree_on_screen(qtbot, monkeypatch):
    def failing(data, algorithm, params=None, time_limit=None, monitor=None, **_):
        counts = np.bincount(data.y, minlength=data.n_classes).astype(float)
        monitor.publish(Tree.leaf(counts, data.prep), 1.0, 0.0)
        time.sleep(0.3)   # the live tree reaches the screen
        raise ZeroDivisionError("division by zero")

    win = open_window(qtbot, LOANS)
    first = run_and_wait(qtbot, win)
    assert first is not None and win.current_run.number == 1
    monkeypatch.setattr(gui.runs, "train", failing)
    assert run_and_wait(qtbot, win) is None
    assert win.tree is None and win.view.tree is None
    assert win.last_error.startswith("Unexpected error")
    assert "#2" in win.results.summary_text() and "failed" in win.results.summary_text()
    monkeypatch.undo()
    assert run_and_wait(qtbot, win) is not None
    assert win.current_run.number == 3


# -------------------------------------------------------------- hybrid run
def test_a_hybrid_run_says_in_its_chart_which_levels_are_proven(qtbot, tmp_path):
    """Issue 45: a tree searched exactly only at its top says so where its curve is
    shown, and keeps saying it when the run is selected again after another.  (On this
    table the hybrid beats the greedy tree; ConTree proves its depth-2 top.)"""
    from big_tables import mixed_tables
    path = tmp_path / "transport.csv"
    mixed_tables().make("transport", 3000, seed=3).to_csv(path, index=False)
    win = open_window(qtbot, path, algorithm="hybrid")
    win.depth_spin.setValue(6)
    win.time_spin.setValue(0)
    win.algo_panel.form.set_values({"exact_depth": 2})
    result = run_and_wait(qtbot, win)
    assert result is not None and result.stats["chosen_algorithm"] == "contree"
    expected = "top 2 levels proven optimal, greedy below"
    hybrid = win.current_run
    assert expected in win.chart.title and hybrid.certified == expected
    win.set_algorithm("greedy")
    run_and_wait(qtbot, win)
    assert "levels" not in win.chart.title
    win.display.show_run(hybrid)
    assert expected in win.chart.title


def test_the_chart_s_words_for_a_partly_searched_tree():
    from gui.runs import certified_text
    hybrid = {"exact_depth": 3, "certified_depth": 3, "chosen_algorithm": "contree"}
    assert certified_text(hybrid, {"depth": 8}) == \
        "top 3 levels proven optimal, greedy below"
    assert certified_text({**hybrid, "certified_depth": 0}, {"depth": 8}) == \
        "top 3 levels exact, not proven, greedy below"
    assert certified_text(hybrid, {"depth": 3}) == ""          # searched whole
    # the greedy tree kept, by hybrid or by auto running it (auto names itself)
    kept = {**hybrid, "certified_depth": 0, "greedy_kept": True}
    assert certified_text({**kept, "chosen_algorithm": "hybrid"}, {"depth": 8}) == ""
    assert certified_text({}, {"depth": 8}) == ""               # any other solver
