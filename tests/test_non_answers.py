"""Every non-answer is explained in one sentence with what to try: a SAT search that
ends without a consistent tree, `odd` skipping its MILP, any search stopped before
its proof.  The sentence is `Result.stats["message"]`, printed by the CLI (and in
`--json`) and shown in the window's status bar and Results tab."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import json  # noqa: E402

import pytest  # noqa: E402
from conftest import DATASETS, SAMPLES  # noqa: E402
from optimal_trees import cp4im  # noqa: E402
from test_gui_support import isolated_settings, open_window, run_and_wait  # noqa: E402,F401

from engine.cli import main  # noqa: E402
from engine.data.csv_reader import read_table  # noqa: E402
from engine.data.dataset import PrepOptions  # noqa: E402
from engine.featurize import prepare  # noqa: E402
from engine.solvers.protocol import Status  # noqa: E402
from engine.training import train  # noqa: E402

CAR = DATASETS / "inferdt" / "car.csv"


def one_sentence_with_advice(message: str, *fragments: str) -> None:
    assert message and "\n" not in message and message.endswith(".")
    for fragment in fragments:
        assert fragment in message, message


@pytest.mark.skipif(not CAR.exists(), reason="the shared datasets folder is absent")
def test_a_sat_search_stopped_early_says_what_was_refuted_and_what_to_try():
    data = prepare(read_table(CAR), PrepOptions(binarize="midpoints", drop_inconsistent=True))
    result = train(data, "sat-depth", {"depth": 10}, time_limit=0.5)
    assert result.status == Status.TIME_LIMIT and not result.optimal
    one_sentence_with_advice(result.stats["message"], "The time limit came before",
                             "no consistent tree of depth", "more time",
                             "larger maximum depth")


def test_odd_says_when_it_skips_its_milp(capsys):
    code = main(["fit", str(SAMPLES / "loans.csv"), "--algo", "odd", "--depth", "2",
                 "--param", "max_milp_nonzeros=10", "--json"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    one_sentence_with_advice(summary["message"], "The MILP step was skipped",
                             "max_milp_nonzeros = 10", "Raise the guard")


def test_a_search_stopped_by_its_time_limit_says_it_is_not_proven():
    result = train(cp4im("splice-1"), "dl85", {"depth": 6}, time_limit=0.3)
    assert result.status == Status.TIME_LIMIT
    one_sentence_with_advice(result.stats["message"], "The time limit came before the proof",
                             "not proven optimal", "more time")


def test_auto_stopped_while_building_its_0_1_tests_answers_with_the_greedy_tree():
    """`auto` on numbers grows the greedy tree first: a stop while the 0/1 tests for
    Blossom are built (minutes on millions of rows) ends the run with that tree and
    the sentence, not with no tree."""
    from engine.solvers.monitor import Monitor
    data = prepare(read_table(SAMPLES / "loans.csv"))
    assert not data.is_binary
    greedy = train(data, "greedy", {"depth": 4})   # auto beyond depth 3: Blossom
    monitor = Monitor()

    def stop_at_the_tests(stage, fraction):
        if stage == "building the 0/1 tests":
            monitor.cancel()
    monitor.on_progress = stop_at_the_tests
    result = train(data, "auto", {"depth": 4}, monitor=monitor)
    assert result.stats["chosen_algorithm"] == "blossom"
    assert result.status == Status.CANCELLED and not result.optimal
    assert result.train_error == greedy.train_error
    assert result.tree.error(data.X, data.y, data.w) == greedy.train_error
    one_sentence_with_advice(result.stats["message"], "the greedy one")


def test_a_proven_run_has_no_message(capsys):
    assert main(["fit", str(SAMPLES / "loans.csv"), "--algo", "blossom", "--depth", "2",
                 "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["optimal"] and summary["message"] == ""


def test_the_window_shows_the_sentence(qtbot):
    win = open_window(qtbot, SAMPLES / "loans.csv", algorithm="odd")
    win.depth_spin.setValue(2)
    win.algo_panel.form.set_values({"max_milp_nonzeros": 10})
    assert win.params()["max_milp_nonzeros"] == 10
    run_and_wait(qtbot, win)
    assert "The MILP step was skipped" in win.result_label.text()
    assert "The MILP step was skipped" in win.results.summary_text()
    win.close()


def test_with_a_cost_per_leaf_the_stopped_message_bounds_the_objective_not_the_errors():
    """With a cost per leaf the bound is on errors + the leaves' cost: the message
    called it a bound on the errors."""
    from engine.solvers.protocol import Result
    from engine.training import stopped_message

    tree = train(prepare(read_table(SAMPLES / "loans.csv")), "greedy", {"depth": 2}).tree
    plain = Result(tree, 90.0, 60.0, False, Status.TIME_LIMIT, 1.0)
    assert "no tree can have fewer than 60 errors" in stopped_message(plain)
    costly = Result(tree, 90.0, 110.0, False, Status.TIME_LIMIT, 1.0, leaf_penalty=6.0)
    text = stopped_message(costly)
    one_sentence_with_advice(text, "The time limit came before the proof", "more time")
    assert f"90 errors ({90 + 6 * tree.n_leaves:g} with the cost per leaf)" in text
    assert "errors + cost per leaf below 110" in text and "fewer than" not in text
