"""Predict a file with the model on screen: what `orchard predict` does, in a window.

A thin view over `engine.prediction.predict_table`: the file is read and predicted in
a worker (progress, Stop), the rows are listed with their prediction (and, when the
file has the model's class column, the true class and whether it is right), with
accuracy, balanced accuracy and the confusion matrix, and the predictions are saved
as a CSV that explains each row (`engine.export.predictions.prediction_table`: row,
input cells, true class, predicted class, probability, leaf), into the folder of the
last export.

What is shown and saved always belongs to the file named: opening another file
forgets the last one's predictions at once, so a file that fails leaves nothing to
see or save (Save is disabled until a file is predicted).  Texts are plain, never
rich text, so a file name or a message is shown exactly as it is.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QTableView,
    QVBoxLayout,
)

from engine.data.csv_reader import read_table
from engine.data.features import format_number
from engine.export.predictions import prediction_table, write_prediction_table
from engine.prediction import Predictions, predict_table
from engine.solvers.monitor import Monitor
from gui import settings
from gui.confusion_view import ConfusionView
from gui.data_tasks import StageRelay
from gui.export_dialog import EXPORT_FOLDER, last_export_folder
from gui.worker import Worker, error_message

WHAT_TO_OPEN = ("Open a CSV file with the columns of the training data (the class "
                "column may be left out).")


def read_and_predict(path: str, model,
                     monitor: Monitor) -> tuple[Predictions, pd.DataFrame]:
    """Read `path` (stoppable), predict its rows with `model` and lay out the table
    Save writes, all off the GUI thread (the raw table is not kept)."""
    raw = read_table(path, progress=monitor.checkpoint)
    monitor.checkpoint(f"predicting {len(raw.frame):,} rows", None)
    predictions = predict_table(model, raw.frame)
    return predictions, prediction_table(model, raw.frame, predictions)


_ROOT = QModelIndex()  # the invisible root: a flat table has no children


class PredictionsModel(QAbstractTableModel):
    """Row, prediction and, when known, true class and correctness; computed per
    visible cell, so two million rows cost nothing until scrolled to."""

    def __init__(self, predictions: Predictions, parent=None):
        super().__init__(parent)
        self.p = predictions
        # a regression's: the true value and the error (prediction - truth)
        self.regression = predictions.predicted.dtype.kind == "f"
        truth = ["True value", "Error"] if self.regression else ["True class", "Correct"]
        self.headers = ["Row", "Prediction"] + (truth if predictions.truth is not None
                                                else [])

    def rowCount(self, parent=_ROOT) -> int:
        return 0 if parent.isValid() else len(self.p.predicted)

    def columnCount(self, parent=_ROOT) -> int:
        return 0 if parent.isValid() else len(self.headers)

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if role == Qt.DisplayRole and orientation == Qt.Horizontal:
            return self.headers[section]
        return None

    def data(self, index, role=Qt.DisplayRole):
        if role != Qt.DisplayRole or not index.isValid():
            return None
        row, column = index.row(), index.column()
        names = self.p.class_names
        if column == 0:
            return row + 1
        if self.regression:
            return self._number(row, column)
        if column == 1:
            return names[self.p.predicted[row]]
        if not self.p.known[row]:
            return "—"
        truth = self.p.truth[row]
        if column == 2:
            return names[truth] if truth >= 0 else "(a class the model never saw)"
        return "yes" if truth == self.p.predicted[row] else "no"


    def _number(self, row: int, column: int) -> str:
        """A regression's cell: its prediction, true value or error, as shown."""
        predicted = float(self.p.predicted[row])
        if column == 1:
            return format_number(predicted)
        if not self.p.known[row]:
            return "—"
        truth = float(self.p.truth[row])
        return format_number(truth if column == 2 else predicted - truth)


def plain_label(text: str, parent) -> QLabel:
    """A label showing `text` as it is (a file name may hold `<` or `&`)."""
    label = QLabel(text, parent)
    label.setTextFormat(Qt.PlainText)
    return label


