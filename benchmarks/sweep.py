"""Wall time of a 40-fit sweep on the local process pool: 1 worker against N.

The sweep is 2 CP4IM datasets x 2 algorithms (blossom, dl85) x depths 4 and 5 x
5-fold cross-validation, every fit run to optimality (a few seconds each for blossom
at depth 5, less for the others), so the wall time measures computing, not time
limits.  Each configuration starts from an empty journal; the workers load the
compiled kernels once each (part of the measured time, as for a user).  The two
result tables must agree apart from the timing columns.  The load average is printed
before and after each run, because on a shared machine other work competes for the
cores.

    .venv/bin/python benchmarks/sweep.py [--workers 2] [--sets vote,heart-cleveland]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import pandas as pd

from engine.experiments import TIMING, ProcessPool, run_sweep, sweep_from_dict

CP4IM = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "cp4im"


def spec(sets: list[str]) -> dict:
    return {"datasets": [f"{name}.txt" for name in sets], "target": "first",
            "algorithms": ["blossom", "dl85"], "depth": [4, 5], "folds": 5,
            "time_limit": 120, "seed": 0}


def load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def timed_run(sweep, workers: int, folder: Path) -> tuple[float, pd.DataFrame]:
    print(f"{workers} worker(s): load average before {load()}", flush=True)
    start = time.perf_counter()
    table = run_sweep(sweep, folder / f"workers{workers}.csv", ProcessPool(workers)).table
    seconds = time.perf_counter() - start
    busy = table["time_s"].sum()
    print(f"{workers} worker(s): {seconds:.1f} s for {len(table)} fits (sum of fit "
          f"times {busy:.1f} s, so {busy / seconds:.2f} fits in flight on average); "
          f"load average after {load()}", flush=True)
    return seconds, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sets", default="vote,heart-cleveland")
    args = parser.parse_args()
    sweep = sweep_from_dict(spec(args.sets.split(",")), CP4IM)
    with tempfile.TemporaryDirectory() as folder:
        one, table_one = timed_run(sweep, 1, Path(folder))
        many, table_many = timed_run(sweep, args.workers, Path(folder))
    pd.testing.assert_frame_equal(table_one.drop(columns=list(TIMING)),
                                  table_many.drop(columns=list(TIMING)))
    statuses = table_one["status"].value_counts().to_dict()
    print(f"\n| workers | wall time (s) |\n|---|---|\n| 1 | {one:.1f} |\n"
          f"| {args.workers} | {many:.1f} |\n\nspeed-up {one / many:.2f}x on "
          f"{os.cpu_count()} cores; {len(table_one)} fits, statuses {statuses}; "
          "tables identical apart from timing columns")


if __name__ == "__main__":
    main()
