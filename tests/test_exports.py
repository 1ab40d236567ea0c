"""Exports of a trained tree: rules, Python, SQL, DOT, and the atomic file writer.

The non-negotiable property is the round trip: the exported Python function and the
exported SQL expression predict, on every raw row of the training file (missing
cells included), exactly the class the model predicts through `predict_frame`.
"""

import csv
import functools
import math
import random
import re
import sqlite3

import numpy as np
import pandas as pd
import pytest

from engine.data.columns import ColumnKind
from engine.data.csv_reader import read_table
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.data.features import EQ, LE, MISSING, NUM, Feature
from engine.data.preprocessing import InputColumn, Preprocessing
from engine.errors import DataError, ParameterError
from engine.export import WRITERS, write_export, write_predictions
from engine.export.dot import to_dot
from engine.export.python_code import to_python
from engine.export.rules import flat_rules, nested_rules, rule_list_text
from engine.export.sql import number, to_sql
from engine.export.walk import columns_used, split
from engine.model.tree import Tree
from engine.training import train

from conftest import SAMPLES, dataset_files

ROUND_TRIP_FILES = dataset_files("odd", "inferdt", suffix=".csv")


# ------------------------------------------------------------------ helpers
def _cell(value):
    """A raw frame cell as str or None (NaN also counts as missing)."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) \
        else value


def raw_rows(frame: pd.DataFrame) -> list[dict]:
    return [{name: _cell(v) for name, v in zip(frame.columns, values)}
            for values in frame.itertuples(index=False, name=None)]


def model_classes(tree: Tree, frame: pd.DataFrame) -> list[str]:
    return [tree.class_names[i] for i in tree.predict_frame(frame)]


def python_predict(tree: Tree, function_name: str = "predict"):
    namespace: dict = {}
    exec(compile(to_python(tree, function_name), "<orchard export>", "exec"), namespace)
    return namespace[function_name]


def python_classes(tree: Tree, rows: list[dict]) -> list[str]:
    predict = python_predict(tree)
    return [predict(row) for row in rows]


def sql_classes(tree: Tree, frame: pd.DataFrame) -> list[str]:
    """Run the SQL export on an in-memory SQLite copy of the raw table."""
    numeric = {c.name for c in tree.prep.columns if c.numeric}
    con = sqlite3.connect(":memory:")
    quoted = ['"' + str(name).replace('"', '""') + '"' for name in frame.columns]
    types = ["REAL" if name in numeric else "TEXT" for name in frame.columns]
    con.execute(f"CREATE TABLE t ({', '.join(f'{q} {t}' for q, t in zip(quoted, types))})")
    rows = [[None if v is None else float(v) if name in numeric else str(v)
             for name, v in row.items()] for row in raw_rows(frame)]
    con.executemany(f"INSERT INTO t VALUES ({', '.join('?' * len(quoted))})", rows)
    result = [r[0] for r in con.execute(f"SELECT {to_sql(tree)} FROM t ORDER BY rowid")]
    con.close()
    return result


@functools.cache
def trained(path, binarize: str):
    raw = read_table(path)
    data = prepare(raw, PrepOptions(binarize=binarize))
    return raw.frame, train(data, "greedy", {"depth": 4}).tree


# ------------------------------------------------- round trips on real data
@pytest.mark.skipif(not ROUND_TRIP_FILES, reason="the shared datasets folder is absent")
@pytest.mark.parametrize("binarize", ["none", "quantile:4"])
@pytest.mark.parametrize("path", ROUND_TRIP_FILES,
                         ids=[f"{p.parent.name}/{p.stem}" for p in ROUND_TRIP_FILES])
def test_python_and_sql_exports_round_trip_on_datasets(path, binarize):
    frame, tree = trained(path, binarize)
    assert tree.n_leaves > 1
    expected = model_classes(tree, frame)
    assert python_classes(tree, raw_rows(frame)) == expected
    assert sql_classes(tree, frame) == expected


# ------------------------------------------- awkward names, values, missing cells
SIZE = 'size "cm"'
OWNERS = ["Smith", "O'Brien", "Lee", "Nguyen"]


def write_awkward_csv(path):
    """Rows whose class depends on an O'Brien owner, a missing age, member and size."""
    rng = random.Random(7)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["age", "owner", SIZE, "member", "class"])
        for _ in range(160):
            age = None if rng.random() < 0.15 else rng.randint(18, 80)
            owner = None if rng.random() < 0.1 else rng.choice(OWNERS)
            size = None if rng.random() < 0.1 else round(rng.uniform(0, 100), 1)
            member = None if rng.random() < 0.1 else rng.choice(["yes", "no"])
            if owner == "O'Brien" or age is None:
                cls = "buy"
            elif member == "yes" and (size or 0) > 50:
                cls = "buy"
            else:
                cls = "skip"
            out.writerow(["" if age is None else age, "NA" if owner is None else owner,
                          "?" if size is None else size, "" if member is None else member,
                          cls])


