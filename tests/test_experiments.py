"""Sweeps (engine.experiments): the same table on every backend, failures and hangs
recorded as rows, resuming without redoing fits, and `orchard sweep` end to end."""

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import fields
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import SAMPLES

from engine import cli
from engine.data.csv_reader import read_table
from engine.data.dataset import PrepOptions
from engine.errors import DataError, ParameterError
from engine.evaluation import CrossValidation, Plan
from engine.experiments import (
    COLUMNS,
    FAILED,
    TIMING,
    DaskCluster,
    InProcess,
    ProcessPool,
    Task,
    journal_path,
    load_spec,
    run_sweep,
    sweep_from_dict,
)

SPEC = {"datasets": ["data/play_tennis.csv", "data/noisy.csv"], "target": "last",
        "algorithms": ["greedy", "blossom"], "depth": [1, 2], "folds": 3,
        "time_limit": 10, "seed": 0}
N_FITS = 2 * 2 * 2 * 3


def noisy_csv(path: Path, rows: int = 60) -> None:
    """x (numeric), colour, y: y follows x with some noise."""
    rng = np.random.default_rng(1)
    lines = ["x,colour,y"]
    for i in range(rows):
        x = int(rng.integers(0, 100))
        label = "a" if (x < 50) ^ (rng.random() < 0.15) else "b"
        lines.append(f"{x},{('red', 'blue')[i % 2]},{label}")
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("sweep")
    (root / "data").mkdir()
    shutil.copy(SAMPLES / "play_tennis.csv", root / "data")
    noisy_csv(root / "data" / "noisy.csv")
    (root / "spec.json").write_text(json.dumps(SPEC))
    return root


@pytest.fixture(scope="module")
def reference(folder) -> pd.DataFrame:
    """The sweep run in this process: what every other way of running must give."""
    return run_sweep(load_spec(folder / "spec.json"), folder / "inprocess.csv",
                     InProcess()).table


def untimed(table: pd.DataFrame) -> pd.DataFrame:
    return table.drop(columns=list(TIMING)).reset_index(drop=True)


