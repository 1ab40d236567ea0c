"""ConTree (Orchard's `contree`) next to the reference implementation (pycontree).

Both run in this process on the same in-memory data of every set in
shared/datasets/contree (first column = class, numeric features), at depth 2 and 3;
with --depth4 also at depth 4 with a gap of 1% (floor(0.01 n) misclassifications, as
in the paper's Table 2), ours only where pycontree finishes within --limit seconds
(pycontree runs first).  Geometric means are over the cells where both finished.  Times are
the wall time of one fit: `engine.training.train` for ours (its data preparation,
sorting, search and tree), `pycontree.ConTree.fit` for the reference (or, for the gap,
the same `solve` call fit makes, since fit's parameter check only allows a gap of 0 or
1).  JIT warm-up is measured first and reported separately.

The reference reads values as float32, so where two float64 values of a column
collapse into one float32 the two may find different optima; its error is counted
with its own predict on the float64 data.

    .venv/bin/python benchmarks/contree.py [--depths 2,3] [--depth4] [--sets a,b]
        [--limit 300] [--repeat 1]
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path

import numpy as np

from engine.data.csv_reader import read_table
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.training import train

CONTREE = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "contree"


def load(name: str):
    return prepare(read_table(CONTREE / f"{name}.txt"), PrepOptions(target="first"))


def geomean(values) -> float:
    return math.exp(float(np.mean(np.log(values)))) if values else float("nan")


def ours(data, depth: int, gap: float, limit: float):
    params = {"depth": depth}
    if gap:
        params["max_gap"] = gap
    start = time.perf_counter()
    result = train(data, "contree", params, time_limit=limit)
    elapsed = time.perf_counter() - start
    return result.train_error, elapsed, result.status.value


def reference(X, y, depth: int, gap: int, limit: float):
    from pycontree import ConTree
    from pycontree.ccontree import Config, solve

    start = time.perf_counter()
    if gap == 0:
        model = ConTree(max_depth=depth, max_gap=0, time_limit=limit).fit(X, y)
        elapsed = time.perf_counter() - start
        done = model._config.is_within_time_limit()
        error = int((model.predict(X) != y).sum())
    else:
        config = Config()
        config.max_depth = depth
        config.max_gap = gap
        config.max_gap_decay = 0.0   # one search with this gap (no decaying reruns)
        tree = solve(X, y, config, limit)
        elapsed = time.perf_counter() - start
        done = config.is_within_time_limit()
        error = int((np.asarray(tree.predict(X)) != y).sum())
    return error, elapsed, "finished" if done else "time_limit"


def warm_up() -> None:
    from engine.warmup import warm_up as warm

    start = time.perf_counter()
    report = warm(["contree"])
    ours_s = time.perf_counter() - start
    from pycontree import ConTree

    X = np.random.default_rng(0).random((50, 3))
    y = (X[:, 0] > 0.5).astype(np.int32)
    start = time.perf_counter()
    ConTree(max_depth=2).fit(X, y)
    ref_s = time.perf_counter() - start
    print(f"JIT warm-up (ours, contree kernels compiled or loaded from numba's cache): "
          f"{ours_s:.2f} s {report.errors or ''}; pycontree first fit: {ref_s:.3f} s\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--depths", default="2,3")
    parser.add_argument("--depth4", action="store_true",
                        help="also depth 4 with a gap of 1%% (may take hours)")
    parser.add_argument("--sets", default="")
    parser.add_argument("--limit", type=float, default=300.0,
                        help="seconds allowed to each fit (pycontree's, and ours)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="fits per cell; the least time is reported")
    args = parser.parse_args()
    names = args.sets.split(",") if args.sets else sorted(
        p.stem for p in CONTREE.glob("*.txt"))
    runs = [(int(d), 0.0) for d in args.depths.split(",") if d]
    if args.depth4:
        runs.append((4, 0.01))

    print(f"load average before: {os.getloadavg()[0]:.2f}")
    warm_up()
    print("| dataset | rows | features | depth | gap | our error | pycontree error | "
          "our time (s) | pycontree time (s) | ratio |\n|---|---|---|---|---|---|---|---|"
          "---|---|")
    ratios: dict[tuple[int, float], list[float]] = {run: [] for run in runs}
    for name in names:
        data = load(name)
        X = np.ascontiguousarray(data.X, dtype=np.float64)
        y = np.ascontiguousarray(data.y, dtype=np.int32)
        for depth, gap in runs:
            rows_gap = int(math.floor(gap * data.n_rows))
            our_best = ref_best = math.inf
            for _ in range(args.repeat):
                ref_err, rt, ref_status = reference(X, y, depth, rows_gap, args.limit)
                ref_best = min(ref_best, rt)
                if gap and ref_status != "finished":
                    break  # the gap runs only compare where pycontree finishes
                err, t, status = ours(data, depth, rows_gap, args.limit)
                our_best = min(our_best, t)
            ref_note = "" if ref_status == "finished" else f" ({ref_status})"
            if our_best == math.inf:
                print(f"| {name} | {data.n_rows} | {data.n_features} | {depth} | "
                      f"{rows_gap} | - | {ref_err}{ref_note} | - | {ref_best:.3f} | - |",
                      flush=True)
                continue
            note = "" if status in ("optimal", "finished") else f" ({status})"
            ratio = our_best / ref_best
            if not note and not ref_note:
                ratios[(depth, gap)].append(ratio)
            print(f"| {name} | {data.n_rows} | {data.n_features} | {depth} | "
                  f"{rows_gap if gap else 0} | {err:g}{note} | {ref_err}{ref_note} | "
                  f"{our_best:.3f} | {ref_best:.3f} | {ratio:.2f} |", flush=True)
    print()
    for (depth, gap), values in ratios.items():
        label = f"depth {depth}" + (" (gap 1%)" if gap else "")
        print(f"geometric-mean time ratio ours / pycontree, {label}: {geomean(values):.2f} "
              f"over {len(values)} sets")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
