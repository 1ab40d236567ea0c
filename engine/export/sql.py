"""The tree as one SQL expression, to score rows where the data already lives.

`SELECT <expression> AS predicted FROM my_table` gives each row's class without
moving data out of the database.  The expression reads the raw columns: numeric
columns are expected to hold numbers (REAL / NUMERIC), the others text, and NULL is
a missing cell.  As in `Preprocessing.transform`, a missing cell takes the training
fill value (COALESCE) and the `is missing` tests look at the cell itself (IS NULL).
It is plain standard SQL (CASE, COALESCE, IS NULL, quoted identifiers) and runs in
SQLite.

Numbers are written with 17 significant digits rather than Python's shortest
round-trip form: SQLite before 3.43 parses some short literals (0.67852962) one unit
in the last place off, while 17 digits read back exactly there as in any correct
parser, so every comparison is the one the model makes.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from engine.data.features import EQ, LE, MISSING
from engine.export.walk import Split, Test, fold, leaf_summary

if TYPE_CHECKING:
    from engine.model.tree import Tree

INDENT = "  "

HEADER = ("-- Decision tree exported from Orchard: the predicted class of a row.\n"
          "-- Numeric columns must hold numbers, the others text; NULL means missing.\n")


def identifier(name: str) -> str:
    """A column name as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def string(text: str) -> str:
    """A text value as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def number(value: float) -> str:
    """A float as a SQL literal that reads back as exactly the same double."""
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"SQL has no literal for the number {value}.")
    text = f"{value:.17g}"
    return text if any(c in text for c in ".e") else text + ".0"


def _literal(value: float | str) -> str:
    return string(value) if isinstance(value, str) else number(value)


def condition(test: Test) -> str:
    """SQL form of a node test, true exactly when the test holds on the raw row."""
    column = identifier(test.column.name)
    if test.op == MISSING:
        return f"{column} IS NULL"
    filled = f"COALESCE({column}, {_literal(test.column.fill)})"
    if test.op == LE:
        return f"{filled} <= {number(test.value)}"
    if test.op == EQ:
        return f"{filled} = {_literal(test.value)}"
    raise ValueError(f"Unknown test {test.op!r}.")


def to_sql(tree: Tree) -> str:
    """One `CASE WHEN ... END` expression (nested for subtrees) giving the class name."""
    def branch(s: Split, if_true: list[str], if_false: list[str]) -> list[str]:
        return ([f"CASE WHEN {condition(s.test)} THEN"]
                + [INDENT + line for line in if_true]
                + ["ELSE"] + [INDENT + line for line in if_false] + ["END"])

    body = fold(tree, lambda node: [string(leaf_summary(tree, node).class_name)], branch)
    return HEADER + "\n".join(body) + "\n"
