"""Large generated tables for the tests that need a user's scale (never kept in git).

`numeric_csv` writes `rows` rows of `columns` numeric columns and a two-class
`class` column, fast enough to make a few hundred thousand rows per test;
`transport_log` the shape of the tables analysts bring (text columns of 3 to 4,000
values, 2% missing cells: `benchmarks/real_tables.py`, whose generator it runs).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def benchmark_module(name: str):
    """The module `benchmarks/NAME.py` (benchmarks are no package)."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def real_tables():
    """`benchmarks/real_tables.py`: transport logs of millions of rows."""
    return benchmark_module("real_tables")


def mixed_tables():
    """`benchmarks/mixed_tables.py`: analyst tables with identifier columns."""
    return benchmark_module("mixed_tables")


def transport_log(path: Path, rows: int, seed: int = 0) -> Path:
    """A transport log of `rows` rows (class `delayed`) written to `path`."""
    return real_tables().make_table(rows, seed, path)


def numeric_csv(path: Path, rows: int, columns: int = 10, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    values = rng.integers(-50_000, 50_000, size=(rows, columns))
    label = np.where(values[:, 0] + values[:, 1] // 2 + rng.integers(-9_000, 9_000, rows) > 0,
                     "yes", "no")
    header = ",".join([f"x{j}" for j in range(columns)] + ["class"])
    # Two decimals, as real measurements have: cells are text like "-123.45".  The
    # text is formatted by one `%` over every cell (numpy's string functions took 9 s
    # for 600,000 rows, each test's set-up paying it again).
    cells = np.empty((rows, 2 * columns + 1), dtype=object)
    cells[:, 0:2 * columns:2] = values
    cells[:, 1:2 * columns:2] = np.abs(values) % 100
    cells[:, -1] = label
    row = ",".join(["%d.%d"] * columns) + ",%s"
    text = "\n".join([row] * rows) % tuple(cells.ravel().tolist())
    path.write_text(header + "\n" + text + "\n")
    return path
