"""What the window answers about the model on screen (issue 17's analyst's toolkit).

A click on a node shows its rows in the Data tab; a row chosen in the table, or
typed in Run → Test a row, lights its path; a confusion-matrix cell shows the rows
it counts; a right-click on a node offers its rows and the edits by hand
(`gui.tree_editing`), splitting by hand among ranked candidates included
(`gui.split_dialog`); Run → Predict a file opens its dialog.  The answers come from
plain engine functions (`engine.prediction`); finding rows runs in a worker, since
two million rows take a moment.  The window builds one `TreeAnalysis` and wires its
views' signals to it; this object owns what those answers need (the worker, the last
node menu), and asks the window only for what is on screen.
"""

from __future__ import annotations


from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QMenu

from engine.data.features import format_number
from engine.data.dataset import counted
from engine.model.tree import Tree
from engine.prediction import confusion_rows, node_rows, prediction_text, row_path
from gui.models import is_model
from gui.predict_dialog import PredictDialog
from gui.row_form import RowForm, first_row_values, seen_values
from gui.split_dialog import SplitDialog
from gui.tree_editing import TreeEditor
from gui.worker import Worker, error_message


class TreeAnalysis(QObject):
    def __init__(self, window, data_tab: int):
        super().__init__(window)
        self.window = window
        self._data_tab = data_tab
        self._worker: Worker | None = None      # finding the rows of a node or cell
        self.node_menu: QMenu | None = None     # the last node's right-click menu
        self.split_dialog: SplitDialog | None = None   # the open Split by hand, if any
        window.state.selection_changed.connect(self._close_split_dialog)

    # ------------------------------------------------------------ its rows
    def _rows(self, what: str):
        """The selected run, its model and the rows it trained on; (None, None, None)
        with the reason in the status line when they are not on screen and in memory.

        Rows are shown in the Data tab, which holds the draft's table: a run's rows
        are shown there only when that table is the run's own (the same table read,
        whatever was prepared from it since)."""
        win = self.window
        run = win.current_run
        if run is None or not is_model(run.tree) or win.tree is not run.tree:
            return None, None, None
        rows = win.state.data_of(run)
        if rows is None or rows.raw is not win.raw:
            open_now = run.data_path is not None and win.path is not None and \
                str(win.path.resolve()) == run.data_path
            win.set_status(
                f"Run #{run.number} trained on an earlier reading of {run.dataset_name}: "
                f"run again on the table open now to see {what}." if open_now else
                f"Run #{run.number} trained on {run.dataset_name or 'another file'}: "
                f"open it again to see {what}.")
            return None, None, None
        if run.tree.prep.target not in rows.raw.frame.columns:
            return None, None, None
        return run, run.tree, rows

    # ------------------------------------------------------------- node -> rows
    def show_node(self, node: int) -> None:
        """A click on a tree node: its rows in the data table, with its rule, class
        counts and error."""
        run, tree, rows = self._rows("the rows of its nodes")
        scene = self.window.view.tree_scene()
        if run is None or not isinstance(tree, Tree) or scene is None:
            return
        rule = " and ".join(scene.path_conditions(node)) or "every row"
        full = " and ".join(scene.path_conditions(node, full=True)) or "every row"
        self._find(tree, lambda found: self.node_found(run, node, rule, *found, full=full),
                   node_rows, tree, rows.raw.frame, node)

    def node_found(self, run, node: int, rule: str, rows, counts,
                   full: str | None = None) -> None:
        """Show a node's rows; `rule` is shown, `full` (value groups in full) copied."""
        tree = run.tree
        if tree.regression:   # `counts`: the node's mean scored on its rows
            self._show_rows(tree, rows, f"Run #{run.number}, node {node}: {rule} — "
                            f"{counted(len(rows), 'row')}; predicts "
                            f"{format_number(float(tree.value[node, 1]))} (their training "
                            f"mean), RMSE {format_number(counts['rmse'])} on them.",
                            full or rule)
            return
        names = tree.class_names
        shown = ", ".join(f"{count:,} {names[k]}" for k, count in enumerate(counts) if count)
        errors = int(counts.sum() - counts[tree.label[node]])
        self._show_rows(tree, rows, f"Run #{run.number}, node {node}: {rule} — "
                        f"{counted(len(rows), 'row')} ({shown or 'none'}); predicts "
                        f"{names[tree.label[node]]}, {errors:,} of them misclassified.",
                        full or rule)

    # ------------------------------------------------------------ cell -> rows
    def show_cell(self, true: int, predicted: int) -> None:
        """A training confusion-matrix cell clicked: the rows it counts."""
        run, model, rows = self._rows("the rows of a cell")
        if run is None:
            return
        names = model.class_names
        text = f"Rows of class {names[true]} predicted as {names[predicted]} by run #{run.number}"
        self._find(model, lambda found: self._show_rows(model, found,
                                                        f"{text}: "
                                                        f"{counted(len(found), 'row')}."),
                   confusion_rows, model, rows.raw.frame, true, predicted)

    def _find(self, model, done, fn, *args) -> None:
        worker = Worker(fn, *args, name="orchard-rows")
        worker.finished.connect(done)
        worker.errored.connect(self.window.show_error)
        self._worker = worker
        worker.start()

    def _show_rows(self, model, rows, text: str, rule: str = "") -> None:
        win = self.window
        if model is not win.tree or win.closing:
            return   # another model is on screen now
        win.data_view.show_node_rows(rows, text, rule)
        win.tabs.setCurrentIndex(self._data_tab)

    # ------------------------------------------------------------- row -> path
    def show_row(self, row: int) -> None:
        """A row chosen in the data table: its path lit in the selected run's model,
        when the table is the one it trained on."""
        run, _, rows = self._rows("a row's path")
        if run is not None:
            self.window.set_status(self.light_row(rows.raw.frame.iloc[[row]],
                                                  f"Row {row + 1}"))

    def light_row(self, frame, name: str) -> str:
        """Light the way of a one-row raw table through the selected run's model and
        say where it ends, in one sentence that names the run."""
        win = self.window
        run, scene = win.current_run, win.view.tree_scene()
        if run is None or not is_model(run.tree) or win.tree is not run.tree \
                or scene is None:
            return "There is no finished run on screen to send the row through."
        model = run.tree
        try:
            path, conditions, predicted = row_path(model, frame)
        except Exception as error:  # noqa: BLE001 - a table the model was not trained on
            return f"{name} cannot go through run #{run.number}: {error_message(error)}"
        scene.light_path(path)
        text = f"{name}: run #{run.number} predicts {prediction_text(model, predicted)}"
        target = model.prep.target
        if target in frame.columns and frame[target].notna().all():
            text += f" (true {target}: {frame[target].iloc[0]})"
        return text + (f", because {' and '.join(conditions)}." if conditions else ".")

    # ------------------------------------------------------------- dialogs
    def _source(self, long: bool = False) -> str:
        run = self.window.current_run
        if run is None:
            return "the current model"
        return f"run #{run.number}, {run.title}" if long else f"run #{run.number}"

    def row_form(self) -> RowForm | None:
        """Open Run → Test a row for the model on screen (None if there is none)."""
        win = self.window
        run = win.current_run
        if run is None or not is_model(run.tree) or win.running:
            return None
        rows = win.state.data_of(run)
        frame = rows.raw.frame if rows is not None else None
        form = RowForm(run.tree, self._source(), lambda row: self.light_row(
            row, "This row"), win, first_row_values(run.tree, frame),
            seen_values(run.tree, frame))
        form.setAttribute(Qt.WA_DeleteOnClose)
        form.show()
        return form

    def predict_dialog(self) -> PredictDialog | None:
        """Open Run → Predict a file for the model on screen (None if there is none)."""
        win = self.window
        run = win.current_run
        if run is None or not is_model(run.tree) or win.running:
            return None
        dialog = PredictDialog(run.tree, self._source(long=True), win)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        dialog.show()
        return dialog

    # ------------------------------------------------------------- node menu
    def open_node_menu(self, node: int, where) -> None:
        """Right-click on a node: its rows, and the edits it allows (a popup, so the
        window goes on; `node_menu` is the last one)."""
        win = self.window
        run, tree = win.current_run, win.tree
        menu = self.node_menu = QMenu(win)
        menu.setAttribute(Qt.WA_DeleteOnClose)
        menu.addAction("Show its rows", lambda: self.show_node(node))
        if isinstance(tree, Tree):   # Alt+click folds too, where the desktop leaves it
            folded = node in win.view.collapsed_nodes()
            menu.addAction("Unfold its subtree" if folded else "Fold its subtree",
                           lambda: win.view.toggle_collapsed(node)) \
                .setEnabled(not tree.is_leaf(node))
        if run is not None and tree is run.tree and getattr(tree, "regression", False):
            menu.addSeparator()
            menu.addAction("Editing a regression tree by hand is not in Orchard yet") \
                .setEnabled(False)
        if TreeEditor.editable(run) and tree is run.tree and not win.running:
            menu.addSeparator()
            leaf = tree.is_leaf(node)
            menu.addAction("Split by hand…" if leaf else "Change its split by hand…",
                           lambda: self.open_split_dialog(node))
            menu.addAction("Optimise below this split", lambda: self.optimise_node(node)) \
                .setEnabled(not leaf)
            menu.addAction("Re-solve this subtree optimally",
                           lambda: self.resolve_node(node))
            menu.addAction("Collapse into a leaf", lambda: self.collapse_node(node)) \
                .setEnabled(not leaf)
            menu.addSeparator()
            menu.addAction(win.undo_action)
            menu.addAction(win.redo_action)
        menu.popup(where)

    def collapse_node(self, node: int) -> None:
        """Collapse a node of the run on screen into a leaf (a new run, undoable)."""
        win = self.window
        if not win.running and win.current_run is not None:
            win.editor.collapse(win.current_run, node)

    def _training_rows(self, run, what: str):
        """The dataset `run` trained on, or None with the reason in a dialog."""
        rows = self.window.state.data_of(run)
        if rows is None:
            self.window.show_error(f"{what} needs the rows run #{run.number} was trained "
                                   f"on: open {run.dataset_name or 'its data file'} with "
                                   "the same options, then try again.")
            return None
        return rows.dataset

    def _editable_run(self):
        win = self.window
        run = win.current_run
        return None if win.running or run is None or not TreeEditor.editable(run) else run

    def resolve_node(self, node: int) -> None:
        """Re-solve the subtree under a node of the run on screen on the rows that
        reach it (the data loaded must be the run's)."""
        run = self._editable_run()
        data = run and self._training_rows(run, "Re-solving")
        if data is not None:
            self.window.editor.resolve(run, node, data, self.window.time_limit())

    def optimise_node(self, node: int) -> None:
        """Keep a node's split and grow optimal subtrees under both its sides."""
        run = self._editable_run()
        data = run and self._training_rows(run, "Optimising below a split")
        if data is not None:
            self.window.editor.optimise_below(run, node, data, self.window.time_limit())

    def open_split_dialog(self, node: int) -> SplitDialog | None:
        """Split by hand: the node's candidate splits ranked, in a dialog that belongs
        to the run on screen (it closes when another run is selected)."""
        run = self._editable_run()
        data = run and self._training_rows(run, "Splitting by hand")
        if data is None:
            return None
        self._close_split_dialog()

        def chosen(candidate, optimise: bool) -> None:
            win = self.window
            if win.current_run is not run or win.running:
                win.set_status(f"Run #{run.number} is no longer on screen: its split was "
                               "not made.")
                return
            record = win.editor.split(run, node, data, candidate)
            if record is not None and optimise:
                win.editor.optimise_below(record, node, data, win.time_limit())

        dialog = self.split_dialog = SplitDialog(run, node, data, chosen, self.window)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        dialog.destroyed.connect(lambda: setattr(self, "split_dialog", None)
                                 if self.split_dialog is dialog else None)
        dialog.show()
        return dialog

    def _close_split_dialog(self, selected=None) -> None:
        dialog = self.split_dialog
        if dialog is not None and (selected is None or selected is not dialog.run):
            self.split_dialog = None
            dialog.close()
