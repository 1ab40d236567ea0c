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
IN = "in"          # text column is one of a group of values (a tuple of str)
MISSING = "missing"  # the raw cell was missing
NUM = "num"        # continuous: the raw value, threshold chosen by the solver

_NEGATION = {LE: ">", EQ: "!=", IN: "not in"}
# A group is printed with its first few values, then "… and N more".
SHOWN_GROUP_VALUES = 4


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


def format_group(values: tuple[str, ...], shown: int = SHOWN_GROUP_VALUES) -> str:
    """`{AA, UA, DL, … and 12 more}`: a group of text values as every view prints it."""
    head = ", ".join(values[:shown])
    more = f", … and {len(values) - shown} more" if len(values) > shown else ""
    return "{" + head + more + "}"


@dataclass(frozen=True)
class Feature:
    """One matrix column: the raw `column`, the test `op`, and its `value`.

    `missing` says where a missing cell goes: None, it takes the column's fill value
    (imputation) and the test is evaluated on that; True, the test holds for it; False,
    it does not (missing values routed inside the search, `missing = route`).  A
    continuous feature with a route carries in `value` the number that stands for a
    missing cell in the matrix (below every observed value when True, above when
    False), so every threshold the solver picks between observed values routes it.
    """

    column: str
    op: str
    value: float | str | tuple[str, ...] | None = None
    missing: bool | None = None
    # An `IN` group of an ordered column's levels up to one of them (lowest first):
    # it reads "education <= Bachelor", and its negation "education > Bachelor".
    ordered: bool = False

    @property
    def binary(self) -> bool:
        return self.op != NUM

    def condition(self, holds: bool = True, threshold: float | None = None,
                  full: bool = False) -> str:
        """Readable test, e.g. `age <= 37.5`, `carrier in {AA, UA}` or
        `age <= 37.5 (missing: yes)`; `holds=False` gives its negation.

        For a continuous feature the tree's `threshold` is the value of the test.
        `full`: a value group with every value (what is copied), not its first few.
        """
        if self.ordered:
            text = f"{self.column} {'<=' if holds else '>'} {self.value[-1]}"
        elif self.op == NUM:
            assert threshold is not None, "a continuous feature needs the node threshold"
            text = f"{self.column} {'<=' if holds else '>'} {format_number(threshold)}"
        elif self.op == MISSING:
            return f"{self.column} is {'missing' if holds else 'present'}"
        else:
            op = self.op if holds else _NEGATION[self.op]
            value = (format_group(self.value, len(self.value) if full else
                                  SHOWN_GROUP_VALUES) if self.op == IN else
                     _format_value(self.value))
            text = f"{self.column} {op} {value}"
        if self.missing is None:
            return text
        return f"{text} (missing: {'yes' if self.missing == holds else 'no'})"

    def to_dict(self) -> dict:
        d = {"column": self.column, "op": self.op,
             "value": list(self.value) if self.op == IN else self.value}
        if self.missing is not None:
            d["missing"] = self.missing
        if self.ordered:
            d["ordered"] = True
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Feature:
        value = d.get("value")
        return cls(d["column"], d["op"], tuple(value) if d["op"] == IN else value,
                   d.get("missing"), bool(d.get("ordered", False)))