@pytest.fixture
def awkward(tmp_path):
    path = tmp_path / "awkward.csv"
    write_awkward_csv(path)
    return read_table(path)


@pytest.mark.parametrize("binarize", ["none", "quantile:4"])
@pytest.mark.parametrize("missing", ["drop", "impute", "indicator"])
def test_round_trip_with_quotes_and_missing_cells(awkward, missing, binarize):
    frame = awkward.frame
    assert frame[SIZE].isna().any() and frame["owner"].isna().any()
    assert "O'Brien" in set(frame["owner"])
    data = prepare(awkward, PrepOptions(missing=missing, binarize=binarize))
    tree = train(data, "greedy", {"depth": 4}).tree
    used = {c.name for c in columns_used(tree)}
    assert {"owner", SIZE, "member"} <= used
    expected = model_classes(tree, frame)
    assert len(set(expected)) == 2
    assert python_classes(tree, raw_rows(frame)) == expected
    assert sql_classes(tree, frame) == expected
    sql = to_sql(tree)
    assert "'O''Brien'" in sql and '"size ""cm"""' in sql
    if missing == "indicator":
        assert any(tree.features[f].op == MISSING for f in tree.feature if f >= 0)
        assert "IS NULL" in sql


def test_python_export_reads_raw_values_as_the_reader_does(awkward):
    """Numbers, blanks around text, NaN and missing markers mean what read_table makes of them."""
    frame = awkward.frame
    data = prepare(awkward, PrepOptions(missing="indicator"))
    tree = train(data, "greedy", {"depth": 4}).tree
    predict = python_predict(tree, "classify")
    expected = model_classes(tree, frame)
    numeric = {c.name for c in tree.prep.columns if c.numeric}
    variants = [
        lambda name, v: float("nan") if v is None else (float(v) if name in numeric else v),
        lambda name, v: "?" if v is None else f"  {v} ",
        lambda name, v: "" if v is None else (v.replace(".", ",") if name in numeric else v),
    ]
    for variant in variants:
        rows = [{name: variant(name, v) for name, v in row.items()} for row in raw_rows(frame)]
        assert [predict(row) for row in rows] == expected
    row = {"age": None, "owner": "Smith", SIZE: "60", "member": "no"}
    for missing in ("NAN", np.float32("nan"), " - ", "\t"):
        assert predict({**row, "age": missing}) == predict(row)
    with pytest.raises(KeyError, match="lacks the column"):
        predict({"age": "3"})


def test_export_of_missing_indicator_only_fires_on_missing_cells(awkward):
    data = prepare(awkward, PrepOptions(missing="indicator"))
    tree = train(data, "greedy", {"depth": 4}).tree
    predict = python_predict(tree)
    # a complete Smith row vs. the same row with a missing age: the data says buy
    row = {"age": "30", "owner": "Smith", SIZE: "10", "member": "no"}
    assert predict(row) == "skip"
    assert predict({**row, "age": None}) == "buy"
    assert predict({**row, "owner": "O'Brien"}) == "buy"


def test_function_name_is_checked():
    tree = hand_tree()
    assert "def decide(row):" in to_python(tree, "decide")
    for bad in ("class", "2fast", "a-b", "_private", "re", "MISSING_MARKERS"):
        with pytest.raises(ParameterError):
            to_python(tree, bad)


