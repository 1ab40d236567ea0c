"""Stop and the time limit reach every stage of a run, not only the search.

Reading, typing, preparing and the solvers' own row reduction check the Monitor
between chunks of work, so a stop or a deadline during any of them ends the run at
once (`Interrupted`, exit 130 / 3 on the command line), and nothing is written.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from big_tables import numeric_csv
from conftest import ROOT

from engine.data import csv_reader
from engine.data.csv_reader import parse_text, read_table
from engine.data.dataset import PrepOptions, row_groups
from engine.featurize import prepare
from engine.errors import Interrupted
from engine.evaluation import CrossValidation, Plan
from engine.solvers import get_solver
from engine.solvers.monitor import Monitor
from engine.solvers.protocol import Status
from engine.training import train

# Big enough that reading and preparing take a few seconds on a 2-core machine.
BIG_ROWS = 600_000


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory):
    return numeric_csv(tmp_path_factory.mktemp("big") / "big.csv", BIG_ROWS)


def cancel_after(monitor: Monitor, seconds: float) -> list[float]:
    """Cancel `monitor` from another thread after `seconds`; returns [when]."""
    when: list[float] = []

    def fire():
        time.sleep(seconds)
        when.append(time.monotonic())
        monitor.cancel()

    threading.Thread(target=fire, daemon=True).start()
    return when


# ------------------------------------------------------------ stop while reading
def test_a_stop_while_reading_ends_the_read_within_a_second(big_csv):
    stages = []
    monitor = Monitor(on_progress=lambda stage, fraction: stages.append(stage))
    when = cancel_after(monitor, 0.5)
    with pytest.raises(Interrupted) as stopped:
        read_table(big_csv, progress=monitor.checkpoint)
    assert time.monotonic() - when[0] < 1.0
    assert stopped.value.status == Status.CANCELLED.value
    assert str(stopped.value).startswith("Stopped while ")
    assert stages[0] == "reading big.csv"


def test_a_deadline_while_preparing_names_the_stage(big_csv):
    raw = read_table(big_csv)
    monitor = Monitor(time_limit=0.3)
    started = time.monotonic()
    with pytest.raises(Interrupted) as stopped:
        prepare(raw, PrepOptions(binarize="quantile:10"), progress=monitor.checkpoint)
    assert time.monotonic() - started < 1.3
    assert stopped.value.status == Status.TIME_LIMIT.value
    assert "time limit of 0.3 s ran out while" in str(stopped.value)


def test_progress_reaches_every_stage_and_does_not_change_the_result(big_csv):
    stages = []
    monitor = Monitor(on_progress=lambda stage, fraction: stages.append((stage, fraction)))
    raw = read_table(big_csv, progress=monitor.checkpoint)
    data = prepare(raw, PrepOptions(binarize="quantile:4"), progress=monitor.checkpoint)
    plain = prepare(read_table(big_csv), PrepOptions(binarize="quantile:4"))
    assert np.array_equal(data.X, plain.X) and np.array_equal(data.y, plain.y)
    names = {stage for stage, _ in stages}
    assert {"reading big.csv", "splitting the file into cells", "typing the columns",
            "counting each column's values", "choosing thresholds and groups",
            "building the features"} <= names
    assert all(f is None or 0.0 <= f <= 1.0 for _, f in stages)


def test_a_solver_stops_during_its_row_reduction(big_csv):
    data = prepare(read_table(big_csv), PrepOptions(binarize="quantile:10"))

    def stopping_monitor():
        def stop_when_reducing(stage, fraction):
            seen.append(stage)
            if stage == "grouping identical rows":
                monitor.cancel()
        seen: list[str] = []
        monitor = Monitor(time_limit=60, on_progress=stop_when_reducing)
        return monitor, seen

    monitor, seen = stopping_monitor()   # the solver alone has no tree yet: it raises
    with pytest.raises(Interrupted, match="grouping identical rows"):
        get_solver("blossom")().solve(data, get_solver("blossom").resolve({"depth": 2}),
                                      monitor)
    assert seen == ["grouping identical rows"]
    monitor, seen = stopping_monitor()   # through train, the greedy warm start is kept
    result = train(data, "blossom", {"depth": 2}, monitor=monitor)
    assert seen[0] == "starting the solver" and seen[-1] == "grouping identical rows"
    assert result.status == Status.CANCELLED and result.stats["kept_warm_start"]
    assert result.train_error == result.tree.error(data.X, data.y, data.w)


def test_dl85_stops_while_it_lays_out_its_rows(big_csv):
    """After the reduction, dl85 builds two views of the rows (by feature, and each
    row's list of ones) a block at a time, so a stop there does not wait for the
    whole table (two million rows took 2 s in one piece)."""
    data = prepare(read_table(big_csv), PrepOptions(binarize="quantile:10"))
    seen: list[str] = []

    def stop_when_listing(stage, fraction):
        seen.append(stage)
        if stage == "listing each row's features":
            monitor.cancel()

    monitor = Monitor(time_limit=60, on_progress=stop_when_listing)
    with pytest.raises(Interrupted, match="listing each row's features"):
        get_solver("dl85")().solve(data, get_solver("dl85").resolve({"depth": 3}), monitor)
    assert seen[-3:] == ["laying out the rows for the solver"] * 2 + [
        "listing each row's features"]


# ------------------------------------------------- the fast and careful splitters
SPLIT_CASES = [
    "a,b,y\n1,2.5,0\n3,4,1\n",
    "a,b,y\n1,,0\n\n3,4,1\n  \n5,NA,?\n",
    "a;b;y\n1,5;2;x\n3,25;4;y\n",
    "a\tb\ty\n 1 \t x y \t0\n3\t4\t1\n",
    "x,y\r\n1,a\r\n2,b\r\n",
    "1,2,3\n4,5,6\n7,8,9\n",
    "name,score\nAnn,1\nBob,2\nCid,3\n",
]


@pytest.mark.parametrize("text", SPLIT_CASES)
def test_the_fast_splitter_gives_the_cells_of_the_careful_one(monkeypatch, text):
    fast = parse_text(text)
    monkeypatch.setattr(csv_reader, "_fast_split", lambda *args: None)
    careful = parse_text(text)
    assert fast.frame.equals(careful.frame)
    assert (fast.delimiter, fast.has_header, fast.decimal_comma) == \
        (careful.delimiter, careful.has_header, careful.decimal_comma)


@pytest.mark.parametrize("text, line", [("a,b\n1,2\n3\n4,5\n", 3), ("a,b\n1,2\n3,4,5\n", 3)])
def test_ragged_rows_are_still_reported_with_their_line(text, line):
    with pytest.raises(Exception, match=f"on line {line}"):
        parse_text(text, delimiter=",")


def test_fields_agree_across_blocks():
    quiet = lambda *args: None  # noqa: E731
    agree = csv_reader._fields_agree
    assert agree(["a,b\n1,2\n", "\n  \n", "3,4\n55,6\n"], ",", quiet, "") == 2
    assert agree(["a,b\n1,2\n", "3,4\n5,6,7\n"], ",", quiet, "") is None
    assert agree(["a,b,c\n", "1,2\n"], ",", quiet, "") is None
    assert agree(["a,b\nlonely\n"], ",", quiet, "") is None


# ------------------------------------------------------------------- row groups
@pytest.mark.parametrize("seed", range(40))
def test_row_groups_equal_numpy_unique(seed):
    rng = np.random.default_rng(seed)
    n, width = int(rng.integers(1, 80)), int(rng.integers(0, 150))
    X = (rng.random((n, width)) < rng.random()).astype(np.uint8)
    X[rng.integers(0, n, n // 2)] = X[0]
    extra = [rng.integers(0, 3, n)] if seed % 2 else []
    keys = np.column_stack([X, *extra]) if extra else X
    if keys.shape[1] == 0:
        expected_first, expected_group = np.zeros(1, int), np.zeros(n, int)
    else:
        _, expected_first, expected_group = np.unique(keys, axis=0, return_index=True,
                                                      return_inverse=True)
    first, group = row_groups(X, *extra)
    assert np.array_equal(first, expected_first)
    assert np.array_equal(group, np.ravel(expected_group))


def test_row_groups_of_real_values_form_the_same_partition():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 3)).round(1)
    X[1::3] = X[0]
    X[2, 0] = -0.0
    X[5] = X[2]
    X[5, 0] = 0.0
    first, group = row_groups(X)
    for g in range(len(first)):
        assert (X[group == g] == X[first[g]]).all()
    assert len(first) == len(np.unique(X, axis=0))


# ------------------------------------------------------------------- one clock
def test_a_share_of_the_time_limit_is_given_back():
    monitor = Monitor(time_limit=0.4)
    with monitor.share(0.25):
        while not monitor.should_stop():
            time.sleep(0.01)
        assert monitor.stop_status() == Status.TIME_LIMIT
        assert monitor.elapsed() < 0.3
    assert not monitor.should_stop() and monitor.remaining() > 0.1
    time.sleep(0.35)
    assert monitor.should_stop()


def test_cross_validation_shares_the_run_clock_and_stops_with_it(big_csv):
    raw = read_table(big_csv)
    options = PrepOptions(binarize="quantile:10")
    clock = Monitor(time_limit=1.0)
    validation = CrossValidation(raw, options, "blossom", {"depth": 2},
                                 Plan("kfold", k=5), None)
    evaluation = validation.run(clock=clock)
    assert clock.elapsed() < 2.0
    assert not evaluation.complete and len(evaluation.folds) < 5


# ------------------------------------------------------------------------ CLI
def _fit(args, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "gui.app", "fit", *map(str, args)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **kwargs)


def test_cli_time_limit_covers_reading_and_preparing(big_csv, tmp_path):
    out = tmp_path / "model.json"
    started = time.monotonic()   # start-up: Python and the engine, no data
    _, said = _fit([tmp_path / "absent.csv", "--time-limit", "0.5"]).communicate(timeout=120)
    start_up = time.monotonic() - started
    assert "does not exist" in said   # (`--help` no longer imports the engine)
    started = time.monotonic()
    process = _fit([big_csv, "--time-limit", "0.5", "--out", out, "--json"])
    stdout, stderr = process.communicate(timeout=120)
    assert time.monotonic() - started < start_up + 0.5 + 1.0, stderr
    assert process.returncode == 3, stderr
    assert "time limit of 0.5 s ran out while" in stderr and "Traceback" not in stderr
    assert json.loads(stdout)["status"] == "time_limit"
    assert not out.exists()


def test_cli_ctrl_c_while_preparing_exits_130_and_writes_nothing(big_csv, tmp_path):
    out = tmp_path / "model.json"
    process = _fit([big_csv, "--out", out])
    assert process.stderr.readline().startswith("orchard: ")   # reading, a second in
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "Stopped while" in stderr and "Traceback" not in stderr
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_cli_progress_on_stderr_for_long_runs(big_csv, tmp_path):
    done = subprocess.run([sys.executable, "-m", "gui.app", "fit", str(big_csv), "--algo",
                           "greedy", "--depth", "1", "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines and all(re.fullmatch(r"orchard: [A-Z].+ \(\d+:\d\d\)", line)
                         for line in lines), done.stderr
    assert json.loads(done.stdout)["n_rows"] == BIG_ROWS
