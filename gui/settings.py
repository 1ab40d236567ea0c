"""Persistent user settings (recent files, last folders) in one INI file per user.

The file lives where Qt keeps per-user INI settings (`QSettings.setPath` moves it,
which is how tests keep it away from the user's own), under the organisation and
application names below.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings

ORGANISATION = "Orchard"
APPLICATION = "Orchard"
MAX_RECENT = 8
RECENT_KEY = "recent_files"


def app_settings() -> QSettings:
    return QSettings(QSettings.IniFormat, QSettings.UserScope, ORGANISATION, APPLICATION)


def as_list(value) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value else []
    return [str(v) for v in value]


def recent_files() -> list[str]:
    """Most recently opened first; files that no longer exist are left out."""
    return [p for p in as_list(app_settings().value(RECENT_KEY)) if Path(p).is_file()]


def add_recent_file(path: str | Path) -> list[str]:
    path = str(Path(path).resolve())
    files = [path] + [p for p in recent_files() if p != path]
    files = files[:MAX_RECENT]
    settings = app_settings()
    settings.setValue(RECENT_KEY, files)
    settings.sync()
    return files


def clear_recent_files() -> None:
    settings = app_settings()
    settings.remove(RECENT_KEY)
    settings.sync()


def last_folder(kind: str) -> str:
    return str(app_settings().value(f"folders/{kind}", "") or "")


def remember_folder(kind: str, path: str | Path) -> None:
    settings = app_settings()
    settings.setValue(f"folders/{kind}", str(Path(path).parent))


def ask_before_quit() -> bool:
    """Whether closing the window with unsaved runs asks first (the default; tests
    that close windows by the hundred turn it off)."""
    return str(app_settings().value("ask_before_quit", "true")).lower() != "false"
