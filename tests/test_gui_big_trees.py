"""Reading big trees (issue 17, item 7), display only: folding subtrees into "+N"
badges, a display depth, search, edge widths by rows, the overview in the corner,
and the toolbar; the hover path, clicks and pictures keep working on a folded tree.

Re-laying out a folded depth-10 tree (2047 nodes) took 15-40 ms on the development
machine (folding node 1 moves half the tree: the slowest case); it is not timed
here, only that the drawing stays correct.
"""

from itertools import pairwise

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtWidgets import QApplication
from test_gui_diagram import hand_diagram

from engine.data.csv_reader import parse_text
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.model.tree import Tree
from engine.training import train
from gui.image_export import save_tree_image
from gui.tree_scene import MAX_EDGE_WIDTH, MIN_EDGE_WIDTH, TreeScene
from gui.tree_tools import TreeToolBar
from gui.tree_view import TreeView

COLUMNS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
CLASSES = ["cat", "dog", "eel"]


def table(rows: int, seed: int = 0) -> str:
    """Numbers in six columns and a class that is mostly noise: greedy keeps splitting."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 100, size=(rows, len(COLUMNS))).round(1)
    y = np.array(CLASSES)[rng.integers(0, len(CLASSES), rows)]
    lines = [",".join([*COLUMNS, "kind"])]
    lines += [",".join(map(str, row)) + f",{c}" for row, c in zip(X, y)]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def tree() -> Tree:
    data = prepare(parse_text(table(3000)), PrepOptions(target="kind"))
    tree = train(data, "greedy", {"depth": 8}).tree
    assert tree.depth == 8 and tree.n_nodes > 100
    return tree


def full_tree(depth: int, like: Tree) -> Tree:
    """A complete tree of `depth` (2^(depth+1) - 1 nodes) on `like`'s features."""
    n_internal = 2 ** depth - 1
    m = 2 * n_internal + 1
    rng = np.random.default_rng(1)
    feature, left, right = np.full(m, -1), np.full(m, -1), np.full(m, -1)
    for i in range(n_internal):
        feature[i], left[i], right[i] = i % len(COLUMNS), 2 * i + 1, 2 * i + 2
    value = rng.integers(1, 40, size=(m, len(CLASSES))).astype(float)
    return Tree.from_arrays(feature, rng.uniform(0, 90, m), left, right, value, like.prep)


def depths(tree: Tree) -> list[int]:
    depth = [0] * tree.n_nodes
    for node in range(tree.n_nodes):
        if tree.feature[node] >= 0:
            depth[tree.left[node]] = depth[tree.right[node]] = depth[node] + 1
    return depth


def descendants(tree: Tree, node: int) -> set[int]:
    out, stack = set(), [node]
    while stack:
        at = stack.pop()
        if tree.feature[at] >= 0:
            for child in (int(tree.left[at]), int(tree.right[at])):
                out.add(child)
                stack.append(child)
    return out


def shown(scene) -> set[int]:
    return {item.node for item in scene.node_items if item is not None and item.isVisible()}


def make_view(qtbot, tree, width=900, height=600) -> TreeView:
    view = TreeView()
    qtbot.addWidget(view)
    view.resize(width, height)
    view.show()
    qtbot.waitExposed(view)
    view.show_tree(tree, wait=True)
    return view


def inner_node(tree: Tree, depth: int) -> int:
    """An internal node at `depth` with internal children (a subtree worth folding)."""
    d = depths(tree)
    return next(n for n in range(tree.n_nodes) if d[n] == depth and tree.feature[n] >= 0
                and len(descendants(tree, n)) > 4)


def assert_no_overlap(scene) -> None:
    """Shown boxes of one row never overlap: folded parts take no room."""
    rows: dict[float, list[float]] = {}
    for node in shown(scene):
        pos = scene.node_items[node].pos()
        rows.setdefault(pos.y(), []).append(pos.x())
    width = scene.node_items[0].boundingRect().width() - 12
    for xs in rows.values():
        xs.sort()
        assert all(b - a >= width for a, b in pairwise(xs))


