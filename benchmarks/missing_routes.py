"""Missing cells routed by the search (`--missing route`) vs filled (`--missing impute`):
test accuracy under stratified k-fold cross-validation.

Why: `route` became the default.  Under `route` every test exists twice (missing cells
go to the side where the test holds, or to the other side) and the solver picks; a text
column gets missing as a value of its own.  Under `impute` a missing cell takes the
column's median or most frequent value.  Routing can only pay off when *where* a cell is
missing says something about the class, and it doubles the tests the solver searches, so
this measures both situations: cells missing completely at random (routing should cost
little or nothing) and cells missing more often in some classes (routing should help).

Tables (generated in a temporary folder, never in the repository):

    transport   `benchmarks/real_tables.py`'s transport log (`make_table`, 15 inputs,
                text and numeric, class `delayed`) at `--rows`:
                  mcar 2%          as generated: 2% of every input column's cells empty
                  by class         the same table, and in addition distance_km, load_pct
                                   and region blanked in 15% of the `yes` rows and 2% of
                                   the `no` rows
    contree     continuous UCI sets of ../shared/datasets/contree/ (`--datasets`, default
                bank magic occupancy avila; class in the first column; a random
                `--rows` of them when larger):
                  mcar 10%         10% of every input column's cells emptied at random
                  by class 10%     10% of every input column's cells emptied, a cell of a
                                   row of any class but the most frequent one 7.5 times as
                                   likely as one of the most frequent class (for a binary
                                   table with a 50/50 split: about 17.6% vs 2.4%)

Every emptying is deterministic from `--seed`, and so are the folds (`Plan("kfold", k,
seed)`): impute and route see the same cells and the same splits.  Each fold prepares
its training rows alone (`engine.evaluation.CrossValidation`), so the fill values and
thresholds never see a test row.

Fits: greedy at depths 3 and 4, blossom at depth 3 (its default binarisation, `guided`,
`--time-limit` seconds per fold, default 30), and with `--algorithms ... auto` auto at
depth 3 (same time limit); `--depths ALGO=D[,D...]` changes the depths.  Solvers are
warmed up first, so no fold's time includes compiling.

Each table x algorithm x depth x policy is appended to `--out` as one JSON line as soon
as its folds are done (mean and per-fold test and train accuracy, solver seconds per
fold, wall seconds, statuses); a markdown table comparing the two policies (route -
impute, in percentage points) is printed at the end, with the machine and date above it.

    .venv/bin/python benchmarks/missing_routes.py [--rows 20000] [--folds 5] [--seed 0]
        [--algorithms greedy blossom [auto]] [--depths greedy=3,4] [--time-limit 30]
        [--datasets bank magic occupancy avila] [--threads N]
        [--out /tmp/orchard-missing-routes.jsonl] [--quick]

`--quick` is a small run for trying the script: 2,000 rows, 2 folds, greedy only.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from real_tables import make_table  # noqa: E402

from engine.data.csv_reader import RawTable, read_table  # noqa: E402
from engine.data.dataset import PrepOptions  # noqa: E402
from engine.evaluation import CrossValidation, Plan  # noqa: E402
from engine.featurize import prepare  # noqa: E402
from engine.solvers import get_solver  # noqa: E402
from engine.training import default_binarization, train  # noqa: E402
from engine.warmup import warm_up  # noqa: E402

DATASETS = ROOT.parent / "shared" / "datasets" / "contree"
DEFAULT_DATASETS = ("bank", "magic", "occupancy", "avila")
DEFAULT_ALGORITHMS = ("greedy", "blossom")
DEFAULT_DEPTHS = {"greedy": (3, 4), "blossom": (3,), "auto": (3,)}
POLICIES = ("impute", "route")

TRANSPORT_INFORMATIVE = ("distance_km", "load_pct", "region")
TRANSPORT_RATES = {"yes": 0.15, "no": 0.02}      # chance a cell of those columns is blanked
CONTREE_SHARE = 0.10                             # cells emptied per input column
CONTREE_RATIO = 7.5                              # by class: marked vs most frequent class


@dataclass
class Table:
    name: str          # transport, bank, ...
    missingness: str   # how the cells were emptied (one short phrase)
    raw: RawTable
    target: str


# --------------------------------------------------------------------------- tables


def _text_raw(frame: pd.DataFrame) -> RawTable:
    """A RawTable as the reader makes it: object columns of str, None when missing."""
    return RawTable(frame, ",", True, "utf-8", False)


def _blank(frame: pd.DataFrame, masks: dict[str, np.ndarray]) -> pd.DataFrame:
    """A copy of `frame` with the cells where `masks[column]` is True set to None."""
    columns = {}
    for name in frame.columns:
        cells = frame[name].to_numpy(dtype=object, copy=True)
        if name in masks:
            cells[masks[name]] = None
        columns[name] = cells
    return pd.DataFrame(columns, columns=frame.columns, dtype=object)


def _by_class_probability(labels: np.ndarray, share: float, ratio: float) -> np.ndarray:
    """Per-row chance of a blank: rows of every class but the most frequent one get `ratio`
    times the chance of the most frequent class's rows; `share` of the cells on average."""
    values, counts = np.unique(labels, return_counts=True)
    common = values[np.argmax(counts)]
    marked = labels != common
    low = share / ((1 - marked.mean()) + ratio * marked.mean())
    return np.where(marked, min(1.0, ratio * low), low)