def test_sql_numbers_read_back_exactly_in_sqlite():
    values = [0.67852962, -1040.4475099, 2.45, 37.5, 3.0, 1e20, 1e-7, 17.75472918]
    con = sqlite3.connect(":memory:")
    got = con.execute("SELECT " + ", ".join(number(v) for v in values)).fetchone()
    assert list(got) == values
    assert number(3.0) == "3.0" and number(37.5) == "37.5"


# --------------------------------------------------------- a hand-built tree
def hand_prep() -> Preprocessing:
    columns = [InputColumn("age", ColumnKind.NUMERIC, 35.0),
               InputColumn("colour", ColumnKind.CATEGORICAL, "red")]
    features = [Feature("age", NUM), Feature("age", LE, 50.0),
                Feature("colour", EQ, "red"), Feature("colour", EQ, "blue")]
    return Preprocessing("class", ["no", "yes"], columns, features, "impute", "none")


def hand_tree() -> Tree:
    """age <= 30 ? no : age <= 40 ? (colour = red ? (colour = blue ? <empty> : no) : yes)
                              : (age <= 50 ? yes : (colour = blue ? yes : no))."""
    leaves = {1: [10, 0], 5: [1, 4], 8: [0, 6], 9: [3, 0], 10: [0, 0], 11: [2, 1],
              12: [0, 3]}
    feature = [0, -1, 0, 2, 1, -1, 3, 3, -1, -1, -1, -1, -1]
    threshold = [30, 0, 40, 0.5, 0.5, 0, 0.5, 0.5, 0, 0, 0, 0, 0]
    left = [1, -1, 3, 5, 7, -1, 9, 11, -1, -1, -1, -1, -1]
    right = [2, -1, 4, 6, 8, -1, 10, 12, -1, -1, -1, -1, -1]
    value = np.zeros((13, 2))
    for node in range(12, -1, -1):  # children have larger indices than parents
        value[node] = leaves[node] if left[node] < 0 else value[left[node]] + value[right[node]]
    return Tree.from_arrays(feature, threshold, left, right, value, hand_prep())


def test_flat_rules_simplify_conditions_along_a_path():
    rules = {tuple(rule.conditions): rule for rule in flat_rules(hand_tree())}
    assert set(rules) == {
        ("age <= 30",),
        ("age > 30", "age <= 40", "colour != red"),
        ("age > 30", "age <= 40", "colour = red"),                 # != blue is implied
        ("age > 30", "age <= 40", "colour = red", "colour = blue"),  # empty leaf
        ("age > 40", "age <= 50"),                                   # age > 30 dropped
        ("age > 50", "colour != blue"),                              # age > 30, > 40 dropped
        ("age > 50", "colour = blue"),
    }
    rule = rules[("age > 40", "age <= 50")]
    assert (rule.class_name, rule.weight, rule.support, rule.confidence) == ("yes", 6, 0.2, 1)
    rule = rules[("age > 50", "colour != blue")]
    assert (rule.class_name, rule.weight) == ("no", 3)
    assert rule.support == pytest.approx(0.1) and rule.confidence == pytest.approx(2 / 3)
    empty = rules[("age > 30", "age <= 40", "colour = red", "colour = blue")]
    assert (empty.class_name, empty.weight, empty.support, empty.confidence) == ("no", 0, 0, 0)


def test_rule_list_is_sorted_by_support():
    lines = rule_list_text(hand_tree()).splitlines()
    assert lines[0] == "IF age <= 30 THEN no  [support 33.3%, confidence 100.0%]"
    assert lines[1] == "IF age > 40 AND age <= 50 THEN yes  [support 20.0%, confidence 100.0%]"
    supports = [float(re.search(r"support ([\d.]+)%", line).group(1)) for line in lines]
    assert len(lines) == 7 and supports == sorted(supports, reverse=True)


