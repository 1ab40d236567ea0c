"""Class weights: parsed in one sentence, applied as row weights in `prepare`, and
every exact solver's optimum is the optimum of the weighted error (brute force)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import SAMPLES
from optimal_trees import exhaustive
from sklearn.utils.class_weight import compute_class_weight

from engine.cli import main
from engine.data.class_weights import class_factors, parse_class_weight
from engine.data.csv_reader import parse_text
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.errors import DataError, ParameterError
from engine.training import train


def test_parse_balanced_and_pairs():
    assert parse_class_weight(" Balanced ") == "balanced"
    assert parse_class_weight("yes=5,no=0.5") == {"yes": 5.0, "no": 0.5}
    assert parse_class_weight("a=b=2") == {"a=b": 2.0}   # the last '=' separates


@pytest.mark.parametrize("text", ["yes", "=3", "yes=0", "yes=-1", "yes=nan", "yes=inf",
                                  "yes=x", "yes=2,", ""])
def test_bad_class_weights_are_one_sentence(text):
    with pytest.raises(ParameterError) as error:
        parse_class_weight(text)
    assert str(error.value).count(".") >= 1 and "\n" not in str(error.value)


def test_balanced_is_scikit_learns_definition():
    y = np.array([0, 0, 0, 1, 2, 2])
    expected = compute_class_weight("balanced", classes=np.arange(3), y=y)
    np.testing.assert_allclose(class_factors("balanced", y, ["a", "b", "c"], np.ones(6)),
                               expected)
    # merged duplicates count as the rows they stand for
    merged = class_factors("balanced", np.array([0, 1, 2]), ["a", "b", "c"],
                           np.array([3.0, 1.0, 2.0]))
    np.testing.assert_allclose(merged, expected)


def test_an_unknown_class_is_named():
    with pytest.raises(DataError, match="'maybe'.*its classes: no, yes"):
        class_factors({"maybe": 2.0}, np.array([0, 1]), ["no", "yes"], np.ones(2))


def table(seed: int, n: int = 30, features: int = 4, classes: int = 2) -> str:
    rng = np.random.default_rng(seed)
    X = (rng.random((n, features)) < 0.5).astype(int)
    y = rng.integers(0, classes, n)
    lines = [",".join([f"f{j}" for j in range(features)] + ["class"])]
    lines += [",".join(map(str, row)) + f",c{label}" for row, label in zip(X, y)]
    return "\n".join(lines) + "\n"


def test_prepare_multiplies_rows_by_their_class_weight():
    options = PrepOptions(target="class", class_weight={"c1": 4.0})
    data = prepare(parse_text(table(0)), options)
    np.testing.assert_allclose(data.w, np.where(data.y == 1, 4.0, 1.0))
    np.testing.assert_allclose(data.row_counts, 1.0)
    assert "Rows are weighted by class: c0 × 1, c1 × 4." in data.report.lines()
    merged = prepare(parse_text(table(0)), PrepOptions(target="class", merge_duplicates=True,
                                                       class_weight="balanced"))
    assert merged.row_counts.sum() == 30 and merged.w.sum() == pytest.approx(30)


@pytest.mark.parametrize("algorithm", ["blossom", "dl85", "contree"])
@pytest.mark.parametrize("seed", range(12))
def test_optimal_means_optimal_for_the_weighted_error(algorithm, seed):
    rng = np.random.default_rng(100 + seed)
    classes = int(rng.integers(2, 4))
    weights = {f"c{k}": float(rng.choice([0.5, 1.0, 2.5, 7.0])) for k in range(classes)}
    data = prepare(parse_text(table(seed, classes=classes)),
                   PrepOptions(target="class", class_weight=weights))
    result = train(data, algorithm, {"depth": 2})
    best = exhaustive(np.asarray(data.X, dtype=float), data.y, data.w, data.n_classes, 2)
    assert result.optimal
    assert result.train_error == pytest.approx(best, abs=1e-9)
    assert result.tree.error(data.X, data.y, data.w) == pytest.approx(best, abs=1e-9)


def test_weighting_a_class_changes_the_tree():
    """A rare class ignored without weights is predicted once it weighs enough."""
    text = table(3, n=40)
    plain = prepare(parse_text(text), PrepOptions(target="class"))
    counts = np.bincount(plain.y)
    rare = f"c{int(np.argmin(counts))}"
    weighted = prepare(parse_text(text), PrepOptions(target="class",
                                                     class_weight={rare: 10.0}))
    rare_code = plain.class_names.index(rare)
    before = train(plain, "blossom", {"depth": 1}).tree.predict(plain.X)
    after = train(weighted, "blossom", {"depth": 1}).tree.predict(weighted.X)
    assert (after == rare_code).sum() > (before == rare_code).sum()


def test_cli_reports_balanced_accuracy_and_the_weights(capsys):
    assert main(["fit", str(SAMPLES / "loans.csv"), "--depth", "2", "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert plain["class_weight"] is None and 0 < plain["balanced_accuracy"] <= 1
    assert set(plain["per_class"]) == {"approved", "declined"}
    assert plain["per_class"]["approved"]["support"] == 326
    assert main(["fit", str(SAMPLES / "loans.csv"), "--depth", "2", "--json",
                 "--class-weight", "declined=3"]) == 0
    weighted = json.loads(capsys.readouterr().out)
    assert weighted["class_weight"] == {"approved": 1.0, "declined": 3.0}
    assert weighted["n_rows"] == 600
    assert weighted["per_class"]["declined"]["recall"] > plain["per_class"]["declined"]["recall"]


def test_cli_refuses_a_bad_class_weight_in_one_line(capsys):
    assert main(["fit", str(SAMPLES / "loans.csv"), "--class-weight", "maybe=2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'maybe'" in err and "approved, declined" in err


def test_predict_reports_balanced_accuracy(capsys, tmp_path):
    model = tmp_path / "m.json"
    assert main(["fit", str(SAMPLES / "loans.csv"), "--depth", "2", "--out", str(model),
                 "--json"]) == 0
    fitted = json.loads(capsys.readouterr().out)
    assert main(["predict", str(model), str(SAMPLES / "loans.csv"), "--json"]) == 0
    predicted = json.loads(capsys.readouterr().out)
    assert predicted["balanced_accuracy"] == pytest.approx(fitted["balanced_accuracy"])
    for name, scores in fitted["per_class"].items():
        assert predicted["per_class"][name] == pytest.approx(scores)


def test_guided_thresholds_follow_the_class_weights():
    """The greedy tree whose thresholds `guided` keeps is grown with the class weights,
    so Blossom on these features is never worse than the weighted greedy tree, and the
    weighted greedy tree's own thresholds are among them."""
    from conftest import SAMPLES

    from engine.data.csv_reader import read_table
    raw = read_table(SAMPLES / "loans.csv")
    for weights in ("balanced", "declined=4", "approved=3"):
        numbers = prepare(raw, PrepOptions(binarize="none", class_weight=weights))
        greedy = train(numbers, "greedy", {"depth": 3})
        tree = greedy.tree
        used = {(tree.features[f].column, float(t))
                for f, t in zip(tree.feature, tree.threshold) if f >= 0
                and tree.features[f].op == "num"}
        guided = prepare(raw, PrepOptions(binarize="guided", depth=3, class_weight=weights))
        kept = {(f.column, float(f.value)) for f in guided.features if f.op == "<="}
        assert used <= kept, weights
        best = train(guided, "blossom", {"depth": 3})
        assert best.optimal and best.train_error <= greedy.train_error + 1e-9, weights