def missing_share(frame: pd.DataFrame, target: str) -> float:
    inputs = [c for c in frame.columns if c != target]
    cells = sum(int(pd.isna(frame[c].to_numpy(dtype=object)).sum()) for c in inputs)
    return cells / max(1, len(frame) * len(inputs))


def transport_tables(rows: int, seed: int, workdir: Path) -> list[Table]:
    path = make_table(rows, seed, workdir / f"transport_r{rows}_s{seed}.csv")
    raw = read_table(path)
    frame = raw.frame
    labels = frame["delayed"].to_numpy(dtype=object)
    chance = np.array([TRANSPORT_RATES.get(str(v), 0.0) for v in labels])
    rng = np.random.default_rng([seed, 7])
    masks = {name: rng.random(len(frame)) < chance for name in TRANSPORT_INFORMATIVE}
    rates = " / ".join(f"{round(100 * p)}% {c}" for c, p in TRANSPORT_RATES.items())
    return [Table("transport", "mcar 2%", raw, "delayed"),
            Table("transport", f"mcar 2% + by class in {len(TRANSPORT_INFORMATIVE)} "
                  f"columns ({rates})", _text_raw(_blank(frame, masks)), "delayed")]


def contree_tables(name: str, rows: int, seed: int) -> list[Table]:
    path = DATASETS / f"{name}.txt"
    if not path.exists():
        print(f"[{name}] {path} is absent: skipped", file=sys.stderr, flush=True)
        return []
    frame = read_table(path).frame
    frame = frame.rename(columns={frame.columns[0]: "class"})
    if len(frame) > rows:
        keep = np.sort(np.random.default_rng([seed, 3]).choice(len(frame), rows,
                                                                replace=False))
        frame = frame.iloc[keep].reset_index(drop=True)
    inputs = [c for c in frame.columns if c != "class"]
    labels = frame["class"].to_numpy(dtype=object)
    n = len(frame)
    rng = np.random.default_rng([seed, 5])
    at_random = {}
    for column in inputs:     # exactly CONTREE_SHARE of each column's cells
        mask = np.zeros(n, dtype=bool)
        mask[rng.choice(n, round(CONTREE_SHARE * n), replace=False)] = True
        at_random[column] = mask
    chance = _by_class_probability(labels, CONTREE_SHARE, CONTREE_RATIO)
    by_class = {column: rng.random(n) < chance for column in inputs}
    percent = round(100 * CONTREE_SHARE)
    return [Table(name, f"mcar {percent}%", _text_raw(_blank(frame, at_random)), "class"),
            Table(name, f"by class {percent}% (×{CONTREE_RATIO:g} outside the most "
                  "frequent class)", _text_raw(_blank(frame, by_class)), "class")]


# --------------------------------------------------------------------------- fits


def options_for(table: Table, algorithm: str, depth: int, policy: str) -> PrepOptions:
    return PrepOptions(target=table.target, missing=policy,
                       binarize=default_binarization(algorithm), depth=depth)


def params_for(algorithm: str, depth: int, threads: int | None) -> dict:
    params = {"depth": depth}
    if threads is not None and any(p.name == "threads" for p in get_solver(algorithm).params):
        params["threads"] = threads
    return params


