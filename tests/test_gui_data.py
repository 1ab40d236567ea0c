"""Data side of the window: samples, recent files, drag and drop, the preview, column
uses, target / missing values / binarisation, and problems explained in plain words."""

import time

import numpy as np
import pandas as pd
import pytest
from PySide6.QtCore import QMimeData, QPoint, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QApplication, QTableView
from test_gui_support import (  # noqa: F401
    LOAD_TIMEOUT,
    LOANS,
    isolated_settings,
    open_window,
    ready,
    wait_prepared,
    write_people_csv,
)

from engine.data.columns import infer_columns
from engine.data.csv_reader import RawTable
from engine.solvers import get_solver, registry, solver_names
from engine.solvers.greedy import Greedy
from gui import settings as user_settings
from gui.column_model import CATEGORICAL, COL_USE, IGNORE
from gui.main_window import sample_files
from gui.preview_model import MISSING_TEXT, PreviewModel


def binary_solver() -> str:
    names = [n for n in solver_names() if get_solver(n).needs == "binary"]
    if not names:
        pytest.skip("no registered solver needs 0/1 features")
    return names[0]


# ------------------------------------------------------------------ opening
def test_open_a_bundled_sample_from_the_menu(qtbot):
    win = open_window(qtbot)
    actions = {a.text(): a for a in win.sample_menu.actions()}
    assert set(actions) == {p.name for p in sample_files()} and "loans.csv" in actions
    with qtbot.waitSignal(win.prepared, timeout=LOAD_TIMEOUT):
        actions["loans.csv"].trigger()
    wait_prepared(qtbot, win)
    assert win.path.name == "loans.csv" and ready(win)
    assert win.target_combo.currentText() == "decision"
    assert win.data_view.preview.rowCount() == 600
    assert win.data_view.preview.columnCount() == 9
    assert win.columns.rowCount() == 9
    assert "600 rows" in win.data_panel.file_label.text()
    assert f"{win.dataset.n_features:,} features" in win.data_panel.features_label.text()
    assert win.run_button.isEnabled()
    assert user_settings.recent_files() == [str(LOANS.resolve())]


def test_recent_files_are_listed_and_reopen(qtbot, tmp_path, isolated_settings):  # noqa: F811
    people = write_people_csv(tmp_path / "people.csv")
    win = open_window(qtbot, people)
    win.load_path(LOANS)
    qtbot.waitUntil(lambda: ready(win) and win.path == LOANS, timeout=LOAD_TIMEOUT)
    assert user_settings.recent_files() == [str(LOANS.resolve()), str(people.resolve())]
    assert any(p.suffix == ".ini" for p in isolated_settings.rglob("*"))  # isolated
    win._fill_recent_menu()
    entries = [a for a in win.recent_menu.actions() if a.text() == "people.csv"]
    with qtbot.waitSignal(win.prepared, timeout=LOAD_TIMEOUT):
        entries[0].trigger()
    assert win.path == people.resolve() or win.path == people


def test_dropping_a_file_on_the_window_opens_it(qtbot, tmp_path):
    people = write_people_csv(tmp_path / "dropped.csv")
    win = open_window(qtbot)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(people))])
    event = QDropEvent(QPoint(10, 10), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    with qtbot.waitSignal(win.prepared, timeout=LOAD_TIMEOUT):
        win.dropEvent(event)
    assert event.isAccepted() and win.path.name == "dropped.csv"


def test_loading_shows_progress_and_the_row_count(qtbot, tmp_path, monkeypatch):
    path = tmp_path / "big.csv"
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.integers(0, 1000, 50_000),
                          "z": rng.choice(["a", "b", "c"], 50_000),
                          "y": rng.choice(["p", "q"], 50_000)})
    frame.to_csv(path, index=False)
    win = open_window(qtbot)
    stages = []
    original = win.data_panel.show_progress
    monkeypatch.setattr(win.data_panel, "show_progress",
                        lambda text, fraction: (stages.append(text), original(text, fraction)))
    win.load_path(path)
    assert win.loading and not win.open_button.isEnabled()
    assert win.data_panel.progress.isVisibleTo(win)
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    assert any("Typing" in s and "50,000 rows" in s for s in stages), stages
    assert "50,000 rows" in win.data_panel.file_label.text()
    assert not win.data_panel.progress.isVisibleTo(win)


