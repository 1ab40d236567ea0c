"""Exports of a trained tree: rules, Python, SQL, Graphviz DOT and the JSON model.

`write_export` is the one entry point the GUI uses for a tree or a decision diagram
(`DIAGRAM_WRITERS`, same kinds, from `export.diagram`); the CLI takes the same
writers from `export_writer` to write all its files at once (`files.write_all`), and
`write_predictions` writes the CSV of `orchard predict --out`.  All go through
`files`, so an export that fails (or is interrupted) never leaves a half-written file
behind, and an existing file is only replaced by a complete one.
`WRITERS` lists the tree exports (the GUI builds its export menu from it).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import ParameterError
from engine.export.diagram import (
    diagram_dot,
    diagram_python,
    diagram_rules,
    diagram_sql,
)
from engine.export.dot import to_dot
from engine.export.files import write_atomically
from engine.export.predictions import write_predictions
from engine.export.python_code import to_python
from engine.export.rules import flat_rules, nested_rules, rule_list_text
from engine.export.sql import to_sql
from engine.model.diagram import Diagram

if TYPE_CHECKING:
    from engine.model.tree import Tree

__all__ = ["DIAGRAM_WRITERS", "WRITERS", "export_writer", "flat_rules", "model_rules",
           "nested_rules", "rule_list_text", "rules_text", "to_dot", "to_python", "to_sql",
           "write_atomically", "write_export", "write_predictions"]


def _text(render: Callable[[Tree], str]) -> Callable[[Tree, Path], None]:
    def write(tree: Tree, path: Path) -> None:
        path.write_text(render(tree), encoding="utf-8")
    write.__doc__ = render.__doc__
    return write


def _rules(tree: Tree) -> str:
    """The tree as nested if/else text, then as a list of rules by support (with the
    edits made by hand first)."""
    note = f"# {tree.edit_note}\n" if tree.edits else ""
    return note + _orders(tree) + nested_rules(tree) + "\n" + rule_list_text(tree)


def _orders(tree: Tree) -> str:
    """A comment per ordered column the tree tests: its levels, lowest first (what
    "risk <= Medium" means), from the longest group its recipe holds; the highest
    level is any value above them."""
    tested = {tree.features[j].column for j in tree.feature if j >= 0}
    longest: dict[str, tuple[str, ...]] = {}
    for f in tree.features:
        if f.ordered and f.column in tested and len(f.value) > len(longest.get(f.column, ())):
            longest[f.column] = f.value
    return "".join(f"# {column}: levels {' < '.join(levels)} < any other value\n"
                   for column, levels in sorted(longest.items()))


# Export kind -> writer(tree, path); each writes one complete file at `path`.
WRITERS: dict[str, Callable[[Tree, Path], None]] = {
    "rules": _text(_rules),
    "python": _text(to_python),
    "sql": _text(to_sql),
    "dot": _text(to_dot),
    "json": lambda tree, path: tree.save(path),
}


# Export kind -> writer(diagram, path): the same kinds for decision diagrams.
DIAGRAM_WRITERS: dict[str, Callable[[Diagram, Path], None]] = {
    "rules": _text(diagram_rules),
    "python": _text(diagram_python),
    "sql": _text(diagram_sql),
    "dot": _text(diagram_dot),
    "json": lambda diagram, path: diagram.save(path),
}


def rules_text(model: Tree | Diagram) -> str:
    """The text of the `rules` export of a tree or diagram."""
    return diagram_rules(model) if isinstance(model, Diagram) else _rules(model)


def model_rules(model: Tree | Diagram) -> str:
    """The readable text the CLI prints after training: nested rules or the node list."""
    return diagram_rules(model) if isinstance(model, Diagram) else nested_rules(model)


def export_writer(tree: Tree | Diagram, kind: str) -> Callable[[Path], None]:
    """`write(path)` writing a tree or diagram as `kind` (one of WRITERS), for
    `write_atomically` or, with other files all or nothing, `files.write_all`."""
    writer = (DIAGRAM_WRITERS if isinstance(tree, Diagram) else WRITERS).get(kind)
    if writer is None:
        raise ParameterError(f"Unknown export '{kind}': use {', '.join(WRITERS)}.")
    return lambda path: writer(tree, path)


def write_export(tree: Tree | Diagram, path: str | Path, kind: str) -> None:
    """Write a tree or diagram to `path` as `kind` (one of WRITERS), atomically."""
    write_atomically(path, export_writer(tree, kind))
