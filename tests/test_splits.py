"""Splitting a node by hand (engine.splits) and optimising below it (engine.editing).

Checked against brute force on small random data: every candidate's class weights
and worth are those of its split counted on the node's rows, the best candidate's
error is the least any single split of the node gives, surrogates' agreements are
counted on the rows, the split tree's errors follow from its leaves, and optimising
below a split gives each child the brute-force optimal subtree.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from optimal_trees import exhaustive
from test_editing import random_case

from engine.data.csv_reader import parse_text
from engine.data.dataset import PrepOptions
from engine.editing import node_depth, optimise_below, training_error, training_matrix
from engine.errors import ParameterError
from engine.featurize import prepare
from engine.splits import rank_splits, split_node, typed_split
from engine.training import train


def leaf_error(y, w, K):
    counts = np.bincount(y, weights=w, minlength=K)
    return counts.sum() - counts.max() if len(y) else 0.0


def split_errors(X, y, w, K, least=1.0):
    """Every (feature, threshold) split of the rows with both sides weighing at least
    `least`, with its error, counted row by row."""
    out = {}
    for j in range(X.shape[1]):
        values = np.unique(X[:, j])
        for a, b in zip(values[:-1], values[1:]):
            t = (float(a) + float(b)) / 2
            left = X[:, j] <= t
            if w[left].sum() >= least and w[~left].sum() >= least:
                out[j, t] = leaf_error(y[left], w[left], K) + leaf_error(y[~left], w[~left], K)
    return out


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("seed", range(12))
def test_candidates_are_every_split_counted_on_the_nodes_rows(seed, binary):
    data = random_case(seed + 300, binary=binary)
    K = len(data.class_names)
    tree = train(data, "greedy", {"depth": 2}).tree
    for node in range(tree.n_nodes):
        rows = tree.reaches(data.X, node)
        X, y, w = data.X[rows], data.y[rows], data.w[rows]
        found = rank_splits(tree, data, node)
        parent = leaf_error(y, w, K)
        assert found.error == pytest.approx(parent)
        assert found.rows == pytest.approx(w.sum())
        brute = split_errors(X.astype(float), y, w, K)
        assert bool(found.candidates) == bool(brute)
        if not brute:
            continue
        best = min(brute.values())
        # the first candidate has the least error of any split of the node
        assert parent - found.candidates[0].worth == pytest.approx(best, abs=1e-9)
        assert [c.worth for c in found.candidates] == sorted(
            (c.worth for c in found.candidates), reverse=True)
        for c in found.candidates:
            side = X[:, c.feature] <= c.threshold
            holds = side if not binary else ~side
            assert c.holds == pytest.approx(np.bincount(y[holds], weights=w[holds],
                                                        minlength=K))
            assert parent - c.worth == pytest.approx(
                leaf_error(y[holds], w[holds], K) + leaf_error(y[~holds], w[~holds], K))


@pytest.mark.parametrize("seed", range(8))
def test_a_least_leaf_and_a_cost_per_leaf_bound_the_candidates(seed):
    data = random_case(seed + 400, binary=False)
    K = len(data.class_names)
    tree = train(data, "greedy", {"depth": 1}).tree
    least = 3
    found = rank_splits(tree, data, 0, {"min_leaf": least, "leaf_cost": 0.05})
    penalty = 0.05 * data.w.sum()
    brute = split_errors(data.X, data.y, data.w, K, least)
    assert bool(found.candidates) == bool(brute)
    for c in found.candidates:
        assert min(c.rows) >= least
    if brute:
        assert found.error - found.candidates[0].worth - penalty == pytest.approx(
            min(brute.values()), abs=1e-9)


@pytest.mark.parametrize("seed", range(10))
def test_surrogates_agree_with_the_nodes_split_as_counted(seed):
    data = random_case(seed + 500, binary=seed % 2 == 0)
    tree = train(data, "greedy", {"depth": 1}).tree
    if tree.is_leaf(0):
        return
    found = rank_splits(tree, data, 0, surrogates=50)
    goes_left = data.X[:, tree.feature[0]] <= tree.threshold[0]
    w = data.w
    majority = max(w[goes_left].sum(), w[~goes_left].sum()) / w.sum()
    for s in found.surrogates:
        left = data.X[:, s.feature] <= s.threshold
        same = w[left == goes_left].sum() / w.sum()
        assert s.agreement == pytest.approx(max(same, 1 - same))
        assert s.agreement > majority
        assert s.feature != tree.feature[0]
    if data.features[0].binary:
        return
    # a continuous surrogate's threshold agrees best among that feature's thresholds
    for s in found.surrogates:
        values = np.unique(data.X[:, s.feature])
        best = max(max(a, 1 - a) for a in (
            w[(data.X[:, s.feature] <= (u + v) / 2) == goes_left].sum() / w.sum()
            for u, v in zip(values[:-1], values[1:])))
        assert s.agreement == pytest.approx(best)


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("seed", range(8))
def test_a_split_by_hand_puts_the_candidates_weights_in_two_new_leaves(seed, binary):
    data = random_case(seed + 600, binary=binary)
    tree = train(data, "greedy", {"depth": 1}).tree
    for node in [k for k in range(tree.n_nodes) if tree.is_leaf(k)] + [0]:
        found = rank_splits(tree, data, node)
        if not found.candidates:
            continue
        best = found.candidates[0]
        edited = split_node(tree, data, node, best)
        X = training_matrix(edited, data)
        assert training_error(edited) == pytest.approx(edited.error(X, data.y, data.w))
        assert training_error(edited, node) == pytest.approx(found.error - best.worth)
        assert edited.edits[-1].startswith(f"{found.name}: ")
        assert f"'{best.condition}'" in edited.edits[-1]
        assert (edited.value[0] == tree.value[0]).all()


def test_a_typed_threshold_splits_a_continuous_column_where_the_user_says():
    data = prepare(parse_text("age,colour,class\n20,red,a\n30,red,a\n40,blue,b\n"
                              "50,blue,b\n60,red,b\n70,blue,a\n"), PrepOptions())
    tree = train(data, "greedy", {"depth": 1}).tree
    age = next(j for j, f in enumerate(data.features) if f.column == "age")
    typed = typed_split(tree, data, 0, age, 45.0)
    assert typed.condition == "age <= 45"
    assert typed.rows == (3.0, 3.0)
    edited = split_node(tree, data, 0, typed)
    rows = pd.DataFrame({"age": ["44", "46"], "colour": ["red", "red"]})
    assert edited.predict_frame(rows).tolist() == [0, 1]
    colour = next(j for j, f in enumerate(data.features) if f.column == "colour")
    with pytest.raises(ParameterError, match="takes no threshold"):
        typed_split(tree, data, 0, colour, 1.0)
    with pytest.raises(ParameterError, match="finite"):
        typed_split(tree, data, 0, age, float("nan"))


def test_a_feature_the_tree_did_not_test_joins_its_recipe_and_predicts_raw_rows():
    text = "size,shape,class\n" + "".join(
        f"{s},{h},{'yes' if (s > 3) != (h == 'round') else 'no'}\n"
        for s in range(8) for h in ("round", "square", "flat"))
    raw = parse_text(text)
    data = prepare(raw, PrepOptions(binarize="quantile:4"))
    # a tree trained on the size column alone: its recipe lacks the shape column
    shape = {j for j, f in enumerate(data.features) if f.column == "shape"}
    sizes = [j for j in range(len(data.features)) if j not in shape]
    only = replace(data, X=data.X[:, sizes], prep=data.prep.without_features(shape))
    tree = train(only, "greedy", {"depth": 1}).tree
    assert "shape" not in {c.name for c in tree.prep.columns}
    leaf = next(k for k in range(tree.n_nodes) if tree.is_leaf(k))
    found = rank_splits(tree, data, leaf)
    assert found.candidates[0].worth > 0
    best = found.candidates[0]
    assert data.features[best.feature].column == "shape"
    edited = split_node(tree, data, leaf, best)
    assert edited.features == tree.features + [data.features[best.feature]]
    assert {c.name for c in edited.prep.columns} == {"size", "shape"}
    assert tree.features == only.features   # the tree split is a new one, not changed
    X = training_matrix(edited, data)
    assert (edited.predict_frame(raw.frame) == edited.predict(X)).all()
    assert training_error(edited) == pytest.approx(edited.error(X, data.y, data.w))


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("seed", range(8))
def test_optimising_below_a_split_gives_each_child_its_optimal_subtree(seed, binary):
    data = random_case(seed + 700, binary=binary)
    limit = 3
    tree = train(data, "greedy", {"depth": 1}).tree
    if tree.is_leaf(0):
        return
    out = optimise_below(tree, data, 0, limit)
    expected = 0.0
    for child in (tree.left[0], tree.right[0]):
        rows = tree.reaches(data.X, int(child))
        expected += min(exhaustive(data.X[rows], data.y[rows], data.w[rows],
                                   len(data.class_names), limit - node_depth(tree, child)),
                        training_error(tree, int(child)))
    assert out.new_error == pytest.approx(expected, abs=1e-9)
    assert out.new_error <= out.old_error + 1e-9
    edited = out.tree
    assert edited.feature[0] == tree.feature[0] and edited.threshold[0] == tree.threshold[0]
    assert training_error(edited) == pytest.approx(edited.error(data.X, data.y, data.w))
    assert edited.depth <= limit
    if out.improved:
        assert edited.edits[-1].startswith("optimised below the root")
        assert out.summary().startswith("Optimised below the root")
    else:
        assert edited is tree and "are optimal" in out.summary()


def test_optimising_below_a_leaf_is_refused_in_one_sentence():
    data = random_case(3)
    tree = train(data, "greedy", {"depth": 1}).tree
    leaf = next(k for k in range(tree.n_nodes) if tree.is_leaf(k))
    with pytest.raises(ParameterError, match="is a leaf: split it first"):
        optimise_below(tree, data, leaf, 3)


@pytest.mark.parametrize("missing", ["route", "impute"])
def test_a_typed_group_of_values_splits_where_the_user_says(missing):
    """Issue 46: type a value group: its rows counted like any candidate's, the tree
    split by it predicts raw rows as its training rows say, and a subtree below it can
    still be optimised (the data's tests of each value rebuild the group)."""
    from engine.editing import optimise_below
    from engine.splits import typed_group

    rng = np.random.default_rng(9)
    colours = rng.choice(["red", "blue", "green", "grey"], 300)
    cells = [None if rng.random() < 0.05 else c for c in colours]
    text = "colour,size,class\n" + "".join(
        f"{c or ''},{s},{'yes' if c in ('red', 'grey') or s > 7 else 'no'}\n"
        for c, s in zip(cells, rng.integers(0, 10, 300)))
    raw = parse_text(text)
    data = prepare(raw, PrepOptions(missing=missing))
    tree = train(data, "greedy", {"depth": 1}).tree
    typed = typed_group(tree, data, 0, "colour", ["red", "grey"])
    frame = raw.frame
    inside = frame["colour"].isin(["red", "grey"]).to_numpy().copy()
    if missing == "impute":   # a missing cell takes the column's fill
        fill = next(c for c in tree.prep.columns if c.name == "colour").fill
        inside |= frame["colour"].isna().to_numpy() & (fill in ("red", "grey"))
    y = data.y
    assert typed.holds == pytest.approx(np.bincount(y[inside], minlength=2))
    assert typed.condition.startswith("colour in {")
    edited = split_node(tree, data, 0, typed)
    X = training_matrix(edited, data)
    assert training_error(edited) == pytest.approx(edited.error(X, data.y, data.w))
    assert (edited.predict_frame(frame) == edited.predict(X)).all()
    out = optimise_below(edited, data, 0, 3)
    assert out.new_error <= out.old_error
    with pytest.raises(ParameterError, match="at least one value"):
        typed_group(tree, data, 0, "colour", [])
    with pytest.raises(ParameterError, match="no test of a single value"):
        typed_group(tree, data, 0, "size", ["3"])
