"""Editing the tree on screen by hand: split a node, collapse one, re-solve a subtree
or optimise below a split, undo, redo.

A thin layer over `engine.editing`: every edit makes a new run (`RunRecord.edited`)
that the history lists next to the one it came from, so what the window shows always
belongs to one run and says which ("#5 Blossom on loans.csv, #3 edited").  Undo
belongs to the selected run: it takes that run out of the history when it is an edit
nothing was edited from since, and shows the run it came from; redo puts back the
edit last undone on the selected run.  An edit on another run, or another file, is
never undone from here.  Splitting and collapsing are at once; re-solving and
optimising below a split train a solver, so they run in a worker with their own
Monitor (the window's time limit; Stop cancels it) and report one sentence when they
end.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from engine.data.features import format_count
from engine.editing import collapse, node_text, optimise_below, resolve_subtree
from engine.model.tree import Tree
from engine.splits import Candidate, split_node
from engine.solvers.monitor import Monitor
from gui.runs import RunRecord
from gui.worker import Worker


class TreeEditor(QObject):
    edited = Signal(object)            # the new RunRecord (added to the history)
    undone = Signal(object, object)    # (the run taken out, the run to show)
    busy_changed = Signal(bool)        # a subtree is being re-solved, or no longer
    said = Signal(str)                 # one sentence for the status line
    failed = Signal(str)               # one sentence for an error dialog

    def __init__(self, next_number: Callable[[], int], parent: QObject | None = None):
        super().__init__(parent)
        self._next_number = next_number
        self._done: list[tuple[RunRecord, RunRecord]] = []   # (edit, its parent) to undo
        self._undone: list[tuple[RunRecord, RunRecord]] = []
        self._worker: Worker | None = None

    # ------------------------------------------------------------------ state
    @property
    def busy(self) -> bool:
        return self._worker is not None

    @staticmethod
    def editable(run: RunRecord | None) -> bool:
        """Whether `run`'s tree can be edited by hand: a classification tree (the
        ranked splits, re-solving and collapsing count classes so far)."""
        return run is not None and isinstance(run.tree, Tree) and not run.tree.regression

    def _undoable(self, run: RunRecord | None) -> tuple[RunRecord, RunRecord] | None:
        """(run, its parent) when `run` is an edit made here and nothing was edited
        from it since."""
        if run is None or self.busy or any(parent is run for _, parent in self._done):
            return None
        return next((entry for entry in self._done if entry[0] is run), None)

    def _redoable(self, run: RunRecord | None) -> tuple[RunRecord, RunRecord] | None:
        """(edit, `run`) for the edit last undone on `run`."""
        if run is None or self.busy:
            return None
        return next((entry for entry in reversed(self._undone) if entry[1] is run), None)

    def can_undo(self, run: RunRecord | None) -> bool:
        return self._undoable(run) is not None

    def can_redo(self, run: RunRecord | None) -> bool:
        return self._redoable(run) is not None

    def forget(self) -> None:
        """Drop undo and redo (a session was opened: its runs are not these edits)."""
        self._done.clear()
        self._undone.clear()

    # ------------------------------------------------------------------ edits
    def collapse(self, run: RunRecord, node: int) -> RunRecord | None:
        """Collapse `node` of `run`'s tree into a leaf (at once: no data needed)."""
        return self._at_once(run, lambda: collapse(run.tree, node))

    def split(self, run: RunRecord, node: int, data, candidate: Candidate
              ) -> RunRecord | None:
        """Split `node` of `run`'s tree by `candidate` (`engine.splits`; `data`, the
        rows it trained on), at once."""
        return self._at_once(run, lambda: split_node(run.tree, data, node, candidate))

    def _at_once(self, run: RunRecord, edit: Callable[[], Tree]) -> RunRecord | None:
        """A new run from `edit()` of `run`'s tree, or None with its error said."""
        if self.busy or not self.editable(run):
            return None
        start = time.perf_counter()
        try:
            tree = edit()
        except Exception as exc:  # noqa: BLE001 - one sentence to the user
            self.failed.emit(str(exc))
            return None
        record = run.edited(self._next_number(), tree, time.perf_counter() - start)
        self._add(record, run)
        self.said.emit(f"{record.label}: {tree.edits[-1]}; training error "
                       f"{format_count(run.train_error)} → "
                       f"{format_count(record.train_error)}.")
        return record

    def resolve(self, run: RunRecord, node: int, data, time_limit: float | None) -> None:
        """Re-solve the subtree under `node` on `data` (the rows `run` trained on) in
        the background; `edited` follows if the error went down, `said` in any case."""
        self._solve(run, resolve_subtree, node, data, time_limit,
                    f"Re-solving {node_text(run.tree, node)}")

    def optimise_below(self, run: RunRecord, node: int, data,
                       time_limit: float | None) -> None:
        """Keep `node`'s split and re-solve the subtrees under both its children, in
        the background (`engine.editing.optimise_below`)."""
        self._solve(run, optimise_below, node, data, time_limit,
                    f"Optimising below {node_text(run.tree, node)}")

    def _solve(self, run: RunRecord, fn, node: int, data, time_limit: float | None,
               doing: str) -> None:
        if self.busy or not self.editable(run):
            return
        monitor = Monitor(time_limit)
        worker = Worker(fn, run.tree, data, node, run.depth_limit, monitor,
                        params=run.params, on_cancel=monitor.cancel, name="orchard-resolve")
        start = time.perf_counter()
        worker.finished.connect(
            lambda out: self._resolved(run, out, time.perf_counter() - start))
        worker.errored.connect(self._resolve_failed)
        worker.cancelled.connect(lambda: self._resolve_failed(""))
        self._worker = worker
        self.busy_changed.emit(True)
        self.said.emit(f"{doing} of run #{run.number} on the rows that reach it… (Stop "
                       "keeps the tree as it is)")
        worker.start()

    def stop(self) -> None:
        if self._worker is not None:
            self._worker.cancel()

    def _end(self) -> None:
        self._worker = None
        self.busy_changed.emit(False)

    def _resolved(self, run: RunRecord, out, seconds: float) -> None:
        self._end()
        if out.improved:
            record = run.edited(self._next_number(), out.tree, seconds)
            self._add(record, run)
        self.said.emit(out.summary())

    def _resolve_failed(self, message: str) -> None:
        self._end()
        if message:
            self.failed.emit(message)
        else:
            self.said.emit("Stopped before a better subtree was found; the tree is "
                           "unchanged.")

    def _add(self, record: RunRecord, parent: RunRecord) -> None:
        """A new edit of `parent`: the edits undone on it can no longer be redone."""
        self._done.append((record, parent))
        self._undone = [entry for entry in self._undone if entry[1] is not parent]
        self.edited.emit(record)

    # ------------------------------------------------------------------ undo
    def undo(self, run: RunRecord | None) -> None:
        """Undo the edit that made `run` (the selected run), if it is one."""
        entry = self._undoable(run)
        if entry is None:
            return
        record, parent = entry
        self._done.remove(entry)
        self._undone.append(entry)
        self.undone.emit(record, parent)
        self.said.emit(f"Undone: {record.tree.edits[-1]} (run #{record.number} removed); "
                       f"run #{parent.number} is shown again.")

    def redo(self, run: RunRecord | None) -> None:
        """Make again the edit last undone on `run` (the selected run)."""
        entry = self._redoable(run)
        if entry is None:
            return
        record, parent = entry
        self._undone.remove(entry)
        self._done.append(entry)
        self.edited.emit(record)
        self.said.emit(f"Redone: {record.tree.edits[-1]} (run #{record.number}).")
