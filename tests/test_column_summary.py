"""A column's first look by class (engine.column_summary), counted against pandas."""

import numpy as np
import pandas as pd
import pytest

from engine.column_summary import column_summary


def table(seed=0, n=500):
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n).astype(object)
    age[rng.random(n) < 0.1] = None
    city = rng.choice([f"c{i}" for i in range(30)], n).astype(object)
    city[rng.random(n) < 0.05] = None
    cls = rng.choice(["no", "yes"], n).astype(object)
    cls[rng.random(n) < 0.03] = None            # rows without a class are left out
    return pd.DataFrame({"age": [None if a is None else str(a) for a in age],
                         "city": city, "buys": cls})


@pytest.mark.parametrize("seed", range(4))
def test_a_numeric_column_is_binned_by_class_and_its_missing_cells_counted(seed):
    frame = table(seed)
    s = column_summary(frame, "age", "buys", numeric=True)
    known = frame[frame.buys.notna()]
    assert s.class_names == ["no", "yes"]
    assert s.rows == len(known)
    for k, name in enumerate(s.class_names):
        rows = known[known.buys == name]
        assert s.missing[k] == rows.age.isna().sum()
        ages = rows.age.dropna().astype(float).to_numpy()
        expected, _ = np.histogram(ages, bins=s.edges)
        assert s.counts[:, k].tolist() == expected.tolist()
    assert "rows with a class" in s.describe()


@pytest.mark.parametrize("seed", range(4))
def test_a_text_column_shows_its_most_frequent_values_and_the_others(seed):
    frame = table(seed)
    s = column_summary(frame, "city", "buys", numeric=False, top=10)
    known = frame[frame.buys.notna()]
    totals = known.city.value_counts()
    assert len(s.labels) == 11 and s.labels[-1] == "(other values)"
    assert s.others == len(totals) - 10
    assert s.counts[:10].sum(axis=1).tolist() == totals.iloc[:10].tolist()
    assert s.counts[10].sum() == totals.iloc[10:].sum()
    for i, label in enumerate(s.labels[:10]):
        for k, name in enumerate(s.class_names):
            assert s.counts[i, k] == ((known.city == label) & (known.buys == name)).sum()
    assert s.missing.sum() == known.city.isna().sum()


def test_a_scatter_has_the_rows_with_both_numbers_and_the_trees_cut_lines():
    from engine.column_summary import numeric_pairs, tree_cuts
    from engine.data.csv_reader import parse_text
    from engine.data.dataset import PrepOptions
    from engine.featurize import prepare
    from engine.training import train

    rng = np.random.default_rng(2)
    lines = ["a,b,c"] + [f"{x},{y},{'p' if x > 5 and y < 3 else 'q'}"
                         for x, y in zip(rng.integers(0, 10, 200), rng.integers(0, 6, 200))]
    raw = parse_text("\n".join(lines) + "\n")
    for binarize in ("none", "quantile:8"):
        tree = train(prepare(raw, PrepOptions(binarize=binarize)), "greedy",
                     {"depth": 2}).tree
        assert tree_cuts(tree, "a") and tree_cuts(tree, "b")
        for column in "ab":
            values = raw.frame[column].astype(float)
            for cut in tree_cuts(tree, column):
                assert values.min() <= cut <= values.max()
    xs, ys, classes, names = numeric_pairs(raw.frame, "a", "b", "c", limit=50)
    assert len(xs) == 50 and names == ["p", "q"]
    rows = raw.frame.astype({"a": float, "b": float})
    for x, y, k in zip(xs, ys, classes):
        assert ((rows.a == x) & (rows.b == y) & (rows.c == names[k])).any()


def test_an_ordered_columns_bars_follow_its_levels():
    frame = pd.DataFrame({"risk": ["High", "Low", "Low", "Medium", "Odd", None, "High"],
                          "y": ["a", "b", "b", "a", "a", "b", "a"]})
    s = column_summary(frame, "risk", "y", numeric=False,
                       order=("Low", "Medium", "High", "Unused"))
    assert s.labels == ["Low", "Medium", "High", "(other values)"]
    assert s.counts.sum(axis=1).tolist() == [2, 1, 2, 1]
    assert "its 3 levels in order" in s.describe()
