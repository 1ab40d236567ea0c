"""The one place where the GUI tells a tree from a decision diagram.

Both come out of `Result.tree`; the window, the view, the picture and file exports
and the Results tab ask here which drawing a model gets, which export kinds the
engine writes for it and how its size reads, instead of probing attributes.
"""

from __future__ import annotations

from engine.export import DIAGRAM_WRITERS, WRITERS
from engine.model import Diagram, Tree
from gui.diagram_scene import DiagramScene
from gui.tree_scene import ModelScene, TreeScene


def is_model(obj) -> bool:
    """True for what the GUI can draw and export (a Tree or a Diagram)."""
    return isinstance(obj, (Tree, Diagram))


def scene_for(model: Tree | Diagram, parent=None, deferred: bool = False,
              **display) -> ModelScene:
    """The scene drawing `model`: a DiagramScene or a TreeScene.  `display` is how a
    tree is shown (`collapsed`, `display_depth`, `edge_width_by_rows`: see
    `TreeScene`); a diagram has no such options and ignores them."""
    if isinstance(model, Diagram):
        return DiagramScene(model, parent, deferred)
    return TreeScene(model, parent, deferred, **display)


def export_kinds(model: Tree | Diagram) -> list[str]:
    """The `engine.export.write_export` kinds the engine writes for `model`."""
    return list(DIAGRAM_WRITERS if isinstance(model, Diagram) else WRITERS)


def kind_name(model: Tree | Diagram) -> str:
    return "Diagram" if isinstance(model, Diagram) else "Tree"


def size_text(model: Tree | Diagram) -> str:
    """The model's size in words: a diagram's depth is its layers, and its "leaves"
    are the arcs into class terminals (the leaf count when it is a tree)."""
    if isinstance(model, Diagram):
        return (f"{model.depth} layers, {model.n_internal} decision nodes, "
                f"{model.n_leaves} arcs into {len(model.terminals_used)} class terminals")
    return f"depth {model.depth}, {model.n_leaves} leaves, {model.n_nodes} nodes"
