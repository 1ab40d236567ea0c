"""`hybrid`: an exact top, greedy levels below (issue 45), and `auto` beyond depth 6.

What must hold: the tree is never worse than the greedy tree of the same depth on
the training objective; its top levels are `auto`'s tree of that depth (said
"proven" only when it is); every leaf keeps the least leaf size; a cost per leaf
prunes; Stop and the time limit give a tree and the right status; the tree reads
the table's own columns (raw rows predict as the features do); the CLI prints the
certified part, and `auto` at depth 10 runs it.
"""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest
from conftest import SAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from optimal_trees import dataset_from_arrays, random_weights, shared_dataset

from engine.cli import main
from engine.data.csv_reader import read_table
from engine.data.dataset import PrepOptions
from engine.editing import graft, training_error
from engine.featurize import prepare
from engine.solvers import get_solver
from engine.solvers.auto import EXACT_DEPTH_LIMIT, choose
from engine.solvers.monitor import Monitor
from engine.solvers.protocol import Status
from engine.training import train

SEGMENT = "contree/segment.txt"


def greedy_of(data, params: dict):
    """The greedy tree the hybrid must never lose to: same depth, least leaf, cost."""
    return train(data, "greedy", {k: params[k] for k in ("depth", "min_leaf", "leaf_cost")
                                  if k in params})


def slack(data) -> float:
    return 1e-9 * max(float(data.w.sum()), 1.0)


def truncated(tree, depth: int):
    """`tree` cut at `depth`: every node there becomes a leaf."""
    depths = tree.node_depths()
    return graft(tree, {int(k): None for k in np.flatnonzero(depths == depth)
                        if not tree.is_leaf(k)})


def leaf_weights(tree, data) -> np.ndarray:
    """The training weight reaching each leaf (computed from the rows, not the tree)."""
    reached = np.bincount(tree.apply(data.X), weights=data.w, minlength=tree.n_nodes)
    return reached[tree.feature < 0]


@pytest.fixture(scope="module")
def segment():
    return shared_dataset(SEGMENT, target="first")


@pytest.fixture(scope="module")
def loans_raw():
    return read_table(SAMPLES / "loans.csv")


# ------------------------------------------------------------------ never worse
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), binary=st.booleans(), depth=st.integers(2, 6),
       exact_depth=st.integers(1, 3), min_leaf=st.integers(1, 4),
       leaf_cost=st.sampled_from([0.0, 0.02, 0.1]))
def test_never_worse_than_greedy_on_small_tables(seed, binary, depth, exact_depth,
                                                  min_leaf, leaf_cost):
    rng = np.random.default_rng(seed)
    n, features, classes = int(rng.integers(2, 60)), int(rng.integers(1, 5)), \
        int(rng.integers(2, 4))
    X = rng.integers(0, 2 if binary else 6, (n, features))
    data = dataset_from_arrays(X, rng.integers(0, classes, n), random_weights(rng, n),
                               classes, binary=binary)
    params = {"depth": depth, "exact_depth": exact_depth, "min_leaf": min_leaf,
              "leaf_cost": leaf_cost}
    result = train(data, "hybrid", params)
    assert result.objective <= greedy_of(data, params).objective + slack(data)
    assert result.train_error == pytest.approx(result.tree.error(data.X, data.y, data.w))
    assert result.tree.depth <= depth
    assert result.lower_bound == 0 or result.optimal


def test_segment_depth_10_beats_greedy_with_auto_s_top(segment):
    """segment (7 classes, 2,310 rows): the top 3 levels are auto's proven depth-3
    tree, and the whole is never worse than greedy (here far better)."""
    result = train(segment, "hybrid", {"depth": 10, "exact_depth": 3})
    exact = train(segment, "auto", {"depth": 3})
    greedy = greedy_of(segment, {"depth": 10})
    assert result.objective <= greedy.objective
    tree = result.tree
    assert (tree.feature[0], tree.threshold[0]) == (exact.tree.feature[0],
                                                    exact.tree.threshold[0])
    assert training_error(truncated(tree, 3)) == pytest.approx(exact.train_error)
    assert exact.optimal and result.stats["certified_depth"] == 3
    assert result.stats["chosen_algorithm"] == exact.stats["chosen_algorithm"]
    assert "optimal depth-3 tree, proven by" in result.stats["reason"]
    assert not result.optimal and result.lower_bound == 0
    assert result.status == Status.FINISHED and "message" not in result.stats
    assert 3 < tree.depth <= 10


