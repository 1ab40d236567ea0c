"""Trained models: `Tree` (every tree solver) and `Diagram` (the `odd` solver).

`load_model` reads either kind from its JSON file, dispatching on the document's
`format` field (`orchard-tree` or `orchard-diagram`), so `orchard predict` and the
GUI accept both without asking which one they hold.
"""

from __future__ import annotations

import json
from pathlib import Path

from engine.errors import DataError
from engine.model.diagram import FORMAT as DIAGRAM_FORMAT
from engine.model.diagram import Diagram
from engine.model.tree import FORMAT as TREE_FORMAT
from engine.model.tree import Tree

__all__ = ["Diagram", "Tree", "load_model", "model_from_dict"]


def model_from_dict(d: dict) -> Tree | Diagram:
    """The model a JSON document describes."""
    kinds = {TREE_FORMAT: Tree, DIAGRAM_FORMAT: Diagram}
    kind = kinds.get(d.get("format")) if isinstance(d, dict) else None
    if kind is None:
        raise DataError("This JSON document is not an Orchard model.")
    return kind.from_dict(d)


def load_model(path: str | Path) -> Tree | Diagram:
    """Tree or diagram saved at `path`, with one-sentence errors for bad files."""
    try:
        d = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"The model file '{path}' does not exist.") from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise DataError(f"The model file '{path}' is not valid JSON.") from None
    if not isinstance(d, dict) or d.get("format") not in (TREE_FORMAT, DIAGRAM_FORMAT):
        raise DataError(f"The model file '{path}' is not an Orchard tree or decision diagram.")
    return model_from_dict(d)
