"""Generalisation: test accuracy and size of tuned Orchard trees next to tuned CART.

Why: an optimal tree fits its training rows as well as any tree of its depth can, which
says nothing about new rows.  What a user needs to know (issue 36) is whether a tree
whose size `orchard.tune` chose by cross-validation predicts unseen rows as well as
scikit-learn's CART tuned the usual way, and with how many leaves.

How: an outer stratified k-fold (`--folds`, 5; shuffled with `--seed`, the same
splits for every method) on each table; every method is trained on the outer training
part only and scored on the held-out part:

    cart-d3, cart-d4   DecisionTreeClassifier(max_depth=3 or 4, random_state=0)
    cart-tuned         GridSearchCV over max_depth 1-6 and None, min_samples_leaf 1, 5,
                       20, ccp_alpha 0, 0.001, 0.005, 0.01, 0.02 (inner stratified 5-fold,
                       shuffled, seed 0; the best mean score), refit on the training part
    pystreed-tuned     pystreed's STreeDClassifier(optimization_task="accuracy",
                       max_depth=4, hyper_tune=True, time_limit=--time-limit): its own
                       inner validation of the tree's size, on its own quantile
                       binarisation of numeric columns
    orchard-ALGO       orchard.tune(X, y, algorithm=ALGO, depths=--depths, cv=5,
                       time_limit=--time-limit, random_state=0) for ALGO in greedy,
                       blossom, contree, auto: the inner 5-fold with the one-standard-
                       error rule (engine.tuning), the choice refit on the training part;
                       greedy also tunes its least leaf (1, 5, 20)

The time limit covers one outer fold's whole tuning, final fit included.  Orchard's
kernels are loaded (or compiled) before anything is timed.  Orchard's exact solvers
use every core; CART and the grid search use one.

Per table and method: mean outer test accuracy (± its standard deviation over the
outer folds), mean leaves, the depth of each fold's tree, mean wall seconds per outer
fold (fit only), and for Orchard how many outer folds' final fits the time limit
stopped.  Each (table, method) result is appended to `--out` as one JSON line as soon
as it is ready (per-fold numbers and chosen settings included), so a partial run is
not lost.  At the end: a markdown table, and a summary (each method's mean accuracy and
leaves over the tables; each Orchard method against cart-tuned: on how many tables its
accuracy is at least cart-tuned's, and its mean leaves next to cart-tuned's);
`--summary` prints the same from what `--out` holds (a partial or earlier run).

Tables: scikit-learn's bundled iris, wine and breast_cancer, and from
shared/datasets (read in place, class in the first column) the ConTree sets bank,
raisin, rice, segment and wilt (numeric) and the CP4IM sets vote and heart-cleveland
(0/1).  Times depend on the machine's load, and so can an Orchard accuracy where the
time limit stopped a search (`final fit at limit`; the JSON also counts the inner folds
it stopped).

    .venv/bin/python benchmarks/generalisation.py [--tables iris,wine] [--methods
        cart-d3,cart-d4,cart-tuned,pystreed-tuned,orchard-greedy,orchard-blossom,orchard-contree,
        orchard-auto] [--time-limit 30] [--depths 1-6] [--folds 5] [--seed 0]
        [--out /tmp/orchard-generalisation/results.jsonl]
    .venv/bin/python benchmarks/generalisation.py --summary [--out FILE]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np
from sklearn import datasets
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.tree import DecisionTreeClassifier

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.estimators import tune  # noqa: E402
from engine.warmup import warm_up  # noqa: E402

DATASETS = ROOT.parent / "shared" / "datasets"
TABLES = {   # name -> where it comes from: scikit-learn, or a folder of shared/datasets
    "iris": "sklearn", "wine": "sklearn", "breast_cancer": "sklearn",
    "bank": "contree", "raisin": "contree", "rice": "contree", "segment": "contree",
    "wilt": "contree", "vote": "cp4im", "heart-cleveland": "cp4im",
}
METHODS = ("cart-d3", "cart-d4", "cart-tuned", "pystreed-tuned", "orchard-greedy",
           "orchard-blossom", "orchard-contree", "orchard-auto")
# pystreed's own tuning (issue 36's peer): its hyper_tune on its own quantile
# binarisation, at most this depth (it tunes the size below it).
PYSTREED_DEPTH = 4
CART_GRID = {"max_depth": [1, 2, 3, 4, 5, 6, None], "min_samples_leaf": [1, 5, 20],
             "ccp_alpha": [0.0, 0.001, 0.005, 0.01, 0.02]}
INNER_FOLDS = 5
BASELINE = "cart-tuned"


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    source = TABLES[name]
    if source == "sklearn":
        return getattr(datasets, f"load_{name}")(return_X_y=True)
    table = np.loadtxt(DATASETS / source / f"{name}.txt")
    return table[:, 1:], table[:, 0].astype(np.int64)


def fit(method: str, X: np.ndarray, y: np.ndarray, depths: list[int],
        time_limit: float) -> tuple[object, dict]:
    """The fitted model of `method` on X, y and what to record of it: leaves, depth,
    the chosen setting and (Orchard) the final fit's status."""
    if method.startswith("cart-d"):
        tree = DecisionTreeClassifier(max_depth=int(method[6:]), random_state=0).fit(X, y)
        return tree, {"leaves": int(tree.get_n_leaves()), "depth": int(tree.get_depth())}
    if method == "cart-tuned":
        inner = StratifiedKFold(INNER_FOLDS, shuffle=True, random_state=0)
        search = GridSearchCV(DecisionTreeClassifier(random_state=0), CART_GRID,
                              cv=inner).fit(X, y)
        tree = search.best_estimator_
        return search, {"leaves": int(tree.get_n_leaves()), "depth": int(tree.get_depth()),
                        "chosen": search.best_params_}
    if method == "pystreed-tuned":
        from pystreed import STreeDClassifier
        tree = STreeDClassifier(optimization_task="accuracy", max_depth=PYSTREED_DEPTH,
                                hyper_tune=True, time_limit=time_limit,
                                random_seed=0).fit(X, y)
        return tree, {"leaves": int(tree.get_n_leaves()), "depth": int(tree.get_depth())}
    model = tune(X, y, algorithm=method.removeprefix("orchard-"), depths=depths,
                 cv=INNER_FOLDS, time_limit=time_limit, random_state=0)
    return model, {"leaves": model.model_.n_leaves, "depth": model.model_.depth,
                   "chosen": model.tuned_params_, "status": model.status_,
                   "inner_folds_at_limit": int(model.tuning_["folds_at_time_limit"].sum())}


