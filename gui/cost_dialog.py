"""Costs of errors…: a misclassification cost matrix, which becomes the class weights
the solvers train on (`engine.data.class_weights.weights_from_costs`: exact when each
true class's errors cost the same, whatever is predicted; the dialog says so when
they do not, and keeps the matrix for the user to correct).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from engine.data.class_weights import weights_from_costs
from engine.data.features import format_number
from engine.errors import OrchardError


class CostDialog(QDialog):
    """Rows: the true class; columns: the class predicted.  `chosen(text)` receives
    the class weights' text ("bad=5,good=1") when OK is pressed on valid costs."""

    def __init__(self, class_names: list[str], weights: dict[str, float],
                 chosen: Callable[[str], None], parent=None):
        super().__init__(parent)
        self.setWindowTitle("Costs of errors")
        self.class_names, self._chosen = list(class_names), chosen
        layout = QVBoxLayout(self)
        intro = QLabel("What it costs to predict the column's class for a row of the "
                       "row's class. The trees then minimise the total cost exactly; "
                       "each true class's errors must cost the same whatever is "
                       "predicted (always so with two classes).", self)
        intro.setWordWrap(True)
        layout.addWidget(intro)
        n = len(class_names)
        self.table = QTableWidget(n, n, self)
        self.table.setHorizontalHeaderLabels([f"predicted {c}" for c in class_names])
        self.table.setVerticalHeaderLabels([f"true {c}" for c in class_names])
        for i, name in enumerate(class_names):
            for j in range(n):
                item = QTableWidgetItem("0" if i == j else
                                        format_number(weights.get(name, 1.0)))
                if i == j:
                    item.setFlags(Qt.ItemIsEnabled)   # a right answer costs nothing
                self.table.setItem(i, j, item)
        self.table.resizeColumnsToContents()
        layout.addWidget(self.table, 1)
        self.problem = QLabel("", self)
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #b3261e;")
        layout.addWidget(self.problem)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel, self)
        buttons.accepted.connect(self.try_accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(min(900, 220 + 110 * n), min(600, 200 + 34 * n))

    def costs(self) -> list[list[float]]:
        """The matrix typed (a cell that is not a number reads as NaN)."""
        def number(i: int, j: int) -> float:
            try:
                return float(self.table.item(i, j).text().replace(",", "."))
            except ValueError:
                return float("nan")
        n = len(self.class_names)
        return [[number(i, j) for j in range(n)] for i in range(n)]

    def try_accept(self) -> None:
        try:
            weights = weights_from_costs(self.costs(), self.class_names)
        except OrchardError as error:
            self.problem.setText(str(error))
            return
        self._chosen(",".join(f"{name}={format_number(w)}" for name, w in weights.items()))
        self.accept()
