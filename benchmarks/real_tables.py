"""Whole runs (CSV to fitted tree) on transport-log tables: Orchard's CLI vs sklearn CART.

Wall time and peak memory of each run, from reading the CSV to the fitted tree.

Why: the other benchmarks time stages in-process on numeric tables. A user's table has
text columns of very different widths (3 to 4,000 distinct values, rare values among
them), missing cells everywhere, and millions of rows; what they feel is the whole run,
and what stops them is memory. So every run here is a separate process (peak memory is
that run's alone: `ru_maxrss` from `os.wait4`, taken by a small launcher process so
this script's own memory does not leak into it) and its wall time covers
start-up, reading, preparation, JIT warm-up and fitting.

The table (`make_table`, deterministic from the seed, written in chunks so 3M rows
never sit in memory as Python objects) has 15 input columns and a two-class `delayed`:

    text     carrier (3), region (16), route (100), shipper (4,000): Zipf-like frequencies
    numeric  n_stops (10 ints), load_pct (100 ints), weight_t (1,000 one-decimal values),
             distance_km (4,000 ints), plus temp_c, fuel_price, driver_age, dwell_min,
             speed_kmh, pallets, toll_eur
    missing  exactly 2% of the cells of every input column are empty
    delayed  yes/no from a shipper group, a distance threshold and a region x load
             interaction, then 12% of the labels flipped

Runs (`--runs`):

    cart-ordinal    pandas.read_csv, text columns OrdinalEncoder (missing stays NaN),
                    numeric NaN kept, DecisionTreeClassifier(max_depth=D, random_state=0)
    cart-onehot     the same with text columns OneHotEncoder(handle_unknown="ignore"),
                    sparse; a missing text cell is its own category.  scikit-learn does
                    not accept NaN in a sparse matrix, so a missing number becomes a value
                    below the column's minimum (a split can still set it apart)
    orchard-ALGO    .venv/bin/orchard fit CSV --algo ALGO --depth D [--time-limit S] --json

Defaults: both CARTs at depths 3 and 4; orchard-greedy depth 4; orchard-auto depths 3
and 4 with 60 s; orchard-blossom depth 4 with 60 s at the largest size only.  A run
longer than `--cap` seconds is killed and recorded as `timeout`; a failed run is
recorded with its exit code and the last line of its stderr; the others go on.
Each run is appended to `--out` as one JSON line as soon as it ends; a markdown table
(with the ratio of each run's wall time to cart-ordinal's at the same rows and depth)
is printed at the end.  Tables are kept in `--workdir` (never in git) and reused.

    .venv/bin/python benchmarks/real_tables.py [--rows 50000 330000 3000000]
        [--runs cart-ordinal cart-onehot orchard-greedy orchard-auto orchard-blossom]
        [--depths orchard-auto=3,4] [--time-limit orchard-auto=60]
        [--largest-only orchard-blossom] [--cap 600] [--seed 0] [--extra-columns 37]
        [--checkout /tmp/orchard-before]
        [--workdir /tmp/orchard-real-tables] [--out /tmp/orchard-real-tables/results.jsonl]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = ROOT / ".venv" / "bin"
CHUNK_ROWS = 200_000
MISSING_SHARE = 0.02
LABEL_NOISE = 0.12
TABLE_VERSION = 1          # bump when make_table's output changes (cached tables are named by it)

# name, distinct values, Zipf exponent
TEXT_COLUMNS = (("carrier", 3, 1.0), ("region", 16, 1.0), ("route", 100, 1.0),
                ("shipper", 4000, 1.0))
# Column order in the file (text and numbers mixed, as a real export has them); class last.
COLUMNS = ("carrier", "region", "n_stops", "load_pct", "route", "shipper", "weight_t",
           "distance_km", "temp_c", "fuel_price", "driver_age", "dwell_min", "speed_kmh",
           "pallets", "toll_eur", "delayed")


# --------------------------------------------------------------------------- the table


def _zipf_probabilities(n: int, exponent: float) -> np.ndarray:
    weights = 1.0 / np.arange(1, n + 1) ** exponent
    return weights / weights.sum()


def _structure(seed: int) -> dict:
    """What does not change from chunk to chunk: which value is frequent, which shippers
    and regions are 'bad'."""
    rng = np.random.default_rng([seed, 0])
    text = {}
    for name, n, exponent in TEXT_COLUMNS:
        # Value k has the frequency rank order[k]: the frequent values are not the first ids.
        ranks = rng.permutation(n)
        text[name] = _zipf_probabilities(n, exponent)[ranks]
    return {
        "text": text,
        "bad_shippers": rng.random(4000) < 0.2,        # about 800 shippers, frequent ones too
        "bad_regions": rng.permutation(16)[:4],
    }


def _chunk(rows: int, seed: int, index: int, structure: dict, extra: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng([seed, 1, index])
    codes = {name: rng.choice(n, size=rows, p=structure["text"][name])
             for name, n, _ in TEXT_COLUMNS}
    num = {
        "n_stops": np.minimum(rng.poisson(2.5, rows), 9),
        "load_pct": rng.integers(0, 100, rows),
        "weight_t": np.round(rng.integers(0, 1000, rows) / 10.0, 1),
        "distance_km": np.minimum(rng.gamma(2.0, 600.0, rows).astype(np.int64), 3999),
        "temp_c": np.round(rng.normal(12.0, 9.0, rows), 1),
        "fuel_price": np.round(rng.uniform(1.40, 2.10, rows), 2),
        "driver_age": rng.integers(19, 68, rows),
        "dwell_min": np.minimum(rng.exponential(35.0, rows).astype(np.int64), 600),
        "speed_kmh": np.round(rng.normal(68.0, 12.0, rows), 1),
        "pallets": rng.integers(1, 34, rows),
        "toll_eur": np.round(rng.gamma(1.5, 20.0, rows), 2),
    }
    # The class depends on the true values; the cells are blanked afterwards.
    bad_shipper = structure["bad_shippers"][codes["shipper"]]
    bad_region = np.isin(codes["region"], structure["bad_regions"])
    delayed = ((bad_shipper & (num["n_stops"] >= 3))
               | (num["distance_km"] > 2600)
               | (bad_region & (num["load_pct"] >= 70))
               | ((codes["carrier"] == 2) & (num["weight_t"] > 80.0)))
    delayed ^= rng.random(rows) < LABEL_NOISE
    n_missing = round(rows * MISSING_SHARE)

    def blanks() -> np.ndarray:
        mask = np.zeros(rows, dtype=bool)
        mask[rng.choice(rows, size=n_missing, replace=False)] = True
        return mask

    columns = {}
    for name in COLUMNS[:-1]:
        mask = blanks()
        if name in codes:
            values = codes[name].copy()
            values[mask] = -1
            categories = [f"{name}_{k}" for k in range(len(structure["text"][name]))]
            columns[name] = pd.Categorical.from_codes(values, categories=categories)
        elif np.issubdtype(num[name].dtype, np.integer):
            columns[name] = pd.arrays.IntegerArray(num[name].astype(np.int64), mask)
        else:
            values = num[name].astype(np.float64)
            values[mask] = np.nan
            columns[name] = values
    names = list(COLUMNS[:-1])
    extra_rng = np.random.default_rng([seed, 2, index])   # the base columns stay as they are
    for k in range(extra):
        name, mask = f"x{k + 1}", blanks()
        if k % 2 == 0:      # text of 5 to 500 values, no bearing on the class
            n_values = 5 + (37 * k) % 496
            values = extra_rng.integers(0, n_values, rows)
            values[mask] = -1
            columns[name] = pd.Categorical.from_codes(
                values, categories=[f"{name}_{v}" for v in range(n_values)])
        else:               # numbers, no bearing on the class
            values = np.round(extra_rng.normal(50.0, 15.0, rows), 2)
            values[mask] = np.nan
            columns[name] = values
        names.append(name)
    columns["delayed"] = np.where(delayed, "yes", "no")
    return pd.DataFrame(columns, columns=[*names, "delayed"])


def make_table(rows: int, seed: int, path, extra: int = 0) -> Path:
    """Write a `rows`-row transport-log CSV to `path` (the same bytes for the same rows and
    seed), CHUNK_ROWS rows at a time; the file appears only when it is complete.  `extra`
    columns of noise (text of 5 to 500 values and numbers, alternately, 2% missing) go
    before the class, so a wide table keeps the same signal."""
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    structure = _structure(seed)
    with open(partial, "w", newline="") as handle:
        for index, start in enumerate(range(0, rows, CHUNK_ROWS)):
            frame = _chunk(min(CHUNK_ROWS, rows - start), seed, index, structure, extra)
            frame.to_csv(handle, index=False, header=index == 0, na_rep="", lineterminator="\n")
    os.replace(partial, path)
    return path


def table_path(workdir: Path, rows: int, seed: int, extra: int = 0) -> Path:
    wide = f"_x{extra}" if extra else ""
    return workdir / f"transport_v{TABLE_VERSION}_r{rows}_s{seed}{wide}.csv"


# --------------------------------------------------------------------------- the runs

CART_SNIPPET = r"""
import json, sys, time
start = time.perf_counter()
import numpy as np, pandas as pd, scipy.sparse as sp
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder
from sklearn.tree import DecisionTreeClassifier
import_s = time.perf_counter() - start
path, depth, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
t = time.perf_counter()
frame = pd.read_csv(path)
read_s = time.perf_counter() - t
y = frame.iloc[:, -1].to_numpy()
X = frame.iloc[:, :-1]
text = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
numeric = [c for c in X.columns if c not in text]
t = time.perf_counter()
words = X[text].astype(object).where(X[text].notna(), np.nan)
numbers = X[numeric].to_numpy(dtype=np.float64)
if mode == "ordinal":
    enc = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=np.nan,
                         encoded_missing_value=np.nan)
    matrix = np.hstack([enc.fit_transform(words), numbers])
