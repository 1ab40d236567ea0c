"""PyInstaller runtime hook: a persistent numba cache for the frozen app.

It runs before the app's code.  numba reads NUMBA_CACHE_DIR when it is first
imported, so the folder is chosen here: the user's cache folder, where compiled
kernels survive between launches (the app folder may be read-only, and the one-file
app unpacks itself into a new temporary folder at every launch).

numba's own locators name a cache after the folder of the function's source file; in
a frozen app that is a path relative to the working directory (or inside the
temporary folder), so the cache would go cold whenever either changes.  The locator
below names it after the module instead and is tried first.  Importing numba here
also loads LLVM before Qt's libraries.
"""

import hashlib
import os
import sys
from functools import cache
from pathlib import Path


def user_cache_dir() -> Path:
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local"
        return Path(local) / "Orchard" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "Orchard"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "orchard"


os.environ.setdefault("NUMBA_CACHE_DIR", str(user_cache_dir() / "numba"))

from numba.core import caching, config  # noqa: E402  (needs the variable above)


@cache
def app_stamp() -> str:
    """Changes with every build: the digest of the executable, which holds all of the
    app's Python code (numba's own choice for frozen apps)."""
    with open(sys.executable, "rb") as exe:
        return hashlib.file_digest(exe, "sha256").hexdigest()


class FrozenModuleLocator(caching._CacheLocator):
    """Caches a kernel under NUMBA_CACHE_DIR/<module name>, stamped with the build."""

    def __init__(self, py_func):
        self._lineno = py_func.__code__.co_firstlineno
        self._path = os.path.join(config.CACHE_DIR, py_func.__module__)

    def get_cache_path(self):
        return self._path

    def get_source_stamp(self):
        return app_stamp()

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
