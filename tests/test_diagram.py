"""The Diagram model and its exports: structure, prediction, JSON, rules, Python, SQL, DOT.

As for trees, the property that matters is that the exported Python function and SQL
expression predict, on every raw training row (missing cells included), exactly the
class `Diagram.predict_frame` gives, multivariate tests and ties included.
"""

import json
import re
import sqlite3

import numpy as np
import pandas as pd
import pytest
from conftest import DATASETS
from test_exports import raw_rows, write_awkward_csv

from engine.data.csv_reader import parse_text, read_table
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.errors import DataError, ParameterError
from engine.export import DIAGRAM_WRITERS, model_rules, write_export
from engine.export.diagram import (
    count_paths,
    diagram_dot,
    diagram_python,
    diagram_rules,
    diagram_sql,
    paths,
)
from engine.model import Diagram, Tree, load_model
from engine.solvers.odd.milp import wait_idle
from engine.training import train

TABLE = """age,colour,member,spend,y
23,red,yes,120,no
35,blue,no,340,yes
,green,yes,90,no
52,red,no,410,yes
40,blue,yes,60,no
61,,no,300,yes
33,red,yes,220,yes
28,blue,no,150,no
44,green,,380,yes
40,red,no,200,no
"""


@pytest.fixture
def data():
    return prepare(parse_text(TABLE), PrepOptions(target="y", missing="indicator"))


def feature(data, text: str) -> int:
    names = [f.condition(True) if f.binary else f.column for f in data.features]
    return names.index(text)


def hand_diagram(data) -> Diagram:
    """Three layers, a shared node, a long arc, a multivariate and a constant test.

    node 0: age <= 40 ? node 1 : node 2
    node 1: 0.5*age - 2*[age is missing] + 3*[colour = red] <= 20 ? node 3 : yes
    node 2: member = yes ? node 4 : node 3          (binary feature, threshold 0.5)
    node 3: spend <= 200 ? no : yes                 (shared by nodes 1 and 2)
    node 4: always left -> yes
    """
    F = data.n_features
    weights = np.zeros((5, F))
    weights[1, feature(data, "age")] = 0.5
    weights[1, feature(data, "colour = red")] = 3.0
    weights[1, feature(data, "age is missing")] = -2.0
    no, yes = 5, 6
    return Diagram.build(
        layer=[0, 1, 1, 2, 2],
        feature=[feature(data, "age"), -1, feature(data, "member = yes"),
                 feature(data, "spend"), -1],
        weights=weights, threshold=[40.0, 20.0, 0.5, 200.0, 0.0],
        left=[1, 3, 3, no, yes], right=[2, yes, 4, yes, no],
        prep=data.prep, X=data.X, y=data.y, w=data.w)


def reference_predict(data, row) -> str:
    """The hand diagram written out by hand, on one prepared feature row."""
    x = dict(zip([f.condition(True) if f.binary else f.column for f in data.features], row))
    if x["age"] <= 40:
        if 0.5 * x["age"] + 3 * x["colour = red"] - 2 * x["age is missing"] <= 20:
            return "no" if x["spend"] <= 200 else "yes"
        return "yes"
    if x["member = yes"] > 0.5:
        return "yes"
    return "no" if x["spend"] <= 200 else "yes"


# ------------------------------------------------------------------ model
def test_structure_of_a_hand_diagram(data):
    d = hand_diagram(data)
    assert d.layers == [[0], [1, 2], [3, 4]] and d.depth == 3
    assert d.children(2) == (3, 4) and d.is_terminal(5) and d.label(6) == 1
    assert d.n_leaves == 5 and d.terminals_used == [5, 6] and d.n_nodes == 7
    assert d.branch_conditions(0) == ("age <= 40", "age > 40")
    assert d.branch_conditions(2) == ("member != yes", "member = yes")
    assert d.branch_conditions(1)[0] == "0.5*age - 2*[age is missing] + 3*[colour = red] <= 20"
    assert d.branch_conditions(4) == ("always", "never")
    assert d.value[0].sum() == len(data.y)
    assert d.value[5].sum() + d.value[6].sum() == len(data.y)
    x = {name: data.X[:, feature(data, name)] for name in ("age", "member = yes")}
    shared = ((x["age"] <= 40) & (d.projection(1, data.X) <= 20)) | (
        (x["age"] > 40) & (x["member = yes"] < 0.5))
    assert d.value[3].sum() == shared.sum() > 0


def test_predict_matches_a_hand_written_reference(data):
    d = hand_diagram(data)
    expected = [reference_predict(data, row) for row in data.X]
    assert [d.class_names[c] for c in d.predict(data.X)] == expected
    assert d.error(data.X, data.y) == sum(e != data.class_names[c]
                                          for e, c in zip(expected, data.y))


def test_json_round_trip_and_load_model(data, tmp_path):
    d = hand_diagram(data)
    path = tmp_path / "d.json"
    d.save(path)
    again = load_model(path)
    assert isinstance(again, Diagram) and again.to_dict() == d.to_dict()
    np.testing.assert_array_equal(again.predict(data.X), d.predict(data.X))
    assert Diagram.load(path).to_dict() == d.to_dict()
    assert json.loads(path.read_text())["format"] == "orchard-diagram"
    tree = train(data, "greedy", {"depth": 2}).tree
    tree.save(tmp_path / "t.json")
    assert isinstance(load_model(tmp_path / "t.json"), Tree)
    with pytest.raises(DataError, match="holds a tree"):
        Diagram.load(tmp_path / "t.json")
    (tmp_path / "bad.json").write_text('{"format": "other"}')
    for bad in ("bad.json", "missing.json"):
        with pytest.raises(DataError):
            load_model(tmp_path / bad)


