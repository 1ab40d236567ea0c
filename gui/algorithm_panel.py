"""The Algorithm group of the side panel: picker, description, depth, time limit, form.

The picker lists every registered solver; below it the chosen one is described in
one line plus what it needs ("needs 0/1 features" / "any data") and whether it
"proves optimality" or is a "heuristic".  Depth has its own control (its range is
the solver's); the other parameters come from the solver's schema (`ParamForm`).
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QSizePolicy,
    QSpinBox,
    QVBoxLayout,
)

from engine.solvers import default_solver_name, get_solver, solver_names
from engine.training import DEFAULT_TIME_LIMIT
from gui.param_form import ParamForm

HINT_COLOUR = "#505863"
# The window starts on `auto`, which picks for the analyst; the command line keeps the
# contract's default (blossom, DESIGN.md).
GUI_DEFAULT = "auto"


def needs_text(solver) -> str:
    return "needs 0/1 features" if solver.needs == "binary" else "any data"


def optimality_text(solver) -> str:
    return "proves optimality" if solver.proves_optimality else "heuristic"


def is_sat(name: str) -> bool:
    """SAT solvers look for a tree classifying every row correctly."""
    return name.startswith("sat")


class AlgorithmPanel(QGroupBox):
    algorithm_changed = Signal(str)
    changed = Signal()

    def __init__(self, parent=None):
        super().__init__("Algorithm", parent)
        layout = QVBoxLayout(self)
        layout.setSpacing(6)
        self.combo = QComboBox(self)
        # as wide as the side panel, not as its longest entry (the list shows them whole)
        self.combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.combo.setMinimumContentsLength(12)
        for index, name in enumerate(solver_names()):
            solver = get_solver(name)
            self.combo.addItem(f"{solver.title}  ·  {optimality_text(solver)}", name)
            self.combo.setItemData(index, f"{solver.summary} ({needs_text(solver)})",
                                   Qt.ToolTipRole)
        layout.addWidget(self.combo)
        self.description = QLabel(self)
        self.description.setWordWrap(True)
        self.description.setTextFormat(Qt.RichText)
        self.description.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Minimum)
        layout.addWidget(self.description)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        self.depth_spin = QSpinBox(self)
        self.depth_spin.setValue(3)
        # the depth default of the algorithm shown: an untouched depth follows the
        # next algorithm's default (SAT solvers search up to 10, the others use 3)
        self._depth_default = 3
        self.depth_spin.valueChanged.connect(self.changed)
        form.addRow("Maximum depth:", self.depth_spin)
        self.time_spin = QDoubleSpinBox(self)
        self.time_spin.setRange(0, 24 * 3600)
        self.time_spin.setDecimals(0)
        self.time_spin.setSingleStep(10)
        self.time_spin.setSuffix(" s")
        self.time_spin.setSpecialValueText("no limit")
        self.time_spin.setValue(DEFAULT_TIME_LIMIT)
        self.time_spin.setToolTip("Stop the search after this many seconds and keep the "
                                  "best tree found (0 = no limit).")
        self.time_spin.valueChanged.connect(self.changed)
        form.addRow("Time limit:", self.time_spin)
        layout.addLayout(form)
        self.form = ParamForm(self)
        self.form.changed.connect(self.changed)
        layout.addWidget(self.form)

        self.combo.currentIndexChanged.connect(self._algorithm_changed)
        default = self.combo.findData(GUI_DEFAULT if GUI_DEFAULT in solver_names()
                                      else default_solver_name())
        if default >= 0 and default != self.combo.currentIndex():
            self.combo.setCurrentIndex(default)
        else:
            self._algorithm_changed()

    # ------------------------------------------------------------ algorithm
    def algorithm(self) -> str:
        return self.combo.currentData()

    def set_algorithm(self, name: str) -> None:
        index = self.combo.findData(name)
        if index < 0:
            raise ValueError(f"unknown algorithm {name!r}")
        self.combo.setCurrentIndex(index)

    def solver(self):
        return get_solver(self.algorithm())

    def _algorithm_changed(self) -> None:
        solver = self.solver()
        badges = f"{needs_text(solver).capitalize()} · {optimality_text(solver)}"
        self.description.setText(
            f"{html.escape(solver.summary)}<br><span style='color:{HINT_COLOUR}'>"
            f"{html.escape(badges)}</span>")
        self.combo.setToolTip(solver.summary)
        depth = next((p for p in solver.params if p.name == "depth"), None)
        self.depth_spin.setEnabled(depth is not None)
        if depth is not None:
            self.depth_spin.setRange(int(depth.low if depth.low is not None else 0),
                                     int(depth.high if depth.high is not None else 99))
            self.depth_spin.setToolTip(depth.help)
            if self.depth_spin.value() == self._depth_default:
                self.depth_spin.setValue(int(depth.default))
            self._depth_default = int(depth.default)
        self.form.set_algorithm(solver.name)
        self.algorithm_changed.emit(solver.name)
        self.changed.emit()

    # --------------------------------------------------------------- values
    def params(self) -> dict[str, Any]:
        """The solver's parameters from the form, with the depth."""
        values = self.form.values()
        if any(p.name == "depth" for p in self.solver().params):
            values["depth"] = self.depth_spin.value()
        return values

    def time_limit(self) -> float | None:
        seconds = self.time_spin.value()
        return seconds if seconds > 0 else None

    def settings(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm(), "depth": self.depth_spin.value(),
                "time_limit": self.time_spin.value(), "params": self.form.all_values()}

    def apply_settings(self, settings: dict[str, Any]) -> None:
        if settings.get("algorithm") in solver_names():
            self.set_algorithm(settings["algorithm"])
        if "depth" in settings:
            self.depth_spin.setValue(int(settings["depth"]))
        if "time_limit" in settings:
            self.time_spin.setValue(float(settings["time_limit"] or 0))
        self.form.remember(settings.get("params", {}))
