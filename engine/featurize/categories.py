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
block (`pooled_codes`), for the orders and for the greedy guide alike: their shares
are noise (3 rows give 0 or 1), and a subset split sorting a registration's 4,000
values by class share fits the training rows and loses to the majority class on new
ones (issue 45).  The orders sort blocks by shares smoothed toward the column's
(LightGBM's `cat_smooth`).  Under the `route` missing policy a missing cell is a
block of its own, so each group says whether it holds missing cells.

A regression target (`n_classes` 0, `y` the numbers) has one order, by the values'
mean targets: the best subset for squared error is a prefix of it (Fisher 1958).

A column that looks like an identifier (`identifier_reason`: many values, most rows
on rare ones, and nothing learnt from them on held-out folds) is left out of the
default by the recipe, with one sentence saying how to keep it.

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
    (under `route`; otherwise cells were filled before coding).  `n_classes` 0: `y`
    holds a regression's numbers."""
    V = len(values)
    rank = ranked(codes, V)
    if n_classes == 0:   # each value's weight and weighted sum of the target
        weight = np.column_stack([np.bincount(codes, weights=w, minlength=V + 1),
                                  np.bincount(codes, weights=w * y, minlength=V + 1)])
    else:
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
                                       rare_floor(len(codes)), n_classes == 0))
    return distinct(features)


def pooled_codes(counts: np.ndarray, floor: int) -> np.ndarray:
    """Each code's block, given each code's rows (`counts`, the last code a missing
    cell): a value on at least `floor` rows is a block of its own, the values on fewer
    rows are one block together, missing cells another.  Blocks are what the orders
    and the greedy guide split: a value seen on a few rows has class shares of 0 or 1
    that say nothing about new rows."""
    n_values = len(counts) - 1
    common = counts[:n_values] >= floor
    blocks = np.empty(n_values + 1, dtype=np.int64)
    n_common = int(common.sum())
    blocks[:n_values][common] = np.arange(n_common)
    blocks[:n_values][~common] = n_common
    blocks[n_values] = n_common + (1 if n_common < n_values else 0)
    return blocks


def _prefix_groups(name, values, weight, counts, has_missing, rank, floor, regression):
    """Groups "in the first j blocks" of each class-share order of the blocks (a value,
    the pooled rare values, or missing; `pooled_codes`).  A block's shares are
    smoothed toward the column's (`floor` rows of the column's shares added to its
    own, as LightGBM's `cat_smooth` does), so a small block sits near the middle of
    every order rather than at an end.  In `regression` `weight` holds each value's
    weight and target sum, and the one order is by smoothed mean."""
    V = len(values)
    blocks_of = pooled_codes(counts, floor)
    n_blocks = int(blocks_of.max()) + 1
    block_weight = np.zeros((n_blocks, weight.shape[1]))
    np.add.at(block_weight, blocks_of, weight)
    present = np.flatnonzero(np.bincount(blocks_of, weights=counts,
                                         minlength=n_blocks) > 0)
    if len(present) < 2:
        return []
    block_weight = block_weight[present]
    if regression:
        totals, sums = block_weight[:, 0], block_weight[:, 1:]
        classes = [0]
    else:
        totals, sums = block_weight.sum(axis=1), block_weight
        classes = [1] if weight.shape[1] == 2 else \
            list(np.argsort(-block_weight.sum(axis=0), kind="stable")[:MAX_ORDERS])
    prior = sums.sum(axis=0) / max(totals.sum(), 1e-300)
    share = (sums + floor * prior) / (totals + floor)[:, None]
    features = []
    for k in classes:
        order = np.lexsort((np.arange(len(present)), share[:, k]))
        reached = np.cumsum(totals[order]) / max(totals.sum(), 1e-300)
        ends = {int(np.searchsorted(reached, q / PREFIX_CUTS)) + 1
                for q in range(1, PREFIX_CUTS)}
        for end in sorted(e for e in ends if 0 < e < len(present)):
            inside = np.zeros(n_blocks, dtype=bool)
            inside[present[order[:end]]] = True
            members = inside[blocks_of]
            missing = bool(members[V]) if has_missing else None
            feature = group(name, values, members[:V], missing, rank)
            if feature is not None:
                features.append(feature)
    return features


# A text column is an identifier (a registration, an account) when it has at least
# this many values, most of its rows lie on values seen fewer than `rare_floor` times,
# and its values predict nothing on held-out rows (`held_out_gain` <= 0).
IDENTIFIER_VALUES = 50
IDENTIFIER_FOLDS = 5
# The held-out check merges all but this many of the most frequent classes.
IDENTIFIER_CLASSES = 20


