"""The `orchard` command line: the DESIGN.md contract, bad input, every shared dataset."""

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.cli import main
from engine.errors import ParameterError
from engine.solvers.protocol import Param
from gui.app import main as orchard

from conftest import ROOT, SAMPLES, dataset_files

CONTRACT_KEYS = {"algorithm", "n_rows", "n_features", "n_classes", "depth", "train_error",
                 "train_accuracy", "lower_bound", "optimal", "status", "time_s",
                 "n_leaves", "incumbents"}


def run_json(capsys, *argv) -> dict:
    code = main([*map(str, argv), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def data_rows(path) -> int:
    lines = [line for line in path.read_text(encoding="utf-8-sig").splitlines() if line.strip()]
    return len(lines) - (1 if path.suffix == ".csv" else 0)


@pytest.mark.parametrize("path", dataset_files("odd", "inferdt", "cp4im", "contree"),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fit_greedy_on_every_shared_dataset(capsys, path):
    target = ["--target", "first"] if path.suffix == ".txt" else []
    summary = run_json(capsys, "fit", path, "--algo", "greedy", "--depth", 3, *target)
    assert CONTRACT_KEYS <= set(summary)
    assert summary["n_rows"] == data_rows(path)
    assert 0 < summary["train_accuracy"] <= 1 and summary["depth"] <= 3
    assert summary["train_error"] == pytest.approx(
        (1 - summary["train_accuracy"]) * summary["n_rows"])
    assert summary["status"] == "finished" and summary["optimal"] is False
    assert summary["incumbents"] and summary["incumbents"][-1][1] == summary["train_error"]
    assert summary["n_classes"] >= 2 and summary["n_leaves"] >= 1


def test_fit_writes_every_output_and_predict_reads_the_model(capsys, tmp_path):
    out = {kind: tmp_path / name for kind, name in [
        ("out", "m.json"), ("rules", "r.txt"), ("python", "m.py"), ("sql", "m.sql"),
        ("dot", "t.dot")]}
    flags = [x for kind, path in out.items() for x in (f"--{kind}", path)]
    summary = run_json(capsys, "fit", SAMPLES / "loans.csv", "--algo", "greedy",
                       "--depth", 4, "--binarize", "quantile:5", *flags)
    assert all(path.stat().st_size > 0 for path in out.values())
    assert "income" in out["rules"].read_text()
    prediction = run_json(capsys, "predict", out["out"], SAMPLES / "loans.csv")
    assert prediction["n_rows"] == 600
    assert prediction["accuracy"] == pytest.approx(summary["train_accuracy"])
    assert set(prediction["predictions"]) <= {"approved", "declined"}
    assert sum(map(sum, prediction["confusion_matrix"])) == 600


def test_predict_without_target_column_and_csv_output(capsys, tmp_path):
    model = tmp_path / "m.json"
    run_json(capsys, "fit", SAMPLES / "play_tennis.csv", "--algo", "greedy", "--out", model)
    new = tmp_path / "new.csv"
    new.write_text("outlook;humidity;windy;temperature\nsunny;high;false;hot\novercast;normal;true;mild\n")
    result = run_json(capsys, "predict", model, new, "--out", tmp_path / "p.csv")
    assert result["predictions"] == ["no", "yes"] and "accuracy" not in result
    assert (tmp_path / "p.csv").read_text().split() == ["play", "no", "yes"]


def test_fit_validate_estimates_new_rows_beside_the_baselines(capsys):
    """`--validate K`: the folds are `engine.evaluation`'s, and each scores the most
    common class and the greedy tree of the same depth on the same rows."""
    from engine.data.csv_reader import read_table
    from engine.data.dataset import PrepOptions
    from engine.evaluation import Plan, evaluate

    summary = run_json(capsys, "fit", SAMPLES / "loans.csv", "--algo", "blossom",
                       "--depth", 2, "--binarize", "quantile:4", "--validate", 4)
    validation = summary["validation"]
    expected = evaluate(read_table(SAMPLES / "loans.csv"),
                        PrepOptions(binarize="quantile:4"), "blossom", {"depth": 2},
                        Plan("kfold", 4))
    assert validation["complete"] and validation["folds"] == 4
    assert validation["per_fold"] == pytest.approx(expected.test_accuracies)
    assert 0.5 < validation["majority_accuracy"] < validation["greedy_accuracy"] <= 1
    # on these four folds the greedy tree does better by less than a standard error:
    # no loss is claimed (tests/test_evaluation.py checks the rule itself)
    assert validation["test_accuracy"] < validation["greedy_accuracy"]
    assert validation["verdict"] == ""


def test_fit_validate_says_when_the_tree_loses_to_the_majority_class(capsys, tmp_path):
    rng = np.random.default_rng(3)   # classes that no column predicts: deep trees memorise
    frame = np.column_stack([rng.integers(0, 4, (400, 6)), rng.random(400) < 0.8])
    path = tmp_path / "noise.csv"
    path.write_text("a,b,c,d,e,f,class\n" + "".join(
        ",".join(map(str, row[:6])) + f",{'yes' if row[6] else 'no'}\n" for row in frame))
    assert main(["fit", str(path), "--algo", "greedy", "--depth", "6", "--validate",
                 "5"]) == 0
    out = capsys.readouterr().out
    assert "5-fold cross-validation: test accuracy" in out
    assert "right less often than always answering the most common class" in out


def test_params_and_defaults(capsys):
    summary = run_json(capsys, "fit", SAMPLES / "loans.csv", "--algo", "greedy",
                       "--param", "min_leaf=50", "--param", "depth=2")
    assert summary["max_depth"] == 2 and summary["n_leaves"] <= 4
    default = run_json(capsys, "fit", SAMPLES / "loans.csv")
    assert default["algorithm"] in ("blossom", "greedy") and default["max_depth"] == 3


def test_image_export_through_the_orchard_command(tmp_path):
    image = tmp_path / "tree.png"
    assert orchard(["fit", str(SAMPLES / "play_tennis.csv"), "--algo", "greedy",
                    "--image", str(image)]) == 0
    assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _bad_files(tmp_path):
    files = {
        "empty": b"",
        "header_only": b"a,b,class\n",
        "one_column": b"a\n1\n2\n3\n",
        "one_class": b"a,b,class\n1,2,x\n3,4,x\n",
        "binary": bytes(range(256)) * 20,
    }
    paths = {}
    for name, content in files.items():
        paths[name] = tmp_path / f"{name}.csv"
        paths[name].write_bytes(content)
    return paths


BAD_ARGS = {
    "missing_file": lambda p, s: ["fit", str(p["empty"]) + ".absent"],
    "empty": lambda p, s: ["fit", p["empty"]],
    "header_only": lambda p, s: ["fit", p["header_only"]],
    "one_column": lambda p, s: ["fit", p["one_column"]],
    "one_class": lambda p, s: ["fit", p["one_class"]],
    "binary": lambda p, s: ["fit", p["binary"]],
    "unknown_algo": lambda p, s: ["fit", s, "--algo", "magic"],
    "unknown_param": lambda p, s: ["fit", s, "--algo", "greedy", "--param", "colour=3"],
    "bad_param_value": lambda p, s: ["fit", s, "--algo", "greedy", "--param", "min_leaf=x"],
    "malformed_param": lambda p, s: ["fit", s, "--param", "depth"],
    "negative_depth": lambda p, s: ["fit", s, "--algo", "greedy", "--depth", "-1"],
    "bad_binarize": lambda p, s: ["fit", s, "--binarize", "deciles"],
    "bad_time_limit": lambda p, s: ["fit", s, "--time-limit", "0"],
    "one_fold": lambda p, s: ["fit", s, "--validate", "1"],
    "unknown_target": lambda p, s: ["fit", s, "--target", "nope"],
    "bad_image_type": lambda p, s: ["fit", s, "--image", "tree.gif"],
    "unknown_flag": lambda p, s: ["fit", s, "--colour", "red"],
    "no_command": lambda p, s: ["train", s],
    "model_not_json": lambda p, s: ["predict", p["binary"], s],
}


@pytest.mark.parametrize("case", sorted(BAD_ARGS))
def test_bad_input_exits_2_with_one_sentence_and_writes_nothing(capsys, tmp_path, case):
    out = tmp_path / "model.json"
    argv = [str(a) for a in BAD_ARGS[case](_bad_files(tmp_path), SAMPLES / "loans.csv")]
    if argv[0] == "fit":
        argv += ["--out", str(out)]
    assert main(argv) == 2
    stdout, stderr = capsys.readouterr()
    message = stderr.strip()
    assert stdout == "" and "\n" not in message and "Traceback" not in message
    assert message.startswith("orchard: ") and message.endswith((".", ")."))
    assert not out.exists()


def test_bad_input_in_a_real_process_prints_no_traceback(tmp_path):
    empty = tmp_path / "e.csv"
    empty.write_text("")
    done = subprocess.run([sys.executable, "-m", "gui.app", "fit", str(empty), "--json"],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


@pytest.mark.parametrize("argv", [["--help"], ["fit", "--help"], ["fit"],
                                  ["tune", "t.csv", "--bogus"], ["--bogus"]])
def test_help_and_usage_errors_import_nothing_heavy(argv):
    """`orchard --help` took 0.72 s on a quiet core (4.6 s on a busy one), importing
    pandas, numba and every solver to print text (issue 49): the entry point and the
    parser import none of them, so help and usage errors answer at once."""
    code = ("import sys\nfrom gui.app import main\n"
            "try:\n    status = main(sys.argv[1:])\nexcept SystemExit as exit:\n"
            "    status = exit.code\n"
            "heavy = [m for m in ('numpy', 'pandas', 'numba', 'scipy', 'PySide6', "
            "'engine.solvers', 'engine.commands') if m in sys.modules]\n"
            "print(status, heavy, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    status, heavy = done.stderr.strip().splitlines()[-1].split(" ", 1)
    assert status == ("0" if "--help" in argv else "2"), done.stderr
    assert heavy == "[]"


def test_odd_json_in_a_real_process_is_json(datasets_dir):
    """HiGHS printed its banner on fd 1, before the summary, in every `odd` run."""
    iris = datasets_dir / "inferdt" / "iris.csv"
    done = subprocess.run([sys.executable, "-m", "gui.app", "fit", str(iris), "--algo",
                           "odd", "--json", "--time-limit", "10"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["algorithm"] == "odd" and summary["train_error"] <= 10


def test_headless_orchard_trains_on_the_bundled_sample(monkeypatch, capsys):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    assert orchard([]) == 0
    out = capsys.readouterr().out
    assert "No display found" in out and "training accuracy" in out


@pytest.mark.parametrize("name", ["tab", "\\t"])
def test_delimiter_names(capsys, tmp_path, name):
    path = tmp_path / "t.tsv"
    path.write_text("a\tb\tclass\n1\t2\tx\n3\t4\ty\n5\t1\tx\n")
    assert run_json(capsys, "fit", path, "--algo", "greedy", "--delimiter", name)["n_rows"] == 3


# ------------------------------------------------- rough edges of malformed input
def test_outputs_are_all_or_nothing_when_the_disk_fills(capsys, tmp_path, monkeypatch):
    """The disk fills while writing the second output: neither output is left, nor any
    temporary file, and the failure is one sentence naming the file."""
    data = tmp_path / "data.csv"
    data.write_bytes((SAMPLES / "play_tennis.csv").read_bytes())
    write_text = Path.write_text

    def full_disk(path, *args, **kwargs):
        if path.suffix == ".py":   # temporaries keep their target's extension
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return write_text(path, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full_disk)
    assert main(["fit", str(data), "--algo", "greedy", "--out", str(tmp_path / "model.json"),
                 "--python", str(tmp_path / "m.py")]) == 2
    err = capsys.readouterr().err
    assert err == "orchard: Cannot write '%s' (No space left on device).\n" % (tmp_path / "m.py")
    assert os.listdir(tmp_path) == ["data.csv"]


def test_an_image_name_too_long_is_one_sentence(capsys, tmp_path):
    def fit_image(name):
        return orchard(["fit", str(SAMPLES / "play_tennis.csv"), "--algo", "greedy",
                        "--image", str(tmp_path / name)])

    assert fit_image("a" * 300 + ".png") == 2
    err = capsys.readouterr().err
    assert err.startswith("orchard: Cannot write") and "too long" in err
    assert err.count("\n") == 1 and os.listdir(tmp_path) == []
    assert fit_image("a" * 251 + ".svg") == 0   # the longest name allowed is written
    assert os.listdir(tmp_path) == ["a" * 251 + ".svg"]


@pytest.mark.parametrize("argv, hint", [
    (["--bogus"], "(see 'orchard --help')."),
    (["--bogus", "fit", "x.csv"], "(see 'orchard --help')."),
    (["fit", "--bogus", "x.csv"], "(see 'orchard fit --help')."),
    (["fit", "x.csv", "--bogus=3"], "(see 'orchard fit --help')."),
    (["predict", "m.json", "x.csv", "--bogus"], "(see 'orchard predict --help')."),
    (["sweep", "s.json", "--bogus"], "(see 'orchard sweep --help')."),
])
@pytest.mark.parametrize("command", [main, orchard], ids=["engine", "orchard"])
def test_a_usage_error_points_to_the_help_of_its_command(capsys, command, argv, hint):
    assert command(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("orchard: ") and err.endswith(hint + "\n") and err.count("\n") == 1
    assert "bogus" in err   # the option that was not understood is named


@pytest.mark.parametrize("algo, param, value, message", [
    ("greedy", "min_leaf", "0", "'min_leaf' must be at least 1, not 0."),
    ("greedy", "min_leaf", "-1.5", "'min_leaf' must be at least 1, not -1.5."),
    ("greedy", "depth", "25", "'depth' must be between 0 and 20, not 25."),
    ("blossom", "threads", "-1", "'threads' must be between 0 and 1024, not -1."),
    ("cadl85", "min_purity", "2", "'min_purity' must be between 0 and 1, not 2."),
    ("odd", "restarts", "0", "'restarts' must be at least 1, not 0."),
])
def test_parameter_bounds_read_as_words(capsys, algo, param, value, message):
    assert main(["fit", str(SAMPLES / "play_tennis.csv"), "--algo", algo, "--param",
                 f"{param}={value}"]) == 2
    assert capsys.readouterr().err == f"orchard: Parameter {message}\n"


def test_an_upper_bound_alone_and_float_bounds():
    with pytest.raises(ParameterError, match=r"'x' must be at most 5, not 7\.$"):
        Param("x", "int", 0, "", high=5.0).validate(7)
    with pytest.raises(ParameterError, match=r"'y' must be between 0\.5 and 2, not 3\.5\.$"):
        Param("y", "float", 1.0, "", 0.5, 2.0).validate(3.5)