else:
    enc = OneHotEncoder(handle_unknown="ignore")
    low = np.nanmin(numbers, axis=0) - 1.0
    numbers = np.where(np.isnan(numbers), low, numbers)
    matrix = sp.hstack([enc.fit_transform(words), sp.csr_matrix(numbers)]).tocsc()
encode_s = time.perf_counter() - t
t = time.perf_counter()
tree = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(matrix, y)
fit_s = time.perf_counter() - t
accuracy = float(tree.score(matrix, y))
print(json.dumps({"n_rows": int(len(y)), "n_features": int(matrix.shape[1]),
                  "train_accuracy": accuracy, "import_s": import_s, "read_s": read_s, "encode_s": encode_s,
                  "fit_s": fit_s, "n_leaves": int(tree.get_n_leaves()), "status": "finished"}))
"""


# How an orchard run starts: this checkout's installed command, or (`--checkout DIR`)
# the CLI of another checkout of the same code run by this environment's Python, to
# time a commit before a change beside the one after it.
ORCHARD = [str(VENV_BIN / "orchard")]
CHECKOUT_CLI = "import sys; sys.path.insert(0, sys.argv.pop(1)); from engine.cli import main; sys.exit(main())"


def command(run: str, csv: Path, depth: int, time_limit: float | None) -> list[str]:
    if run.startswith("cart-"):
        return [str(VENV_BIN / "python"), "-c", CART_SNIPPET, str(csv), str(depth),
                run.removeprefix("cart-")]
    algo = run.removeprefix("orchard-")
    cmd = [*ORCHARD, "fit", str(csv), "--algo", algo, "--depth", str(depth)]
    if time_limit is not None:
        cmd += ["--time-limit", f"{time_limit:g}"]
    return cmd + ["--json"]


def last_json(text: str) -> dict | None:
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                return None
    return None


# Linux copies the forking process's peak RSS into the child's ru_maxrss when the child
# execs, so a run started straight from this process (pandas, numpy, sklearn and the
# generator loaded: 150 MB or more) could never report less than that.  Runs are started
# through this small launcher instead: it forks and execs the run and reports the run's
# own ru_maxrss (its floor is the launcher's few MB) in the file named by argv[1].
LAUNCHER = r"""
import json, os, sys
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    except OSError as error:
        print(f"cannot start {sys.argv[2]}: {error}", file=sys.stderr, flush=True)
    os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as handle:
    json.dump({"maxrss_kib": usage.ru_maxrss}, handle)
