"""A bounded slice of the journey matrix (tests/journeys.py): generated tables × every
algorithm × depths 1-6 × every binarisation × the CLI, the notebook and the window.

The slice is derandomised so the test command is repeatable: 10, 12 and 3 journeys
there, and 45 and 8 of the first and last in CI's second step (`pytest -m slow`; the
three took 100 s of a core in the test command); `benchmarks/journeys.py` runs the
whole matrix with fresh draws and larger tables.
"""

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from journeys import (
    ALGORITHMS,
    BINARIZATIONS,
    ENTRIES,
    SMALL,
    Journey,
    make_table,
    run,
    table_specs,
    write_csv,
)
from conftest import sizes
from test_gui_support import isolated_settings, open_window, run_and_wait  # noqa: F401

from engine.warmup import warm_up

# CI bounds (the benchmark lifts them): tables and one fit's limit.
MAX_ROWS, MAX_COLUMNS, MAX_VALUES, MAX_CLASSES = 1500, 14, 2000, 30
TIME_LIMIT = 5.0


def slow(examples: int) -> settings:
    """Long examples, no deadline, the same draws every run, and no shrinking: a
    failing journey is reported as drawn rather than re-run for minutes."""
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                    print_blob=True, phases=(Phase.explicit, Phase.generate),
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module", autouse=True)
def compiled():
    """Kernels compiled before any journey is timed (a cold compile is issue 35's)."""
    warm_up()


@st.composite
def journeys(draw, entries=ENTRIES, algorithms=ALGORITHMS, max_depth=6) -> Journey:
    algorithm = draw(st.sampled_from(algorithms))
    rows, columns = SMALL.get(algorithm, (MAX_ROWS, MAX_COLUMNS))
    spec = draw(table_specs(max_rows=min(rows, MAX_ROWS),
                            max_columns=min(columns, MAX_COLUMNS), max_values=MAX_VALUES,
                            max_classes=MAX_CLASSES))
    return Journey(spec, algorithm, draw(st.integers(1, max_depth)),
                   draw(st.sampled_from(BINARIZATIONS)), draw(st.sampled_from(entries)),
                   TIME_LIMIT)


@pytest.mark.parametrize("examples", sizes(10, 45))
def test_a_generated_journey_keeps_every_promise(examples):
    @slow(examples)
    @given(journey=journeys())
    def journey_keeps_every_promise(journey):
        with tempfile.TemporaryDirectory() as folder:
            outcome = run(journey, Path(folder))
        assert not outcome.problems, f"{journey.describe()}: {outcome.problems}"
    journey_keeps_every_promise()


@slow(12)
@given(journey=journeys(entries=("cli",), algorithms=("auto",), max_depth=8).filter(
    lambda j: set(j.spec.kinds) - {"constant", "id"}))
def test_auto_returns_a_tree_that_predict_scores_identically(journey):
    """The window's default, at depths 1 to 8, on any table the suite makes with a
    usable column: a tree (no refusal) that `orchard predict` and the exports score
    as the fit did."""
    with tempfile.TemporaryDirectory() as folder:
        outcome = run(journey, Path(folder))
    assert not outcome.problems and not outcome.refusal, (journey.describe(),
                                                          outcome.problems,
                                                          outcome.refusal)


@pytest.mark.parametrize("examples", sizes(3, 8))
def test_a_generated_journey_through_the_window(qtbot, examples):
    """Load the table, choose the algorithm, depth and binarisation, press Run: the run
    ends with its own tree, whose error on the window's data is the error it reports,
    or with one sentence saying why not."""
    slow(examples)(given(journey=journeys(entries=("window",)))(
        lambda journey: journey_through_the_window(qtbot, journey)))()


def journey_through_the_window(qtbot, journey) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = write_csv(make_table(journey.spec), Path(folder) / "table.csv")
        win = open_window(qtbot, algorithm=journey.algorithm)
        win.load_path(path)
        qtbot.waitUntil(lambda: win.prep is not None and not win.loading
                        and not win.preparing, timeout=60_000)
        if win.dataset is None:   # nothing to train on: the panel says why, Run is off
            assert not win.run_button.isEnabled(), journey.describe()
            return
        if win.data_panel.target_question_text():   # asked whether it is the class
            win.data_panel.clear_target_question()
        if journey.binarize is not None:
            win.data_panel.set_binarize(journey.binarize)
        win.depth_spin.setValue(journey.depth)
        win.time_spin.setValue(journey.time_limit)
        qtbot.waitUntil(lambda: not win.preparing, timeout=60_000)
        if win.dataset is None:   # the binarisation cannot serve this algorithm
            assert not win.run_button.isEnabled(), journey.describe()
            return
        result = run_and_wait(qtbot, win, timeout=int(1000 * (journey.time_limit + 60)))
        if result is None:   # refused: one sentence, no traceback, no stale tree
            assert win.last_error and "Unexpected error" not in win.last_error, \
                (journey.describe(), win.last_error)
            assert win.tree is None
            return
        run_record, data = win.current_run, win.dataset
        assert result.tree.prep is data.prep or result.tree.features == data.features
        error = float(data.w[result.tree.predict(data.X) != data.y].sum())
        assert np.isclose(error, run_record.train_error), journey.describe()
        assert win.view.tree is result.tree or win.tree is result.tree
