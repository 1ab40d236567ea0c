"""The Test accuracy group: k-fold cross-validation (the default), a hold-out split,
or none.

The tree on display is always trained on every row; when a plan is chosen, the
run's splits are then re-trained in the background (`gui.validation_controller`)
to estimate how well trees grown this way predict rows they have not seen.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QSpinBox

from engine.evaluation import Plan

METHODS = (
    ("none", "Training accuracy only"),
    ("holdout", "Hold-out split"),
    ("kfold", "Stratified k-fold cross-validation"),
)


class EvaluationBox(QGroupBox):
    changed = Signal()

    def __init__(self, parent=None):
        super().__init__("Test accuracy", parent)
        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        self.method_combo = QComboBox(self)
        for method, text in METHODS:
            self.method_combo.addItem(text, method)
        self.method_combo.setToolTip(
            "After training on all rows, train again on part of the data and test on the "
            "rest (binarisation is re-fitted on the training part only), in the "
            "background: the tree is shown at once. The splits use the same algorithm "
            "and settings and share the run's time limit; each also scores the most "
            "common class and the greedy tree of the same depth.")
        form.addRow(self.method_combo)
        self.holdout_spin = QSpinBox(self)
        self.holdout_spin.setRange(5, 50)
        self.holdout_spin.setValue(25)
        self.holdout_spin.setSuffix(" % held out")
        self.folds_spin = QSpinBox(self)
        self.folds_spin.setRange(2, 20)
        self.folds_spin.setValue(5)
        self.folds_spin.setSuffix(" folds")
        self.seed_spin = QSpinBox(self)
        self.seed_spin.setRange(0, 1_000_000)
        self.seed_spin.setToolTip("Random seed of the split: the same seed gives the same "
                                  "split.")
        form.addRow("Test part:", self.holdout_spin)
        form.addRow("Folds:", self.folds_spin)
        form.addRow("Seed:", self.seed_spin)
        self._form = form
        for widget in (self.method_combo, self.holdout_spin, self.folds_spin, self.seed_spin):
            signal = getattr(widget, "currentIndexChanged", None) or widget.valueChanged
            signal.connect(self._changed)
        self.set_plan(Plan())   # every run says how it does on new rows

    def _changed(self) -> None:
        method = self.method_combo.currentData()
        self._form.setRowVisible(self.holdout_spin, method == "holdout")
        self._form.setRowVisible(self.folds_spin, method == "kfold")
        self._form.setRowVisible(self.seed_spin, method != "none")
        self.changed.emit()

    def plan(self) -> Plan | None:
        method = self.method_combo.currentData()
        if method == "none":
            return None
        return Plan(method, k=self.folds_spin.value(),
                    test_size=self.holdout_spin.value() / 100, seed=self.seed_spin.value())

    def set_plan(self, plan: Plan | None) -> None:
        if plan is None:
            self.method_combo.setCurrentIndex(0)
            return
        self.holdout_spin.setValue(round(plan.test_size * 100))
        self.folds_spin.setValue(plan.k)
        self.seed_spin.setValue(plan.seed)
        self.method_combo.setCurrentIndex(max(0, self.method_combo.findData(plan.method)))

    def settings(self) -> dict[str, Any] | None:
        plan = self.plan()
        return None if plan is None else plan.to_dict()

    def apply_settings(self, settings: dict[str, Any] | None) -> None:
        self.set_plan(None if not settings else Plan.from_dict(settings))
