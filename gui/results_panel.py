"""The Results tab: the chosen run's figures and confusion matrices, and the history.

The history lists every run of the session, one row each (its data file included),
so algorithms, settings and files can be compared side by side; clicking a header
sorts it.  Selecting one row shows that run everywhere (tree, curve, figures, status
bar); selecting several overlays their curves while the tree and figures show the
row clicked last; double-clicking one shows its tree (and makes it the one exported).
"""

from __future__ import annotations

import html
import math

from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from engine.data.features import format_count, format_number
from engine.metrics import matrix_balanced_accuracy
from gui.confusion_view import ConfusionView
from gui.fit_plot import FitPlots
from engine.solvers import get_solver
from gui.models import is_model, kind_name, size_text
from gui.runs import RunRecord

HINT_COLOUR = "#505863"
LOSS_COLOUR = "#b42318"   # a tree losing to a baseline on held-out rows


def percent(value: float | None) -> str:
    return "—" if value is None or math.isnan(value) else f"{100 * value:.1f}%"


# The summary's row of held-out figures (accuracy, or a regression's R² and errors)
TEST_ROW = "Test accuracy"
MATRICES_TITLE = "Confusion matrices (rows: true class)"
FIT_TITLE = "Fit of the tree (a regression: no confusion matrix)"


def score_text(run: RunRecord, value: float | None) -> str:
    """A run's accuracy as a percentage, or a regression's R² ("R² 0.912")."""
    if not run.regression:
        return percent(value)
    return "—" if value is None or math.isnan(value) else f"R² {value:.3f}"


def baseline_rows(ev) -> list[tuple[str, str]]:
    """The baselines an evaluation scored on the same held-out rows, as summary rows
    (the Results tab's and the report's); a regression's as R²."""
    if ev.regression:
        return [(name, f"R² {value:.3f}") for name, value in (
            ("Training rows' mean, same rows", ev.mean_of("mean_r2")),
            ("Greedy tree, same depth and rows", ev.mean_of("greedy_r2")))
            if ev.folds and not math.isnan(value)]
    return [(name, percent(value)) for name, value in (
        ("Most common class, same rows", ev.mean_majority_accuracy),
        ("Greedy tree, same depth and rows", ev.mean_greedy_accuracy))
        if ev.folds and not math.isnan(value)]


def test_rows(run: RunRecord) -> list[tuple[str, str]]:
    """How the tree does on held-out rows, as summary rows (the Results tab's and the
    report's): the test's summary, balanced accuracy, each fold's figure (a
    regression's R²) and the baselines on the same rows; none without a test."""
    ev = run.evaluation
    if ev is None:
        return []
    rows = [(TEST_ROW, ev.summary())]
    if ev.folds and not run.regression:
        rows.append(("Test balanced accuracy",
                     percent(matrix_balanced_accuracy(ev.test_confusion()))))
    if len(ev.folds) > 1:
        rows.append(("Per fold", ", ".join(f"R² {f.test_r2:.3f}" for f in ev.folds)
                     if run.regression else ", ".join(percent(a) for a in
                                                       ev.test_accuracies)))
    return rows + baseline_rows(ev)


def weighted(run: RunRecord) -> bool:
    """Whether `run`'s rows were weighted by class: its errors are then weights."""
    return bool(run.data_settings.get("class_weight"))


def error_unit(run: RunRecord) -> str:
    """What `run`'s errors count: "errors", or "weighted errors" (class weights)."""
    return "weighted errors" if weighted(run) else "errors"


def proves_bounds(algorithm: str) -> bool:
    """Whether `algorithm` computes a lower bound (an exact solver), so that its
    bound and gap mean something; False for greedy, whose bound would read 0."""
    try:
        return get_solver(algorithm).proves_optimality
    except Exception:  # noqa: BLE001 - a session from a build with other solvers
        return True


def bound_text(run: RunRecord) -> str:
    """The lower bound and the gap; with a cost per leaf, of the objective the search
    minimised (errors + the leaves' cost), which is then named."""
    if not proves_bounds(run.chosen or run.algorithm):
        return "none (this algorithm proves no bound)"
    gap = f"gap {100 * run.gap:.1f}%"
    if not run.leaf_penalty:
        return f"{format_count(run.lower_bound)} {error_unit(run)} ({gap})"
    return (f"{format_count(run.lower_bound)} on the objective {format_count(run.objective)}"
            f" = {error_unit(run)} + {format_count(run.leaf_penalty)} per leaf ({gap})")


