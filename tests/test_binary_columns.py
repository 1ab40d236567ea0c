"""The column kernels the binary solvers start with: redundant columns and transposes.

Checked against a plain definition on random 0/1 matrices with planted constant, equal
and complementary columns, including when every fingerprint collides (the cell by
cell comparison must then decide alone).
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.solvers import binary_columns
from engine.solvers.binary_columns import redundant_columns, transposed


def plain_redundant(X: np.ndarray, columns) -> set[int]:
    drop, seen = set(), []
    for j in columns:
        column = X[:, j].astype(bool)
        if column.all() or not column.any():
            drop.add(j)
        elif any(np.array_equal(column, s) or np.array_equal(column, ~s) for s in seen):
            drop.add(j)
        else:
            seen.append(column)
    return drop


def planted(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n, f = int(rng.integers(1, 40)), int(rng.integers(1, 12))
    X = rng.integers(0, 2, (n, f), dtype=np.uint8)
    extra = []
    for _ in range(int(rng.integers(0, 6))):
        kind, source = rng.integers(0, 3), int(rng.integers(0, f))
        extra.append(np.full(n, rng.integers(0, 2), np.uint8) if kind == 0
                     else X[:, source] if kind == 1 else 1 - X[:, source])
    X = np.column_stack([X, *extra]) if extra else X
    return np.ascontiguousarray(X[:, rng.permutation(X.shape[1])])


@pytest.mark.parametrize("collide", [False, True])
def test_redundant_columns_match_their_definition(monkeypatch, collide):
    if collide:
        real = binary_columns._fingerprints
        monkeypatch.setattr(binary_columns, "_fingerprints",
                            lambda X, index: (np.zeros(len(index), np.uint64),
                                              real(X, index)[1]))
    for seed in range(300):
        X = planted(seed)
        rng = np.random.default_rng(seed)
        columns = sorted(rng.choice(X.shape[1], int(rng.integers(1, X.shape[1] + 1)),
                                    replace=False).tolist())
        assert redundant_columns(X, columns) == plain_redundant(X, columns), seed
        assert redundant_columns(X.astype(np.float64), columns) == \
            plain_redundant(X, columns), seed


def test_redundant_columns_of_no_rows_are_all_of_them():
    assert redundant_columns(np.zeros((0, 3), np.uint8), [0, 2]) == {0, 2}


def test_transposed_is_the_transpose():
    for shape in ((1, 1), (63, 65), (130, 7), (5, 200)):
        X = np.random.default_rng(1).integers(0, 2, shape, dtype=np.uint8)
        Xt = transposed(X)
        assert Xt.flags.c_contiguous and np.array_equal(Xt, X.T)
