"""Split a node by hand: its candidate splits ranked by worth, the surrogates of the
split there now, a threshold or a group of values of one's own, and Split / Split and
optimise below.

A thin view over `engine.splits` (JMP's Split and SAS Enterprise Miner's interactive
tree on Orchard's objective): the ranking runs in a worker, since a node of 300,000
rows and hundreds of features takes seconds; the dialog belongs to one run and one
node and says which, and it closes when the window shows another tree, so a split is
never made on a tree no longer on screen.  The edits themselves are the window's
(`TreeEditor.split`, `optimise_below`), so Undo, Redo and sessions know them.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from engine.data.features import EQ, format_count, format_number
from engine.splits import Candidate, NodeSplits, rank_splits, typed_group, typed_split
from gui.worker import Worker

# Rows of the candidates table shown at most (the filter finds the others).
SHOWN = 400
COLUMNS = ("Split", "Errors removed", "Gini removed", "Rows: holds / not",
           "Predicts: holds / not")
WORTH_TIP = ("Errors removed: the training weight the split stops misclassifying at "
             "this node (less the cost of its extra leaf, with a cost per leaf): what "
             "the run's solvers minimise.  Ties are ranked by the Gini impurity removed, "
             "as CART ranks them.")


class SplitDialog(QDialog):
    """Candidates for one node of one run; `chosen(candidate, optimise)` is called
    when the user splits (with `optimise`, Optimise below follows)."""

    def __init__(self, run, node: int, data, chosen: Callable[[Candidate, bool], None],
                 parent=None):
        super().__init__(parent)
        self.run, self.node, self.data = run, node, data
        self._chosen = chosen
        self.splits: NodeSplits | None = None
        self._rows: list[Candidate] = []    # the candidates in the table, in order
        self._typed: Candidate | None = None
        self.setWindowTitle(f"Split by hand — run #{run.number}")
        self.resize(860, 520)
        layout = QVBoxLayout(self)
        self.header = QLabel("Ranking the splits of this node…", self)
        self.header.setWordWrap(True)
        self.header.setTextFormat(Qt.PlainText)
        layout.addWidget(self.header)

        self.filter_edit = QLineEdit(self)
        self.filter_edit.setPlaceholderText("Find a column…")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self._fill)
        layout.addWidget(self.filter_edit)

        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.horizontalHeaderItem(1).setToolTip(WORTH_TIP)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        self.table.itemSelectionChanged.connect(self._selected)
        self.table.itemDoubleClicked.connect(lambda _: self._split(False))
        layout.addWidget(self.table, 3)

        self.surrogate_label = QLabel("", self)
        self.surrogate_label.setWordWrap(True)
        layout.addWidget(self.surrogate_label)
        self.surrogates = QTableWidget(0, 3, self)
        self.surrogates.setHorizontalHeaderLabels(("Surrogate split", "Agreement",
                                                   "Above the majority way"))
        self.surrogates.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.surrogates.verticalHeader().setVisible(False)
        self.surrogates.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        layout.addWidget(self.surrogates, 1)

        typed = QHBoxLayout()
        self.threshold_label = QLabel("Threshold:", self)
        typed.addWidget(self.threshold_label)
        self.threshold_edit = QLineEdit(self)
        self.threshold_edit.setPlaceholderText("a number, for a numeric column")
        self.threshold_edit.returnPressed.connect(self._try_threshold)
        typed.addWidget(self.threshold_edit)
        self.try_button = QPushButton("Try it", self)
        self.try_button.clicked.connect(self._try_threshold)
        typed.addWidget(self.try_button)
        self.values_button = QPushButton("Values…", self)
        self.values_button.setToolTip("Make a group of the chosen text column's values "
                                      "yourself (a column tested value by value)")
        self.values_button.clicked.connect(self.choose_values)
        typed.addWidget(self.values_button)
        layout.addLayout(typed)
        self.choice_label = QLabel("", self)
        self.choice_label.setWordWrap(True)
        self.choice_label.setTextFormat(Qt.PlainText)
        layout.addWidget(self.choice_label)

        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.split_button = QPushButton("Split", self)
        self.split_button.setToolTip("Split the node by the chosen test into two leaves "
                                     "(a node that splits already loses its subtree)")
        self.split_button.clicked.connect(lambda: self._split(False))
        buttons.addWidget(self.split_button)
        self.optimise_button = QPushButton("Split and optimise below", self)
        self.optimise_button.setToolTip("Split, then grow the optimal subtrees under "
                                        "both sides with the depth the run has left")
        self.optimise_button.clicked.connect(lambda: self._split(True))
        buttons.addWidget(self.optimise_button)
        close = QPushButton("Close", self)
        close.clicked.connect(self.reject)
        buttons.addWidget(close)
        layout.addLayout(buttons)
        self._enable()

        self._worker = Worker(rank_splits, run.tree, data, node, run.params,
                              name="orchard-splits")
        self._worker.finished.connect(self._ranked)
        self._worker.errored.connect(self._failed)
        self._worker.start()

    # ------------------------------------------------------------ showing
    def _ranked(self, splits: NodeSplits) -> None:
        self.splits = splits
        names = self.data.class_names
        shown = ", ".join(f"{format_count(c)} {names[k]}"
                          for k, c in enumerate(splits.counts) if c)
        least = (f" Splits leaving less than {format_count(splits.least)} rows on a "
                 "side (the run's least leaf) are not listed." if splits.least > 1 else "")
        cost = (f" A leaf costs {format_count(splits.penalty)} errors (the run's cost per "
                "leaf), taken off each split's worth." if splits.penalty else "")
        # under class weights the counts are weights, not rows (as the solvers count)
        unit = "rows" if self.data.class_weights is None else "weight of rows (class " \
            "weights)"
        self.header.setText(
            f"Run #{self.run.number}, {splits.name}: {format_count(splits.rows)} {unit} "
            f"({shown or 'none'}); as a leaf it misclassifies {format_count(splits.error)}. "
            f"{len(splits.candidates):,} candidate splits, best first.{least}{cost}")
        if self.data.class_weights is not None:
            self.table.horizontalHeaderItem(3).setText("Weight: holds / not")
        self._fill()
        if splits.surrogates or not self.run.tree.is_leaf(self.node):
            self.surrogate_label.setText(
                "Surrogates of its split now (other columns sending the rows the same "
                "way most often, as CART's):" if splits.surrogates else
                "No other column sends these rows the way its split does more often "
                "than sending them all the majority way.")
        for s in splits.surrogates:
            row = self.surrogates.rowCount()
            self.surrogates.insertRow(row)
            for col, text in enumerate((s.condition, f"{s.agreement:.1%}",
                                        f"+{s.gain:.1%}")):
                self.surrogates.setItem(row, col, QTableWidgetItem(text))
        self.surrogates.resizeColumnsToContents()
        self.surrogates.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        self.surrogates.setVisible(bool(splits.surrogates))
        if self.table.rowCount():
            self.table.selectRow(0)

    def _failed(self, message: str) -> None:
        self.header.setText(f"The splits of this node cannot be ranked: {message}")

    def _fill(self) -> None:
        """The candidates matching the filter, best first (at most SHOWN)."""
        self.table.setRowCount(0)
        if self.splits is None:
            return
        needle = self.filter_edit.text().strip().lower()
        names = self.data.class_names
        current = self.splits.current
        rows = [c for c in self.splits.candidates
                if needle in self.data.features[c.feature].column.lower()][:SHOWN]
        self.table.setRowCount(len(rows))
        for i, c in enumerate(rows):
            holds, fails = c.rows
            now = " (its split now)" if c.feature == current and \
                self._is_current(c) else ""
            texts = (c.condition + now, format_count(c.worth), format_count(c.gini),
                     f"{format_count(holds)} / {format_count(fails)}",
                     f"{names[c.holds.argmax()]} / {names[c.fails.argmax()]}")
            for col, text in enumerate(texts):
                item = QTableWidgetItem(text)
                item.setData(Qt.UserRole, i)
                if col:
                    item.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
                self.table.setItem(i, col, item)
        self._rows = rows
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)

    def _is_current(self, c: Candidate) -> bool:
        tree = self.run.tree
        return not tree.is_leaf(self.node) and (
            self.data.features[c.feature].binary
            or abs(c.threshold - float(tree.threshold[self.node])) < 1e-12)

    # ------------------------------------------------------------ choosing
    @property
    def chosen(self) -> Candidate | None:
        """The candidate a split would use: a typed threshold when one was tried on
        the selected column, else the selected row."""
        if self._typed is not None:
            return self._typed
        rows = self.table.selectionModel().selectedRows()
        return self._rows[rows[0].row()] if rows and self.splits else None

    def _selected(self) -> None:
        self._typed = None
        self._enable()

    def _enable(self) -> None:
        chosen = self.chosen
        continuous = chosen is not None and not self.data.features[chosen.feature].binary
        self.threshold_edit.setEnabled(continuous)
        self.try_button.setEnabled(continuous)
        self.values_button.setEnabled(chosen is not None and bool(self._values(chosen)))
        self.threshold_label.setToolTip(
            "" if continuous else "A 0/1 test (a value group, a prepared threshold) has "
            "no threshold of its own: choose another row of the list.")
        if continuous and self._typed is None:
            self.threshold_edit.setText(format_number(chosen.threshold))
        self.split_button.setEnabled(chosen is not None)
        self.optimise_button.setEnabled(chosen is not None)
        self.choice_label.setText("" if chosen is None else
                                  f"Chosen: {chosen.condition}, removing "
                                  f"{format_count(chosen.worth)} errors here.")

    def _try_threshold(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if not rows or self.splits is None:
            return
        selected = self._rows[rows[0].row()]
        try:
            value = float(self.threshold_edit.text().replace(",", ""))
            self._typed = typed_split(self.run.tree, self.data, self.node,
                                      selected.feature, value, self.run.params)
        except ValueError:
            self.choice_label.setText(f"'{self.threshold_edit.text()}' is not a number.")
            return
        except Exception as exc:  # noqa: BLE001 - one sentence in the dialog
            self.choice_label.setText(str(exc))
            return
        self._enable()

    def _values(self, candidate: Candidate) -> list[str]:
        """The values of the candidate's text column that the data test one by one
        (a group of them can be typed), or [] when it is not such a column."""
        column = (candidate.test or self.data.features[candidate.feature]).column
        return list(dict.fromkeys(str(f.value) for f in self.data.features
                                  if f.column == column and f.op == EQ))

    def choose_values(self, chosen: list[str] | None = None) -> None:
        """Values…: a group of the selected column's values, checked in a list (or
        `chosen`, as a test gives them), scored as a split of this node."""
        rows = self.table.selectionModel().selectedRows()
        if not rows or self.splits is None:
            return
        selected = self._rows[rows[0].row()]
        column = self.data.features[selected.feature].column
        values = self._values(selected)
        if chosen is None:
            dialog = QDialog(self)
            dialog.setWindowTitle(f"A group of {column}'s values")
            layout = QVBoxLayout(dialog)
            listing = QListWidget(dialog)
            for value in values:
                item = QListWidgetItem(value, listing)
                item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
                item.setCheckState(Qt.Unchecked)
            layout.addWidget(listing)
            buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel,
                                       dialog)
            buttons.accepted.connect(dialog.accept)
            buttons.rejected.connect(dialog.reject)
            layout.addWidget(buttons)
            if dialog.exec() != QDialog.Accepted:
                return
            chosen = [listing.item(i).text() for i in range(listing.count())
                      if listing.item(i).checkState() == Qt.Checked]
        try:
            self._typed = typed_group(self.run.tree, self.data, self.node, column, chosen,
                                      self.run.params)
        except Exception as exc:  # noqa: BLE001 - one sentence in the dialog
            self.choice_label.setText(str(exc))
            return
        self._enable()

    def _split(self, optimise: bool) -> None:
        chosen = self.chosen
        if chosen is not None:
            self.accept()
            self._chosen(chosen, optimise)

    def done(self, result: int) -> None:
        self._worker.cancel()
        super().done(result)
