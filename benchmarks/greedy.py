"""Greedy baseline vs scikit-learn's DecisionTreeClassifier, side by side.

For every ConTree dataset (continuous features) and every CP4IM dataset (0/1
features) it fits both on the same matrix at depths 3, 5 and 10, reports the best of
three fit times of each, their ratio (ours / sklearn), and the training errors.
JIT warm-up is measured once, separately.  Usage:

    .venv/bin/python benchmarks/greedy.py [--quick]
    .venv/bin/python benchmarks/greedy.py --synthetic 330000 [--depth 4]

`--synthetic ROWS` instead times one `grow_tree` call (best of three, after the
warm-up) on a generated table shaped like a large real one: 22 continuous columns
(10 to 4,000 distinct values), 4 categorical ones (3, 16, 100 and 4,000 categories,
Zipf-like frequencies) and 50 0/1 ones, 2 classes with a signal.
"""

from __future__ import annotations

import argparse
import math
import platform
import time
from pathlib import Path

import numpy as np
from sklearn.tree import DecisionTreeClassifier

from engine.data.csv_reader import read_table
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.solvers.greedy.kernel import NO_TARGET, grow_tree

DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
NO_STOP = np.zeros(4)


def best_of(fn, repeats=3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def load(path: Path):
    data = prepare(read_table(path), PrepOptions(target="first"))
    return np.ascontiguousarray(data.X, dtype=np.float64), data.y, data.n_classes


def synthetic(n_rows: int, seed: int = 0):
    """(X float64[n, 76], y, n_categories) of the `--synthetic` table: columns 0-21
    continuous, 22-25 categorical, 26-75 0/1."""
    rng = np.random.default_rng(seed)
    columns, n_categories = [], []
    score = np.zeros(n_rows)
    for j, distinct in enumerate(np.geomspace(10, 4000, 22).astype(int)):
        levels = np.sort(rng.normal(0.0, 1.0, distinct)).round(6)
        column = levels[rng.integers(0, distinct, n_rows)]
        columns.append(column)
        n_categories.append(0)
        if j % 3 == 0:
            score += rng.normal(0.0, 1.0) * column
    for V in (3, 16, 100, 4000):
        p = 1.0 / np.arange(1, V + 1) ** 1.1
        codes = rng.choice(V, n_rows, p=p / p.sum())
        columns.append(codes.astype(np.float64))
        n_categories.append(V)
        score += rng.normal(0.0, 1.0, V)[codes]
    for j in range(50):
        bits = (rng.random(n_rows) < rng.uniform(0.02, 0.6)).astype(np.float64)
        columns.append(bits)
        n_categories.append(0)
        if j % 5 == 0:
            score += rng.normal(0.0, 1.0) * bits
    noise = rng.logistic(0.0, 1.0, n_rows)
    y = (score + noise > np.median(score)).astype(np.int64)
    return np.column_stack(columns), y, np.array(n_categories, dtype=np.int64)


def time_synthetic(n_rows: int, depth: int, kernel=grow_tree) -> None:
    X, y, n_categories = synthetic(n_rows)
    w = np.ones(n_rows)
    start = time.perf_counter()
    kernel(X[:100], y[:100], w[:100], 2, depth, 1.0, NO_STOP, n_categories, NO_TARGET)
    print(f"first call (100 rows, includes loading/compiling): "
          f"{time.perf_counter() - start:.2f} s")
    seconds = best_of(lambda: kernel(X, y, w, 2, depth, 1.0, NO_STOP, n_categories,
                                     NO_TARGET))
    tree = kernel(X, y, w, 2, depth, 1.0, NO_STOP, n_categories, NO_TARGET)
    leaf_value = tree[4][tree[0] < 0]
    error = int(leaf_value.sum() - leaf_value.max(axis=1).sum())
    print(f"synthetic {n_rows} rows x {X.shape[1]} features, depth {depth}: "
          f"{seconds:.3f} s per grow_tree call (best of 3), {len(tree[0])} nodes, "
          f"training errors {error}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="depth 3 only, 3 files per folder")
    parser.add_argument("--synthetic", type=int, metavar="ROWS",
                        help="time grow_tree on a generated table of ROWS rows instead")
    parser.add_argument("--depth", type=int, default=4, help="depth of --synthetic")
    args = parser.parse_args()
    if args.synthetic:
        time_synthetic(args.synthetic, args.depth)
        return
    depths = [3] if args.quick else [3, 5, 10]

    X, y, k = load(DATASETS / "contree" / "bank.txt")
    start = time.perf_counter()
    grow_tree(X, y, np.ones(len(y)), k, 3, 1.0, NO_STOP, np.zeros(X.shape[1], np.int64),
              NO_TARGET)
    print(f"JIT warm-up (first call, includes loading/compiling): "
          f"{time.perf_counter() - start:.2f} s")
    print(f"machine: {platform.processor() or platform.machine()}, "
          f"{platform.python_version()}, {time.strftime('%Y-%m-%d')}")
    print("| folder | dataset | rows | features | depth | ours (s) | sklearn (s) | ratio | "
          "errors ours / sklearn |")
    print("|---|---|---|---|---|---|---|---|---|")
    ratios = {d: [] for d in depths}
    for folder in ("contree", "cp4im"):
        files = sorted(p for p in (DATASETS / folder).iterdir() if p.suffix == ".txt")
        for path in files[:3] if args.quick else files:
            X, y, k = load(path)
            w = np.ones(len(y))
            no_categories = np.zeros(X.shape[1], np.int64)
            for depth in depths:
                ours = best_of(lambda: grow_tree(X, y, w, k, depth, 1.0, NO_STOP, no_categories,
                                                 NO_TARGET))
                clf = DecisionTreeClassifier(max_depth=depth, random_state=0)
                theirs = best_of(lambda: clf.fit(X, y))
                tree = grow_tree(X, y, w, k, depth, 1.0, NO_STOP, no_categories, NO_TARGET)
                leaf_value = tree[4][tree[0] < 0]
                our_error = int(leaf_value.sum() - leaf_value.max(axis=1).sum())
                sk_error = int((clf.predict(X) != y).sum())
                ratios[depth].append(ours / theirs)
                print(f"| {folder} | {path.stem} | {len(y)} | {X.shape[1]} | {depth} | "
                      f"{ours:.4f} | {theirs:.4f} | {ours / theirs:.2f} | "
                      f"{our_error} / {sk_error} |")
    for depth in depths:
        geo = math.exp(np.mean(np.log(ratios[depth])))
        print(f"geometric-mean time ratio ours/sklearn at depth {depth}: {geo:.2f}")


if __name__ == "__main__":
    main()