def identifier_reason(name: str, codes: np.ndarray, n_values: int, y: np.ndarray,
                      n_classes: int) -> str | None:
    """Why the text column `name` (each row's value code, `n_values` for a missing
    cell) looks like an identifier to leave out of the default, or None.

    A tree splits such a column into groups of values that each hold a few rows of
    one class: exact on the training rows, below the majority class on new ones.  So
    a column with many values, most rows on rare values, whose values' class shares
    (estimated on four fifths of the rows, smoothed toward the column's) predict the
    other fifth's classes no better than the shares of all rows, is left out.  A
    regression's (`n_classes` 0, `y` its numbers): the values' mean targets."""
    present = codes < n_values
    rows = int(present.sum())
    counts = np.bincount(codes[present], minlength=n_values)
    seen = int(np.count_nonzero(counts))
    floor = rare_floor(rows)
    if seen < IDENTIFIER_VALUES or 2 * counts[counts < floor].sum() < rows:
        return None
    gain = held_out_gain if n_classes else _held_out_gain_numbers
    if gain(codes[present], n_values, y[present], n_classes, floor) > 0:
        return None
    return (f"it looks like an identifier, {seen:,} values on {rows / seen:.1f} rows "
            f"each on average whose {'classes' if n_classes else 'means'} predicted "
            "nothing on held-out rows; keep "
            f"it with --categorical {name}, “Use as: categorical” in the app or "
            f"categorical=['{name}'] in a notebook")


def held_out_gain(codes: np.ndarray, n_values: int, y: np.ndarray, n_classes: int,
                  smoothing: float) -> float:
    """How much better (in Brier score per row) each row's class is predicted by its
    value's class shares on the other folds, smoothed toward theirs by `smoothing`
    rows of the other folds' shares, than by the other folds' shares alone; folds
    drawn with a fixed seed, so a column gets the same answer every time."""
    if n_classes > IDENTIFIER_CLASSES:   # the rest become one class: memory V x K
        biggest = np.argsort(-np.bincount(y, minlength=n_classes),
                             kind="stable")[:IDENTIFIER_CLASSES - 1]
        merged = np.full(n_classes, IDENTIFIER_CLASSES - 1)
        merged[biggest] = np.arange(IDENTIFIER_CLASSES - 1)
        y, n_classes = merged[y], IDENTIFIER_CLASSES
    fold = np.random.default_rng(0).integers(0, IDENTIFIER_FOLDS, len(codes))
    cell = codes * n_classes + y

    def counts(rows) -> np.ndarray:   # value x class (one fold at a time: memory V x K)
        return np.bincount(cell[rows], minlength=n_values * n_classes
                           ).reshape(n_values, n_classes).astype(float)
    total = counts(slice(None))
    gain = 0.0
    for f in range(IDENTIFIER_FOLDS):
        held = counts(fold == f)
        train = total - held
        prior = train.sum(axis=0) / max(train.sum(), 1.0)
        shares = (train + smoothing * prior) / (train.sum(axis=1) + smoothing)[:, None]
        rows = held.sum(axis=1)
        # a row of class k scores sum_j p_j^2 - 2 p_k (+ 1): summed over the held rows
        by_value = rows * (shares ** 2).sum(axis=1) - 2 * (held * shares).sum(axis=1)
        by_prior = rows * (prior ** 2).sum() - 2 * held @ prior
        gain += float((by_prior - by_value).sum())
    return gain / max(len(codes), 1)


def _held_out_gain_numbers(codes: np.ndarray, n_values: int, y: np.ndarray, _: int,
                           smoothing: float) -> float:
    """`held_out_gain` of a regression: how much smaller each row's squared error is
    when predicted by its value's mean target on the other folds (smoothed toward
    theirs by `smoothing` rows of their mean) than by their mean alone."""
    fold = np.random.default_rng(0).integers(0, IDENTIFIER_FOLDS, len(codes))
    y = y - y.mean()   # (squares of values far from zero would swamp the errors)

    def sums(rows) -> np.ndarray:   # each value's rows, sum of targets, of squares
        return np.stack([np.bincount(codes[rows], weights=part[rows], minlength=n_values)
                         for part in (np.ones(len(y)), y, y * y)])
    total = sums(slice(None))
    gain = 0.0
    for f in range(IDENTIFIER_FOLDS):
        held = sums(fold == f)
        count, target_sum, _ = total - held
        prior = target_sum.sum() / max(count.sum(), 1.0)
        mean = (target_sum + smoothing * prior) / (count + smoothing)

        def error(guess):   # summed squared error of the held rows predicted by guess
            return float((held[2] - 2 * guess * held[1] + held[0] * guess ** 2).sum())
        gain += error(prior) - error(mean)
    return gain / max(len(codes), 1)


def distinct(features: list[Feature]) -> list[Feature]:
    """`features` without repeats (a group listed in another order is the same)."""
    seen, kept = set(), []
    for f in features:
        key = (f.op, frozenset(f.value) if f.op == IN else f.value, f.missing)
        if key not in seen:
            seen.add(key)
            kept.append(f)
    return kept
