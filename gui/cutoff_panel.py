"""The cutoff of a two-class model, under its ROC curve: where a row is called
positive, the confusion matrix there, and what its errors cost.

A tree calls a row positive when its leaf's share of the positive class is the
larger one (a cutoff of one half); an analyst who pays more for a missed positive
than for a false alarm wants the cutoff where the total cost is least.  The slider
moves over the model's distinct leaf shares (`engine.importance.Cutoffs`), the cost
of each kind of error is typed, and "Cheapest" finds the cutoff whose errors cost
least on the rows shown (held-out rows by default: a cutoff chosen on the training
rows is chosen on rows the tree has seen).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QGridLayout,
    QLabel,
    QPushButton,
    QSlider,
    QWidget,
)

from engine.data.features import format_count, format_number
from engine.importance import Cutoffs


class CutoffPanel(QWidget):
    """`show(cutoffs, names, about)` for a two-class model; `clear()` otherwise.
    `moved(threshold)` is called when the cutoff changes (the ROC marks it)."""

    def __init__(self, moved: Callable[[float], None], parent=None):
        super().__init__(parent)
        self._moved = moved
        self.cutoffs: Cutoffs | None = None
        self._names: list[str] = []
        self._about = ""
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 4, 0, 0)
        self.slider = QSlider(Qt.Horizontal, self)
        self.slider.setToolTip("Rows whose leaf's share of the positive class is at least "
                               "the cutoff are called positive")
        self.slider.valueChanged.connect(lambda _: self._update())
        self.value_label = QLabel(self)
        grid.addWidget(QLabel("Cutoff:", self), 0, 0)
        grid.addWidget(self.slider, 0, 1, 1, 3)
        grid.addWidget(self.value_label, 0, 4)
        self.fp_cost = QDoubleSpinBox(self)
        self.fn_cost = QDoubleSpinBox(self)
        for spin in (self.fp_cost, self.fn_cost):
            spin.setRange(0, 1e9)
            spin.setDecimals(2)
            spin.setValue(1.0)
            spin.valueChanged.connect(lambda _: self._update())
        grid.addWidget(QLabel("Cost of a false positive:", self), 1, 0)
        grid.addWidget(self.fp_cost, 1, 1)
        grid.addWidget(QLabel("of a false negative:", self), 1, 2)
        grid.addWidget(self.fn_cost, 1, 3)
        self.cheapest_button = QPushButton("Cheapest", self)
        self.cheapest_button.setToolTip("Move the cutoff to where the errors cost least "
                                        "on these rows")
        self.cheapest_button.clicked.connect(self.choose_cheapest)
        grid.addWidget(self.cheapest_button, 1, 4)
        self.matrix_label = QLabel(self)
        self.matrix_label.setWordWrap(True)
        self.matrix_label.setTextFormat(Qt.PlainText)
        grid.addWidget(self.matrix_label, 2, 0, 1, 5)
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(3, 1)
        self.hide()

    # ------------------------------------------------------------------ show
    def show_cutoffs(self, cutoffs: Cutoffs, names: list[str], about: str) -> None:
        """The cutoffs of class `cutoffs.positive` on `about` rows, starting where the
        tree itself cuts."""
        self.cutoffs, self._names, self._about = cutoffs, list(names), about
        steps = self._steps()
        self.slider.blockSignals(True)
        self.slider.setRange(0, len(steps) - 1)
        # the tree's own cut: the smallest share above one half (a tie at one half
        # goes to the first class, as `Tree.from_arrays` labels its leaves)
        above = [i for i, t in enumerate(steps) if t > 0.5]
        self.slider.setValue(above[-1] if above else 0)
        self.slider.blockSignals(False)
        self.show()
        self._update()

    def clear(self) -> None:
        self.cutoffs = None
        self.hide()

    def _steps(self) -> list[float]:
        """The cutoffs the slider stops at: above every share (nothing positive),
        then each distinct share, highest first."""
        return [float("inf")] + [float(t) for t in self.cutoffs.thresholds]

    @property
    def threshold(self) -> float:
        return self._steps()[self.slider.value()] if self.cutoffs is not None else 0.5

    def set_threshold(self, threshold: float) -> None:
        """Move the cutoff to the step nearest `threshold` (inf: nothing positive)."""
        steps = self._steps()
        if threshold == float("inf") or len(steps) == 1:
            self.slider.setValue(0)
        else:
            self.slider.setValue(1 + min(range(len(steps) - 1),
                                         key=lambda i: abs(steps[i + 1] - threshold)))

    def choose_cheapest(self) -> None:
        if self.cutoffs is not None:
            self.set_threshold(self.cutoffs.cheapest(self.fp_cost.value(),
                                                     self.fn_cost.value()))

    def _update(self) -> None:
        if self.cutoffs is None:
            return
        t = self.threshold
        tp, fp, fn, tn = self.cutoffs.at(t)
        positive = self._names[self.cutoffs.positive]
        self.value_label.setText("none" if t == float("inf") else format_number(t))
        cost = self.fp_cost.value() * fp + self.fn_cost.value() * fn
        called = ("no row is called positive" if t == float("inf") else
                  f"a row is called “{positive}” when its leaf's share of it is at least "
                  f"{format_number(t)}")
        total = tp + fp + fn + tn
        self.matrix_label.setText(
            f"On the {self._about}, {called}: {format_count(tp)} true positives, "
            f"{format_count(fp)} false positives, {format_count(fn)} false negatives, "
            f"{format_count(tn)} true negatives; accuracy "
            f"{100 * (tp + tn) / total:.1f}%; the errors cost {format_count(cost)}.")
        self._moved(t)
