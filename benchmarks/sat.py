"""sat-depth and sat-size on Avellaneda's datasets, next to the paper's Tables 1-3.

(a) For each set of shared/datasets/inferdt: minimum depth, minimum size (nodes,
    internal and leaves), rows used by the incremental loop and seconds, for both
    solvers, beside the paper's figures.  Every column is binarised the way the SAT
    solvers do by default (a threshold at every midpoint, the reference code's
    default too); `--onehot` makes every input categorical instead (one 0/1 feature
    per value).  The paper's Table 3 figures are means over the training folds of a
    5-fold cross-validation, ours are on the whole set.
(b) With `--compare`: sat-depth with each bundled SAT solver on a few sets, which is
    how the default `sat_solver` was chosen.

    .venv/bin/python benchmarks/sat.py [--sets mouse,car] [--limit 300] [--onehot]
                                       [--compare mouse,monk2,car]
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

from engine.data.columns import ColumnKind
from engine.data.csv_reader import read_table
from engine.data.dataset import PrepOptions, prepare
from engine.solvers.sat import SAT_SOLVER, SAT_SOLVERS
from engine.training import default_binarization, train

INFERDT = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "inferdt"
SETS = ("mouse", "car", "iris", "monk1", "monk2", "monk3", "wine", "balance-scale")

# The paper's figures: (DT_depth s, examples, k, n) and (DT_size s, examples, k, n);
# None where the paper gives none.  Tables 1 and 2 are on the whole set, Table 3 are
# means over 5 training folds (hence fractional depths and sizes).
PAPER = {
    "mouse": ((0.02, 33, 4, 31), (0.07, 37, 4, 15)),
    "car": ((127, 603, 8, 511), (217, 635, 8, 143)),
    "iris": ((0.018, None, 3, None), (0.03, None, None, 10.6)),
    "monk1": ((0.024, None, 4.4, None), (0.08, None, None, 17)),
    "monk2": ((0.19, None, 5.8, None), (9.1, None, None, 47.8)),
    "monk3": ((0.03, None, 4.8, None), (0.21, None, None, 23.4)),
    "wine": ((0.6, None, 3, None), (1.2, None, None, 7.8)),
    "balance-scale": ((50, None, 8, None), (183, None, None, 268)),
}


def load(name: str, onehot: bool):
    raw = read_table(INFERDT / f"{name}.csv")
    *inputs, target = raw.frame.columns
    kinds = {c: ColumnKind.CATEGORICAL for c in inputs} if onehot else {}
    return prepare(raw, PrepOptions(target=target, kinds=kinds,
                                    binarize=default_binarization("sat-depth")))


def fmt(value) -> str:
    return "-" if value is None else f"{value:g}"


def run(data, algorithm: str, limit: float, solver: str):
    start = time.perf_counter()
    result = train(data, algorithm, {"sat_solver": solver}, time_limit=limit)
    return result, time.perf_counter() - start


def paper_table(sets, limit: float, onehot: bool, solver: str) -> None:
    print(f"\n(a) minimum depth and size, time limit {limit:g} s, SAT solver {solver}, "
          f"{'one-hot' if onehot else 'midpoint'} features")
    print("| dataset | rows | 0/1 features | algorithm | status | depth k | nodes n | "
          "examples used | time (s) | paper k | paper n | paper examples | paper time (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in sets:
        data = load(name, onehot)
        for algorithm, paper in zip(("sat-depth", "sat-size"), PAPER[name]):
            result, seconds = run(data, algorithm, limit, solver)
            found = result.stats.get("depth_lower_bound")
            depth = result.tree.depth if result.train_error == 0 else f">= {found}"
            nodes = result.tree.n_nodes if result.train_error == 0 else "-"
            p_time, p_examples, p_k, p_n = paper
            print(f"| {name} | {data.n_rows} | {data.n_features} | {algorithm} | "
                  f"{result.status.value} | {depth} | {nodes} | "
                  f"{result.stats['examples_used']} | {seconds:.3f} | {fmt(p_k)} | "
                  f"{fmt(p_n)} | {fmt(p_examples)} | {fmt(p_time)} |", flush=True)


def solver_table(sets, limit: float, onehot: bool) -> None:
    print(f"\n(b) sat-depth seconds by SAT solver (time limit {limit:g} s)")
    print("| dataset | " + " | ".join(SAT_SOLVERS) + " |")
    print("|---|" + "---|" * len(SAT_SOLVERS))
    for name in sets:
        data = load(name, onehot)
        cells = []
        for solver in SAT_SOLVERS:
            result, seconds = run(data, "sat-depth", limit, solver)
            cells.append(f"{seconds:.2f}" + ("" if result.optimal else " (limit)"))
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--limit", type=float, default=300.0, help="seconds per run")
    parser.add_argument("--onehot", action="store_true",
                        help="one 0/1 feature per value of every column")
    parser.add_argument("--solver", default=SAT_SOLVER.default, choices=SAT_SOLVERS)
    parser.add_argument("--compare", default="",
                        help="sets on which to time every SAT solver (table b)")
    args = parser.parse_args()
    print(f"{platform.node()}: {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}")
    if args.sets:
        paper_table(args.sets.split(","), args.limit, args.onehot, args.solver)
    if args.compare:
        solver_table(args.compare.split(","), args.limit, args.onehot)


if __name__ == "__main__":
    main()
