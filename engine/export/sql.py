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

SQL has no literal for infinity, yet a column holding `inf` cells can give a
threshold or a fill value of ±inf.  Such tests are written without one: `x <= +inf`
holds for every number, `x <= -inf` only for -inf, which is the one double below
-1.7976931348623157e308, and a missing cell's side is decided here, from the fill
value, instead of through COALESCE.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from engine.data.features import EQ, IN, LE, MISSING
from engine.errors import DataError
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
    if not math.isfinite(value):   # condition() avoids it; a diagram's weighted sum cannot
        raise DataError(f"SQL has no literal for the number {value}, which this model "
                        "needs: export it as Python or rules instead.")
    text = f"{value:.17g}"
    return text if any(c in text for c in ".e") else text + ".0"


def _literal(value: float | str) -> str:
    return string(value) if isinstance(value, str) else number(value)


def condition(test: Test) -> str:
    """SQL form of a node test, true exactly when the test holds on the raw row."""
    column = identifier(test.column.name)
    if test.op == MISSING:
        return f"{column} IS NULL"
    if test.op not in (LE, EQ, IN):
        raise ValueError(f"Unknown test {test.op!r}.")
    fill, value = test.column.fill, test.value
    if test.op == IN:
        holds = f"{column} IN ({', '.join(map(string, value))})"
    elif test.routed is None and _finite(fill) and _finite(value):
        sign = "<=" if test.op == LE else "="
        return f"COALESCE({column}, {_literal(fill)}) {sign} {_literal(value)}"
    else:
        holds = _compare(column, test.op, value)
    return (f"({column} IS NULL OR {holds})" if test.missing_holds()
            else f"({column} IS NOT NULL AND {holds})")


_LARGEST = number(1.7976931348623157e308)


def _finite(value: float | str) -> bool:
    return isinstance(value, str) or math.isfinite(value)


def _compare(column: str, op: str, value: float | str) -> str:
    """`column <= value` / `column = value` for a present cell, ±inf written as
    comparisons with the largest finite double."""
    if _finite(value):
        return f"{column} {'<=' if op == LE else '='} {_literal(value)}"
    if value > 0:
        return f"{column} = {column}" if op == LE else f"{column} > {_LARGEST}"
    return f"{column} < -{_LARGEST}"


def to_sql(tree: Tree) -> str:
    """One `CASE WHEN ... END` expression (nested for subtrees) giving the class name
    (a regression's: the leaf's mean)."""
    def branch(s: Split, if_true: list[str], if_false: list[str]) -> list[str]:
        return ([f"CASE WHEN {condition(s.test)} THEN"]
                + [INDENT + line for line in if_true]
                + ["ELSE"] + [INDENT + line for line in if_false] + ["END"])

    def leaf(node: int) -> list[str]:
        summary = leaf_summary(tree, node)
        return [string(summary.class_name) if summary.mean is None
                else _literal(summary.mean)]

    body = fold(tree, leaf, branch)
    note = f"-- {tree.edit_note}\n" if tree.edits else ""
    header = HEADER.replace("the predicted class", "the predicted number (the mean "
                            "target of the leaf's training rows)") if tree.regression \
        else HEADER
    return header + note + "\n".join(body) + "\n"
