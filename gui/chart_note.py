"""One sentence over an empty chart, saying why it is empty and what fills it.

A chart with nothing to draw showed bare axes (0.2 to 0.8 "%", 0.1 to 0.9 leaves) as
if they meant something; a non-answer is said instead.  `ChartNote(chart)` is a label
kept centred over `chart` as it resizes; `say("")` hides it.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QLabel, QWidget

MAX_WIDTH = 520


class ChartNote(QLabel):
    def __init__(self, chart: QWidget):
        super().__init__(chart)
        self.setObjectName("chart_note")
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignCenter)
        self.setTextFormat(Qt.PlainText)
        self.setStyleSheet("color: #3d444d; background: rgba(255,255,255,220); "
                           "padding: 6px;")
        self.hide()
        chart.installEventFilter(self)

    def say(self, text: str) -> None:
        """Show `text` over the chart ("" hides it)."""
        self.setText(text)
        self.setVisible(bool(text))
        self._place()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Resize:
            self._place()
        return False

    def _place(self) -> None:
        chart = self.parentWidget()
        width = max(120, min(chart.width() - 40, MAX_WIDTH))
        self.setFixedWidth(width)
        self.adjustSize()
        self.move((chart.width() - width) // 2, (chart.height() - self.height()) // 2)
