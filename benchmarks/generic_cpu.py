"""Speed of kernels compiled for fixed CPU levels (as shipped in the app) vs this CPU.

The standalone app ships its numba kernels compiled for fixed CPU levels of its OS
(NUMBA_CPU_NAME=generic, and x86-64-v3 for x86 CPUs with AVX2), so that they serve
every computer; an installed Orchard compiles for the computer it runs on.  numba
picks the CPU once per process, so this runs the same fits in one child process per
CPU choice (--cpus, each with its own warmed kernel cache), alternating their order
run by run, and reports each one's best time of each case as a ratio to the host's.

Cases: `contree` on every ConTree set at depth 3 and `blossom` and `dl85` on every
CP4IM set at depth 4 (a time limit of --limit seconds; cases that hit it in either
process are listed, not compared).

    .venv/bin/python benchmarks/generic_cpu.py [--repeat 3] [--limit 60] [--sets a,b]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ROOT.parent / "shared" / "datasets"
CASES = ([("contree", "contree", name, 3) for name in sorted(
    p.stem for p in (DATASETS / "contree").glob("*.txt"))] +
    [(algorithm, "cp4im", name, 4) for name in sorted(
        p.stem for p in (DATASETS / "cp4im").glob("*.txt")) for algorithm in ("blossom", "dl85")])


def child(cases: list, limit: float) -> None:
    """Time each case once in this process; print one JSON line per case."""
    from engine.data.csv_reader import read_table
    from engine.data.dataset import PrepOptions
    from engine.featurize import prepare
    from engine.training import train
    from engine.warmup import warm_up

    warm_up(sorted({case[0] for case in cases}))
    for algorithm, folder, name, depth in cases:
        data = prepare(read_table(DATASETS / folder / f"{name}.txt"),
                       PrepOptions(target="first"))
        started = time.perf_counter()
        result = train(data, algorithm, {"depth": depth}, time_limit=limit)
        print(json.dumps({"case": [algorithm, folder, name, depth],
                          "seconds": time.perf_counter() - started,
                          "error": result.train_error, "optimal": result.optimal}),
              flush=True)


def run(cpu: str, cache: Path, cases: list, limit: float) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    env.pop("NUMBA_CPU_NAME", None)
    env.pop("NUMBA_CPU_FEATURES", None)
    if cpu != "host":
        env.update(NUMBA_CPU_NAME=cpu, NUMBA_CPU_FEATURES="")
    done = subprocess.run([sys.executable, __file__, "--child", json.dumps(cases),
                           "--limit", str(limit)], env=env, cwd=ROOT, capture_output=True,
                          text=True, check=True)
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {tuple(row["case"]): row for row in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit", type=float, default=60.0)
    parser.add_argument("--sets", default="", help="only these set names")
    parser.add_argument("--algorithms", default="", help="only these algorithms")
    parser.add_argument("--cpus", default="generic,x86-64-v3",
                        help="CPU names to compare with the host's")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child([tuple(case) for case in json.loads(args.child)], args.limit)
        return
    wanted = set(filter(None, args.sets.split(",")))
    algorithms = set(filter(None, args.algorithms.split(",")))
    cases = [case for case in CASES if (not wanted or case[2] in wanted)
             and (not algorithms or case[0] in algorithms)]
    cpus = ["host", *args.cpus.split(",")]
    best: dict[str, dict] = {cpu: {} for cpu in cpus}
    with tempfile.TemporaryDirectory() as caches:
        for repetition in range(args.repeat):
            order = cpus if repetition % 2 == 0 else cpus[::-1]
            for cpu in order:
                rows = run(cpu, Path(caches) / cpu, cases, args.limit)
                for case, row in rows.items():
                    old = best[cpu].get(case)
                    if old is None or row["seconds"] < old["seconds"]:
                        best[cpu][case] = row
                print(f"repetition {repetition + 1}, {cpu}: {len(rows)} cases", flush=True)
    others = cpus[1:]
    print("\n| algorithm | set | depth | host s | " + " | ".join(
        f"{cpu} s | {cpu}/host" for cpu in others) + " |")
    print("|---|---|---|---:|" + "---:|---:|" * len(others))
    ratios: dict[tuple[str, str], list[float]] = {}
    for case in cases:
        rows = [best[cpu].get(case) for cpu in cpus]
        if any(row is None for row in rows):
            continue
        if not all(row["optimal"] for row in rows):
            print(f"| {case[0]} | {case[2]} | {case[3]} | limit |" + " – | – |" * len(others))
            continue
        assert len({row["error"] for row in rows}) == 1, (case, rows)
        host = rows[0]["seconds"]
        cells = []
        for cpu, row in zip(others, rows[1:]):
            ratio = row["seconds"] / host
            ratios.setdefault((case[0], cpu), []).append(ratio)
            cells.append(f"{row['seconds']:.3f} | {ratio:.2f}")
        print(f"| {case[0]} | {case[2]} | {case[3]} | {host:.3f} | " + " | ".join(cells) + " |")
    print()
    for (algorithm, cpu), values in ratios.items():
        mean = math.exp(sum(math.log(v) for v in values) / len(values))
        print(f"{algorithm}, {cpu}: geometric mean {cpu}/host {mean:.3f} over {len(values)} "
              f"cases (min {min(values):.2f}, max {max(values):.2f})")

if __name__ == "__main__":
    main()
