"""Smarter data defaults (issue 15, item 5): nearly unique names are ids, a target
with many classes is questioned, and CP4IM-like files take their first column as the
class."""

import json

import numpy as np
import pytest
from conftest import dataset_files

from engine.cli import main
from engine.data.columns import (
    ColumnKind,
    choose_target,
    class_comes_first,
    infer_columns,
)
from engine.data.csv_reader import parse_text, read_table
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.errors import DataError

NEARLY = "nearly a different value on every row: an id or a name"


def animals_csv(rows: int = 100) -> str:
    """name (95 different names in 100 rows), legs, hair, class."""
    rng = np.random.default_rng(3)
    names = [f"animal{i}" for i in range(rows - 5)] + [f"animal{i}" for i in range(5)]
    lines = ["name,legs,hair,class"]
    for i, name in enumerate(names):
        legs = int(rng.choice([0, 2, 4, 6]))
        hair = "yes" if i % 3 else "no"
        lines.append(f"{name},{legs},{hair},{'mammal' if legs == 4 else 'other'}")
    return "\n".join(lines) + "\n"


def price_csv(path, classes: int = 120, rows: int = 600):
    """A table whose last column is a price with `classes` different values."""
    lines = ["size,rooms,price"]
    for i in range(rows):
        lines.append(f"{i % 9},{i % 4},{100 + 2.5 * (i % classes)}")
    path.write_text("\n".join(lines) + "\n")
    return path


# --------------------------------------------------------------- id-like names
def test_nearly_unique_name_column_is_ignored_with_the_reason():
    raw = parse_text(animals_csv())
    infos = {info.name: info for info in infer_columns(raw.frame)}
    assert infos["name"].n_distinct == 95
    assert infos["name"].kind == ColumnKind.ID and infos["name"].reason == NEARLY
    data = prepare(raw)
    assert data.report.ignored_columns == {"name": NEARLY}
    assert f"Column 'name' was ignored ({NEARLY})." in data.report.lines()
    assert {c.name for c in data.prep.columns} == {"legs", "hair"}


def test_id_rule_keeps_real_categories_and_measurements():
    rng = np.random.default_rng(0)
    # 100 rows with 85 different words: below 90%, still categorical
    words = [f"w{i}" for i in range(85)] + [f"w{i}" for i in range(15)]
    # numbers nearly unique (a measurement): continuous, not an id
    numbers = list(rng.normal(size=99).round(6)) + [0.5]
    numbers[1] = numbers[0]
    text = "word,weight,class\n" + "".join(
        f"{w},{x},{'ab'[i % 2]}\n" for i, (w, x) in enumerate(zip(words, numbers)))
    infos = {info.name: info for info in infer_columns(parse_text(text).frame)}
    assert infos["word"].kind == ColumnKind.CATEGORICAL
    assert infos["weight"].kind == ColumnKind.NUMERIC
    # too few rows to tell: 19 different names stay categorical
    few = "name,class\n" + "".join(f"n{i},{'ab'[i % 2]}\n" for i in range(19))
    assert infer_columns(parse_text(few).frame)[0].kind == ColumnKind.CATEGORICAL


def test_the_user_can_still_use_a_name_column():
    raw = parse_text(animals_csv())
    data = prepare(raw, PrepOptions(kinds={"name": ColumnKind.CATEGORICAL}))
    assert "name" not in data.report.ignored_columns
    assert "name" in {c.name for c in data.prep.columns}


def test_cli_categorical_overrides_the_id_guess(tmp_path, capsys):
    path = tmp_path / "animals.csv"
    path.write_text(animals_csv())
    assert main(["fit", str(path), "--algo", "greedy", "--depth", "2", "--json"]) == 0
    auto = json.loads(capsys.readouterr().out)
    assert f"Column 'name' was ignored ({NEARLY})." in auto["preparation"]
    assert main(["fit", str(path), "--algo", "greedy", "--depth", "2", "--json",
                 "--categorical", "name"]) == 0
    forced = json.loads(capsys.readouterr().out)
    assert not any("'name'" in line for line in forced["preparation"])
    # the names become a few value tests (frequent names, groups), not one per name
    assert auto["n_features"] < forced["n_features"] <= auto["n_features"] + 4 + 7 + 3


# --------------------------------------------------------- many-class targets
# (a target of many numbers is a regression unless classes are asked for)
AS_CLASSES = PrepOptions(task="classification")


def test_a_120_class_numeric_target_is_questioned_not_refused(tmp_path):
    data = prepare(read_table(price_csv(tmp_path / "price.csv")), AS_CLASSES)
    assert data.n_classes == 120
    assert data.report.target_doubt == ("The class column 'price' has 120 different "
                                        "numbers; is it really the class?")
    assert len(data.report.warnings) == 1 and "--target" in data.report.warnings[0]
    fine = prepare(read_table(price_csv(tmp_path / "few.csv", classes=6)), AS_CLASSES)
    assert fine.report.target_doubt == "" and fine.report.warnings == []


@pytest.mark.parametrize("classes, doubt", [(20, False), (21, True), (50, True)])
def test_numeric_targets_are_questioned_above_twenty_classes(tmp_path, classes, doubt):
    data = prepare(read_table(price_csv(tmp_path / "p.csv", classes=classes)), AS_CLASSES)
    assert bool(data.report.target_doubt) == doubt
    # asked nothing, such a target is a regression above twenty values (issue 47)
    assert prepare(read_table(price_csv(tmp_path / "p.csv", classes=classes))
                   ).regression == doubt


