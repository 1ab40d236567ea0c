"""Decision diagrams in the GUI: the scene (layout, hover over a DAG, texts), the
view, picture and file exports, the Results tab, and an `odd` run in the window."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from conftest import SAMPLES
from PySide6.QtGui import QImage
from test_gui_support import (  # noqa: F401
    isolated_settings,
    open_window,
    run_and_wait,
)

from engine.data.csv_reader import parse_text
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.model import Diagram
from engine.solvers import solver_names
from gui.diagram_scene import DiagramScene, diagram_arcs
from gui.export_dialog import FORMATS, ExportDialog
from gui.image_export import save_tree_image
from gui.models import export_kinds, scene_for, size_text
from gui.runs import RunRecord
from gui.tree_scene import EdgeItem, NodeItem
from gui.tree_view import TreeView

TABLE = """age,colour,spend,y
23,red,120,no
35,blue,340,yes
52,green,90,no
61,red,410,yes
44,blue,60,no
30,red,300,yes
58,blue,220,yes
28,green,150,no
47,green,380,yes
38,red,200,no
"""
NO, YES = 5, 6   # terminals: 5 internal nodes, then one per class


def feature(data, text: str) -> int:
    names = [f.condition(True) if f.binary else f.column for f in data.features]
    return names.index(text)


def hand_diagram() -> Diagram:
    """Three layers; node 3 has two parents; node 1 has a long arc into `yes`.

    node 0: age <= 40 ? node 1 : node 2
    node 1: 0.5*age + 2*[colour = red] <= 20 ? node 3 : yes      (multivariate)
    node 2: colour = blue (binary: at threshold 0.5 the left child, node 3, is where
            it is false) ? node 4 : node 3; drawn as `colour = blue`, yes (node 4) left
    node 3: spend <= 200 ? no : yes
    node 4: spend <= 300 ? yes : no
    """
    data = prepare(parse_text(TABLE), PrepOptions(target="y"))
    weights = np.zeros((5, data.n_features))
    weights[1, feature(data, "age")] = 0.5
    weights[1, feature(data, "colour = red")] = 2.0
    return Diagram.build(
        layer=[0, 1, 1, 2, 2],
        feature=[feature(data, "age"), -1, feature(data, "colour = blue"),
                 feature(data, "spend"), feature(data, "spend")],
        weights=weights, threshold=[40.0, 20.0, 0.5, 200.0, 300.0],
        left=[1, 3, 3, NO, YES], right=[2, YES, 4, YES, NO],
        prep=data.prep, X=data.X, y=data.y, w=data.w)


def items(scene, kind):
    return [item for item in scene.items() if isinstance(item, kind)]


# ----------------------------------------------------------------------- scene
def test_one_box_per_node_and_reached_terminal_and_one_edge_per_arc(qapp):
    diagram = hand_diagram()
    scene = scene_for(diagram)
    assert isinstance(scene, DiagramScene)
    assert sorted(item.node for item in items(scene, NodeItem)) == [0, 1, 2, 3, 4, NO, YES]
    assert scene.node_items[NO].leaf_class == 0 and scene.node_items[YES].leaf_class == 1
    assert scene.node_items[0].leaf_class is None
    edges = {(e.parent_node, e.child_node): e for e in items(scene, EdgeItem)}
    assert len(items(scene, EdgeItem)) == 10 == 2 * diagram.n_internal
    assert set(edges) == {(0, 1), (0, 2), (1, 3), (1, YES), (2, 3), (2, 4), (3, NO),
                          (3, YES), (4, YES), (4, NO)}
    assert (edges[0, 1].label, edges[0, 2].label) == ("yes", "no")
    assert edges[0, 2].toolTip() == "age > 40"
    assert edges[1, YES].toolTip() == "0.5*age + 2*[colour = red] > 20"


def test_texts_show_tests_counts_and_classes(qapp):
    diagram = hand_diagram()
    scene = DiagramScene(diagram)
    texts = scene.texts()
    for text in ("age <= 40", "0.5*age + 2*[colour = red] <= 20", "colour = blue",
                 "spend <= 200", "spend <= 300", "10 rows", "no", "yes", "Classes:"):
        assert text in texts
    yes = diagram.value[YES]
    assert f"{yes[1]:.0f} of {yes.sum():.0f} rows" in texts
    tooltip = scene.node_items[YES].toolTip()
    assert "Class terminal yes: 3 arcs end here" in tooltip and "Rows per class" in tooltip


def test_layout_rows_no_overlaps_and_long_arcs_pass_between_boxes(qapp):
    scene = DiagramScene(hand_diagram())
    box = {node: scene.node_items[node].sceneBoundingRect() for node in (0, 1, 2, 3, 4, NO, YES)}
    assert box[0].top() < box[1].top() == box[2].top() < box[3].top() == box[4].top() \
        < box[NO].top() == box[YES].top()
    rects = list(box.values())
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            assert not a.intersects(b)
    # the arc from layer 1 straight into a terminal crosses layer 2 beside its boxes
    (long_arc,) = [e for e in scene.edge_items if (e.parent_node, e.child_node) == (1, YES)]
    points = [long_arc._path.pointAtPercent(k / 200) for k in range(201)]
    for node in (3, 4):
        assert not any(box[node].adjusted(2, 2, -2, -2).contains(p) for p in points)
    assert scene.sceneRect().contains(box[NO].united(box[YES]))


def test_hover_highlights_every_path_into_a_shared_node(qapp):
    scene = DiagramScene(hand_diagram())
    hovered = []
    scene.path_hovered.connect(hovered.append)
    scene.hover_node(3)
    assert scene.highlighted_nodes() == [0, 1, 2, 3]
    lit = {(e.parent_node, e.child_node) for e in scene.edge_items if e.highlighted}
    assert lit == {(0, 1), (0, 2), (1, 3), (2, 3)}
    assert hovered == [3]
    text = scene.hover_text(3)
    assert text.startswith("2 paths: ")
    assert "age <= 40 → 0.5*age + 2*[colour = red] <= 20" in text
    assert "age > 40 → colour != blue" in text
    # a terminal: every arc on some path into it, none into the other terminal
    scene.hover_node(YES)
    assert scene.highlighted_nodes() == [0, 1, 2, 3, 4, YES]
    lit = {(e.parent_node, e.child_node) for e in scene.edge_items if e.highlighted}
    assert lit == {(0, 1), (0, 2), (1, 3), (1, YES), (2, 3), (2, 4), (3, YES), (4, YES)}
    assert scene.count_paths(YES) == 4
    assert scene.hover_text(YES).startswith("4 paths: ") and "…" in scene.hover_text(YES)
    assert scene.hover_text(YES).endswith("⇒  yes")
    assert scene.hover_text(0) == "root"
    scene.hover_node(None)
    assert scene.highlighted_nodes() == [] and not any(e.highlighted for e in scene.edge_items)


def test_deferred_build_and_a_bare_terminal(qapp):
    diagram = hand_diagram()
    scene = DiagramScene(diagram, deferred=True)
    assert not scene.complete and not items(scene, NodeItem)
    assert scene.build_step(None) and scene.complete
    assert len(items(scene, NodeItem)) == 7
    leaf = Diagram.build([], [], np.zeros((0, len(diagram.features))), [], [], [],
                         diagram.prep, np.zeros((3, len(diagram.features))),
                         np.array([1, 1, 0]), np.ones(3), root=1)
    scene = DiagramScene(leaf)
    assert diagram_arcs(leaf) == [] and not scene.edge_items
    (only,) = items(scene, NodeItem)
    assert only.node == 1 and only.title == "yes" and only.subtitle == "2 of 3 rows"
    assert scene.hover_text(1) == "root  ⇒  yes"


def test_view_shows_a_diagram_and_reports_the_hovered_paths(qtbot):
    view = TreeView()
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    diagram = hand_diagram()
    texts = []
    view.path_hovered.connect(texts.append)
    view.show_tree(diagram)
    scene = view.tree_scene()
    assert isinstance(scene, DiagramScene) and view.tree is diagram
    scene.hover_node(4)
    assert texts[-1] == "age > 40 → colour = blue"
    scene.hover_node(None)
    assert texts[-1] == ""


# --------------------------------------------------------------------- exports
def test_png_svg_and_pdf_pictures(qapp, tmp_path):
    diagram = hand_diagram()
    save_tree_image(diagram, tmp_path / "d.png")
    image = QImage(str(tmp_path / "d.png"))
    assert not image.isNull() and image.width() > 400 and image.height() > 400
    save_tree_image(diagram, tmp_path / "d.svg")
    root = ET.parse(tmp_path / "d.svg").getroot()
    text = " ".join(root.itertext())
    assert "spend <= 200" in text and "Decision diagram drawn by Orchard" in text
    save_tree_image(diagram, tmp_path / "d.pdf")
    assert (tmp_path / "d.pdf").read_bytes().startswith(b"%PDF")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.pdf", "d.png", "d.svg"]


def test_export_dialog_offers_and_writes_the_diagram_exports(qtbot, tmp_path):
    diagram = hand_diagram()
    errors = []
    dialog = ExportDialog(diagram, tmp_path, "hand", errors.append)
    qtbot.addWidget(dialog)
    offered = [f.key for f in dialog.formats()]
    assert offered == [f.key for f in FORMATS if f.image or f.key in export_kinds(diagram)]
    assert {"rules", "python", "sql", "dot", "json"} <= set(offered)
    keys = [dialog.format_list.item(i).data(256) for i in range(dialog.format_list.count())]
    dialog.format_list.setCurrentRow(keys.index("rules"))
    preview = dialog.text_preview.toPlainText()
    assert "Decision diagram" in preview and "age <= 40" in preview
    dialog.format_list.setCurrentRow(keys.index("png"))
    assert not dialog.image_preview.pixmap().isNull()
    dialog.set_checked(offered)
    written = dialog.export_checked()
    assert not errors and len(written) == len(offered)
    assert all(path.stat().st_size > 0 for path in written)
    assert isinstance(Diagram.load(tmp_path / "hand-model.json"), Diagram)


# ---------------------------------------------------------------- the window
def test_odd_run_in_the_window_draws_the_diagram(qtbot, tmp_path):
    if "odd" not in solver_names():
        pytest.skip("the 'odd' solver is not registered")
    win = open_window(qtbot, SAMPLES / "play_tennis.csv", algorithm="odd")
    win.depth_spin.setValue(3)
    win.time_spin.setValue(60)
    result = run_and_wait(qtbot, win)
    diagram = result.tree
    assert isinstance(diagram, Diagram)
    qtbot.waitUntil(lambda: win.view.tree is diagram, timeout=5000)
    scene = win.view.tree_scene()
    assert isinstance(scene, DiagramScene)
    assert len(items(scene, NodeItem)) == diagram.n_nodes
    assert len(items(scene, EdgeItem)) == len(diagram_arcs(diagram))
    assert diagram.node_text(diagram.root) in scene.texts()
    # figures speak of layers and terminal arcs, in the status, summary and history
    assert size_text(diagram) in win.result_label.text()
    summary = win.results.summary_text()
    assert "Diagram" in summary and f"{diagram.depth} layers" in summary
    assert win.results.history.cell(win.current_run, 11) == str(diagram.n_leaves)
    # exports from the window, and the run survives a session round trip
    assert win.files.export_image(tmp_path / "odd.svg") and win.files.export("python", tmp_path / "odd.py")
    assert "def predict" in (tmp_path / "odd.py").read_text()
    again = RunRecord.from_dict(win.current_run.to_dict())
    assert isinstance(again.tree, Diagram) and again.tree.n_nodes == diagram.n_nodes
