"""The greedy tree as every anytime search's floor, and grown last on small tables.

A quick search (depth 2 or less on a table of at most `QUICK_CELLS` cells, or at most
`QUICK_CELLS_DEPTH_TWO` cells and `QUICK_WORK_DEPTH_TWO` rows x features²) goes
first: a proven optimum needs no greedy tree (growing it was a fifth of a small fit);
a search that ends without a proof, or is stopped before it has a tree, still ends no
worse than the greedy tree.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import Interrupted
from engine.model.tree import Tree
from engine.solvers.contree import ConTree
from engine.solvers.greedy import Greedy
from engine.solvers.monitor import Monitor
from engine.solvers.protocol import Result, Status
from engine.solvers.warm_start import (QUICK_CELLS, QUICK_CELLS_DEPTH_TWO,
                                      QUICK_WORK_DEPTH_TWO)
from engine.training import train

from optimal_trees import dataset_from_arrays


def numeric_table(rows: int, seed: int = 3, columns: int = 5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, columns)).round(2)
    y = ((X[:, 0] > 0.3) ^ (X[:, 2] < -0.5) ^ (rng.random(rows) < 0.15)).astype(np.int64)
    return dataset_from_arrays(X, y, np.ones(rows), 2, binary=False)


@pytest.fixture
def greedy_calls(monkeypatch):
    calls = []
    solve = Greedy.solve

    def counted(self, data, params, monitor):
        calls.append(monitor)
        return solve(self, data, params, monitor)

    monkeypatch.setattr(Greedy, "solve", counted)
    return calls


def test_a_small_table_proven_optimal_grows_no_greedy_tree(greedy_calls):
    small = numeric_table(QUICK_CELLS // 5)
    result = train(small, "contree", {"depth": 2})
    assert result.optimal and not greedy_calls
    assert "warm_start_error" not in result.stats
    assert result.incumbents[-1][1] == result.train_error   # the curve ends on the tree
    greedy = train(small, "greedy", {"depth": 2})
    assert result.train_error <= greedy.train_error


@pytest.mark.parametrize("algorithm", ["contree", "blossom", "dl85", "cadl85"])
def test_a_deeper_search_on_a_small_table_shows_the_greedy_tree_first(greedy_calls,
                                                                      algorithm):
    """Issue 49: ConTree on two threads, depth 4, 500 rows x 100 features searched
    first and published nothing until its time limit (2 s): the first tree must come
    at once.  The greedy tree is grown on the run's own clock, before any other tree."""
    rng = np.random.default_rng(0)
    X = (rng.random((500, 100)) < 0.5).astype(np.uint8)
    y = ((X[:, 0] ^ X[:, 1]) | (X[:, 2] & X[:, 3]) ^ (rng.random(500) < 0.15))
    data = dataset_from_arrays(X, y.astype(np.int64), np.ones(500), 2)
    assert data.X.size <= QUICK_CELLS
    monitor = Monitor(0.3)
    params = {"depth": 4, **({"threads": 2} if algorithm != "cadl85" else {})}
    result = train(data, algorithm, params, monitor=monitor)
    assert greedy_calls == [monitor]
    assert result.incumbents[0][1] == result.stats["warm_start_error"]


def test_a_search_from_the_greedy_tree_still_proves_its_optimum(greedy_calls):
    small = numeric_table(300)
    result = train(small, "contree", {"depth": 3})
    assert result.optimal and len(greedy_calls) == 1
    assert result.incumbents[0][1] == result.stats["warm_start_error"]
    assert result.train_error <= result.stats["warm_start_error"]


def test_depth_two_searches_a_mid_table_first_and_a_wide_or_tall_one_after_greedy(
        greedy_calls):
    mid = numeric_table(QUICK_CELLS // 5 + 1)
    assert QUICK_CELLS < mid.X.size <= QUICK_CELLS_DEPTH_TWO
    assert mid.X.size * 5 <= QUICK_WORK_DEPTH_TWO
    result = train(mid, "contree", {"depth": 2})
    assert result.optimal and not greedy_calls
    assert result.incumbents[-1][1] == result.train_error
    assert result.train_error <= train(mid, "greedy", {"depth": 2}).train_error
    wide = numeric_table(QUICK_WORK_DEPTH_TWO // 40 ** 2 + 1, columns=40)
    tall = numeric_table(QUICK_CELLS_DEPTH_TWO // 3 + 1, columns=3)
    assert wide.X.size <= QUICK_CELLS_DEPTH_TWO < tall.X.size
    assert tall.X.size * 3 <= QUICK_WORK_DEPTH_TWO < wide.X.size * 40
    for table in (wide, tall):
        greedy_calls.clear()
        result = train(table, "contree", {"depth": 2})
        assert result.optimal and len(greedy_calls) == 1
        assert result.incumbents[0][1] == result.stats["warm_start_error"]


def leaf_result(data, status):
    weights = np.bincount(data.y, weights=data.w, minlength=2).astype(np.float64)
    tree = Tree.leaf(weights, data.prep)
    return Result(tree, tree.error(data.X, data.y, data.w), 0.0, False, status, 0.0)


def test_a_small_search_ending_unproven_keeps_the_better_greedy_tree(monkeypatch,
                                                                      greedy_calls):
    small = numeric_table(500)
    monkeypatch.setattr(ConTree, "solve",
                        lambda self, data, params, monitor: leaf_result(data,
                                                                         Status.TIME_LIMIT))
    greedy = Greedy().solve(small, {"depth": 2, "min_leaf": 1.0, "leaf_cost": 0.0},
                            Monitor())
    result = train(small, "contree", {"depth": 2})
    assert len(greedy_calls) == 2   # (one above)
    assert result.status == Status.TIME_LIMIT and not result.optimal
    assert result.stats["kept_warm_start"]
    assert result.train_error == greedy.train_error < leaf_result(small, None).train_error
    assert result.tree.error(small.X, small.y, small.w) == result.train_error
    assert result.incumbents[-1][1] == greedy.train_error


def test_a_small_search_stopped_before_its_tree_returns_the_greedy_tree(monkeypatch):
    small = numeric_table(500)

    def stopped(self, data, params, monitor):
        monitor.cancel()
        raise Interrupted("stopped while preparing", Status.CANCELLED.value)

    monkeypatch.setattr(ConTree, "solve", stopped)
    monitor = Monitor(60)
    result = train(small, "contree", {"depth": 2}, monitor=monitor)
    greedy = train(small, "greedy", {"depth": 2})
    assert result.status == Status.CANCELLED and result.stats["kept_warm_start"]
    assert result.train_error == greedy.train_error
    assert result.incumbents and result.incumbents[-1][1] == greedy.train_error
