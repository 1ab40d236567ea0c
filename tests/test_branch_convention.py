"""Issue 34: one way to show a split, whatever solver made the model.

A node shows its test in positive words (`colour = red`, `age <= 37.5`, never
`!= 1`), the child where the test holds is drawn on the LEFT under an edge labelled
"yes" and the other on the right under "no"; the Graphviz DOT and the rules list
the yes branch first.  ConTree trees (numeric thresholds: `x <= t` is the model's
left child), Blossom and DL8.5 trees on 0/1 features (the model's left child is
where the feature is 0, i.e. where the test shown does NOT hold) and ODD diagrams
must all read the same.  It is presentation only: the model's arrays and its
predictions do not change.

Which child is "yes" is worked out here from the arrays alone (`yes_child`), not
from the code under test.
"""

from __future__ import annotations

import copy
import re
import xml.etree.ElementTree as ET
from itertools import pairwise

import numpy as np
import pytest
from conftest import SAMPLES
from optimal_trees import cp4im, path_to_leaf, shared_dataset

from engine.data.csv_reader import read_table
from engine.data.dataset import PrepOptions
from engine.export.diagram import diagram_dot, diagram_rules
from engine.export.dot import to_dot
from engine.export.rules import nested_rules
from engine.featurize import prepare
from engine.model.diagram import Diagram
from engine.model.tree import Tree
from engine.solvers import solver_names
from engine.training import default_binarization, train

pytest.importorskip("PySide6")

from gui.diagram_scene import DiagramScene  # noqa: E402
from gui.image_export import save_tree_image  # noqa: E402
from gui.tree_scene import TreeScene  # noqa: E402

NEGATIVE = re.compile(r"!=| > | not in |is present")  # negated forms of a test


# --------------------------------------------------------------- reference
def yes_child(model: Tree | Diagram, node: int) -> int:
    """The child a row reaches when the node's test (in positive words) holds.

    A binary feature is 1 where its test holds, a continuous one holds `x <= t`, a
    diagram's multivariate test holds `sum <= t`; the model sends `x <= t` left.
    """
    j = int(model.feature[node])
    t = float(model.threshold[node])
    if j < 0:
        return int(model.left[node])
    x = 1.0 if model.features[j].binary else t
    return int(model.left[node] if x <= t else model.right[node])


def no_child(model: Tree | Diagram, node: int) -> int:
    left, right = int(model.left[node]), int(model.right[node])
    return right if yes_child(model, node) == left else left


def positive_test(model: Tree | Diagram, node: int) -> str:
    j = int(model.feature[node])
    return model.features[j].condition(True, float(model.threshold[node]))


def internal_nodes(tree: Tree) -> list[int]:
    return [int(n) for n in np.flatnonzero(tree.feature >= 0)]


def yes_first_preorder(tree: Tree, node: int = 0) -> list[int]:
    """Internal nodes in the order a yes-first reading lists them."""
    if tree.is_leaf(node):
        return []
    return ([node] + yes_first_preorder(tree, yes_child(tree, node))
            + yes_first_preorder(tree, no_child(tree, node)))


def first_edges(dot: str) -> dict[int, int]:
    """Each tail's first edge head in DOT source (the one drawn leftmost)."""
    first: dict[int, int] = {}
    for tail, head in re.findall(r"^  (\d+) -> (\d+) \[", dot, flags=re.M):
        first.setdefault(int(tail), int(head))
    return first


# ------------------------------------------------------------------ models
def _prepared(path, algorithm: str, **options):
    return prepare(read_table(path), PrepOptions(binarize=default_binarization(algorithm),
                                                 **options))


@pytest.fixture(scope="module")
def contree_tree():
    data = shared_dataset("contree/raisin.txt", target="first")
    return data, train(data, "contree", {"depth": 3}).tree