def errors_text(run: RunRecord) -> str:
    """"12 errors of 600", or with class weights "36.23 weighted errors of 70.16
    (1,234 rows, weighted by class)": a weight is not a number of rows, so the rows
    are named beside it; a regression's "squared error 2.97e+06 on 2,000 rows"."""
    if run.regression:
        return (f"squared error {format_number(run.train_error)} on "
                f"{format_count(run.total_weight)} rows")
    text = (f"{format_count(run.train_error)} {error_unit(run)} of "
            f"{format_count(run.total_weight)}")
    if weighted(run):
        text += f" ({format_count(run.n_rows)} rows, weighted by class)"
    return text


def fit_rows(run: RunRecord) -> list[tuple[str, str]]:
    """How the tree does on its training rows, as summary rows: accuracy (weighted,
    balanced), or a regression's RMSE and R²."""
    if run.regression:
        return [("Training RMSE", f"{format_number(run.train_rmse)} ({errors_text(run)})"),
                ("Training R²", f"{run.train_r2:.4f} (1: every row exact, 0: no better "
                 "than the mean)")]
    weights = run.data_settings.get("class_weight")
    return [("Weighted training accuracy" if weights else "Training accuracy",
             f"{percent(run.train_accuracy)} ({errors_text(run)})"),
            ("Balanced accuracy", percent(matrix_balanced_accuracy(run.train_confusion))
             if run.train_confusion.size else "—")]


def algorithm_text(run: RunRecord) -> str:
    """"Automatic (ConTree)": what `auto` ran, not only that it chose."""
    return f"{run.title}{run.chosen_text}"


def reached_depth(run: RunRecord) -> int | None:
    """The depth of `run`'s model (a diagram's layers); None without one."""
    return run.tree.depth if is_model(run.tree) else None


def depth_text(run: RunRecord) -> str:
    """The depth the model reached, with the limit when it stopped short of it
    ("2 (limit 4)"): a run's requested depth says little about its tree."""
    reached, limit = reached_depth(run), run.depth_limit
    if reached is None:
        return "" if limit is None else f"— (limit {limit})"
    return str(reached) if limit in (None, reached) else f"{reached} (limit {limit})"


_ROOT = QModelIndex()  # the invisible root: a flat table has no children


HISTORY_COLUMNS = ("#", "Algorithm", "Depth", "Binarisation", "Features", "Train acc.",
                   "Test acc.", "Error", "Lower bound", "Status", "Time", "Leaves", "Dataset",
                   "Name", "Note")
TEXT_COLUMNS = {"Algorithm", "Binarisation", "Status", "Dataset", "Name", "Note"}
EDITABLE = {"Name": "name", "Note": "note"}   # column -> the RunRecord field it edits
HEADER_TIPS = {
    "Algorithm": "The algorithm chosen; for Automatic, the one it ran in brackets",
    "Depth": "Depth of the tree (layers of a diagram), with the run's limit when the "
             "tree stopped short of it",
    "Leaves": "Leaves of a tree; arcs into the class terminals of a decision diagram",
    "Train acc.": "Accuracy on the training rows; a regression's R² (1: every row "
                  "exact, 0: no better than their mean)",
    "Test acc.": "Accuracy on held-out rows; a regression's R² there",
    "Error": "Misclassified training rows (weight); a regression's squared error",
    "Name": "Your name for the run (shown after its number everywhere): click the cell "
            "of a selected run, or press F2, to type it",
    "Note": "Your note on the run, kept in the session: click the cell of a selected "
            "run, or press F2, to type it"}
SORT_ROLE = Qt.UserRole + 1   # what a column sorts by: numbers as numbers