sys.exit(os.waitstatus_to_exitcode(status) % 256)
"""


def execute(cmd: list[str], cap: float, logdir: Path, tag: str) -> dict:
    """Run `cmd` alone in its own session; wall time, peak RSS and outputs.  The peak is
    the run's own (via LAUNCHER); a run killed at the cap has no peak (None)."""
    out_path, err_path = logdir / f"{tag}.stdout", logdir / f"{tag}.stderr"
    rss_path = logdir / f"{tag}.rss.json"
    rss_path.unlink(missing_ok=True)
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", LAUNCHER, str(rss_path), *cmd],
                                stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                cwd=ROOT, start_new_session=True)
        timed_out = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - start > cap:
                timed_out = True
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.05)
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)     # reaped here, not by Popen
    try:
        peak_kib = json.loads(rss_path.read_text())["maxrss_kib"]
    except (OSError, ValueError, KeyError):
        peak_kib = None
    stderr = err_path.read_text(errors="replace").strip().splitlines()
    return {"wall_s": round(wall, 3),
            "peak_mb": round(peak_kib / 1024, 1) if peak_kib is not None else None,
            "exit_code": proc.returncode, "timed_out": timed_out,
            "stdout": out_path.read_text(errors="replace"),
            "stderr_last": stderr[-1] if stderr else ""}