def warm(tables: list[Table], algorithms: list[str], threads: int | None) -> None:
    """Compile every solver, then fit each once per policy on a small slice of a table
    with missing cells, so the kernels of routed tests are compiled too."""
    warm_up(algorithms)
    table = tables[0]
    slice_ = RawTable(table.raw.frame.iloc[:300].reset_index(drop=True), ",", True,
                      "utf-8", False)
    for algorithm in algorithms:
        for policy in POLICIES:
            try:
                data = prepare(slice_, options_for(table, algorithm, 2, policy))
                train(data, algorithm, params_for(algorithm, 2, threads), time_limit=10)
            except Exception as exc:  # noqa: BLE001 - the real fits will report it
                print(f"warm-up of {algorithm} ({policy}) failed: {exc}", file=sys.stderr)


def fit(table: Table, algorithm: str, depth: int, policy: str, plan: Plan,
        time_limit: float | None, threads: int | None) -> dict:
    entry = {"table": table.name, "missingness": table.missingness,
             "rows": len(table.raw.frame),
             "missing_share": round(missing_share(table.raw.frame, table.target), 5),
             "algorithm": algorithm, "depth": depth, "policy": policy,
             "binarize": default_binarization(algorithm), "time_limit": time_limit,
             "folds": plan.k, "seed": plan.seed}
    fold_walls: list[float] = []
    last = [time.perf_counter()]

    def on_fold(result, n):
        now = time.perf_counter()
        fold_walls.append(now - last[0])
        last[0] = now

    start = time.perf_counter()
    try:
        evaluation = CrossValidation(table.raw, options_for(table, algorithm, depth, policy),
                                     algorithm, params_for(algorithm, depth, threads),
                                     plan, time_limit).run(on_fold)
    except Exception as exc:  # noqa: BLE001 - recorded; the other fits go on
        entry.update(status="failed", error=f"{type(exc).__name__}: {exc}",
                     wall_s=round(time.perf_counter() - start, 3))
        return entry
    folds = evaluation.folds
    entry.update(
        status="finished" if evaluation.complete else "incomplete",
        stopped_by=evaluation.stopped_by,
        test_accuracy=evaluation.mean_test_accuracy,
        test_std=evaluation.std_test_accuracy,
        train_accuracy=evaluation.mean_train_accuracy,
        test_accuracies=[f.test_accuracy for f in folds],
        train_accuracies=[f.train_accuracy for f in folds],
        fit_s=[round(f.time_s, 4) for f in folds],          # the solver's seconds
        fold_wall_s=[round(w, 4) for w in fold_walls],      # cutting + preparing + fit + scoring
        statuses=[f.status.value for f in folds],
        optimal=[f.optimal for f in folds],
        n_leaves=[f.n_leaves for f in folds],
        wall_s=round(time.perf_counter() - start, 3))
    return entry


# --------------------------------------------------------------------------- report


def machine_facts() -> dict:
    return {"cpus": os.cpu_count(), "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "python": platform.python_version(), "numpy": np.__version__,
            "pandas": pd.__version__,
            "date": datetime.datetime.now().isoformat(timespec="seconds")}


def _percent(value) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else f"{100 * value:.2f}%"


