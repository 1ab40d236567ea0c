"""Run → Test a row: type one row's values and see where the model sends it.

One field per column the model reads (its own `Preprocessing.columns`, so nothing
else is asked), text as it would be in a CSV file; an empty field is a missing
cell, filled as the model fills it.  "Show its path" hands the row, as a one-row
raw table, to the window (`on_row`), which lights the path in the tree or diagram
and returns the sentence shown here.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)


def first_row_values(model, frame: pd.DataFrame | None) -> dict[str, str] | None:
    """The first row of `frame` as the form's texts (a real row to start from), when
    the table has every column the model reads."""
    names = [column.name for column in model.prep.columns]
    if frame is None or not len(frame) or not set(names) <= set(frame.columns):
        return None
    row = frame.iloc[0]
    return {name: "" if pd.isna(row[name]) else str(row[name]) for name in names}


class RowForm(QDialog):
    def __init__(self, model, source: str, on_row: Callable[[pd.DataFrame], str],
                 parent=None, values: dict[str, str] | None = None):
        super().__init__(parent)
        self.setWindowTitle(f"Test a row — {source}")
        self.model, self._on_row = model, on_row
        layout = QVBoxLayout(self)
        intro = QLabel(f"Values of one row for the model of {source}. Leave a field empty "
                       "for a missing value (filled as in training).", self)
        intro.setWordWrap(True)
        layout.addWidget(intro)
        fields = QWidget(self)
        form = QFormLayout(fields)
        self.fields: dict[str, QLineEdit] = {}
        for column in model.prep.columns:
            edit = QLineEdit(self)
            edit.setPlaceholderText("a number" if column.numeric else "text")
            edit.setText((values or {}).get(column.name, ""))
            edit.returnPressed.connect(self.show_path)
            form.addRow(column.name, edit)
            self.fields[column.name] = edit
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

    def row(self) -> pd.DataFrame:
        """The fields as a one-row raw table (None where empty: a missing cell)."""
        return pd.DataFrame({name: [edit.text().strip() or None]
                             for name, edit in self.fields.items()}, dtype=object)

    def show_path(self) -> None:
        self.answer.setText(self._on_row(self.row()))