def test_preview_of_200k_rows_is_virtualised(qtbot):
    rows = 200_000
    frame = pd.DataFrame({"id": [str(i) for i in range(rows)],
                          "v": [None if i % 7 == 0 else str(i % 13) for i in range(rows)],
                          "c": ["yes" if i % 3 else "no" for i in range(rows)]})
    raw = RawTable(frame, ",", True, "utf-8", False)
    calls = []

    class Counting(PreviewModel):
        def data(self, index, role=Qt.DisplayRole):
            calls.append(index.row())
            return super().data(index, role)

    started = time.perf_counter()
    model = Counting(raw, infer_columns(frame))
    view = QTableView()
    qtbot.addWidget(view)
    view.verticalHeader().setDefaultSectionSize(22)
    view.setModel(model)
    view.resize(600, 400)
    view.show()
    qtbot.waitExposed(view)
    view.scrollToBottom()
    QApplication.processEvents()
    assert time.perf_counter() - started < 3.0
    assert model.rowCount() == rows
    assert len(set(calls)) < 500          # only rows on screen were asked for
    assert model.data(model.index(0, 1)) == MISSING_TEXT
    assert model.data(model.index(rows - 1, 0)) == str(rows - 1)


# ------------------------------------------------------------------ options
def test_choosing_target_and_binarisation(qtbot):
    win = open_window(qtbot, LOANS)
    assert win.data_panel.binarize() == "none"   # greedy keeps numbers continuous
    continuous = win.dataset
    assert not continuous.is_binary
    assert "continuous" in win.data_panel.features_label.text()

    counts = {}
    for spec in ("quantile:4", "quantile:10", "guided", "midpoints"):
        with qtbot.waitSignal(win.data_ready, timeout=LOAD_TIMEOUT):
            win.data_panel.set_binarize(spec)
        qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
        assert win.dataset.is_binary and win.dataset.prep.binarize == spec
        counts[spec] = win.dataset.n_features
        assert f"{counts[spec]:,} features" in win.data_panel.features_label.text()
        assert "all 0/1" in win.data_panel.features_label.text()
    assert counts["quantile:4"] < counts["quantile:10"] < counts["midpoints"]
    assert counts["quantile:10"] <= counts["guided"] < counts["midpoints"]

    with qtbot.waitSignal(win.data_ready, timeout=LOAD_TIMEOUT):
        win.data_panel.set_target("owns_home")
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    assert win.dataset.prep.target == "owns_home"
    assert win.dataset.class_names == ["no", "yes"]
    assert win.columns.data(win.columns.index(6, COL_USE)) == "target (class)"
    assert win.data_view.preview.headerData(6, Qt.Horizontal).endswith("target")


def test_ignoring_and_forcing_column_kinds(qtbot):
    win = open_window(qtbot, LOANS)
    row = win.columns.names().index("income")
    with qtbot.waitSignal(win.data_ready, timeout=LOAD_TIMEOUT):
        assert win.columns.setData(win.columns.index(row, COL_USE), IGNORE)
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    assert "income" not in {f.column for f in win.dataset.features}
    assert "Column 'income' was ignored (as asked)." in win.data_panel.notes_text()
    assert "ignored" in win.data_view.preview.headerData(row, Qt.Horizontal)

    late = win.columns.names().index("late_payments")
    with qtbot.waitSignal(win.data_ready, timeout=LOAD_TIMEOUT):
        win.columns.setData(win.columns.index(late, COL_USE), CATEGORICAL)
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    # as text values: each value alone, and groups of values (issue 33)
    ops = {f.op for f in win.dataset.features if f.column == "late_payments"}
    assert "=" in ops and ops <= {"=", "in", "missing"}
    # "continuous" is not offered for a text column
    job = win.columns.names().index("job")
    assert not win.columns.setData(win.columns.index(job, COL_USE), "continuous")