# ------------------------------------------------------------------ the parameters
def test_min_leaf_holds_in_every_leaf(loans_raw):
    data = prepare(loans_raw)
    result = train(data, "hybrid", {"depth": 8, "exact_depth": 2, "min_leaf": 15})
    assert result.tree.n_leaves > 4
    assert leaf_weights(result.tree, data).min() >= 15
    assert result.objective <= greedy_of(data, {"depth": 8, "min_leaf": 15}).objective


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), min_leaf=st.integers(2, 6))
def test_min_leaf_holds_on_small_tables(seed, min_leaf):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 80))
    X = rng.random((n, 3)).round(1)
    data = dataset_from_arrays(X, (X[:, 0] + rng.random(n) > 0.8).astype(int), np.ones(n),
                               2, binary=False)
    tree = train(data, "hybrid", {"depth": 6, "exact_depth": 2, "min_leaf": min_leaf}).tree
    if tree.n_leaves > 1:
        assert leaf_weights(tree, data).min() >= min_leaf


def test_leaf_cost_prunes(loans_raw):
    data = prepare(loans_raw)
    free = train(data, "hybrid", {"depth": 8, "exact_depth": 2})
    costly = train(data, "hybrid", {"depth": 8, "exact_depth": 2, "leaf_cost": 0.01})
    assert costly.tree.n_leaves < free.tree.n_leaves
    assert costly.leaf_penalty == pytest.approx(0.01 * data.w.sum())
    assert costly.objective <= greedy_of(data, {"depth": 8, "leaf_cost": 0.01}).objective
    assert costly.objective <= free.train_error + costly.leaf_penalty * free.tree.n_leaves


def test_parameters_and_the_whole_tree_searched_exactly(loans_raw):
    hybrid = get_solver("hybrid")
    assert hybrid.resolve({})["depth"] == 8 and hybrid.resolve({})["exact_depth"] == 3
    with pytest.raises(Exception, match="exact_depth"):
        hybrid.resolve({"exact_depth": 5})
    hybrid.resolve({"depth": 20})
    # no level below the exact part: auto's own tree and proof
    data = prepare(loans_raw)
    result = train(data, "hybrid", {"depth": 2, "exact_depth": 3})
    exact = train(data, "auto", {"depth": 2})
    assert result.optimal and result.train_error == exact.train_error
    assert result.stats["certified_depth"] == 2


# ------------------------------------------------------------------ the table's columns
def test_raw_rows_predict_as_the_features_do(loans_raw):
    """With a least leaf auto searches Blossom on 0/1 tests of the numbers; the
    grafted tree must still read the table's own columns."""
    data = prepare(loans_raw)
    result = train(data, "hybrid", {"depth": 7, "exact_depth": 2, "min_leaf": 3})
    tree = result.tree
    assert result.stats["chosen_algorithm"] == "blossom"
    assert tree.features == data.features and tree.depth > 2
    assert np.array_equal(tree.predict_frame(loans_raw.frame), tree.predict(data.X))
    assert tree.error(data.X, data.y, data.w) == result.train_error
    assert not tree.edits   # a solver's tree, not an edit by hand


# ------------------------------------------------------------------ stop and time
def test_stop_returns_the_greedy_tree_as_cancelled(segment):
    monitor = Monitor(None)
    # Stop at the first tree shown (the greedy one), before the exact search
    monitor.on_incumbent = lambda *_: monitor.cancel()
    result = train(segment, "hybrid", {"depth": 10}, monitor=monitor)
    assert result.status == Status.CANCELLED
    assert result.train_error == greedy_of(segment, {"depth": 10}).train_error
    assert result.stats["certified_depth"] == 0
    assert result.stats["message"].startswith("The run was stopped before the hybrid")


def test_stop_during_the_exact_search(segment):
    """Stop 0.3 s after the greedy tree, while Blossom searches the top 4 levels."""
    monitor = Monitor(None)
    timers = []

    def stop_soon(*_):
        if not timers:
            timers.append(threading.Timer(0.3, monitor.cancel))
            timers[0].start()

    monitor.on_incumbent = stop_soon
    result = train(segment, "hybrid", {"depth": 10, "exact_depth": 4}, monitor=monitor)
    assert result.status == Status.CANCELLED and result.tree is not None
    assert result.time_s < 10   # (the search alone takes about 13 s)
    assert result.objective <= greedy_of(segment, {"depth": 10}).objective


