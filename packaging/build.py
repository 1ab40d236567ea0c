"""Build the standalone app: `python packaging/build.py [--onefile]`.

Needs the `package` extra (`pip install -e ".[package]"`).  The one-folder app goes
to packaging/dist/orchard/ (ship it as a .tar.gz or a `zip -ry`, which keep its
links); the one-file variant to packaging/dist/onefile/.  PyInstaller's work files go
to packaging/build/.

After PyInstaller, the one-folder app is run to compile every solver kernel for each
CPU level (a generic CPU of this OS; on x86 also x86-64-v3) into its `numba_cache/`
folder, zipped (see numba_cache_hook.py), so that users never wait for compilation.  The one-file app is built from the one-folder
app's cache.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DIST = HERE / "dist"
NAME = "orchard.exe" if sys.platform == "win32" else "orchard"


def executable(onefile: bool = False) -> Path:
    """Where the build puts the app's program."""
    return DIST / "onefile" / NAME if onefile else DIST / "orchard" / NAME


def shipped_size(onefile: bool = False) -> int:
    """Bytes the user receives: the one file, or the folder's files (PyInstaller links
    some libraries to a second place; a zip made with `zip -ry` keeps those links)."""
    if onefile:
        return executable(True).stat().st_size
    files = executable().parent.rglob("*")
    return sum(f.stat().st_size for f in files if f.is_file() and not f.is_symlink())


def kernel_cache() -> Path:
    """Where the one-folder app keeps its shipped kernel caches."""
    return executable().parent / "_internal" / "numba_cache"


def cpu_levels() -> list[str]:
    """The CPU levels (LLVM CPU names) kernels are compiled for: a generic CPU of the
    OS, and on x86 also x86-64-v3 (AVX2), chosen at start when the CPU has it (see
    numba_cache_hook.py, which holds the features each level needs)."""
    x86 = platform.machine().lower() in ("x86_64", "amd64")
    return ["x86-64-v3", "generic"] if x86 else ["generic"]


def cache_stamp() -> str:
    """The shipped cache's freshness stamp: the app's version and a digest of the
    engine's sources (numba adds its own version and the kernels' bytecode)."""
    digest = hashlib.sha256()
    for path in sorted((ROOT / "engine").rglob("*.py")):
        digest.update(path.relative_to(ROOT).as_posix().encode())
        digest.update(path.read_bytes())
    return f"{version('orchard')}-{digest.hexdigest()}"


def shipped_levels(shipped: Path) -> list[str]:
    """The CPU levels whose kernels a build shipped in `shipped`."""
    return sorted(path.stem for path in shipped.glob("*.zip"))


def compile_kernels(program: Path, shipped: Path, levels: list[str]) -> float:
    """Run the frozen app once per CPU level of `levels` to compile every solver's
    kernels, and ship each level's cache as `shipped/<level>.zip`; returns the
    seconds it took."""
    shutil.rmtree(shipped, ignore_errors=True)
    shipped.mkdir(parents=True)
    (shipped / "STAMP").write_text(cache_stamp() + "\n", encoding="utf-8")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="orchard-build-") as work:
        for level in levels:
            cache = Path(work) / level
            env = {**os.environ, "ORCHARD_BUILD_KERNEL_CACHE": str(cache),
                   "ORCHARD_BUILD_CPU": level, "HOME": work, "LOCALAPPDATA": work}
            subprocess.run([str(program)], env=env, check=True)
            with zipfile.ZipFile(shipped / f"{level}.zip", "w", zipfile.ZIP_DEFLATED,
                                 compresslevel=9) as archive:
                for path in sorted(cache.rglob("*")):
                    archive.write(path, path.relative_to(cache).as_posix())
    return time.perf_counter() - started


def pyinstaller(onefile: bool, env: dict | None = None) -> None:
    variant = "onefile" if onefile else "onedir"
    command = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
               "--distpath", str(DIST / "onefile" if onefile else DIST),
               "--workpath", str(HERE / "build" / variant), str(HERE / "orchard.spec")]
    if onefile:
        command += ["--", "--onefile"]
    subprocess.run(command, check=True, env={**os.environ, **(env or {})})


def build(onefile: bool = False, levels: list[str] | None = None) -> Path:
    """Build the one-folder app with its kernel cache (and from it the one-file app)
    for `levels` (default: every level of `cpu_levels`); return the app's program.
    CI's smoke test ships the generic level alone, which every CPU runs: each level
    compiles for minutes."""
    levels = levels or cpu_levels()
    pyinstaller(onefile=False)
    seconds = compile_kernels(executable(), kernel_cache(), levels)
    print(f"Compiled the kernels for {', '.join(levels)} in {seconds:.0f} s.")
    if onefile:
        pyinstaller(onefile=True, env={"ORCHARD_KERNEL_CACHE": str(kernel_cache())})
    return executable(onefile)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--onefile", action="store_true",
                        help="one self-extracting program instead of a folder")
    onefile = parser.parse_args().onefile
    started = time.perf_counter()
    program = build(onefile)
    print(f"Built {program} in {time.perf_counter() - started:.0f} s "
          f"({shipped_size(onefile) / 1e6:.0f} MB).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
