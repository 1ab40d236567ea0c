"""The 0/1 tests a text column offers the solvers: a bounded set of value groups.

One test per value (one-hot) makes a column with 4,000 values 4,000 matrix columns
(gigabytes at 300,000 rows) and still cannot express "carrier in {AA, UA, DL}" in
one split.  CART's answer for two classes (Breiman et al. 1984, 9.4) is exact:
order the values by their share of class 1; the best subset is a prefix of that
order.  So a text column offers, whatever its number of values:

* the groups "in the first j values" of the order by each class's share (for two
  classes one order; for more, one per class, the `MAX_ORDERS` largest), cut where
  the prefix reaches each eighth of the rows (`PREFIX_CUTS`);
* the `TOP_VALUES` most frequent values alone (every value when the column has at
  most `SMALL_COLUMN` values, as one-hot coding would);
* every group the greedy tree itself splits on (`greedy` in `engine.featurize.recipe`),
  so an optimal tree on these tests is never worse than the greedy tree, as guided
  thresholds guarantee for numbers.

Values seen on fewer than `rare_floor(rows)` training rows are pooled into one
block for the orders (their shares are noise: 3 rows give 0 or 1); greedy groups
are not pooled.  Under the `route` missing policy a missing cell is a value of its
own in the orders, so each group says whether it holds missing cells.

A group is kept as the smaller side of its split (fewer values; the other side is
"not in" it), so a value never seen in training is in no group: it takes the
"not in" branch of every test, in the tree, the predictions and every export.
"""

from __future__ import annotations

import numpy as np

from engine.data.features import EQ, IN, MISSING, Feature

# A column with at most this many values offers every value alone (one-hot).
SMALL_COLUMN = 8
# Otherwise, the most frequent values alone.
TOP_VALUES = 4
# Prefix groups of each order end where they first hold q / PREFIX_CUTS of the rows.
PREFIX_CUTS = 8
# With more classes, the orders by the shares of the largest classes only.
MAX_ORDERS = 4


def rare_floor(rows: int) -> int:
    """Values on fewer training rows than this are pooled for the orders: at least
    10 rows, and one per thousand rows (330 at 330,000 rows)."""
    return max(10, rows // 1000)


def ranked(codes: np.ndarray, n_values: int) -> np.ndarray:
    """Value codes from the most to the least frequent (ties by code): how a group
    lists its values, so its first few are the ones that matter."""
    counts = np.bincount(codes[codes < n_values], minlength=n_values)
    return np.lexsort((np.arange(n_values), -counts))


def group(name: str, values: list[str], members: np.ndarray, missing: bool | None,
          rank: np.ndarray) -> Feature | None:
    """The test "`name` in the values with `members` (a bool mask over codes)", with
    `missing` saying whether a missing cell is in it (None: no route), written as its
    smaller side; None when it splits nothing (all values or none, missing aside from
    a route)."""
    inside = int(members.sum())
    if inside * 2 > len(values) or (inside * 2 == len(values) and not members[rank[0]]):
        members = ~members
        missing = None if missing is None else not missing
        inside = len(values) - inside
    if inside == 0:
        return Feature(name, MISSING) if missing else None
    chosen = tuple(values[c] for c in rank if members[c])
    if len(chosen) == 1:
        return Feature(name, EQ, chosen[0], missing)
    return Feature(name, IN, chosen, missing)


def value_groups(name: str, values: list[str], codes: np.ndarray, y: np.ndarray,
                 w: np.ndarray, n_classes: int, route: bool) -> list[Feature]:
    """The order-prefix groups and single values of a text column (see the module
    docstring).  `codes`: each row's value code, `len(values)` for a missing cell
    (under `route`; otherwise cells were filled before coding)."""
    V = len(values)
    rank = ranked(codes, V)
    weight = np.bincount(codes * n_classes + y, weights=w,
                         minlength=(V + 1) * n_classes).reshape(V + 1, n_classes)
    counts = np.bincount(codes, minlength=V + 1)
    has_missing = route and counts[V] > 0
    features: list[Feature] = []
    singles = rank if V <= SMALL_COLUMN else rank[:TOP_VALUES]
    for c in singles:
        for flag in ((False, True) if has_missing else (None,)):
            features.append(Feature(name, EQ, values[c], flag))
    if V > 2 or has_missing:
        features.extend(_prefix_groups(name, values, weight, counts, has_missing, rank,
                                       rare_floor(len(codes))))
    return distinct(features)


def _prefix_groups(name, values, weight, counts, has_missing, rank, floor):
    """Groups "in the first j blocks" of each class-share order of the blocks (a value,
    the pooled rare values, or missing)."""
    V = len(values)
    rare = np.flatnonzero(counts[:V] < floor)
    common = np.flatnonzero(counts[:V] >= floor)
    blocks = [[c] for c in common] + ([list(rare)] if len(rare) else []) + \
        ([[V]] if has_missing else [])
    if len(blocks) < 2:
        return []
    block_weight = np.array([weight[b].sum(axis=0) for b in blocks])
    totals = block_weight.sum(axis=1)
    n_classes = weight.shape[1]
    classes = [1] if n_classes == 2 else \
        list(np.argsort(-block_weight.sum(axis=0), kind="stable")[:MAX_ORDERS])
    share = block_weight / np.maximum(totals, 1e-300)[:, None]
    features = []
    for k in classes:
        order = np.lexsort((np.arange(len(blocks)), share[:, k]))
        reached = np.cumsum(totals[order]) / max(totals.sum(), 1e-300)
        ends = {int(np.searchsorted(reached, q / PREFIX_CUTS)) + 1
                for q in range(1, PREFIX_CUTS)}
        for end in sorted(e for e in ends if 0 < e < len(blocks)):
            members = np.zeros(V + 1, dtype=bool)
            for b in order[:end]:
                members[blocks[b]] = True
            missing = bool(members[V]) if has_missing else None
            feature = group(name, values, members[:V], missing, rank)
            if feature is not None:
                features.append(feature)
    return features


def distinct(features: list[Feature]) -> list[Feature]:
    """`features` without repeats (a group listed in another order is the same)."""
    seen, kept = set(), []
    for f in features:
        key = (f.op, frozenset(f.value) if f.op == IN else f.value, f.missing)
        if key not in seen:
            seen.add(key)
            kept.append(f)
    return kept