def test_missing_value_policies(qtbot):
    win = open_window(qtbot, LOANS)
    assert "missing cells are routed" in win.data_panel.notes_text()
    assert any(f.missing is not None for f in win.dataset.features)
    with qtbot.waitSignal(win.data_ready, timeout=LOAD_TIMEOUT):
        win.data_panel.set_missing("impute")
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    assert "missing cells were filled" in win.data_panel.notes_text()
    assert all(f.missing is None for f in win.dataset.features)
    with qtbot.waitSignal(win.data_ready, timeout=LOAD_TIMEOUT):
        win.data_panel.set_missing("drop")
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    assert win.dataset.n_rows < 600
    assert "rows with missing values were dropped" in win.data_panel.notes_text()
    with qtbot.waitSignal(win.data_ready, timeout=LOAD_TIMEOUT):
        win.data_panel.set_missing("indicator")
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    assert any(f.op == "missing" for f in win.dataset.features)


def test_binary_only_solver_switches_binarisation_and_says_so(qtbot):
    name = binary_solver()
    win = open_window(qtbot, LOANS, algorithm="greedy")
    assert win.data_panel.binarize() == "none" and not win.dataset.is_binary
    with qtbot.waitSignal(win.data_ready, timeout=LOAD_TIMEOUT):
        win.set_algorithm(name)
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    assert win.data_panel.binarize() == "guided" and win.dataset.is_binary
    assert "needs 0/1 features, so binarisation was switched" in win.data_panel.notes_text()
    description = win.algo_panel.description.text()
    assert "Needs 0/1 features" in description and "proves optimality" in description