class PredictDialog(QDialog):
    """Open a CSV, predict it with `model` (named `source`, e.g. "run #3"), save."""

    finished_reading = Signal()   # a file was predicted, or could not be

    def __init__(self, model, source: str, parent=None):
        super().__init__(parent)
        self.model, self.predictions, self._worker = model, None, None
        self._output: pd.DataFrame | None = None   # what Save writes, of `_path`
        self.setWindowTitle(f"Predict a file — {source}")
        self.resize(720, 560)
        layout = QVBoxLayout(self)
        layout.addWidget(plain_label(f"Model: {source}, class column "
                                     f"'{model.prep.target}'", self))
        buttons = QHBoxLayout()
        self.open_button = QPushButton("Open CSV…", self)
        self.open_button.clicked.connect(self._choose_file)
        self.stop_button = QPushButton("Stop", self)
        self.stop_button.clicked.connect(self.stop)
        self.save_button = QPushButton("Save predictions as CSV…", self)
        self.save_button.clicked.connect(self._choose_output)
        for button in (self.open_button, self.stop_button, self.save_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.progress = QProgressBar(self)
        self.progress.hide()
        layout.addWidget(self.progress)
        self.summary = plain_label(WHAT_TO_OPEN, self)
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.table = QTableView(self)
        self.table.verticalHeader().hide()
        layout.addWidget(self.table, 3)
        self.confusion = ConfusionView(self)
        layout.addWidget(self.confusion, 2)
        self._set_busy(False)

    # -------------------------------------------------------------- reading
    def _choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Predict a data file", "",
                                              "Data files (*.csv *.tsv *.txt);;All files (*)")
        if path:
            self.open_path(path)

    def open_path(self, path: str | Path) -> None:
        self.stop()
        monitor = Monitor()
        worker = Worker(read_and_predict, str(path), self.model, name="orchard-predict",
                        report_arg=None, monitor=monitor, on_cancel=monitor.cancel)
        monitor.on_progress = StageRelay(worker.report)
        worker.partial.connect(self._progress)
        worker.finished.connect(self._finished)
        worker.errored.connect(self._failed)
        worker.cancelled.connect(self._stopped)
        self._worker, self._path = worker, Path(path)
        self._forget_predictions()
        self.summary.setText(f"Reading {self._path.name}…")
        self._set_busy(True)
        worker.start()

    def _forget_predictions(self) -> None:
        """Show and keep nothing of the last file: another file is named now."""
        self.predictions = self._output = None
        shown = self.table.model()
        self.table.setModel(None)
        if shown is not None:
            shown.deleteLater()   # it holds the last file's predictions
        self.confusion.show_matrix(None, [])

    def stop(self) -> None:
        if self._worker is not None:
            self._worker.cancel()

    def _progress(self, payload) -> None:
        if self.sender() is self._worker and payload[0] == "stage":
            _, text, fraction = payload
            self.summary.setText(str(text))
            self.progress.setRange(0, 0 if fraction is None else 1000)
            if fraction is not None:
                self.progress.setValue(round(1000 * fraction))

    def _finished(self, result: tuple[Predictions, pd.DataFrame]) -> None:
        if self.sender() is not self._worker:
            return
        predictions, self._output = result
        self._worker, self.predictions = None, predictions
        self._set_busy(False)
        self.table.setModel(PredictionsModel(predictions, self.table))
        name = self._path.name
        if predictions.truth is None:
            self.summary.setText(f"{len(predictions.predicted):,} rows of {name} predicted "
                                 "(the file has no class column, so nothing is scored).")
            self.confusion.show_matrix(None, [])
            self.finished_reading.emit()
            return
        scores = predictions.scores
        if predictions.predicted.dtype.kind == "f":   # a regression's
            self.summary.setText(
                f"{len(predictions.predicted):,} rows of {name} predicted; on the "
                f"{predictions.n_scored:,} with a value: RMSE "
                f"{format_number(scores['rmse'])}, MAE {format_number(scores['mae'])}, "
                f"R² {scores['r2']:.3f}.")
            self.confusion.show_matrix(None, [])
            self.finished_reading.emit()
            return
        self.summary.setText(
            f"{len(predictions.predicted):,} rows of {name} predicted; on the "
            f"{predictions.n_scored:,} with a class: accuracy "
            f"{100 * predictions.accuracy:.1f}%, balanced accuracy "
            f"{100 * scores['balanced_accuracy']:.1f}%.")
        self.confusion.show_matrix(predictions.confusion, predictions.class_names)
        self.finished_reading.emit()

    def _failed(self, message: str) -> None:
        """The error in one sentence, then what to try."""
        self._ended_without(f"{message} Nothing of {self._path.name} is predicted. "
                            f"{WHAT_TO_OPEN}")

    def _stopped(self) -> None:
        self._ended_without(f"Stopped: {self._path.name} is not predicted.")

    def _ended_without(self, text: str) -> None:
        if self.sender() is not self._worker:
            return
        self._worker = None
        self._set_busy(False)
        self.summary.setText(text)
        self.finished_reading.emit()

    def _set_busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.open_button.setEnabled(not busy)
        self.stop_button.setEnabled(busy)
        self.save_button.setEnabled(not busy and self.predictions is not None)

    # --------------------------------------------------------------- saving
    def _choose_output(self) -> None:
        start = Path(last_export_folder(self._path.parent)) / \
            f"{self._path.stem}-predictions.csv"
        path, _ = QFileDialog.getSaveFileName(self, "Save predictions", str(start),
                                              "CSV (*.csv)")
        if path:
            self.save(path)

    def save(self, path: str | Path) -> None:
        """Write the predictions of the file named (`prediction_table`) to `path`; the
        next export starts in its folder."""
        QGuiApplication.setOverrideCursor(Qt.WaitCursor)
        try:
            write_prediction_table(path, self._output)
        except Exception as exc:  # noqa: BLE001 - reported to the user
            self.summary.setText(error_message(exc))
            return
        finally:
            QGuiApplication.restoreOverrideCursor()
        settings.remember_folder(EXPORT_FOLDER, path)
        self.summary.setText(self.summary.text() + f" Saved to {path}.")

    def done(self, result: int) -> None:
        self.stop()
        if self._worker is not None:
            self._worker.wait()
        super().done(result)
