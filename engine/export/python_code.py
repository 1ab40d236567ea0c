"""The tree as a self-contained Python module, to predict where Orchard is not installed.

The generated `predict(row)` takes the raw cells of one row (as read from a CSV file,
numbers, or None) and returns the class name, treating missing values exactly as
`Preprocessing.transform` does: a missing cell takes the training fill value, and the
`is missing` tests look at the cell itself.  It needs nothing but the standard
library, and thresholds are written with `repr(float)` so that every comparison is
the very one the model makes.
"""

from __future__ import annotations

import keyword
import math
from typing import TYPE_CHECKING

from engine.data.csv_reader import MISSING_MARKERS
from engine.data.features import EQ, IN, LE, MISSING
from engine.errors import ParameterError
from engine.export.walk import Split, Test, columns_used, fold, leaf_summary

if TYPE_CHECKING:
    from engine.model.tree import Tree


INDENT = "    "
_MODULE_NAMES = {"re", "MISSING_MARKERS"}  # public names the generated module defines

_HELPERS = '''
import re

# Cells equal to one of these (after stripping blanks) are missing, as in Orchard.
MISSING_MARKERS = frozenset({{{markers}}})
_DECIMAL_COMMA = re.compile(r"[+-]?[0-9]+,[0-9]+")


def _cell(row, name):
    """Raw cell of column `name` without surrounding blanks; None when missing."""
    try:
        value = row[name]
    except KeyError:
        raise KeyError(f"The row lacks the column {{name!r}} the model needs.") from None
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, str):
        value = value.strip()
        if value in MISSING_MARKERS:
            return None
    return value


def _number(row, name, fill):
    """(missing, value) of a numeric column; a missing cell has the value `fill`."""
    value = _cell(row, name)
    if isinstance(value, str) and _DECIMAL_COMMA.fullmatch(value):
        value = value.replace(",", ".")  # 1,5 as written with a decimal comma
    if value is not None:
        value = float(value)
    if value is None or value != value:
        return True, fill
    return False, value


def _text(row, name, fill):
    """(missing, value) of a text column; a missing cell has the value `fill`."""
    value = _cell(row, name)
    if value is None:
        return True, fill
    return False, str(value)
'''


def _float(value: float) -> str:
    """Exact Python literal of a float (repr round-trips; inf and nan have no literal)."""
    value = float(value)
    return repr(value) if math.isfinite(value) else f"float({str(value)!r})"


def _literal(value: float | str) -> str:
    return repr(value) if isinstance(value, str) else _float(value)


def _docstring(text: str) -> str:
    """`text` as a triple-quoted literal whatever characters the names hold."""
    return '"""' + text.replace("\\", "\\\\").replace('"', '\\"') + '"""'


def _condition(test: Test, variables: dict[str, int]) -> str:
    i = variables[test.column.name]
    if test.op == MISSING:
        return f"m{i}"
    if test.op == LE:
        holds = f"c{i} <= {_float(test.value)}"
    elif test.op == EQ:
        holds = f"c{i} == {_literal(test.value)}"
    elif test.op == IN:
        holds = f"c{i} in {{{', '.join(map(repr, test.value))}}}"
    else:
        raise ValueError(f"Unknown test {test.op!r}.")
    if test.routed is None:
        return holds
    return f"(m{i} or {holds})" if test.routed else f"(not m{i} and {holds})"


def _prediction(leaf) -> str:
    """A leaf's answer as Python source: its class name, or its mean (`repr`: the same
    float back, to the last bit)."""
    return repr(leaf.class_name) if leaf.mean is None else repr(leaf.mean)


def to_python(tree: Tree, function_name: str = "predict") -> str:
    """Source of a standard-library-only module defining `function_name(row)`."""
    if (not function_name.isidentifier() or keyword.iskeyword(function_name)
            or function_name.startswith("_") or function_name in _MODULE_NAMES):
        raise ParameterError(f"'{function_name}' cannot be the name of the exported "
                             "function: use letters, digits and _, not starting with _ "
                             f"nor one of {', '.join(sorted(_MODULE_NAMES))}.")
    columns = columns_used(tree)
    variables = {c.name: i for i, c in enumerate(columns)}

    def branch(s: Split, if_true: list[str], if_false: list[str]) -> list[str]:
        return ([f"if {_condition(s.test, variables)}:"]
                + [INDENT + line for line in if_true]
                + ["else:"] + [INDENT + line for line in if_false])

    body = fold(tree, lambda node: [f"return {_prediction(leaf_summary(tree, node))}"],
                branch)

    listing = "\n".join(
        f"  {c.name!r}: {'number' if c.numeric else 'text'}, "
        f"{_literal(c.fill)} when missing" for c in columns) or "  (none)"
    answer = ("a number (the mean target of the leaf's training rows)" if tree.regression
              else "class name")
    outputs = ("Regression tree: every leaf returns a float.\n" if tree.regression else
               f"Classes: {', '.join(repr(name) for name in tree.class_names)}\n")
    doc = (f"Decision tree exported from Orchard: {function_name}(row) -> {answer}.\n\n"
           + (f"{tree.edit_note}\n\n" if tree.edits else "") + outputs +
           f"Target column: {tree.prep.target!r}\n"
           f"Columns used (kind, value assumed for a missing cell):\n{listing}\n\n"
           f"`row` maps column names to raw values: text as read from a CSV file,\n"
           f"numbers, or None.  A cell is missing when it is None, NaN, blank or one\n"
           f"of MISSING_MARKERS.  Needs only the Python standard library.\n")
    markers = ", ".join(map(repr, sorted(MISSING_MARKERS)))
    lines = [_docstring(doc), _HELPERS.format(markers=markers), "",
             f"def {function_name}(row):",
             INDENT + _docstring("Class name the tree predicts for `row` "
                                 "(a mapping from column name to raw value)."),
             ]
    for c in columns:
        reader = "_number" if c.numeric else "_text"
        lines.append(f"{INDENT}m{variables[c.name]}, c{variables[c.name]} = "
                     f"{reader}(row, {c.name!r}, {_literal(c.fill)})")
    lines += [INDENT + line for line in body]
    return "\n".join(lines) + "\n"
