"""The tree as a Graphviz DOT graph, for pictures in reports (`dot -Tsvg tree.dot`).

Every node of the tree becomes one DOT node: internal nodes show their test in the
user's words and the training weight of each class, leaves the predicted class, and
each edge the outcome of the test that leads along it.  As in the window's picture
(`walk.branches`), the edge where the node's test holds comes first and
`ordering=out` keeps it on the left, whichever child the tree's arrays call left.
Labels may hold any text the data holds (quotes, backslashes, line breaks), so they
are escaped for DOT strings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.data.features import format_number
from engine.export.walk import branches, count_text, leaf_summary

if TYPE_CHECKING:
    from engine.model.tree import Tree

# Fill colours of leaves by predicted class (Graphviz X11 names), reused cyclically.
PALETTE = ("lightblue", "lightsalmon", "palegreen", "khaki", "plum", "lightgray",
           "lightpink", "aquamarine", "wheat", "lightcyan")


def quote(text: str) -> str:
    """`text` as a DOT double-quoted string; line breaks become centred `\\n` breaks."""
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n")
    return f'"{text}"'


def _label(lines: list[str]) -> str:
    return quote("\n".join(lines))


def _counts(tree: Tree, node: int) -> str:
    if tree.regression:
        leaf = leaf_summary(tree, node)
        return (f"{count_text(tree, leaf.weight)}, mean {leaf.class_name}, rmse "
                f"{format_number(leaf.spread)}")
    weights = tree.value[node]
    parts = [f"{name} {format_number(float(w))}"
             for name, w in zip(tree.class_names, weights) if w > 0]
    total = count_text(tree, float(weights.sum()))
    return f"{total} ({', '.join(parts)})" if parts else total


def to_dot(tree: Tree) -> str:
    """DOT source: `digraph tree { ... }` with one node line per tree node."""
    lines = ["digraph tree {",
             '  node [shape=box, style="rounded,filled", fillcolor=white, '
             'fontname="Helvetica", ordering=out];',
             '  edge [fontname="Helvetica", fontsize=10];']
    if tree.edits:
        lines.insert(1, f"  // {tree.edit_note}")
    edges = []
    for node in range(tree.n_nodes):
        if tree.is_leaf(node):
            colour = PALETTE[int(tree.label[node]) % len(PALETTE)]
            text = [leaf_summary(tree, node).class_name, _counts(tree, node)]
            lines.append(f"  {node} [label={_label(text)}, fillcolor={colour}];")
            continue
        fork = branches(tree, node)
        lines.append(f"  {node} [label={_label([fork.text, _counts(tree, node)])}];")
        for holds, child in fork.arcs:   # yes first: `ordering=out` draws it on the left
            edges.append(f"  {node} -> {child} [label={quote(fork.condition(holds))}];")
    return "\n".join(lines + edges + ["}"]) + "\n"
