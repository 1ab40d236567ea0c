"""The window's application state, in plain Python: what the user is preparing (the
draft) and what has been run (the runs, one of them selected).

Why a model apart from the widgets: the window used to keep "the tree on screen",
"the loaded table" and "the prepared dataset" as loose attributes that loading a
file, changing the target or selecting an older run each changed a part of, so a
run's tree could be drawn over another file's rows.  Here the rule is structural
(napari's `ViewerModel`, Orange's widgets): the views observe this object and render
the *selected run* from what that run owns; editing settings changes only the
draft, and a run captures the draft as it is when Run is pressed.

Who may change what:
- the data controller (`gui.data_controller`) sets the draft's table and its
  preparation (`set_table`, `set_prepared`, `clear_prepared`);
- the run controller (`gui.run_controller`) adds finished runs with the rows they
  trained on (`add_run`), the validation controller says when a run's accuracy on
  new rows is attached (`update_run`), the tree editor adds and removes edits;
- the history and sessions select (`select`), sessions replace the runs (`set_runs`).
Nothing here imports Qt; `tests/test_app_state.py` checks it alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from engine.data.csv_reader import RawTable
from engine.data.dataset import Dataset
from gui.data_tasks import Prepared
from gui.runs import RunRecord

# How many prepared tables older runs keep in memory besides the draft's: a run
# beyond them still shows its tree and figures, and gets its rows back when its
# file is opened again with its settings (`data_of`).
KEPT_DATASETS = 4


class Event:
    """A list of callbacks (napari's EventEmitter in miniature, without Qt)."""

    def __init__(self) -> None:
        self._callbacks: list[Callable] = []

    def connect(self, callback: Callable) -> None:
        self._callbacks.append(callback)

    def emit(self, *args) -> None:
        for callback in list(self._callbacks):
            callback(*args)


@dataclass
class RunData:
    """The rows a run trained on, as it saw them: the table read from its file and
    the dataset prepared from it with the run's settings."""

    path: Path | None
    raw: RawTable
    dataset: Dataset
    settings: dict


@dataclass
class Draft:
    """What the user is setting up: the file read, and its latest preparation."""

    path: Path | None = None
    raw: RawTable | None = None
    infos: list = field(default_factory=list)
    prep: Prepared | None = None
    settings: dict = field(default_factory=dict)   # the data settings `prep` used

    @property
    def dataset(self) -> Dataset | None:
        return self.prep.dataset if self.prep is not None else None

    def run_data(self) -> RunData | None:
        """The rows a run started now would own (None without a training set)."""
        if self.raw is None or self.dataset is None:
            return None
        return RunData(self.path, self.raw, self.dataset, dict(self.settings))


class AppState:
    """The draft, the runs and the one selected run; see the module doc."""

    def __init__(self) -> None:
        self.draft = Draft()
        self.runs: list[RunRecord] = []
        self.selected: RunRecord | None = None
        self._data: dict[int, RunData] = {}     # run number -> its rows, when kept
        self._last_number = 0
        # number -> (record, tested, name, note) as saved
        self._saved: dict[int, tuple[int, bool, str, str]] = {}
        self.draft_changed = Event()            # (Draft) a table read or prepared again
        self.runs_changed = Event()             # (list of runs)
        self.selection_changed = Event()        # (RunRecord or None)
        self.run_updated = Event()              # (RunRecord) its test accuracy arrived
        # The tuning whose choice was put in the panel: (table, algorithm, its summary)
        self._tuning: tuple | None = None

    # ------------------------------------------------------------------ draft
    def set_table(self, path: Path | None, raw: RawTable, infos: list) -> None:
        self.draft = Draft(path, raw, list(infos), None)
        self.draft_changed.emit(self.draft)

    def set_prepared(self, prep: Prepared, settings: dict) -> None:
        self.draft.prep, self.draft.settings = prep, dict(settings)
        self.draft_changed.emit(self.draft)

    def clear_prepared(self) -> None:
        """The draft's options changed: its dataset is stale until prepared again."""
        if self.draft.prep is not None:
            self.draft.prep = None
            self.draft_changed.emit(self.draft)

    # ------------------------------------------------------------------- runs
    def add_run(self, run: RunRecord, data: RunData | None) -> None:
        """A finished run (or an edit by hand) with the rows it trained on."""
        self.runs.append(run)
        if data is not None:
            self._data[run.number] = data
            self._release_old_data()
        self.runs_changed.emit(self.runs)

    def update_run(self, run: RunRecord) -> None:
        """A listed run's record gained what was computed after it (its accuracy on
        new rows); a run no longer listed (a session opened since) is let go."""
        if any(r is run for r in self.runs):
            self.run_updated.emit(run)

    def remove_run(self, number: int) -> None:
        self.runs = [r for r in self.runs if r.number != number]
        self._data.pop(number, None)
        if self.selected is not None and self.selected.number == number:
            self.selected = None
            self.selection_changed.emit(None)
        self.runs_changed.emit(self.runs)

    def set_runs(self, runs: list[RunRecord]) -> None:
        """A session's runs (their rows come back when their file is opened)."""
        self.runs, self._data = list(runs), {}
        self.selected = None
        self.runs_changed.emit(self.runs)
        self.selection_changed.emit(None)

    def mark_saved(self) -> None:
        """The runs as they are now are in a session file (saved or just opened)."""
        self._saved = {r.number: self._as_saved(r) for r in self.runs}

    @staticmethod
    def _as_saved(run: RunRecord) -> tuple[int, bool, str, str]:
        return id(run), run.evaluation is not None, run.name, run.note

    def unsaved_runs(self) -> list[RunRecord]:
        """The runs a session saved now would add or change: new ones, those whose
        accuracy on new rows arrived after the last save, and those named or annotated
        since."""
        return [r for r in self.runs if self._saved.get(r.number) != self._as_saved(r)]

    def adopt_tuning(self, raw, algorithm: str, summary: dict | None) -> None:
        """Tune's "Use this setting": a run of that setting on that table carries it
        (None: a setting put in the panel without a tuning)."""
        self._tuning = None if summary is None else (raw, algorithm, summary)

    def tuning_for(self, raw, algorithm: str, params: dict) -> dict | None:
        """The adopted tuning's summary when a run of `algorithm` with `params` on
        table `raw` is the setting it chose (else None)."""
        if self._tuning is None:
            return None
        table, tuned, summary = self._tuning
        chosen = summary.get("chosen_params", {})
        same = table is raw and tuned == algorithm and all(
            params.get(k) == v for k, v in chosen.items())
        return summary if same else None

    def run(self, number: int) -> RunRecord | None:
        return next((r for r in self.runs if r.number == number), None)

    def take_number(self) -> int:
        """The next run's number: after every run listed and every number taken
        (a failed run and an undone edit spend theirs)."""
        self._last_number = max(self._last_number, *(r.number for r in self.runs), 0) + 1
        return self._last_number

    def select(self, run: RunRecord | None) -> None:
        if run is not self.selected:
            self.selected = run
            self.selection_changed.emit(run)

    # ------------------------------------------------------------- run rows
    def data_of(self, run: RunRecord | None) -> RunData | None:
        """The rows `run` trained on: those it kept, else the draft's when the draft
        is its file prepared with its settings (a session's run, its file reopened);
        None when they are not in memory."""
        if run is None:
            return None
        kept = self._data.get(run.number)
        if kept is None and run.edited_from is not None:
            kept = self._data.get(run.edited_from)
        if kept is not None:
            return kept
        draft = self.draft
        if draft.dataset is None or draft.path is None or not run.data_path \
                or str(draft.path.resolve()) != run.data_path:
            return None
        if not same_preparation(run.data_settings, draft.settings):
            return None
        return RunData(draft.path, draft.raw, draft.dataset, dict(run.data_settings))

    def _release_old_data(self) -> None:
        """Keep the rows of the newest runs only (a prepared table at millions of rows
        is hundreds of MB); the selected run's are always kept."""
        distinct: list[int] = []
        for number in sorted(self._data, reverse=True):
            dataset = self._data[number].dataset
            if any(self._data[n].dataset is dataset for n in distinct):
                continue
            distinct.append(number)
        keep = set(distinct[:KEPT_DATASETS + 1])
        if self.selected is not None:
            keep.add(self.selected.number)
        for number in list(self._data):
            dataset = self._data[number].dataset
            if not any(self._data[k].dataset is dataset for k in keep if k in self._data):
                del self._data[number]


# The settings that decide which rows and features a run trained on.
PREPARATION_KEYS = ("target", "missing", "binarize", "columns", "drop_inconsistent",
                    "merge_duplicates", "remove_redundant", "class_weight")


def same_preparation(a: dict, b: dict) -> bool:
    """Two runs' data settings prepare the same dataset from the same file."""
    return all((a.get(k) or None) == (b.get(k) or None) for k in PREPARATION_KEYS)