def evaluate(table: str, method: str, X, y, args) -> dict:
    """Every outer fold of `method` on the table; a failure is recorded, not raised."""
    entry = {"table": table, "method": method, "rows": len(y), "features": X.shape[1],
             "classes": len(np.unique(y)), "orchard": args.orchard,
             "settings": {"folds": args.folds, "seed": args.seed,
                          "time_limit": args.time_limit, "depths": args.depths}}
    folds = []
    splits = StratifiedKFold(args.folds, shuffle=True, random_state=args.seed).split(X, y)
    try:
        for train, test in splits:
            start = time.perf_counter()
            model, facts = fit(method, X[train], y[train], args.depths, args.time_limit)
            seconds = time.perf_counter() - start
            accuracy = float(np.mean(model.predict(X[test]) == y[test]))
            folds.append({"accuracy": accuracy, "seconds": seconds, **facts})
    except Exception as error:  # noqa: BLE001 - recorded in its row, the others go on
        return {**entry, "error": f"{type(error).__name__}: {error}"}
    return {**entry, "folds": folds,
            "accuracy": float(np.mean([f["accuracy"] for f in folds])),
            "accuracy_sd": float(np.std([f["accuracy"] for f in folds], ddof=1)),
            "leaves": float(np.mean([f["leaves"] for f in folds])),
            "seconds": float(np.mean([f["seconds"] for f in folds]))}


def orchard_version() -> str:
    """The commit this script's engine comes from, and whether it has changes."""
    if not (ROOT / ".git").exists():
        return "no git checkout"

    def ask(*words):   # read only: no optional locks, so no index refresh
        return subprocess.run(["git", "--no-optional-locks", "-C", str(ROOT), *words],
                              capture_output=True, text=True).stdout.strip()
    changed = ask("status", "--porcelain", "--untracked-files=no")
    return ask("rev-parse", "--short", "HEAD") + (" with uncommitted changes" if changed else "")


def machine() -> str:
    with open("/proc/cpuinfo", encoding="utf-8") as info:
        cpu = next((line.split(":", 1)[1].strip() for line in info
                    if line.startswith("model name")), platform.machine())
    versions = ", ".join(f"{name} {version(name)}"
                         for name in ("numpy", "numba", "scikit-learn"))
    return (f"{datetime.datetime.now().isoformat(timespec='seconds')}; {cpu}, "
            f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; "
            f"{platform.platform()}; Python {platform.python_version()}, {versions}")


def markdown(results: list[dict]) -> str:
    lines = ["| table | rows | features | classes | method | test accuracy | leaves | "
             "depths | s / fold | final fit at limit |",
             "|---|---:|---:|---:|---|---:|---:|---|---:|---:|"]
    for r in results:
        facts = f"| {r['table']} | {r['rows']} | {r['features']} | {r['classes']} | {r['method']} |"
        if "error" in r:
            lines.append(f"{facts} failed: {r['error']} | | | | |")
            continue
        depths = " ".join(str(f["depth"]) for f in r["folds"])
        at_limit = "-" if not r["method"].startswith("orchard-") else \
            f"{sum(f['status'] == 'time_limit' for f in r['folds'])}/{len(r['folds'])}"
        lines.append(f"{facts} {r['accuracy']:.4f} ± {r['accuracy_sd']:.4f} | "
                     f"{r['leaves']:.1f} | {depths} | {r['seconds']:.1f} | {at_limit} |")
    return "\n".join(lines)