class HistoryModel(QAbstractTableModel):
    annotated = Signal(object)   # a run named or annotated (its RunRecord)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.runs: list[RunRecord] = []

    def add(self, run: RunRecord) -> None:
        self.beginInsertRows(QModelIndex(), len(self.runs), len(self.runs))
        self.runs.append(run)
        self.endInsertRows()

    def remove(self, number: int) -> None:
        row = self.row_of(number)
        if row >= 0:
            self.beginRemoveRows(QModelIndex(), row, row)
            del self.runs[row]
            self.endRemoveRows()

    def set_runs(self, runs: list[RunRecord]) -> None:
        self.beginResetModel()
        self.runs = list(runs)
        self.endResetModel()

    def refresh(self, number: int) -> None:
        row = self.row_of(number)
        if row >= 0:
            self.dataChanged.emit(self.index(row, 0),
                                  self.index(row, len(HISTORY_COLUMNS) - 1))

    def rowCount(self, parent=_ROOT) -> int:
        return 0 if parent.isValid() else len(self.runs)

    def columnCount(self, parent=_ROOT) -> int:
        return 0 if parent.isValid() else len(HISTORY_COLUMNS)

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if orientation == Qt.Horizontal and role == Qt.DisplayRole:
            return HISTORY_COLUMNS[section]
        if orientation == Qt.Horizontal and role == Qt.ToolTipRole:
            return HEADER_TIPS.get(HISTORY_COLUMNS[section])
        return None

    def cell(self, run: RunRecord, column: int) -> str:
        tree = run.tree
        values = (
            str(run.number), algorithm_text(run), depth_text(run),
            str(run.data_settings.get("binarize", "")), f"{run.n_features:,}",
            score_text(run, run.train_score), score_text(run, run.test_accuracy),
            format_count(run.train_error),
            format_count(run.lower_bound) if proves_bounds(run.chosen or run.algorithm)
            else "—", run.status_text, f"{run.time_s:.2f} s",
            str(tree.n_leaves) if is_model(tree) else "", run.dataset_name, run.name,
            run.note)
        return values[column]

    @staticmethod
    def sort_key(run: RunRecord, column: int):
        """Numbers sort as numbers (a missing one first), words without case."""
        def number(value) -> float:
            return -1.0 if value is None or math.isnan(value) else float(value)
        tree = run.tree
        keys = (run.number, algorithm_text(run).lower(), number(reached_depth(run)),
                str(run.data_settings.get("binarize", "")), run.n_features,
                number(run.train_score), number(run.test_accuracy), run.train_error,
                run.lower_bound, run.status_text, run.time_s,
                tree.n_leaves if is_model(tree) else -1, run.dataset_name.lower(),
                run.name.lower(), run.note.lower())
        return keys[column]

    def flags(self, index: QModelIndex):
        flags = super().flags(index)
        if index.isValid() and HISTORY_COLUMNS[index.column()] in EDITABLE:
            flags |= Qt.ItemIsEditable
        return flags

    def setData(self, index: QModelIndex, value, role=Qt.EditRole) -> bool:
        field = EDITABLE.get(HISTORY_COLUMNS[index.column()]) if index.isValid() else None
        if field is None or role != Qt.EditRole:
            return False
        run = self.runs[index.row()]
        text = " ".join(str(value).split())   # one line, as the history shows it
        if getattr(run, field) == text:
            return False
        setattr(run, field, text)
        self.refresh(run.number)
        self.annotated.emit(run)
        return True

    def row_of(self, number: int) -> int:
        """The model row of run `number` (-1 when absent)."""
        return next((i for i, r in enumerate(self.runs) if r.number == number), -1)

    def data(self, index: QModelIndex, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        run = self.runs[index.row()]
        name = HISTORY_COLUMNS[index.column()]
        if role in (Qt.DisplayRole, Qt.EditRole):
            return self.cell(run, index.column())
        if role == SORT_ROLE:
            return self.sort_key(run, index.column())
        if role == Qt.TextAlignmentRole and name not in TEXT_COLUMNS:
            return int(Qt.AlignRight | Qt.AlignVCenter)
        if role == Qt.ToolTipRole:
            params = ", ".join(f"{k}={v}" for k, v in run.params.items())
            where = f" on {run.data_path or run.dataset_name}" if run.dataset_name else ""
            return f"{run.title} ({params}){where} — finished {run.finished_at}"
        if role == Qt.ForegroundRole and name == "Status" and run.optimal:
            return QBrush(QColor("#1a7f37"))
        return None


def scrolling(content: QWidget, box: QGroupBox) -> QScrollArea:
    """`content` filling `box` in a frameless scroll area: it keeps the size its text
    needs and scrolls (a word-wrapped label grows downwards, so only vertically but for
    a word wider than the box), so the box can be made as small as the window needs."""
    area = QScrollArea(box)
    area.setFrameShape(QFrame.NoFrame)
    area.setWidgetResizable(True)
    area.setWidget(content)
    layout = QVBoxLayout(box)
    layout.addWidget(area)
    return area


class MatrixPair(QWidget):
    """The training and the test matrix side by side when both fit the width, else one
    above the other: a narrow window scrolls them down rather than sideways."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setRowStretch(4, 1)      # below every arrangement: the spare height
        self.grid.setColumnStretch(2, 1)   # and width
        self.parts: list[tuple[QLabel, ConfusionView]] = []
        self.side_by_side = True

    def add(self, title: str) -> tuple[QLabel, ConfusionView]:
        """A titled matrix after the others (two in all)."""
        label = QLabel(title, self)
        label.setWordWrap(True)   # as wide as its matrix, not as its words
        self.parts.append((label, ConfusionView(self)))
        self._place()
        return self.parts[-1]

    def _arrange(self, side_by_side: bool) -> None:
        if side_by_side != self.side_by_side:
            self.side_by_side = side_by_side
            self._place()

    def _place(self) -> None:
        side_by_side = self.side_by_side
        for k, (label, view) in enumerate(self.parts):
            row, column = (0, k) if side_by_side else (2 * k, 0)
            for offset, widget in enumerate((label, view)):
                self.grid.removeWidget(widget)
                self.grid.addWidget(widget, row + offset, column, Qt.AlignTop)

    def resizeEvent(self, event) -> None:
        # The room to fill is the scroll area's viewport (the parent): the pair itself
        # is never narrower than its arrangement's minimum, side by side included.
        room = self.parentWidget().width() if self.parentWidget() else event.size().width()
        needed = sum(view.minimumSizeHint().width() for _, view in self.parts) + \
            self.grid.horizontalSpacing()
        self._arrange(room >= needed)
        super().resizeEvent(event)


class ResultsPanel(QWidget):
    runs_selected = Signal(list)      # RunRecords selected in the history
    run_activated = Signal(object)    # RunRecord double-clicked
    cell_chosen = Signal(int, int)    # a training-matrix cell: (true, predicted class)
    run_annotated = Signal(object)    # RunRecord named or annotated in the history
    export_history = Signal()         # "Export CSV…" pressed

    def __init__(self, parent=None):
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        splitter = QSplitter(Qt.Vertical, self)
        layout.addWidget(splitter)

        # The run's figures and the matrices scroll inside their boxes rather than
        # being squeezed and cut: the tab never needs more room than a 1024 x 640
        # window leaves it beside the side panel.
        top = QWidget(splitter)
        top_layout = QHBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        summary_box = QGroupBox("Run", top)
        self.summary_label = QLabel("No run yet: press Run.")
        self.summary_label.setTextFormat(Qt.RichText)
        self.summary_label.setWordWrap(True)
        self.summary_label.setAlignment(Qt.AlignTop | Qt.AlignLeft)
        self.summary_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.summary_scroll = scrolling(self.summary_label, summary_box)

        matrices = self.matrices_box = QGroupBox(MATRICES_TITLE, top)
        self.matrix_pair = MatrixPair()
        self.train_title, self.train_matrix = self.matrix_pair.add("Training rows")
        self.test_title, self.test_matrix = self.matrix_pair.add("Test rows (all folds)")
        self.train_matrix.cell_chosen.connect(self.cell_chosen)
        self.train_matrix.table.setToolTip("Click a cell to see its rows in the Data tab.")
        # a regression's instead of the matrices: its fit drawn (`show_fit`)
        self.fit_plots = FitPlots()
        self.fit_plots.hide()
        both = QWidget()
        both_layout = QVBoxLayout(both)
        both_layout.setContentsMargins(0, 0, 0, 0)
        both_layout.addWidget(self.matrix_pair)
        both_layout.addWidget(self.fit_plots)
        self.matrices_scroll = scrolling(both, matrices)
        for box in (summary_box, matrices):
            # equal shares, whatever their contents would like (but their titles)
            box.setMinimumWidth(box.minimumSizeHint().width())
            box.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
            top_layout.addWidget(box, 1)

        # (a group box's title never wraps: the instructions are a label that does)
        history_box = QGroupBox("History of this session", splitter)
        history_layout = QVBoxLayout(history_box)
        how = QLabel("Select rows to compare their curves; double-click a row to show "
                     "its run's tree; click a selected run's Name or Note (or press F2) "
                     "to name or annotate it.", history_box)
        how.setWordWrap(True)
        how.setStyleSheet(f"color: {HINT_COLOUR};")
        above = QHBoxLayout()
        above.addWidget(how, 1)
        self.export_history_button = QPushButton("Export CSV…", history_box)
        self.export_history_button.setToolTip("Every run of the history, with its name, "
                                              "note and parameters, as a CSV file")
        self.export_history_button.clicked.connect(lambda: self.export_history.emit())
        above.addWidget(self.export_history_button)
        history_layout.addLayout(above)
        self.history = HistoryModel(self)
        self.history.annotated.connect(self.run_annotated)
        # The view shows the history through a sorting proxy (click a header to sort):
        # view rows map to runs through `run_at`, never by their position.
        self.sorted_history = QSortFilterProxyModel(self)
        self.sorted_history.setSourceModel(self.history)
        self.sorted_history.setSortRole(SORT_ROLE)
        self.history_view = QTableView(history_box)
        self.history_view.setModel(self.sorted_history)
        self.history_view.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.history_view.setSelectionMode(QAbstractItemView.ExtendedSelection)
        # (a double-click shows the run's tree: a name is typed on a selected cell)
        self.history_view.setEditTriggers(QAbstractItemView.SelectedClicked
                                          | QAbstractItemView.EditKeyPressed)
        self.history_view.verticalHeader().hide()
        self.history_view.setAlternatingRowColors(True)
        header = self.history_view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeToContents)
        header.setStretchLastSection(True)
        # the data file is the model's last column (so column numbers stay as they
        # were) but is shown second, where runs on different files stand out
        header.moveSection(header.visualIndex(HISTORY_COLUMNS.index("Dataset")), 1)
        self.history_view.setSortingEnabled(True)
        self.history_view.sortByColumn(0, Qt.AscendingOrder)
        self._quiet = False   # selection changes made by the window itself
        self.history_view.selectionModel().selectionChanged.connect(self._selection)
        self.history_view.doubleClicked.connect(
            lambda index: self.run_activated.emit(self.run_at(index)))
        history_layout.addWidget(self.history_view)
        splitter.setSizes([300, 260])
        self.current: RunRecord | None = None
        self.show_run(None)

    # --------------------------------------------------------------- history
    def add_run(self, run: RunRecord) -> None:
        self.history.add(run)
        row = self.view_row(run.number)
        if row >= 0:
            self.history_view.scrollTo(self.sorted_history.index(row, 0))

    def remove_run(self, number: int) -> None:
        """Take run `number` out of the history (an edit undone)."""
        self.history.remove(number)

    def set_runs(self, runs: list[RunRecord]) -> None:
        self.history.set_runs(runs)

    def refresh_run(self, number: int) -> None:
        """Run `number`'s row shows its record as it is now (its test accuracy came)."""
        self.history.refresh(number)

    @property
    def runs(self) -> list[RunRecord]:
        return list(self.history.runs)

    def run_at(self, index: QModelIndex) -> RunRecord:
        """The run on a row of the view (an index of the sorted view, any column)."""
        return self.history.runs[self.sorted_history.mapToSource(index).row()]

    def view_row(self, number: int) -> int:
        """Where run `number` is in the view as sorted now (-1 when absent)."""
        row = self.history.row_of(number)
        if row < 0:
            return -1
        return self.sorted_history.mapFromSource(self.history.index(row, 0)).row()

    def selected_runs(self) -> list[RunRecord]:
        """The selected runs, in the order the view shows them."""
        rows = sorted({index.row() for index in self.history_view.selectionModel()
                       .selectedRows()})
        return [self.run_at(self.sorted_history.index(r, 0)) for r in rows]

    def focused_run(self) -> RunRecord | None:
        """The selected row clicked last (the current index), if any."""
        index = self.history_view.currentIndex()
        if not index.isValid() or not self.history_view.selectionModel().isRowSelected(
                index.row(), _ROOT):
            return None
        return self.run_at(index)

    def select_runs(self, numbers: list[int], notify: bool = True) -> None:
        """Select the rows of these runs (only them); `runs_selected` follows unless
        `notify` is false.  One run also becomes the current row, scrolled to."""
        selection = QItemSelection()
        for number in numbers:
            row = self.view_row(number)
            if row >= 0:
                index = self.sorted_history.index(row, 0)
                selection.select(index, index)
        model = self.history_view.selectionModel()
        self._quiet = not notify
        try:
            model.select(selection, QItemSelectionModel.ClearAndSelect
                         | QItemSelectionModel.Rows)
            if len(numbers) == 1 and self.view_row(numbers[0]) >= 0:
                index = self.sorted_history.index(self.view_row(numbers[0]), 0)
                model.setCurrentIndex(index, QItemSelectionModel.NoUpdate)
                self.history_view.scrollTo(index)
        finally:
            self._quiet = False

    def set_running(self, running: bool) -> None:
        """While a run goes on the window shows it: rows can be read, not selected."""
        mode = (QAbstractItemView.NoSelection if running
                else QAbstractItemView.ExtendedSelection)
        if self.history_view.selectionMode() != mode:
            self.history_view.setSelectionMode(mode)
            self.history_view.setToolTip("Rows can be selected again when the run ends."
                                         if running else "")

    def clear_selection(self) -> None:
        """Select no row, quietly (a new run or new data: no old row stays chosen)."""
        self.select_runs([], notify=False)

    def _selection(self, *_) -> None:
        if not self._quiet:
            self.runs_selected.emit(self.selected_runs())

    # --------------------------------------------------------------- summary
    def show_run(self, run: RunRecord | None, fold_text: str = "") -> None:
        self.current = run
        weights = None if run is None else run.data_settings.get("class_weight")
        self.train_title.setText("Training rows, weighted by class" if weights
                                 else "Training rows")
        if run is None:
            self.summary_label.setText(f"<span style='color:{HINT_COLOUR}'>No run yet: "
                                       "load data and press Run.</span>")
            self.train_matrix.show_matrix(None, [])
            self.test_matrix.show_matrix(None, [])
            self.matrix_pair.show()
            self.fit_plots.hide()
            self.matrices_box.setTitle(MATRICES_TITLE)
            return
        tree = run.tree
        rows = [("Algorithm", f"{algorithm_text(run)} (#{run.number})")]
        if run.reason:
            rows.append(("Why", f"{run.reason}."))
        if run.message:
            rows.append(("Note", run.message))
        rows += [
                ("Parameters", ", ".join(f"{k} = {v}" for k, v in run.params.items())),
                ("Status", run.status_text + (" — proven optimal" if run.optimal else "")),
                *fit_rows(run),
                ("Lower bound", bound_text(run)),
                ]
        if weights:
            rows.append(("Class weights", str(weights)))
        if run.evaluation is not None:
            verdict = run.evaluation.verdict()
            rows += [(key, html.escape(text) + (
                f"<br><b style='color:{LOSS_COLOUR}'>{html.escape(verdict)}</b>"
                if verdict else "")) if key == TEST_ROW else (key, text)
                for key, text in test_rows(run)]
        elif fold_text:
            rows.append((TEST_ROW, html.escape(fold_text)))
        if is_model(tree):
            rows.append((kind_name(tree), size_text(tree)))
        rows.append(("Data", (f"{run.dataset_name or 'file not recorded'}: "
                              f"{run.n_rows:,} rows, {run.n_features:,} features, "
                              f"binarisation {run.data_settings.get('binarize', '?')}, "
                              f"target '{run.data_settings.get('target', '?')}'")))
        rows.append(("Time", f"{run.time_s:.2f} s"))
        self.summary_label.setText(
            "<table cellspacing='3'>" + "".join(
                f"<tr><td style='color:{HINT_COLOUR}; padding-right:10px'>{html.escape(k)}"
                f"</td><td>{v if k == TEST_ROW else html.escape(v)}</td></tr>"
                for k, v in rows) + "</table>")
        self.train_matrix.show_matrix(run.train_confusion, run.class_names,
                                      weighted=bool(weights))
        self.matrix_pair.setVisible(not run.regression)
        self.fit_plots.setVisible(run.regression)
        self.matrices_box.setTitle(FIT_TITLE if run.regression else MATRICES_TITLE)
        if run.regression:   # numbers: no classes to cross, the fit drawn instead
            if self.fit_plots.key != run.number:   # (`RunDisplay.show_fit` draws it)
                self.fit_plots.clear("Plotting the tree's predictions on its training "
                                     "rows…")
        elif run.evaluation is not None and run.evaluation.folds:
            self.test_matrix.show_matrix(run.evaluation.test_confusion(),
                                         run.evaluation.class_names)
            self.test_title.setText(f"Test rows ({run.evaluation.plan.describe()})")
        else:
            self.test_matrix.show_matrix(None, [])
            self.test_title.setText(
                "Test rows: none for a tree edited by hand (Run → Predict a file judges "
                "it on rows it has not seen)" if run.edited_from is not None else
                "Test rows (choose a hold-out split or cross-validation)")

    def show_message(self, text: str) -> None:
        """No run's figures on display, and `text` says why (a run still going, ...)."""
        self.show_run(None)
        self.summary_label.setText(f"<span style='color:{HINT_COLOUR}'>"
                                   f"{html.escape(text)}</span>")

    def summary_text(self) -> str:
        return self.summary_label.text()
