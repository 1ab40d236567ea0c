"""Tests for reading delimited text files as analysts really write them."""

from pathlib import Path

import pandas as pd
import pytest

from engine.data.csv_reader import MISSING_MARKERS, RawTable, parse_text, read_table
from engine.errors import DataError, ParameterError

DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
SHARED_FILES = (
    sorted(
        path
        for folder in ("cp4im", "contree", "inferdt", "odd")
        for path in (DATASETS / folder).glob("*")
        if path.is_file()
    )
    if DATASETS.is_dir()
    else []
)


def write(tmp_path: Path, content: str | bytes, name: str = "data.csv") -> Path:
    path = tmp_path / name
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    return path


def cells(table: RawTable) -> list[list[str | None]]:
    frame = table.frame.astype(object)
    return frame.where(frame.notna(), None).to_numpy().tolist()


def column(table: RawTable, name: str) -> list[str | None]:
    cells = table.frame[name].astype(object)
    return cells.where(cells.notna(), None).tolist()


def assert_untyped(table: RawTable) -> None:
    """Cells are strings or missing, each column coded into its distinct strings."""
    assert all(isinstance(dtype, pd.CategoricalDtype) and dtype.categories.dtype == object
               for dtype in table.frame.dtypes)
    values = [cell for row in cells(table) for cell in row]
    assert all(cell is None or isinstance(cell, str) for cell in values)


def assert_one_sentence(error: pytest.ExceptionInfo, *fragments: str) -> None:
    message = str(error.value)
    assert message.endswith(".")
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message


# Delimiters


def test_comma_file_with_header(tmp_path):
    table = read_table(write(tmp_path, "a,b,y\n1,2.5,0\n3,4,1\n"))
    assert table.delimiter == ","
    assert table.has_header
    assert table.encoding == "utf-8"
    assert not table.decimal_comma
    assert list(table.frame.columns) == ["a", "b", "y"]
    assert cells(table) == [["1", "2.5", "0"], ["3", "4", "1"]]
    assert list(table.frame.index) == [0, 1]
    assert_untyped(table)


def test_read_table_accepts_a_string_path(tmp_path):
    table = read_table(str(write(tmp_path, "a,b\n1,2\n")))
    assert cells(table) == [["1", "2"]]


def test_semicolon_file(tmp_path):
    table = read_table(write(tmp_path, "a;b;c\n1;2;x\n3;4;y\n"))
    assert table.delimiter == ";"
    assert cells(table) == [["1", "2", "x"], ["3", "4", "y"]]
    assert not table.decimal_comma


def test_tab_file_keeps_empty_cells_and_spaces_inside_names(tmp_path):
    text = "first name\tage\tcity\nAnn Lee\t\tParis\nBo\t3\tRome\n"
    table = read_table(write(tmp_path, text))
    assert table.delimiter == "\t"
    assert list(table.frame.columns) == ["first name", "age", "city"]
    assert cells(table) == [["Ann Lee", None, "Paris"], ["Bo", "3", "Rome"]]


def test_whitespace_file_with_trailing_spaces_like_cp4im(tmp_path):
    table = read_table(write(tmp_path, "1 0 1 0 1 \n0 1 1 0 0 \n1 1 0 0 1 \n", "d.txt"))
    assert table.delimiter == " "
    assert not table.has_header
    assert list(table.frame.columns) == ["col1", "col2", "col3", "col4", "col5"]
    assert cells(table)[0] == ["1", "0", "1", "0", "1"]
    assert_untyped(table)


def test_whitespace_means_any_run_of_blanks_and_keeps_quoted_text():
    table = parse_text('  x   y\t "z w"\n 1\t\t2   "New York"\n3 4 "say ""hi"""\n')
    assert table.delimiter == " "
    assert list(table.frame.columns) == ["x", "y", "z w"]
    assert cells(table) == [["1", "2", "New York"], ["3", "4", 'say "hi"']]


def test_comma_wins_over_whitespace_when_names_contain_spaces():
    table = parse_text("full name,score\nAnn Lee,3\nBo Ek,4\n")
    assert table.delimiter == ","
    assert cells(table) == [["Ann Lee", "3"], ["Bo Ek", "4"]]


