"""Speed-up of the exact searches with threads: 1 thread against 2 (and more).

For each algorithm, data set and depth, one `engine.training.train` call per thread
count, back to back in this process, with the same time limit; the table gives each
time, the speed-up t(1) / t(N) and both errors (they must be equal whenever both
runs proved optimality; the script says so loudly otherwise).  Runs under
REPEAT_BELOW seconds are repeated and the best time kept.  The kernels are loaded
(or compiled) before any clock starts.  Rows are printed, and appended to `--out`,
as they come, so a long run can be cut short without losing them.

Sets: ConTree's (`shared/datasets/contree`, numeric) for `contree`, CP4IM's
(`shared/datasets/cp4im`, 0/1) for `blossom`, `dl85`, `cadl85`.  An algorithm without
a `threads` parameter is reported as such and skipped.

    .venv/bin/python benchmarks/parallel.py [--algos contree] [--sets a,b]
        [--depths 3] [--threads 1,2] [--limit 300] [--out rows.md]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import time
from pathlib import Path

from engine.data.csv_reader import read_table
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.solvers import get_solver
from engine.training import train
from engine.warmup import warm_up

DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
FOLDER = {"contree": "contree"}             # every other algorithm: CP4IM
REPEAT_BELOW = 1.0


def sets_of(algorithm: str) -> list[Path]:
    folder = DATASETS / FOLDER.get(algorithm, "cp4im")
    return sorted(p for p in folder.iterdir() if p.suffix in (".txt", ".csv"))


def timed(data, algorithm: str, depth: int, threads: int, limit: float):
    """(best seconds, error, status, threads used) of one fit, repeated when short."""
    best = None
    for _ in range(3):
        start = time.perf_counter()
        result = train(data, algorithm, {"depth": depth, "threads": threads},
                       time_limit=limit)
        seconds = time.perf_counter() - start
        if best is None or seconds < best[0]:
            best = (seconds, result.train_error, result.status.value,
                    result.stats.get("threads", 1))
        if seconds >= REPEAT_BELOW:
            break
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--algos", default="contree")
    parser.add_argument("--sets", default="")
    parser.add_argument("--depths", default="3")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--limit", type=float, default=300.0)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    counts = [int(t) for t in args.threads.split(",")]
    wanted = {s for s in args.sets.split(",") if s}
    warm_up()
    out = open(args.out, "a") if args.out else None

    def emit(line: str) -> None:
        print(line, flush=True)
        if out:
            out.write(line + "\n")
            out.flush()

    emit(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
         f"{time.strftime('%Y-%m-%d %H:%M')}; limit {args.limit:g} s")
    emit("| algorithm | dataset | depth | " + " | ".join(f"{t} thr (s)" for t in counts)
         + " | speed-up " + " | ".join(f"1→{t}" for t in counts[1:])
         + " | errors | statuses |")
    emit("|" + "---|" * (5 + 2 * len(counts) - 1))
    speedups: dict[int, list[float]] = {t: [] for t in counts[1:]}
    for algorithm in args.algos.split(","):
        if "threads" not in {p.name for p in get_solver(algorithm).params}:
            emit(f"| {algorithm} | (no threads parameter: one thread only) |")
            continue
        for path in sets_of(algorithm):
            if wanted and path.stem not in wanted:
                continue
            data = prepare(read_table(path), PrepOptions(target="first"))
            for depth in (int(d) for d in args.depths.split(",")):
                runs = [timed(data, algorithm, depth, t, args.limit) for t in counts]
                errors = {r[1] for r in runs}
                proven = all(r[2] == "optimal" for r in runs)
                flag = "" if len(errors) == 1 or not proven else " **DIFFER**"
                ratios = [runs[0][0] / r[0] for r in runs[1:]]
                if runs[0][0] > 1.0 and proven:
                    for t, ratio in zip(counts[1:], ratios):
                        speedups[t].append(ratio)
                emit(f"| {algorithm} | {path.stem} | {depth} | "
                     + " | ".join(f"{r[0]:.3f}" for r in runs) + " | "
                     + " | ".join(f"{x:.2f}" for x in ratios) + " | "
                     + "/".join(f"{r[1]:g}" for r in runs) + flag + " | "
                     + "/".join(f"{r[2]}({r[3]})" for r in runs) + " |")
    for t, values in speedups.items():
        if values:
            mean = math.exp(sum(math.log(v) for v in values) / len(values))
            emit(f"\nGeometric-mean speed-up 1→{t} threads over the {len(values)} proven "
                 f"runs longer than 1 s with one thread: {mean:.2f} "
                 f"(min {min(values):.2f}, max {max(values):.2f})")
    if out:
        out.close()


if __name__ == "__main__":
    main()