def test_short_time_limit_gives_a_tree_at_the_time_limit(segment):
    """Blossom needs about 13 s for the top 4 levels of segment: 2 s stop it before
    its proof, and the result says so."""
    result = train(segment, "hybrid", {"depth": 10, "exact_depth": 4}, time_limit=2.0)
    assert result.status == Status.TIME_LIMIT and result.tree is not None
    assert result.stats["certified_depth"] == 0 and result.stats["message"]
    assert "proven" not in result.stats["reason"].replace("not proven", "")
    assert result.objective <= greedy_of(segment, {"depth": 10}).objective
    assert result.incumbents[0][1] == greedy_of(segment, {"depth": 10}).objective


# ------------------------------------------------------------------ CLI and auto
def test_cli_fit_prints_the_certified_part(capsys):
    path = str(SAMPLES / "loans.csv")
    assert main(["fit", path, "--algo", "hybrid", "--depth", "10"]) in (0, None)
    out = capsys.readouterr().out
    assert "status finished" in out and "depth 10" in out
    assert "the top 3 levels are the optimal depth-3 tree, proven by ConTree" in out
    assert main(["fit", path, "--algo", "hybrid", "--depth", "10", "--json"]) in (0, None)
    summary = json.loads(capsys.readouterr().out)
    assert summary["algorithm"] == "hybrid" and summary["chosen_algorithm"] == "contree"
    assert summary["stats"]["certified_depth"] == 3 and summary["optimal"] is False
    assert summary["lower_bound"] == 0 and summary["max_depth"] == 10


def test_auto_beyond_depth_6_runs_the_hybrid(loans_raw):
    data = prepare(loans_raw)
    assert choose(data, EXACT_DEPTH_LIMIT, None)[0] != "hybrid"
    assert choose(data, EXACT_DEPTH_LIMIT + 1, None)[0] == "hybrid"
    result = train(data, "auto", {"depth": 10})
    assert result.stats["chosen_algorithm"] == "hybrid"
    assert result.stats["reason"].startswith(f"an exact search beyond depth "
                                             f"{EXACT_DEPTH_LIMIT}")
    assert "the top 3 levels are the optimal depth-3 tree" in result.stats["reason"]
    assert result.tree.depth > EXACT_DEPTH_LIMIT
    assert result.objective <= greedy_of(data, {"depth": 10}).objective


def test_graft_replaces_several_nodes_at_once(loans_raw):
    data = prepare(loans_raw)
    tree = train(data, "greedy", {"depth": 3}).tree
    left, right = int(tree.left[0]), int(tree.right[0])
    small = train(data, "greedy", {"depth": 1}).tree
    grafted = graft(tree, {left: None, right: small})
    assert grafted.n_leaves == 1 + small.n_leaves and not grafted.edits
    assert grafted.feature[2] == small.feature[0]
    assert graft(tree, {left: None}, "collapsed").edits == ("collapsed",)


def test_a_kept_greedy_tree_is_marked_through_auto_too():
    """When the greedy tree beats the hybrid on the training rows it is the answer,
    and the stats say so even after `auto` renames the algorithm it ran."""
    data = prepare(read_table(SAMPLES / "loans.csv"), PrepOptions(depth=8))
    direct = train(data, "hybrid", {"depth": 6})
    assert direct.stats["greedy_kept"] and direct.stats["chosen_algorithm"] == "greedy"
    assert direct.train_error == direct.stats["greedy_error"]
    through_auto = train(data, "auto", {"depth": 8})
    assert through_auto.stats["chosen_algorithm"] == "hybrid"
    assert bool(through_auto.stats.get("greedy_kept")) == \
        (through_auto.train_error == through_auto.stats["greedy_error"])


def test_auto_runs_contree_only_when_its_predicted_time_fits_the_limit(monkeypatch):
    """auto chose ConTree at up to three times the limit, said it "should prove" the
    tree in more time than it had, and its stopped ConTree was worse than Blossom's."""
    import engine.solvers.auto as auto

    data = dataset_from_arrays(np.round(np.random.default_rng(0).random((50, 3)), 2),
                               np.arange(50) % 2, np.ones(50), 2, binary=False)
    for predicted, limit, expected in ((9.0, 10.0, "contree"), (10.0, 10.0, "contree"),
                                       (11.0, 10.0, "blossom"), (29.0, 10.0, "blossom"),
                                       (9.0, None, "contree"), (11.0, None, "blossom")):
        monkeypatch.setattr(auto, "contree_seconds", lambda data, depth, p=predicted: p)
        algorithm, reason = choose(data, 3, limit)
        assert algorithm == expected, (predicted, limit)
        if algorithm == "blossom":
            assert f"ConTree would need about {predicted:.2g} s" in reason