def same_results(table: pd.DataFrame, reference: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(untimed(table), untimed(reference))


# ------------------------------------------------------------------- the table
def test_one_row_per_fit_with_the_promised_columns(reference):
    assert list(reference.columns) == list(COLUMNS)
    assert len(reference) == N_FITS
    assert not reference["status"].isin(FAILED).any(), reference["error_message"].tolist()
    assert set(reference["fold"]) == {0, 1, 2} and set(reference["depth"]) == {1, 2}
    assert reference["dataset"].iloc[0] == "data/play_tennis.csv"
    assert reference["test_accuracy"].between(0, 1).all()
    assert (reference["primal_integral"] >= 0).all()
    blossom = reference[reference["algorithm"] == "blossom"]
    assert blossom["optimal"].all()
    assert (blossom["train_error"] == blossom["lower_bound"]).all()
    assert (reference["n_leaves"] <= 2 ** reference["depth"]).all()


def test_a_fit_is_a_split_of_the_guis_cross_validation(folder, reference):
    """The sweep's fit and the GUI's Test accuracy are the same code: same figures."""
    raw = read_table(folder / "data" / "noisy.csv")
    evaluation = CrossValidation(raw, PrepOptions(target="last", binarize="guided", depth=2),
                                 "blossom", {"depth": 2}, Plan("kfold", k=3, seed=0),
                                 time_limit=10).run()
    rows = reference[(reference["dataset"] == "data/noisy.csv")
                     & (reference["algorithm"] == "blossom") & (reference["depth"] == 2)]
    assert rows["test_accuracy"].tolist() == evaluation.test_accuracies
    assert rows["train_error"].tolist() == [f.train_error for f in evaluation.folds]


# ------------------------------------------------------------------- backends
def test_process_pool_gives_the_same_table(folder, reference):
    outcome = run_sweep(load_spec(folder / "spec.json"), folder / "pool.csv",
                        ProcessPool(workers=2))
    assert outcome.ran == N_FITS
    same_results(outcome.table, reference)
    same_results(pd.read_csv(folder / "pool.csv"), pd.read_csv(folder / "inprocess.csv"))


def test_dask_local_cluster_gives_the_same_table(folder, reference):
    pytest.importorskip("dask.distributed", reason="dask[distributed] is not installed "
                        "(pip install 'orchard[cluster]')")
    outcome = run_sweep(load_spec(folder / "spec.json"), folder / "dask.csv",
                        DaskCluster("local", workers=2))
    assert outcome.ran == N_FITS
    same_results(outcome.table, reference)


def test_missing_dask_is_one_sentence(folder, monkeypatch):
    monkeypatch.setitem(sys.modules, "dask", None)
    with pytest.raises(ParameterError, match=r'pip install "orchard\[cluster\]"'):
        list(DaskCluster("local").run([]))


# ------------------------------------------------------- failures and hangs
def small_tasks(folder: Path, **changes) -> list[Task]:
    spec = {**SPEC, "datasets": ["data/play_tennis.csv"], "algorithms": ["blossom"],
            "depth": [1], **changes}
    return sweep_from_dict(spec, folder).tasks()


def test_a_fit_that_raises_is_a_recorded_failure(folder, tmp_path):
    (folder / "data" / "broken.csv").write_bytes(b"\x00\x01\x02 not a table \xff" * 20)
    spec = {**SPEC, "datasets": ["data/broken.csv", "data/play_tennis.csv"],
            "algorithms": ["blossom"], "depth": 1}
    table = run_sweep(sweep_from_dict(spec, folder), tmp_path / "r.csv", InProcess()).table
    broken = table[table["dataset"] == "data/broken.csv"]
    assert len(broken) == 3 and (broken["status"] == "error").all()
    assert broken["error_message"].str.contains("broken.csv").all()
    assert broken["test_accuracy"].isna().all()
    assert (table[table["dataset"] != "data/broken.csv"]["status"] == "optimal").all()


def test_a_fit_that_runs_out_of_time_says_so(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (2000, 30))
    y = (X[:, :6].sum(axis=1) + rng.integers(0, 3, 2000)) % 2
    lines = [",".join(map(str, [*row, label])) for row, label in zip(X, y)]
    (tmp_path / "hard.csv").write_text("\n".join(lines) + "\n")
    spec = {"datasets": ["hard.csv"], "algorithms": ["blossom"], "depth": 5,
            "holdout": 0.25, "time_limit": 0.3}
    row = run_sweep(sweep_from_dict(spec, tmp_path), tmp_path / "r.csv",
                    ProcessPool(workers=1)).table.iloc[0]
    assert row["status"] == "time_limit" and not row["optimal"]
    assert 0.25 < row["time_s"] < 5
    assert row["train_error"] > row["lower_bound"]


class Crashing(Task):
    """A fit whose process dies (as when the kernel kills it for its memory)."""

    def run(self):
        os._exit(3)


class Hanging(Task):
    """A fit that never returns (as a solver stuck outside its own time checks)."""

    def run(self):
        time.sleep(3600)


def as_task(cls, task: Task) -> Task:
    return cls(**{f.name: getattr(task, f.name) for f in fields(task)})


def test_a_crash_or_a_hang_costs_only_its_own_fit(folder):
    shutil.copy(folder / "data" / "play_tennis.csv", folder / "data" / "hangs.csv")
    hanging = as_task(Hanging, small_tasks(folder, datasets=["data/hangs.csv"],
                                           time_limit=0.5)[0])
    good = small_tasks(folder)
    tasks = [as_task(Crashing, good[0]), hanging, *good]
    rows = list(ProcessPool(workers=2, grace=1.0).run(tasks))
    status = {(r["dataset"], r["fold"]): r["status"] for r in rows}
    assert len(rows) == len(tasks)
    assert status[("data/hangs.csv", 0)] == "timeout"
    crashed = [r for r in rows if r["status"] == "crashed"]
    assert len(crashed) == 1 and "exit code 3" in crashed[0]["error_message"]
    finished = [r for r in rows if r["status"] == "optimal"]
    assert len(finished) == len(good)          # the pool replaced both lost workers


# ------------------------------------------------------------------- resuming
class StopAfter:
    """Runs fits in this process and is 'killed' (Ctrl+C) after `n` of them."""

    def __init__(self, n: int):
        self.n = n

    def run(self, tasks):
        for done, task in enumerate(tasks):
            if done == self.n:
                raise KeyboardInterrupt
            yield task.run()


class Counting(InProcess):
    def __init__(self):
        self.ran = []

    def run(self, tasks):
        self.ran += [t.key for t in tasks]
        return super().run(tasks)


def test_an_interrupted_sweep_resumes_without_repeating_fits(folder, reference, tmp_path):
    sweep, out = load_spec(folder / "spec.json"), tmp_path / "results.csv"
    with pytest.raises(KeyboardInterrupt):
        run_sweep(sweep, out, StopAfter(5))
    assert len(pd.read_csv(out)) == 5                 # the table shows what finished
    journal = journal_path(out)
    assert len(journal.read_text().splitlines()) == 5
    with journal.open("a") as handle:                 # a row cut off mid-write
        handle.write('{"dataset": "data/play')
    again = Counting()
    outcome = run_sweep(sweep, out, again)
    assert (outcome.ran, outcome.skipped) == (N_FITS - 5, 5)
    first_five = [tuple(t.key) for t in sweep.tasks()[:5]]
    assert len(again.ran) == N_FITS - 5 and not set(first_five) & set(again.ran)
    assert len(journal.read_text().splitlines()) == N_FITS
    same_results(outcome.table, reference)
    assert run_sweep(sweep, out, Counting()).ran == 0


# ------------------------------------------------------------------ the spec
def test_spec_options_expand_into_tasks(folder):
    sweep = sweep_from_dict({
        "datasets": "data/play_tennis.csv", "algorithms": ["greedy", "blossom"],
        "holdout": 0.3, "seed": [0, 1], "binarize": "quantile:4", "missing": "drop",
        "params": {"blossom": {"preprocess": [True, False], "lower_bound": False}},
    }, folder)
    tasks = sweep.tasks()
    assert len(tasks) == 2 * 1 + 2 * 2         # greedy: 2 seeds; blossom: 2 × 2 seeds
    blossom = [t for t in tasks if t.algorithm == "blossom"]
    assert {t.params for t in blossom} == {'{"lower_bound": false, "preprocess": true}',
                                           '{"lower_bound": false, "preprocess": false}'}
    assert all(t.depth == 3 and t.fold == 0 and t.plan.method == "holdout" for t in tasks)
    assert {t.seed for t in tasks} == {0, 1}
    assert {t.options.binarize for t in tasks} == {"quantile:4"}
    assert Path(tasks[0].path).is_absolute() and Path(tasks[0].path).exists()


def test_toml_spec(folder, tmp_path):
    spec = tmp_path / "sweep.toml"
    spec.write_text(f'datasets = ["{folder / "data" / "noisy.csv"}"]\n'
                    'algorithms = ["greedy"]\ndepth = [1, 2]\nfolds = 2\n')
    assert len(load_spec(spec).tasks()) == 4


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "0", "-5", "true", '"10"'])
def test_toml_time_limit_must_be_positive_and_finite(folder, tmp_path, value):
    spec = tmp_path / "sweep.toml"
    spec.write_text(f'datasets = ["{folder / "data" / "noisy.csv"}"]\n'
                    f'algorithms = ["greedy"]\ntime_limit = {value}\n')
    with pytest.raises(ParameterError, match="\"time_limit\" .* finite number"):
        load_spec(spec)