def test_many_text_classes_are_questioned_above_fifty(tmp_path):
    lines = ["x,species"] + [f"{i % 13},s{i % 60}" for i in range(600)]
    data = prepare(parse_text("\n".join(lines) + "\n"))
    assert "60 different values" in data.report.target_doubt
    lines = ["x,species"] + [f"{i % 13},s{i % 50}" for i in range(600)]
    assert prepare(parse_text("\n".join(lines) + "\n")).report.target_doubt == ""


def test_a_clearly_wrong_target_is_still_refused(tmp_path):
    with pytest.raises(DataError, match="measurement rather than a class"):
        prepare(read_table(price_csv(tmp_path / "p.csv", classes=100, rows=150)),
                AS_CLASSES)


def test_cli_warns_in_one_sentence_and_goes_on(tmp_path, capsys):
    path = price_csv(tmp_path / "price.csv")
    code = main(["fit", str(path), "--algo", "greedy", "--depth", "2", "--json",
                 "--task", "classification"])
    out, err = capsys.readouterr()
    assert code == 0
    warning = [line for line in err.splitlines() if "Warning" in line]
    assert warning == [("orchard: Warning: The class column 'price' has 120 different "
                        "numbers, so it may be a measurement or an id rather than a "
                        "class; training goes on (choose the class column with "
                        "--target).")]
    summary = json.loads(out)
    assert summary["n_classes"] == 120 and summary["warnings"] == [warning[0][18:]]
    # a plain table warns about nothing
    assert main(["fit", str(price_csv(tmp_path / "few.csv", classes=4)), "--algo",
                 "greedy", "--depth", "2", "--json"]) == 0
    out, err = capsys.readouterr()
    assert "Warning" not in err and json.loads(out)["warnings"] == []


# ------------------------------------------------------- class-first 0/1 files
def one_hot_rows(rng, rows: int, sizes=(3, 2, 4, 2)) -> np.ndarray:
    """0/1 columns, one group per original attribute, one 1 per row in each group."""
    return np.column_stack([np.eye(k, dtype=int)[rng.integers(0, k, rows)]
                            for k in sizes])


def text(matrix: np.ndarray, delimiter: str = " ") -> str:
    return "\n".join(delimiter.join(map(str, row)) for row in matrix) + "\n"


def target_of(content: str) -> str:
    raw = parse_text(content)
    return choose_target([str(c) for c in raw.frame.columns], None, raw)


def test_class_first_layout_of_cp4im_files():
    rng = np.random.default_rng(1)
    features = one_hot_rows(rng, 200)
    y = rng.integers(0, 2, 200)
    assert target_of(text(np.column_stack([y, features]))) == "col1"
    # a small-integer class among 0/1 columns (no group layout needed)
    y5 = rng.integers(0, 5, 200)
    assert target_of(text(np.column_stack([y5, rng.integers(0, 2, (200, 6))]))) == "col1"
    # the same file sorted by class: the whole column counts, not its first rows
    order = np.argsort(y, kind="stable")
    assert target_of(text(np.column_stack([y, features])[order])) == "col1"


def test_other_tables_keep_the_last_column():
    rng = np.random.default_rng(2)
    features = one_hot_rows(rng, 200)
    y = rng.integers(0, 2, 200)
    # the same layout with the class last
    assert target_of(text(np.column_stack([features, y]))) == "col12"
    # random 0/1 columns: no sign that the first column is special
    assert target_of(text(rng.integers(0, 2, (200, 6)))) == "col6"
    # numbers that are not 0/1 after the first column (a ConTree-like file)
    floats = np.column_stack([y, rng.random((200, 3)).round(3)])
    assert target_of(text(floats)) == "col4"
    # a header: the file names its columns, the default is the last one
    header = "a b c d e f g h i j k z\n"
    assert target_of(header + text(np.column_stack([y, features]))) == "z"
    # a generic CSV with a header and the class last
    assert target_of("age,colour,buys\n" + "".join(
        f"{20 + i},{'red' if i % 2 else 'blue'},{'yes' if i % 3 else 'no'}\n"
        for i in range(30))) == "buys"
    # an explicit choice always wins
    raw = parse_text(text(np.column_stack([y, features])))
    assert choose_target(list(raw.frame.columns), "last", raw) == "col12"
    assert not class_comes_first(parse_text(text(np.column_stack([features, y]))).frame)


@pytest.mark.parametrize("path", dataset_files("cp4im", suffix=".txt"),
                         ids=lambda p: p.name)
def test_cp4im_files_read_without_target_take_the_first_column(path):
    raw = read_table(path)
    assert not raw.has_header
    data = prepare(raw)
    assert data.prep.target == "col1"
    explicit = prepare(raw, PrepOptions(target="first"))
    assert data.class_names == explicit.class_names
    assert np.array_equal(data.y, explicit.y) and data.n_features == explicit.n_features


def test_cp4im_file_on_the_command_line_without_target(datasets_dir, capsys):
    path = datasets_dir / "cp4im" / "zoo-1.txt"
    assert main(["fit", str(path), "--algo", "greedy", "--depth", "2", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["target"] == "col1" and summary["class_names"] == ["0", "1"]


def test_compas_with_a_header_keeps_its_last_column(datasets_dir):
    raw = read_table(datasets_dir / "cp4im" / "compas.csv")
    assert choose_target(list(raw.frame.columns), None, raw) == raw.frame.columns[-1]
