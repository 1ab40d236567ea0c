"""Generated analyst tables: text columns that identify things, many-valued text with
real signal, missing cells, numbers, two to five classes (never kept in git).

Why: the public sets in shared/datasets are numeric or 0/1.  The tables analysts bring
have text columns of three kinds, and a tree must tell them apart on new rows:

    identifier  a registration or an account: about rows / 5 values, a few rows each,
                no bearing on the class (`reg`, `account`)
    many-valued a depot or a city: hundreds of values with Zipf-like frequencies whose
                class shares really differ (`depot`, `city`)
    few-valued  a carrier or a weekday (`carrier`, `weekday`)

plus numbers with thresholds and interactions, pure-noise numbers, missing cells (3%
of every input column, and `city` missing more often on late rows), and label noise.

`make(kind, rows, seed)` returns a pandas DataFrame of text columns (None missing),
float columns (NaN missing) and the class column `status`; the kinds:

    transport   two classes (84% majority at 20,000 rows), `reg` identifier
    accounts    four classes, `account` identifier, `city` many-valued
    survey      three classes, no identifier, every text column with signal

The same kind, rows and seed give the same table; another number of rows gives
another table (the values' effects are drawn after the rows), not a sample of it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

KINDS = ("transport", "accounts", "survey")
MISSING_SHARE = 0.03


def _zipf(n: int, exponent: float, rng: np.random.Generator) -> np.ndarray:
    weights = 1.0 / np.arange(1, n + 1) ** exponent
    return (weights / weights.sum())[rng.permutation(n)]


def _text(prefix: str, codes: np.ndarray, width: int = 4) -> np.ndarray:
    return np.array([f"{prefix}{c:0{width}d}" for c in codes], dtype=object)


def _identifier(prefix: str, rows: int, rng: np.random.Generator) -> np.ndarray:
    """About rows / 5 values, each on a few rows (a registration, an account)."""
    n = max(rows // 5, 2)
    letters = np.array(list("ABCDEFGHJKLMNPRSTUVWXYZ"))
    names = [f"{prefix}{rng.integers(100, 999)}{''.join(rng.choice(letters, 3))}{k}"
             for k in range(n)]
    return np.array(names, dtype=object)[rng.integers(0, n, rows)]


def make(kind: str, rows: int, seed: int = 0) -> pd.DataFrame:
    """The table of `kind` (see the module docstring) with `rows` rows."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}: {', '.join(KINDS)}")
    rng = np.random.default_rng([seed, KINDS.index(kind)])
    depot = rng.choice(300, rows, p=_zipf(300, 1.1, rng))
    depot_effect = rng.normal(0.0, 1.0, 300)
    city = rng.choice(1000, rows, p=_zipf(1000, 1.0, rng))
    city_group = rng.integers(0, 4, 1000)
    carrier = rng.integers(0, 6, rows)
    weekday = rng.integers(0, 7, rows)
    distance = np.minimum(rng.gamma(2.0, 400.0, rows), 3999.0).round()
    load = rng.integers(0, 100, rows)
    hour = rng.integers(0, 24, rows)
    temp = rng.normal(12.0, 9.0, rows).round(1)
    age = rng.integers(19, 68, rows)
    frame = {"carrier": _text("C", carrier, 1), "weekday": _text("D", weekday, 1),
             "depot": _text("DEP", depot), "distance_km": distance, "load_pct": load,
             "hour": hour, "temp_c": temp, "driver_age": age}
    if kind == "transport":
        score = (1.1 * depot_effect[depot] + (distance > 1500) * 1.6
                 + ((carrier == 2) & (load > 70)) * 1.8 + (hour >= 17) * 0.6 - 2.2)
        status = np.where(rng.random(rows) < 1 / (1 + np.exp(-3 * score)), "late",
                          "on time")
        frame["reg"] = _identifier("N", rows, rng)
    elif kind == "accounts":
        frame["city"] = _text("city", city)
        frame["account"] = _identifier("AC", rows, rng)
        group = city_group[city]
        raw = np.stack([np.zeros(rows),
                        1.5 * (group == 1) + 0.8 * depot_effect[depot] - 0.6,
                        1.5 * (group == 2) + (distance > 2000) * 1.5 - 0.8,
                        1.2 * (group == 3) * (load > 50) + (carrier == 4) * 1.0 - 1.2],
                       axis=1) * 2.0
        p = np.exp(raw - raw.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        status = np.array(["current", "late", "default", "closed"], dtype=object)[
            (p.cumsum(axis=1) < rng.random(rows)[:, None]).sum(axis=1)]
    else:
        frame["city"] = _text("city", city)
        score = np.stack([np.zeros(rows),
                          0.9 * depot_effect[depot] + (weekday >= 5) * 1.0
                          + (age < 30) * 0.8 - 0.5,
                          1.2 * (city_group[city] == 1) + (temp > 20) * 1.0 - 0.9],
                         axis=1) * 2.0
        p = np.exp(score - score.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        status = np.array(["agree", "neutral", "disagree"], dtype=object)[
            (p.cumsum(axis=1) < rng.random(rows)[:, None]).sum(axis=1)]
    table = pd.DataFrame(frame)
    for name in table.columns:
        blank = rng.random(rows) < MISSING_SHARE
        if name == "city":   # missing more often on the late rows: the gap says something
            blank |= (status != status[0]) & (rng.random(rows) < 0.03)
        if pd.api.types.is_numeric_dtype(table[name]):
            table[name] = np.where(blank, np.nan, table[name].astype(np.float64))
        else:
            column = table[name].astype(object)
            column[blank] = None
            table[name] = column
    table["status"] = status
    return table
