"""The side panel: the draft's editors (Data, Algorithm, Test accuracy) in a
scroll area, and Run / Stop below it, always in view.

Run and Stop sit at the panel's bottom edge and never move: the hint about what
Run needs is above them, always two lines high (a hint below grew and shrank with
its text, so the buttons moved up 18 px when a run started and a Stop click where
Run had been landed on a label).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QPoint, Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from gui.algorithm_panel import AlgorithmPanel
from gui.data_panel import DataPanel
from gui.evaluation_box import EvaluationBox

HINT_COLOUR = "#505863"
STOP_TIP = "Stop the search and keep the best tree found (Esc)."
STOP_ESTIMATE_TIP = ("Stop estimating the last run's accuracy on new rows (the folds done "
                     "are kept) (Esc).")
PANEL_MIN_WIDTH, PANEL_MAX_WIDTH = 330, 460
WHEEL_EDITORS = (QAbstractSpinBox, QComboBox)   # settings a stray wheel turn would change


class PanelScroll(QScrollArea):
    """The scroll area of the side panel's settings.  It scrolls only vertically, its
    scroll bar is always there (so the settings keep their width whether or not they
    are taller than the window) and it is never narrower than the settings need, so
    no control is cut off at the right edge nor shifted sideways when focus moves.
    The field being typed in stays where it is on screen when the settings above it
    change height (a preparation's progress bar, a longer summary): the panel jumped
    by 32 pixels under the typing otherwise."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOn)
        self.setMinimumWidth(PANEL_MIN_WIDTH)
        self.setMaximumWidth(PANEL_MAX_WIDTH)
        bar = self.horizontalScrollBar()
        bar.valueChanged.connect(lambda value: value and bar.setValue(0))
        self._anchor: tuple[QWidget, int] | None = None   # (focused field, its y)
        self.verticalScrollBar().valueChanged.connect(lambda _: self._remember())
        QApplication.instance().focusChanged.connect(self._remember)

    def setWidget(self, widget: QWidget) -> None:
        super().setWidget(widget)
        widget.installEventFilter(self)
        self._fit_width()
        self._guard_wheel()

    def eventFilter(self, watched, event) -> bool:
        if watched is self.widget() and event.type() == QEvent.LayoutRequest:
            self._fit_width()   # e.g. another algorithm's parameter form
            self._guard_wheel()
        if watched is self.widget() and event.type() in (QEvent.LayoutRequest,
                                                          QEvent.Resize):
            QTimer.singleShot(0, self._hold)   # once the layout has moved the fields
        if event.type() == QEvent.Wheel and isinstance(watched, WHEEL_EDITORS) \
                and not watched.hasFocus():
            QApplication.sendEvent(self.viewport(), event)   # the panel scrolls instead
            return True
        return super().eventFilter(watched, event)

    def _y(self, field: QWidget) -> int:
        return field.mapTo(self.viewport(), QPoint(0, 0)).y()

    def _remember(self, *_) -> None:
        """Where the focused field of the panel is on screen now (none: forget)."""
        field = QApplication.focusWidget()
        content = self.widget()
        self._anchor = (field, self._y(field)) if field is not None and content is not \
            None and content.isAncestorOf(field) else None

    def _hold(self) -> None:
        """Scroll by as much as the layout moved the focused field."""
        if self._anchor is None or self.widget() is None:
            return
        field, y = self._anchor
        if field is QApplication.focusWidget() and field.isVisible():
            bar = self.verticalScrollBar()
            bar.setValue(bar.value() + self._y(field) - y)
        self._remember()

    def _guard_wheel(self) -> None:
        """Spin boxes and combo boxes take the mouse wheel only once clicked (focused):
        scrolling the panel changed the depth and the time limit of a pointer
        passing over them."""
        for editor in self.widget().findChildren(QWidget):
            if isinstance(editor, WHEEL_EDITORS) and not editor.property("wheel_guarded"):
                editor.setFocusPolicy(Qt.StrongFocus)   # the wheel gives no focus
                editor.installEventFilter(self)
                editor.setProperty("wheel_guarded", True)

    def _fit_width(self) -> None:
        widget = self.widget()
        if widget is None:
            return
        needed = (widget.minimumSizeHint().width() + self.verticalScrollBar().sizeHint().width()
                  + 2 * self.frameWidth())
        self.setMinimumWidth(max(PANEL_MIN_WIDTH, needed))
        self.setMaximumWidth(max(PANEL_MAX_WIDTH, needed))


class SidePanel(QWidget):
    def __init__(self, samples: list[Path], parent=None):
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        self.scroll = PanelScroll(self)
        panel = QWidget(self.scroll)
        settings = QVBoxLayout(panel)
        settings.setContentsMargins(10, 8, 8, 8)
        self.data_panel = DataPanel(samples, panel)
        self.algo_panel = AlgorithmPanel(panel)
        self.evaluation_box = EvaluationBox(panel)
        for widget in (self.data_panel, self.algo_panel, self.evaluation_box):
            settings.addWidget(widget)
        settings.addStretch(1)
        self.scroll.setWidget(panel)
        layout.addWidget(self.scroll, 1)
        line = QFrame(self)
        line.setFrameShape(QFrame.HLine)
        line.setFrameShadow(QFrame.Sunken)
        layout.addWidget(line)

        self.run_bar = QWidget(self)
        bar = QVBoxLayout(self.run_bar)
        # the buttons line up with the groups above (whose right edge is the scroll bar)
        bar.setContentsMargins(10, 6, 8 + self.scroll.verticalScrollBar().sizeHint().width(), 8)
        bar.setSpacing(4)
        self.run_hint = QLabel(self.run_bar)
        self.run_hint.setWordWrap(True)
        self.run_hint.setStyleSheet(f"color: {HINT_COLOUR};")
        self.run_hint.setAlignment(Qt.AlignLeft | Qt.AlignBottom)
        # two lines, whatever it says, so nothing below it ever moves
        self.run_hint.setFixedHeight(2 * self.run_hint.fontMetrics().lineSpacing() + 2)
        bar.addWidget(self.run_hint)
        buttons = QHBoxLayout()
        self.run_button = QPushButton("▶  Run", self.run_bar)
        self.run_button.setDefault(True)
        self.run_button.setToolTip("Train the chosen algorithm on the prepared data "
                                   "(Ctrl+R).")
        self.stop_button = QPushButton("■  Stop", self.run_bar)
        self.stop_button.setToolTip(STOP_TIP)
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.stop_button)
        bar.addLayout(buttons)
        layout.addWidget(self.run_bar)

    def set_hint(self, text: str) -> None:
        self.run_hint.setText(text)
