"""Run → Test a row: give one row's values and see where the model sends it.

One field per column the model reads (its own `Preprocessing.columns`, so nothing
else is asked).  A numeric column is typed, as in a CSV file (empty: a missing
cell).  A text column is chosen, not typed: typed text let a misspelt value silently
go where every value the model never saw goes.  It offers the values the model tells
apart (`known_values`) and, when the training table is at hand, the values seen in it
(`seen_values`: a two-valued column, one 0/1 feature "colour = red", offered "red"
alone), "any other value" and "missing", which the model routes or
fills as in training.  "Show its path" hands the row, as a one-row raw table, to the
window (`on_row`), which lights the path in the tree or diagram and returns the
sentence shown here.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from engine.data.features import EQ, IN

OTHER_ITEM = "(any other value)"
MISSING_ITEM = "(missing)"
# The cell "any other value" sends: to the CSV reader a NUL character marks a binary
# file, so no feature names it and the row goes where every value no feature names goes.
OTHER_VALUE = "\0"
# A text column offers at most this many of the values seen in the table (the most
# frequent): an identifier column would list every row.
SEEN_VALUES = 200


def first_row_values(model, frame: pd.DataFrame | None) -> dict[str, str] | None:
    """The first row of `frame` as the form's texts (a real row to start from), when
    the table has every column the model reads."""
    names = [column.name for column in model.prep.columns]
    if frame is None or not len(frame) or not set(names) <= set(frame.columns):
        return None
    row = frame.iloc[0]
    return {name: "" if pd.isna(row[name]) else str(row[name]) for name in names}


def seen_values(model, frame: pd.DataFrame | None) -> dict[str, list[str]]:
    """The most frequent values of each text column the model reads in `frame` (the
    table it trained on), at most `SEEN_VALUES` each; {} without a table."""
    if frame is None:
        return {}
    return {c.name: [str(v) for v in frame[c.name].value_counts().index[:SEEN_VALUES]]
            for c in model.prep.columns if not c.numeric and c.name in frame.columns}


def known_values(prep, name: str) -> list[str]:
    """The values of text column `name` the model tells apart, sorted: the value that
    fills a missing cell and every value its features test for.  Any other value,
    seen in training or not, takes the same way as all the others."""
    named = {prep.column(name).fill}
    for feature in prep.features:
        if feature.column == name and feature.op in (EQ, IN):
            named.update(feature.value if feature.op == IN else (feature.value,))
    return sorted(str(value) for value in named)


class NumberField(QLineEdit):
    """A numeric column's field: free text, read as a CSV cell (empty: missing)."""

    def value(self) -> str | None:
        return self.text().strip() or None

    def set_value(self, text: str) -> None:
        self.setText(text)


class ValueField(QComboBox):
    """A text column's field: one of `values`, any other value, or missing."""

    def __init__(self, values: list[str], parent=None):
        super().__init__(parent)
        self.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(16)   # a long value group does not widen the form
        for value in values:
            self.addItem(value, value)
        self.insertSeparator(self.count())
        self.addItem(OTHER_ITEM, OTHER_VALUE)
        self.addItem(MISSING_ITEM, None)
        self.set_value("")

    def value(self) -> str | None:
        return self.currentData()

    def set_value(self, text: str) -> None:
        """Choose `text` (a CSV cell; empty: missing), or any other value when the
        model does not know it."""
        index = self.findData(text) if text else self.count() - 1
        self.setCurrentIndex(index if index >= 0 else self.count() - 2)


class RowForm(QDialog):
    def __init__(self, model, source: str, on_row: Callable[[pd.DataFrame], str],
                 parent=None, values: dict[str, str] | None = None,
                 seen: dict[str, list[str]] | None = None):
        super().__init__(parent)
        self.setWindowTitle(f"Test a row — {source}")
        self.model, self._on_row, self._seen = model, on_row, seen or {}
        layout = QVBoxLayout(self)
        intro = QLabel(f"Values of one row for the model of {source}: a text column "
                       "offers the values the model knows. Leave a number empty, or "
                       f"choose {MISSING_ITEM}, for a missing value (filled as in "
                       "training).", self)
        intro.setWordWrap(True)
        layout.addWidget(intro)
        fields = QWidget(self)
        form = QFormLayout(fields)
        self.fields: dict[str, NumberField | ValueField] = {}
        for column in model.prep.columns:
            form.addRow(column.name, self._field(column))
        self.set_values(values or {})
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setWidget(fields)
        layout.addWidget(scroll, 1)
        self.answer = QLabel("", self)
        self.answer.setWordWrap(True)
        self.answer.setTextInteractionFlags(Qt.TextSelectableByMouse)
        layout.addWidget(self.answer)
        buttons = QDialogButtonBox(QDialogButtonBox.Close, self)
        self.show_button = buttons.addButton("Show its path", QDialogButtonBox.ApplyRole)
        self.show_button.setDefault(True)
        self.show_button.clicked.connect(self.show_path)
        buttons.rejected.connect(self.close)
        layout.addWidget(buttons)
        self.resize(460, min(160 + 34 * len(self.fields), 640))

    def _field(self, column) -> NumberField | ValueField:
        if column.numeric:
            field = NumberField(self)
            field.setPlaceholderText("a number")
            field.returnPressed.connect(self.show_path)
        else:
            values = set(known_values(self.model.prep, column.name))
            field = ValueField(sorted(values | set(self._seen.get(column.name, ()))), self)
        self.fields[column.name] = field
        return field

    def set_values(self, values: dict[str, str]) -> None:
        """Show `values` (texts as in a CSV file); a column left out is missing."""
        for name, field in self.fields.items():
            field.set_value(values.get(name, ""))

    def row(self) -> pd.DataFrame:
        """The fields as a one-row raw table (None where missing)."""
        return pd.DataFrame({name: [field.value()] for name, field in self.fields.items()},
                            dtype=object)

    def show_path(self) -> None:
        self.answer.setText(self._on_row(self.row()))