# --------------------------------------------------------------------- folding
def test_collapse_hides_exactly_the_descendants_and_counts_them(qtbot, tree):
    view = make_view(qtbot, tree)
    scene = view.tree_scene()
    everything = shown(scene)
    assert len(everything) == tree.n_nodes
    wide = scene.sceneRect().width()
    node = inner_node(tree, 2)
    below = descendants(tree, node)

    assert view.toggle_collapsed(node)
    assert shown(scene) == everything - below
    item = scene.node_items[node]
    assert item.hidden_count == len(below) and item.isVisible()
    assert f"+{len(below)}" in scene.texts()
    assert view.collapsed_nodes() == [node]
    assert scene.sceneRect().width() < wide          # the layout closed the gap
    assert_no_overlap(scene)
    for edge in scene.edge_items:                     # no edge leads into hidden parts
        assert edge.isVisible() == (edge.parent_node not in below | {node})

    assert view.toggle_collapsed(node)                # expand: all back
    assert shown(scene) == everything
    assert item.hidden_count == 0 and view.collapsed_nodes() == []
    assert all(edge.isVisible() for edge in scene.edge_items)
    assert scene.sceneRect().width() == pytest.approx(wide)
    assert_no_overlap(scene)
    leaf = next(n for n in range(tree.n_nodes) if tree.feature[n] < 0)
    assert not view.toggle_collapsed(leaf)            # a leaf has nothing to fold


def test_nested_folds_and_expand_all(qtbot, tree):
    view = make_view(qtbot, tree)
    scene = view.tree_scene()
    outer = inner_node(tree, 1)
    inner = next(n for n in descendants(tree, outer) if tree.feature[n] >= 0)
    view.toggle_collapsed(inner)
    view.toggle_collapsed(outer)
    assert shown(scene) == set(range(tree.n_nodes)) - descendants(tree, outer)
    view.toggle_collapsed(outer)   # the inner fold is still there
    assert shown(scene) == set(range(tree.n_nodes)) - descendants(tree, inner)
    view.expand_all()
    assert shown(scene) == set(range(tree.n_nodes))


def test_display_depth_shows_exactly_the_nodes_down_to_it(qtbot, tree):
    view = make_view(qtbot, tree)
    scene = view.tree_scene()
    d = depths(tree)
    for depth in (1, 3, 5):
        view.set_display_depth(depth)
        assert shown(scene) == {n for n in range(tree.n_nodes) if d[n] <= depth}
        for n in shown(scene):
            folded = d[n] == depth and tree.feature[n] >= 0
            assert scene.node_items[n].hidden_count == (len(descendants(tree, n))
                                                        if folded else 0)
        assert_no_overlap(scene)
    # unfolding one node at the limit opens one more level
    node = next(n for n in shown(scene) if scene.node_items[n].hidden_count)
    view.toggle_collapsed(node)
    children = {int(tree.left[node]), int(tree.right[node])}
    assert children <= shown(scene)
    assert not descendants(tree, node) - children & shown(scene)
    view.set_display_depth(None)
    assert shown(scene) == set(range(tree.n_nodes))


def test_display_depth_is_kept_for_the_next_tree_built_in_slices(qtbot, tree):
    view = make_view(qtbot, tree)
    view.set_display_depth(3)
    big = full_tree(10, tree)
    view.show_tree(big)
    assert view.is_building                           # 2047 nodes: built in slices
    qtbot.waitUntil(lambda: view.tree is big, timeout=20_000)
    scene = view.tree_scene()
    d = depths(big)
    assert shown(scene) == {n for n in range(big.n_nodes) if d[n] <= 3}
    assert scene.node_items[7].hidden_count == len(descendants(big, 7))
    view.toggle_collapsed(7)
    assert len(shown(scene)) == 15 + 2
    view.expand_all()
    assert len(shown(scene)) == big.n_nodes
    assert_no_overlap(scene)