def test_nested_rules_text():
    text = nested_rules(hand_tree())
    lines = text.splitlines()
    assert lines[:3] == ["if age <= 30:", "    -> no  (n=10, 100% of node)",
                         "else:  # age > 30"]
    assert "        if colour = red:" in lines
    assert "                -> no  (n=0)" in lines
    assert "            -> yes  (n=5, 80% of node)" in lines
    assert text.count("->") == 7


def test_hand_tree_exports_agree_with_the_model_at_thresholds():
    tree = hand_tree()
    ages = [None, "20", "30", "30.0000001", "35", "40", "45", "50", "50.5", "90"]
    colours = [None, "red", "blue", "green"]
    frame = pd.DataFrame([[a, c] for a in ages for c in colours], columns=["age", "colour"],
                         dtype=object)
    expected = model_classes(tree, frame)
    assert set(expected) == {"yes", "no"}
    assert python_classes(tree, raw_rows(frame)) == expected
    assert sql_classes(tree, frame) == expected


def test_binary_split_with_threshold_outside_unit_interval_is_transparent():
    """Both outcomes of `colour = red` with threshold 1.5 go left: exports skip the test."""
    prep = hand_prep()
    tree = Tree.from_arrays([2, 0, -1, -1, -1], [1.5, 30, 0, 0, 0], [1, 3, -1, -1, -1],
                            [2, 4, -1, -1, -1],
                            [[4, 6], [4, 6], [0, 0], [4, 0], [0, 6]], prep)
    assert split(tree, 0).if_true == split(tree, 0).if_false == 1
    rules = flat_rules(tree)
    assert [r.conditions for r in rules] == [["age <= 30"], ["age > 30"]]
    assert sum(r.support for r in rules) == pytest.approx(1)
    frame = pd.DataFrame({"age": ["10", "40", None], "colour": ["red", "blue", None]},
                         dtype=object)
    assert python_classes(tree, raw_rows(frame)) == model_classes(tree, frame) \
        == ["no", "yes", "yes"]
    assert sql_classes(tree, frame) == model_classes(tree, frame)
    assert 'label="always"' in to_dot(tree) and 'label="never"' in to_dot(tree)


def test_single_leaf_tree_exports():
    tree = Tree.leaf(np.array([3.0, 1.0]), hand_prep())
    assert python_predict(tree)({}) == "no"
    assert sqlite3.connect(":memory:").execute(f"SELECT {to_sql(tree)}").fetchone() == ("no",)
    assert nested_rules(tree) == "-> no  (n=4, 75% of node)\n"
    assert rule_list_text(tree) == "IF TRUE THEN no  [support 100.0%, confidence 75.0%]\n"
    assert len(re.findall(r"^  \d+ \[label=", to_dot(tree), flags=re.M)) == 1


# -------------------------------------------------------- readable rule texts
@pytest.mark.parametrize("missing", ["impute", "indicator"])
def test_rules_on_a_trained_tree_are_readable_and_consistent(awkward, missing):
    data = prepare(awkward, PrepOptions(missing=missing, binarize="quantile:4"))
    tree = train(data, "greedy", {"depth": 4}).tree
    rules = flat_rules(tree)
    assert len(rules) == tree.n_leaves
    assert sum(r.support for r in rules) == pytest.approx(1)
    assert sum(r.weight for r in rules) == pytest.approx(data.w.sum())
    assert all(0 <= r.confidence <= 1 and r.class_name in ("buy", "skip") for r in rules)
    for text in (nested_rules(tree), rule_list_text(tree)):
        assert not re.search(r"\bf\d+\b", text)
        assert "O'Brien" in text and SIZE in text
    assert len(rule_list_text(tree).splitlines()) == len(rules)


