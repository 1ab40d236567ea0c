"""DL8.5 (ours) vs pystreed proving optimality on every CP4IM set, depths 2, 3, 4.

Both solvers get the same 0/1 matrix (CP4IM `.txt` sets, first column = class) with
the accuracy objective, every tree of the depth allowed and leaves of one row at
least; each run has a 60 s limit.  Times are wall-clock seconds of one training call
(ours: `Result.time_s`, preprocessing included; pystreed: `fit`), the best of up to
three repetitions for runs under half a second.  The table shows both errors (they
must agree whenever both proved optimality), and the geometric-mean time ratio
ours / pystreed per depth over the sets both proved.  `cadl85` (discrepancy,
monotonic) is timed alongside for its time to proof.

JIT: the first `dl85` call of the process (loading the compiled kernel from numba's
on-disk cache, or compiling it) is timed before anything else and reported
separately; `--cold` also times a compilation from an empty cache in a subprocess.

    .venv/bin/python benchmarks/cp4im_exact.py [--depths 2,3,4] [--sets a,b] [--cold]
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from engine.data.csv_reader import read_table
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.training import train

ROOT = Path(__file__).resolve().parents[1]
CP4IM = ROOT.parent / "shared" / "datasets" / "cp4im"
LIMIT = 60.0
REPEAT_BELOW = 0.5


def load(name: str):
    return prepare(read_table(CP4IM / f"{name}.txt"), PrepOptions(target="first"))


def geomean(values) -> float:
    return math.exp(float(np.mean(np.log(values)))) if values else float("nan")


def timed(run):
    """(seconds, outcome) of run(), the best of up to three runs when it is fast."""
    best, outcome = math.inf, None
    for _ in range(3):
        seconds, outcome = run()
        best = min(best, seconds)
        if seconds >= REPEAT_BELOW:
            break
    return best, outcome


def ours(data, depth, algorithm="dl85", params=None):
    def run():
        result = train(data, algorithm, {"depth": depth, **(params or {})},
                       time_limit=LIMIT)
        return result.time_s, result
    return timed(run)


def streed(data, depth):
    from pystreed import STreeDClassifier
    X = data.X.astype(np.int32)

    def run():
        model = STreeDClassifier(max_depth=depth, min_leaf_node_size=1, time_limit=LIMIT)
        start = time.perf_counter()
        model.fit(X, data.y)
        seconds = time.perf_counter() - start
        error = int((model.predict(X) != data.y).sum())
        return seconds, (error, bool(model.fit_result.is_optimal()))
    return timed(run)


COLD = """
import time
t = time.perf_counter()
from engine.training import train
from engine.warmup import tiny_dataset
train(tiny_dataset("quantile:10"), "dl85", {"depth": 2})
print(time.perf_counter() - t)
"""


def cold_compile_seconds() -> float:
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
        out = subprocess.run([sys.executable, "-c", COLD], env=env, check=True,
                             capture_output=True, text=True, cwd=ROOT)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--depths", default="2,3,4")
    parser.add_argument("--sets", help="comma-separated CP4IM names (default: all)")
    parser.add_argument("--cold", action="store_true",
                        help="also time a compilation from an empty numba cache")
    parser.add_argument("--no-ca", action="store_true", help="skip the cadl85 column")
    args = parser.parse_args()
    depths = [int(d) for d in args.depths.split(",")]
    sets = args.sets.split(",") if args.sets else sorted(
        p.stem for p in CP4IM.iterdir() if p.suffix == ".txt")

    start = time.perf_counter()
    train(load("zoo-1"), "dl85", {"depth": 2})
    warm = time.perf_counter() - start
    train(load("zoo-1"), "cadl85", {"depth": 2})
    with open("/proc/loadavg") as f:
        load_avg = f.read().split()[:3]
    print(f"{time.strftime('%Y-%m-%d %H:%M')}; load average {' '.join(load_avg)}; "
          f"JIT warm-up (first dl85 call, kernel loaded from the numba cache): "
          f"{warm:.2f} s")
    if args.cold:
        print(f"JIT cold compile (empty NUMBA_CACHE_DIR, first dl85 call in a fresh "
              f"process, imports included): {cold_compile_seconds():.1f} s")

    ratios: dict[int, list[float]] = {d: [] for d in depths}
    mismatches = []
    print("\n| dataset | rows x features | depth | dl85 (s) | pystreed (s) | ratio | "
          "errors dl85 / pystreed | cadl85 (s) |\n|---|---|---|---|---|---|---|---|")
    for name in sets:
        data = load(name)
        for depth in depths:
            t_ours, result = ours(data, depth)
            t_streed, (s_error, s_optimal) = streed(data, depth)
            ca = ""
            if not args.no_ca:
                t_ca, ca_result = ours(data, depth, "cadl85")
                ca = f"{t_ca:.3f}" + ("" if ca_result.optimal else " (limit)")
                if ca_result.optimal and result.optimal and \
                        ca_result.train_error != result.train_error:
                    mismatches.append((name, depth, "cadl85"))
            both = result.optimal and s_optimal
            if both:
                ratios[depth].append(t_ours / t_streed)
                if result.train_error != s_error:
                    mismatches.append((name, depth, "pystreed"))
            print(f"| {name} | {data.n_rows} x {data.n_features} | {depth} | "
                  f"{t_ours:.3f}{'' if result.optimal else ' (limit)'} | "
                  f"{t_streed:.3f}{'' if s_optimal else ' (limit)'} | "
                  f"{t_ours / t_streed:.2f} | {result.train_error:g} / {s_error} | {ca} |",
                  flush=True)
    print()
    for depth, values in ratios.items():
        print(f"depth {depth}: geometric-mean time ratio dl85/pystreed over {len(values)} "
              f"sets proven by both: {geomean(values):.2f}")
    print("error mismatches:", mismatches or "none")


if __name__ == "__main__":
    main()
