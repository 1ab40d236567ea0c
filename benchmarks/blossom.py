"""Blossom on the CP4IM sets, next to scikit-learn CART and pystreed.

Three tables (issue 3), all on the same 0/1 matrices:
  (a) time to Blossom's first complete tree vs a CART fit, depths 5, 7, 10, and the
      first tree's error next to CART's;
  (b) Blossom's error at 3 s, 10 s and 60 s (the paper's anytime table) at depths
      5, 7, 10 (budgets shrink with --budget-scale);
  (c) time to prove optimality at depths 3 and 4 (--depths) next to pystreed, both
      single-threaded unless --threads says otherwise (pystreed runs on one).
JIT warm-up is measured once, first, and reported separately.

    .venv/bin/python benchmarks/blossom.py [--tables abc] [--budget-scale 1.0] [--sets a,b]
        [--depths 3,4] [--threads 1] [--repeat 1]
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
from sklearn.tree import DecisionTreeClassifier

from engine.data.csv_reader import read_table
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.training import train

CP4IM = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "cp4im"


def load(name: str):
    return prepare(read_table(CP4IM / f"{name}.txt"), PrepOptions(target="first"))


def geomean(values) -> float:
    return math.exp(np.mean(np.log(values))) if values else float("nan")


def first_tree_table(sets) -> None:
    print("\n(a) time to first tree vs CART fit")
    print("| dataset | depth | blossom first tree (s) | CART fit (s) | ratio | "
          "first-tree error | CART error |\n|---|---|---|---|---|---|---|")
    ratios, worse = [], 0
    for name in sets:
        data = load(name)
        X = data.X.astype(np.float64)
        for depth in (5, 7, 10):
            result = train(data, "blossom", {"depth": depth}, time_limit=2.0)
            t_first, first_error, _ = result.incumbents[0]
            start = time.perf_counter()
            clf = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, data.y)
            cart_time = time.perf_counter() - start
            cart_error = int((clf.predict(X) != data.y).sum())
            ratios.append(t_first / cart_time)
            worse += first_error > cart_error
            print(f"| {name} | {depth} | {t_first:.4f} | {cart_time:.4f} | "
                  f"{t_first / cart_time:.2f} | {first_error:g} | {cart_error} |")
    print(f"geometric-mean ratio first tree / CART: {geomean(ratios):.2f}; "
          f"first tree worse than CART in {worse} of {len(ratios)} runs")


def anytime_table(sets, scale: float) -> None:
    budgets = [3 * scale, 10 * scale, 60 * scale]
    print(f"\n(b) error at {', '.join(f'{b:g}' for b in budgets)} s")
    print("| dataset | depth | " + " | ".join(f"error at {b:g} s" for b in budgets) +
          " | optimal | \n|---|---|---|---|---|---|")
    for name in sets:
        data = load(name)
        for depth in (5, 7, 10):
            result = train(data, "blossom", {"depth": depth}, time_limit=budgets[-1])
            errors = []
            for budget in budgets:
                seen = [e for t, e, _ in result.incumbents if t <= budget]
                errors.append(f"{min(seen):g}" if seen else "-")
            print(f"| {name} | {depth} | " + " | ".join(errors) +
                  f" | {result.optimal} |")


def proof_table(sets, limit: float, depths=(3, 4), threads: int = 1,
                repeat: int = 1) -> None:
    from pystreed import STreeDClassifier
    print(f"\n(c) time to prove optimality (limit {limit:g} s, blossom threads {threads}, "
          f"best of {repeat})")
    print("| dataset | depth | blossom (s) | pystreed (s) | ratio | errors |\n"
          "|---|---|---|---|---|---|")
    ratios = {depth: [] for depth in depths}
    for name in sets:
        data = load(name)
        X = data.X.astype(np.int32)
        for depth in depths:
            runs, streed_time = [], math.inf
            for _ in range(repeat):   # alternately, so both see the same load
                runs.append(train(data, "blossom", {"depth": depth, "threads": threads},
                                  time_limit=limit))
                start = time.perf_counter()
                model = STreeDClassifier(max_depth=depth, time_limit=limit,
                                         cost_complexity=0.0)
                model.fit(X, data.y)
                streed_time = min(streed_time, time.perf_counter() - start)
            result = min(runs, key=lambda r: r.time_s)
            streed_error = int((model.predict(X) != data.y).sum())
            both = result.optimal and streed_time < limit
            if both:
                ratios[depth].append(result.time_s / streed_time)
            print(f"| {name} | {depth} | {result.time_s:.3f}{'' if result.optimal else ' (limit)'}"
                  f" | {streed_time:.3f} | {result.time_s / streed_time:.2f} | "
                  f"{result.train_error:g} / {streed_error} |")
    for depth, values in ratios.items():
        print(f"depth {depth}: geometric-mean time ratio blossom/pystreed over "
              f"{len(values)} sets proven by both: {geomean(values):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tables", default="abc")
    parser.add_argument("--budget-scale", type=float, default=1.0)
    parser.add_argument("--proof-limit", type=float, default=60.0)
    parser.add_argument("--sets", help="comma-separated CP4IM names (default: all)")
    parser.add_argument("--depths", default="3,4", help="depths of table (c)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="table (c): best time of this many runs of each")
    parser.add_argument("--threads", type=int, default=1,
                        help="blossom's threads in table (c) (0: one per core)")
    args = parser.parse_args()
    sets = args.sets.split(",") if args.sets else sorted(
        p.stem for p in CP4IM.iterdir() if p.suffix == ".txt")

    start = time.perf_counter()
    train(load("zoo-1"), "blossom", {"depth": 2})
    print(f"JIT warm-up (first blossom call incl. compile or cache load): "
          f"{time.perf_counter() - start:.2f} s; {time.strftime('%Y-%m-%d')}")
    if "a" in args.tables:
        first_tree_table(sets)
    if "b" in args.tables:
        anytime_table(sets, args.budget_scale)
    if "c" in args.tables:
        proof_table(sets, args.proof_limit, [int(d) for d in args.depths.split(",")],
                    args.threads, args.repeat)


if __name__ == "__main__":
    main()
