"""sat-depth and sat-size on Avellaneda's datasets, next to the paper's Tables 1-3.

(a) For each set of shared/datasets/inferdt: minimum depth, minimum size (nodes,
    internal and leaves), rows used by the incremental loop and seconds, for both
    solvers, beside the paper's figures.  Every column is binarised the way the SAT
    solvers do by default (a threshold at every midpoint, the reference code's
    default too); `--onehot` makes every input categorical instead (one 0/1 feature
    per value).  The paper's Table 3 figures are means over the training folds of a
    5-fold cross-validation, ours are on the whole set.
(b) With `--compare`: sat-depth with each bundled SAT solver on a few sets, which is
    how the default `sat_solver` was chosen; with `--compare-size`, sat-size with
    each bundled solver for its size search (the depth search on the default), which
    is how the default `size_sat_solver` was chosen.
(c) With `--inferdt BIN`: ours beside the authors' C++ InferDT (a binary built from
    github.com/FlorentAvellaneda/InferDT against MiniSat; not shipped with Orchard),
    on the same CSV files in the same process, each run timed as wall-clock seconds
    (InferDT's include reading its CSV, ours include preparing the data).  The
    ratio is ours / InferDT; the depth and size must agree, or the row says so.
    Building it (Debian: apt-get install libboost-dev; g++ 12 needs -fpermissive for
    MiniSat's headers): `make lr MINISAT_REL="-O3 -D NDEBUG -fpermissive"` in a
    checkout of github.com/niklasso/minisat, then in InferDT's `g++ -std=c++1z -O3
    -DNDEBUG -fpermissive -I<minisat> src/main.cpp -o InferDT
    -L<minisat>/build/release/lib -lminisat -static`.

    .venv/bin/python benchmarks/sat.py [--sets mouse,car] [--limit 300] [--onehot]
                                       [--compare mouse,monk2,car] [--inferdt BIN]
                                       [--compare-size monk2,monk3]
"""

from __future__ import annotations

import argparse
import platform
import re
import subprocess
import time
from pathlib import Path

from engine.data.columns import ColumnKind
from engine.data.csv_reader import read_table
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.solvers.sat.adapter import SAT_SOLVER, SAT_SOLVERS
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


def run(data, algorithm: str, limit: float, solver: str, **params):
    start = time.perf_counter()
    result = train(data, algorithm, {"sat_solver": solver, **params}, time_limit=limit)
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


def solver_table(sets, limit: float, onehot: bool, algorithm: str) -> None:
    role = "SAT solver" if algorithm == "sat-depth" else "SAT solver of the size search"
    print(f"\n(b) {algorithm} seconds by {role} (time limit {limit:g} s)")
    print("| dataset | " + " | ".join(SAT_SOLVERS) + " |")
    print("|---|" + "---|" * len(SAT_SOLVERS))
    for name in sets:
        data = load(name, onehot)
        cells = []
        for solver in SAT_SOLVERS:
            if algorithm == "sat-depth":
                result, seconds = run(data, algorithm, limit, solver)
            else:
                result, seconds = run(data, algorithm, limit, SAT_SOLVER.default,
                                      size_sat_solver=solver)
            cells.append(f"{seconds:.2f}" + ("" if result.optimal else " (limit)"))
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


def inferdt(binary: str, name: str, algorithm: str, limit: float):
    """(depth, nodes, seconds) of one InferDT run, or None on its time limit."""
    command = [binary, "-x", "-v"] + (["-d"] if algorithm == "sat-depth" else [])
    command += [str(INFERDT / f"{name}.csv"), "infer"]
    start = time.perf_counter()
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=limit,
                             check=True).stdout
    except subprocess.TimeoutExpired:
        return None
    seconds = time.perf_counter() - start
    depth = int(re.search(r"Depth: (\d+)", out).group(1))
    nodes = int(re.search(r"Number of nodes: (\d+)", out).group(1))
    return depth, nodes, seconds


def inferdt_table(binary: str, sets, limit: float, solver: str) -> None:
    print(f"\n(c) ours beside InferDT (C++, MiniSat), time limit {limit:g} s, our SAT "
          f"solver {solver}")
    print("| dataset | algorithm | depth ours / InferDT | nodes ours / InferDT | "
          "ours (s) | InferDT (s) | ratio |")
    print("|---|---|---|---|---|---|---|")
    run(load("mouse", False), "sat-size", limit, solver)   # imports and first calls
    for name in sets:
        for algorithm in ("sat-depth", "sat-size"):
            start = time.perf_counter()
            result, _ = run(load(name, False), algorithm, limit, solver)
            ours = time.perf_counter() - start
            theirs = inferdt(binary, name, algorithm, limit)
            depth = result.tree.depth if result.optimal else "-"
            nodes = result.tree.n_nodes if result.optimal and algorithm == "sat-size" else "-"
            if theirs is None:
                cells = f"{depth} / - | {nodes} / - | {ours:.3f} | > {limit:g} | -"
            else:
                t_depth, t_nodes, t_seconds = theirs
                t_nodes = t_nodes if algorithm == "sat-size" else "-"
                agree = depth == t_depth and nodes == t_nodes
                ratio = f"{ours / t_seconds:.2f}" if result.optimal else "-"
                cells = (f"{depth} / {t_depth} | {nodes} / {t_nodes} | {ours:.3f} | "
                         f"{t_seconds:.3f} | {ratio}" + ("" if agree else " (differ)"))
            print(f"| {name} | {algorithm} | {cells} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--limit", type=float, default=300.0, help="seconds per run")
    parser.add_argument("--onehot", action="store_true",
                        help="one 0/1 feature per value of every column")
    parser.add_argument("--solver", default=SAT_SOLVER.default, choices=SAT_SOLVERS)
    parser.add_argument("--compare", default="",
                        help="sets on which to time every SAT solver (table b)")
    parser.add_argument("--compare-size", default="",
                        help="sets on which to time sat-size with every size solver")
    parser.add_argument("--inferdt", default="",
                        help="an InferDT binary to run beside ours (table c)")
    args = parser.parse_args()
    print(f"{platform.node()}: {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}")
    if args.inferdt:
        inferdt_table(args.inferdt, args.sets.split(","), args.limit, args.solver)
    elif args.sets:
        paper_table(args.sets.split(","), args.limit, args.onehot, args.solver)
    if args.compare:
        solver_table(args.compare.split(","), args.limit, args.onehot, "sat-depth")
    if args.compare_size:
        solver_table(args.compare_size.split(","), args.limit, args.onehot, "sat-size")


if __name__ == "__main__":
    main()