def test_forced_delimiter_overrides_detection():
    table = parse_text("a;b,c\n1;2,3\n4;5,6\n", delimiter=",")
    assert table.delimiter == ","
    assert list(table.frame.columns) == ["a;b", "c"]
    assert cells(table) == [["1;2", "3"], ["4;5", "6"]]


def test_unknown_delimiter_is_a_parameter_error():
    with pytest.raises(ParameterError) as error:
        parse_text("a|b\n1|2\n", delimiter="|")
    assert_one_sentence(error, "'|'")


# Header


def test_header_labelling_a_numeric_column_is_detected():
    table = parse_text("0,1,2,y\n1.5,2,3,0\n")
    assert table.has_header
    assert list(table.frame.columns) == ["0", "1", "2", "y"]
    assert cells(table) == [["1.5", "2", "3", "0"]]


def test_header_of_words_not_repeated_below_is_detected():
    table = parse_text("colour,size\nred,small\nblue,large\nred,large\n")
    assert table.has_header
    assert list(table.frame.columns) == ["colour", "size"]
    assert len(table.frame) == 3


def test_first_row_of_words_repeated_below_is_data():
    table = parse_text("red,small\nblue,large\nred,large\n")
    assert not table.has_header
    assert list(table.frame.columns) == ["col1", "col2"]
    assert len(table.frame) == 3


def test_numeric_first_row_is_data():
    table = parse_text("1,2,3\n4,5,6\n")
    assert not table.has_header
    assert cells(table) == [["1", "2", "3"], ["4", "5", "6"]]


@pytest.mark.parametrize(
    "text, names, renamed",
    [
        ("a,a,y\n1,2,0\n3,4,1\n", ["a", "a.2", "y"], ["Column 2's name was 'a'"]),
        ("a,,y\n1,2,0\n3,4,1\n", ["a", "col2", "y"], ["Column 2's name was blank"]),
        ("a,NA,y\n1,2,0\n3,4,1\n", ["a", "NA", "y"], []),
        ("a,  ,y\n1,2,0\n3,4,1\n", ["a", "col2", "y"], ["Column 2's name was blank"]),
        ("x,x,x\n1,2,0\n3,4,1\n", ["x", "x.2", "x.3"], ["Column 2's", "Column 3's"]),
    ],
)
def test_header_with_repeated_or_blank_names_is_still_a_header(text, names, renamed):
    """Issue 19: such a header used to be read as a data row (81 rows of 80)."""
    table = parse_text(text)
    assert table.has_header and list(table.frame.columns) == names
    assert len(table.frame) == 2
    assert [note[:len(start)] for note, start in zip(table.notes, renamed)] == renamed


@pytest.mark.parametrize("text", ["?,2,0\n1,2,0\n3,4,1\n", ",5,yes\n1,2,no\n3,4,yes\n",
                                  "1,2,0\n1,2,0\n3,4,1\n"])
def test_a_first_data_row_with_missing_cells_is_still_data(text):
    assert not parse_text(text).has_header


def test_nan_is_missing_and_inf_is_not_a_number_for_the_header():
    table = parse_text("a,y\nnan,0\n1.5,1\n")
    assert table.has_header  # "a" labels a column of numbers once "nan" is missing
    assert cells(table) == [[None, "0"], ["1.5", "1"]]
    assert parse_text("a,b\n1,b\n2,c\n").has_header
    assert not parse_text("a,b\ninf,b\n2,c\n").has_header


def _rows(n: int, every: int, word: str, others: tuple[str, ...]) -> list[str]:
    """A column of n cells: `word` every `every` rows, else one of `others` in turn."""
    return [word if k % every == 0 else others[k % len(others)] for k in range(n)]


@pytest.mark.parametrize("first, second", [
    (_rows(80, 20, "a", ("x", "y", "z")), _rows(80, 25, "b", ("p", "q"))),  # text
    (_rows(80, 20, "a", tuple(map(str, range(9)))), _rows(80, 3, "b", ("p", "q"))),
])
def test_a_header_whose_words_are_also_values_below_is_a_header(first, second):
    """Its words occur in their columns (a category named like its column, a column of
    numbers with a few words), but seldom: 80 data rows, not 81."""
    classes = _rows(80, 16, "class", ("yes", "no"))
    text = "a,b,class\n" + "".join(f"{a},{b},{c}\n" for a, b, c in zip(first, second,
                                                                       classes))
    table = parse_text(text)
    assert table.has_header and list(table.frame.columns) == ["a", "b", "class"]
    assert len(table.frame) == 80


