"""Numbers written for people: decimal commas and thousands separators, column by column.

Spreadsheets export numbers the way their locale shows them: `0,75` (decimal comma;
quoted in a comma-delimited file), `1,000,000` or `1.000.000,5` or `1 000`
(thousands separators).  Read as they are, such columns would become categories
without a word.  A column is rewritten in plain notation (`0.75`, `1000000`) only when
every cell in it agrees with one format and at least one cell uses that format's
separator; the caller reports what was done, so nothing changes silently.

Ambiguous columns, where every separated cell looks like `1,000` (a thousand, or one
with a decimal comma?), follow the file: thousands in a comma-delimited file (where
such a cell had to be quoted on purpose), a decimal comma otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from engine.data import blocks

_SPACES = " \u00a0\u202f"   # space, no-break space, narrow no-break space


@dataclass(frozen=True)
class NumberFormat:
    name: str                 # for the note: "decimal comma", "thousands separators"
    cell: str                 # regex of a whole cell in this format
    separator: str            # regex found only in cells that use the format
    remove: str               # characters dropped when rewriting
    comma_is_decimal: bool    # rewrite "," as "."

    def rewrite(self, text: str) -> str:
        for character in self.remove:
            text = text.replace(character, "")
        return text.replace(",", ".") if self.comma_is_decimal else text


_INTEGER = r"[+-]?[0-9]+"
DECIMAL_COMMA = NumberFormat("a decimal comma", rf"{_INTEGER}(?:,[0-9]+)?", ",", "", True)
THOUSANDS_COMMA = NumberFormat(
    "thousands separators", rf"[+-]?[0-9]{{1,3}}(?:,[0-9]{{3}})+(?:\.[0-9]+)?|"
    rf"{_INTEGER}(?:\.[0-9]+)?", ",", ",", False)
THOUSANDS_DOT = NumberFormat(
    "dots between thousands and a decimal comma",
    rf"[+-]?[0-9]{{1,3}}(?:\.[0-9]{{3}})+(?:,[0-9]+)?|{_INTEGER}(?:,[0-9]+)?",
    r"\.[0-9]{3}(?:\.|,)", ".", True)
THOUSANDS_SPACE = NumberFormat(
    "spaces between thousands", rf"[+-]?[0-9]{{1,3}}(?:[{_SPACES}][0-9]{{3}})+"
    rf"(?:[.,][0-9]+)?|{_INTEGER}(?:[.,][0-9]+)?", f"[{_SPACES}]", _SPACES, True)

# A column is judged on this many of its first cells, then checked whole.
SAMPLE_CELLS = 1000


@dataclass(frozen=True)
class Rewritten:
    """One column rewritten: its position, its format and an example cell."""

    position: int
    format: NumberFormat
    example: str

    def note(self, name: str) -> str:
        return (f"Column '{name}' holds numbers written with {self.format.name} "
                f"('{self.example}' was read as {self.format.rewrite(self.example)}).")


def rewrite_number_formats(columns: list[blocks.Coded], delimiter: str,
                           skip_first_row: bool, missing: frozenset[str]
                           ) -> tuple[list[blocks.Coded], list[Rewritten]]:
    """`columns` with every column of text cells written in one of the formats above
    rewritten, and what was rewritten.  The first row does not vote when it may be a
    header (it is rewritten only if it agrees)."""
    done, out = [], []
    body = slice(1 if skip_first_row else 0, None)
    for position, column in enumerate(columns):
        found = _format_of(column, body, delimiter, missing)
        if found is not None:
            number_format, example = found
            column, = blocks.recode_columns(
                [column], lambda values, f=number_format: _rewrite_cells(values, f))
            done.append(Rewritten(position, number_format, example))
        out.append(column)
    return out, done


def _format_of(column: blocks.Coded, body: slice, delimiter: str,
               missing: frozenset[str]) -> tuple[NumberFormat, str] | None:
    """The one format every present cell of the rows `body` of `column` is written
    in, and a cell that shows it; None for plain numbers, text, or a mix."""
    first = body.start
    sample = [cell for cell in column.cells(slice(first, first + SAMPLE_CELLS * 2))
              if isinstance(cell, str) and cell not in missing][:SAMPLE_CELLS]
    # Each format's separator is first looked for in the sample as one text (no
    # separator spans a line break): plain numbers and most text have none, and
    # need no search cell by cell.
    joined = "\n".join(sample)
    comma_first = (THOUSANDS_COMMA, DECIMAL_COMMA) if delimiter == "," else \
        (DECIMAL_COMMA, THOUSANDS_COMMA)
    for number_format in (THOUSANDS_DOT, THOUSANDS_SPACE, *comma_first):
        if not re.search(number_format.separator, joined):
            continue
        separated = [cell for cell in sample if re.search(number_format.separator, cell)]
        if not separated or not all(re.fullmatch(number_format.cell, cell)
                                    for cell in sample):
            continue
        values = pd.Series(column.values[column.used(body)], dtype=object)
        if _all_agree(values, number_format, missing):
            return number_format, separated[0]
    return None


def _all_agree(values: pd.Series, number_format: NumberFormat,
               missing: frozenset[str]) -> bool:
    """Whether each of a column's different `values` is in `number_format` or missing."""
    agrees = values.str.fullmatch(number_format.cell, na=False) | values.isin(list(missing))
    return bool(agrees.all())


def _rewrite_cells(part: pd.Series, number_format: NumberFormat) -> pd.Series:
    matches = part.str.fullmatch(number_format.cell, na=False)
    return part.where(~matches, part[matches].map(number_format.rewrite))
