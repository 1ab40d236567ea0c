"""Editing a tree by hand (engine.editing): collapsing a subtree, re-solving one.

Checked against the data itself: the errors the edits derive from the leaves' class
weights equal the errors counted on the rows, collapsing changes exactly the rows
under the node, and a re-solved subtree has the brute-force optimal error of the
node's rows at the depth left, never more than before.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from optimal_trees import dataset_from_arrays, exhaustive, random_binary_case

from engine.data.csv_reader import parse_text
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.editing import (
    collapse,
    node_depth,
    node_text,
    resolve_subtree,
    subtree_nodes,
    training_confusion,
    training_error,
    training_matrix,
)
from engine.errors import DataError, ParameterError
from engine.export import WRITERS
from engine.metrics import confusion_matrix
from engine.model import model_from_dict
from engine.model.schema import validate
from engine.training import train

SOLVERS = ("greedy", "blossom", "dl85", "contree", "sat-depth")


def random_case(seed, binary=True):
    X, y, w, K = random_binary_case(seed)
    if not binary:
        rng = np.random.default_rng(seed)
        X = np.round(rng.random(X.shape) * 4, 1) + X
    return dataset_from_arrays(X, y, w, K, binary=binary)


def assert_well_formed(tree):
    """What the model schema requires of the node graph: every node but the root has
    one parent, which comes before it; leaves have no children."""
    parents = np.zeros(tree.n_nodes, dtype=int)
    for k in range(tree.n_nodes):
        if tree.is_leaf(k):
            assert tree.left[k] == tree.right[k] == -1
        else:
            for child in (tree.left[k], tree.right[k]):
                assert child > k
                parents[child] += 1
    assert parents[0] == 0 and (parents[1:] == 1).all()


def internal_nodes(tree):
    return [k for k in range(tree.n_nodes) if not tree.is_leaf(k)]


@pytest.mark.parametrize("algorithm", SOLVERS)
@pytest.mark.parametrize("seed", range(8))
def test_every_solvers_node_weights_are_its_rows(algorithm, seed):
    """What pruning relies on: each node's `value` is the class weight of the rows
    that reach it, so errors follow from the leaves without the data."""
    data = random_case(seed, binary=algorithm != "contree")
    params = {"depth": 3}
    if algorithm == "sat-depth":
        params = {}
        keep = np.ones(data.n_rows, bool)
        seen = {}
        for i, row in enumerate(map(bytes, data.X)):   # sat needs consistent rows
            keep[i] = seen.setdefault(row, data.y[i]) == data.y[i]
        data = dataset_from_arrays(data.X[keep], data.y[keep], data.w[keep], data.n_classes)
    tree = train(data, algorithm, params).tree
    for node in range(tree.n_nodes):
        rows = tree.reaches(data.X, node)
        np.testing.assert_allclose(tree.value[node], np.bincount(
            data.y[rows], weights=data.w[rows], minlength=data.n_classes), atol=1e-9)
    assert training_error(tree) == pytest.approx(tree.error(data.X, data.y, data.w))
    np.testing.assert_allclose(training_confusion(tree), confusion_matrix(
        data.y, tree.predict(data.X), data.n_classes, data.w), atol=1e-9)


@pytest.mark.parametrize("seed", range(12))
def test_collapse_changes_only_the_rows_under_the_node(seed):
    data = random_case(seed, binary=seed % 2 == 0)
    tree = train(data, "greedy", {"depth": 4}).tree
    before = tree.predict(data.X)
    for node in internal_nodes(tree):
        edited = collapse(tree, node)
        under = tree.reaches(data.X, node)
        after = edited.predict(data.X)
        assert (after[under] == tree.label[node]).all()
        assert (after[~under] == before[~under]).all()
        assert edited.n_leaves == tree.n_leaves - sum(
            tree.is_leaf(k) for k in subtree_nodes(tree, node)) + 1
        assert training_error(edited) == pytest.approx(edited.error(data.X, data.y, data.w))
        assert training_error(edited) >= training_error(tree) - 1e-9
        assert_well_formed(edited)
        note = (f"collapsed {node_text(tree, node)} into a leaf "
                f"({tree.class_names[tree.label[node]]})")
        assert edited.edits == (note,)
    assert tree.edits == ()   # the input is never changed
    np.testing.assert_array_equal(tree.predict(data.X), before)


def test_collapse_refuses_a_leaf_and_a_missing_node():
    data = random_case(3)
    tree = train(data, "greedy", {"depth": 2}).tree
    leaf = int(np.flatnonzero(tree.feature < 0)[0])
    with pytest.raises(ParameterError, match="already a leaf"):
        collapse(tree, leaf)
    with pytest.raises(ParameterError, match="no node 99"):
        collapse(tree, 99)


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("seed", range(10))
def test_a_resolved_subtree_is_optimal_for_its_rows_and_never_worse(seed, binary):
    data = random_case(seed + 100, binary=binary)
    limit = 3
    tree = train(data, "greedy", {"depth": limit}).tree
    for node in range(tree.n_nodes):
        if node_depth(tree, node) >= limit:
            continue
        out = resolve_subtree(tree, data, node, limit)
        rows = np.flatnonzero(tree.reaches(data.X, node))
        best = exhaustive(data.X[rows], data.y[rows], data.w[rows], data.n_classes,
                          limit - node_depth(tree, node))
        assert out.rows == len(rows)
        assert out.new_error <= out.old_error + 1e-9
        assert out.new_error == pytest.approx(min(best, out.old_error), abs=1e-9)
        edited = out.tree
        assert edited.error(data.X, data.y, data.w) == pytest.approx(
            training_error(tree) - out.old_error + out.new_error, abs=1e-9)
        assert training_error(edited) == pytest.approx(edited.error(data.X, data.y, data.w))
        assert edited.depth <= limit
        assert_well_formed(edited)
        if out.improved:
            assert edited.edits[-1].startswith(f"re-solved {node_text(tree, node)} (")
        else:
            assert edited is tree


def test_resolving_the_root_gives_the_optimal_tree():
    data = random_case(7)
    greedy = train(data, "greedy", {"depth": 3}).tree
    out = resolve_subtree(greedy, data, 0, 3)
    assert out.new_error == pytest.approx(train(data, "blossom", {"depth": 3}).train_error)


def test_a_node_at_the_depth_limit_has_nothing_to_resolve():
    data = random_case(5)
    tree = train(data, "greedy", {"depth": 2}).tree
    deep = max(range(tree.n_nodes), key=lambda k: node_depth(tree, k))
    with pytest.raises(ParameterError, match="no depth is left"):
        resolve_subtree(tree, data, deep, node_depth(tree, deep))


CSV = "\n".join(["age,income,class"] + [
    f"{a},{i},{'yes' if (a > 40) != (i > 55) else 'no'}"
    for a, i in zip(range(20, 80, 2), [30, 70, 45, 90, 50, 60] * 5)]) + "\n"


def test_an_auto_tree_on_guided_features_resolves_on_the_continuous_data():
    """`auto` trains Blossom on 0/1 tests it derived from the numbers; the window holds
    the numbers, and the tree's features are computed from them."""
    data = prepare(parse_text(CSV), PrepOptions())
    result = train(data, "blossom", {"depth": 2}) if data.is_binary else \
        train(data, "auto", {"depth": 2})
    tree = result.tree
    X = training_matrix(tree, data)
    assert tree.error(X, data.y, data.w) == pytest.approx(result.train_error)
    out = resolve_subtree(tree, data, 0, 3)   # one more level than the run had
    assert out.new_error <= out.old_error
    assert out.tree.error(X, data.y, data.w) == pytest.approx(out.new_error)
    validate(out.tree.to_dict())


