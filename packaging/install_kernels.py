"""pip's build step, which also compiles the solvers' numba kernels for this computer.

numba compiles a kernel the first time it is called and keeps it in a disk cache
(`__pycache__/*.nbi, *.nbc` beside the module).  With an empty cache the first run
after `pip install` spent its first minute compiling (88 s for every solver on two
cores).  The frozen app ships its kernels; this hook gives the pip install the same:
setuptools' `build_py` runs in `pip install` (editable or not), and after it this
command runs `python -m engine.warmup --install`, which compiles every solver's
kernels on all cores into the cache the installed package will read:

- editable install (the README's): the sources themselves, so the cache lands in the
  project's `__pycache__` folders, where the installed code looks;
- wheel: the copy in `build_lib`, so the cache files travel inside the wheel (numba's
  cache is keyed on the source file's contents and numba's version, not its path).

The compile runs in pip's isolated build environment, whose requirements
(`[build-system]` in pyproject.toml) therefore list the engine's non-Qt dependencies.
A cache built by another numba than the one installed beside Orchard, or on another
CPU, is ignored by numba and the kernels then compile at the first run, off its time
limit (`engine.solvers.compile_ahead`).  A failed compile never fails the install.

setuptools loads this file by path (`[tool.setuptools.cmdclass]`), so it imports
nothing from Orchard.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from setuptools.command.build_py import build_py


def compile_kernels(root: str, run=subprocess.run) -> bool:
    """Compile the kernels of the `engine` package under `root` into its numba cache;
    returns whether it succeeded (a failure is reported and otherwise ignored)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    started = time.perf_counter()
    print("orchard: compiling the solvers' kernels for this computer (once, 1-3 minutes)",
          flush=True)
    try:
        done = run([sys.executable, "-m", "engine.warmup", "--install"], cwd=root,
                   env=env, check=False).returncode == 0
    except OSError as exc:
        print(f"orchard: could not compile the kernels ({exc}); the first run will",
              flush=True)
        return False
    seconds = time.perf_counter() - started
    print(f"orchard: kernels compiled in {seconds:.0f} s" if done else
          "orchard: compiling the kernels failed; the first run will compile them",
          flush=True)
    return done


class BuildPyWithKernels(build_py):
    """setuptools' build_py, then the kernels compiled where the install will read them."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        else:
            root = os.path.abspath(self.build_lib)
        compile_kernels(root)