def markdown(entries: list[dict], machine: dict, plan: Plan) -> str:
    lines = [f"machine: {machine['cpus']} CPUs, {machine['processor']}, "
             f"{machine['platform']}, python {machine['python']}, numpy {machine['numpy']}, "
             f"pandas {machine['pandas']}; {machine['date']}",
             f"{plan.k}-fold stratified cross-validation, seed {plan.seed}; mean test "
             "accuracy over the folds; difference in percentage points", "",
             "| table | missingness | algorithm | depth | test acc impute | test acc route "
             "| difference (route − impute) |",
             "|---|---|---|---:|---:|---:|---:|"]
    pairs: dict[tuple, dict[str, dict]] = {}
    for e in entries:
        key = (e["table"], e["missingness"], e["algorithm"], e["depth"])
        pairs.setdefault(key, {})[e["policy"]] = e
    notes = []
    for (name, missingness, algorithm, depth), by in pairs.items():
        acc = {p: by[p].get("test_accuracy") if p in by else None for p in POLICIES}
        difference = "-"
        if all(a is not None and not math.isnan(a) for a in acc.values()):
            difference = f"{100 * (acc['route'] - acc['impute']):+.2f}"
        cells = []
        for policy in POLICIES:
            e = by.get(policy)
            text = _percent(acc[policy])
            if e is not None and e.get("status") != "finished":
                text += " *"
                notes.append(f"* {name}, {missingness}, {algorithm} depth {depth}, "
                             f"{policy}: {e.get('status')} "
                             f"{e.get('error') or e.get('stopped_by') or ''}".rstrip())
            elif e is not None and algorithm != "greedy" and not all(e.get("optimal", [])):
                text += " †"
            cells.append(text)
        lines.append(f"| {name} | {missingness} | {algorithm} | {depth} | {cells[0]} | "
                     f"{cells[1]} | {difference} |")
    if any("†" in line for line in lines):
        lines += ["", "† at least one fold stopped at the time limit (best tree so far)"]
    if notes:
        lines += [""] + notes
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


def keyed(items: list[str]) -> dict[str, tuple[int, ...]]:
    table = {}
    for item in items:
        name, _, value = item.partition("=")
        if not value:
            raise SystemExit(f"expected ALGO=D[,D...], got {item!r}")
        table[name] = tuple(int(d) for d in value.split(","))
    return table


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000,
                        help="transport table size; larger contree sets are subsampled to it")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--algorithms", nargs="+", default=list(DEFAULT_ALGORITHMS),
                        help="greedy, blossom, auto (any --algo name)")
    parser.add_argument("--depths", nargs="*", default=[], metavar="ALGO=D[,D...]",
                        help="depths of an algorithm (default: greedy 3,4; others 3)")
    parser.add_argument("--time-limit", type=float, default=30.0,
                        help="seconds per fold for every algorithm but greedy (default 30)")
    parser.add_argument("--datasets", nargs="*", default=list(DEFAULT_DATASETS),
                        help=f"contree sets from {DATASETS} (default: %(default)s)")
    parser.add_argument("--threads", type=int, default=None,
                        help="threads of the solvers that have the parameter (default: theirs)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/orchard-missing-routes.jsonl"),
                        help="JSON lines, appended")
    parser.add_argument("--quick", action="store_true",
                        help="a small run for trying: 2,000 rows, 2 folds, greedy only")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.folds, args.algorithms = 2_000, 2, ["greedy"]

    depths = dict(DEFAULT_DEPTHS)
    depths.update(keyed(args.depths))
    plan = Plan("kfold", k=args.folds, seed=args.seed)
    plan.check()
    machine = machine_facts()
    args.out.parent.mkdir(parents=True, exist_ok=True)

    entries: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="orchard-missing-") as workdir:
        start = time.perf_counter()
        tables = transport_tables(args.rows, args.seed, Path(workdir))
        for name in args.datasets:
            tables += contree_tables(name, args.rows, args.seed)
        print(f"{len(tables)} tables ready in {time.perf_counter() - start:.1f} s", flush=True)
        start = time.perf_counter()
        warm(tables, args.algorithms, args.threads)
        print(f"solvers warmed up in {time.perf_counter() - start:.1f} s", flush=True)

        for table in tables:
            for algorithm in args.algorithms:
                limit = None if algorithm == "greedy" else args.time_limit
                for depth in depths.get(algorithm, (3,)):
                    for policy in POLICIES:
                        entry = fit(table, algorithm, depth, policy, plan, limit,
                                    args.threads)
                        entry["machine"] = machine
                        entries.append(entry)
                        with open(args.out, "a") as handle:
                            handle.write(json.dumps(entry) + "\n")
                            handle.flush()
                        result = (f"test {_percent(entry.get('test_accuracy'))} "
                                  f"train {_percent(entry.get('train_accuracy'))}"
                                  if "test_accuracy" in entry else entry.get("error", ""))
                        print(f"[{table.name} | {table.missingness}] {algorithm} depth "
                              f"{depth} {policy}: {entry['status']}, {result}, "
                              f"{entry['wall_s']:.1f} s", flush=True)

    print()
    print(markdown(entries, machine, plan))
    print(f"\n(JSON lines appended to {args.out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