def test_a_header_repeated_mid_file_is_still_a_header():
    body = "".join(f"{k},{'red' if k % 2 else 'blue'},{'yes' if k % 3 else 'no'}\n"
                   for k in range(30))
    table = parse_text("age,colour,class\n" + body + "age,colour,class\n" + body)
    assert table.has_header and len(table.frame) == 61


@pytest.mark.parametrize("text", [
    # a first data row whose values are as common below as the others
    "a,b,class\n" + "x,p,yes\nb,class,no\ny,q,class\na,b,yes\n" * 20,
    # all text, a value repeated across the row (tic-tac-toe-like)
    "x,x,o,win\n" + "o,x,x,loss\nx,o,o,win\no,o,x,loss\n" * 5 + "x,b,b,loss\n",
    # different words in every column, each among the common ones
    "red,small,yes\n" + "red,large,no\nblue,small,yes\ngreen,large,no\n" * 10,
])
def test_a_first_row_of_common_values_is_data(text):
    assert not parse_text(text).has_header


def test_header_can_be_forced_off():
    table = parse_text("a,b,y\n1,2,0\n", header=False)
    assert not table.has_header
    assert list(table.frame.columns) == ["col1", "col2", "col3"]
    assert cells(table) == [["a", "b", "y"], ["1", "2", "0"]]


def test_header_can_be_forced_on_and_names_are_made_unique_and_stripped():
    table = parse_text(" x , x ,,y,x.2\n1,2,3,4,5\n", header=True)
    assert table.has_header
    assert list(table.frame.columns) == ["x", "x.2", "col3", "y", "x.2.2"]
    assert cells(table) == [["1", "2", "3", "4", "5"]]


def test_forced_header_keeps_names_that_look_missing():
    table = parse_text("NA,?\n1,2\n", header=True)
    assert list(table.frame.columns) == ["NA", "?"]


def test_numeric_first_row_forced_as_header():
    table = parse_text("1,2\n3,4\n", header=True)
    assert list(table.frame.columns) == ["1", "2"]
    assert cells(table) == [["3", "4"]]


# Encodings and line endings


def test_utf8_bom_is_removed(tmp_path):
    table = read_table(write(tmp_path, b"\xef\xbb\xbfname,y\ncaf\xc3\xa9,1\n"))
    assert table.encoding == "utf-8-sig"
    assert list(table.frame.columns) == ["name", "y"]
    assert cells(table) == [["café", "1"]]


def test_plain_utf8(tmp_path):
    table = read_table(write(tmp_path, "name,y\ncafé,1\n"))
    assert table.encoding == "utf-8"
    assert cells(table) == [["café", "1"]]


def test_latin1_fallback(tmp_path):
    table = read_table(write(tmp_path, b"name,cl\xe9\nx,1\nBogot\xe1,2\n"))
    assert table.encoding == "latin-1"
    assert list(table.frame.columns) == ["name", "clé"]
    assert cells(table) == [["x", "1"], ["Bogotá", "2"]]


def test_parse_text_records_the_given_encoding():
    assert parse_text("a,b\n1,2\n", encoding="latin-1").encoding == "latin-1"


@pytest.mark.parametrize("newline", ["\r\n", "\r", "\n"])
def test_line_endings(tmp_path, newline):
    text = newline.join(["a,b", "1,2", "3,4"]) + newline
    table = read_table(write(tmp_path, text))
    assert cells(table) == [["1", "2"], ["3", "4"]]


def test_blank_lines_are_skipped():
    table = parse_text("\n\na,b\n\n1,2\n   \n3,4\n\n\t\n")
    assert list(table.frame.columns) == ["a", "b"]
    assert cells(table) == [["1", "2"], ["3", "4"]]


# Cells


