"""Order levels…: the levels of a text column in the order they mean, lowest first.

A list the user reorders by dragging (or with Up and Down), started from the order
set before or from `engine.featurize.ordered.guess_order`'s guess; OK uses the column
as ordered with these levels (`ColumnsModel.set_order`), and the data are prepared
again.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QVBoxLayout,
)


class OrderDialog(QDialog):
    def __init__(self, column: str, levels: list[str], parent=None):
        super().__init__(parent)
        self.setWindowTitle(f"Order the levels of {column}")
        layout = QVBoxLayout(self)
        intro = QLabel(f"Put the levels of '{column}' in their order, lowest first: the "
                       "trees split it as thresholds (\u201c<= Medium\u201d). Values not "
                       "listed count as above the last.", self)
        intro.setWordWrap(True)
        layout.addWidget(intro)
        row = QHBoxLayout()
        self.list = QListWidget(self)
        self.list.addItems(levels)
        self.list.setDragDropMode(QAbstractItemView.InternalMove)
        self.list.setCurrentRow(0)
        row.addWidget(self.list, 1)
        moves = QVBoxLayout()
        for text, step in (("Up", -1), ("Down", 1)):
            button = QPushButton(text, self)
            button.clicked.connect(lambda _=False, s=step: self.move(s))
            moves.addWidget(button)
        moves.addStretch(1)
        row.addLayout(moves)
        layout.addLayout(row, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel, self)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(360, 360)

    def move(self, step: int) -> None:
        """Move the selected level up (-1) or down (1)."""
        row = self.list.currentRow()
        target = row + step
        if row < 0 or not 0 <= target < self.list.count():
            return
        item = self.list.takeItem(row)
        self.list.insertItem(target, item)
        self.list.setCurrentRow(target)

    def levels(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]
