"""A least leaf size through `auto` (DL8.5's `min_support`) and the warm start grown
under the same constraint: exact against brute force, never worse than greedy."""

import numpy as np

from engine.data.csv_reader import read_table
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.training import train

from conftest import SAMPLES
from optimal_trees import dataset_from_arrays, exhaustive


def leaf_weights(tree) -> np.ndarray:
    return tree.value[tree.feature < 0].sum(axis=1)


def test_auto_with_a_least_leaf_is_optimal_among_such_trees():
    rng = np.random.default_rng(36)
    for trial in range(16):
        n, F, K = int(rng.integers(20, 60)), int(rng.integers(3, 7)), int(rng.integers(2, 4))
        X = (rng.random((n, F)) < 0.5).astype(np.uint8)
        y = ((X[:, 0] & X[:, 1]) | X[:, 2]).astype(np.int64) % K
        noisy = rng.random(n) < 0.25
        y[noisy] = rng.integers(0, K, noisy.sum())
        w = rng.integers(1, 4, n).astype(float) if trial % 2 else np.ones(n)
        least, depth = (2, 3, 5, 8)[trial % 4], 2 + trial % 2
        data = dataset_from_arrays(X, y, w, K)
        result = train(data, "auto", {"depth": depth, "min_leaf": least})
        assert result.stats["chosen_algorithm"] == "dl85", trial
        assert result.optimal, trial
        assert result.train_error == exhaustive(X, y, w, K, depth, least), trial
        if result.tree.n_nodes > 1:
            assert leaf_weights(result.tree).min() >= least, trial
        greedy = train(data, "greedy", {"depth": depth, "min_leaf": least})
        assert result.train_error <= greedy.train_error, trial


def test_dl85_with_a_least_leaf_starts_from_greedy_under_the_same_least_leaf():
    rng = np.random.default_rng(7)
    X = (rng.random((300, 8)) < 0.5).astype(np.uint8)
    y = (X[:, 0] ^ X[:, 3] ^ (rng.random(300) < 0.2)).astype(np.int64)
    data = dataset_from_arrays(X, y, np.ones(300), 2)
    for least in (1, 10, 40):
        greedy = train(data, "greedy", {"depth": 3, "min_leaf": least})
        result = train(data, "dl85", {"depth": 3, "min_support": least})
        assert result.stats["warm_start_error"] == greedy.train_error
        assert result.incumbents[0][1] == greedy.train_error
        assert result.optimal and result.train_error <= greedy.train_error
        assert leaf_weights(result.tree).min() >= least


def test_auto_with_a_least_leaf_on_a_table_with_numbers_and_text():
    raw = read_table(SAMPLES / "loans.csv")
    data = prepare(raw, PrepOptions(target="last"))
    plain = train(data, "auto", {"depth": 3})
    assert plain.stats["chosen_algorithm"] != "dl85"   # unchanged without a least leaf
    result = train(data, "auto", {"depth": 3, "min_leaf": 25})
    assert result.stats["chosen_algorithm"] == "dl85"
    assert "25 rows in every leaf" in result.stats["reason"]
    assert leaf_weights(result.tree).min() >= 25
    greedy = train(data, "greedy", {"depth": 3, "min_leaf": 25})
    assert result.train_error <= greedy.train_error
    assert result.train_error >= plain.train_error   # a constraint never helps training