def summary(results: list[dict]) -> str:
    results = [r for r in results if "error" not in r]
    by = {(r["table"], r["method"]): r for r in results}
    methods = [m for m in METHODS if any(r["method"] == m for r in results)]
    lines = ["| method | tables | mean accuracy | mean leaves | mean s / fold |",
             "|---|---:|---:|---:|---:|"]
    for m in methods:
        mine = [r for r in results if r["method"] == m]
        lines.append(f"| {m} | {len(mine)} | {np.mean([r['accuracy'] for r in mine]):.4f} | "
                     f"{np.mean([r['leaves'] for r in mine]):.1f} | "
                     f"{np.mean([r['seconds'] for r in mine]):.1f} |")
    lines += ["", f"| method | tables with both | accuracy ≥ {BASELINE} | mean accuracy "
              f"(method / {BASELINE}) | mean leaves (method / {BASELINE}) |",
              "|---|---:|---:|---|---|"]
    for m in (m for m in methods if not m.startswith("cart-")):
        pairs = [(r, by[(r["table"], BASELINE)]) for r in results
                 if r["method"] == m and (r["table"], BASELINE) in by]
        if not pairs:
            continue
        at_least = sum(r["accuracy"] >= b["accuracy"] - 1e-12 for r, b in pairs)
        lines.append(
            f"| {m} | {len(pairs)} | {at_least} | "
            f"{np.mean([r['accuracy'] for r, _ in pairs]):.4f} / "
            f"{np.mean([b['accuracy'] for _, b in pairs]):.4f} | "
            f"{np.mean([r['leaves'] for r, _ in pairs]):.1f} / "
            f"{np.mean([b['leaves'] for _, b in pairs]):.1f} |")
    return "\n".join(lines)


def names(text: str, known) -> list[str]:
    chosen = [name for name in text.split(",") if name]
    unknown = [name for name in chosen if name not in known]
    if unknown:
        raise SystemExit(f"unknown: {', '.join(unknown)} (known: {', '.join(known)})")
    return chosen


def depth_range(text: str) -> list[int]:
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default=",".join(TABLES))
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--time-limit", type=float, default=30.0,
                        help="seconds for one outer fold's orchard.tune (default 30)")
    parser.add_argument("--depths", type=depth_range, default="1-6",
                        help="depths orchard.tune tries, e.g. 1-6 (default)")
    parser.add_argument("--folds", type=int, default=5, help="outer folds (default 5)")
    parser.add_argument("--seed", type=int, default=0, help="outer folds' shuffle")
    parser.add_argument("--out", type=Path,
                        default=Path("/tmp/orchard-generalisation/results.jsonl"),
                        help="JSON lines, appended")
    parser.add_argument("--summary", action="store_true",
                        help="run nothing: the tables of what --out holds (the last "
                             "line of each table and method)")
    args = parser.parse_args(argv)
    if args.summary:
        kept = {}
        for line in args.out.read_text(encoding="utf-8").splitlines():
            result = json.loads(line)
            kept[(result["table"], result["method"])] = result
        report(list(kept.values()))
        return 0
    tables, methods = names(args.tables, TABLES), names(args.methods, METHODS)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.orchard = orchard_version()

    print(f"machine: {machine()}; Orchard at {args.orchard}")
    print(f"outer {args.folds}-fold (seed {args.seed}); orchard.tune depths "
          f"{args.depths[0]}-{args.depths[-1]}, {INNER_FOLDS} inner folds, "
          f"{args.time_limit:g} s per outer fold; results appended to {args.out}")
    algorithms = [m.removeprefix("orchard-") for m in methods if m.startswith("orchard-")]
    if algorithms:
        start = time.perf_counter()
        warmed = warm_up(algorithms)
        print(f"kernels loaded in {time.perf_counter() - start:.1f} s"
              + (f"; warm-up errors: {warmed.errors}" if warmed.errors else ""))
    results = []
    began = time.perf_counter()
    for table in tables:
        X, y = load(table)
        for method in methods:
            result = evaluate(table, method, X, y, args)
            results.append(result)
            with args.out.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(result) + "\n")
            print(f"{table} {method}: " + (result["error"] if "error" in result else
                  f"accuracy {result['accuracy']:.4f}, {result['leaves']:.1f} leaves, "
                  f"{result['seconds']:.1f} s / fold"), flush=True)
    print(f"\nall done in {(time.perf_counter() - began) / 60:.1f} min\n")
    report(results)
    return 0


def report(results: list[dict]) -> None:
    print(markdown(results))
    print()
    print(summary(results))


if __name__ == "__main__":
    sys.exit(main())
