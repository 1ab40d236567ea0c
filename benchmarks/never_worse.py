"""Is the "optimal" tree ever worse than greedy CART? Train and test accuracy per method.

For every CSV of `shared/datasets/odd` and `shared/datasets/inferdt`, depths 2-4 and
the three splits of a stratified 3-fold cross-validation (seed 0), it trains on each
split's training rows (prepared on those rows only, as the app does) and reports:

- greedy (CART on the raw numbers: `--algo greedy --binarize none`)
- blossom on `quantile:10` (the old default) and on `guided` (the new one)
- contree (raw numbers), dl85 and cadl85 (guided), and `auto`

with a time limit per fit (10 s by default).  "Worse" means a higher training error
than greedy's on the same training rows.  Rows are appended to a CSV as they finish
(`--out`, default benchmarks/never_worse.csv, not kept in git), so a long run can be
stopped and summarised at any point:

    .venv/bin/python benchmarks/never_worse.py [--time-limit 10] [--depths 2,3,4]
    .venv/bin/python benchmarks/never_worse.py --summary      # the tables
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import pandas as pd

from engine.data.csv_reader import read_table
from engine.data.dataset import PrepOptions
from engine.evaluation import CrossValidation, Plan

DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
METHODS = {   # name -> (algorithm, binarisation)
    "greedy": ("greedy", "none"),
    "blossom q10": ("blossom", "quantile:10"),
    "blossom guided": ("blossom", "guided"),
    "contree": ("contree", "none"),
    "dl85": ("dl85", "guided"),
    "cadl85": ("cadl85", "guided"),
    "auto": ("auto", "none"),
}
FIELDS = ("dataset", "depth", "fold", "method", "status", "optimal", "train_error",
          "train_accuracy", "test_accuracy", "time_s")


def files() -> list[Path]:
    return sorted((DATASETS / "odd").glob("*.csv")) + sorted((DATASETS / "inferdt").glob("*.csv"))


def run(out: Path, depths: list[int], time_limit: float) -> None:
    done = set()
    if out.exists():
        done = {(r["dataset"], int(r["depth"]), int(r["fold"]), r["method"])
                for r in csv.DictReader(out.open())}
    new = not out.exists()
    with out.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, FIELDS)
        if new:
            writer.writeheader()
        for path in files():
            name = f"{path.parent.name}/{path.stem}"
            raw = read_table(path)
            for depth in depths:
                for method, (algorithm, binarize) in METHODS.items():
                    options = PrepOptions(binarize=binarize, depth=depth)
                    validation = CrossValidation(raw, options, algorithm, {"depth": depth},
                                                 Plan("kfold", k=3, seed=0), time_limit)
                    for fold in range(3):
                        if (name, depth, fold, method) in done:
                            continue
                        started = time.perf_counter()
                        result = validation.fold(fold)
                        writer.writerow({
                            "dataset": name, "depth": depth, "fold": fold, "method": method,
                            "status": result.status.value, "optimal": result.optimal,
                            "train_error": result.train_error,
                            "train_accuracy": result.train_accuracy,
                            "test_accuracy": result.test_accuracy,
                            "time_s": round(time.perf_counter() - started, 3)})
                        handle.flush()
                print(f"{name} depth {depth} done", flush=True)


def summary(out: Path) -> None:
    rows = pd.read_csv(out)
    greedy = rows[rows.method == "greedy"].set_index(["dataset", "depth", "fold"])
    rows = rows.join(greedy["train_error"].rename("greedy_error"),
                     on=["dataset", "depth", "fold"])
    rows = rows[rows.greedy_error.notna()]
    rows["worse"] = rows.train_error > rows.greedy_error + 1e-9
    table = rows.groupby(["depth", "method"], sort=False).agg(
        fits=("worse", "size"), worse=("worse", "mean"), proven=("optimal", "mean"),
        train_accuracy=("train_accuracy", "mean"), test_accuracy=("test_accuracy", "mean"),
        time_s=("time_s", "mean")).reset_index()
    print("| depth | method | fits | worse than greedy | proven optimal | train acc. | "
          "test acc. | mean time (s) |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in table.itertuples():
        print(f"| {r.depth} | {r.method} | {r.fits} | {100 * r.worse:.1f}% | "
              f"{100 * r.proven:.0f}% | {r.train_accuracy:.4f} | {r.test_accuracy:.4f} | "
              f"{r.time_s:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("never_worse.csv"))
    parser.add_argument("--depths", default="2,3,4")
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args()
    if not args.summary:
        run(args.out, [int(d) for d in args.depths.split(",")], args.time_limit)
    summary(args.out)


if __name__ == "__main__":
    main()
