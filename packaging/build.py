"""Build the standalone app: `python packaging/build.py [--onefile]`.

Needs the `package` extra (`pip install -e ".[package]"`).  The one-folder app goes
to packaging/dist/orchard/ (ship it as a .tar.gz or a `zip -ry`, which keep its
links); the one-file variant to packaging/dist/onefile/.  PyInstaller's work files go
to packaging/build/.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
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


def build(onefile: bool = False) -> Path:
    """Run PyInstaller on orchard.spec and return the app's program."""
    variant = "onefile" if onefile else "onedir"
    command = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
               "--distpath", str(DIST / "onefile" if onefile else DIST),
               "--workpath", str(HERE / "build" / variant), str(HERE / "orchard.spec")]
    if onefile:
        command += ["--", "--onefile"]
    subprocess.run(command, check=True)
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