def test_a_time_limit_beyond_what_wait_accepts_still_runs(folder, tmp_path):
    """`multiprocessing.connection.wait` refuses a timeout of about 25 days; the pool
    waits at most LONGEST_WAIT at a time instead."""
    spec = {**SPEC, "datasets": ["data/noisy.csv"], "algorithms": ["greedy"],
            "depth": 1, "folds": 2, "time_limit": 1e12}
    outcome = run_sweep(sweep_from_dict(spec, folder), tmp_path / "r.csv",
                        ProcessPool(workers=1))
    assert outcome.ran == 2 and outcome.failed == 0


BAD_SPECS = [
    ({"algorithms": ["greedy"]}, "needs \"datasets\""),
    ({**SPEC, "algorithm": ["greedy"]}, "Unknown key 'algorithm'"),
    ({**SPEC, "algorithms": ["grredy"]}, "Unknown algorithm 'grredy'"),
    ({**SPEC, "datasets": ["data/absent.csv"]}, "does not exist"),
    ({**SPEC, "folds": 1}, "\"folds\""),
    ({**SPEC, "holdout": 0.2}, "both \"folds\" and \"holdout\""),
    ({**SPEC, "depth": [0]}, "\"depth\""),
    ({**SPEC, "time_limit": -1}, "\"time_limit\""),
    ({**SPEC, "binarize": "quantiles"}, "Unknown binarisation"),
    ({**SPEC, "params": {"blossom": {"prepocess": True}}}, "prepocess"),
    ({**SPEC, "params": {"dl85": {"min_support": 2}}}, "not among its algorithms"),
]


