"""Predict a file from the window: the same predictions and scores as `orchard
predict` on the saved model (its column is the saved CSV's predicted class); a file
without the class column is predicted and not scored; a bad file is one sentence."""

import json

import numpy as np
import pandas as pd
from test_gui_support import LOANS, isolated_settings, open_window, run_and_wait  # noqa: F401

from engine.cli import main as cli
from engine.export import write_export


def predicted(qtbot, dialog, path):
    with qtbot.waitSignal(dialog.finished_reading, timeout=30_000):
        dialog.open_path(path)
    return dialog.predictions


def test_predictions_equal_orchard_predict(qtbot, tmp_path, capsys):
    win = open_window(qtbot, LOANS, algorithm="greedy")
    win.depth_spin.setValue(3)
    run_and_wait(qtbot, win)
    dialog = win.analysis.predict_dialog()
    qtbot.addWidget(dialog)
    ours = predicted(qtbot, dialog, LOANS)

    model = tmp_path / "model.json"
    write_export(win.tree, model, "json")
    out = tmp_path / "cli.csv"
    assert cli(["predict", str(model), str(LOANS), "--json", "--out", str(out)]) == 0
    reference = json.loads(capsys.readouterr().out)
    assert ours.names == reference["predictions"]
    assert ours.accuracy == reference["accuracy"]
    assert ours.scores["balanced_accuracy"] == reference["balanced_accuracy"]
    assert ours.confusion.astype(int).tolist() == reference["confusion_matrix"]
    dialog.save(tmp_path / "window.csv")   # the CLI's column, each row explained
    saved = pd.read_csv(tmp_path / "window.csv", dtype=str, keep_default_na=False)
    cli_column = pd.read_csv(out, dtype=str)["decision"]
    assert saved["predicted class"].tolist() == cli_column.tolist()
    table = dialog.table.model()
    assert table.rowCount() == 600 and table.columnCount() == 4
    truth = [table.data(table.index(r, 2)) for r in range(600)]
    wrong = int(np.sum(np.array(ours.names) != np.array(truth)))
    assert wrong > 0
    assert sum(table.data(table.index(r, 3)) == "no" for r in range(600)) == wrong
    assert "balanced accuracy" in dialog.summary.text()


def test_a_file_without_the_class_is_predicted_not_scored(qtbot, tmp_path):
    win = open_window(qtbot, LOANS, algorithm="greedy")
    run_and_wait(qtbot, win)
    lines = LOANS.read_text().splitlines()
    drop = lines[0].split(",").index("decision")
    rows = [",".join(v for i, v in enumerate(line.split(",")) if i != drop) for line in lines]
    unlabelled = tmp_path / "new.csv"
    unlabelled.write_text("\n".join(rows) + "\n")
    dialog = win.analysis.predict_dialog()
    qtbot.addWidget(dialog)
    result = predicted(qtbot, dialog, unlabelled)
    assert result.truth is None and len(result.names) == 600
    assert dialog.table.model().columnCount() == 2
    assert "nothing is scored" in dialog.summary.text()


def test_a_bad_file_is_one_sentence(qtbot, tmp_path):
    win = open_window(qtbot, LOANS, algorithm="greedy")
    run_and_wait(qtbot, win)
    dialog = win.analysis.predict_dialog()
    qtbot.addWidget(dialog)
    result = predicted(qtbot, dialog, tmp_path / "missing.csv")
    assert result is None and "missing.csv" in dialog.summary.text()
    assert not dialog.save_button.isEnabled()
