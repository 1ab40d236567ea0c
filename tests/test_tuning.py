"""Choosing a tree's size by cross-validation: the rule, the grid, the run, the CLI and
the notebook (`engine.tuning`, `orchard tune`, `orchard.tune`)."""

import json
import time

import numpy as np
import pytest

from engine import evaluation, tuning
from engine.cli import main
from engine.data.csv_reader import read_table
from engine.data.dataset import PrepOptions
from engine.errors import DataError, Interrupted, ParameterError
from engine.evaluation import CrossValidation, Plan
from engine.solvers.monitor import Monitor
from engine.tuning import KEPT, Candidate, Scored, Tuner, candidates, choose

from big_tables import transport_log
from conftest import SAMPLES


def scored(depth, accuracies, leaves, min_leaf=None, folds=None):
    return Scored(Candidate(depth, min_leaf), list(accuracies), list(leaves),
                  folds=len(accuracies) if folds is None else folds)


# ------------------------------------------------------------------ the rule
def test_the_simplest_setting_within_half_a_standard_error_of_the_best_is_chosen():
    rows = [scored(1, [0.70, 0.72, 0.71], [2, 2, 2]),
            scored(2, [0.81, 0.79, 0.82], [4, 4, 4]),     # within 1 SE, not within 1/2
            scored(3, [0.81, 0.80, 0.84], [8, 7, 8]),     # the best mean
            scored(4, [0.80, 0.81, 0.83], [15, 14, 16]),  # within 1/2 SE, more leaves
            scored(5, [0.82, 0.80, 0.82], [6, 6, 6])]     # within 1/2 SE, fewer leaves
    se = np.std([0.81, 0.80, 0.84], ddof=1) / np.sqrt(3)
    assert rows[2].standard_error == pytest.approx(se)
    assert rows[2].mean - se <= rows[1].mean < rows[2].mean - se / 2 <= rows[4].mean
    assert choose(rows) == (2, 4)                 # the default rule: half an error
    assert choose(rows, errors=1.0) == (2, 1)     # Breiman's one-standard-error rule
    assert choose(rows[:4]) == (2, 2)


def test_a_setting_just_outside_the_rule_is_not_chosen():
    rows = [scored(2, [0.70, 0.70, 0.70], [4, 4, 4]),
            scored(3, [0.80, 0.82, 0.84], [8, 8, 8])]
    assert choose(rows) == (1, 1)


def test_ties_go_to_fewer_leaves_then_the_smaller_depth_then_the_larger_least_leaf():
    rows = [scored(3, [0.8, 0.8], [6, 6], min_leaf=1),
            scored(2, [0.8, 0.8], [6, 6], min_leaf=1),
            scored(2, [0.8, 0.8], [6, 6], min_leaf=20),
            scored(4, [0.8, 0.8], [5, 5], min_leaf=1)]
    assert choose(rows)[1] == 3          # fewest leaves first
    assert choose(rows[:3])[1] == 2      # then depth 2, then its larger least leaf


def test_settings_not_scored_on_every_fold_take_no_part():
    rows = [scored(1, [0.9], [2], folds=3),            # one fold of three
            scored(2, [0.6, 0.6, 0.6], [4, 4, 4])]
    assert choose(rows) == (1, 1)
    with pytest.raises(DataError, match="raise the time limit"):
        choose([rows[0]])


# ------------------------------------------------------------------ the grid
def test_a_setting_below_the_majority_class_is_never_chosen_when_another_is_above():
    """Issue 45: the simplest setting within the rule's errors may lie below what
    answering the most frequent class scores; then the simplest one above it wins."""
    rows = [scored(1, [0.74, 0.80, 0.77], [2, 2, 2]),   # within 1 SE, below 0.78
            scored(3, [0.74, 0.80, 0.86], [8, 8, 8])]
    assert choose(rows, errors=1.0) == (1, 0)
    assert choose(rows, majority=0.78, errors=1.0) == (1, 1)
    assert choose(rows, majority=0.9, errors=1.0) == (1, 0)   # none above: the rule


