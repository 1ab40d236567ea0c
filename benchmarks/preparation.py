"""Time of each stage between a CSV file and a solver's first step, at a user's scale.

Generates numeric tables (10 columns of two-decimal numbers and a two-class `class`
column) of 10k, 100k, 1M and 2M rows into a temporary folder (never kept), then
times, one after the other in this process:

    read      engine.data.csv_reader.read_table
    type      engine.data.columns.infer_columns (what the window shows per column)
    prepare   engine.featurize.prepare with quantile:10 (90 binary features)
    reduce    engine.solvers.binary_rows.BinaryRows (blossom's and dl85's row grouping)

Only functions whose signatures are the same before and after issue 14 are called,
so the script also measures an older checkout: run it from that checkout's folder
with `PYTHONPATH=.`.  Usage:

    .venv/bin/python benchmarks/preparation.py [--rows 10000,100000] [--label now]
"""

from __future__ import annotations

import argparse
import gc
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from big_tables import numeric_csv  # noqa: E402

from engine.data.columns import infer_columns  # noqa: E402
from engine.data.csv_reader import read_table  # noqa: E402
from engine.data.dataset import PrepOptions  # noqa: E402
from engine.featurize import prepare  # noqa: E402
from engine.solvers.binary_rows import BinaryRows  # noqa: E402

STAGES = ("read", "type", "prepare", "reduce")


def measure(path: Path) -> dict[str, float]:
    times = {}
    gc.collect()
    start = time.perf_counter()
    raw = read_table(path)
    times["read"] = time.perf_counter() - start
    start = time.perf_counter()
    infer_columns(raw.frame)
    times["type"] = time.perf_counter() - start
    start = time.perf_counter()
    data = prepare(raw, PrepOptions(binarize="quantile:10"))
    times["prepare"] = time.perf_counter() - start
    start = time.perf_counter()
    BinaryRows(data, "Blossom")
    times["reduce"] = time.perf_counter() - start
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default="10000,100000,1000000,2000000")
    parser.add_argument("--label", default="now")
    args = parser.parse_args()
    print(f"# {args.label}: {platform.node()}, {platform.processor() or platform.machine()},"
          f" Python {platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}")
    print("| rows | MB | " + " | ".join(f"{s} s" for s in STAGES) + " | total s |")
    print("|---:|---:|" + "---:|" * (len(STAGES) + 1))
    with tempfile.TemporaryDirectory() as folder:
        for rows in map(int, args.rows.split(",")):
            path = numeric_csv(Path(folder) / f"t{rows}.csv", rows)
            times = measure(path)
            size = path.stat().st_size / 1e6
            path.unlink()
            print(f"| {rows:,} | {size:.0f} | " + " | ".join(f"{times[s]:.2f}" for s in STAGES)
                  + f" | {sum(times.values()):.2f} |", flush=True)


if __name__ == "__main__":
    main()