def record(run: str, rows: int, depth: int, time_limit: float | None, csv: Path,
           cap: float, logdir: Path, machine: dict) -> dict:
    tag = f"{run}_r{rows}_d{depth}"
    cmd = command(run, csv, depth, time_limit)
    entry = {"rows": rows, "run": run, "depth": depth, "time_limit": time_limit, "cap": cap,
             "table": str(csv), "command": " ".join(c if c not in (CART_SNIPPET, CHECKOUT_CLI) else "<snippet>"
                                                    for c in cmd)}
    try:
        done = execute(cmd, cap, logdir, tag)
    except Exception as error:          # could not even start: record it, go on
        entry.update(status="failed", exit_code=None, stderr_last=f"{type(error).__name__}: {error}")
        entry["machine"] = machine
        return entry
    summary = last_json(done.pop("stdout"))
    entry.update(done)
    if done["timed_out"]:
        entry["status"] = "timeout"
    elif done["exit_code"] != 0:
        entry["status"] = "failed"
    elif summary is None:
        entry["status"] = "failed"
        entry["stderr_last"] = entry["stderr_last"] or "no JSON summary on stdout"
    if summary is not None:
        keep = ("algorithm", "chosen_algorithm", "n_rows", "n_features", "n_classes",
                "train_error", "train_accuracy", "lower_bound", "optimal", "time_s",
                "n_leaves", "import_s", "read_s", "encode_s", "fit_s", "binarize")
        entry.update({k: summary[k] for k in keep if k in summary})
        incumbents = summary.get("incumbents") or []
        if incumbents:
            entry["n_incumbents"] = len(incumbents)
            entry["first_tree_s"] = incumbents[0][0]
            entry["first_tree_error"] = incumbents[0][1]
        if "status" not in entry:
            entry["status"] = summary.get("status", "finished")
    entry["machine"] = machine
    return entry


# --------------------------------------------------------------------------- main


def machine_facts() -> dict:
    import sklearn
    return {"cpus": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version(), "numpy": np.__version__,
            "pandas": pd.__version__, "sklearn": sklearn.__version__,
            "date": datetime.datetime.now().isoformat(timespec="seconds")}


DEFAULT_RUNS = ("cart-ordinal", "cart-onehot", "orchard-greedy", "orchard-auto", "orchard-blossom")
DEFAULT_DEPTHS = {"cart-ordinal": (3, 4), "cart-onehot": (3, 4), "orchard-greedy": (4,),
                  "orchard-auto": (3, 4), "orchard-blossom": (4,)}
DEFAULT_TIME_LIMITS = {"orchard-auto": 60.0, "orchard-blossom": 60.0}


def keyed(items: list[str], parse) -> dict:
    table = {}
    for item in items:
        name, _, value = item.partition("=")
        if not value:
            raise SystemExit(f"expected RUN=VALUE, got {item!r}")
        table[name] = parse(value)
    return table


