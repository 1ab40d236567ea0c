"""Exports of a decision diagram: node list and path rules, Python, SQL, Graphviz DOT.

A diagram is a DAG, so where a tree export nests its subtrees a diagram export
either lists the nodes once (rules, Python, DOT: linear in the diagram's size) or
unfolds shared nodes into every path that reaches them (the path rules and the
single SQL expression, which grow with the number of root-to-terminal paths).

Every node is read by `walk.node_split`: univariate tests reuse the tree exporters'
view of a node (`walk.split`: the raw column, its fill value, which child a row
reaches when the test holds), so they read and behave exactly as in a tree export,
and every export lists the child where the test holds first (`walk.branches`, the
order the pictures draw: yes left, no right).  A multivariate test `sum_j w_j x_j <= t`
becomes a `walk.LinearTest`: each term is the raw numeric value (filled when missing)
or, for a binary feature, 1.0 when its test holds and 0.0 otherwise, and the sum is
written left to right in feature order, the order `Diagram.projection` adds in,
so the Python and SQL exports compute the very same floating-point number.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.data.features import format_number
from engine.data.preprocessing import InputColumn
from engine.export import python_code, sql
from engine.export.dot import PALETTE, quote
from engine.export.rules import simplify
from engine.export.walk import LinearTest, Test, branches, count_text, node_split, outcomes

if TYPE_CHECKING:
    from engine.model.diagram import Diagram

MAX_PATHS = 1000  # path rules listed in the rules export; the count is always given
INDENT = "    "


def _target(diagram: Diagram, node: int) -> str:
    if diagram.is_terminal(node):
        return f"class {diagram.class_names[diagram.label(node)]}"
    return f"node {node}"


def _count(diagram: Diagram, value) -> str:
    return count_text(diagram, float(value.sum()))


# ------------------------------------------------------------------- rules
def paths(diagram: Diagram):
    """Every root-to-terminal path as (conditions, terminal), depth first."""
    def walk(node: int, conditions: list):
        if diagram.is_terminal(node):
            yield conditions, node
            return
        s = node_split(diagram, node)
        ways = outcomes(s)
        for holds, child in ways:
            yield from walk(child, conditions + [(s.test, holds)] if len(ways) == 2
                            else conditions)

    yield from walk(diagram.root, [])


def count_paths(diagram: Diagram) -> int:
    """Number of distinct root-to-terminal paths, without listing them."""
    count = {}
    for node in range(diagram.n_internal - 1, -1, -1):
        s = node_split(diagram, node)
        children = {child for _, child in outcomes(s)}
        count[node] = sum(1 if diagram.is_terminal(c) else count[c] for c in children)
    return count.get(diagram.root, 1)


def _path_text(conditions) -> str:
    """Conditions in path order, univariate ones simplified as in tree rules."""
    kept = set(simplify([(t, h) for t, h in conditions if isinstance(t, Test)]))
    texts, seen = [], set()
    for test, holds in conditions:
        if isinstance(test, Test) and ((test, holds) not in kept or (test, holds) in seen):
            continue
        seen.add((test, holds))
        texts.append(test.text(holds))
    return " AND ".join(texts) if texts else "TRUE"


def diagram_rules(diagram: Diagram) -> str:
    """The node list (one line per decision node), then one rule per path."""
    names = diagram.class_names
    title = (f"Decision diagram: {diagram.depth} layers, {diagram.n_internal} decision "
             f"nodes, classes {', '.join(names)}; training rows "
             f"{_count(diagram, diagram.value[diagram.root])}.")
    lines = [title]
    for layer, nodes in enumerate(diagram.layers):
        lines.append(f"layer {layer}:")
        for node in nodes:
            s = node_split(diagram, node)
            ways = outcomes(s)
            decision = (f"if {s.test.text(True)} -> {_target(diagram, s.if_true)} else -> "
                        f"{_target(diagram, s.if_false)}" if len(ways) == 2 else
                        f"-> {_target(diagram, ways[0][1])} (no test)")
            lines.append(f"{INDENT}node {node} ({_count(diagram, diagram.value[node])}): {decision}")
    if not diagram.n_internal:
        lines.append(f"every row -> {_target(diagram, diagram.root)}")
    total = count_paths(diagram)
    lines += ["", f"Rules, one per path from the root to a class ({total} paths):"]
    for i, (conditions, terminal) in enumerate(paths(diagram)):
        if i == MAX_PATHS:
            lines.append(f"... {total - MAX_PATHS} more paths")
            break
        lines.append(f"IF {_path_text(conditions)} THEN {names[diagram.label(terminal)]}")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ Python
def _columns(diagram: Diagram) -> list[InputColumn]:
    used = set()
    for node in range(diagram.n_internal):
        s = node_split(diagram, node)
        if isinstance(s.test, LinearTest):
            used |= {term.column.name for term in s.test.terms}
        elif len(outcomes(s)) == 2:
            used.add(s.test.column.name)
    return [c for c in diagram.prep.columns if c.name in used]


def _python_test(test, variables: dict[str, int]) -> str:
    if isinstance(test, Test):
        return python_code._condition(test, variables)
    parts = []
    for term in test.terms:
        i = variables[term.column.name]
        value = (f"c{i}" if not term.feature.binary else
                 f"(1.0 if {python_code._condition(Test(term.column, term.feature), variables)}"
                 " else 0.0)")
        parts.append(f"{python_code._float(term.weight)} * {value}")
    return f"{' + '.join(parts)} <= {python_code._float(test.threshold)}"


def diagram_python(diagram: Diagram) -> str:
    """Source of a standard-library-only module defining `predict(row)`."""
    columns = _columns(diagram)
    variables = {c.name: i for i, c in enumerate(columns)}
    names = diagram.class_names

    def go(node: int) -> str:
        return (f"return {names[diagram.label(node)]!r}" if diagram.is_terminal(node)
                else f"node = {node}")

    listing = "\n".join(f"  {c.name!r}: {'number' if c.numeric else 'text'}, "
                        f"{python_code._literal(c.fill)} when missing"
                        for c in columns) or "  (none)"
    doc = (f"Decision diagram exported from Orchard: predict(row) -> class name.\n\n"
           f"Classes: {', '.join(repr(name) for name in names)}\n"
           f"Target column: {diagram.prep.target!r}\n"
           f"Columns used (kind, value assumed for a missing cell):\n{listing}\n\n"
           f"`row` maps column names to raw values: text as read from a CSV file,\n"
           f"numbers, or None.  A cell is missing when it is None, NaN, blank or one\n"
           f"of MISSING_MARKERS.  Nodes are visited in order; each sends the row to a\n"
           f"later node or returns its class.  Needs only the Python standard library.\n")
    markers = ", ".join(map(repr, sorted(python_code.MISSING_MARKERS)))
    lines = [python_code._docstring(doc), python_code._HELPERS.format(markers=markers), "",
             "def predict(row):",
             INDENT + python_code._docstring("Class name the diagram predicts for `row` "
                                             "(a mapping from column name to raw value).")]
    for c in columns:
        reader = "_number" if c.numeric else "_text"
        lines.append(f"{INDENT}m{variables[c.name]}, c{variables[c.name]} = "
                     f"{reader}(row, {c.name!r}, {python_code._literal(c.fill)})")
    if not diagram.n_internal:
        lines.append(INDENT + go(diagram.root))
        return "\n".join(lines) + "\n"
    lines.append(f"{INDENT}node = {diagram.root}")
    for node in range(diagram.n_internal):
        s = node_split(diagram, node)
        lines.append(f"{INDENT}if node == {node}:")
        ways = outcomes(s)
        if len(ways) == 1:
            lines.append(2 * INDENT + go(ways[0][1]))
            continue
        lines += [f"{2 * INDENT}if {_python_test(s.test, variables)}:",
                  3 * INDENT + go(s.if_true), f"{2 * INDENT}else:",
                  3 * INDENT + go(s.if_false)]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------- SQL
def _sql_test(test) -> str:
    if isinstance(test, Test):
        return sql.condition(test)
    parts = []
    for term in test.terms:
        column = sql.identifier(term.column.name)
        value = (f"COALESCE({column}, {sql.number(term.column.fill)})"
                 if not term.feature.binary else
                 f"(CASE WHEN {sql.condition(Test(term.column, term.feature))} "
                 "THEN 1.0 ELSE 0.0 END)")
        parts.append(f"{sql.number(term.weight)} * {value}")
    return f"({' + '.join(parts)}) <= {sql.number(test.threshold)}"


def diagram_sql(diagram: Diagram) -> str:
    """One `CASE WHEN ... END` expression giving the class name (shared nodes unfolded)."""
    names = diagram.class_names

    def body(node: int) -> list[str]:
        if diagram.is_terminal(node):
            return [sql.string(names[diagram.label(node)])]
        s = node_split(diagram, node)
        ways = outcomes(s)
        if len(ways) == 1:
            return body(ways[0][1])
        return ([f"CASE WHEN {_sql_test(s.test)} THEN"]
                + [sql.INDENT + line for line in body(s.if_true)]
                + ["ELSE"] + [sql.INDENT + line for line in body(s.if_false)]
                + ["END"])

    header = sql.HEADER.replace("Decision tree", "Decision diagram")
    return header + "\n".join(body(diagram.root)) + "\n"


# --------------------------------------------------------------------- DOT
def diagram_dot(diagram: Diagram) -> str:
    """DOT source: decision nodes layer by layer, the class terminals at the bottom."""
    names = diagram.class_names

    def counts(node: int) -> str:
        weights = diagram.value[node]
        parts = [f"{name} {format_number(float(v))}" for name, v in zip(names, weights) if v > 0]
        total = _count(diagram, weights)
        return f"{total} ({', '.join(parts)})" if parts else total

    lines = ["digraph diagram {",
             ('  node [shape=box, style="rounded,filled", fillcolor=white, '
              'fontname="Helvetica", ordering=out];'),
             '  edge [fontname="Helvetica", fontsize=10];']
    edges = []
    for nodes in diagram.layers:
        lines.append("  { rank=same; " + " ".join(f"{k};" for k in nodes) + " }")
        for node in nodes:
            fork = branches(diagram, node)
            lines.append(f"  {node} [label={quote(fork.text + chr(10) + counts(node))}];")
            # the yes arc first (`ordering=out` keeps it on the left), a node that
            # decides nothing only its one arc
            for holds, child in fork.arcs if fork.decides else fork.arcs[:1]:
                edges.append(f"  {node} -> {child} [label={quote(fork.condition(holds))}];")
    terminals = diagram.terminals_used
    for node in terminals:
        colour = PALETTE[diagram.label(node) % len(PALETTE)]
        text = names[diagram.label(node)] + "\n" + counts(node)
        lines.append(f"  {node} [label={quote(text)}, fillcolor={colour}];")
    lines.append("  { rank=sink; " + " ".join(f"{k};" for k in terminals) + " }")
    return "\n".join(lines + edges + ["}"]) + "\n"