# ---------------------------------------------------------------- exports
def python_classes(diagram, frame: pd.DataFrame) -> list[str]:
    namespace: dict = {}
    exec(compile(diagram_python(diagram), "<diagram export>", "exec"), namespace)
    return [namespace["predict"](row) for row in raw_rows(frame)]


def sql_classes(diagram, frame: pd.DataFrame) -> list[str]:
    numeric = {c.name for c in diagram.prep.columns if c.numeric}
    con = sqlite3.connect(":memory:")
    quoted = ['"' + str(name).replace('"', '""') + '"' for name in frame.columns]
    kinds = ["REAL" if name in numeric else "TEXT" for name in frame.columns]
    con.execute(f"CREATE TABLE t ({', '.join(f'{q} {k}' for q, k in zip(quoted, kinds))})")
    rows = [[None if v is None else float(v) if name in numeric else str(v)
             for name, v in row.items()] for row in raw_rows(frame)]
    con.executemany(f"INSERT INTO t VALUES ({', '.join('?' * len(quoted))})", rows)
    result = [r[0] for r in con.execute(f"SELECT {diagram_sql(diagram)} FROM t ORDER BY rowid")]
    con.close()
    return result


def assert_exports_agree(diagram, frame: pd.DataFrame) -> None:
    expected = [diagram.class_names[c] for c in diagram.predict_frame(frame)]
    assert python_classes(diagram, frame) == expected
    assert sql_classes(diagram, frame) == expected


def test_hand_diagram_exports_agree_with_the_model_at_ties(data):
    frame = parse_text(TABLE).frame
    d = hand_diagram(data)
    # rows on the threshold: two ages of 40 and the missing age, filled with the median 40
    assert (data.X[:, feature(data, "age")] == 40).sum() == 3
    assert_exports_agree(d, frame)
    # rows exactly on the multivariate threshold 20: 0.5*34 + 3*1 = 20
    tie = pd.DataFrame({"age": ["34"], "colour": ["red"], "member": ["no"],
                        "spend": ["250"], "y": ["no"]})
    assert d.predict_frame(tie).tolist() == [d.class_names.index("yes")]
    assert_exports_agree(d, tie)


@pytest.fixture(scope="module")
def awkward(tmp_path_factory):
    path = tmp_path_factory.mktemp("awkward") / "awkward.csv"
    write_awkward_csv(path)
    return read_table(path)


@pytest.mark.parametrize("missing,binarize,split,milp", [
    ("indicator", "none", "multivariate", True),
    ("impute", "quantile:4", "univariate", False),
    ("drop", "none", "univariate", True),
])
def test_trained_diagram_exports_round_trip(awkward, missing, binarize, split, milp):
    data = prepare(awkward, PrepOptions(missing=missing, binarize=binarize))
    result = train(data, "odd", {"depth": 3, "split": split, "milp": milp,
                                 "heuristic_time": 0.3, "restarts": 20}, time_limit=2)
    wait_idle(30)
    assert result.tree.n_internal >= 1
    assert_exports_agree(result.tree, awkward.frame)


@pytest.mark.parametrize("name", ["wine", "hepatitis"])
def test_multivariate_exports_round_trip_on_datasets(name):
    path = DATASETS / "odd" / f"{name}.csv"
    if not path.exists():
        pytest.skip("the shared datasets folder is absent")
    raw = read_table(path)
    data = prepare(raw, PrepOptions())
    result = train(data, "odd", {"depth": 2, "split": "multivariate", "heuristic_time": 0.3,
                                 "restarts": 10}, time_limit=2)
    wait_idle(30)
    assert_exports_agree(result.tree, raw.frame)


def test_rules_list_nodes_and_one_rule_per_path(data):
    d = hand_diagram(data)
    text = diagram_rules(d)
    listed = list(paths(d))
    assert count_paths(d) == len(listed) == 6  # node 4 decides nothing: one way through it
    rules = [line for line in text.splitlines() if line.startswith("IF ")]
    assert len(rules) == len(listed)
    assert "node 2 (n=3): if member = yes -> node 4 else -> node 3" in text
    assert "node 4 (n=0): -> class yes (no test)" in text
    assert "IF age <= 40 AND 0.5*age - 2*[age is missing] + 3*[colour = red] > 20 THEN yes" \
        in rules
    assert "IF age > 40 AND member = yes THEN yes" in rules
    for conditions, terminal in listed:
        assert d.is_terminal(terminal)
    assert model_rules(d) == text


def test_dot_has_every_node_and_edge(data):
    d = hand_diagram(data)
    dot = diagram_dot(d)
    assert dot.startswith("digraph diagram {") and dot.rstrip().endswith("}")
    nodes = re.findall(r"^  (\d+) \[label=", dot, flags=re.MULTILINE)
    assert sorted(map(int, nodes)) == list(range(d.n_internal)) + d.terminals_used
    edges = re.findall(r"^  (\d+) -> (\d+) \[label=", dot, flags=re.MULTILINE)
    assert len(edges) == 2 * d.n_internal - 1  # the constant node has one way out
    assert ("3", "5") in edges and ("1", "3") in edges and ("2", "3") in edges


def test_write_export_dispatches_on_the_model(data, tmp_path):
    d = hand_diagram(data)
    for kind in DIAGRAM_WRITERS:
        write_export(d, tmp_path / f"d.{kind}", kind)
    assert (tmp_path / "d.python").read_text() == diagram_python(d)
    assert (tmp_path / "d.sql").read_text() == diagram_sql(d)
    assert load_model(tmp_path / "d.json").to_dict() == d.to_dict()
    with pytest.raises(ParameterError, match="Unknown export"):
        write_export(d, tmp_path / "x", "pdf")