# ---------------------------------------------------------------------- DOT
def test_dot_output_is_basic_valid_dot(awkward):
    data = prepare(awkward, PrepOptions(missing="indicator"))
    tree = train(data, "greedy", {"depth": 4}).tree
    dot = to_dot(tree)
    assert dot.startswith("digraph")
    strings = re.compile(r'"(?:[^"\\]|\\.)*"')
    outside = strings.sub("", dot)
    assert '"' not in outside  # every quote is inside a properly escaped string
    assert outside.count("{") == outside.count("}") == 1
    assert outside.rstrip().endswith("}")
    nodes = re.findall(r"^  (\d+) \[label=", dot, flags=re.M)
    assert sorted(map(int, nodes)) == list(range(tree.n_nodes))
    edges = re.findall(r"^  (\d+) -> (\d+) \[label=", dot, flags=re.M)
    assert len(edges) == 2 * (tree.n_nodes - tree.n_leaves)
    assert r'size \"cm\"' in dot  # the column name with its quotes, escaped
    root = re.search(r'^  0 \[label="([^\n]*?)"\];', dot, flags=re.M).group(1)
    assert root.startswith(split(tree, 0).test.text())
    assert f"n={len(data.y)}" in root


def test_dot_escapes_backslashes_and_line_breaks():
    prep = Preprocessing("class", ["a\\b", 'say "hi"\nnow'],
                         [InputColumn("x", ColumnKind.NUMERIC, 1.0)],
                         [Feature("x", NUM)], "impute", "none")
    tree = Tree.from_arrays([0, -1, -1], [0.5, 0, 0], [1, -1, -1], [2, -1, -1],
                            [[1, 1], [1, 0], [0, 1]], prep)
    dot = to_dot(tree)
    assert r'label="a\\b\nn=1 (a\\b 1)"' in dot
    assert r'label="say \"hi\"\nnow\nn=1' in dot
    assert len(dot.splitlines()) == 3 + 3 + 2 + 1


# ---------------------------------------------------------------- writing
def test_write_export_writes_each_kind(tmp_path):
    tree = hand_tree()
    renderers = {"python": to_python, "sql": to_sql, "dot": to_dot}
    for kind, render in renderers.items():
        path = tmp_path / f"tree.{kind}"
        write_export(tree, path, kind)
        assert path.read_text(encoding="utf-8") == render(tree)
    write_export(tree, tmp_path / "tree.txt", "rules")
    text = (tmp_path / "tree.txt").read_text(encoding="utf-8")
    assert nested_rules(tree) in text and rule_list_text(tree) in text
    write_export(tree, tmp_path / "tree.json", "json")
    loaded = Tree.load(tmp_path / "tree.json")
    assert loaded.to_dict() == tree.to_dict()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["tree.python", "tree.sql", "tree.dot", "tree.txt", "tree.json"])
    with pytest.raises(ParameterError, match="Unknown export"):
        write_export(tree, tmp_path / "x", "pdf")


def test_failing_writer_leaves_nothing_behind(tmp_path, monkeypatch):
    tree = hand_tree()

    def half_then_fail(tree, path):
        path.write_text("def predict(row):\n    ret", encoding="utf-8")
        raise RuntimeError("disk on fire")

    monkeypatch.setitem(WRITERS, "python", half_then_fail)
    target = tmp_path / "model.py"
    with pytest.raises(RuntimeError, match="disk on fire"):
        write_export(tree, target, "python")
    assert list(tmp_path.iterdir()) == []
    target.write_text("previous export\n")
    with pytest.raises(RuntimeError):
        write_export(tree, target, "python")
    assert list(tmp_path.iterdir()) == [target]
    assert target.read_text() == "previous export\n"


def test_unwritable_folder_is_a_clear_error(tmp_path):
    with pytest.raises(DataError, match="Cannot write"):
        write_export(hand_tree(), tmp_path / "no such folder" / "t.sql", "sql")


def test_write_predictions_writes_a_one_column_csv(tmp_path):
    path = tmp_path / "p.csv"
    write_predictions(path, ["no", "yes", 'big, "red"'], "play")
    assert path.read_text(encoding="utf-8") == 'play\nno\nyes\n"big, ""red"""\n'
    with open(path, newline="", encoding="utf-8") as handle:
        assert list(csv.reader(handle)) == [["play"], ["no"], ["yes"], ['big, "red"']]
    assert list(tmp_path.iterdir()) == [path]


