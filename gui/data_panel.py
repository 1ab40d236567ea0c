"""The Data group of the side panel: open a file, and how its table becomes features.

Target, missing-value policy, binarisation and the optional cleaning steps live
here; per-column choices (ignore, continuous, categorical) live in the Data tab's
column table.  Below the options the panel shows what preparation gives: rows,
classes, the number of features the solver will see, what was changed (the
`PrepReport`), and problems in plain words.  Every change emits `options_changed`.
A target that may be no class column (the engine's `PrepReport.target_doubt`) gets
a question under the target: Use it (`target_accepted`) or Choose another.
"""

from __future__ import annotations

import html
from contextlib import contextmanager
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
)

MISSING_POLICIES = (
    ("route", "Route: each test chooses a side"),
    ("impute", "Fill in (median / most frequent)"),
    ("drop", "Drop rows with missing cells"),
    ("indicator", "Fill in + “is missing” feature"),
)
# What the tree predicts (`PrepOptions.task`): automatic follows the target column.
TASKS = (
    ("auto", "Automatic (from the target)"),
    ("classification", "A class (classification)"),
    ("regression", "A number (regression)"),
)
BINARIZATIONS = (
    ("none", "None: keep numbers continuous"),
    ("guided", "Greedy tree's thresholds + quantiles"),
    ("quantile", "Quantile thresholds"),
    ("midpoints", "Every midpoint"),
)
DEFAULT_QUANTILES = 10
HINT_COLOUR = "#505863"
PROBLEM_COLOUR = "#a4262c"


