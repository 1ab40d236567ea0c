"""Ordered text columns (issue 46, item 4): levels in a declared order split as
thresholds "risk <= Medium", predicted, saved and exported as the groups they are."""

import json

import numpy as np
import pytest
from test_exports import python_classes, raw_rows, sql_classes

from engine.data.columns import ColumnKind
from engine.data.csv_reader import parse_text
from engine.data.dataset import PrepOptions
from engine.errors import DataError
from engine.export import rules_text
from engine.featurize import prepare
from engine.featurize.ordered import guess_order
from engine.model.schema import validate
from engine.model.tree import Tree
from engine.training import train

LEVELS = ("Low", "Medium", "High", "Very high")


def risk_table(seed=0, n=400, unknown=0.02):
    rng = np.random.default_rng(seed)
    rows = ["risk,amount,bad"]
    for _ in range(n):
        r, a = int(rng.integers(0, 4)), int(rng.integers(0, 100))
        cell = LEVELS[r] if rng.random() > 0.05 else ""
        if rng.random() < unknown:
            cell = "Unknown"
        rows.append(f"{cell},{a},{'yes' if (r >= 2) ^ (rng.random() < 0.1) else 'no'}")
    return parse_text("\n".join(rows) + "\n")


def ordered(raw, **options):
    return prepare(raw, PrepOptions(kinds={"risk": ColumnKind.ORDERED},
                                    orders={"risk": LEVELS}, **options))


def test_the_order_of_common_scales_numbers_and_the_rest_is_guessed():
    assert guess_order(["High", "low", "Medium", "Very high"]) == \
        ["low", "Medium", "High", "Very high"]
    assert guess_order(["often", "never", "always", "sometimes"]) == \
        ["never", "sometimes", "often", "always"]
    assert guess_order(["10-20 years", "2-5 years", "5-10 years"]) == \
        ["2-5 years", "5-10 years", "10-20 years"]
    assert guess_order(["b", "C", "a"]) == ["a", "b", "C"]
    assert guess_order(["High", "Unknown"]) == ["High", "Unknown"]   # not one scale


@pytest.mark.parametrize("missing", ["route", "impute"])
def test_each_cut_between_levels_is_a_threshold_on_their_ranks(missing):
    raw = risk_table()
    data = ordered(raw, missing=missing)
    features = [(j, f) for j, f in enumerate(data.features) if f.column == "risk"]
    routes = 2 if missing == "route" else 1
    assert len(features) == (len(LEVELS) - 1) * routes
    rank = {level: i for i, level in enumerate(LEVELS)}
    cells = raw.frame["risk"]
    for j, f in features:
        assert f.ordered and f.value == LEVELS[:len(f.value)]
        k = len(f.value)
        assert f.condition() == f"risk <= {LEVELS[k - 1]}" + (
            "" if f.missing is None else f" (missing: {'yes' if f.missing else 'no'})")
        assert f.condition(False).startswith(f"risk > {LEVELS[k - 1]}")
        for cell, x in zip(cells, data.X[:, j]):
            if not isinstance(cell, str):
                continue   # missing: the route or the fill decides
            expected = cell in rank and rank[cell] < k   # an unknown value: above all
            assert bool(x) == expected
    assert any("'Unknown', not among its ordered levels" in w for w in data.report.warnings)


def test_an_ordered_tree_predicts_saves_and_exports_as_it_trained():
    raw = risk_table(1)
    data = ordered(raw, binarize="quantile:4")
    tree = train(data, "greedy", {"depth": 2}).tree
    assert any(tree.features[j].ordered for j in tree.feature if j >= 0)
    predicted = [tree.class_names[i] for i in tree.predict_frame(raw.frame)]
    assert python_classes(tree, raw_rows(raw.frame)) == predicted
    assert sql_classes(tree, raw.frame) == predicted
    text = rules_text(tree)
    assert "risk <= " in text or "risk > " in text
    document = json.loads(json.dumps(tree.to_dict()))
    validate(document)
    again = Tree.from_dict(document)
    assert again.features == tree.features
    assert (again.predict_frame(raw.frame) == tree.predict_frame(raw.frame)).all()
    broken = json.loads(json.dumps(document))
    numeric = next(f for f in broken["preprocessing"]["features"] if f["op"] != "in")
    numeric["ordered"] = True
    with pytest.raises(DataError, match="only a group of levels"):
        validate(broken)


def test_an_ordered_column_beats_a_value_group_that_ignores_the_order():
    """Split as thresholds, a tree cannot separate non-neighbouring levels: the test
    splits respect the order (no "risk in {Low, High}")."""
    data = ordered(risk_table(2), binarize="quantile:4")
    tree = train(data, "blossom", {"depth": 2}).tree
    for j in tree.feature[tree.feature >= 0]:
        f = tree.features[j]
        if f.column == "risk":
            assert f.ordered and f.value == LEVELS[:len(f.value)]


def test_the_rules_say_the_order_of_the_levels_they_test():
    data = ordered(risk_table(3), binarize="quantile:4")
    tree = train(data, "greedy", {"depth": 2}).tree
    text = rules_text(tree)
    assert "# risk: levels Low < Medium < High < any other value" in text


def test_the_command_line_declares_an_ordered_column(tmp_path, capsys):
    from engine.cli import main

    path = tmp_path / "risk.csv"
    path.write_text(risk_table(4).frame.astype(object).fillna("").to_csv(index=False))
    rules = tmp_path / "rules.txt"
    code = main(["fit", str(path), "--algo", "greedy", "--depth", "1", "--ordered",
                 "risk=" + ",".join(LEVELS), "--rules", str(rules)])
    assert code == 0
    assert rules.read_text().startswith("# risk: levels Low < Medium < High")
    assert main(["fit", str(path), "--algo", "greedy", "--depth", "1",
                 "--ordered", "=Low"]) == 2
    assert "give a column name" in capsys.readouterr().err


def test_the_notebook_declares_an_ordered_column():
    from engine.estimators import OptimalTreeClassifier

    frame = risk_table(5).frame
    X, y = frame[["risk", "amount"]], frame["bad"]
    with pytest.warns(UserWarning, match="'Unknown', not among its ordered levels"):
        model = OptimalTreeClassifier("greedy", max_depth=1, binarize="quantile:4",
                                      ordered={"risk": list(LEVELS)}).fit(X, y)
    root = model.tree_.features[model.tree_.feature[0]]
    assert root.ordered and root.column == "risk"
    assert model.get_params()["ordered"] == {"risk": list(LEVELS)}
    with pytest.raises(ValueError, match="ordered takes"):
        OptimalTreeClassifier("greedy", ordered=["risk"]).fit(X, y)
