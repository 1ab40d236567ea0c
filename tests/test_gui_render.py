"""The tree picture: scene content and layout, and PNG / SVG / PDF export."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import subprocess  # noqa: E402
import sys  # noqa: E402
import xml.etree.ElementTree as ET  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from engine.data.columns import ColumnKind  # noqa: E402
from engine.data.features import EQ, NUM, Feature  # noqa: E402
from engine.data.preprocessing import InputColumn, Preprocessing  # noqa: E402
from engine.errors import OrchardError  # noqa: E402
from engine.export.walk import branches  # noqa: E402
from engine.model.tree import Tree  # noqa: E402

pytest.importorskip("PySide6")

from PySide6.QtGui import QImage  # noqa: E402

from gui.image_export import save_tree_image  # noqa: E402
from gui.tree_scene import EdgeItem, NodeItem, TreeScene, class_colour  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def hand_prep() -> Preprocessing:
    return Preprocessing(
        target="buys", class_names=["no", "yes"],
        columns=[InputColumn("age", ColumnKind.NUMERIC, 40.0),
                 InputColumn("colour", ColumnKind.CATEGORICAL, "red")],
        features=[Feature("age", NUM), Feature("colour", EQ, "red")])


def hand_tree() -> Tree:
    """age <= 37.5 ? no : (colour = red ? (age <= 60 ? yes : empty leaf) : no)."""
    return Tree.from_arrays(
        feature=[0, -1, 1, -1, 0, -1, -1], threshold=[37.5, 0, 0.5, 0, 60, 0, 0],
        left=[1, -1, 3, -1, 5, -1, -1], right=[2, -1, 4, -1, 6, -1, -1],
        value=[[25, 15], [20, 2], [5, 13], [3, 1], [2, 12], [2, 12], [0, 0]],
        prep=hand_prep())


def full_tree(depth: int) -> Tree:
    """A complete binary tree of `depth` (2^(depth+1) - 1 nodes) on the hand features."""
    n_internal = 2 ** depth - 1
    m = 2 * n_internal + 1
    rng = np.random.default_rng(1)
    feature = np.full(m, -1)
    left, right = np.full(m, -1), np.full(m, -1)
    for i in range(n_internal):
        feature[i], left[i], right[i] = i % 2, 2 * i + 1, 2 * i + 2
    value = rng.integers(0, 40, size=(m, 2)).astype(float)
    return Tree.from_arrays(feature, rng.uniform(0, 90, m), left, right, value, hand_prep())


def node_items(scene):
    return [item for item in scene.items() if isinstance(item, NodeItem)]


# ----------------------------------------------------------------------- scene
def test_scene_shows_readable_conditions_and_one_item_per_node(qapp):
    tree = hand_tree()
    scene = TreeScene(tree)
    items = node_items(scene)
    assert len(items) == tree.n_nodes
    assert sorted(item.node for item in items) == list(range(tree.n_nodes))
    texts = scene.texts()
    for text in ("age <= 37.5", "colour = red", "age <= 60", "no", "yes", "40 rows"):
        assert text in texts
    leaf = scene.node_items[5]
    assert leaf.is_leaf and leaf.title == "yes" and leaf.subtitle == "12 of 14 rows"
    assert scene.node_items[6].subtitle == "no rows"
    assert "Split: age <= 37.5" in scene.node_items[0].toolTip()
    assert "no: 20" in scene.node_items[1].toolTip()


def test_edges_say_where_the_test_holds(qapp):
    scene = TreeScene(hand_tree())
    edges = {(e.parent_node, e.child_node): e for e in scene.items()
             if isinstance(e, EdgeItem)}
    assert len(edges) == 6
    # numeric test: holds on the tree's left child; binary test: on its right child
    # (both are drawn on the left: tests/test_branch_convention.py)
    assert (edges[0, 1].label, edges[0, 2].label) == ("yes", "no")
    assert (edges[2, 3].label, edges[2, 4].label) == ("no", "yes")
    assert edges[2, 3].toolTip() == "colour != red"
    assert edges[0, 2].toolTip() == "age > 37.5"


def test_layout_is_tidy(qapp):
    tree = hand_tree()
    scene = TreeScene(tree)
    pos = {i: scene.node_items[i].pos() for i in range(tree.n_nodes)}
    leaves = sorted(pos[i].x() for i in range(tree.n_nodes) if tree.is_leaf(i))
    gaps = np.diff(leaves)
    assert np.allclose(gaps, gaps[0]) and gaps[0] > 0  # evenly spaced leaves
    for node in range(tree.n_nodes):
        if not tree.is_leaf(node):
            fork = branches(tree, node)   # the child where the test holds goes left
            l, r = pos[fork.yes], pos[fork.no]
            assert pos[node].x() == pytest.approx((l.x() + r.x()) / 2)
            assert l.y() == r.y() > pos[node].y()
            assert l.x() < r.x()
    # no two boxes overlap
    rects = [item.sceneBoundingRect() for item in node_items(scene)]
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            assert not a.intersects(b)


def test_leaves_take_their_class_colour(qapp):
    scene = TreeScene(hand_tree())
    assert scene.node_items[5].leaf_class == 1
    assert scene.node_items[6].leaf_class == 1  # empty: its parent's majority
    assert scene.node_items[1].leaf_class == 0
    assert scene.node_items[0].leaf_class is None
    assert class_colour(0) != class_colour(1)


def test_single_leaf_tree(qapp):
    tree = Tree.leaf(np.array([3.0, 1.0]), hand_prep())
    scene = TreeScene(tree)
    assert len(node_items(scene)) == 1 and "no" in scene.texts()


def test_depth_ten_tree_builds_and_renders(qapp, tmp_path):
    # Speed is measured in benchmarks/gui_latency.py, not asserted here.
    tree = full_tree(10)
    assert tree.n_nodes == 2047
    scene = TreeScene(tree)
    assert len(node_items(scene)) == 2047
    save_tree_image(tree, tmp_path / "big.png")
    image = QImage(str(tmp_path / "big.png"))
    assert not image.isNull() and max(image.width(), image.height()) <= 16000


# ---------------------------------------------------------------------- export
def test_png_export(qapp, tmp_path):
    path = tmp_path / "tree.png"
    save_tree_image(hand_tree(), path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = QImage(str(path))
    assert not image.isNull()
    rect = TreeScene(hand_tree()).sceneRect()
    assert image.width() == pytest.approx(2 * rect.width(), abs=2)
    assert image.width() / image.height() == pytest.approx(rect.width() / rect.height(),
                                                           rel=0.02)
    assert image.pixelColor(1, 1).name() == "#ffffff"  # white background
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tree.png"]  # no temp file


def test_svg_export(qapp, tmp_path):
    path = tmp_path / "tree.svg"
    save_tree_image(hand_tree(), path)
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    text = " ".join(root.itertext())
    assert "age <= 37.5" in text and "colour = red" in text


def test_pdf_export(qapp, tmp_path):
    path = tmp_path / "tree.PDF"
    save_tree_image(hand_tree(), path)
    assert path.read_bytes().startswith(b"%PDF")


def test_export_replaces_an_existing_file(qapp, tmp_path):
    path = tmp_path / "tree.png"
    path.write_bytes(b"old")
    save_tree_image(hand_tree(), path)
    assert path.read_bytes()[:4] == b"\x89PNG"
    assert len(list(tmp_path.iterdir())) == 1


@pytest.mark.parametrize("name", ["tree.jpg", "tree", "tree.png.txt"])
def test_unknown_extension_raises_and_writes_nothing(qapp, tmp_path, name):
    with pytest.raises(OrchardError, match=r"\.png, \.svg or \.pdf"):
        save_tree_image(hand_tree(), tmp_path / name)
    assert list(tmp_path.iterdir()) == []


def test_missing_folder_is_a_clear_error(qapp, tmp_path):
    with pytest.raises(OrchardError, match="does not exist"):
        save_tree_image(hand_tree(), tmp_path / "nowhere" / "tree.png")


def test_export_works_headless_without_an_application(tmp_path):
    """A fresh process with no display and no QT_QPA_PLATFORM still draws the tree."""
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[1] + '/tests')\n"
        "import os\n"
        "from test_gui_render import hand_tree\n"
        "os.environ.pop('QT_QPA_PLATFORM', None)\n"
        "from gui.image_export import save_tree_image\n"
        "save_tree_image(hand_tree(), sys.argv[2])\n"
        "print(os.environ.get('QT_QPA_PLATFORM'))\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    out = tmp_path / "tree.png"
    done = subprocess.run([sys.executable, "-c", script, str(ROOT), str(out)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    if sys.platform.startswith("linux"):
        assert done.stdout.strip().endswith("offscreen")
    assert out.read_bytes()[:4] == b"\x89PNG"
