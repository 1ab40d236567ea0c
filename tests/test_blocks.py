"""Block-at-a-time column work (engine.data.blocks) equals the whole-column calls."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.data import blocks

CELLS = st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "1", "1.5", "?", "é"])),
                 max_size=60)


@pytest.fixture(autouse=True)
def tiny_blocks(monkeypatch):
    monkeypatch.setattr(blocks, "ROWS", 7)


@settings(max_examples=200, deadline=None)
@given(CELLS)
def test_factorize_equals_pandas(values):
    cells = pd.Series(values, dtype=object)
    codes, uniques = blocks.factorize(cells)
    expected_codes, expected_uniques = pd.factorize(cells)
    assert codes.tolist() == expected_codes.tolist()
    assert uniques.tolist() == list(expected_uniques)
    codes, uniques = blocks.factorize(cells.to_numpy())
    assert codes.tolist() == expected_codes.tolist()


@settings(max_examples=200, deadline=None)
@given(CELLS, st.lists(st.booleans(), min_size=60, max_size=60))
def test_coded_cells_factorize_and_miss_as_their_text(values, keep):
    """A coded (categorical) column gives the same missing cells, codes and values
    as its text; on a subset of its rows, the same cells and only the values still
    present (in the first rows' order, which may not be the subset's)."""
    cells = pd.Series(values, dtype=object, name="c")
    coded = blocks.coded(cells)
    assert coded.name == "c" and isinstance(coded.dtype, pd.CategoricalDtype)
    assert blocks.missing(coded).tolist() == blocks.missing(cells).tolist()
    assert [x.tolist() for x in blocks.factorize(coded)] == \
        [x.tolist() for x in blocks.factorize(cells)]
    mask = np.array(keep[:len(values)], dtype=bool)
    subset = pd.Series(coded.array[mask])
    assert blocks.missing(subset).tolist() == blocks.missing(cells[mask]).tolist()
    codes, uniques = blocks.factorize(subset)
    expected_codes, expected_uniques = blocks.factorize(cells[mask])
    decoded = [uniques[c] if c >= 0 else None for c in codes]
    assert decoded == [expected_uniques[c] if c >= 0 else None for c in expected_codes]
    assert sorted(uniques) == sorted(expected_uniques)


@settings(max_examples=200, deadline=None)
@given(CELLS, st.lists(st.integers(0, 59), max_size=40))
def test_blockwise_missing_and_take(values, positions):
    cells = pd.Series(values, dtype=object)
    assert blocks.missing(cells).tolist() == cells.isna().tolist()
    numbers = blocks.blockwise(lambda part: pd.to_numeric(part, errors="coerce"), cells,
                               np.float64)
    np.testing.assert_array_equal(numbers, pd.to_numeric(cells, errors="coerce"))
    rows = np.array([p for p in positions if p < len(values)], dtype=np.int64)
    assert blocks.take(cells, rows).tolist() == cells.iloc[rows].tolist()


def test_release_empties_object_arrays_only():
    cells = np.array(["a", "b", None] * 10, dtype=object)
    numbers = np.arange(5.0)
    arrays = [cells, numbers]
    blocks.release(arrays)
    assert arrays == [] and all(cell is None for cell in cells)
    assert numbers.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


@settings(max_examples=200, deadline=None)
@given(st.lists(CELLS, min_size=1, max_size=6), st.integers(0, 3))
def test_recoding_columns_together_recodes_each_cell(columns, skip):
    """`recode_columns` maps every cell of every column as the function maps it alone,
    merges values that become equal and keeps only the values some cell holds, in
    the order of the column's old values."""
    def function(values):   # merges "1.5" into "1", makes "?" missing
        return values.replace({"1.5": "1", "?": None})

    coded = []
    for cells in columns:
        codes, values = blocks.factorize(np.array(cells, dtype=object))
        coded.append(blocks.Coded(codes[skip:].astype(np.int32), values))
    for before, after, cells in zip(coded, blocks.recode_columns(coded, function), columns):
        mapped = [None if c is None else {"1.5": "1", "?": None}.get(c, c)
                  for c in cells[skip:]]
        assert after.cells().tolist() == mapped
        order = list(dict.fromkeys(function(pd.Series(before.values, dtype=object))
                                   [before.used()].dropna()))
        assert after.values.tolist() == order
        assert after.codes.dtype.kind == "i"