# ----------------------------------------------------------------- problems
def test_a_single_class_is_explained_and_blocks_running(qtbot, tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("a,b,label\n" + "".join(f"{i % 5},{i % 3},same\n" for i in range(30)))
    win = open_window(qtbot)
    win.load_path(path)
    wait_prepared(qtbot, win)
    assert win.dataset is None and win.raw is not None
    assert "single class" in win.data_panel.problems_text()
    assert not win.run_button.isEnabled()
    assert win._message_box is None  # a problem to fix in the panel, not a failed load
    with qtbot.waitSignal(win.data_ready, timeout=LOAD_TIMEOUT):
        win.data_panel.set_target("b")   # a usable target fixes it
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    assert win.data_panel.problems_text() == "" and win.run_button.isEnabled()


def test_no_usable_column_is_explained(qtbot, tmp_path):
    path = tmp_path / "const.csv"
    path.write_text("k,y\n" + "".join(f"1,{'ab'[i % 2]}\n" for i in range(30)))
    win = open_window(qtbot)
    win.load_path(path)
    wait_prepared(qtbot, win)
    assert "No usable feature column" in win.data_panel.problems_text()


class FakeSat(Greedy):
    name = "sat-test"
    title = "SAT (test)"
    summary = "Stands in for a SAT solver."


def test_inconsistent_rows_are_a_problem_for_sat_and_a_note_otherwise(qtbot, tmp_path,
                                                                      monkeypatch):
    monkeypatch.setitem(registry._SOLVERS, FakeSat.name, FakeSat)
    path = tmp_path / "clash.csv"
    path.write_text("a,b,y\n" + "".join(f"{i % 4},{i % 2},{'pq'[i % 3 == 0]}\n"
                                        for i in range(40)))
    win = open_window(qtbot, path)
    assert win.prep.inconsistent > 0
    count = f"{win.prep.inconsistent:,} rows have the same features"
    assert count in win.data_panel.notes_text()
    assert "unavoidable" in win.data_panel.notes_text()
    assert win.data_panel.problems_text() == ""
    win.set_algorithm(FakeSat.name)
    assert count in win.data_panel.problems_text()
    assert "Drop rows contradicting identical rows" in win.data_panel.problems_text()
    with qtbot.waitSignal(win.data_ready, timeout=LOAD_TIMEOUT):
        win.data_panel.drop_inconsistent_check.setChecked(True)
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    assert win.prep.inconsistent == 0 and win.data_panel.problems_text() == ""


@pytest.mark.parametrize("content", [b"a,b,c\n1,2\n3,4,5\n6\n", b"\x00\x01\x02garbage" * 20,
                                     b""])
def test_a_bad_csv_shows_an_error_dialog(qtbot, tmp_path, content):
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    win = open_window(qtbot)
    win.load_path(path)
    qtbot.waitUntil(lambda: win.last_error is not None, timeout=LOAD_TIMEOUT)
    box = win._message_box
    assert box is not None and box.isVisible()
    assert box.text() == win.last_error and win.last_error.endswith(".")
    assert "Traceback" not in box.text()
    assert win.dataset is None and not win.loading and not win.run_button.isEnabled()
    assert win.open_button.isEnabled()


# ------------------------------------------------------- smarter data defaults
def test_an_identifier_column_is_left_out_with_its_reason_and_can_be_kept(qtbot, tmp_path):
    """Issue 45: a registration (a few rows a value, nothing learnt on held-out rows)
    is left out by the preparation, and the column table, the preview and the notes
    say so; choosing it as categorical keeps it."""
    from big_tables import mixed_tables
    path = tmp_path / "transport.csv"
    mixed_tables().make("transport", 3000, seed=3).to_csv(path, index=False)
    win = open_window(qtbot, path)
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    row = win.columns.names().index("reg")
    assert win.columns.data(win.columns.index(row, COL_USE)) == \
        "ignored: it looks like an identifier (auto)"
    assert "--categorical reg" in win.columns.data(win.columns.index(row, COL_USE),
                                                   Qt.ToolTipRole)
    assert win.data_view.preview.headerData(row, Qt.Horizontal) == \
        "reg\nignored: identifier-like"
    assert "Column 'reg' was ignored (it looks like an identifier" in \
        win.data_panel.notes_text()
    assert "reg" not in {c.name for c in win.dataset.prep.columns}
    with qtbot.waitSignal(win.data_ready, timeout=LOAD_TIMEOUT):
        win.columns.set_choice("reg", CATEGORICAL)
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    assert "reg" in {c.name for c in win.dataset.prep.columns}
    assert win.columns.data(win.columns.index(row, COL_USE)) == "categorical"
    assert "'reg' was ignored" not in win.data_panel.notes_text()


def test_a_nearly_unique_name_column_is_ignored_with_its_reason(qtbot, tmp_path):
    from test_data_defaults import NEARLY, animals_csv
    path = tmp_path / "animals.csv"
    path.write_text(animals_csv())
    win = open_window(qtbot, path)
    row = win.columns.names().index("name")
    assert win.columns.data(win.columns.index(row, COL_USE)) == f"ignored: {NEARLY} (auto)"
    assert NEARLY in win.columns.data(win.columns.index(row, COL_USE), Qt.ToolTipRole)
    assert win.data_view.preview.headerData(row, Qt.Horizontal) == "name\nignored: id-like"
    assert f"Column 'name' was ignored ({NEARLY})." in win.data_panel.notes_text()
    assert "name" not in {c.name for c in win.dataset.prep.columns}
    with qtbot.waitSignal(win.data_ready, timeout=LOAD_TIMEOUT):
        win.columns.set_choice("name", CATEGORICAL)      # the user knows better
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    assert "name" in {c.name for c in win.dataset.prep.columns}
    assert win.columns.data(win.columns.index(row, COL_USE)) == "categorical"


def as_classes(qtbot, win) -> None:
    """Predict a class, whatever the target holds (a price of 120 values is otherwise
    a regression's)."""
    with qtbot.waitSignal(win.data_ready, timeout=LOAD_TIMEOUT):
        win.data_panel.set_task("classification")
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)


