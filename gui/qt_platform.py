"""Whether Qt can open a window here, asked before Qt tries (and aborts the process).

On Linux, Qt draws through its xcb platform plugin, which needs a dozen X11 client
libraries that minimal systems lack.  When one is missing, Qt prints a screenful of
advice and aborts with a core dump.  Loading the plugin ourselves first turns that
into one sentence naming the missing library, its Debian/Ubuntu package and how to
train without a window.
"""

from __future__ import annotations

import ctypes
import os
import re
import sys
from pathlib import Path

MISSING = re.compile(r"([\w.+-]+\.so(?:\.[\d.]+)?): cannot open shared object file")


def package_of(library: str) -> str:
    """The Debian package of a library by Debian's naming rule: the soname's base in
    lower case followed by its major version, with a hyphen after a base ending in a
    digit (libxcb-icccm.so.4 -> libxcb-icccm4, libxkbcommon-x11.so.0 -> libxkbcommon-x11-0)."""
    base, _, version = library.partition(".so")
    major = version.strip(".").split(".")[0]
    base = base.lower()
    return f"{base}-{major}" if major and base[-1].isdigit() else base + major


def _xcb_plugin() -> Path | None:
    from PySide6.QtCore import QLibraryInfo
    plugins = Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath))
    plugin = plugins / "platforms" / "libqxcb.so"
    return plugin if plugin.is_file() else None


def _load(path: Path) -> None:
    ctypes.CDLL(str(path), mode=os.RTLD_LAZY)


def missing_platform_library() -> str | None:
    """One sentence saying why the window cannot open, or None if it can (or if this
    is not a platform where the check applies: only Linux's xcb is checked)."""
    if not sys.platform.startswith("linux"):
        return None
    platform = os.environ.get("QT_QPA_PLATFORM", "")
    if platform not in ("", "xcb") or not os.environ.get("DISPLAY"):
        return None
    if not platform and os.environ.get("WAYLAND_DISPLAY"):
        return None  # Qt may use Wayland instead
    plugin = _xcb_plugin()
    if plugin is None:
        return None
    try:
        _load(plugin)
    except OSError as error:
        # The frozen app's ctypes (PyInstaller) rewords the error; the loader's own
        # message, which names the library, is its cause.
        reason = str(error.__cause__ or error)
        found = MISSING.search(reason)
        need = (f"the system library {found[1]}, which is missing (on Debian or Ubuntu: "
                f"sudo apt-get install {package_of(found[1])})" if found
                else f"a library it cannot load ({reason[:200]})")
        return (f"Orchard cannot open its window: Qt's X11 display plugin needs {need}; "
                "to train without a window, run 'orchard fit DATA' (or set "
                "QT_QPA_PLATFORM=offscreen).")
    return None
