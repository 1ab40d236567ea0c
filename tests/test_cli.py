"""The `orchard` command line: the DESIGN.md contract, bad input, every shared dataset."""

import json
import subprocess
import sys

import pytest

from engine.cli import main
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
