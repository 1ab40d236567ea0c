"""Issue 34, the dialogs: Predict a file shows and saves only the file it names, and
saves each row explained (row, inputs, true class, predicted class, probability,
leaf); Test a row offers a text column's known values, not free text; exports start
in the folder the user last exported into."""

import csv

import numpy as np
import pandas as pd
import pytest
from PySide6.QtWidgets import QComboBox, QFileDialog, QLineEdit
from test_diagram import TABLE, hand_diagram
from test_gui_support import LOANS, isolated_settings  # noqa: F401

from engine.data.csv_reader import parse_text, read_table
from engine.data.dataset import PrepOptions
from engine.data.features import EQ, IN
from engine.export.predictions import prediction_table, write_prediction_table
from engine.featurize import prepare
from engine.importance import class_probabilities
from engine.prediction import predict_table
from engine.training import train
from gui import settings
from gui.export_dialog import ExportDialog
from gui.predict_dialog import PredictDialog
from gui.row_form import MISSING_ITEM, OTHER_ITEM, RowForm, first_row_values


@pytest.fixture(scope="module")
def loans_tree():
    return train(prepare(read_table(LOANS), PrepOptions(target="decision")), "greedy",
                 {"depth": 3}).tree


@pytest.fixture(scope="module")
def small():
    """TABLE (missing cells in every input column), its prepared data and a tree."""
    data = prepare(parse_text(TABLE), PrepOptions(target="y", missing="indicator"))
    return parse_text(TABLE).frame, data, train(data, "greedy", {"depth": 2}).tree


# ------------------------------------------------ the saved predictions' table
@pytest.mark.parametrize("kind", ["tree", "diagram"])
@pytest.mark.parametrize("labelled", [True, False])
def test_the_table_explains_every_row(small, kind, labelled, tmp_path):
    frame, data, tree = small
    model = tree if kind == "tree" else hand_diagram(data)
    if not labelled:
        frame = frame.drop(columns="y")
    predictions = predict_table(model, frame)
    table = prediction_table(model, frame, predictions)
    inputs = [c.name for c in model.prep.columns]
    truth = ["true class"] if labelled else []
    assert list(table.columns) == ["row", *inputs, *truth, "predicted class",
                                   "probability", "leaf"]
    X = model.prep.transform(frame)
    predicted, leaves = model.predict(X), model.apply(X)
    assert table["row"].tolist() == list(range(1, len(frame) + 1))
    assert table["predicted class"].tolist() == [model.class_names[k] for k in predicted]
    assert table["leaf"].tolist() == leaves.tolist()
    assert all(model.is_leaf(n) if kind == "tree" else model.is_terminal(n) for n in leaves)
    shares = class_probabilities(model, X)[np.arange(len(X)), predicted]
    np.testing.assert_array_equal(table["probability"], shares)
    assert ((table["probability"] > 0) & (table["probability"] <= 1)).all()

    path = tmp_path / "predictions.csv"
    write_prediction_table(path, table)
    with open(path, newline="", encoding="utf-8") as handle:
        header, *lines = list(csv.reader(handle))
    assert header == list(table.columns) and len(lines) == len(frame)
    for line, (_, row) in zip(lines, frame.iterrows()):
        cells = dict(zip(header, line))
        # a missing cell stays empty; the others are written as they are in the file
        assert [cells[name] for name in inputs] == ["" if pd.isna(row[name]) else row[name]
                                                    for name in inputs]
        if labelled:
            assert cells["true class"] == row["y"]
    assert any("" in line for line in lines)   # the table has missing cells


def test_a_column_named_like_an_added_one_keeps_both(small):
    frame, _, _ = small
    renamed = frame.rename(columns={"spend": "leaf"})
    named = prepare(parse_text(TABLE.replace("spend", "leaf", 1)), PrepOptions(target="y"))
    tree = train(named, "greedy", {"depth": 2}).tree
    table = prediction_table(tree, renamed, predict_table(tree, renamed))
    assert "leaf" in table.columns and "_leaf" in table.columns
    assert table["_leaf"].tolist() == tree.apply(tree.prep.transform(renamed)).tolist()


# ------------------------------------------------------------- Predict a file
def predicted(qtbot, dialog, path):
    with qtbot.waitSignal(dialog.finished_reading, timeout=30_000):
        dialog.open_path(path)
    return dialog.predictions


def wrong_files(tmp_path):
    wrong = tmp_path / "wrong & columns.csv"
    wrong.write_text("a,b\n1,2\n")
    picture = tmp_path / "picture.png"
    picture.write_bytes(bytes(range(256)) * 40)
    return [wrong, picture]


@pytest.mark.parametrize("bad", [0, 1], ids=["wrong columns", "not a CSV"])
def test_a_failed_file_shows_and_saves_nothing_of_the_last(qtbot, loans_tree, tmp_path,
                                                           bad):
    dialog = PredictDialog(loans_tree, "run #1")
    qtbot.addWidget(dialog)
    assert predicted(qtbot, dialog, LOANS) is not None
    assert dialog.save_button.isEnabled() and dialog.table.model().rowCount() == 600
    path = wrong_files(tmp_path)[bad]
    assert predicted(qtbot, dialog, path) is None
    assert not dialog.save_button.isEnabled()
    assert dialog.table.model() is None or dialog.table.model().rowCount() == 0
    assert dialog.confusion.matrix.size == 0
    text = dialog.summary.text()
    assert path.name in text and "loans" not in text      # named as it is, no &amp;
    assert text.endswith("Open a CSV file with the columns of the training data (the "
                         "class column may be left out).")
    # the next good file is shown and saved again
    assert predicted(qtbot, dialog, LOANS) is not None and dialog.save_button.isEnabled()


