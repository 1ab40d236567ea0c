"""Large generated tables for the tests that need a user's scale (never kept in git).

`numeric_csv` writes `rows` rows of `columns` numeric columns and a two-class
`class` column, fast enough to make a few hundred thousand rows per test.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def numeric_csv(path: Path, rows: int, columns: int = 10, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    values = rng.integers(-50_000, 50_000, size=(rows, columns))
    label = np.where(values[:, 0] + values[:, 1] // 2 + rng.integers(-9_000, 9_000, rows) > 0,
                     "yes", "no")
    header = ",".join([f"x{j}" for j in range(columns)] + ["class"])
    # Two decimals, as real measurements have: cells are text like "-123.45".
    body = np.char.add(np.char.add(values.astype(str), "."),
                       (np.abs(values) % 100).astype(str))
    lines = [",".join(row) for row in np.column_stack([body, label]).tolist()]
    path.write_text(header + "\n" + "\n".join(lines) + "\n")
    return path