# ---------------------------------------------------------------------- search
def test_find_a_column_and_a_class_and_reveal_them(qtbot, tree):
    view = make_view(qtbot, tree)
    scene = view.tree_scene()
    view.set_display_depth(1)
    testing = {n for n in range(tree.n_nodes)
               if tree.feature[n] >= 0 and tree.features[tree.feature[n]].column == "charlie"}
    assert testing
    found = view.find("CHARLIE")
    assert set(found) == testing
    assert testing <= shown(scene)                    # folded ancestors were unfolded
    assert {n for n in range(tree.n_nodes) if scene.node_items[n].matched} == testing
    assert view.match_index == 0
    assert view.visible_scene_rect().contains(
        scene.node_items[found[0]].sceneBoundingRect().center())

    dogs = {n for n in range(tree.n_nodes)
            if tree.feature[n] < 0 and tree.class_names[tree.label[n]] == "dog"}
    found = view.find("dog")
    assert set(found) == dogs and dogs <= shown(scene)
    assert not any(scene.node_items[n].matched for n in testing)
    seen = [view.find_next() for _ in range(len(found))]
    assert seen == found[1:] + found[:1]               # cycles back to the first
    assert view.visible_scene_rect().contains(
        scene.node_items[found[0]].sceneBoundingRect().center())

    assert view.find("zebra") == [] and view.matches == []
    assert view.find_next() is None


# ------------------------------------------------------------------ edge width
def test_edge_widths_grow_with_the_rows_they_carry(qtbot, tree):
    view = make_view(qtbot, tree)
    scene = view.tree_scene()
    total = tree.value[0].sum()
    pairs = sorted((tree.value[e.child_node].sum() / total, e.width) for e in scene.edge_items)
    widths = [w for _, w in pairs]
    assert widths == sorted(widths)
    assert MIN_EDGE_WIDTH <= widths[0] and widths[-1] <= MAX_EDGE_WIDTH
    assert widths[-1] > 3 * widths[0]
    view.set_edge_width_by_rows(False)
    assert len({e.width for e in scene.edge_items}) == 1
    view.set_edge_width_by_rows(True)
    assert sorted(e.width for e in scene.edge_items) == widths