def test_a_target_with_120_classes_is_asked_about_and_use_it_proceeds(qtbot, tmp_path):
    from test_data_defaults import price_csv
    from test_gui_support import run_and_wait
    win = open_window(qtbot, price_csv(tmp_path / "price.csv"))
    assert win.dataset.regression   # by default: a number to predict (issue 47)
    as_classes(qtbot, win)
    question = ("The class column 'price' has 120 different numbers; is it really the "
                "class?")
    assert win.data_panel.target_question_text() == question
    assert win.data_panel.target_question.isVisible()
    assert question in win.result_label.text()
    assert win.run_button.isEnabled()     # asking blocks nothing
    win.data_panel.use_target_button.click()
    assert win.data_panel.target_question_text() == ""
    assert "Data ready" in win.result_label.text()
    # asked once per file and target: preparing again does not ask again
    with qtbot.waitSignal(win.data_ready, timeout=LOAD_TIMEOUT):
        win.data_panel.set_missing("drop")
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    assert win.data_panel.target_question_text() == ""
    result = run_and_wait(qtbot, win)
    assert result is not None and win.results.runs[-1].data_settings["target"] == "price"
    assert win.dataset.n_classes == 120


def test_choose_another_target_opens_the_list_and_a_fine_target_asks_nothing(qtbot,
                                                                             tmp_path):
    from test_data_defaults import price_csv
    from test_gui_support import run_and_wait
    win = open_window(qtbot, price_csv(tmp_path / "price.csv"))
    as_classes(qtbot, win)
    assert win.data_panel.target_question_text()
    win.data_panel.other_target_button.click()
    assert win.target_combo.view().isVisible()          # the list of columns is open
    win.target_combo.hidePopup()
    with qtbot.waitSignal(win.data_ready, timeout=LOAD_TIMEOUT):
        win.data_panel.set_target("size")
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    assert win.dataset.prep.target == "size"
    assert win.data_panel.target_question_text() == ""
    assert not win.data_panel.target_question.isVisible()
    # back to price: not answered yet, so asked again; Run counts as "Use it"
    with qtbot.waitSignal(win.data_ready, timeout=LOAD_TIMEOUT):
        win.data_panel.set_target("price")
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    assert "'price' has 120" in win.data_panel.target_question_text()
    run_and_wait(qtbot, win)
    assert win.data_panel.target_question_text() == ""


def test_a_cp4im_file_opens_with_its_first_column_as_target(qtbot, datasets_dir):
    win = open_window(qtbot, datasets_dir / "cp4im" / "zoo-1.txt")
    assert win.target_combo.currentText() == "col1"
    assert win.dataset.prep.target == "col1" and win.dataset.n_classes == 2
    assert win.data_panel.target_question_text() == ""
    other = open_window(qtbot, LOANS)           # a CSV with a header: unchanged
    assert other.target_combo.currentText() == "decision"


def test_a_depth_change_prepares_the_value_groups_again(qtbot, tmp_path):
    """A text column's value groups include those the greedy tree of the chosen depth
    splits on: after a depth change the window's features are a fresh open's, whatever
    the binarisation (they were kept with ConTree's continuous features, and a run then
    proved a worse tree optimal on them)."""
    from big_tables import mixed_tables

    from engine.data.csv_reader import read_table
    from engine.featurize import prepare

    path = tmp_path / "transport.csv"
    mixed_tables().make("transport", 2000, 0).to_csv(path, index=False)
    win = open_window(qtbot, path, algorithm="contree")
    assert not win.data_panel.binarize().startswith("guided")
    win.depth_spin.setValue(2)
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    shallow = list(win.dataset.prep.features)
    win.depth_spin.setValue(4)
    assert win.preparing or win.dataset is None   # stale: never run on as it is
    qtbot.waitUntil(lambda: ready(win), timeout=LOAD_TIMEOUT)
    fresh = prepare(read_table(path), win.data.prep_options())
    assert list(win.dataset.prep.features) == list(fresh.prep.features) != shallow
