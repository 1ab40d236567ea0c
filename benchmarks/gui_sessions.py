"""Thousands of steps of random user sessions in the real window (issue 34): the
state machine of `tests/gui_sessions.py`, run far longer than the test command does.

    python benchmarks/gui_sessions.py [--steps 2000] [--steps-per-session 40]

It runs `tests/test_gui_sessions.py` under pytest (pytest-qt drives the window)
with `ORCHARD_GUI_SESSION_STEPS` set, prints the rules taken and, on a broken
promise, Hypothesis's shortest session that breaks it (exit status 1).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--steps-per-session", type=int, default=40)
    args = parser.parse_args()
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen",
               ORCHARD_GUI_SESSION_STEPS=f"{args.steps}:{args.steps_per_session}")
    started = time.perf_counter()
    status = subprocess.call([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                              "tests/test_gui_sessions.py"], cwd=ROOT, env=env)
    print(f"{args.steps} steps asked, {time.perf_counter() - started:.0f} s, "
          + ("nothing broken" if status == 0 else "a promise broken (above)"))
    return 0 if status == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