def test_quoted_fields_may_hold_the_delimiter_and_quotes():
    text = '"name","score"\n"Smith, John",3\n"O""Brien, Pat" , 4\n  "Lee, Ann",  5\n'
    table = parse_text(text)
    assert table.delimiter == ","
    assert list(table.frame.columns) == ["name", "score"]
    assert cells(table) == [
        ["Smith, John", "3"],
        ['O"Brien, Pat', "4"],
        ["Lee, Ann", "5"],
    ]


def test_quoted_field_may_span_lines():
    table = parse_text('a,b\n"two\nlines",1\n3,4\n')
    assert cells(table) == [["two\nlines", "1"], ["3", "4"]]


def test_cells_are_stripped():
    table = parse_text("a , b\n 1 ,\t2 \n")
    assert list(table.frame.columns) == ["a", "b"]
    assert cells(table) == [["1", "2"]]


def test_missing_markers_become_none():
    markers = sorted(MISSING_MARKERS)
    rows = [f"{number}, {marker} \n" for number, marker in enumerate(markers)]
    text = "id,value\n" + "".join(rows)
    text += '99,""\n100,0\n101,nana\n102,-1\n'
    table = parse_text(text)
    values = column(table, "value")
    assert values == [None] * (len(markers) + 1) + ["0", "nana", "-1"]
    assert_untyped(table)


# Decimal comma


def test_decimal_comma_with_semicolons():
    table = parse_text("a;b;c;d\n1,5;x;2;1,0\n2;y, z;3,25;abc\n-0,5;w;NA;2\n")
    assert table.decimal_comma
    assert table.has_header
    assert column(table, "a") == ["1.5", "2", "-0.5"]
    assert column(table, "b") == ["x", "y, z", "w"]
    assert column(table, "c") == ["2", "3.25", None]
    assert column(table, "d") == ["1,0", "abc", "2"]  # not a numeric column


def test_decimal_comma_with_tabs_and_no_header():
    table = parse_text("1,5\t2\n2,5\t3\n")
    assert table.decimal_comma
    assert not table.has_header  # "1,5" reads as the number 1.5
    assert cells(table) == [["1.5", "2"], ["2.5", "3"]]


def test_quoted_decimal_commas_in_a_comma_file_are_numbers():
    """Issue 19: they used to make the column categorical without a word."""
    table = parse_text('a,b\n"1,5",2\n"0,75",3\n')
    assert table.decimal_comma and cells(table) == [["1.5", "2"], ["0.75", "3"]]
    assert table.notes == (("Column 'a' holds numbers written with a decimal comma "
                            "('1,5' was read as 1.5)."),)


@pytest.mark.parametrize("text, column", [
    ('a,b\n"1,000,000",1\n"2,500",0\n17,1\n', ["1000000", "2500", "17"]),
    ('a;b\n1.000.000,5;1\n2,5;0\n-3;1\n', ["1000000.5", "2.5", "-3"]),
    ('a;b\n1 000;1\n25 000,5;0\n?;1\n', ["1000", "25000.5", None]),
    ('a,b\n"1\u00a0234",1\n"5",0\n', ["1234", "5"]),
    ('a;b\n1,000;1\n2,500;0\n', ["1.000", "2.500"]),        # ';' file: decimal comma
    ('a,b\n"1,000",1\n"2,500",0\n', ["1000", "2500"]),      # ',' file: thousands
])
def test_thousands_separators_when_the_whole_column_agrees(text, column):
    table = parse_text(text)
    assert [row[0] for row in cells(table)] == column
    assert len(table.notes) == 1 and "Column 'a' holds numbers written with" in \
        table.notes[0]


@pytest.mark.parametrize("text", [
    'a,b\n"1,000",1\nabc,0\n',          # a word: text column
    'a;b\n1.000;1\n2.5;0\n',            # plain decimals
    'a,b\n"1,00,0",1\n"2",0\n',          # not a thousands layout
    'a;b\n1 000;1\n1 00;0\n',           # nor here
    'a,b\n"1,5",1\n"1,000,000",0\n',     # two formats in one column
])
def test_columns_that_do_not_agree_are_left_alone(text):
    table = parse_text(text)
    assert table.notes == ()