# --------------------------------------------------------------------- minimap
def test_minimap_shows_when_zoomed_in_and_moves_the_view(qtbot, tree):
    view = make_view(qtbot, tree)
    view.fit()
    assert view.minimap.isHidden()
    view.zoom_by(8)
    assert view.minimap.isVisible()
    minimap = view.minimap
    pos = QPoint(round(minimap.width() * 0.3), minimap.height() // 2)
    target = minimap.scene_point(QPointF(pos))
    qtbot.mouseClick(minimap, Qt.LeftButton, pos=pos)
    centre = view.mapToScene(view.viewport().rect().center())
    tolerance = 2 / view.zoom + 1
    assert abs(centre.x() - target.x()) < tolerance
    assert abs(centre.y() - target.y()) < tolerance
    view.fit()
    assert minimap.isHidden()


# -------------------------------------------------------------- hover, clicks
def test_hover_path_and_clicks_on_a_folded_tree(qtbot, tree):
    view = make_view(qtbot, tree)
    scene = view.tree_scene()
    node = inner_node(tree, 2)
    view.toggle_collapsed(node)
    texts = []
    view.path_hovered.connect(texts.append)
    scene.hover_node(node)
    assert scene.highlighted_nodes() == scene.path_to(node)
    assert texts[-1] == " → ".join(scene.path_conditions(node))
    leaf = max(shown(scene), key=lambda n: (tree.feature[n] < 0, n))
    scene.hover_node(leaf)
    assert scene.highlighted_nodes() == sorted(scene.path_to(leaf))

    # node_at finds the folded node; a plain click reports it, Alt+click unfolds it
    view.show_node(node)
    item = scene.node_items[node]
    point = view.mapFromScene(item.sceneBoundingRect().center())
    assert view.node_at(point) == node
    clicked = []
    view.node_clicked.connect(clicked.append)
    qtbot.mouseClick(view.viewport(), Qt.LeftButton, pos=point)
    assert clicked == []   # not yet: it may be the first click of a double-click
    qtbot.waitUntil(lambda: clicked == [node])
    assert view.collapsed_nodes() == [node]
    qtbot.mouseClick(view.viewport(), Qt.LeftButton, Qt.AltModifier, pos=point)
    assert view.collapsed_nodes() == [] and clicked == [node]
    qtbot.mouseClick(view.viewport(), Qt.LeftButton, Qt.AltModifier,
                     pos=view.mapFromScene(item.sceneBoundingRect().center()))
    assert view.collapsed_nodes() == [node]
    badge = item.mapToScene(item._badge.center())     # a click on "+N" unfolds too
    qtbot.mouseClick(view.viewport(), Qt.LeftButton, pos=view.mapFromScene(badge))
    assert view.collapsed_nodes() == [] and clicked == [node]
    point = view.mapFromScene(item.sceneBoundingRect().center())
    qtbot.mouseClick(view.viewport(), Qt.LeftButton, pos=point)
    qtbot.mouseDClick(view.viewport(), Qt.LeftButton, pos=point)
    qtbot.wait(2 * QApplication.doubleClickInterval())
    assert clicked == [node]   # a double-click zooms; it shows no node's rows


def test_a_picture_draws_the_tree_as_displayed(qtbot, tree, tmp_path):
    view = make_view(qtbot, tree)
    node = inner_node(tree, 1)
    view.toggle_collapsed(node)
    view.zoom_by(8)                                   # the overview is on screen
    path = tmp_path / "folded.svg"
    save_tree_image(tree, path, **view.display_options())
    svg = path.read_text(encoding="utf-8")
    assert f"+{len(descendants(tree, node))}" in svg
    scene = TreeScene(tree, collapsed=view.collapsed_nodes())
    assert shown(scene) == shown(view.tree_scene())
    assert scene.sceneRect() == view.tree_scene().sceneRect()  # no room for an overview


# --------------------------------------------------------------------- toolbar
def test_toolbar_drives_the_view_and_steps_aside_for_diagrams(qtbot, tree):
    view = make_view(qtbot, tree)
    bar = TreeToolBar(view)
    qtbot.addWidget(bar)
    assert bar.isEnabled() and bar.depth_spin.maximum() == tree.depth
    assert bar.depth_spin.text() == "all"
    bar.depth_spin.setValue(2)
    assert view.display_depth == 2
    assert shown(view.tree_scene()) == {n for n, d in enumerate(depths(tree)) if d <= 2}

    count = len(view.find("charlie"))
    view.find("")
    bar.search_edit.setText("charlie")
    qtbot.keyClick(bar.search_edit, Qt.Key_Return)
    assert bar.found_label.text() == f"1 of {count}"
    qtbot.keyClick(bar.search_edit, Qt.Key_Return)
    assert bar.found_label.text() == f"2 of {count}"
    bar.search_edit.setText("zebra")
    qtbot.keyClick(bar.search_edit, Qt.Key_Return)
    assert bar.found_label.text() == "no node matches 'zebra'"
    bar.search_edit.clear()
    assert bar.found_label.text() == ""

    bar.width_box.setChecked(False)
    assert not view.edge_width_by_rows
    bar.expand_button.click()
    assert view.display_depth is None and bar.depth_spin.text() == "all"
    assert len(shown(view.tree_scene())) == tree.n_nodes

    view.show_tree(hand_diagram(), wait=True)
    assert not bar.isEnabled()
    assert view.find("age") == [] and not view.toggle_collapsed(0)
    view.show_tree(tree, wait=True)
    assert bar.isEnabled()