def markdown(entries: list[dict], machine: dict) -> str:
    lines = [f"machine: {machine['cpus']} CPUs, {machine['platform']}, python "
             f"{machine['python']}, numpy {machine['numpy']}, pandas {machine['pandas']}, "
             f"sklearn {machine['sklearn']}, {machine['date']}", "",
             "| rows | run | depth | wall s | peak MB | train accuracy | status | wall / cart-ordinal |",
             "|---:|---|---:|---:|---:|---:|---|---:|"]
    base = {(e["rows"], e["depth"]): e["wall_s"] for e in entries
            if e["run"] == "cart-ordinal" and e.get("status") == "finished"}
    for e in entries:
        wall = e.get("wall_s")
        ref = base.get((e["rows"], e["depth"]))
        status = e.get("status", "?")
        ratio = "-"
        if wall is not None and ref and status != "failed":
            ratio = f"{'> ' if status == 'timeout' else ''}{wall / ref:.2f}"
        accuracy = e.get("train_accuracy")
        if status == "failed":
            status = f"failed (exit {e.get('exit_code')}): {e.get('stderr_last', '')[:80]}"
        elif status == "timeout":
            status = f"timeout (> {e['cap']:g} s)"
        if e.get("chosen_algorithm") and e["chosen_algorithm"] != e.get("algorithm"):
            status += f" [{e['chosen_algorithm']}]"
        lines.append(f"| {e['rows']:,} | {e['run']} | {e['depth']} | "
                     f"{'-' if wall is None else f'{wall:.1f}'} | "
                     f"{e.get('peak_mb') or '-'} | "
                     f"{'-' if accuracy is None else f'{accuracy:.4f}'} | {status} | {ratio} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[50_000, 330_000, 3_000_000])
    parser.add_argument("--runs", nargs="+", default=list(DEFAULT_RUNS),
                        help="cart-ordinal, cart-onehot, orchard-ALGO (any --algo name)")
    parser.add_argument("--depths", nargs="*", default=[], metavar="RUN=D[,D...]",
                        help="depths of a run (default: CART 3,4; greedy 4; auto 3,4; others 4)")
    parser.add_argument("--time-limit", nargs="*", default=[], metavar="RUN=S",
                        help="orchard --time-limit of a run (default: 60 except greedy: none)")
    parser.add_argument("--largest-only", nargs="*", default=["orchard-blossom"], metavar="RUN",
                        help="runs made only at the largest --rows (default: orchard-blossom)")
    parser.add_argument("--cap", type=float, default=600.0, help="wall seconds before a run is killed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checkout", type=Path, default=None,
                        help="time the orchard runs of another checkout (e.g. a git worktree of an older commit)")
    parser.add_argument("--extra-columns", type=int, default=0,
                        help="noise columns added to the 15 inputs (37: a 52-column table)")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/orchard-real-tables"))
    parser.add_argument("--out", type=Path, default=None,
                        help="JSON lines, appended (default: WORKDIR/results.jsonl)")
    args = parser.parse_args(argv)

    if args.checkout is not None:
        ORCHARD[:] = [str(VENV_BIN / "python"), "-c", CHECKOUT_CLI, str(args.checkout.resolve())]
    depths = dict(DEFAULT_DEPTHS)
    depths.update(keyed(args.depths, lambda v: tuple(int(d) for d in v.split(","))))
    limits = dict(DEFAULT_TIME_LIMITS)
    limits.update(keyed(args.time_limit, float))
    out = args.out or args.workdir / "results.jsonl"
    args.workdir.mkdir(parents=True, exist_ok=True)
    logdir = args.workdir / "logs"
    logdir.mkdir(exist_ok=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    machine = machine_facts()
    largest = max(args.rows)
    # CART first at every size, so the ratio has its reference even if a later run is slow.
    runs = sorted(args.runs, key=lambda r: (not r.startswith("cart-ordinal"), not r.startswith("cart-")))

    entries: list[dict] = []
    for rows in args.rows:
        csv = table_path(args.workdir, rows, args.seed, args.extra_columns)
        if csv.exists():
            print(f"[{rows:,} rows] reusing {csv}", flush=True)
        else:
            start = time.perf_counter()
            make_table(rows, args.seed, csv, args.extra_columns)
            print(f"[{rows:,} rows] wrote {csv} ({csv.stat().st_size / 2**20:.0f} MiB) in "
                  f"{time.perf_counter() - start:.1f} s", flush=True)
        for run in runs:
            if run in args.largest_only and rows != largest:
                continue
            if not (run in ("cart-ordinal", "cart-onehot") or run.startswith("orchard-")):
                print(f"unknown run {run!r} (cart-ordinal, cart-onehot, orchard-ALGO)", file=sys.stderr)
                continue
            limit = None if run.startswith("cart-") else limits.get(run)
            if run not in limits and run.startswith("orchard-") and run != "orchard-greedy":
                limit = 60.0
            for depth in depths.get(run, (4,)):
                entry = record(run, rows, depth, limit, csv, args.cap, logdir, machine)
                entries.append(entry)
                with open(out, "a") as handle:
                    handle.write(json.dumps(entry) + "\n")
                    handle.flush()
                print(f"[{rows:,} rows] {run} depth {depth}: {entry.get('status')} "
                      f"{entry.get('wall_s', '-')} s, {entry.get('peak_mb') or '-'} MB, "
                      f"accuracy {entry.get('train_accuracy', '-')}"
                      + (f" — {entry.get('stderr_last')}" if entry.get("status") in ("failed", "timeout") else ""),
                      flush=True)

    print()
    print(markdown(entries, machine))
    print(f"\n(JSON lines appended to {out}; stdout/stderr of each run in {logdir})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