def test_no_decimal_comma_without_commas():
    assert not parse_text("a;b\n1.5;2\n").decimal_comma
    assert not parse_text("a;b\n1;2\nx, y;3\n").decimal_comma


# Errors


def test_missing_file(tmp_path):
    with pytest.raises(DataError) as error:
        read_table(tmp_path / "nope.csv")
    assert_one_sentence(error, "nope.csv", "does not exist")


def test_folder_instead_of_file(tmp_path):
    with pytest.raises(DataError) as error:
        read_table(tmp_path)
    assert_one_sentence(error, str(tmp_path), "folder")


@pytest.mark.parametrize("content", [b"", b"\n\n", b"  \r\n\t\n"])
def test_empty_file(tmp_path, content):
    with pytest.raises(DataError) as error:
        read_table(write(tmp_path, content, "empty.csv"))
    assert_one_sentence(error, "empty.csv", "empty")


def test_header_only(tmp_path):
    with pytest.raises(DataError) as error:
        read_table(write(tmp_path, "a,b,c\n", "head.csv"))
    assert_one_sentence(error, "head.csv", "no data rows")


def test_forced_header_without_data_rows():
    with pytest.raises(DataError) as error:
        parse_text("1,2\n\n", header=True)
    assert_one_sentence(error, "The text", "no data rows")


@pytest.mark.parametrize("text", ["x\n1\n2\n", "value\n1.5\n\n-\n2\n"])
def test_one_column(tmp_path, text):
    with pytest.raises(DataError) as error:
        read_table(write(tmp_path, text, "one.csv"))
    assert_one_sentence(error, "one.csv", "only one column")


def test_forced_delimiter_giving_one_column():
    with pytest.raises(DataError) as error:
        parse_text("a,b\n1,2\n", delimiter=";")
    assert_one_sentence(error, "only one column", "semicolons")


@pytest.mark.parametrize(
    "content",
    [
        bytes(range(256)) * 10,
        b"PK\x03\x04\x14\x00\x06\x00" + b"\x00\x01" * 100,  # a zipped workbook
        b"\x01\x02a,b\x03\n" * 50,  # control characters but no NUL
    ],
)
def test_binary_file(tmp_path, content):
    with pytest.raises(DataError) as error:
        read_table(write(tmp_path, content, "blob.xlsx"))
    assert_one_sentence(error, "blob.xlsx", "does not look like a text table")


def test_ragged_row_names_the_file_line(tmp_path):
    path = write(tmp_path, "a,b\n\n1,2\n3,4,5\n6,7\n", "ragged.csv")
    with pytest.raises(DataError) as error:
        read_table(path)
    assert_one_sentence(error, "ragged.csv", "3 fields", "line 4", "most lines have 2")


def test_ragged_line_number_counts_lines_inside_quotes():
    with pytest.raises(DataError) as error:
        parse_text('a,b\n"x\ny",1\n2\n3,4\n')
    assert_one_sentence(error, "1 field on line 4")


def test_ragged_whitespace_file():
    with pytest.raises(DataError) as error:
        parse_text("1 0 1\n0 1 1\r\n1 0\n0 0 1\n1 1 1\n")
    assert_one_sentence(error, "2 fields", "line 3")


def test_runaway_quote_is_reported():
    with pytest.raises(DataError) as error:
        parse_text('a,b\n1,2\n"' + "x" * 200_000 + "\n3,4\n")
    assert_one_sentence(error, "line 3")


# Speed


def test_reads_20000_rows_of_30_numeric_columns(tmp_path):
    # Speed is measured in benchmarks, not asserted here (CI machines vary).
    header = ",".join(f"f{column}" for column in range(30))
    row = ",".join(f"{column}.{column * 7 % 10}" for column in range(30))
    path = write(tmp_path, header + "\n" + (row + "\n") * 20_000)
    table = read_table(path)
    assert table.frame.shape == (20_000, 30)
    assert table.frame.iloc[-1, 3] == "3.1"


# The shared benchmark datasets


NO_SHARED_FILES = pytest.param(None, marks=pytest.mark.skip(reason="no datasets"))


