"""PyInstaller runtime hook: the frozen app's numba kernels come compiled.

It runs before the app's code, because numba reads its settings when it is first
imported.  The build (packaging/build.py) runs the frozen app to compile every
kernel once per CPU level (`LEVELS`: a generic CPU of the OS, and on x86 also
x86-64-v3, the CPUs with AVX2 of the last decade, on which blossom runs about 25%
faster than generic code) and ships each cache zipped in `numba_cache/<level>.zip`.
At every start:

* the best level this CPU supports is chosen, and numba is told to generate code for
  it (NUMBA_CPU_NAME): numba keys every cache entry on the CPU, so without it none of
  the shipped kernels would match;
* the first time a build starts, that level's cache is unzipped into the user's
  cache folder (the app folder may be read-only, and the one-file app unpacks itself
  into a new temporary folder at every launch); that copy is the cache numba reads,
  and writes anything new into, and the copies of other builds are removed;
* a cache locator names each kernel's entry after its module and stamps it with the
  build's stamp: the app version and a digest of the engine's sources, written by
  the build into `numba_cache/STAMP` (not the executable's digest, which code
  signing changes).  numba's own locators would name it after the folder of the
  source file, which in a frozen app is a path relative to the working directory.

ORCHARD_BUILD_KERNEL_CACHE=FOLDER and ORCHARD_BUILD_CPU=LEVEL (set by the build) make
FOLDER the cache and LEVEL the CPU, so the build's warm-up run fills it.  Importing
numba here also loads LLVM before Qt.
"""

import hashlib
import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

BUILD_VARIABLE, BUILD_CPU = "ORCHARD_BUILD_KERNEL_CACHE", "ORCHARD_BUILD_CPU"
SHIPPED = Path(getattr(sys, "_MEIPASS", Path(sys.executable).parent)) / "numba_cache"
STAMP_FILE = "STAMP"
# CPU levels (LLVM CPU names) and the features a CPU needs to run each, best first.
# The build ships x86-64-v3 only for x86 (packaging/build.py, `cpu_levels`).
X86_64_V3 = ["avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave",
             "cx16", "popcnt", "sahf", "sse3", "sse4.1", "sse4.2", "ssse3"]
LEVELS = {"x86-64-v3": X86_64_V3, "generic": []}


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


def best_level() -> str:
    """The best shipped CPU level this computer can run (or ORCHARD_CPU_LEVEL's, which
    the smoke test uses to try every level on one computer)."""
    if os.environ.get("ORCHARD_CPU_LEVEL") in LEVELS:
        return os.environ["ORCHARD_CPU_LEVEL"]
    from llvmlite import binding
    features = binding.get_host_cpu_features()
    for level, needs in LEVELS.items():
        if (SHIPPED / f"{level}.zip").is_file() and all(features.get(f) for f in needs):
            return level
    return "generic"


def unzip_cache(level: str, target: Path) -> None:
    shutil.rmtree(target, ignore_errors=True)
    with zipfile.ZipFile(SHIPPED / f"{level}.zip") as archive:
        archive.extractall(target)


def seeded_cache(stamp: str, level: str) -> Path:
    """The user's cache of this build and CPU level: the shipped cache, unzipped once
    (its STAMP file, written last, says the copy is complete).  If the user's cache
    folder cannot be written, a temporary copy serves this launch."""
    root = user_cache_dir() / "numba"
    target = root / f"{stamp[:16]}-{level}"
    if read_stamp(target) == stamp:
        return target
    try:
        if root.is_dir():
            for old in root.iterdir():
                if old.is_dir() and old != target:
                    shutil.rmtree(old, ignore_errors=True)
        unzip_cache(level, target)
    except OSError:
        target = Path(tempfile.mkdtemp(prefix="orchard-numba-")) / "cache"
        unzip_cache(level, target)
    (target / STAMP_FILE).write_text(stamp, encoding="utf-8")
    return target


def executable_stamp() -> str:
    """A build without a shipped cache is stamped with its executable's digest."""
    with open(sys.executable, "rb") as exe:
        return hashlib.file_digest(exe, "sha256").hexdigest()


if os.environ.get(BUILD_VARIABLE):
    STAMP = read_stamp(SHIPPED)
    os.environ["NUMBA_CACHE_DIR"] = os.environ[BUILD_VARIABLE]
    os.environ["NUMBA_CPU_NAME"] = os.environ[BUILD_CPU]
    os.environ["NUMBA_CPU_FEATURES"] = ""
elif read_stamp(SHIPPED) and "NUMBA_CPU_NAME" not in os.environ:
    STAMP, LEVEL = read_stamp(SHIPPED), best_level()
    os.environ.setdefault("NUMBA_CACHE_DIR", str(seeded_cache(STAMP, LEVEL)))
    os.environ["NUMBA_CPU_NAME"] = LEVEL
    os.environ["NUMBA_CPU_FEATURES"] = ""
else:  # no shipped cache, or the user chose a CPU: compile, and keep it per user
    STAMP = read_stamp(SHIPPED) or executable_stamp()
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
