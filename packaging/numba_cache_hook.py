"""PyInstaller runtime hook: the frozen app's numba kernels come compiled.

It runs before the app's code, because numba reads its settings when it is first
imported.  The build (packaging/build.py) runs the frozen app once to compile every
kernel into `numba_cache/` inside the app, for a generic CPU of the target OS, so
that the cache is valid on any computer the app is copied to.  At every start:

* numba is told to generate code for that same generic CPU (NUMBA_CPU_NAME), without
  which it would key every kernel on this computer's CPU and find none shipped;
* the shipped cache is copied into the user's cache folder the first time a build
  starts (a few MB, once per build: the app folder may be read-only, and the
  one-file app unpacks itself into a new temporary folder at every launch), and
  that copy is the cache numba reads, and writes anything new into;
* a cache locator names each kernel's entry after its module and stamps it with the
  build's stamp: the app version and a digest of the engine's sources, written by
  the build into `numba_cache/STAMP` (not the executable's digest, which code
  signing changes).  numba's own locators would name it after the folder of the
  source file, which in a frozen app is a path relative to the working directory.

ORCHARD_BUILD_KERNEL_CACHE=FOLDER (set by the build) makes FOLDER the cache, so the
build's warm-up run fills it.  Importing numba here also loads LLVM before Qt.
"""

import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

BUILD_VARIABLE = "ORCHARD_BUILD_KERNEL_CACHE"
SHIPPED = Path(getattr(sys, "_MEIPASS", Path(sys.executable).parent)) / "numba_cache"
STAMP_FILE = "STAMP"


def user_cache_dir() -> Path:
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local"
        return Path(local) / "Orchard" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "Orchard"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "orchard"


def read_stamp(folder: Path) -> str:
    try:
        return (folder / STAMP_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def seeded_cache(stamp: str) -> Path:
    """The user's cache of this build: a copy of the shipped cache, made once.

    One folder per build stamp; folders of other builds are removed when a new one
    is seeded.  If the user's cache folder cannot be written, a temporary copy
    serves this launch.
    """
    root = user_cache_dir() / "numba"
    target = root / stamp[:16]
    if read_stamp(target) == stamp:
        return target
    try:
        if root.is_dir():
            for old in root.iterdir():
                if old.is_dir() and old != target:
                    shutil.rmtree(old, ignore_errors=True)
        shutil.copytree(SHIPPED, target, dirs_exist_ok=True)
        return target
    except OSError:
        target = Path(tempfile.mkdtemp(prefix="orchard-numba-")) / "cache"
        shutil.copytree(SHIPPED, target)
        return target


def executable_stamp() -> str:
    """A build without a shipped cache is stamped with its executable's digest."""
    with open(sys.executable, "rb") as exe:
        return hashlib.file_digest(exe, "sha256").hexdigest()


if os.environ.get(BUILD_VARIABLE):
    STAMP = read_stamp(SHIPPED)
    os.environ["NUMBA_CACHE_DIR"] = os.environ[BUILD_VARIABLE]
    os.environ["NUMBA_CPU_NAME"] = "generic"
elif read_stamp(SHIPPED):
    STAMP = read_stamp(SHIPPED)
    os.environ.setdefault("NUMBA_CACHE_DIR", str(seeded_cache(STAMP)))
    os.environ.setdefault("NUMBA_CPU_NAME", "generic")
else:  # built without a shipped cache: compile for this CPU, keep it per user
    STAMP = executable_stamp()
    os.environ.setdefault("NUMBA_CACHE_DIR", str(user_cache_dir() / "numba" / "local"))

from numba.core import caching, config  # after the variables above


class FrozenModuleLocator(caching._CacheLocator):
    """Caches a kernel under NUMBA_CACHE_DIR/<module name>, stamped with the build."""

    def __init__(self, py_func):
        self._lineno = py_func.__code__.co_firstlineno
        self._path = os.path.join(config.CACHE_DIR, py_func.__module__)

    def get_cache_path(self):
        return self._path

    def get_source_stamp(self):
        return STAMP

    def get_disambiguator(self):
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        locator = cls(py_func)
        try:
            locator.ensure_cache_path()
        except OSError:  # not writable: numba's other locators, or no cache at all
            return None
        return locator


caching.CacheImpl._locator_classes.insert(0, FrozenModuleLocator)