@pytest.mark.parametrize(
    "path",
    SHARED_FILES or [NO_SHARED_FILES],
    ids=lambda path: f"{path.parent.name}/{path.name}" if path else "absent",
)
def test_shared_dataset(path):
    table = read_table(path)
    is_csv = path.suffix == ".csv"
    non_blank_lines = sum(1 for line in path.read_bytes().splitlines() if line.strip())
    assert table.frame.shape[1] > 1
    assert table.has_header == is_csv
    assert table.delimiter == ("," if is_csv else " ")
    assert len(table.frame) == non_blank_lines - table.has_header
    assert "\ufeff" not in str(table.frame.columns[0])
    assert_untyped(table)
    if path.parent.name == "inferdt" and path.name == "balance-scale.csv":
        assert table.encoding == "utf-8-sig"
        assert table.frame.columns[0] == "Feat0"


BLOCK_CASES = {
    "utf-8 names, CRLF": "naïve;größe;class\r\n" + "".join(
        f"é{k % 7};{k}.5;{'ja' if k % 3 else 'nein'}\r\n" for k in range(60)),
    "BOM, blank lines, spaces": "\ufeffa, b ,c\n" + "".join(
        f"{k}, {k % 4} ,{k % 2}\n" + ("\n   \n" if k % 9 == 0 else "") for k in range(50)),
    "old Mac line ends": "".join(f"{k},{k * 2},{k % 2}\r" for k in range(40)),
    "quoted cells": 'x,"y, z",c\n' + "".join(f'{k},"a,{k}",{k % 2}\n' for k in range(40)),
    "latin-1": ("nom;taille;classe\n" + "".join(
        f"Zoë{k};{k},5;{k % 2}\n" for k in range(40))).encode("latin-1"),
    "no final line break": "a,b,c\n" + "\n".join(f"{k},?,{k % 2}" for k in range(30)),
    "a line longer than a block": "a,b,c\n" + "x" * 300 + ",1,0\n" + "y,2,1\n" * 20,
}


@pytest.mark.parametrize("name", sorted(BLOCK_CASES))
def test_tiny_blocks_give_the_same_table(tmp_path, monkeypatch, name):
    """Reading in blocks of a few bytes (cutting lines, UTF-8 characters and CRLF
    pairs at every possible place) gives the same table as reading in one block."""
    import engine.data.csv_reader as reader

    path = write(tmp_path, BLOCK_CASES[name])
    whole = read_table(path)
    for read_block, text_block in ((5, 3), (64, 17), (1, 1)):
        monkeypatch.setattr(reader, "_READ_BLOCK", read_block)
        monkeypatch.setattr(reader, "_TEXT_BLOCK", text_block)
        table = read_table(path)
        assert (table.delimiter, table.has_header, table.encoding, table.decimal_comma) \
            == (whole.delimiter, whole.has_header, whole.encoding, whole.decimal_comma)
        assert list(table.frame.columns) == list(whole.frame.columns)
        assert cells(table) == cells(whole)
        assert_untyped(table)


def test_special_files_are_refused_without_reading_them(tmp_path):
    import os
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)   # nobody writes to it: opening it would wait forever
    for path in (fifo, Path("/dev/zero"), Path("/dev/urandom")):
        with pytest.raises(DataError, match="not a regular file"):
            read_table(path)
    with pytest.raises(DataError, match="is a folder"):
        read_table(tmp_path)


def test_a_large_binary_file_is_refused_after_its_first_block(tmp_path, monkeypatch):
    import engine.data.csv_reader as reader
    read = []
    monkeypatch.setattr(reader, "_READ_BLOCK", 1024)
    original = reader._check_start
    monkeypatch.setattr(reader, "_check_start",
                        lambda data, subject: (read.append(len(data)), original(data, subject)))
    path = write(tmp_path, bytes(range(256)) * 4096)
    with pytest.raises(DataError, match="does not look like a text table"):
        read_table(path)
    assert read == [1024]


def test_utf16_with_a_bom_is_read(tmp_path):
    path = write(tmp_path, "name\tsize\nZoë\t3\nÅsa\t4\n".encode("utf-16"))
    table = read_table(path)
    assert table.encoding == "utf-16" and cells(table) == [["Zoë", "3"], ["Åsa", "4"]]