@pytest.mark.parametrize("spec, message", BAD_SPECS)
def test_bad_specs_are_one_sentence(folder, spec, message):
    with pytest.raises((ParameterError, DataError), match=message):
        sweep_from_dict(spec, folder)


# ----------------------------------------------------------------------- CLI
def test_orchard_sweep_end_to_end(folder, reference, tmp_path):
    orchard = Path(sys.executable).with_name("orchard")
    if not orchard.exists():
        pytest.skip("the orchard entry point is not installed in this environment")
    out = tmp_path / "results.csv"
    done = subprocess.run([str(orchard), "sweep", str(folder / "spec.json"), "--out",
                           str(out), "--workers", "2", "--json"],
                          check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["fits"] == summary["ran"] == N_FITS and summary["failed"] == 0
    assert f"{N_FITS}/{N_FITS} fits" in done.stderr      # the progress bar
    same_results(pd.read_csv(out), pd.read_csv(folder / "inprocess.csv"))


def test_cli_summary_line_and_resume(folder, capsys, tmp_path):
    spec = tmp_path / "one.json"
    spec.write_text(json.dumps({**SPEC, "datasets": [str(folder / "data/play_tennis.csv")],
                                "algorithms": ["greedy"], "depth": 1}))
    assert cli.main(["sweep", str(spec), "--workers", "1"]) == 0
    assert "3 fits (3 run now, 0 already done), 0 failed" in capsys.readouterr().out
    assert (tmp_path / "one.results.csv").exists()
    assert cli.main(["sweep", str(spec), "--workers", "1"]) == 0
    assert "(0 run now, 3 already done)" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["{spec}", "--out", "r.xlsx"], "must end in .csv or .parquet"),
    (["{spec}", "--workers", "0"], "--workers must be at least 1"),
    (["{spec}", "--scheduler", "nowhere"], "tcp://HOST:PORT"),
    (["{bad}"], "not valid JSON (line 1"),
    (["{absent}"], "does not exist"),
])
def test_cli_bad_input_exits_2_with_one_sentence(folder, tmp_path, capsys, args, message):
    (tmp_path / "bad.json").write_text('{"datasets": [}')
    paths = {"spec": folder / "spec.json", "bad": tmp_path / "bad.json",
             "absent": tmp_path / "absent.json"}
    assert cli.main(["sweep", *(a.format(**paths) for a in args)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("orchard: ") and err.count("\n") == 1
    assert "Traceback" not in err


def test_the_results_table_may_be_parquet(folder, reference, tmp_path):
    """Arrow comes with Orchard (its CSV reader), so .parquet results always work,
    and hold the table the sweep made."""
    out = tmp_path / "r.parquet"
    run_sweep(load_spec(folder / "spec.json"), out, InProcess())
    same_results(pd.read_parquet(out), reference)
