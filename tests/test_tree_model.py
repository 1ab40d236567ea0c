"""Tree arrays, prediction on raw tables, metrics and the JSON round trip."""

import json

import numpy as np
import pytest

from engine.data.csv_reader import parse_text, read_table
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.errors import DataError
from engine.metrics import accuracy, confusion_matrix
from engine.model.tree import Tree
from engine.training import train

from conftest import SAMPLES

TEXT = "x,colour,y\n1,red,a\n2,blue,a\n3,red,b\n4,blue,b\n5,red,b\n6,green,a\n"


def hand_tree():
    """x <= 2.5 ? a : (colour = red ? b : (empty leaf under b-majority node))."""
    data = prepare(parse_text(TEXT))
    names = [f.condition(True, 0) for f in data.features]
    fx, fred = names.index("x <= 0"), names.index("colour = red")
    tree = Tree.from_arrays(
        feature=[fx, -1, fred, -1, -1], threshold=[2.5, 0, 0.5, 0, 0],
        left=[1, -1, 3, -1, -1], right=[2, -1, 4, -1, -1],
        value=[[3, 3], [2, 0], [1, 3], [0, 0], [0, 2]], prep=data.prep)
    return data, tree


def test_structure_and_conditions():
    _, tree = hand_tree()
    assert tree.n_nodes == 5 and tree.n_leaves == 3 and tree.depth == 2
    assert tree.branch_conditions(0) == ("x <= 2.5", "x > 2.5")
    assert tree.branch_conditions(2) == ("colour != red", "colour = red")
    # the empty leaf 3 inherits its parent's majority class (b)
    assert tree.label.tolist() == [0, 0, 1, 1, 1]


def test_predict_on_features_and_raw_rows():
    data, tree = hand_tree()
    assert tree.predict(data.X).tolist() == [0, 0, 1, 1, 1, 1]
    new = parse_text("colour,x\nred,1\ngreen,9\nblue,?\n").frame
    # columns in another order; a missing x is filled with the training median (3.5)
    assert tree.predict_frame(new).tolist() == [0, 1, 1]
    assert tree.error(data.X, data.y) == 1.0
    assert tree.error(data.X, data.y, np.array([1, 1, 1, 1, 1, 5.0])) == 5.0


def test_missing_column_is_a_clear_error():
    _, tree = hand_tree()
    with pytest.raises(DataError, match="lacks the column"):
        tree.predict_frame(parse_text("x,z\n1,2\n3,4\n").frame)


def test_json_round_trip_keeps_preprocessing(tmp_path):
    raw = read_table(SAMPLES / "loans.csv")
    for binarize in ("none", "quantile:5"):
        data = prepare(raw, PrepOptions(binarize=binarize, missing="indicator"))
        tree = train(data, "greedy", {"depth": 4}).tree
        path = tmp_path / f"model-{binarize}.json"
        tree.save(path)
        again = Tree.load(path)
        assert json.loads(path.read_text())["format"] == "orchard-tree"
        for name in ("feature", "threshold", "left", "right", "value", "label"):
            assert np.array_equal(getattr(tree, name), getattr(again, name))
        assert again.features == tree.features and again.class_names == tree.class_names
        assert np.array_equal(again.predict_frame(raw.frame), tree.predict_frame(raw.frame))


@pytest.mark.parametrize("content, message", [
    ("{not json", "not valid JSON"), ("[1, 2]", "not an Orchard tree"),
    ('{"format": "other"}', "not an Orchard tree"),
])
def test_bad_model_files(tmp_path, content, message):
    path = tmp_path / "m.json"
    path.write_text(content)
    with pytest.raises(DataError, match=message):
        Tree.load(path)
    with pytest.raises(DataError, match="does not exist"):
        Tree.load(tmp_path / "absent.json")


def test_accuracy_and_confusion_matrix():
    y = np.array([0, 0, 1, 1, 2])
    p = np.array([0, 1, 1, 1, 0])
    assert accuracy(y, p) == pytest.approx(0.6)
    assert accuracy(y, p, np.array([1, 1, 1, 1, 6.0])) == pytest.approx(3 / 10)
    assert confusion_matrix(y, p, 3).tolist() == [[1, 1, 0], [0, 2, 0], [1, 0, 0]]
