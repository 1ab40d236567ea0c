"""Anytime behaviour on CP4IM: the structure of Tables 2-3 of the CA-DL8.5 paper.

For each dataset and depth (6 and 7) every algorithm runs once with the same time
budget: `greedy` (CART-like, one tree), `dl85`, every CA-DL8.5 variant (rules
purity, gain, discrepancy, top-k, top-k* x relaxations monotonic, exponential,
Luby, paper defaults), and `blossom`.  Each run's incumbents (time, error) give its
primal gap p(t) against the best error any run found (or the proven optimum), and
the primal integral P(T) = integral of p over [0, T] (`engine.metrics`); the tables
average P(T) over the datasets at several horizons T (the paper's 15 ... 300 s
scaled to the budget).  Smaller is better.

Like the paper, datasets where `dl85` proves optimality within 1 s (at that depth)
are left out.  Every solver is warmed up (JIT) before the clock runs.  Incumbent
times count from the start of `train` (data preparation included).  `dl85`'s
and `cadl85`'s incumbents include their "stop-now" trees (what they return when
stopped at that moment); with `--complete-only` they publish only the trees completed
at the root (DL8.5's optimum, CA-DL8.5's restart results), as the paper reports them.

    .venv/bin/python benchmarks/anytime.py [--budget 30] [--depths 6,7] [--sets a,b]
        [--algorithms greedy,dl85,...] [--save runs.json] [--load runs.json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from engine.data.csv_reader import read_table
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.metrics import primal_integral
from engine.training import train
from engine.warmup import warm_up

CP4IM = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "cp4im"
RULES = ("purity", "gain", "discrepancy", "topk", "topk_star")
RELAXATIONS = ("monotonic", "exponential", "luby")
PAPER_POINTS = (15, 30, 60, 120, 240, 300)   # seconds, for a 300 s budget


def algorithms(complete_only: bool = False) -> dict[str, tuple[str, dict]]:
    """Label -> (solver, parameters).  complete_only: dl85 and cadl85 publish only
    the trees completed at the root (each restart's result), as the paper's curves."""
    extra = {"anytime_trees": False} if complete_only else {}
    runs = {"greedy": ("greedy", {}), "dl85": ("dl85", dict(extra))}
    for rule in RULES:
        for relax in RELAXATIONS:
            runs[f"ca-{rule}-{relax}"] = ("cadl85", {"rule": rule, "relax": relax, **extra})
    runs["blossom"] = ("blossom", {})
    return runs


def load(name: str):
    return prepare(read_table(CP4IM / f"{name}.txt"), PrepOptions(target="first"))


def eligible(data, depth: int) -> bool:
    """False when dl85 proves optimality within 1 s (the paper's exclusion)."""
    return not train(data, "dl85", {"depth": depth}, time_limit=1.0).optimal


def run_all(sets, depths, budget, names, complete_only=False) -> dict:
    table = algorithms(complete_only)
    runs: dict = {}
    for name in sets:
        data = load(name)
        for depth in depths:
            key = f"{name}/{depth}"
            if not eligible(data, depth):
                print(f"{key}: dl85 proves it within 1 s, left out", flush=True)
                continue
            runs[key] = {}
            for label in names:
                algorithm, params = table[label]
                result = train(data, algorithm, {"depth": depth, **params},
                               time_limit=budget)
                runs[key][label] = {
                    "incumbents": [(float(t), float(e)) for t, e, _ in result.incumbents],
                    "error": result.train_error, "optimal": bool(result.optimal),
                    "status": result.status.value, "time": result.time_s}
                print(f"{key} {label}: error {result.train_error:g} "
                      f"({result.status.value}, {result.time_s:.1f} s, "
                      f"{len(result.incumbents)} incumbents)", flush=True)
    return runs


def tables(runs: dict, depths, budget, names, known: dict | None = None) -> None:
    """Average primal integrals; `known` holds best errors found elsewhere."""
    known = known or {}
    points = [budget * p / PAPER_POINTS[-1] for p in PAPER_POINTS]
    for depth in depths:
        keys = [k for k in runs if k.endswith(f"/{depth}")]
        if not keys:
            continue
        print(f"\nAverage primal integral at depth {depth} over {len(keys)} datasets "
              f"({', '.join(k.split('/')[0] for k in keys)}); budget {budget:g} s")
        print("| approach | " + " | ".join(f"{p:g} s" for p in points) + " | optimal |")
        print("|---|" + "---|" * (len(points) + 1))
        rows = {}
        for label in names:
            values = np.zeros(len(points))
            proven = 0
            for key in keys:
                best = min([r["error"] for r in runs[key].values()] +
                           [known.get(key, np.inf)])
                run = runs[key][label]
                for i, horizon in enumerate(points):
                    values[i] += primal_integral(run["incumbents"], best, horizon)
                proven += run["optimal"]
            values /= len(keys)
            rows[label] = values
            print(f"| {label} | " + " | ".join(f"{v:.2f}" for v in values) +
                  f" | {proven}/{len(keys)} |")
        finding(rows, points)


def finding(rows: dict, points) -> None:
    """Whether CA-Discrepancy and CA-Top-k* are ahead of DL8.5 (lower integral)."""
    if "dl85" not in rows:
        return
    for prefix in ("ca-discrepancy", "ca-topk_star"):
        labels = [label for label in rows if label.startswith(prefix)]
        if not labels:
            continue
        ahead = {label: [bool(rows[label][i] < rows["dl85"][i]) for i in range(len(points))]
                 for label in labels}
        summary = ", ".join(f"{label}: {sum(v)}/{len(v)} horizons" for label, v in
                            ahead.items())
        print(f"ahead of dl85 — {summary}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--budget", type=float, default=30.0)
    parser.add_argument("--depths", default="6,7")
    parser.add_argument("--sets", help="comma-separated CP4IM names (default: all)")
    parser.add_argument("--algorithms", help="comma-separated labels (default: all)")
    parser.add_argument("--save", help="write the runs to this JSON file")
    parser.add_argument("--load", help="read runs from this JSON file instead of running")
    parser.add_argument("--best-from", action="append", default=[],
                        help="saved runs whose errors also count as best known")
    parser.add_argument("--complete-only", action="store_true",
                        help="dl85 / cadl85 publish only trees completed at the root")
    args = parser.parse_args()
    depths = [int(d) for d in args.depths.split(",")]
    names = args.algorithms.split(",") if args.algorithms else list(algorithms())
    if args.load:
        saved = json.loads(Path(args.load).read_text())
        runs, budget = saved["runs"], saved["budget"]
    else:
        sets = args.sets.split(",") if args.sets else sorted(
            p.stem for p in CP4IM.iterdir() if p.suffix == ".txt")
        report = warm_up(sorted({algorithms()[label][0] for label in names}))
        with open("/proc/loadavg") as f:
            load_avg = " ".join(f.read().split()[:3])
        print(f"{time.strftime('%Y-%m-%d %H:%M')}; load average {load_avg}; JIT "
              f"warm-up of all solvers {report.total:.1f} s; budget {args.budget:g} s "
              "per run", flush=True)
        budget = args.budget
        runs = run_all(sets, depths, budget, names, args.complete_only)
        if args.save:
            Path(args.save).write_text(json.dumps({"budget": budget, "runs": runs}))
    known: dict = {}
    for path in args.best_from:
        for key, by_label in json.loads(Path(path).read_text())["runs"].items():
            known[key] = min([known.get(key, np.inf)] + [r["error"] for r in by_label.values()])
    names = [label for label in names if all(label in r for r in runs.values())]
    tables(runs, depths, budget, names, known)


if __name__ == "__main__":
    main()
