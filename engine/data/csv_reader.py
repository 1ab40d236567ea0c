"""Read a delimited text file the way an analyst's file really looks, without typing it.

Data reaches Orchard from spreadsheets, R, benchmark dumps and hand edits, so nothing
about the file can be assumed: the reader works out what a person opening it would see,
namely the encoding (UTF-8 with or without a BOM, else Latin-1), the delimiter, whether
the first row is a header and whether numbers are written with a decimal comma.

It deliberately stops there. Every cell stays a string, or missing, so that deciding
column types happens in one place that can explain itself and be overridden.  Each
column is categorical (codes into its distinct strings, -1 where missing): a long
table repeats its values, and work on cells (trimming, number formats, missing
markers, parsing numbers) is done once per distinct value. Anything wrong with the file becomes a `DataError` whose message is one
sentence the user can act on.

Large files take the fast way: once the delimiter is known, text without quotes whose
lines all hold the same number of delimiters is split by Arrow's CSV reader in batches;
anything else (quotes, ragged or blank-only lines) goes through the csv module, which
also words the errors.  Both ways produce the same cells, and both report progress and
honour a stop between chunks (`progress`, see `engine.errors`).

The file is never held as one string: it is decoded into blocks of whole lines
(`_TEXT_BLOCK`), and every check and split works a block at a time, so a worker thread
reading a 200 MB file holds the GIL for milliseconds at a time and the window stays live
(`engine.data.blocks` does the same for whole columns).
"""

from __future__ import annotations

import codecs
import csv
import gc
import io
import math
import re
import stat
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

import numpy as np
import pandas as pd

from engine.data import blocks
from engine.data.number_formats import rewrite_number_formats
from engine.errors import DataError, ParameterError, Progress

# A cell equal to one of these, once stripped, is missing.
MISSING_MARKERS = frozenset(
    {"", "?", "-", "NA", "N/A", "n/a", "na", "NaN", "nan"}
    | {"null", "NULL", "None", "none"}
)

# Tab and ";" come first because a file using them may also contain commas (decimal
# commas, "Smith, John"), and whitespace comes last because names often contain spaces.
DELIMITERS = ("\t", ";", ",", " ")
_DELIMITER_NAMES = {"\t": "tabs", ";": "semicolons", ",": "commas", " ": "whitespace"}

_SNIFF_ROWS = 200
_READ_BLOCK = 1 << 20           # bytes read between two progress reports
# Characters of whole lines decoded, checked and split per call: splitting holds the
# GIL while the block's strings are made, about 4 ms for this size.
_TEXT_BLOCK = 1 << 19
# Bytes of text Arrow splits per batch (between two progress reports and stops).
_ARROW_BLOCK = 1 << 22
# Rows split by the csv module between two progress reports.
_CHUNK_ROWS = 50_000
_HEADER_SAMPLE_ROWS = 1000
_TEXT_SAMPLE_CHARS = 8192
_MAX_CONTROL_SHARE = 0.05
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_QUOTED_OR_BARE = re.compile(r'"((?:[^"]|"")*)"|(\S+)')

@dataclass(frozen=True)
class RawTable:
    """A table as written in the file: untyped cells plus how the file was read.

    The reading choices are kept so the user can see them, and correct them by reading
    again with `delimiter` or `header` forced.
    """

    frame: pd.DataFrame
    delimiter: str
    has_header: bool
    encoding: str
    decimal_comma: bool
    # What reading changed, one sentence each: renamed columns, rewritten numbers.
    notes: tuple[str, ...] = ()


def read_table(
    path: str | Path,
    *,
    delimiter: str | None = None,
    header: bool | None = None,
    progress: Progress | None = None,
) -> RawTable:
    """Read the file at `path`; `delimiter` and `header` override the detection.

    `progress(stage, fraction)` is called between blocks of work and may raise
    `Interrupted` to stop the reading.
    """
    path = Path(path)
    subject = f"File '{path}'"
    progress = progress or _no_progress
    try:
        kind = path.stat().st_mode
        if stat.S_ISDIR(kind):
            raise DataError(f"'{path}' is a folder, not a data file.")
        if not stat.S_ISREG(kind):   # a pipe may never end, a device never does
            raise DataError(f"{subject} is not a regular file (it is a pipe, a device "
                            "or a socket): save the data to a file first.")
        data = _read_bytes(path, progress, subject)
    except FileNotFoundError:
        raise DataError(f"{subject} does not exist.") from None
    except OSError as error:
        reason = error.strerror or error
        raise DataError(f"{subject} cannot be read ({reason}).") from None
    texts, encoding = _decode(data)
    del data
    return _parse(texts, delimiter, header, encoding, subject, progress)


