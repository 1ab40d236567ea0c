"""The whole journey matrix (tests/journeys.py): generated tables × every algorithm ×
depths × every binarisation × the CLI and the notebook.

    python benchmarks/journeys.py --tables 3 --out /tmp/journeys.jsonl

Each journey's outcome is appended to `--out` as one JSON line as soon as it ends (a
stopped run keeps what it did); the summary at the end counts journeys, refusals,
failures and wall time, and lists every failure with the journey that found it.
The test command runs a derandomised slice of the same matrix (tests/test_journeys.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")   # `--image` draws with Qt

from journeys import (  # noqa: E402
    ALGORITHMS,
    BINARIZATIONS,
    ENTRIES,
    SMALL,
    Journey,
    TableSpec,
    run,
    table_specs,
)

from engine.warmup import warm_up  # noqa: E402


def draw_tables(count: int, max_rows: int, max_columns: int) -> list[TableSpec]:
    """`count` fresh tables from the suite's generator (no shrinking: just draws; the
    first draw, Hypothesis's smallest table, is left out)."""
    tables: list[TableSpec] = []

    @settings(max_examples=count + 1, phases=[Phase.generate], database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(table_specs(max_rows=max_rows, max_columns=max_columns))
    def collect(spec):
        tables.append(spec)

    collect()
    return tables[1:count + 1]


def shrunk(spec: TableSpec, algorithm: str) -> TableSpec:
    """The table cut to what SAT and the diagram MILP can answer (rows and columns)."""
    rows, columns = SMALL.get(algorithm, (spec.rows, len(spec.kinds)))
    kinds = spec.kinds[:columns]
    rows = min(spec.rows, rows)
    return TableSpec(rows, min(spec.classes, max(2, rows // 5)),
                     spec.majority, kinds, spec.text_values[:kinds.count("text")],
                     spec.missing, spec.odd_names, spec.seed)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=3)
    parser.add_argument("--max-rows", type=int, default=5000)
    parser.add_argument("--max-columns", type=int, default=60)
    parser.add_argument("--algorithms", default=",".join(ALGORITHMS))
    parser.add_argument("--depths", default="1,2,3,4,5,6")
    parser.add_argument("--binarize",
                        default=",".join(b or "default" for b in BINARIZATIONS))
    parser.add_argument("--entries", default=",".join(ENTRIES))
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--out", default="journeys.jsonl")
    args = parser.parse_args(argv)
    tables = draw_tables(args.tables, args.max_rows, args.max_columns)
    warm_up()
    matrix = list(itertools.product(
        tables, args.algorithms.split(","), [int(d) for d in args.depths.split(",")],
        [None if b == "default" else b for b in args.binarize.split(",")],
        args.entries.split(",")))
    print(f"{len(matrix)} journeys on {len(tables)} tables, {platform.machine()}, "
          f"{time.strftime('%Y-%m-%d')}", flush=True)
    counts: Counter = Counter()
    failures = []
    start = time.monotonic()
    with open(args.out, "a") as out:
        for number, (spec, algorithm, depth, binarize, entry) in enumerate(matrix, 1):
            journey = Journey(shrunk(spec, algorithm), algorithm, depth, binarize, entry,
                              args.time_limit)
            with tempfile.TemporaryDirectory() as folder:
                outcome = run(journey, Path(folder))
            kind = "failed" if outcome.problems else "refused" if outcome.refusal else "ok"
            counts[kind] += 1
            if outcome.problems:
                failures.append((journey.describe(), outcome.problems))
                print(f"FAILED {journey.describe()}: {outcome.problems}", flush=True)
            out.write(json.dumps({"journey": journey.describe(), "outcome": kind,
                                  "spec": dataclasses.asdict(journey.spec),
                                  "problems": outcome.problems, "refusal": outcome.refusal,
                                  "seconds": round(outcome.seconds, 3)}) + "\n")
            out.flush()
            if number % 25 == 0:
                print(f"{number}/{len(matrix)} journeys, {dict(counts)}, "
                      f"{time.monotonic() - start:.0f} s", flush=True)
    print(f"journeys {len(matrix)}, ok {counts['ok']}, refused {counts['refused']}, "
          f"failures {counts['failed']}, wall time {time.monotonic() - start:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