def test_other_rows_are_refused_in_one_sentence():
    data = random_case(11)
    tree = train(data, "greedy", {"depth": 2}).tree
    fewer = dataset_from_arrays(data.X[1:], data.y[1:], data.w[1:], data.n_classes)
    with pytest.raises(DataError, match="not the rows this tree was trained on"):
        resolve_subtree(tree, fewer, 0, 2)


def test_an_edited_tree_says_so_in_json_and_every_export(tmp_path):
    data = prepare(parse_text(CSV), PrepOptions())
    tree = train(data, "greedy", {"depth": 3}).tree
    edited = collapse(tree, internal_nodes(tree)[-1])
    validate(edited.to_dict())
    again = model_from_dict(json.loads(json.dumps(edited.to_dict())))
    assert again.edits == edited.edits
    np.testing.assert_array_equal(again.predict(data.X), edited.predict(data.X))
    for kind, write in WRITERS.items():
        path = tmp_path / f"tree.{kind}"
        write(edited, path)
        assert "collapsed the node" in path.read_text(), kind
        write(tree, path)
        assert "Edited by hand" not in path.read_text(), kind


def test_a_loaded_edit_note_cannot_break_out_of_an_export_comment(tmp_path):
    data = prepare(parse_text(CSV), PrepOptions())
    document = train(data, "greedy", {"depth": 2}).tree.to_dict()
    document["edits"] = ["x\nDROP TABLE rows; --"]
    tree = model_from_dict(document)
    path = tmp_path / "tree.sql"
    WRITERS["sql"](tree, path)
    assert all(line.startswith("--") or "DROP" not in line
               for line in path.read_text().splitlines())
    document["edits"] = "not a list"
    with pytest.raises(DataError, match="'edits' is not a list"):
        model_from_dict(document)