def _no_progress(stage: str, fraction: float | None = None) -> None:
    """The progress callback of a caller that wants none."""


def _read_bytes(path: Path, progress: Progress, subject: str) -> list[bytes]:
    """The file's bytes in blocks, read so that a stop is honoured on huge files; a
    file that does not start like text is refused after its first block."""
    stage = f"reading {path.name}"
    with path.open("rb") as handle:
        size = max(path.stat().st_size, 1)
        blocks = []
        done = 0
        progress(stage, 0.0)
        while block := handle.read(_READ_BLOCK):
            if not blocks:
                _check_start(block, subject)
            blocks.append(block)
            done += len(block)
            progress(stage, min(done / size, 1.0))
    return blocks


def parse_text(
    text: str,
    *,
    delimiter: str | None = None,
    header: bool | None = None,
    encoding: str = "utf-8",
) -> RawTable:
    """Read a table from already decoded text, such as pasted data.

    `encoding` is only recorded in the result, for text that came from a file.
    """
    return _parse([text], delimiter, header, encoding, "The text", _no_progress)


def _decode(data: list[bytes]) -> tuple[list[str], str]:
    """Decode as UTF-8, which modern tools write (Excel adds a BOM), else as Latin-1.

    Bytes that are not valid UTF-8 almost always come from a Western legacy encoding,
    and Latin-1 decodes any byte, so decoding never fails here.
    """
    start = b"".join(data[:len(codecs.BOM_UTF8)])   # blocks may be a byte long
    if start.startswith(_UTF16_BOMS):   # Excel's "Unicode text"
        try:
            return _decode_lines(data, "utf-16"), "utf-16"
        except UnicodeDecodeError:
            pass
    encoding = "utf-8-sig" if start.startswith(codecs.BOM_UTF8) else "utf-8"
    try:
        return _decode_lines(data, encoding), encoding
    except UnicodeDecodeError:
        return _decode_lines(data, "latin-1"), "latin-1"


def _decode_lines(data: list[bytes], encoding: str) -> list[str]:
    """The text of `data` in blocks of about `_TEXT_BLOCK` characters, each ending just
    after a line break (a line longer than a block makes its block longer)."""
    decoder = codecs.getincrementaldecoder(encoding)()
    texts: list[str] = []
    pending: list[str] = []   # the start of a line not yet ended
    pieces = (raw[start:start + _TEXT_BLOCK] for raw in data
              for start in range(0, len(raw), _TEXT_BLOCK))
    for piece in pieces:
        text = decoder.decode(piece)
        # An old Mac file ends its lines with a lone carriage return.
        cut = text.rfind("\n") + 1 or text.rfind("\r") + 1
        if cut:
            texts.append("".join(pending) + text[:cut])
            pending = []
        pending.append(text[cut:])
    pending.append(decoder.decode(b"", True))
    return texts + ["".join(pending)]


def _parse(
    texts: list[str],
    delimiter: str | None,
    header: bool | None,
    encoding: str,
    subject: str,
    progress: Progress,
) -> RawTable:
    """Split, check and label the table whose text is `texts` (blocks of whole lines);
    `subject` names the source in messages."""
    _check_is_text(texts, subject)
    texts = [text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
             for text in texts]
    if delimiter is None:
        sample = _first_lines(texts, 4 * _SNIFF_ROWS)
        delimiter = _detect_delimiter(sample, subject)
    elif delimiter not in DELIMITERS:
        raise ParameterError(
            f"The delimiter {delimiter!r} is not supported; use ',', ';', a tab or ' '."
        )
    stage = "splitting the file into cells"
    columns = _fast_split(texts, delimiter, progress, stage)
    if columns is None:
        columns = _careful_split("".join(texts), delimiter, subject, progress, stage)
    # Cells can only have surrounding blanks if the text holds a blank that does not
    # delimit; skipping the strip otherwise keeps large numeric files fast.
    if delimiter != " " and _contains(texts, *(b for b in " \t" if b != delimiter)):
        progress("trimming blanks", 0.0)
        columns = blocks.recode_columns(columns, lambda cells: cells.str.strip())

    columns, rewritten = rewrite_number_formats(columns, delimiter, header is not False,
                                                MISSING_MARKERS)
    has_header = _looks_like_header(columns) if header is None else header

    notes = []
    if has_header:
        if len(columns[0].codes) == 1:
            raise DataError(f"{subject} has a header row but no data rows.")
        header_cells = [column.cells(slice(0, 1))[0] for column in columns]
        names = _unique_names(header_cells)
        notes += _renaming_notes(header_cells, names)
        # The header's words are no values: `recode_columns` below drops them.
        columns = [blocks.Coded(column.codes[1:], column.values) for column in columns]
    else:
        names = [f"col{position}" for position in range(1, len(columns) + 1)]
    notes += [change.note(names[change.position]) for change in rewritten]
    markers = list(MISSING_MARKERS)
    progress("marking missing cells", 0.0)
    columns = blocks.recode_columns(
        columns, lambda values: values.where(~values.isin(markers), None))
    frame = blocks.frame(columns, names)
    decimal_comma = any(change.format.comma_is_decimal for change in rewritten)
    return RawTable(frame, delimiter, has_header, encoding, decimal_comma, tuple(notes))