def test_the_saved_file_explains_each_row_of_the_file_named(qtbot, loans_tree, tmp_path):
    dialog = PredictDialog(loans_tree, "run #1")
    qtbot.addWidget(dialog)
    ours = predicted(qtbot, dialog, LOANS)
    dialog.save(tmp_path / "window.csv")
    saved = pd.read_csv(tmp_path / "window.csv", dtype=str, keep_default_na=False)
    inputs = [c.name for c in loans_tree.prep.columns]
    assert list(saved.columns) == ["row", *inputs, "true class", "predicted class",
                                   "probability", "leaf"]
    raw = read_table(LOANS).frame
    assert saved["row"].tolist() == [str(k) for k in range(1, 601)]
    assert saved[inputs].values.tolist() == raw[inputs].astype(object).fillna("").values.tolist()
    assert saved["true class"].tolist() == raw["decision"].tolist()
    assert saved["predicted class"].tolist() == ours.names
    assert saved["leaf"].astype(int).tolist() == ours.leaf.tolist()
    np.testing.assert_allclose(saved["probability"].astype(float), ours.probability)
    assert "Saved to" in dialog.summary.text()


# ------------------------------------------------------------------ Test a row
def test_a_text_column_is_chosen_from_the_values_the_model_knows(qtbot, loans_tree):
    rows = []
    frame = read_table(LOANS).frame
    form = RowForm(loans_tree, "run #1", lambda row: rows.append(row) or "shown",
                   values=first_row_values(loans_tree, frame))
    qtbot.addWidget(form)
    prep = loans_tree.prep
    for column in prep.columns:
        field = form.fields[column.name]
        if column.numeric:   # numbers stay typed
            assert isinstance(field, QLineEdit) and field.text() == frame[column.name][0]
            continue
        assert isinstance(field, QComboBox) and not field.isEditable()
        offered = [field.itemText(i) for i in range(field.count()) if field.itemText(i)]
        named = {str(v) for f in prep.features
                 if f.column == column.name and f.op in (EQ, IN)
                 for v in (f.value if f.op == IN else (f.value,))}
        assert set(offered) == named | {column.fill, OTHER_ITEM, MISSING_ITEM}
    job = form.fields["job"]
    assert job.currentText() == frame["job"][0] == "student"   # starts from row 1

    for name, value in (("job", "retired"), ("purpose", "car")):
        form.fields[name].setCurrentIndex(form.fields[name].findText(value))
    form.fields["job"].setCurrentIndex(form.fields["job"].findText(MISSING_ITEM))
    form.show_button.click()
    assert rows[-1]["job"][0] is None and rows[-1]["purpose"][0] == "car"  # None: missing

    # a value the model never names goes the way every other value goes
    assert "no" not in [form.fields["owns_home"].itemText(i)
                        for i in range(form.fields["owns_home"].count())]
    form.set_values({**first_row_values(loans_tree, frame.iloc[2:]), "owns_home": "no"})
    assert form.fields["owns_home"].currentText() == OTHER_ITEM
    assert form.fields["job"].currentText() == MISSING_ITEM   # row 3 has no job
    form.show_button.click()
    np.testing.assert_array_equal(prep.transform(rows[-1]),
                                  prep.transform(rows[-1].assign(owns_home="no")))


# --------------------------------------------------------------------- folders
def test_exports_start_in_the_folder_last_exported_into(qtbot, loans_tree, tmp_path,
                                                        monkeypatch):
    first, chosen = tmp_path / "first", tmp_path / "chosen"
    first.mkdir(), chosen.mkdir()
    errors = []
    dialog = ExportDialog(loans_tree, first, "loans", errors.append)
    qtbot.addWidget(dialog)
    assert dialog.folder_edit.text() == str(first)   # no export yet
    dialog.set_checked(["rules"])
    dialog.folder_edit.setText(str(chosen))
    assert dialog.export_checked() == [chosen / "loans-rules.txt"] and not errors
    again = ExportDialog(loans_tree, first, "loans", errors.append)
    qtbot.addWidget(again)
    assert again.folder_edit.text() == str(chosen)

    predict = PredictDialog(loans_tree, "run #1")
    qtbot.addWidget(predict)
    predicted(qtbot, predict, LOANS)
    offered = []
    saved = tmp_path / "elsewhere" / "mine.csv"
    saved.parent.mkdir()
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda parent, title, start, kinds: (offered.append(start)
                                                             or str(saved), kinds))
    predict.save_button.click()
    assert offered == [str(chosen / "loans-predictions.csv")] and saved.is_file()
    assert settings.last_folder("export") == str(saved.parent)
    third = ExportDialog(loans_tree, first, "loans", errors.append)
    qtbot.addWidget(third)
    assert third.folder_edit.text() == str(saved.parent)