def test_a_re_solved_subtree_keeps_the_runs_least_leaf_and_cost_per_leaf():
    """The run's min_leaf holds in the new subtree, and its cost per leaf is the same
    weight per leaf: the subtree is the optimum of that objective on the node's rows."""
    rng = np.random.default_rng(3)
    for trial in range(12):
        n = int(rng.integers(40, 90))
        X = rng.integers(0, 6, (n, 3)).astype(float)
        y = ((X[:, 0] > 2) ^ (X[:, 1] > 3)).astype(np.int64)
        y[rng.random(n) < 0.2] ^= 1
        data = dataset_from_arrays(X, y, np.ones(n), 2, binary=False)
        params = {"depth": 3, "min_leaf": (1, 4, 8)[trial % 3],
                  "leaf_cost": (0.0, 0.02)[trial % 2]}
        tree = train(data, "greedy", params).tree
        if tree.is_leaf(0):
            continue
        node = int(tree.left[0])
        out = resolve_subtree(tree, data, node, 3, params=params)
        rows = tree.reaches(data.X, node)
        penalty = params["leaf_cost"] * n
        expected = exhaustive(data.X[rows], y[rows], np.ones(int(rows.sum())), 2, 2,
                              params["min_leaf"] if params["min_leaf"] > 1 else 0,
                              leaf_penalty=penalty)
        assert out.new_objective == pytest.approx(min(expected, out.old_objective)), trial
        leaves = out.tree.value[out.tree.feature < 0].sum(axis=1)
        assert leaves.min() >= params["min_leaf"], trial


def test_a_stopped_re_solve_says_stop_not_the_time_limit():
    """After Stop the sentence said the subtree "was not beaten within the time"."""
    from engine.editing import Resolved
    from engine.solvers.protocol import Result, Status

    data = random_case(3)
    tree = train(data, "greedy", {"depth": 2}).tree
    for status, words in ((Status.CANCELLED, "was not beaten before Stop"),
                          (Status.TIME_LIMIT, "was not beaten within the time limit")):
        out = Resolved(tree, 0, "the root", 2, 10, 3.0, 3.0,
                       Result(tree, 3.0, 0.0, False, status, 1.0), 3.0, 3.0)
        assert words in out.summary() and "the tree is unchanged" in out.summary()
