"""The run figures at the right of the status bar: status, elapsed time, error,
lower bound, gap, whether the tree is proven optimal and its accuracy on new rows;
plus the JIT warm-up state.

The message area at the left (`QStatusBar` itself) says what just happened.
"""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QWidget

from engine.data.features import format_count
from gui.results_panel import LOSS_COLOUR, errors_text, proves_bounds, weighted
from gui.runs import RunRecord, relative_gap


MUTED = "color: #505863;"
TIPS = {"warmup": ("Numba compiles the solvers' kernels once, in the background, so the "
                   "first run starts at once."),
        "status": "State of the current or last run.",
        "elapsed": "Time since the run started.",
        "error": "Training error of the best tree so far (rows).",
        "bound": "Proven lower bound on the optimal training error.",
        "gap": "(error - lower bound) / error: 0% means optimal.",
        "optimal": "Whether the tree is proven optimal for this depth.",
        "new_rows": ("Expected accuracy on rows the tree has not seen: the run's test "
                     "plan (5-fold cross-validation by default) re-trains on part of "
                     "the rows and tests on the rest, in the background after the "
                     "run.")}


class RunFigures(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 4, 0)
        layout.setSpacing(0)
        self.labels: dict[str, QLabel] = {}
        for key, tip in TIPS.items():
            label = QLabel(self)
            label.setToolTip(tip)
            label.setContentsMargins(8, 0, 8, 0)
            if key == "warmup":
                label.setStyleSheet(MUTED)
            self.labels[key] = label
            if len(self.labels) > 1:
                line = QFrame(self)
                line.setFrameShape(QFrame.VLine)
                line.setFrameShadow(QFrame.Sunken)
                layout.addWidget(line)
            layout.addWidget(label)
        self.clear()

    def text(self, key: str) -> str:
        return self.labels[key].text()

    def set_warmup(self, text: str) -> None:
        self.labels["warmup"].setText(text)
        self.labels["warmup"].setVisible(bool(text))

    def clear(self) -> None:
        self.set_figures("idle", None, None, None, None)

    def set_elapsed(self, seconds: float | None) -> None:
        if seconds is None:
            text = "—"
        else:
            text = f"{seconds:.2f} s" if seconds < 1 else f"{seconds:.1f} s"
        self.labels["elapsed"].setText(text)

    def show_run(self, run: RunRecord, progress: str = "") -> None:
        """A finished run's figures, with its accuracy on new rows (or `progress`,
        while it is estimated).  With class weights its error and bound are
        weights, not rows: the labels say "weighted" and the error's tooltip gives the
        number of rows beside the weights."""
        self.set_figures(run.status_text, run.time_s, run.objective,
                         run.lower_bound if proves_bounds(run.chosen or run.algorithm)
                         else None, run.optimal, objective=run.leaf_penalty > 0)
        self.show_new_rows(run, progress)
        if run.regression:
            self.labels["error"].setText("squared " + self.labels["error"].text())
        if weighted(run):
            for key in ("error", "bound"):
                self.labels[key].setText("weighted " + self.labels[key].text())
            self.labels["error"].setToolTip(
                f"Training error of the tree: {errors_text(run)}.")
            self.labels["bound"].setToolTip("Proven lower bound on the optimal weighted "
                                            "training error.")

    def set_figures(self, status: str, elapsed: float | None, error: float | None,
                    bound: float | None, optimal: bool | None,
                    objective: bool = False) -> None:
        """`objective`: `error` and `bound` are of errors + a cost per leaf; `bound`
        None: the algorithm has none (greedy), so there is no gap either."""
        for key in ("error", "bound"):
            self.labels[key].setToolTip(TIPS[key])
        self.labels["status"].setText(status)
        self.set_elapsed(elapsed)
        word = "objective" if objective else "error"
        self.labels["error"].setText(f"{word} —" if error is None
                                     else f"{word} {format_count(error)}")
        self.labels["bound"].setText("bound —" if bound is None
                                     else f"bound {format_count(max(bound, 0.0))}")
        if error is None or bound is None:
            self.labels["gap"].setText("gap —")
        else:
            gap = 100 * relative_gap(error, bound)
            # "gap 0.0%" beside "optimal: no" read as a contradiction
            self.labels["gap"].setText("gap < 0.1%" if gap < 0.05 and not optimal
                                       else f"gap {gap:.1f}%")
        self.labels["optimal"].setText("optimal —" if optimal is None else
                                       ("optimal: yes" if optimal else "optimal: no"))
        self.labels["optimal"].setStyleSheet("color: #1a7f37; font-weight: bold;"
                                             if optimal else "")
        self.show_new_rows(None)

    def show_new_rows(self, run: RunRecord | None, progress: str = "") -> None:
        """Test accuracy beside the training figures: "new rows 84.2%", red with the
        reason in the tooltip when the tree loses to a baseline on held-out rows."""
        label, evaluation = self.labels["new_rows"], run and run.evaluation
        label.setStyleSheet("")
        label.setToolTip(TIPS["new_rows"])
        if progress:
            label.setText("new rows …")
            label.setToolTip(progress)
        elif evaluation is None or not evaluation.folds:
            label.setText("new rows —")
            if evaluation is not None:
                label.setToolTip(evaluation.summary())
        else:
            label.setText(f"new rows R² {evaluation.mean_of('test_r2'):.3f}"
                          if evaluation.regression else
                          f"new rows {100 * evaluation.mean_test_accuracy:.1f}%")
            verdict = evaluation.verdict()
            label.setToolTip(verdict or evaluation.summary())
            if verdict:
                label.setStyleSheet(f"color: {LOSS_COLOUR}; font-weight: bold;")
