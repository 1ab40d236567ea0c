"""What each column of a solver's input matrix means, in the user's own words.

Solvers see a numeric matrix; analysts want to read `age <= 37.5` or `colour = red`.
Every matrix column therefore carries a `Feature` saying which raw column it came from
and which test it encodes, so rules, exports and pictures never show `f17`.
"""

from __future__ import annotations

from dataclasses import dataclass

# Feature operators.  A *binary* feature is 1 when its test holds on the raw value;
# a *continuous* feature (`NUM`) is the raw numeric value itself, tested by the tree.
LE = "<="          # numeric column <= value
EQ = "="           # column == value (str for categorical text, float for numeric)
MISSING = "missing"  # the raw cell was missing
NUM = "num"        # continuous: the raw value, threshold chosen by the solver

_NEGATION = {LE: ">", EQ: "!="}


def format_number(value: float) -> str:
    """Short, readable form of a number for display (exports use exact `repr`)."""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}"


def format_count(value: float) -> str:
    """A row count or weight as every figure shows it: `1,234`, or `12.50` if not whole."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


def _format_value(value: float | str) -> str:
    return value if isinstance(value, str) else format_number(value)


@dataclass(frozen=True)
class Feature:
    """One matrix column: the raw `column`, the test `op`, and its `value`."""

    column: str
    op: str
    value: float | str | None = None

    @property
    def binary(self) -> bool:
        return self.op != NUM

    def condition(self, holds: bool = True, threshold: float | None = None) -> str:
        """Readable test, e.g. `age <= 37.5`; `holds=False` gives its negation.

        For a continuous feature the tree's `threshold` is the value of the test.
        """
        if self.op == NUM:
            assert threshold is not None, "a continuous feature needs the node threshold"
            return f"{self.column} {'<=' if holds else '>'} {format_number(threshold)}"
        if self.op == MISSING:
            return f"{self.column} is {'missing' if holds else 'present'}"
        op = self.op if holds else _NEGATION[self.op]
        return f"{self.column} {op} {_format_value(self.value)}"

    def to_dict(self) -> dict:
        return {"column": self.column, "op": self.op, "value": self.value}

    @classmethod
    def from_dict(cls, d: dict) -> Feature:
        return cls(d["column"], d["op"], d.get("value"))