class DataPanel(QGroupBox):
    options_changed = Signal()
    costs_requested = Signal()     # "Costs…" pressed: the window opens the cost matrix
    target_accepted = Signal()     # "Use it" answered the question about the target
    open_requested = Signal()
    sample_requested = Signal(str)

    def __init__(self, samples: list[Path], parent=None):
        super().__init__("Data", parent)
        layout = QVBoxLayout(self)
        layout.setSpacing(6)

        buttons = QHBoxLayout()
        self.open_button = QPushButton("Open CSV…", self)
        self.open_button.setToolTip("Open a comma, semicolon, tab or space separated file "
                                    "(or drop one on the window).")
        self.open_button.clicked.connect(self.open_requested)
        buttons.addWidget(self.open_button, 1)
        self.samples_button = QToolButton(self)
        self.samples_button.setText("Samples")
        self.samples_button.setPopupMode(QToolButton.InstantPopup)
        self.samples_menu = QMenu(self.samples_button)
        for path in samples:
            action = QAction(path.stem.replace("_", " "), self.samples_menu)
            action.setData(str(path))
            action.triggered.connect(lambda _=False, p=str(path): self.sample_requested.emit(p))
            self.samples_menu.addAction(action)
        self.samples_button.setMenu(self.samples_menu)
        self.samples_button.setEnabled(bool(samples))
        buttons.addWidget(self.samples_button)
        layout.addLayout(buttons)

        self.file_label = QLabel("No file loaded.", self)
        self.file_label.setWordWrap(True)
        self.file_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        layout.addWidget(self.file_label)

        self.progress = QProgressBar(self)
        self.progress.setRange(0, 100)
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(6)
        self.progress.hide()
        self.progress_label = QLabel(self)
        self.progress_label.setStyleSheet(f"color: {HINT_COLOUR};")
        # one line, however long its text (it never widens the panel): with the bar it
        # keeps its room when hidden, so the fields below never move under the typing
        self.progress_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)
        self.progress_label.hide()
        for widget in (self.progress, self.progress_label):   # the fields below stay put
            policy = widget.sizePolicy()
            policy.setRetainSizeWhenHidden(True)
            widget.setSizePolicy(policy)
        layout.addWidget(self.progress)
        layout.addWidget(self.progress_label)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        self.target_combo = _combo(self)
        self.target_combo.setToolTip("The column holding the class to predict.")
        self.target_combo.currentIndexChanged.connect(self._changed)
        form.addRow("Target:", self.target_combo)
        self.task_combo = _combo(self)
        for task, text in TASKS:
            self.task_combo.addItem(text, task)
        self.task_combo.setToolTip(
            "What the tree predicts: a class (each leaf its most common class) or a "
            "number (each leaf the mean of its rows: a regression tree). Automatic: a "
            "number when the target holds numbers with more than 20 different values.")
        self.task_combo.currentIndexChanged.connect(self._changed)
        form.addRow("Predict:", self.task_combo)
        self.missing_combo = _combo(self)
        for policy, text in MISSING_POLICIES:
            self.missing_combo.addItem(text, policy)
        self.missing_combo.setToolTip(
            "What to do with empty cells (and ?, NA, ...). Whatever you choose, a saved "
            "model fills missing cells of new data with the training values.")
        self.missing_combo.currentIndexChanged.connect(self._changed)
        form.addRow("Missing:", self.missing_combo)
        binarize_row = QHBoxLayout()
        self.binarize_combo = _combo(self)
        for mode, text in BINARIZATIONS:
            self.binarize_combo.addItem(text, mode)
        self.binarize_combo.setToolTip(
            "How numeric columns become tests. Algorithms that need 0/1 features need "
            "thresholds: the greedy tree's own plus quantiles (so the optimal tree is "
            "never worse than greedy), quantiles only, or every midpoint; text columns "
            "always become groups of values (the greedy tree's, class-share orders, "
            "frequent values).")
        self.binarize_combo.currentIndexChanged.connect(self._binarize_mode_changed)
        self.quantile_spin = QSpinBox(self)
        self.quantile_spin.setRange(2, 100)
        self.quantile_spin.setValue(DEFAULT_QUANTILES)
        self.quantile_spin.setToolTip("Number of quantile bins: K bins give up to K-1 "
                                      "thresholds per numeric column (with the greedy "
                                      "tree's thresholds for the guided choice).")
        self.quantile_spin.valueChanged.connect(self._changed)
        binarize_row.addWidget(self.binarize_combo, 1)
        binarize_row.addWidget(self.quantile_spin)
        form.addRow("Binarise:", binarize_row)
        layout.addLayout(form)

        # Asked when the target has many classes; it blocks nothing (Run uses it).
        self.target_question = QFrame(self)
        self.target_question.setFrameShape(QFrame.StyledPanel)
        question_layout = QVBoxLayout(self.target_question)
        question_layout.setContentsMargins(6, 4, 6, 4)
        self.target_question_label = QLabel(self.target_question)
        self.target_question_label.setWordWrap(True)
        question_layout.addWidget(self.target_question_label)
        answers = QHBoxLayout()
        self.use_target_button = QPushButton("Use it", self.target_question)
        self.use_target_button.setToolTip("Train with this column as the class.")
        self.use_target_button.clicked.connect(self._use_target)
        self.other_target_button = QPushButton("Choose another", self.target_question)
        self.other_target_button.setToolTip("Pick the class column in the Target list.")
        self.other_target_button.clicked.connect(self._choose_other_target)
        answers.addWidget(self.use_target_button)
        answers.addWidget(self.other_target_button)
        answers.addStretch(1)
        question_layout.addLayout(answers)
        self.target_question.hide()
        layout.addWidget(self.target_question)

        self.drop_inconsistent_check = QCheckBox("Drop rows contradicting identical rows",
                                                 self)
        self.drop_inconsistent_check.setToolTip(
            "Among rows with identical features, keep only those of the majority class. "
            "No tree can classify contradicting rows all correctly; SAT solvers need "
            "this to find a consistent tree.")
        self.merge_check = QCheckBox("Merge duplicate rows into weights", self)
        self.merge_check.setToolTip("Identical rows of the same class become one weighted "
                                    "row (same trees, faster search).")
        self.redundant_check = QCheckBox("Remove redundant features", self)
        self.redundant_check.setToolTip("Drop constant features and features identical or "
                                        "complementary to another one.")
        for box in (self.drop_inconsistent_check, self.merge_check, self.redundant_check):
            box.toggled.connect(self._changed)
            layout.addWidget(box)
        weights = QFormLayout()
        self.class_weight_edit = QLineEdit(self)
        self.class_weight_edit.setPlaceholderText("none, balanced, or yes=5,no=1")
        self.class_weight_edit.setClearButtonEnabled(True)
        self.class_weight_edit.setToolTip(
            "How much a row of each class counts in the error the solver minimises: "
            "'balanced' weighs every class the same in total; 'yes=5,no=1' weighs rows "
            "by their class name. Empty: every row counts once.")
        self.class_weight_edit.editingFinished.connect(self._class_weight_edited)
        weights_row = QHBoxLayout()
        weights_row.addWidget(self.class_weight_edit, 1)
        self.costs_button = QPushButton("Costs…", self)
        self.costs_button.setToolTip("Set the class weights from what each kind of error "
                                     "costs (a misclassification cost matrix)")
        self.costs_button.clicked.connect(self.costs_requested)
        weights_row.addWidget(self.costs_button)
        weights.addRow("Class weights", weights_row)
        layout.addLayout(weights)
        self._class_weight = ""

        self.features_label = QLabel(self)
        self.features_label.setWordWrap(True)
        self.features_label.setTextFormat(Qt.RichText)
        layout.addWidget(self.features_label)
        self.notes_label = QLabel(self)
        self.notes_label.setWordWrap(True)
        self.notes_label.setStyleSheet(f"color: {HINT_COLOUR};")
        self.notes_label.hide()
        layout.addWidget(self.notes_label)
        self.problems_label = QLabel(self)
        self.problems_label.setWordWrap(True)
        self.problems_label.setStyleSheet(f"color: {PROBLEM_COLOUR};")
        self.problems_label.hide()
        layout.addWidget(self.problems_label)
        self._quiet = False
        self._binarize_mode_changed()
        self.set_table_loaded(False)

    # -------------------------------------------------------------- options
    def _changed(self) -> None:
        if not self._quiet:
            self.options_changed.emit()

    def _binarize_mode_changed(self) -> None:
        self.quantile_spin.setVisible(self.binarize_combo.currentData() in ("quantile",
                                                                          "guided"))
        self._changed()

    def set_columns(self, columns: list[str], target: str | None) -> None:
        self._quiet = True
        self.target_combo.clear()
        self.target_combo.addItems(columns)
        if target in columns:
            self.target_combo.setCurrentIndex(columns.index(target))
        self._quiet = False

    def target(self) -> str | None:
        return self.target_combo.currentText() or None

    def ask_about_target(self, question: str) -> None:
        """Show the engine's question about the target, with Use it / Choose another."""
        self.target_question_label.setText(question)
        self.target_question.show()

    def clear_target_question(self) -> None:
        self.target_question.hide()

    def target_question_text(self) -> str:
        return "" if self.target_question.isHidden() else self.target_question_label.text()

    def _use_target(self) -> None:
        self.clear_target_question()
        self.target_accepted.emit()

    def _choose_other_target(self) -> None:
        self.target_combo.setFocus()
        self.target_combo.showPopup()

    def set_target(self, name: str) -> None:
        index = self.target_combo.findText(name)
        if index < 0:
            raise ValueError(f"no column {name!r}")
        self.target_combo.setCurrentIndex(index)

    def task(self) -> str:
        return self.task_combo.currentData()

    def set_task(self, task: str) -> None:
        self.task_combo.setCurrentIndex(max(0, self.task_combo.findData(task)))

    def missing(self) -> str:
        return self.missing_combo.currentData()

    def set_missing(self, policy: str) -> None:
        self.missing_combo.setCurrentIndex(max(0, self.missing_combo.findData(policy)))

    def binarize(self) -> str:
        mode, k = self.binarize_combo.currentData(), self.quantile_spin.value()
        if mode == "guided":
            return "guided" if k == DEFAULT_QUANTILES else f"guided:{k}"
        return f"quantile:{k}" if mode == "quantile" else mode

    def set_binarize(self, spec: str, notify: bool = True) -> None:
        """`none`, `midpoints`, `quantile:K` or `guided[:K]` (as in the CLI)."""
        spec = str(spec).strip().lower()
        mode, _, k = spec.partition(":")
        index = self.binarize_combo.findData(mode)
        if index < 0:
            raise ValueError(f"unknown binarisation {spec!r}")
        before = self.binarize()
        self._quiet = True
        if mode in ("quantile", "guided"):
            self.quantile_spin.setValue(int(k) if k.isdigit() else DEFAULT_QUANTILES)
        self.binarize_combo.setCurrentIndex(index)
        self._quiet = False
        if notify and self.binarize() != before:
            self.options_changed.emit()

    def _class_weight_edited(self) -> None:
        """Emit a change only when the text really changed (editingFinished also fires
        when the field merely loses focus)."""
        text = self.class_weight_edit.text().strip()
        if text != self._class_weight:
            self._class_weight = text
            self._changed()

    def set_class_weight_text(self, text: str) -> None:
        """Class weights chosen elsewhere (Costs…), as if typed."""
        self.class_weight_edit.setText(text)
        self._class_weight_edited()

    def commit_edits(self) -> None:
        """A field still being typed in counts (Run pressed before it lost focus)."""
        self._class_weight_edited()

    def row_options(self) -> dict:
        """The PrepOptions fields about rows: cleaning, and class weights (the text as
        last committed: Enter, leaving the field, or Run (`commit_edits`); `prepare`
        reads it and says in one sentence what is wrong with it).  Text still being
        typed does not count: a preparation started meanwhile (another algorithm)
        used it, and clearing the field then changed nothing, so a run trained with
        weights the field no longer showed."""
        return {"drop_inconsistent": self.drop_inconsistent_check.isChecked(),
                "merge_duplicates": self.merge_check.isChecked(),
                "remove_redundant": self.redundant_check.isChecked(),
                "class_weight": self._class_weight or None}

    def set_row_options(self, options: dict) -> None:
        self._quiet = True
        self.drop_inconsistent_check.setChecked(bool(options.get("drop_inconsistent")))
        self.merge_check.setChecked(bool(options.get("merge_duplicates")))
        self.redundant_check.setChecked(bool(options.get("remove_redundant")))
        weights = options.get("class_weight")
        self._class_weight = weights if isinstance(weights, str) else ""
        self.class_weight_edit.setText(self._class_weight)
        self._quiet = False

    @contextmanager
    def quietly(self):
        """Change several options, emitting nothing."""
        self._quiet = True
        try:
            yield
        finally:
            self._quiet = False

    # -------------------------------------------------------------- display
    def set_table_loaded(self, loaded: bool) -> None:
        for widget in (self.target_combo, self.task_combo, self.missing_combo,
                       self.binarize_combo,
                       self.quantile_spin, self.drop_inconsistent_check, self.merge_check,
                       self.redundant_check, self.class_weight_edit, self.costs_button,
                       self.use_target_button, self.other_target_button):
            widget.setEnabled(loaded)

    def set_busy(self, busy: bool) -> None:
        for widget in (self.open_button, self.samples_button):
            widget.setEnabled(not busy)
        if not busy:
            self.progress.hide()
            self.progress_label.hide()

    def show_progress(self, text: str, fraction: float) -> None:
        self.progress.setValue(round(100 * fraction))
        self.progress.show()
        self.progress_label.setText(text)
        self.progress_label.show()

    def show_file(self, text: str, tooltip: str = "") -> None:
        self.file_label.setText(text)
        self.file_label.setToolTip(tooltip)

    def show_preparation(self, features: str, notes: list[str], problems: list[str]) -> None:
        self.features_label.setText(features)
        self.notes_label.setText("\n".join(notes))
        self.notes_label.setVisible(bool(notes))
        self.problems_label.setText("\n".join(problems))
        self.problems_label.setVisible(bool(problems))

    def problems_text(self) -> str:
        return self.problems_label.text() if self.problems_label.isVisible() else ""

    def notes_text(self) -> str:
        return self.notes_label.text() if self.notes_label.isVisible() else ""


def _combo(parent) -> QComboBox:
    """A drop-down that may be narrower than its longest entry (the panel is narrow)."""
    combo = QComboBox(parent)
    combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(8)
    return combo


def bold(text: str) -> str:
    return f"<b>{html.escape(text)}</b>"
