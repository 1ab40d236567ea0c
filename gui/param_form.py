"""A form generated from a solver's parameter schema (`Solver.params`).

int -> spin box, float -> decimal spin box, bool -> check box, choice -> drop-down,
text -> line edit;
each with the schema's range and its help as tooltip.  `depth` is left out: the
window gives it its own control because every tree solver has it.  Values typed for
one algorithm are remembered when the user switches to another and back.
"""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from engine.solvers import get_solver
from engine.solvers.protocol import Param

SKIPPED = ("depth",)
INT_LIMIT = 2_000_000_000


def _label(name: str) -> str:
    return name.replace("_", " ").capitalize() + ":"


class ParamForm(QWidget):
    changed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self._layout = QFormLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        self._algorithm: str | None = None
        self._params: list[Param] = []
        self.editors: dict[str, QWidget] = {}
        self._remembered: dict[str, dict[str, Any]] = {}

    # ------------------------------------------------------------------ build
    def set_algorithm(self, name: str) -> None:
        if self._algorithm is not None:
            self._remembered[self._algorithm] = self.values()
        self._algorithm = name
        while self._layout.rowCount():
            self._layout.removeRow(0)
        self.editors = {}
        self._params = [p for p in get_solver(name).params if p.name not in SKIPPED]
        for param in self._params:
            editor = self._editor(param)
            editor.setToolTip(param.help)
            editor.setObjectName(f"param_{param.name}")
            if isinstance(editor, QCheckBox):
                editor.setText(param.name.replace("_", " ").capitalize())
                self._layout.addRow(editor)
            else:
                label = QLabel(_label(param.name), self)
                label.setToolTip(param.help)
                self._layout.addRow(label, editor)
            self.editors[param.name] = editor
        self.set_values(self._remembered.get(name, {}))
        self.setVisible(bool(self._params))

    def _editor(self, param: Param) -> QWidget:
        if param.kind == "int":
            box = QSpinBox(self)
            box.setRange(int(param.low) if param.low is not None else -INT_LIMIT,
                         int(param.high) if param.high is not None else INT_LIMIT)
            box.setValue(int(param.default))
            box.valueChanged.connect(self.changed)
            return box
        if param.kind == "float":
            box = QDoubleSpinBox(self)
            box.setDecimals(_decimals(param))
            box.setRange(param.low if param.low is not None else -1e12,
                         param.high if param.high is not None else 1e12)
            box.setValue(float(param.default))
            box.valueChanged.connect(self.changed)
            return box
        if param.kind == "bool":
            box = QCheckBox(self)
            box.setChecked(bool(param.default))
            box.toggled.connect(self.changed)
            return box
        if param.kind == "text":
            line = QLineEdit(str(param.default), self)
            line.textChanged.connect(self.changed)
            return line
        combo = QComboBox(self)
        for choice in param.choices:
            combo.addItem(str(choice), choice)
        combo.setCurrentIndex(max(0, combo.findData(param.default)))
        combo.currentIndexChanged.connect(self.changed)
        return combo

    # ----------------------------------------------------------------- values
    def values(self) -> dict[str, Any]:
        """Current values, typed as the schema says (validated by the solver)."""
        out = {}
        for param in self._params:
            editor = self.editors[param.name]
            if isinstance(editor, QCheckBox):
                out[param.name] = editor.isChecked()
            elif isinstance(editor, QComboBox):
                out[param.name] = editor.currentData()
            elif isinstance(editor, QLineEdit):
                out[param.name] = editor.text()
            elif isinstance(editor, QSpinBox):
                out[param.name] = int(editor.value())
            else:
                out[param.name] = float(editor.value())
        return out

    def set_values(self, values: dict[str, Any]) -> None:
        """Set the editors named in `values` (others keep theirs; unknown names skipped)."""
        for param in self._params:
            if param.name not in values:
                continue
            editor, value = self.editors[param.name], values[param.name]
            try:
                if isinstance(editor, QCheckBox):
                    editor.setChecked(bool(value))
                elif isinstance(editor, QComboBox):
                    editor.setCurrentIndex(max(0, editor.findData(value)))
                elif isinstance(editor, QLineEdit):
                    editor.setText(str(value))
                elif isinstance(editor, QSpinBox):
                    editor.setValue(int(value))
                else:
                    editor.setValue(float(value))
            except (TypeError, ValueError):
                continue

    def reset(self) -> None:
        self.set_values({p.name: p.default for p in self._params})

    def all_values(self) -> dict[str, dict[str, Any]]:
        """Remembered values of every algorithm seen, with the current one's."""
        out = dict(self._remembered)
        if self._algorithm is not None:
            out[self._algorithm] = self.values()
        return out

    def set_everywhere(self, values: dict[str, Any]) -> None:
        """Set the parameters named in `values` for every algorithm that has them (the
        ones that belong to a file: a file opened brings its own)."""
        for remembered in self._remembered.values():
            remembered.update({k: v for k, v in values.items() if k in remembered})
        self.set_values(values)

    def remember(self, values: dict[str, dict[str, Any]]) -> None:
        """Restore saved values (a session); applies at once to the current algorithm."""
        self._remembered.update({k: dict(v) for k, v in values.items()})
        if self._algorithm in values:
            self.set_values(values[self._algorithm])


def _decimals(param: Param) -> int:
    """Enough decimals for the values people give: 4 for a share (a range within 0-1,
    e.g. a cost per leaf of 0.005), else from the default's magnitude."""
    if param.high is not None and param.high <= 1:
        return 4
    default = abs(float(param.default))
    if default == 0 or default >= 1:
        return 2
    return min(8, max(2, 1 - math.floor(math.log10(default))))
