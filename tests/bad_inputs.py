"""A corpus of malformed and awkward inputs, as a new user meets them (issue 19).

`cases()` makes every case afresh (nothing is kept in git): a file's bytes (or a
special file), the command line to run, and optionally a check of the outcome.  The
test (tests/test_bad_inputs.py) runs each through `engine.cli.main` in-process and
asserts the contract: exit 0 with the outputs written (a documented success), or exit
2 with one sentence on stderr, no traceback and no file written.

Placeholders in a command line: {data} (the case's file, `data.csv`), {base} (the
base table), {model} (a model trained on it), {out} (an output path that must not
exist afterwards on failure), {dir} (an existing folder), {spec} (the case's sweep
spec, beside `data.csv`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass

# The base table: 24 rows, a numeric, a text and a yes/no column, two classes.
BASE_ROWS = [(20 + 3 * k % 40, ("red", "green", "blue")[k % 3], 1000 + 137 * k % 900,
              "yes" if (k * 7) % 5 > 1 else "no") for k in range(24)]
HEADER = ["age", "colour", "income", "class"]


def table(header=HEADER, rows=BASE_ROWS, delimiter=",", end="\n") -> str:
    lines = [delimiter.join(header)] if header is not None else []
    lines += [delimiter.join(str(cell) for cell in row) for row in rows]
    return end.join(lines) + end


BASE = table()
LONG = "a" * 300   # appended to {out}: a file name longer than file systems allow


@dataclass
class Case:
    name: str
    argv: list[str]
    data: bytes | str | None = None          # the {data} file's content
    special: str | None = None               # instead: fifo, folder, missing, ...
    spec: dict | str | None = None           # a sweep spec ({spec}), JSON
    outputs: tuple[str, ...] = ()            # placeholders of paths written on success
    expect: int | None = None                # a required exit code
    check: Callable[[dict | None, str], None] | None = None   # (JSON summary, stderr)
    says: str | None = None                  # text the one sentence of a failure holds


def fit(name, data, *options, expect=None, check=None, outputs=("out",)) -> Case:
    argv = ["fit", "{data}", "--algo", "greedy", "--depth", "2", "--json",
            "--out", "{out}", *options]
    return Case(name, argv, data=data, outputs=outputs, expect=expect, check=check)


def predict(name, data, *options, expect=None, check=None) -> Case:
    argv = ["predict", "{model}", "{data}", "--json", "--out", "{out}", *options]
    return Case(f"predict: {name}", argv, data=data, outputs=("out",), expect=expect,
                check=check)


def rows_are(n):
    def check(summary, _):
        assert summary["n_rows"] == n, summary["n_rows"]
    return check


def numeric_features(summary, _):
    assert not any("=" in line for line in summary.get("preparation", [])), summary


# ------------------------------------------------------------------ contents
def encodings() -> list[Case]:
    text = table(["name", "size", "class"], [("Zoë", 3, "a"), ("Åsa", 4, "b"),
                                             ("José", 5, "a"), ("Mañana", 6, "b")] * 3)
    out = []
    for codec in ("utf-8", "utf-8-sig", "latin-1", "cp1252", "utf-16", "utf-16-le",
                  "utf-16-be", "utf-32"):
        out.append(fit(f"encoding {codec}", text.encode(codec)))
    out += [
        fit("invalid utf-8 byte", text.encode() + b"x\xff\xfe,1,a\n"),
        fit("nul bytes", b"a,b,c\n1,\x00,2\n" * 10),
        fit("emoji names", table(["🌳", "size", "class"], [("🍎", 1, "x"), ("🍐", 2, "y")] * 5)),
        fit("zero-width space in numbers", table(["x", "class"],
                                                 [("1\u200b2", "a"), ("3", "b")] * 6)),
        fit("right-to-left text", table(["שם", "גודל", "class"],
                                        [("אבג", 1, "x"), ("דהו", 2, "y")] * 6)),
        fit("combining characters", table(["name", "class"],
                                          [("e\u0301", "a"), ("é", "b")] * 6)),
        fit("windows-1252 quotes", b'a,b,class\n\x93x\x94,1,y\n\x93z\x94,2,n\n' * 5),
    ]
    return out


def structures() -> list[Case]:
    rows = BASE_ROWS
    out = [
        fit("empty file", "", expect=2),
        fit("only blanks", "   \n\t\n  ", expect=2),
        fit("only line breaks", "\n\n\n\n", expect=2),
        fit("only a header", "a,b,class\n", expect=2),
        fit("header and one row", "a,b,class\n1,2,x\n"),
        fit("one column", "class\nx\ny\nx\n", expect=2),
        fit("one row no header", "1,2,x\n"),
        fit("crlf", table(end="\r\n")),
        fit("cr only", table(end="\r")),
        fit("mixed line ends", BASE.replace("\n", "\r\n", 5)),
        fit("no final line break", BASE.rstrip("\n")),
        fit("blank lines between", BASE.replace("\n", "\n\n")),
        fit("whitespace lines between", BASE.replace("\n", "\n   \n")),
        fit("trailing delimiter everywhere", BASE.replace("\n", ",\n")),
        fit("trailing delimiter on some lines", BASE.replace("\n", ",\n", 3)),
        fit("short row", BASE + "1,red\n", expect=2),
        fit("long row", BASE + "1,red,3,yes,9\n", expect=2),
        fit("ragged first data row", "a,b,class\n1,2\n" + table(None, rows[:10])[0:],
            expect=2),
        fit("semicolons", table(delimiter=";")),
        fit("tabs", table(delimiter="\t")),
        fit("whitespace runs", table(delimiter="   ")),
        fit("tab and spaces", BASE.replace(",", "\t ")),
        fit("semicolons with commas in text", table(["name", "x", "class"],
                                                    [("Smith, J", 1, "a"),
                                                     ("Lee, K", 2, "b")] * 6, ";")),
        fit("quoted fields with line breaks", 'a,b,class\n"x\ny",1,p\n"z",2,q\n' * 4),
        fit("unclosed quote", 'a,b,class\n1,2,p\n"x,1,p\n' + "z,2,q\n" * 10, expect=2),
        fit("quotes pairing across lines", 'a,b,class\n"x,1,p\nz,2,q\n' * 4),
        fit("quote inside unquoted field", 'a,b,class\nx"y,1,p\nz,2,q\n' * 4),
        fit("escaped quotes", 'a,b,class\n"x""y",1,p\n"z",2,q\n' * 4),
        fit("quoted whitespace-delimited", 'a b class\n"x y" 1 p\nz 2 q\n' * 4),
        fit("pipe-delimited", BASE.replace(",", "|"), expect=2),
        fit("pipe-delimited, told", BASE.replace(",", "|"), "--delimiter", "|",
            expect=2),
        fit("one enormous line", "a,b,class\n" + "1," * 100_000 + "x\n", expect=2),
        fit("10,000 columns", _wide(10_000)),
        fit("2,000 columns of text", _wide(2_000, text=True)),
        fit("a 1 MB cell", "a,b,class\n" + "x" * 1_000_000 + ",1,p\ny,2,q\n" * 5),
        fit("a million tiny rows", "a,class\n" + "1,x\n2,y\n" * 50_000),
        fit("bom then header", "\ufeff" + BASE),
        fit("header only spaces", "   ,   ,   \n1,2,x\n3,4,y\n" * 3),
        fit("duplicate rows", BASE + BASE),
        fit("all rows identical", "a,class\n1,x\n" * 20),
        fit("contradicting identical rows", "a,class\n1,x\n1,y\n" * 10),
    ]
    return out


def _wide(columns: int, text: bool = False) -> str:
    header = ",".join(f"c{j}" for j in range(columns)) + ",class\n"
    rows = []
    for i in range(12):
        cells = [f"t{(i + j) % 3}" if text else str((i * j) % 7) for j in range(columns)]
        rows.append(",".join(cells) + ("," + ("x" if i % 2 else "y")) + "\n")
    return header + "".join(rows)


def headers() -> list[Case]:
    body = table(None)
    return [
        fit("duplicate names", "a,a,a,class\n" + body, check=rows_are(24)),
        fit("empty name", "age,,income,class\n" + body, check=rows_are(24)),
        fit("whitespace name", "age,   ,income,class\n" + body, check=rows_are(24)),
        fit("same word twice", "x,x,income,class\n" + body, check=rows_are(24)),
        fit("missing-marker names", "age,NA,income,class\n" + body, check=rows_are(24)),
        fit("numeric header", "1,2,3,4\n" + body),
        fit("header repeated mid-file", BASE + ",".join(HEADER) + "\n" + body),
        fit("very long names", ",".join("n" * 5000 + str(j) for j in range(4)) + "\n" + body),
        fit("names with quotes and commas", '"a,b","c""d",e,class\n' + body,
            check=rows_are(24)),
        fit("unicode names", "âge,côleur,ïncome,clâss\n" + body, check=rows_are(24)),
        fit("names that are classes", "yes,no,yes,class\n" + body),
        fit("two class columns", "class,colour,income,class\n" + body,
            check=rows_are(24)),
        fit("forced header on headerless", body, "--header"),
        fit("forced no header on header", BASE, "--no-header"),
        fit("both header flags", BASE, "--header", "--no-header", expect=2),
    ]


def numbers() -> list[Case]:
    def column(cells, quote=False, delimiter=","):
        q = '"' if quote else ""
        return "x" + delimiter + "class\n" + "".join(
            f"{q}{c}{q}{delimiter}{'a' if k % 2 else 'b'}\n" for k, c in enumerate(cells * 4))
    out = []
    odd_numbers = {
        "inf cells": ["inf", "1", "2", "-inf"],
        "Infinity cells": ["Infinity", "1", "-Infinity", "3"],
        "nan cells": ["nan", "1", "NaN", "3"],
        "huge numbers": ["1e308", "-1e308", "1.7976931348623157e308", "0"],
        "tiny numbers": ["1e-320", "5e-324", "-1e-310", "0"],
        "negative zero": ["-0", "0", "-0.0", "1"],
        "30-digit integers": ["1" * 30, "2" * 30, "3", "4"],
        "overflowing exponent": ["1e999", "2", "3", "-1e999"],
        "hex": ["0x1F", "0x10", "7", "8"],
        "underscores": ["1_000", "2_000", "3", "4"],
        "leading plus": ["+1", "+2.5", "-3", "4"],
        "leading dot": [".5", "5.", "-.25", "1"],
        "exponents": ["1e5", "2E-3", "3e+2", "4"],
        "percentages": ["50%", "25%", "10%", "5%"],
        "currency": ["$1,000", "$2", "$3.50", "$4"],
        "dates": ["2024-01-05", "2024-02-10", "2023-12-31", "2022-07-01"],
        "times": ["12:30", "08:15", "23:59", "00:00"],
        "booleans": ["TRUE", "FALSE", "true", "false"],
        "unicode minus": ["\u22125", "3", "\u22122.5", "1"],
        "fullwidth digits": ["１２", "３", "４", "５"],
        "spaces inside": ["- 5", "1 2", "3", "4"],
        "mixed numbers and words": ["1", "2", "three", "4"],
        "thousands commas": ["1,000", "2,500,000", "17", "3,000.5"],
        "decimal commas": ["0,75", "1,5", "2", "-3,25"],
        "thousands dots": ["1.000.000,5", "2,5", "3", "4.000,0"],
        "thousands spaces": ["1 000", "25 000,5", "3", "?"],
        "no-break space thousands": ["1\u00a0000", "2\u00a0500", "3", "4"],
        "two formats in one column": ["1,5", "1,000,000", "3", "4"],
    }
    for name, cells in odd_numbers.items():
        quote = any("," in c for c in cells)
        out.append(fit(name, column(cells, quote=quote)))
        out.append(fit(name + " (semicolons)", column(cells, delimiter=";")))
    out.append(fit("quoted decimal commas read as numbers", column(["0,75", "1,5", "2", "3"],
                                                                  quote=True),
                   check=numeric_features))
    out.append(fit("thousands read as numbers", column(["1,000", "2,500,000", "17", "4"],
                                                       quote=True),
                   check=numeric_features))
    return out


def targets() -> list[Case]:
    body = table(HEADER[:3] + ["class"], [row[:3] + ("",) for row in BASE_ROWS])
    many = "x,class\n" + "".join(f"{k},c{k}\n" for k in range(600))
    return [
        fit("target all missing", body, expect=2),
        fit("one class", table(rows=[row[:3] + ("yes",) for row in BASE_ROWS])),
        fit("target with 600 classes in 600 rows", many, expect=2),
        fit("target with 300 classes", "x,class\n" + "".join(
            f"{k},c{k // 2}\n" for k in range(600))),
        fit("continuous target", "x,y\n" + "".join(f"{k},{k * 1.37:.3f}\n"
                                                    for k in range(200)), expect=2),
        fit("empty-string classes", table(rows=[row[:3] + ("" if k % 2 else "z",)
                                                for k, row in enumerate(BASE_ROWS)])),
        fit("unknown target name", BASE, "--target", "nope", expect=2),
        fit("target index too large", BASE, "--target", "9", expect=2),
        fit("target index too small", BASE, "--target", "-99", expect=2),
        fit("target first", BASE, "--target", "first"),
        fit("target last", BASE, "--target", "last"),
        fit("target index 0", BASE, "--target", "0"),
        fit("target empty text", BASE, "--target", "", expect=2),
        fit("target is ignored too", BASE, "--ignore", "class", expect=2),
        fit("ignore every feature", BASE, "--ignore", "age", "--ignore", "colour",
            "--ignore", "income", expect=2),
        fit("ignore unknown", BASE, "--ignore", "nope", expect=2),
        fit("categorical unknown", BASE, "--categorical", "nope", expect=2),
        fit("categorical text", BASE, "--categorical", "colour"),
        fit("categorical number", BASE, "--categorical", "age"),
        fit("one row per class", "x,class\n1,a\n2,b\n3,c\n"),
    ]


def missing_values() -> list[Case]:
    out = []
    for marker in ("", "?", "NA", "N/A", "null", "None", "-", "nan", "NaN", " "):
        rows = [(marker if k % 3 == 0 else row[0],) + row[1:]
                for k, row in enumerate(BASE_ROWS)]
        for policy in ("drop", "impute", "indicator"):
            out.append(fit(f"missing {marker!r} {policy}", table(rows=rows),
                           "--missing", policy))
    every = table(rows=[("?", "?", "?", row[3]) for row in BASE_ROWS])
    out += [
        fit("every feature missing", every, expect=2),
        fit("every feature missing, drop", every, "--missing", "drop", expect=2),
        fit("one column all missing", table(rows=[("?",) + row[1:] for row in BASE_ROWS])),
        fit("unknown policy", BASE, "--missing", "guess", expect=2),
    ]
    return out


def options() -> list[Case]:
    bad = [
        ("unknown flag", ["--colour"]), ("unknown algorithm", ["--algo", "forest"]),
        ("depth -1", ["--depth", "-1"]), ("depth text", ["--depth", "two"]),
        ("depth 1.5", ["--depth", "1.5"]), ("depth huge", ["--depth", "100000"]),
        ("time limit nan", ["--time-limit", "nan"]),
        ("time limit -1", ["--time-limit", "-1"]),
        ("time limit text", ["--time-limit", "soon"]),
        ("time limit -inf", ["--time-limit", "-inf"]),
        ("binarize unknown", ["--binarize", "magic"]),
        ("binarize quantile:0", ["--binarize", "quantile:0"]),
        ("binarize quantile:-3", ["--binarize", "quantile:-3"]),
        ("binarize quantile:x", ["--binarize", "quantile:x"]),
        ("binarize quantile:nan", ["--binarize", "quantile:nan"]),
        ("binarize guided:0", ["--binarize", "guided:0"]),
        ("param without =", ["--param", "min_leaf"]),
        ("param unknown", ["--param", "speed=11"]),
        ("param empty key", ["--param", "=3"]),
        ("param nan", ["--param", "min_leaf=nan"]),
        ("param inf", ["--param", "min_leaf=inf"]),
        ("param -inf", ["--param", "min_leaf=-inf"]),
        ("param text", ["--param", "min_leaf=lots"]),
        ("param negative", ["--param", "min_leaf=-2"]),
        ("delimiter two characters", ["--delimiter", ";;"]),
        ("delimiter empty", ["--delimiter", ""]),
        ("delimiter letter", ["--delimiter", "a"]),
    ]
    out = [fit(name, BASE, *flags, expect=2) for name, flags in bad]
    fine = [
        ("time limit 0", ["--time-limit", "0"]), ("time limit inf", ["--time-limit", "inf"]),
        ("depth 0", ["--depth", "0"]),
        ("depth 12", ["--depth", "12"]), ("binarize midpoints", ["--binarize", "midpoints"]),
        ("binarize quantile:1", ["--binarize", "quantile:1"]),
        ("binarize quantile:1000", ["--binarize", "quantile:1000"]),
        ("binarize guided", ["--binarize", "guided"]),
        ("delimiter tab name", ["--delimiter", "tab"]),
        ("delimiter comma", ["--delimiter", ","]),
        ("remove redundant", ["--remove-redundant"]), ("merge", ["--merge-duplicates"]),
        ("drop inconsistent", ["--drop-inconsistent"]),
    ]
    out += [fit(name, BASE, *flags, expect=None) for name, flags in fine]
    out.append(fit("time limit tiny", BASE, "--time-limit", "1e-9", expect=3))
    for algorithm in ("blossom", "dl85", "cadl85", "contree", "sat-depth", "auto"):
        out.append(Case(f"{algorithm} on the base table",
                        ["fit", "{data}", "--algo", algorithm, "--depth", "2", "--json",
                         "--time-limit", "20", "--out", "{out}"],
                        data=BASE, outputs=("out",)))
        for key, value in (("depth", "nan"), ("depth", "-1"), ("nope", "1")):
            out.append(Case(f"{algorithm} {key}={value}",
                            ["fit", "{data}", "--algo", algorithm, "--param",
                             f"{key}={value}", "--out", "{out}"],
                            data=BASE, outputs=("out",), expect=2))
    for key in ("alpha", "heuristic_time", "parity_tolerance", "depth"):
        for value in ("nan", "inf", "-1"):
            out.append(Case(f"odd {key}={value}",
                            ["fit", "{data}", "--algo", "odd", "--param", f"{key}={value}",
                             "--time-limit", "10", "--out", "{out}"],
                            data=BASE, outputs=("out",)))
    for key in ("step", "factor", "min_purity", "max_gap"):
        for value in ("nan", "inf", "-inf"):
            out.append(Case(f"cadl85 {key}={value}",
                            ["fit", "{data}", "--algo", "cadl85", "--param",
                             f"{key}={value}", "--time-limit", "10", "--out", "{out}"],
                            data=BASE, outputs=("out",)))
    return out


def outputs() -> list[Case]:
    out = []
    for flag in ("--out", "--rules", "--python", "--sql", "--dot"):
        out.append(Case(f"{flag} is a folder", ["fit", "{data}", "--algo", "greedy",
                                                flag, "{dir}"], data=BASE, expect=2))
        out.append(Case(f"{flag} in a missing folder",
                        ["fit", "{data}", "--algo", "greedy", flag, "{dir}/no/such/f"],
                        data=BASE, expect=2))
        out.append(Case(f"{flag} to a new file", ["fit", "{data}", "--algo", "greedy",
                                                  flag, "{out}"],
                        data=BASE, outputs=("out",), expect=0))
        out.append(Case(f"{flag} name too long", ["fit", "{data}", "--algo", "greedy",
                                                  flag, "{out}" + LONG],
                        data=BASE, expect=2, says="too long"))
    out += [
        Case("--out .", ["fit", "{data}", "--algo", "greedy", "--out", "."], data=BASE,
             expect=2),
        Case("infinite thresholds exported", ["fit", "{data}", "--algo", "greedy",
                                              "--depth", "3", "--sql", "{out}",
                                              "--python", "{out}.py", "--rules",
                                              "{out}.txt"],
             data="x,class\n" + "".join(f"{v},{c}\n" for v, c in (
                 ("inf", "a"), ("-inf", "b"), ("1", "a"), ("2", "b"), ("-inf", "b"),
                 ("inf", "a"), ("0", "b"), ("3", "a")) * 3), outputs=("out",)),
    ]
    return out


def model_files() -> list[Case]:
    good = {"format": "orchard-tree"}
    docs = {
        "empty model": "", "not json": "this is not json", "json list": "[1, 2, 3]",
        "json number": "42", "json null": "null", "empty object": "{}",
        "truncated": '{"format": "orchard-tree", "feature": [0, ',
        "unknown format": json.dumps({**good, "format": "orchard-forest"}),
        "deep nesting": "[" * 100_000 + "]" * 100_000,
        "utf-16 model": "{}".encode("utf-16"),
        "binary model": bytes(range(256)),
    }
    out = [Case(name, ["predict", "{data}", "{base}", "--out", "{out}"], data=content,
                outputs=("out",), expect=2) for name, content in docs.items()]
    for name, kind in (("model missing", "missing"), ("model is a folder", "folder"),
                       ("model is a pipe", "fifo")):
        out.append(Case(name, ["predict", "{data}", "{base}", "--out", "{out}"],
                        special=kind, outputs=("out",), expect=2))
    return out


def predictions() -> list[Case]:
    return [
        predict("same table", BASE, expect=0),
        predict("no target column", table(HEADER[:3], [r[:3] for r in BASE_ROWS]), expect=0),
        predict("missing a feature column", table(["age", "class"],
                                                   [(r[0], r[3]) for r in BASE_ROWS]),
                expect=2),
        predict("extra columns", table(HEADER + ["more"], [r + (1,) for r in BASE_ROWS]),
                expect=0),
        predict("new category", table(rows=[(r[0], "purple") + r[2:] for r in BASE_ROWS]),
                expect=0),
        predict("new class", table(rows=[r[:3] + ("maybe",) for r in BASE_ROWS]), expect=0),
        predict("all cells missing", table(rows=[("?", "?", "?", "?")] * 5), expect=0),
        predict("text in a numeric column", table(rows=[("old",) + r[1:] for r in BASE_ROWS]),
                expect=2),
        predict("empty table", "", expect=2),
        predict("header without rows", ",".join(HEADER) + "\n", expect=2),
        predict("semicolon table", table(delimiter=";"), expect=0),
        predict("infinite numbers", table(rows=[("inf",) + r[1:] for r in BASE_ROWS]),
                expect=0),
        Case("predict: --out name too long", ["predict", "{model}", "{data}", "--out",
                                              "{out}" + LONG], data=BASE, expect=2,
             says="too long"),
    ]


def special_files() -> list[Case]:
    return [Case(f"data is {kind}", ["fit", "{data}", "--algo", "greedy", "--out", "{out}"],
                 special=kind, outputs=("out",), expect=2)
            for kind in ("fifo", "folder", "missing", "dev-zero", "dev-urandom", "dev-null",
                         "symlink-loop", "broken-symlink", "sparse-zeros")]


def sweeps() -> list[Case]:
    spec = {"datasets": ["data.csv"], "algorithms": ["greedy"], "depth": [1], "folds": 2}
    bad = {
        "spec not json": "{{not json", "spec empty": "", "spec list": "[]",
        "spec unknown key": json.dumps({**spec, "colour": 1}),
        "spec no datasets": json.dumps({**spec, "datasets": []}),
        "spec missing dataset": json.dumps({**spec, "datasets": ["/no/such.csv"]}),
        "spec depth nan": json.dumps({**spec, "depth": ["nan"]}),
        "spec depth -1": json.dumps({**spec, "depth": [-1]}),
        "spec depth 1.5": json.dumps({**spec, "depth": [1.5]}),
        "spec seed text": json.dumps({**spec, "seed": "x"}),
        "spec holdout 2": json.dumps({**spec, "holdout": 2, "folds": None}),
        "spec param nan": json.dumps({**spec, "params": {"greedy": {"min_leaf": "nan"}}}),
        "spec params not a dict": json.dumps({**spec, "params": [1]}),
        "spec fine": json.dumps(spec),
        "spec toml-like text": "datasets = [",
        "spec time limit Infinity": json.dumps({**spec, "time_limit": "Infinity"}),
        "spec time limit nan": json.dumps({**spec, "time_limit": "nan"}),
        "spec unknown algorithm": json.dumps({**spec, "algorithms": ["forest"]}),
        "spec folds 1": json.dumps({**spec, "folds": 1}),
        "spec folds nan": json.dumps({**spec, "folds": "nan"}),
    }
    out = [Case(name, ["sweep", "{spec}", "--out", "{out}"], data=BASE, spec=text,
                outputs=("out",)) for name, text in bad.items()]
    out.append(Case("sweep out is a folder", ["sweep", "{spec}", "--out", "{dir}"],
                    data=BASE, spec=json.dumps(spec), expect=2))
    out.append(Case("sweep workers 0", ["sweep", "{spec}", "--out", "{out}", "--workers",
                                        "0"], data=BASE, spec=json.dumps(spec), expect=2,
                    outputs=("out",)))
    # {out} ends in "result": a name of 255 bytes is fine, its journal's (+ .jsonl) not
    for name, tail in (("sweep out name too long", LONG + ".csv"),
                       ("sweep journal name too long", "a" * 245 + ".csv")):
        out.append(Case(name, ["sweep", "{spec}", "--out", "{out}" + tail], data=BASE,
                        spec=json.dumps(spec), expect=2, says="too long"))
    # Python's JSON writes and reads Infinity and NaN (TOML has inf and nan)
    refused = {"time_limit": [math.inf, -math.inf, math.nan, 0, -1, "10", True],
               "folds": [math.inf, math.nan, 2.5, "3", True],
               "holdout": [math.inf, math.nan, 0, 1, "0.2", True],
               "depth": [math.inf, math.nan, 0.5, [1, math.inf], True],
               "seed": [math.inf, math.nan, -1, 1.5, True]}
    for key, values in refused.items():
        base = {k: v for k, v in spec.items() if not (key == "holdout" and k == "folds")}
        out += [Case(f"spec {key} = {json.dumps(value)}", ["sweep", "{spec}", "--out",
                                                           "{out}"],
                     data=BASE, spec=json.dumps({**base, key: value}), outputs=("out",),
                     expect=2, says=f'"{key}"') for value in values]
    return out


def predicting_each(files: list[Case]) -> list[Case]:
    """The same awkward files given to `orchard predict` with the base table's model
    (most lack its columns: one sentence, exit 2; the others predict)."""
    return [predict(case.name, case.data) for case in files if case.data is not None]


def cases() -> list[Case]:
    files = encodings() + structures() + headers() + numbers()
    everything = (files + predicting_each(files) + targets() + missing_values()
                  + options() + outputs() + model_files() + predictions()
                  + special_files() + sweeps())
    names = [case.name for case in everything]
    assert len(names) == len(set(names)), "case names must be unique"
    return everything
