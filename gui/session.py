"""Save and reopen a working session as one JSON document (`*.orchard.json`).

A session holds the data file's path (absolute, and relative to the session file so
a folder can be moved as a whole), every data and algorithm setting, and the
finished runs with their figures, anytime curves and models.  Each run keeps the
data file it trained on (path and name), so a session whose runs used several
files lists each under its own; runs saved before that get the session's file.  Reopening reads the
data again with the saved settings and restores the history; if the data file is
gone, the runs are still shown.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.errors import DataError
from engine.export.files import write_atomically
from gui.runs import RunRecord

FORMAT = "orchard-session"
VERSION = 1
SUFFIX = ".orchard.json"


@dataclass
class Session:
    data_path: str | None = None
    data_settings: dict[str, Any] = field(default_factory=dict)
    algorithm_settings: dict[str, Any] = field(default_factory=dict)
    evaluation: dict[str, Any] | None = None
    runs: list[RunRecord] = field(default_factory=list)
    data_relative: str | None = None    # data path relative to the session file

    def to_dict(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "data_path": self.data_path,
                "data_relative": self.data_relative, "data_settings": self.data_settings,
                "algorithm_settings": self.algorithm_settings,
                "evaluation": self.evaluation, "runs": [r.to_dict() for r in self.runs]}

    @classmethod
    def from_dict(cls, d: dict) -> Session:
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise DataError("This file is not an Orchard session.")
        if int(d.get("version", 0)) > VERSION:
            raise DataError("This session was saved by a newer Orchard; please upgrade.")
        try:
            runs = [RunRecord.from_dict(r) for r in d.get("runs", [])]
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"The session file is damaged (a run lacks {exc}).") from None
        _claim_old_runs(runs, d.get("data_path"), dict(d.get("data_settings") or {}))
        return cls(d.get("data_path"), dict(d.get("data_settings") or {}),
                   dict(d.get("algorithm_settings") or {}), d.get("evaluation"), runs,
                   d.get("data_relative"))

    def data_file(self, session_path: str | Path) -> Path | None:
        """The data file to reopen: the saved path, else relative to the session."""
        if self.data_path and Path(self.data_path).is_file():
            return Path(self.data_path)
        if self.data_relative:
            candidate = Path(session_path).parent / self.data_relative
            if candidate.is_file():
                return candidate.resolve()
        return None


def _claim_old_runs(runs: list[RunRecord], data_path: str | None,
                    data_settings: dict[str, Any]) -> None:
    """Runs saved before each run kept its own file: give them the session's file.

    A run's name comes from its own settings when they have one (`RunRecord.from_dict`),
    else from the session's; the session's path goes only to runs of that file name.
    """
    session_name = data_settings.get("file") or (Path(data_path).name if data_path else "")
    for run in runs:
        if not run.data_name:
            run.data_name = str(session_name or "")
        if run.data_path is None and data_path and run.data_name == Path(data_path).name:
            run.data_path = data_path


def save_session(session: Session, path: str | Path) -> None:
    path = Path(path)
    if session.data_path:
        try:
            session.data_relative = os.path.relpath(Path(session.data_path).resolve(),
                                                    path.resolve().parent)
        except ValueError:  # another drive (Windows)
            session.data_relative = None
    text = json.dumps(session.to_dict(), indent=1)
    write_atomically(path, lambda temporary: Path(temporary).write_text(text,
                                                                        encoding="utf-8"))


def load_session(path: str | Path) -> Session:
    path = Path(path)
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"The session file '{path}' does not exist.") from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise DataError(f"The file '{path.name}' is not an Orchard session "
                        "(it is not valid JSON).") from None
    return Session.from_dict(d)


def is_session_file(path: str | Path) -> bool:
    name = Path(path).name.lower()
    if name.endswith(SUFFIX):
        return True
    if not name.endswith(".json"):
        return False
    try:
        with open(path, encoding="utf-8") as handle:
            head = handle.read(200)
    except OSError:
        return False
    return f'"format": "{FORMAT}"' in head