def test_a_choice_below_the_majority_class_says_so(capsys, tmp_path):
    """Noise labels (85% one class): no setting beats answering 'no' for every row on
    validation, and the table, the JSON and the notebook say it in one sentence."""
    rng = np.random.default_rng(2)
    rows = 400
    lines = ["a,b,c,class"] + [
        f"{rng.normal():.3f},{rng.normal():.3f},{rng.integers(0, 50)},"
        f"{'yes' if rng.random() < 0.15 else 'no'}" for _ in range(rows)]
    path = tmp_path / "noise.csv"
    path.write_text("\n".join(lines) + "\n")
    assert main(["tune", str(path), "--algo", "greedy", "--depths", "3,4,5",
                 "--min-leaf", "1", "--leaf-cost", "0", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    tuning = summary["tuning"]
    chosen = tuning["candidates"][tuning["chosen"]]
    assert chosen["mean_accuracy"] < tuning["majority_accuracy"]
    assert "majority class" in tuning["note"] and tuning["note"].count(". ") == 0
    assert main(["tune", str(path), "--algo", "greedy", "--depths", "3,4,5",
                 "--min-leaf", "1", "--leaf-cost", "0"]) == 0
    assert "No setting predicted the validation rows better than the majority" in \
        capsys.readouterr().out


def test_the_default_depths_reach_a_tuned_cart_s_where_the_algorithm_can():
    """Issue 45: greedy and the hybrid (auto beyond 6) try the depths a tuned CART
    reaches; the exact searches stop at 6."""
    depths = {a: sorted({c.depth for c in candidates(a)})
              for a in ("greedy", "auto", "hybrid", "blossom", "contree")}
    assert depths["greedy"] == [1, 2, 3, 4, 5, 6, 8, 10, 12, 16]
    assert depths["auto"] == depths["hybrid"] == [1, 2, 3, 4, 5, 6, 8, 10, 12]
    assert depths["blossom"] == depths["contree"] == [1, 2, 3, 4, 5, 6]
    assert sorted({c.depth for c in candidates("greedy", [2, 3])}) == [2, 3]


def test_the_grid_holds_least_leaf_sizes_only_where_the_algorithm_has_them():
    greedy = candidates("greedy", [2, 1], [5, 1], [0])
    assert [(c.depth, c.min_leaf) for c in greedy] == [(1, 1), (1, 5), (2, 1), (2, 5)]
    assert greedy[3].params("greedy", {}) == {"depth": 2, "min_leaf": 5, "leaf_cost": 0.0}
    assert candidates("dl85", [3], [10.0], [0])[0].params("dl85", {}) == \
        {"depth": 3, "min_support": 10, "leaf_cost": 0.0}
    with pytest.raises(ParameterError, match="integer"):
        candidates("dl85", [3], [2.5])
    assert candidates("greedy", [1], [2.5])[0].min_leaf == 2.5
    assert [c.min_leaf for c in candidates("sat-depth", [1, 2])] == [None, None]
    assert [c.min_leaf for c in candidates("auto", [1, 2], None, [0])] == [None, None]
    assert [c.min_leaf for c in candidates("auto", [2], [1, 5], [0])] == [1, 5]
    with pytest.raises(ParameterError, match="no minimum leaf size"):
        candidates("sat-depth", [2], [5])
    with pytest.raises(ParameterError, match="depth"):
        candidates("greedy", [0, 200])


def test_the_grid_holds_costs_per_leaf_where_the_algorithm_has_one():
    assert [c.leaf_cost for c in candidates("contree", [2])] == [0.0, 0.01]   # default
    assert [c.leaf_cost for c in candidates("greedy", [2], [1])] == [0.0, 0.005, 0.02]
    grid = candidates("auto", [1, 2], [1, 5], [0.02, 0])
    assert [(c.depth, c.min_leaf, c.leaf_cost) for c in grid] == [
        (d, m, a) for d in (1, 2) for m in (1, 5) for a in (0.0, 0.02)]
    assert grid[-1].params("auto", {"threads": 1}) == \
        {"threads": 1, "depth": 2, "min_leaf": 5, "leaf_cost": 0.02}
    assert "leaf cost 0.02" in grid[-1].label()
    assert [c.leaf_cost for c in candidates("sat-depth", [2])] == [None]
    assert [c.leaf_cost for c in candidates("sat-depth", [2], None, [0])] == [None]
    with pytest.raises(ParameterError, match="no cost per leaf"):
        candidates("sat-depth", [2], None, [0.01])
    with pytest.raises(ParameterError, match="between 0 and 1"):
        candidates("contree", [2], None, [2])


# ------------------------------------------------------------------ the run
@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """600 rows with text columns (up to 4,000 values), numbers and missing cells."""
    return read_table(transport_log(tmp_path_factory.mktemp("tune") / "t.csv", 600))


def test_every_score_is_the_cross_validation_of_its_setting(mixed):
    options = PrepOptions(target="delayed")
    grid = candidates("greedy", [1, 2, 3], [1, 30], [0, 0.02])
    plan = Plan("kfold", 3, seed=4)
    tuning = Tuner(mixed, options, "greedy", grid, plan=plan).run()
    assert len(tuning.scored) == 12 and all(s.complete for s in tuning.scored)
    for s in tuning.scored:
        evaluation = CrossValidation(mixed, options, "greedy",
                                     s.candidate.params("greedy", {}), plan).run()
        assert s.accuracies == evaluation.test_accuracies
        assert s.leaves == [f.n_leaves for f in evaluation.folds]
    best, chosen = choose(tuning.scored)
    assert (tuning.best, tuning.chosen) == (best, chosen)
    # the final tree is the chosen setting trained on every row
    assert tuning.params == grid[chosen].params("greedy", {})
    assert tuning.result.tree.depth <= grid[chosen].depth
    assert sum(tuning.data.w) == pytest.approx(len(mixed.frame))
    assert "<- chosen" in "\n".join(tuning.table())


def test_a_stop_ends_the_tuning_and_says_so(mixed):
    grid = candidates("greedy", [1, 2, 3, 4], None, [0])
    tuner = Tuner(mixed, PrepOptions(target="delayed"), "greedy", grid,
                  plan=Plan("kfold", 2))
    seen = []

    def after(score, i, n):
        seen.append(score)
        if i == 0:
            tuner.cancel()

    with pytest.raises(Interrupted) as stopped:
        tuner.run(after)
    assert stopped.value.status == "cancelled"
    assert seen[0].complete and all(s.note == "not scored: stopped" for s in seen[1:])


def test_a_stop_during_the_final_fit_ends_the_tuning(mixed, monkeypatch):
    """The final fit is never stopped by the time limit, but Stop still ends it."""
    tuner = Tuner(mixed, PrepOptions(target="delayed"), "greedy",
                  candidates("greedy", [1, 2], [1], [0]), plan=Plan("kfold", 2))
    final_prepare = tuning.prepare

    def stopped_meanwhile(*args, **kwargs):
        tuner.cancel()
        return final_prepare(*args, **kwargs)

    monkeypatch.setattr(tuning, "prepare", stopped_meanwhile)   # the final fit's alone
    with pytest.raises(Interrupted) as stopped:
        tuner.run()
    assert stopped.value.status == "cancelled"


def test_the_final_fit_is_kept_from_the_grid(mixed, monkeypatch):
    """Issue 45: a grid that does not fit in the time limit is cut, never the final
    fit.  Preparing takes 0.3 s (two splits of 400 rows, then all 600) and each fold
    0.05 s more, so the 54 candidates' 108 folds would take 5.4 s of a 3 s limit."""
    prepare, trained = evaluation.prepare, CrossValidation.trained

    def slow_prepare(*args, **kwargs):
        time.sleep(0.3)
        return prepare(*args, **kwargs)

    def slow_fold(*args, **kwargs):
        fold = trained(*args, **kwargs)
        time.sleep(0.05)   # (after its training, which its limit stops)
        return fold

    monkeypatch.setattr(evaluation, "prepare", slow_prepare)   # the splits'
    monkeypatch.setattr(tuning, "prepare", slow_prepare)       # the final fit's
    monkeypatch.setattr(CrossValidation, "trained", slow_fold)
    grid = candidates("greedy", [1, 2, 3, 4, 5, 6])
    assert len(grid) == 54
    started = time.monotonic()
    tuned = Tuner(mixed, PrepOptions(target="delayed"), "greedy", grid,
                  plan=Plan("kfold", 2), time_limit=3.0).run()
    seconds = time.monotonic() - started
    assert tuned.result.tree is not None and sum(tuned.data.w) == len(mixed.frame)
    kept = [s for s in tuned.scored if s.note == KEPT]
    assert kept and kept == tuned.scored[-len(kept):]   # the grid's end was cut
    assert all(s.complete for s in tuned.scored[:-len(kept)])
    # the final preparation (0.3 s) was kept: 1.5 x (600 / 300 rows) x a split's
    assert tuned.reserved_s >= 0.9
    assert f"{len(kept)} of 54 settings were not scored" in tuned.table()[-1]
    assert seconds < 3.0 + 1.0


def test_a_large_table_is_tuned_on_a_sample_and_trained_on_every_row(mixed, monkeypatch):
    """Above SAMPLE_ROWS rows the candidates are scored on a stratified sample of that
    many, which the table and the JSON say; the choice is trained on every row."""
    monkeypatch.setattr(tuning, "SAMPLE_ROWS", 240)
    options, plan = PrepOptions(target="delayed"), Plan("kfold", 3, seed=1)
    grid = candidates("greedy", [1, 2, 3], [1], [0])
    tuned = Tuner(mixed, options, "greedy", grid, plan=plan).run()
    sample = CrossValidation(mixed, options, "greedy", {}, plan).sampled(240, Monitor(), [])
    assert len(sample.raw.frame) == tuned.sample_rows == 240 and tuned.rows == 600
    shares = [frame["delayed"].value_counts(normalize=True)["yes"]
              for frame in (mixed.frame, sample.raw.frame)]
    assert shares[1] == pytest.approx(shares[0], abs=1 / 240)   # stratified
    for s in tuned.scored:
        assert s.complete and s.accuracies == CrossValidation(
            sample.raw, options, "greedy", s.candidate.params("greedy", {}),
            plan).run().test_accuracies
    assert sum(tuned.data.w) == 600   # the choice, trained on every row
    assert tuned.table()[0].startswith("3-fold cross-validation of greedy on a stratified "
                                       "sample of 240 of the 600 rows")
    assert tuned.to_dict()["scored_on"] == tuned.scored_on() and \
        tuned.to_dict()["sample_rows"] == 240
    assert CrossValidation(mixed, options, "greedy").sampled(600, Monitor(), []).raw \
        is mixed   # no more rows than asked: every row


# ------------------------------------------------------------------ the CLI
def test_orchard_tune_prints_the_candidates_and_writes_the_chosen_model(tmp_path, capsys):
    model = tmp_path / "model.json"
    code = main(["tune", str(SAMPLES / "loans.csv"), "--algo", "greedy", "--depths", "1-3",
                 "--min-leaf", "1,20", "--leaf-cost", "0", "--folds", "3", "--out",
                 str(model), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    summary = json.loads(out)
    tuning = summary["tuning"]
    assert [(c["depth"], c["min_leaf"]) for c in tuning["candidates"]] == \
        [(d, m) for d in (1, 2, 3) for m in (1, 20)]
    chosen = tuning["candidates"][tuning["chosen"]]
    assert summary["max_depth"] == chosen["depth"] == tuning["chosen_params"]["depth"]
    assert tuning["scored_on"] == "3-fold cross-validation" and \
        tuning["sample_rows"] is None and tuning["final_fit_reserved_s"] > 0
    assert json.loads(model.read_text())   # the chosen tree, trained on every row
    assert "of 6: depth" in err            # progress per candidate on stderr

    assert main(["tune", str(SAMPLES / "loans.csv"), "--algo", "greedy", "--depths",
                 "1-2", "--folds", "3"]) == 0
    assert "<- chosen" in capsys.readouterr().out


def test_orchard_tune_tries_costs_per_leaf_with_an_exact_search(capsys):
    code = main(["tune", str(SAMPLES / "loans.csv"), "--algo", "contree", "--depths",
                 "2-3", "--leaf-cost", "0,0.01,0.05", "--folds", "3", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    summary = json.loads(out)
    candidates_ = summary["tuning"]["candidates"]
    assert [(c["depth"], c["leaf_cost"]) for c in candidates_] == \
        [(d, a) for d in (2, 3) for a in (0.0, 0.01, 0.05)]
    assert all(c["complete"] for c in candidates_)
    # a larger cost never gives more leaves on the same folds
    for d in (2, 3):
        leaves = [c["leaves"] for c in candidates_ if c["depth"] == d]
        assert all(all(a >= b for a, b in zip(x, y)) for x, y in zip(leaves, leaves[1:]))
    chosen = summary["tuning"]["chosen_params"]
    assert summary["leaf_penalty"] == pytest.approx(chosen["leaf_cost"] * summary["n_rows"])
    assert summary["objective"] == pytest.approx(
        summary["train_error"] + summary["leaf_penalty"] * summary["n_leaves"])


@pytest.mark.parametrize("algorithm", ["auto", "dl85"])
def test_orchard_tune_trains_least_leaf_sizes_where_they_are_integers(algorithm, capsys):
    code = main(["tune", str(SAMPLES / "loans.csv"), "--algo", algorithm, "--depths", "2",
                 "--min-leaf", "1,30", "--folds", "2", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    summary = json.loads(out)
    assert [(c["min_leaf"], c["leaf_cost"]) for c in summary["tuning"]["candidates"]] \
        == [(1, 0.0), (1, 0.01), (30, 0.0), (30, 0.01)]
    assert all(c["complete"] for c in summary["tuning"]["candidates"])


@pytest.mark.parametrize("argv, words", [
    (["--depths", "two"], "--depths takes numbers"),
    (["--algo", "sat-depth", "--min-leaf", "5"], "no minimum leaf size"),
    (["--folds", "1"], "between 2 and 100 folds"),
    (["--param", "depth=3"], "--depths"),
    (["--param", "leaf_cost=0.1"], "--leaf-cost"),
    (["--algo", "sat-depth", "--leaf-cost", "0.1"], "no cost per leaf"),
    (["--time-limit", "0"], "positive"),
])
def test_orchard_tune_refuses_bad_requests_in_one_sentence(argv, words, capsys):
    code = main(["tune", str(SAMPLES / "loans.csv"), *argv])
    err = capsys.readouterr().err
    assert code == 2 and words in err and err.count("\n") == 1


# ------------------------------------------------------------------ the notebook
def test_orchard_tune_in_a_notebook_returns_the_chosen_fitted_tree():
    import orchard
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    model = orchard.tune(X, y, algorithm="greedy", depths=[1, 2, 3], min_leaf=[1, 10],
                         leaf_cost=[0, 0.02], cv=3)
    table = model.tuning_
    assert len(table) == 12 and table["chosen"].sum() == 1 and table["best"].sum() == 1
    row = table[table["chosen"]].iloc[0]
    assert model.tuned_params_ == {"max_depth": row["depth"], "min_leaf": row["min_leaf"],
                                   "leaf_cost": row["leaf_cost"]}
    assert model.max_depth == row["depth"]
    best = table[table["best"]].iloc[0]
    assert row["mean_accuracy"] >= best["mean_accuracy"] - best["standard_error"] - 1e-12
    assert model.predict(X).shape == y.shape and model.score(X, y) > 0.9
    # the Tuner's final fit is the estimator's: the tree a direct fit of the choice gives
    direct = orchard.OptimalTreeClassifier(
        "greedy", max_depth=int(row["depth"]),
        params={"min_leaf": row["min_leaf"], "leaf_cost": row["leaf_cost"]}).fit(X, y)
    assert (direct.predict_proba(X) == model.predict_proba(X)).all()
    assert model.n_features_in_ == 4 and list(model.classes_) == [0, 1, 2]


def test_with_class_weights_settings_are_ranked_by_the_weighted_accuracy():
    """The trees are trained for the weighted error: ranking them by plain accuracy
    undid the weights (issue 46); the table and the JSON say which measure ranked."""
    raw = read_table(SAMPLES / "loans.csv")
    options = PrepOptions(binarize="quantile:4", class_weight="declined=4")
    plan = Plan("kfold", 3)
    grid = candidates("greedy", [1, 3], [1], [0])
    result = Tuner(raw, options, "greedy", grid, {}, plan).run()
    for score in result.scored:
        folds = CrossValidation(raw, options, "greedy",
                                score.candidate.params("greedy", {}), plan).run().folds
        weighted = [f.weighted_accuracy for f in folds]
        assert score.accuracies == pytest.approx(weighted)
        assert weighted != pytest.approx([f.test_accuracy for f in folds])
        # each test row counted with its class's factor, from the fold's own matrix
        matrix, factors = folds[0].test_confusion, np.array([1.0, 4.0])
        assert folds[0].weighted_accuracy == pytest.approx(
            (factors * np.diag(matrix)).sum() / (factors * matrix.sum(axis=1)).sum())
    assert result.measure == "weighted validation accuracy"
    assert "of the best weighted validation accuracy" in result.table()[0]
    plain = Tuner(raw, PrepOptions(binarize="quantile:4"), "greedy", grid, {}, plan).run()
    assert plain.measure == "validation accuracy"


def test_settings_can_be_ranked_by_the_balanced_accuracy(capsys):
    """Tuning by the user's measure (issue 46): the balanced accuracy of each fold's
    validation rows, counted from its confusion matrix; the CLI, the table and the
    JSON say so, and the majority line is the majority class's balanced accuracy."""
    raw = read_table(SAMPLES / "loans.csv")
    options = PrepOptions(binarize="quantile:4")
    plan = Plan("kfold", 3)
    grid = candidates("greedy", [1, 3], [1], [0])
    result = Tuner(raw, options, "greedy", grid, {}, plan, metric="balanced").run()
    for score in result.scored:
        folds = CrossValidation(raw, options, "greedy",
                                score.candidate.params("greedy", {}), plan).run().folds
        recalls = [np.mean(np.diag(f.test_confusion) / f.test_confusion.sum(axis=1))
                   for f in folds]
        assert score.accuracies == pytest.approx(recalls)
        assert recalls != pytest.approx([f.test_accuracy for f in folds])
    assert result.majority == pytest.approx(0.5)   # two classes, every fold has both
    assert result.measure == "validation balanced accuracy"
    assert "of the best validation balanced accuracy" in result.table()[0]
    with pytest.raises(ParameterError, match="Unknown measure 'f1'"):
        Tuner(raw, options, "greedy", grid, {}, plan, metric="f1")
    code = main(["tune", str(SAMPLES / "loans.csv"), "--algo", "greedy", "--depths", "1-2",
                 "--min-leaf", "1", "--leaf-cost", "0", "--folds", "3", "--metric",
                 "balanced", "--json"])
    assert code == 0
    tuning = json.loads(capsys.readouterr().out)["tuning"]
    assert tuning["metric"] == "balanced"
    assert tuning["measure"] == "validation balanced accuracy"


def test_settings_can_be_ranked_by_the_validation_auc():
    """Two classes: each fold's AUC of its tree's leaf shares on its validation rows
    (scikit-learn's on the same predictions); more classes are refused."""
    from sklearn.metrics import roc_auc_score

    raw = read_table(SAMPLES / "loans.csv")
    options = PrepOptions(binarize="quantile:4")
    plan = Plan("kfold", 3)
    grid = candidates("greedy", [1, 3], [1], [0])
    result = Tuner(raw, options, "greedy", grid, {}, plan, metric="auc").run()
    for score in result.scored:
        folds = CrossValidation(raw, options, "greedy",
                                score.candidate.params("greedy", {}), plan,
                                baselines=True).run().folds
        expected = [roc_auc_score(f.held_out.truth, f.held_out.proba[:, 1]) for f in folds]
        assert score.accuracies == pytest.approx(expected)
    assert result.majority == 0.5 and result.measure == "validation AUC"
    from engine.data.csv_reader import parse_text
    three = parse_text("x,c\n" + "".join(f"{i},{'abc'[i % 3]}\n" for i in range(60)))
    with pytest.raises(ParameterError, match="AUC ranks settings for a target of two"):
        Tuner(three, PrepOptions(), "greedy", grid, {}, plan, metric="auc").run()