def _contains(texts: list[str], *characters: str) -> bool:
    """Whether any block of `texts` holds any of `characters`."""
    return any(character in text for text in texts for character in characters)


def _first_lines(texts: list[str], n: int) -> list[str]:
    """The first `n` lines of the text (fewer if it is shorter)."""
    lines: list[str] = []
    for text in texts:
        lines.extend(islice(io.StringIO(text), n - len(lines)))
        if len(lines) >= n:
            break
    return lines


def _fast_split(
    texts: list[str], delimiter: str, progress: Progress, stage: str
) -> list[blocks.Coded] | None:
    """The columns of unquoted text whose lines agree on their number of fields, split by
    Arrow (`_arrow_split`); None when the text needs the careful way.

    The check comes first: every line that is not blank must hold the same number of
    delimiters, so a ragged file gets the careful way's sentence naming its line.
    """
    if delimiter == " " or _contains(texts, '"'):
        return None
    progress(stage, 0.0)
    width = _fields_agree(texts, delimiter, progress, stage)
    if width is None:
        return None
    with _without_cyclic_gc():
        return _arrow_split(texts, delimiter, width, progress, stage)


@contextmanager
def _without_cyclic_gc():
    """Pause the cyclic garbage collector while the columns' distinct strings are
    made: they hold no cycles, and each collection would walk them all again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _arrow_split(
    texts: list[str], delimiter: str, width: int, progress: Progress, stage: str
) -> list[blocks.Coded] | None:
    """The columns of `texts` (lines of `width` fields or blank, no quotes) split by Arrow's
    CSV reader, a batch of rows at a time, each column coded as it comes
    (`blocks.Coder`); None if Arrow finds a line it cannot split as they are.

    Arrow parses on every core without holding the GIL, so the window stays live;
    the text it reads is the decoded text written back as UTF-8 (whatever the file's
    encoding, BOM or line ends were), and every cell is read as a string."""
    import pyarrow as pa
    from pyarrow import csv as arrow_csv

    data = pa.py_buffer(b"".join(text.encode("utf-8", "surrogatepass") for text in texts))
    names = [f"f{column}" for column in range(width)]
    coders = [blocks.Coder() for _ in range(width)]
    done = 0
    try:   # a line of only blanks is one field to Arrow: the careful way skips it
        reader = arrow_csv.open_csv(
            pa.BufferReader(data),
            read_options=arrow_csv.ReadOptions(column_names=names, block_size=_ARROW_BLOCK),
            parse_options=arrow_csv.ParseOptions(delimiter=delimiter, quote_char=False,
                                                 ignore_empty_lines=True),
            convert_options=arrow_csv.ConvertOptions(
                column_types={name: pa.string() for name in names},
                strings_can_be_null=False, quoted_strings_can_be_null=False))
        for batch in reader:
            done += batch.nbytes
            progress(stage, min(done / max(data.size, 1), 1.0))
            for coder, cells in zip(coders, batch.columns):
                coded = cells.dictionary_encode()
                coder.add(coded.indices.to_numpy(zero_copy_only=False),
                          coded.dictionary.to_numpy(zero_copy_only=False))
    except pa.ArrowInvalid:
        return None
    if not coders[0].rows:
        return None
    progress(stage, 1.0)
    return [coder.column() for coder in coders]


def _fields_agree(texts: list[str], delimiter: str, progress: Progress,
                  stage: str) -> int | None:
    """The number of fields of every non-blank line of `texts` when they all have the
    same number (> 1), else None.

    Delimiters are counted with numpy over each block's encoded text: both characters
    are ASCII, which UTF-8 never uses inside another character.
    """
    expected = None
    for text in texts:
        progress(stage, 0.0)
        data = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
        counts = _delimiters_per_line(data, ord(delimiter))
        if counts is None or len(counts) and (
                expected is not None and counts[0] != expected or
                (counts != counts[0]).any()):
            return None
        if len(counts):
            expected = counts[0]
    return None if expected is None else int(expected) + 1


def _delimiters_per_line(block: np.ndarray, delimiter: int) -> np.ndarray | None:
    """Delimiters on each non-blank line of `block`; None if a line with text has none."""
    ends = np.flatnonzero(block == 10)
    if len(ends) == 0 or ends[-1] != len(block) - 1:
        ends = np.append(ends, len(block))
    per_line = np.diff(np.searchsorted(np.flatnonzero(block == delimiter), ends),
                       prepend=0)
    empty = np.flatnonzero(per_line == 0)
    if len(empty) > 1000:
        return None
    starts = np.concatenate(([0], ends[:-1] + 1))
    blank = set(b" \t")
    for line in empty:   # lines without a delimiter must be blank (both ways skip them)
        if not set(block[starts[line]:ends[line]].tolist()) <= blank:
            return None
    return np.delete(per_line, empty)


def _careful_split(
    text: str, delimiter: str, subject: str, progress: Progress, stage: str
) -> list[blocks.Coded]:
    """The columns split by the csv module (quotes, blanks), with errors worded for
    the user."""
    lines = io.StringIO(text).readlines()
    numbered_rows = []
    for number, cells in _split_rows(lines, delimiter, subject):
        numbered_rows.append((number, cells))
        if len(numbered_rows) % _CHUNK_ROWS == 0:
            progress(stage, number / len(lines))
    rows = _check_rectangular(numbered_rows, delimiter, subject)
    cells = np.empty((len(rows), len(rows[0])), dtype=object)
    cells[:] = rows
    return [blocks.Coded(blocks.narrow(codes, len(values)), values) for codes, values in
            (blocks.factorize(cells[:, column]) for column in range(cells.shape[1]))]


def _check_start(data: bytes, subject: str) -> None:
    """Reject a file whose first bytes are not text, before reading the rest."""
    encoding = "utf-16" if data.startswith(_UTF16_BOMS) else "latin-1"
    _check_sample(data[:2 * _TEXT_SAMPLE_CHARS].decode(encoding, errors="replace")
                  [:_TEXT_SAMPLE_CHARS], subject)


def _check_is_text(texts: list[str], subject: str) -> None:
    """Reject binary and empty files before they cause confusing column errors."""
    _check_sample(texts[0][:_TEXT_SAMPLE_CHARS] if texts else "", subject)
    if not any(text.strip() for text in texts):
        raise DataError(f"{subject} is empty.")


def _check_sample(sample: str, subject: str) -> None:
    controls = len(_CONTROL_CHARS.findall(sample))
    if "\x00" in sample or controls > _MAX_CONTROL_SHARE * len(sample):
        raise DataError(
            f"{subject} does not look like a text table "
            "(spreadsheets must be saved as CSV first)."
        )


def _split_rows(
    lines: list[str], delimiter: str, subject: str
) -> Iterator[tuple[int, list[str]]]:
    """Yield the 1-based line where each non-blank record starts, and its cells.

    The csv module handles quoted fields holding delimiters, quotes or line breaks; the
    whitespace delimiter means runs of blanks (the CP4IM files end lines with a space),
    which csv cannot express, so those lines are split directly.
    """
    if delimiter == " ":
        for number, line in enumerate(lines, start=1):
            cells = _split_on_whitespace(line) if '"' in line else line.split()
            if cells:
                yield number, cells
        return
    reader = csv.reader(lines, delimiter=delimiter, skipinitialspace=True)
    start = 1
    try:
        for cells in reader:
            if len(cells) > 1 or (cells and cells[0].strip()):
                yield start, cells
            start = reader.line_num + 1
    except csv.Error as error:
        raise DataError(
            f"{subject} cannot be split into fields from line {start} on ({error})."
        ) from None


def _split_on_whitespace(line: str) -> list[str]:
    """Split on runs of blanks, keeping "quoted text" ("" for a quote) as one cell."""
    return [
        bare if quoted is None else quoted.replace('""', '"')
        for quoted, bare in (match.groups() for match in _QUOTED_OR_BARE.finditer(line))
    ]


def _detect_delimiter(lines: list[str], subject: str) -> str:
    """Pick the delimiter that splits the first lines into the same number of columns.

    When no delimiter is perfectly consistent, the one that splits most lines alike
    wins, so that the ragged-row check then points the user at the odd line.
    """
    best, best_share = None, 0.0
    for candidate in DELIMITERS:
        sample = islice(_split_rows(lines, candidate, subject), _SNIFF_ROWS)
        widths = Counter(len(cells) for _, cells in sample)
        width, count = widths.most_common(1)[0]
        share = count / widths.total()
        if width > 1 and share > best_share:
            best, best_share = candidate, share
    if best is None:
        raise DataError(
            f"{subject} has only one column: no tab, semicolon, comma or whitespace "
            "splits its lines into several columns."
        )
    return best


def _check_rectangular(
    numbered_rows: list[tuple[int, list[str]]], delimiter: str, subject: str
) -> list[list[str]]:
    """Return the rows once they all have the most common number of fields (> 1)."""
    widths = Counter(len(cells) for _, cells in numbered_rows)
    width = widths.most_common(1)[0][0]
    if width == 1:
        name = _DELIMITER_NAMES[delimiter]
        raise DataError(f"{subject} has only one column when split on {name}.")
    for line, cells in numbered_rows:
        if len(cells) != width:
            fields = "1 field" if len(cells) == 1 else f"{len(cells)} fields"
            raise DataError(
                f"{subject} has {fields} on line {line} where most lines have {width}."
            )
    return [cells for _, cells in numbered_rows]


def _looks_like_header(columns: list[blocks.Coded]) -> bool:
    """Tell a header row from a first data row, as a person glancing at the file would.

    Judged on the names that are there (a header may leave a name blank or repeat one,
    which `_unique_names` then mends) against the first 1,000 rows below.  The first
    row is a header when

    1. one of its words (a cell that is not a number) labels a column of numbers;
    2. it is all words that never occur again below in their own column; or
    3. it is all words, all different, and either a column below holds mostly
       numbers (nine in ten of its cells), or each word is among the rarest values
       of its column (`_is_rare`).  A header's words may also be values (a category
       named like its column, the header repeated mid-file), but seldom; a first
       data row's values are picked like the others (rare in every column only by
       chance), and text data rows often repeat a value across columns (`x,x,o`),
       which a header does not.  Words as common as the column's other values stay
       ambiguous and are read as data: `--header` says otherwise.
    """
    body = slice(1, _HEADER_SAMPLE_ROWS + 1)
    named = [(cell, [value for value in column.cells(body) if value not in MISSING_MARKERS])
             for column in columns for cell in column.cells(slice(0, 1))
             if cell.strip() and cell not in MISSING_MARKERS]
    if not named:
        return False
    if any(not _is_number(name) and values and all(map(_is_number, values))
           for name, values in named):
        return True
    names = [name for name, _ in named]
    if any(map(_is_number, names)):
        return False
    if all(name not in values for name, values in named):
        return True
    return len(set(names)) == len(names) and (
        any(_mostly_numbers(values) for _, values in named)
        or all(_is_rare(name, values) for name, values in named))


def _mostly_numbers(values: list[str]) -> bool:
    return bool(values) and sum(map(_is_number, values)) >= 0.9 * len(values)


def _is_rare(value: str, values: list[str]) -> bool:
    """Whether `value` is among the rarest values of its column: the values occurring
    at most as often as it fill at most a tenth of `values` (so a data row's value,
    picked like any other, is that rare one time in ten at most)."""
    counts = Counter(values)
    seen = counts[value]
    return 10 * sum(n for n in counts.values() if n <= seen) <= len(values)


def _is_number(cell: str) -> bool:
    """Whether `cell` reads as a finite number; "nan" and "inf" are not data values."""
    try:
        return math.isfinite(float(cell))
    except ValueError:
        return False


def _unique_names(names: list[str]) -> list[str]:
    """Name blank header cells by position and number repeats ("x", "x.2") as pandas."""
    unique: dict[str, None] = {}  # an ordered set
    for position, name in enumerate(names, start=1):
        base = name.strip() or f"col{position}"
        candidate, copy = base, 1
        while candidate in unique:
            copy += 1
            candidate = f"{base}.{copy}"
        unique[candidate] = None
    return list(unique)


def _renaming_notes(header: list[str], names: list[str]) -> list[str]:
    """One sentence per header name that had to change to be a usable, unique name."""
    notes = []
    for position, (cell, name) in enumerate(zip(header, names), start=1):
        if cell != name:
            was = f"'{cell}'" if cell.strip() else "blank"
            notes.append(f"Column {position}'s name was {was}; it is called '{name}'.")
    return notes
