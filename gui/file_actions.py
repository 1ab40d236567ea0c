"""What the File menu writes and reads besides data: the selected run's exports
(picture, rules and code, report) and sessions.

Every export is of the selected run (`AppState.selected`), named after the file
that run trained on, so an older run's export never takes the name of the file
open now.  Folders are remembered per kind (`gui.settings`).  Any failure is one
sentence in a dialog; success, one line in the status bar.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QFileDialog

from gui import settings as user_settings
from gui.app_state import AppState
from gui.export_dialog import EXPORT_FOLDER, ExportDialog, last_export_folder
from gui.history_export import write_history_csv
from gui.image_export import FORMATS as IMAGE_FORMATS
from gui.image_export import save_tree_image
from gui.models import is_model
from gui.run_report import save_report
from gui.session import SUFFIX as SESSION_SUFFIX
from gui.session import Session, load_session, save_session
from gui.worker import error_message
from resources import SAMPLES_DIR

try:  # the text exports (rules, code, ...) come with the engine's export package
    from engine.export import WRITERS as EXPORT_WRITERS
    from engine.export import write_export
except ImportError:  # pragma: no cover - depends on the engine's version
    EXPORT_WRITERS, write_export = {}, None

# Export kind -> (menu text, file extension); kinds not listed use their own name.
EXPORT_KINDS = {
    "rules": ("Rules as text…", "txt"),
    "python": ("Python function…", "py"),
    "sql": ("SQL expression…", "sql"),
    "dot": ("Graphviz DOT…", "dot"),
    "json": ("Orchard model (JSON)…", "json"),
}


class FileActions(QObject):
    def __init__(self, window, state: AppState):
        super().__init__(window)
        self.win, self.state = window, state
        self.export_dialog: ExportDialog | None = None

    @property
    def model(self):
        """The selected run's model (None without one)."""
        run = self.state.selected
        return run.tree if run is not None and is_model(run.tree) else None

    # ------------------------------------------------------------- names
    def _export_folder(self) -> str:
        """The last export folder, else the run's data folder (never the installed
        samples folder), else home."""
        path = self._data_path()
        beside = path is not None and path.parent.is_dir() and \
            path.resolve().parent != SAMPLES_DIR
        return last_export_folder(path.parent if beside else Path.home())

    def _data_path(self) -> Path | None:
        run = self.state.selected
        if run is not None and run.data_path:
            return Path(run.data_path)
        return self.state.draft.path

    def _base_name(self) -> str:
        path = self._data_path()
        return path.stem if path is not None else "tree"

    def _suggested_name(self, ext: str) -> str:
        return str(Path(self._export_folder()) / f"{self._base_name()}-tree.{ext}")

    def _save(self, write, done: str, kind: str | None = EXPORT_FOLDER, path=None) -> bool:
        """Run an export; any failure becomes a dialog, success a status message."""
        try:
            write()
        except Exception as exc:  # noqa: BLE001 - shown to the user
            self.win.show_error(error_message(exc))
            return False
        if kind is not None and path is not None:
            user_settings.remember_folder(kind, path)
        self.win.set_status(done)
        return True

    # ----------------------------------------------------------- exports
    def export_dialog_all(self) -> ExportDialog | None:
        """The Export dialog (formats, previews, one folder); returned for tests."""
        if self.model is None:
            return None
        dialog = ExportDialog(self.model, self._export_folder(), self._base_name(),
                              self.win.show_error, self.win)
        dialog.exported.connect(self._exported)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        self.export_dialog = dialog
        dialog.open()
        return dialog

    def _exported(self, paths: list) -> None:
        if paths:   # the dialog remembers its folder itself
            self.win.set_status(f"Exported {len(paths)} file(s) to {paths[0].parent}: "
                                + ", ".join(p.name for p in paths))

    def export_image_dialog(self) -> None:
        if self.model is None:
            return
        filters = ";;".join(f"{text} (*{ext})" for ext, text in IMAGE_FORMATS.items())
        path, chosen = QFileDialog.getSaveFileName(self.win, "Export the tree as a picture",
                                                   self._suggested_name("png"), filters)
        if not path:
            return
        if Path(path).suffix.lower() not in IMAGE_FORMATS:
            ext = next((e for e, t in IMAGE_FORMATS.items() if chosen.startswith(t)), ".png")
            path += ext
        self.export_image(path)

    def export_image(self, path: str | Path) -> bool:
        model = self.model
        return model is not None and self._save(
            lambda: save_tree_image(model, path, **self.win.view.display_options()),
            f"Saved the picture of the tree to {path}.", path=path)

    def export_kind_dialog(self, kind: str) -> None:
        if self.model is None:
            return
        text, ext = EXPORT_KINDS.get(kind, (kind, kind))
        path, _ = QFileDialog.getSaveFileName(
            self.win, f"Export the tree: {text.rstrip('…')}", self._suggested_name(ext),
            f"{text.rstrip('…')} (*.{ext});;All files (*)")
        if path:
            self.export(kind, path)

    def export(self, kind: str, path: str | Path) -> bool:
        model = self.model
        return model is not None and self._save(lambda: write_export(model, path, kind),
                                                f"Exported the tree to {path}.", path=path)

    def report_dialog(self) -> None:
        run = self.state.selected
        if run is None:
            return
        path, _ = QFileDialog.getSaveFileName(
            self.win, "Save a report of this run", self._suggested_name("html").replace(
                "-tree.html", f"-run{run.number}.html"),
            "HTML page (*.html);;All files (*)")
        if path:
            self.save_report(path)

    def save_report(self, path: str | Path) -> bool:
        """Write the HTML report of the selected run to `path`."""
        run = self.state.selected
        return run is not None and self._save(
            lambda: save_report(run, path),
            f"Saved the report of run #{run.number} to {path}.", path=path)

    def export_history_dialog(self) -> None:
        if not self.state.runs:
            return
        path, _ = QFileDialog.getSaveFileName(
            self.win, "Export the history as CSV", self._suggested_name("csv").replace(
                "-tree.csv", "-history.csv"), "CSV file (*.csv);;All files (*)")
        if path:
            self.export_history(path)

    def export_history(self, path: str | Path) -> bool:
        """Write every run of the history (numbers, names, notes) to `path` as CSV."""
        runs = list(self.state.runs)
        return bool(runs) and self._save(
            lambda: write_history_csv(path, runs),
            f"Exported the history ({len(runs)} run{'s' * (len(runs) != 1)}) to {path}.",
            path=path)

    # ---------------------------------------------------------- sessions
    def session(self) -> Session:
        draft, win = self.state.draft, self.win
        return Session(str(draft.path.resolve()) if draft.path else None,
                       win.data.data_settings() if draft.raw is not None else {},
                       win.algo_panel.settings(), win.evaluation_box.settings(),
                       list(self.state.runs))

    def save_session(self, path: str | Path) -> bool:
        path = Path(path)
        saved = self._save(lambda: save_session(self.session(), path),
                           f"Saved the session to {path}.", kind="session", path=path)
        if saved:
            self.state.mark_saved()
        return saved

    def save_session_dialog(self) -> None:
        """Sessions go where the user last kept one (the data's folder only the first
        time: it may be a shared or read-only folder), named after the data file."""
        draft = self.state.draft.path
        folder = user_settings.last_folder("session") or (draft.parent if draft else
                                                          Path.home())
        start = Path(folder) / ((draft.stem if draft else "session") + SESSION_SUFFIX)
        path, _ = QFileDialog.getSaveFileName(self.win, "Save the session", str(start),
                                              f"Orchard sessions (*{SESSION_SUFFIX})")
        if path:
            self.save_session(path if path.endswith(".json") else path + SESSION_SUFFIX)

    def open_session_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.win, "Open a session",
                                              user_settings.last_folder("session"),
                                              f"Orchard sessions (*{SESSION_SUFFIX} *.json)")
        if path:
            self.open_session(path)

    def open_session(self, path: str | Path) -> bool:
        """Restore settings and runs, and read the session's data file again."""
        win = self.win
        if win.loading or win.running:
            win.show_error("Please wait until the current task has finished "
                           "(or stop the run) before opening a session.")
            return False
        try:
            session = load_session(path)
        except Exception as exc:  # noqa: BLE001 - shown to the user
            win.show_error(error_message(exc))
            return False
        win.algo_panel.apply_settings(session.algorithm_settings)
        win.evaluation_box.apply_settings(session.evaluation)
        win.editor.forget()
        win.validator.stop()   # its run is no longer listed
        self.state.set_runs(session.runs)
        if session.runs:
            win.show_run(session.runs[-1], switch_tab=False)
        data = session.data_file(path)
        if data is not None:
            win.data.load_path(data, settings=session.data_settings)
        elif session.data_path:
            win.show_error(f"The session's data file '{session.data_path}' no longer "
                           "exists; its runs are shown but cannot be run again.")
        self.state.mark_saved()
        win.set_status(f"Opened the session {Path(path).name} "
                       f"({len(session.runs)} runs).")
        win.update_controls()
        return True
