"""Greedy baseline vs scikit-learn's DecisionTreeClassifier, side by side.

For every ConTree dataset (continuous features) and every CP4IM dataset (0/1
features) it fits both on the same matrix at depths 3, 5 and 10, reports the best of
three fit times of each, their ratio (ours / sklearn), and the training errors.
JIT warm-up is measured once, separately.  Usage:

    .venv/bin/python benchmarks/greedy.py [--quick]
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
from engine.solvers.greedy.kernel import grow_tree

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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="depth 3 only, 3 files per folder")
    args = parser.parse_args()
    depths = [3] if args.quick else [3, 5, 10]

    X, y, k = load(DATASETS / "contree" / "bank.txt")
    start = time.perf_counter()
    grow_tree(X, y, np.ones(len(y)), k, 3, 1.0, NO_STOP, np.zeros(X.shape[1], np.int64))
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
                ours = best_of(lambda: grow_tree(X, y, w, k, depth, 1.0, NO_STOP, no_categories))
                clf = DecisionTreeClassifier(max_depth=depth, random_state=0)
                theirs = best_of(lambda: clf.fit(X, y))
                tree = grow_tree(X, y, w, k, depth, 1.0, NO_STOP, no_categories)
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