@pytest.mark.parametrize("rows", [
    [("-inf", "a"), ("5", "b"), ("?", "b")] * 3,
    [("inf", "a")] * 3 + [("2", "b"), ("?", "a"), ("-inf", "b")] * 2,
    [("inf", "a"), ("-inf", "b"), ("inf", "a"), ("?", "b")] * 3,
    [("inf", "a"), ("-inf", "b"), ("1", "a"), ("2", "b"), ("0", "b"), ("?", "a")] * 3,
])
def test_infinite_cells_export_exactly_to_sql_and_python(rows):
    """Issue 19: an infinite threshold or fill value crashed the SQL export."""
    import math
    import sqlite3

    import pandas as pd

    from engine.data.csv_reader import parse_text
    from engine.data.dataset import PrepOptions
    from engine.featurize import prepare
    from engine.export.python_code import to_python
    from engine.export.sql import to_sql
    from engine.training import train

    raw = parse_text("x,class\n" + "".join(f"{v},{c}\n" for v, c in rows))
    tree = train(prepare(raw, PrepOptions()), "greedy", {"depth": 2}).tree
    values = [math.inf, -math.inf, 1.0, 2.0, 5.0, None, 1e308, -1e308, 0.0]
    frame = pd.DataFrame({"x": [None if v is None else repr(v) for v in values]},
                         dtype=object)
    expected = [tree.class_names[i] for i in tree.predict_frame(frame)]
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE TABLE d (x REAL)")
    connection.executemany("INSERT INTO d VALUES (?)", [(v,) for v in values])
    assert [row[0] for row in connection.execute(
        f"SELECT {to_sql(tree)} FROM d ORDER BY rowid")] == expected
    namespace: dict = {}
    exec(to_python(tree), namespace)
    assert [namespace["predict"]({"x": v}) for v in values] == expected


def test_write_all_is_all_or_nothing_and_names_the_users_files(tmp_path):
    """Several outputs: each writer gets a temporary file of its target's very name
    (an image takes its format and title from it); one failing leaves nothing, and its
    own error names the user's file, not the temporary one."""
    from engine.errors import OrchardError
    from engine.export.files import write_all

    seen = []

    def text(path):
        seen.append(path)
        path.write_text("ok")

    def picture_fails(path):
        raise OrchardError(f"Could not write the PNG '{path}'.")

    first, second = tmp_path / "model.json", tmp_path / ("b" * 250 + ".png")
    with pytest.raises(OrchardError) as error:
        write_all([(first, text), (second, picture_fails)])
    assert str(error.value) == f"Could not write the PNG '{second}'."
    assert seen[0].name == "model.json" and seen[0].parent != tmp_path
    assert list(tmp_path.iterdir()) == []
    write_all([(first, text), (second, text)])
    assert sorted(tmp_path.iterdir()) == sorted([first, second])


def test_rules_name_every_value_of_a_value_group():
    """Rules are applied by hand: "city in {city17, city19, city11, city15, … and 6
    more}" could not be, and a rule copied from the window was the same."""
    from engine.data.csv_reader import parse_text

    rng = np.random.default_rng(0)
    cells = rng.choice([f"city{i}" for i in range(20)], 400)
    text = "city,y\n" + "".join(f"{c},{'a' if int(c[4:]) % 2 else 'b'}\n" for c in cells)
    data = prepare(parse_text(text), PrepOptions())
    tree = train(data, "greedy", {"depth": 1}).tree
    group = tree.features[tree.feature[0]].value
    assert len(group) > 4
    for text in (nested_rules(tree), rule_list_text(tree)):
        assert "more}" not in text
        listed = re.findall(r"\{([^}]*)\}", text)
        assert listed and all(set(v.split(", ")) == set(group) for v in listed)


def test_rules_of_a_class_weighted_tree_say_weight_not_n():
    """"n=102.666" read as a row count; under class weights it is a weight."""
    weighted = prepare(read_table(SAMPLES / "loans.csv"),
                       PrepOptions(class_weight="approved=1,declined=1.37"))
    text = nested_rules(train(weighted, "greedy", {"depth": 2}).tree)
    assert "weight=" in text and "n=" not in text
    plain = prepare(read_table(SAMPLES / "loans.csv"))
    text = nested_rules(train(plain, "greedy", {"depth": 2}).tree)
    assert "n=" in text and "weight=" not in text
