"""The `greedy` solver end to end (CSV -> prepare -> train) against scikit-learn's CART.

Ties between equally good splits are broken differently (see greedy.kernel), so the
training errors are compared on the real datasets whose sklearn tree has no tie;
the test insists that enough datasets take part for the comparison to mean something.
"""

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

from engine.data.csv_reader import read_table
from engine.data.dataset import PrepOptions, merge_duplicates
from engine.featurize import prepare
from engine.solvers.protocol import Status
from engine.training import train

from conftest import SAMPLES, dataset_files
from test_greedy_kernel import _has_tie

REAL = dataset_files("odd", "inferdt") + [p for p in dataset_files("contree")
                                          if p.stat().st_size < 1_000_000]


def _prepared(path, binarize="none"):
    target = "first" if path.suffix == ".txt" else None
    return prepare(read_table(path), PrepOptions(target=target, binarize=binarize))


@pytest.mark.parametrize("depth", [2, 3])
def test_training_error_equals_sklearn_on_tie_free_real_data(depth):
    if not REAL:
        pytest.skip("the shared datasets folder is absent")
    compared = 0
    for path in REAL:
        data = _prepared(path)
        X = data.X.astype(np.float64)
        clf = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, data.y)
        if _has_tie(clf, X, data.y, data.n_classes, 1.0):
            continue
        result = train(data, "greedy", {"depth": depth})
        sk_error = float((clf.predict(X) != data.y).sum())
        assert result.train_error == sk_error, path.name
        assert np.array_equal(result.tree.predict(X), clf.predict(X)), path.name
        compared += 1
    assert compared >= 5, f"only {compared} tie-free datasets"


def test_binary_and_continuous_data_and_result_fields():
    path = SAMPLES / "loans.csv"
    for binarize in ("none", "quantile:6"):
        data = _prepared(path, binarize)
        result = train(data, "greedy", {"depth": 3, "min_leaf": 5})
        assert result.status == Status.FINISHED and not result.optimal
        assert result.train_error == result.tree.error(data.X, data.y, data.w)
        assert result.tree.depth <= 3
        leaves = result.tree.value[result.tree.feature < 0].sum(axis=1)
        assert leaves.min() >= 5 and leaves.sum() == data.n_rows
        assert result.incumbents[-1][1] == result.train_error


def test_merged_duplicates_give_the_same_tree():
    data = _prepared(SAMPLES / "loans.csv", "quantile:4")
    merged = merge_duplicates(data)
    assert merged.n_rows < data.n_rows
    a = train(data, "greedy", {"depth": 4}).tree
    b = train(merged, "greedy", {"depth": 4}).tree
    assert np.array_equal(a.predict(data.X), b.predict(data.X))
