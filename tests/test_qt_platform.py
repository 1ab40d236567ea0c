"""A missing X11 library is one sentence and exit status 2, not Qt's abort."""

from __future__ import annotations

import ctypes
import os
import re

import pytest

import gui.app
from gui import qt_platform


@pytest.fixture
def x11(monkeypatch):
    monkeypatch.setattr(qt_platform.sys, "platform", "linux")
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("DISPLAY", ":0")


def fail_with(message):
    def load(path):
        raise OSError(message)
    return load


@pytest.mark.parametrize("library, package", [
    ("libxcb-icccm.so.4", "libxcb-icccm4"),
    ("libxcb-keysyms.so.1", "libxcb-keysyms1"),
    ("libxcb-image.so.0", "libxcb-image0"),
    ("libxcb-render-util.so.0", "libxcb-render-util0"),
    ("libxkbcommon-x11.so.0", "libxkbcommon-x11-0"),
    ("libxcb-cursor.so.0", "libxcb-cursor0"),
    ("libX11-xcb.so.1", "libx11-xcb1"),
    ("libEGL.so.1", "libegl1"),
])
def test_a_missing_library_is_named_with_its_package(x11, monkeypatch, library, package):
    monkeypatch.setattr(qt_platform, "_load", fail_with(
        f"{library}: cannot open shared object file: No such file or directory"))
    message = qt_platform.missing_platform_library()
    assert message.count(".") >= 1 and "\n" not in message
    assert library in message and f"apt-get install {package})" in message
    assert "orchard fit DATA" in message


def test_the_cause_of_a_reworded_error_is_read(x11, monkeypatch):
    """PyInstaller's ctypes raises its own OSError from the loader's."""
    def load(path):
        try:
            raise OSError("libxcb.so.1: cannot open shared object file: No such file")
        except OSError as cause:
            raise OSError("Failed to load dynlib/dll 'libqxcb.so'.") from cause
    monkeypatch.setattr(qt_platform, "_load", load)
    assert "apt-get install libxcb1)" in qt_platform.missing_platform_library()


def test_another_loading_error_is_quoted(x11, monkeypatch):
    monkeypatch.setattr(qt_platform, "_load", fail_with("undefined symbol: xcb_foo"))
    assert "undefined symbol: xcb_foo" in qt_platform.missing_platform_library()


def test_the_verdict_on_this_machine_is_true(x11):
    """Whether or not this machine has the X11 libraries (CI machines may lack them),
    the check says what an independent load finds: nothing when Qt's xcb plugin loads
    with all its libraries, else a library that really cannot be loaded."""
    plugin = qt_platform._xcb_plugin()
    assert plugin is not None
    message = qt_platform.missing_platform_library()
    try:
        ctypes.CDLL(str(plugin), mode=os.RTLD_NOW)
        loads = True
    except OSError:
        loads = False
    assert (message is None) == loads, message
    if message is not None:
        named = re.search(r"library (\S+\.so[.\d]*)", message)
        assert named, message
        with pytest.raises(OSError):
            ctypes.CDLL(named.group(1))


@pytest.mark.parametrize("setting", [
    {"QT_QPA_PLATFORM": "offscreen"}, {"DISPLAY": ""}, {"WAYLAND_DISPLAY": "wayland-0"}])
def test_not_checked_where_xcb_is_not_used(x11, monkeypatch, setting):
    monkeypatch.setattr(qt_platform, "_load", fail_with("x.so.1: cannot open shared object file"))
    for name, value in setting.items():
        monkeypatch.setenv(name, value)
    assert qt_platform.missing_platform_library() is None


def test_not_checked_on_other_systems(x11, monkeypatch):
    monkeypatch.setattr(qt_platform.sys, "platform", "win32")
    monkeypatch.setattr(qt_platform, "_load", fail_with("x.so.1: cannot open shared object file"))
    assert qt_platform.missing_platform_library() is None


def test_the_app_says_it_in_one_line_and_exits_2(x11, monkeypatch, capsys):
    monkeypatch.setattr(qt_platform, "_load", fail_with(
        "libxcb-icccm.so.4: cannot open shared object file: No such file or directory"))
    assert gui.app.main([]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "libxcb-icccm4" in err