def test_a_cost_matrix_of_one_cost_per_true_class_is_exactly_class_weights():
    """Issue 46: a misclassification cost matrix the solvers train on exactly; the
    cheapest tree under the costs is the optimal tree under those class weights."""
    from itertools import product

    from engine.data.class_weights import weights_from_costs
    from engine.errors import ParameterError

    assert weights_from_costs([[0, 5], [1, 0]], ["bad", "good"]) == {"bad": 5.0,
                                                                       "good": 1.0}
    with pytest.raises(ParameterError, match="depending on the class predicted"):
        weights_from_costs([[0, 1, 4], [1, 0, 1], [1, 1, 0]], ["a", "b", "c"])
    with pytest.raises(ParameterError, match="positive numbers"):
        weights_from_costs([[0, 0], [1, 0]], ["a", "b"])
    with pytest.raises(ParameterError, match="2 x 2"):
        weights_from_costs([[0, 1, 1]], ["a", "b"])
    # a leaf's cost under the matrix equals its weighted error under the weights
    costs = [[0, 3, 3], [2, 0, 2], [7, 7, 0]]
    weights = weights_from_costs(costs, ["a", "b", "c"])
    w = np.array([weights[c] for c in "abc"])
    for counts in product(range(4), repeat=3):
        counts = np.array(counts, dtype=float)
        by_cost = [sum(counts[i] * costs[i][j] for i in range(3) if i != j)
                   for j in range(3)]
        by_weight = [(counts * w).sum() - counts[j] * w[j] for j in range(3)]
        assert by_cost == pytest.approx(by_weight)