@pytest.fixture(scope="module")
def blossom_tree():
    data = cp4im("hepatitis")   # 0/1 features: tests read `colN = 1`
    return data, train(data, "blossom", {"depth": 3}).tree


@pytest.fixture(scope="module")
def blossom_categorical_tree():
    data = _prepared(SAMPLES / "loans.csv", "blossom")
    return data, train(data, "blossom", {"depth": 3}).tree


@pytest.fixture(scope="module")
def dl85_tree():
    data = cp4im("lymph")
    return data, train(data, "dl85", {"depth": 3}).tree


@pytest.fixture(scope="module")
def odd_diagram():
    if "odd" not in solver_names():
        pytest.skip("the 'odd' solver is not registered")
    data = prepare(read_table(SAMPLES / "play_tennis.csv"), PrepOptions(target="play"))
    diagram = train(data, "odd", {"depth": 3}, time_limit=30).tree
    assert isinstance(diagram, Diagram) and diagram.n_internal
    return data, diagram


TREES = ["contree_tree", "blossom_tree", "blossom_categorical_tree", "dl85_tree"]


# -------------------------------------------------------------------- trees
def check_tree_scene(tree: Tree, data) -> None:
    scene = TreeScene(tree)
    edges = {(e.parent_node, e.child_node): e for e in scene.edge_items}
    for node in internal_nodes(tree):
        yes, no = yes_child(tree, node), no_child(tree, node)
        assert scene.node_items[yes].pos().x() < scene.node_items[no].pos().x(), node
        assert (edges[node, yes].label, edges[node, no].label) == ("yes", "no"), node
        # the box's text (elided when long) and its tooltip, which has it in full
        title = scene.node_items[node].toolTip().splitlines()[0].removeprefix("Split: ")
        assert title == positive_test(tree, node) and not NEGATIVE.search(title), title
        assert not NEGATIVE.search(scene.node_items[node].title)
        assert edges[node, yes].toolTip() == tree.condition(node, True)
        assert edges[node, no].toolTip() == tree.condition(node, False)
    # hovering and a row's lit path follow the model's own route
    for x in data.X[:: max(1, len(data.X) // 25)]:
        path = path_to_leaf(tree, x)
        expected = [tree.condition(parent, child == yes_child(tree, parent))
                    for parent, child in pairwise(path)]
        assert scene.path_conditions(path[-1]) == expected
        scene.light_path(path)
        assert scene.highlighted_nodes() == sorted(path)
        assert {(e.parent_node, e.child_node) for e in scene.edge_items
                if e.highlighted} == set(pairwise(path))
        scene.hover_node(path[-1])
        assert scene.highlighted_nodes() == sorted(path)
    scene.hover_node(None)
    # folding keeps the yes child on the left and the node ids
    root_yes, root_no = yes_child(tree, 0), no_child(tree, 0)
    if not tree.is_leaf(root_yes):
        scene.toggle_collapsed(root_yes)
        assert scene.node_items[root_yes].hidden_count > 0
        assert scene.node_items[root_yes].pos().x() < scene.node_items[root_no].pos().x()
        scene.toggle_collapsed(root_yes)


def check_tree_exports(tree: Tree) -> None:
    dot = to_dot(tree)
    assert "ordering=out" in dot
    assert first_edges(dot) == {node: yes_child(tree, node) for node in internal_nodes(tree)}
    for node in internal_nodes(tree):
        label = re.search(rf'^  {node} \[label="([^"\n]*?)\\n', dot, flags=re.M).group(1)
        assert label == positive_test(tree, node)
    lines = nested_rules(tree).splitlines()
    ifs = [line.strip()[3:-1] for line in lines if line.lstrip().startswith("if ")]
    assert ifs == [positive_test(tree, node) for node in yes_first_preorder(tree)]
    assert not any(NEGATIVE.search(text) for text in ifs)


@pytest.mark.parametrize("name", TREES)
def test_tree_yes_left_positive_tests_and_exports_yes_first(name, request, qapp, tmp_path):
    data, tree = request.getfixturevalue(name)
    assert tree.n_nodes > 3
    before = copy.deepcopy(tree.to_dict())
    predicted = tree.predict(data.X)
    check_tree_scene(tree, data)
    check_tree_exports(tree)
    save_tree_image(tree, tmp_path / "tree.svg")
    text = " ".join(ET.parse(tmp_path / "tree.svg").getroot().itertext())
    assert positive_test(tree, 0) in text and "yes" in text and "no" in text
    # presentation only: the model and what it predicts are untouched
    assert tree.to_dict() == before
    assert np.array_equal(tree.predict(data.X), predicted)


def test_blossom_trees_really_have_their_yes_branch_on_the_models_right(blossom_tree):
    """The case the issue is about: without the convention it would be drawn right."""
    _, tree = blossom_tree
    assert all(yes_child(tree, n) == tree.right[n] for n in internal_nodes(tree))


def test_a_node_that_decides_nothing_draws_its_only_way_left(blossom_categorical_tree, qapp):
    """A binary test at a threshold outside [0, 1) sends every row one way (say, after
    an edit): that child is drawn left, "always", the other right, "never"."""
    _, solved = blossom_categorical_tree
    tree = copy.deepcopy(solved)
    tree.threshold[0] = -0.5          # 0 and 1 both go right
    scene = TreeScene(tree)
    edges = {(e.parent_node, e.child_node): e for e in scene.edge_items}
    right, left = int(tree.right[0]), int(tree.left[0])
    assert scene.node_items[right].pos().x() < scene.node_items[left].pos().x()
    assert (edges[0, right].label, edges[0, left].label) == ("always", "never")
    assert first_edges(to_dot(tree))[0] == right


# ----------------------------------------------------------------- diagram
def test_diagram_yes_left_positive_tests_and_exports_yes_first(odd_diagram, qapp, tmp_path):
    data, diagram = odd_diagram
    before = copy.deepcopy(diagram.to_dict())
    predicted = diagram.predict(data.X)
    scene = DiagramScene(diagram)
    reached = {e.parent_node for e in scene.edge_items}
    assert diagram.root in reached
    binary_right = 0
    for node in reached:
        yes, no = yes_child(diagram, node), no_child(diagram, node)
        binary_right += yes == diagram.right[node]
        out = {e.child_node: e for e in scene.edge_items if e.parent_node == node}
        if yes == no:
            continue
        assert (out[yes].label, out[no].label) == ("yes", "no")
        # the yes arc leaves the box on the left, its label left of the no label
        start = {child: e._path.elementAt(0).x for child, e in out.items()}
        assert start[yes] < start[no]
        assert out[yes]._label_rect.center().x() < out[no]._label_rect.center().x()
        title = scene.node_items[node].title
        assert not NEGATIVE.search(title), title
        if diagram.is_univariate(node):
            assert title == positive_test(diagram, node) == diagram.node_text(node)
            assert out[yes].toolTip() == positive_test(diagram, node)
    assert binary_right, "no node where the old drawing put yes on the right"
    dot = diagram_dot(diagram)
    assert "ordering=out" in dot
    assert first_edges(dot) == {n: yes_child(diagram, n) for n in range(diagram.n_internal)
                                if yes_child(diagram, n) != no_child(diagram, n)}
    rules = diagram_rules(diagram)
    for node in range(diagram.n_internal):
        if diagram.is_univariate(node) and yes_child(diagram, node) != no_child(diagram, node):
            target = yes_child(diagram, node)
            name = (f"class {diagram.class_names[diagram.label(target)]}"
                    if diagram.is_terminal(target) else f"node {target}")
            assert f"): if {positive_test(diagram, node)} -> {name} else" in rules
    save_tree_image(diagram, tmp_path / "diagram.svg")
    assert diagram.to_dict() == before
    assert np.array_equal(diagram.predict(data.X), predicted)
