"""What the Data tab's column chart shows: the column chosen in the columns table,
by the target's classes, or against another numeric column with the selected run's
cut lines (`gui.column_chart`, over `engine.column_summary`).

Order levels… (for a text column) opens `gui.order_dialog` on the column's levels.
It follows the window's state: a new table forgets the column and offers its numeric
columns; another target or another selected run draws the chart again.  The numbers
are computed in a worker (two million rows take a moment), and an answer for a
column, target or table no longer chosen is dropped.
"""

from __future__ import annotations

from PySide6.QtCore import QObject

from engine.column_summary import column_summary, numeric_pairs, tree_cuts
from engine.data import blocks
from engine.data.task import choose_task
from engine.errors import OrchardError
from engine.featurize.ordered import guess_order
from engine.vocabulary import CLASSIFICATION
from gui.column_chart import DISTRIBUTION
from gui.column_model import ORDERED, allowed_choices
from gui.models import is_model
from gui.order_dialog import OrderDialog
from gui.worker import Worker


def _look(frame, column: str, against: str, target: str, numeric: bool, model,
          order: tuple[str, ...], task: str):
    """The chart's numbers (off the GUI thread): a summary, or a scatter's points; by
    the target's classes, or by bands of its values for a regression (`task` as the
    window asks it, resolved as `prepare` does)."""
    try:
        task = choose_task(target, frame[target], task)[0]
    except OrchardError:   # (regression asked of text: the Data panel says why)
        task = CLASSIFICATION
    if against == DISTRIBUTION or against == column:
        return "summary", column_summary(frame, column, target, numeric, order=order,
                                         task=task)
    xs, ys, classes, names = numeric_pairs(frame, column, against, target, task=task)
    cuts = (tree_cuts(model, column), tree_cuts(model, against)) if model else ([], [])
    return "scatter", (xs, ys, classes, names, *cuts)


class ColumnLook(QObject):
    def __init__(self, window):
        super().__init__(window)
        self.win = window
        self.column: str | None = None
        self._worker: Worker | None = None
        self._raw = None
        chart = window.data_view.column_chart
        window.data_view.column_chosen.connect(self.choose)
        window.data_view.order_requested.connect(self.order_levels)
        chart.against_changed.connect(self.refresh)
        window.state.draft_changed.connect(lambda draft: self._table(draft))
        window.state.selection_changed.connect(lambda run: self.refresh())

    def _table(self, draft) -> None:
        """A table read (or prepared again): a new table forgets the column chosen."""
        if draft.raw is not self._raw:
            self._raw, self.column = draft.raw, None
            self.win.data_view.column_chart.set_numeric_columns(
                [info.name for info in draft.infos if info.numeric])
        self.refresh()

    def choose(self, column: str) -> None:
        self.column = column
        columns = self.win.columns
        self.win.data_view.order_button.setEnabled(
            ORDERED in allowed_choices(columns.info(column)))
        self.refresh()

    def order_levels(self, column: str) -> OrderDialog | None:
        """Order levels…: the column's levels in the order set before, or guessed; OK
        uses the column as ordered with them (the data are prepared again)."""
        raw = self.win.state.draft.raw
        if raw is None:
            return None
        _, values = blocks.factorize(raw.frame[column])
        present = [str(v) for v in values]
        before = [v for v in self.win.columns.orders().get(column, ()) if v in present]
        levels = before + [v for v in guess_order(present) if v not in before]
        dialog = OrderDialog(column, levels, self.win)
        dialog.accepted.connect(lambda: self.win.columns.set_order(column, dialog.levels()))
        dialog.open()
        return dialog

    def refresh(self) -> None:
        win, chart = self.win, self.win.data_view.column_chart
        draft = win.state.draft
        target = win.data_panel.target()
        self._worker = None   # an answer still coming is no longer wanted
        if draft.raw is None or self.column is None or not target:
            chart.clear("Choose a column in the table above to see its values by class.")
            return
        infos = {info.name: info for info in draft.infos}
        if self.column not in infos or target not in infos:
            return
        run = win.current_run
        model = run.tree if run is not None and is_model(run.tree) else None
        against = chart.against
        worker = Worker(_look, draft.raw.frame, self.column, against, target,
                        infos[self.column].numeric and self.column != target, model,
                        win.columns.orders().get(self.column, ()), win.data_panel.task(),
                        name="orchard-column")
        key = (draft.raw, self.column, against, target, model)
        worker.finished.connect(lambda out: worker is self._worker and
                                self._show(out, key, run))
        worker.errored.connect(lambda message: worker is self._worker and
                               chart.clear(message))
        self._worker = worker
        worker.start()

    def _show(self, out, key, run) -> None:
        kind, value = out
        chart = self.win.data_view.column_chart
        if kind == "summary":
            chart.show_summary(value)
            return
        xs, ys, classes, names, x_cuts, y_cuts = value
        label = f"run #{run.number}" if run is not None and is_model(run.tree) else ""
        chart.show_scatter(key[1], key[2], xs, ys, classes, names, x_cuts, y_cuts, label,
                           len(key[0].frame))
