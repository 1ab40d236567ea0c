"""The weighted training set every solver receives, and what was done to make it.

`Dataset` (matrix, classes, weights, recipe, report), the user's choices
(`PrepOptions`) and the `PrepReport` of everything preparation changed, so nothing
happens silently; `engine.featurize.prepare` makes a Dataset from a raw table.
`merge_duplicates` and `drop_inconsistent` implement the data preprocessing of the
Blossom paper (Section 4.3) for any solver that wants it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from engine.data.columns import ColumnKind
from engine.data.preprocessing import Preprocessing

# A "class" column with more distinct values than this share of rows (and more than
# MANY_CLASSES) is a mistake: `prepare` refuses it.
MAX_CLASSES_PER_ROWS = 0.5
# Below that, a target with more classes than this, or whose classes are all numbers
# and more than MANY_NUMBER_CLASSES, may be a measurement: `prepare` goes on but says
# so (`PrepReport.target_doubt` for the window to ask, `warnings` for the CLI).
MANY_CLASSES = 50
MANY_NUMBER_CLASSES = 20


@dataclass(frozen=True)
class PrepOptions:
    """The user's choices; every field has the default a first-time user wants."""

    target: str | int | None = None
    ignore: tuple[str, ...] = ()
    kinds: dict[str, ColumnKind] = field(default_factory=dict)
    missing: str = "route"
    binarize: str = "none"
    remove_redundant: bool = False
    merge_duplicates: bool = False
    drop_inconsistent: bool = False
    depth: int | None = None   # the tree depth `guided` thresholds are chosen for
    # "balanced" or {class name: weight}: row weights by class (data/class_weights.py)
    class_weight: str | dict[str, float] | None = None
    # The levels of each ordered column, lowest first (`ColumnKind.ORDERED`; a column
    # declared ordered without levels gets `featurize.ordered.guess_order`'s)
    orders: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # "auto" (from the target: `engine.data.task.choose_task`), "classification" or
    # "regression"
    task: str = "auto"


def counted(n: int, noun: str) -> str:
    """"1 row", "1,234 rows": a count and its noun, which is singular for one."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _were(n: int) -> str:
    return "was" if n == 1 else "were"


@dataclass
class PrepReport:
    """What preparation did to the user's table, for display and the JSON summary."""

    rows_read: int = 0
    rows_missing_target: int = 0
    rows_missing_values: int = 0       # dropped under the `drop` policy
    cells_imputed: int = 0             # filled under `impute` / `indicator`
    cells_routed: int = 0              # sent by each test one way under `route`
    ignored_columns: dict[str, str] = field(default_factory=dict)  # name -> reason
    redundant_features: int = 0
    duplicates_merged: int = 0
    inconsistent_dropped: int = 0
    # The question to ask when the target may not be a class column ('' if it looks
    # fine), and one-sentence warnings for the command line's stderr.
    target_doubt: str = ""
    warnings: list[str] = field(default_factory=list)
    class_weights: str = ""   # e.g. "approved × 1, declined × 3", if weighted
    # What reading the file changed (renamed columns, rewritten numbers): `RawTable.notes`.
    reading: list[str] = field(default_factory=list)
    task: str = ""          # what the tree predicts (classification or regression)
    task_reason: str = ""   # why, in one sentence (`choose_task`)

    def lines(self) -> list[str]:
        """Plain sentences for each change that was made."""
        out = list(self.reading)
        n = self.rows_missing_target
        if n:
            out.append(f"{counted(n, 'row')} without a class {_were(n)} dropped.")
        n = self.rows_missing_values
        if n:
            out.append(f"{counted(n, 'row')} with missing values {_were(n)} dropped.")
        n = self.cells_imputed
        if n:
            out.append(f"{counted(n, 'missing cell')} {_were(n)} filled (median or most "
                       "frequent value).")
        n = self.cells_routed
        if n:
            out.append(f"{counted(n, 'missing cell')} {'is' if n == 1 else 'are'} routed: "
                       f"each test sends {'it' if n == 1 else 'them'} to one side, chosen "
                       "with the tree.")
        for name, reason in self.ignored_columns.items():
            out.append(f"Column '{name}' was ignored ({reason}).")
        n = self.redundant_features
        if n:
            out.append(f"{counted(n, 'redundant feature')} {_were(n)} removed.")
        n = self.duplicates_merged
        if n:
            out.append(f"{counted(n, 'duplicate row')} {_were(n)} merged into weights.")
        n = self.inconsistent_dropped
        if n:
            out.append(f"{counted(n, 'row')} contradicting identical rows of another "
                       f"class {_were(n)} dropped.")
        if self.class_weights:
            out.append(f"Rows are weighted by class: {self.class_weights}.")
        return out


@dataclass
class Dataset:
    """Training set: features X (n x F), classes y, weights w, and its recipe `prep`."""

    X: np.ndarray
    y: np.ndarray
    w: np.ndarray
    prep: Preprocessing
    report: PrepReport
    # How many rows each row stands for (merged duplicates), when class weights made
    # `w` differ from it; None when `w` is that count.
    counts: np.ndarray | None = None
    class_weights: np.ndarray | None = None   # the factor of each class, if weighted

    @property
    def row_counts(self) -> np.ndarray:
        """How many of the user's rows each row stands for (`w` without class weights)."""
        return self.w if self.counts is None else self.counts

    @property
    def features(self):
        return self.prep.features

    @property
    def class_names(self) -> list[str]:
        return self.prep.class_names

    @property
    def n_rows(self) -> int:
        return len(self.y)

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def n_classes(self) -> int:
        """How many classes the target has; 0 for a regression."""
        return len(self.prep.class_names)

    @property
    def regression(self) -> bool:
        """Whether `y` holds numbers to predict (float64) rather than class indices."""
        return self.prep.regression

    @property
    def is_binary(self) -> bool:
        return all(f.binary for f in self.prep.features)


