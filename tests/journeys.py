"""Journeys: the paths a user takes across Orchard, on tables generated like theirs.

A journey is one generated table (`TableSpec`: numeric, whole-number, text with 2 to
5,000 values, yes/no, constant and id-like columns, missing cells, 2 to 60 classes,
imbalanced, odd header names) × an algorithm × a depth × a binarisation × an entry
point:

- `cli`: `orchard fit` with every export, the picture and `--json`, then `orchard
  predict` on the same file, the exported Python module run on every row and the
  exported SQL run in SQLite on a copy of the table;
- `notebook`: the estimators on the table as `pandas.read_csv` gives it: `fit`,
  `predict`, `predict_proba`, pickle, `save` / `load`;
- the window's Run is driven by `tests/test_journeys.py` through pytest-qt.

Every journey checks (each finding goes into `Outcome.problems`, empty when it went
right): no traceback (a refusal is one sentence and exit status 2), `predict` on the
raw table reproduces the accuracy the fit reported, the exports reproduce the
predictions, anytime solvers and `auto` are never worse than greedy at the same
depth, and the time limit is honoured.  `tests/test_journeys.py` runs a bounded slice
in the test command; `benchmarks/journeys.py` the whole matrix.  Tables are written to
temporary folders, never kept.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import pickle
import sqlite3
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import strategies as st

from engine.data.csv_reader import read_table
from engine.model import load_model

ALGORITHMS = ("auto", "greedy", "blossom", "contree", "dl85", "cadl85", "sat-depth",
              "sat-size", "odd")
# None: the algorithm's own default (what a user who never touches it gets).
BINARIZATIONS = (None, "none", "guided", "quantile:4", "midpoints")
ENTRIES = ("cli", "notebook")
# Solvers whose tree is never worse than greedy's of the same depth on the same
# features (they start from it), and `auto`, which promises it on the raw columns.
ANYTIME = {"blossom", "dl85", "cadl85", "contree", "auto"}
# Where the exact SAT and MILP searches can be expected to answer at all.
SMALL = {"sat-depth": (150, 12), "sat-size": (150, 12), "odd": (400, 20)}
KINDS = ("numeric", "whole", "text", "yesno", "constant", "id")
ODD_NAMES = ("weight (kg)", "naïve score", "a,b", 'say "hi"', " padded ", "123",
             "x.1", "Ünïcödé", "semi;colon", "it's", "tab\there")
TIME_SLACK = 5.0   # seconds beyond the limit: exports, interpreter, a loaded machine


@dataclass(frozen=True)
class TableSpec:
    """What to generate; `make_table` turns it into cells (the seed fixes them)."""

    rows: int
    classes: int
    majority: float             # share of the most frequent class (imbalance)
    kinds: tuple[str, ...]      # one per input column
    text_values: tuple[int, ...]  # distinct values of each text column, in order
    missing: float              # share of missing cells in numeric and text columns
    odd_names: bool
    seed: int

    def describe(self) -> str:
        counts = {k: self.kinds.count(k) for k in KINDS if k in self.kinds}
        text = f" text values {list(self.text_values)}" if self.text_values else ""
        return (f"{self.rows} rows, {self.classes} classes (majority "
                f"{self.majority:.0%}), columns {counts}{text}, missing "
                f"{self.missing:.0%}, odd names {self.odd_names}, seed {self.seed}")


@st.composite
def table_specs(draw, max_rows: int = 3000, max_columns: int = 40,
                max_values: int = 5000, max_classes: int = 60) -> TableSpec:
    """Tables like the ones analysts bring (see the module docstring)."""
    # log-uniform: as many tables of thousands of rows as of tens
    rows = round(20 * (max_rows / 20) ** draw(st.floats(0.0, 1.0)))
    classes = draw(st.integers(2, max(2, min(max_classes, rows // 5))))
    majority = draw(st.floats(1.0 / classes, 0.95))
    kinds = tuple(draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=max_columns)))
    values = tuple(draw(st.integers(2, max_values)) for kind in kinds if kind == "text")
    missing = draw(st.sampled_from((0.0, 0.0, 0.05, 0.3)))
    return TableSpec(rows, classes, majority, kinds, values, missing, draw(st.booleans()),
                     draw(st.integers(0, 2**31 - 1)))


def class_names(n: int, rng: np.random.Generator) -> list[str]:
    """Class labels as files have them: words, numbers or codes."""
    style = rng.integers(3)
    if style == 0:
        return [str(k) for k in range(n)]
    if style == 1:
        return [f"class {chr(65 + k % 26)}{k // 26 or ''}" for k in range(n)]
    return [f"c{k:02d}" for k in range(n)]


def make_table(spec: TableSpec) -> pd.DataFrame:
    """The table's cells as text (None = missing), the class in the last column
    `class`; each input column leans on the class so trees have something to find."""
    rng = np.random.default_rng(spec.seed)
    k = spec.classes
    rest = (1.0 - spec.majority) / (k - 1)
    y = rng.choice(k, size=spec.rows, p=[spec.majority] + [rest] * (k - 1))
    y[:k] = np.arange(k)   # every class appears
    columns: dict[str, list] = {}
    texts = iter(spec.text_values)
    for j, kind in enumerate(spec.kinds):
        name = column_name(j, kind, spec.odd_names)
        cells = _column(kind, y, k, next(texts) if kind == "text" else 0, rng)
        if spec.missing and kind in ("numeric", "whole", "text"):
            cells = np.where(rng.random(spec.rows) < spec.missing, None, cells)
        columns[name] = list(cells)
    names = class_names(k, rng)
    columns["class"] = [names[c] for c in y]
    return pd.DataFrame(columns)


def column_name(j: int, kind: str, odd: bool) -> str:
    """A unique header; with `odd`, names that need quoting, accents and digits."""
    if odd and j < len(ODD_NAMES):
        return ODD_NAMES[j]
    return f"{kind}_{j}"


def _column(kind: str, y: np.ndarray, k: int, values: int,
            rng: np.random.Generator) -> np.ndarray:
    n = len(y)
    if kind == "numeric":
        shift = rng.normal(size=k)[y]
        return np.char.mod("%.3f", shift + rng.normal(size=n)).astype(object)
    if kind == "whole":
        whole = y * rng.integers(1, 5) + rng.integers(0, 6, size=n)
        return whole.astype(str).astype(object)
    if kind == "text":
        values = min(values, n)
        own = rng.integers(values, size=k)[y]   # a favourite value per class
        cells = np.where(rng.random(n) < 0.5, own, rng.integers(values, size=n))
        return np.char.add("v", cells.astype(str)).astype(object)
    if kind == "yesno":
        return np.where((y % 2 == 1) ^ (rng.random(n) < 0.2), "yes", "no").astype(object)
    if kind == "constant":
        return np.full(n, "same", dtype=object)
    return np.char.add("id-", np.arange(1, n + 1).astype(str)).astype(object)   # id


def write_csv(frame: pd.DataFrame, path: Path) -> Path:
    frame.to_csv(path, index=False)
    return path


# ------------------------------------------------------------------ journeys
@dataclass
class Journey:
    spec: TableSpec
    algorithm: str
    depth: int
    binarize: str | None
    entry: str
    time_limit: float = 10.0

    def describe(self) -> str:
        return (f"{self.entry} {self.algorithm} depth {self.depth} binarize "
                f"{self.binarize or 'default'} limit {self.time_limit:g} s on "
                f"{self.spec.describe()}")

    @property
    def small_enough(self) -> bool:
        """SAT and the diagram MILP only where the data fits them."""
        rows, columns = SMALL.get(self.algorithm, (math.inf, math.inf))
        return self.spec.rows <= rows and len(self.spec.kinds) <= columns


@dataclass
class Outcome:
    """What a journey did: `problems` lists every broken promise (empty: it went
    right); `refusal` holds the one sentence of a refused input."""

    journey: Journey
    problems: list[str] = field(default_factory=list)
    refusal: str = ""
    seconds: float = 0.0
    summary: dict = field(default_factory=dict)

    def fail(self, text: str) -> None:
        self.problems.append(text)


def run(journey: Journey, folder: Path) -> Outcome:
    """Run one journey in `folder` (a fresh temporary folder)."""
    outcome = Outcome(journey)
    start = time.monotonic()
    frame = make_table(journey.spec)
    path = write_csv(frame, folder / "table.csv")
    try:
        if journey.entry == "cli":
            cli_journey(journey, path, folder, outcome)
        else:
            notebook_journey(journey, path, folder, outcome)
    except Exception as exc:   # noqa: BLE001 - any escape is the defect being looked for
        where = traceback.extract_tb(exc.__traceback__)[-1]
        outcome.fail(f"traceback: {type(exc).__name__}: {exc} (at {where.filename}:"
                     f"{where.lineno})")
    outcome.seconds = time.monotonic() - start
    return outcome


def call_cli(*argv) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of one in-process `orchard` command (the installed
    entry point, which also draws `--image`)."""
    from gui.app import main as cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli([str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


def one_sentence(text: str) -> bool:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return bool(lines) and "Traceback" not in text and all(
        line.startswith("orchard: ") for line in lines)


def fit_arguments(journey: Journey, path: Path) -> list:
    argv = ["fit", path, "--algo", journey.algorithm, "--depth", journey.depth,
            "--time-limit", journey.time_limit]
    if journey.binarize is not None:
        argv += ["--binarize", journey.binarize]
    if journey.algorithm.startswith("sat"):   # they need rows some tree separates
        argv += ["--drop-inconsistent"]
    return argv


def cli_journey(journey: Journey, path: Path, folder: Path, outcome: Outcome) -> None:
    outputs = {flag: folder / f"model.{flag}" for flag in ("out", "python", "sql", "rules",
                                                            "dot")}
    argv = fit_arguments(journey, path) + ["--json", "--image", folder / "model.png"]
    for flag, target in outputs.items():
        argv += [f"--{flag}", target]
    start = time.monotonic()
    status, out, err = call_cli(*argv)
    seconds = time.monotonic() - start
    if status == 2:
        outcome.refusal = err.strip()
        if not one_sentence(err):
            outcome.fail(f"refusal is not one sentence: {err!r}")
        if any(p.exists() for p in [*outputs.values(), folder / "model.png"]):
            outcome.fail("a refused fit left output files behind")
        return
    if status != 0:
        outcome.fail(f"fit exited {status}: {err.strip()[-300:]}")
        return
    try:
        summary = json.loads(out)
    except json.JSONDecodeError:
        outcome.fail(f"--json printed something that is not JSON: {out[:200]!r}")
        return
    outcome.summary = summary
    if seconds > journey.time_limit + TIME_SLACK:
        outcome.fail(f"fit took {seconds:.1f} s with a {journey.time_limit:g} s limit")
    check_greedy(journey, path, summary, outcome)
    status, out, err = call_cli("predict", outputs["out"], path, "--json")
    if status != 0:
        outcome.fail(f"predict exited {status}: {err.strip()[-300:]}")
        return
    predicted = json.loads(out)
    same_rows = predicted["n_rows"] == summary["n_rows"]   # none dropped as inconsistent
    if same_rows and summary["class_weight"] is None and not math.isclose(
            predicted.get("accuracy", -1), summary["train_accuracy"], abs_tol=1e-9):
        outcome.fail(f"predict scores {predicted.get('accuracy')} where fit reported "
                     f"{summary['train_accuracy']}")
    check_exports(outputs, path, predicted["predictions"], outcome)


def check_greedy(journey: Journey, path: Path, summary: dict, outcome: Outcome) -> None:
    """An anytime solver or `auto` never ends worse than greedy of the same depth: on
    the raw columns with `guided` thresholds (which hold greedy's) or none, else on
    the same features."""
    if journey.algorithm not in ANYTIME:
        return
    raw = summary["binarize"] == "none" or summary["binarize"].startswith("guided")
    argv = fit_arguments(Journey(journey.spec, "greedy", journey.depth,
                                 "none" if raw else summary["binarize"], "cli"), path)
    status, out, err = call_cli(*argv, "--json")
    if status != 0:
        outcome.fail(f"greedy at the same depth exited {status}: {err.strip()[-200:]}")
        return
    greedy = json.loads(out)["train_error"]
    if summary["train_error"] > greedy + 1e-9 * max(1.0, greedy):
        outcome.fail(f"{journey.algorithm} error {summary['train_error']} is worse than "
                     f"greedy's {greedy} at depth {journey.depth}")


def check_exports(outputs: dict, path: Path, expected: list[str], outcome: Outcome) -> None:
    """The Python module and the SQL expression give `orchard predict`'s classes."""
    model = load_model(outputs["out"])
    frame = read_table(path).frame
    rows = [{name: cell(v) for name, v in zip(frame.columns, values)}
            for values in frame.itertuples(index=False, name=None)]
    namespace: dict = {}
    exec(compile(outputs["python"].read_text(), str(outputs["python"]), "exec"), namespace)
    python = [namespace["predict"](row) for row in rows]
    if python != expected:
        wrong = sum(a != b for a, b in zip(python, expected))
        outcome.fail(f"the Python export disagrees with predict on {wrong} rows")
    sql = sql_classes(outputs["sql"].read_text(), model, frame, rows)
    if sql != expected:
        wrong = sum(a != b for a, b in zip(sql, expected))
        outcome.fail(f"the SQL export disagrees with predict on {wrong} rows")
    for flag in ("rules", "dot"):
        if not outputs[flag].read_text().strip():
            outcome.fail(f"the {flag} export is empty")
    if outputs["out"].with_name("model.png").read_bytes()[:8] != b"\x89PNG\r\n\x1a\n":
        outcome.fail("the picture is not a PNG file")


def cell(value):
    return None if value is None or (isinstance(value, float) and math.isnan(value)) \
        else value


def sql_classes(expression: str, model, frame: pd.DataFrame, rows: list[dict]) -> list:
    """The SQL export run in SQLite on the raw table (numeric columns as REAL)."""
    numeric = {c.name for c in model.prep.columns if c.numeric}
    quoted = ['"' + str(name).replace('"', '""') + '"' for name in frame.columns]
    kinds = ["REAL" if name in numeric else "TEXT" for name in frame.columns]
    con = sqlite3.connect(":memory:")
    try:
        columns = ", ".join(f"{q} {k}" for q, k in zip(quoted, kinds))
        con.execute(f"CREATE TABLE t ({columns})")
        con.executemany(f"INSERT INTO t VALUES ({', '.join('?' * len(quoted))})",
                        [[None if v is None else float(v) if name in numeric else str(v)
                          for name, v in row.items()] for row in rows])
        return [r[0] for r in con.execute(f"SELECT {expression}\nFROM t ORDER BY rowid")]
    finally:
        con.close()


def notebook_journey(journey: Journey, path: Path, folder: Path, outcome: Outcome) -> None:
    from orchard import DecisionDiagramClassifier, OptimalTreeClassifier

    frame = pd.read_csv(path)
    X, y = frame.drop(columns="class"), frame["class"].to_numpy()
    common = {"max_depth": journey.depth, "time_limit": journey.time_limit,
              "binarize": journey.binarize}
    if journey.algorithm == "odd":
        estimator = DecisionDiagramClassifier(**common)
    else:
        estimator = OptimalTreeClassifier(algorithm=journey.algorithm, **common)
    start = time.monotonic()
    try:
        estimator.fit(X, y)
    except ValueError as exc:   # the notebook's refusal: scikit-learn's convention
        outcome.refusal = str(exc)
        if "\n" in str(exc).strip():
            outcome.fail(f"refusal is not one sentence: {exc!r}")
        return
    seconds = time.monotonic() - start
    if seconds > journey.time_limit + TIME_SLACK:
        outcome.fail(f"fit took {seconds:.1f} s with a {journey.time_limit:g} s limit")
    predicted = estimator.predict(X)
    accuracy = float(np.mean(predicted == y))
    reported = 1.0 - estimator.train_error_ / len(y)
    if not math.isclose(accuracy, reported, abs_tol=1e-9):
        outcome.fail(f"predict scores {accuracy} where the fit's error says {reported}")
    proba = estimator.predict_proba(X)
    if proba.shape != (len(y), len(estimator.classes_)) or \
            not np.allclose(proba.sum(axis=1), 1.0):
        outcome.fail("predict_proba rows do not sum to 1")
    again = pickle.loads(pickle.dumps(estimator))
    if not np.array_equal(again.predict(X), predicted):
        outcome.fail("a pickled estimator predicts differently")
    estimator.save(folder / "model.json")
    loaded = type(estimator).load(folder / "model.json")
    if [str(v) for v in loaded.predict(X)] != [str(v) for v in predicted]:
        outcome.fail("a saved and loaded estimator predicts differently")
