"""PyInstaller's own PySide6.QtGui hook, minus the Qt plugins a desktop window never
loads: embedded-device platforms (EGLFS, framebuffer, VNC) with their input drivers,
and the GTK3 theme (GTK is half collected at best; Qt's dialogs serve instead).

Leaving them out here, before PyInstaller follows library dependencies, also leaves out
the libraries only they need (GTK, cairo, pango, QtNetwork, ...).  File names of
Windows and macOS plugins never match, so their builds are unaffected.
"""

from pathlib import Path

from PyInstaller.utils.hooks.qt import add_qt6_dependencies

UNUSED_TYPES = {"generic", "egldeviceintegrations"}
UNUSED_NAMES = ("eglfs", "linuxfb", "vnc", "vkkhrdisplay", "minimalegl", "gtk3")

hiddenimports, binaries, datas = add_qt6_dependencies(__file__)
binaries = [(source, folder) for source, folder in binaries
            if Path(folder).name not in UNUSED_TYPES
            and not any(name in Path(source).name for name in UNUSED_NAMES)]