def row_groups(X: np.ndarray, *extra: np.ndarray,
               lexicographic: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Group identical rows of X (and extra columns): (first index, group id per row).

    Groups come in the lexicographic order of their rows (as `np.unique(axis=0)`
    gives), or with `lexicographic=False` in the order of their first rows (sorting 3
    million distinct rows of 257 features takes 3.4 s, for callers that need groups in
    some fixed order but not that one).  Rows are compared as a few 64-bit words each
    (0/1 rows packed eight features to a byte) instead of sorted whole, which on 2
    million rows of 90 features takes a second rather than fifteen.
    """
    keys = np.column_stack([X, *extra]) if extra else np.asarray(X)
    if len(keys) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    words = _row_words(keys)
    if words.shape[1] == 0:   # no columns: every row is the same
        return np.zeros(1, np.int64), np.zeros(len(keys), np.int64)
    if words.shape[1] == 1:
        _, first, inverse = np.unique(words[:, 0], return_index=True,
                                      return_inverse=True)
        return first, inverse.ravel()
    _, first, inverse = np.unique(_row_hashes(words), return_index=True,
                                  return_inverse=True)
    inverse = inverse.ravel()
    if not (words == words[first[inverse]]).all():   # a hash collision: sort rows
        _, first, inverse = np.unique(words, axis=0, return_index=True,
                                      return_inverse=True)
        return first, inverse.ravel()
    order = np.lexsort(words[first].T[::-1]) if lexicographic else np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order], rank[inverse]


def _row_words(keys: np.ndarray) -> np.ndarray:
    """Each row as 64-bit words that order and compare like the row itself: 0/1 rows
    packed into big-endian bits, other rows as their values' bits (no order)."""
    if keys.dtype in (np.uint8, np.bool_) and keys.max(initial=0) <= 1:
        packed = np.packbits(keys.astype(bool, copy=False), axis=1)
        pad = -packed.shape[1] % 8
        if pad:
            packed = np.pad(packed, ((0, 0), (0, pad)))
        return packed.view(">u8").astype(np.uint64)
    values = keys.astype(np.float64) + 0.0   # -0.0 == 0.0
    return np.ascontiguousarray(values).view(np.uint64)


def merge_duplicates(data: Dataset) -> Dataset:
    """Identical rows of the same class become one row whose weight is their total."""
    first, inverse = row_groups(data.X, data.y)
    w = np.bincount(inverse, weights=data.w, minlength=len(first))
    order = np.sort(first)
    w = w[inverse[order]]
    report = replace(data.report, duplicates_merged=data.report.duplicates_merged
                     + data.n_rows - len(order))
    return Dataset(data.X[order], data.y[order], w, data.prep, report)


def drop_inconsistent(data: Dataset) -> Dataset:
    """Keep, for each distinct feature vector, only the rows of its majority class.

    Identical inputs with different classes make every tree err on them, and make a
    consistent tree (SAT solvers) impossible.  Ties keep the smallest class index.
    """
    _, group = row_groups(data.X)
    weight = np.zeros((group.max() + 1, data.n_classes))
    np.add.at(weight, (group, data.y), data.w)
    keep = data.y == np.argmax(weight, axis=1)[group]
    report = replace(data.report, inconsistent_dropped=data.report.inconsistent_dropped
                     + int((~keep).sum()))
    return Dataset(data.X[keep], data.y[keep], data.w[keep], data.prep, report)


def _row_hashes(words: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row of 64-bit words (identical rows, identical hashes).

    Column by column numpy arithmetic releases the GIL, unlike sorting whole rows,
    which kept the GUI from repainting for a second on 200,000 rows.
    """
    rng = np.random.default_rng(12345)
    multipliers = rng.integers(1, 2**63, size=words.shape[1], dtype=np.uint64) | np.uint64(1)
    h = np.zeros(len(words), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(words.shape[1]):
            h += words[:, j] * multipliers[j]
            h ^= h >> np.uint64(29)
    return h


def inconsistent_rows(data: Dataset) -> int:
    """Number of rows that `drop_inconsistent` would remove.

    Only rows whose hash group holds several classes can contradict another row;
    the exact computation then runs on those few rows alone.
    """
    if data.n_rows == 0 or data.n_classes < 2:
        return 0
    _, group = np.unique(_row_hashes(_row_words(np.asarray(data.X))), return_inverse=True)
    group = group.ravel()
    classes = np.zeros((group.max() + 1, data.n_classes), dtype=bool)
    classes[group, data.y] = True
    rows = np.flatnonzero((classes.sum(axis=1) > 1)[group])
    if len(rows) == 0:
        return 0
    subset = replace(data, X=data.X[rows], y=data.y[rows], w=data.w[rows],
                     report=PrepReport())
    return drop_inconsistent(subset).report.inconsistent_dropped


