"""The Tree tab: which run is on screen (a header), the tree with its zoom and
display tools, the path of the node under the mouse, and the anytime curve under
it, full width (trees are wide, curves are wide)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gui.progress_chart import ProgressChart
from gui.side_panel import HINT_COLOUR
from gui.tree_tools import TreeToolBar
from gui.tree_view import TreeView

PATH_HINT = "Hover over a node to highlight its path from the root."


class TreeTab(QSplitter):
    def __init__(self, parent=None):
        super().__init__(Qt.Vertical, parent)
        area = QWidget(self)
        layout = QVBoxLayout(area)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(6)
        top = QHBoxLayout()
        self.summary_label = QLabel("No data loaded.", area)
        self.summary_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.summary_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        top.addWidget(self.summary_label, 1)
        self.view = TreeView(area)
        for text, tip, slot in (("−", "Zoom out (Ctrl+-)", lambda: self.view.zoom_by(0.8)),
                                ("+", "Zoom in (Ctrl++)", lambda: self.view.zoom_by(1.25)),
                                ("Fit", "Fit the tree to the window (Ctrl+0)",
                                 lambda: self.view.fit())):
            button = QToolButton(area)
            button.setText(text)
            button.setToolTip(tip)
            button.clicked.connect(slot)
            top.addWidget(button)
        layout.addLayout(top)
        self.tree_tools = TreeToolBar(self.view, area)
        layout.addWidget(self.tree_tools)
        frame = QFrame(area)
        frame.setFrameShape(QFrame.StyledPanel)
        frame_layout = QVBoxLayout(frame)
        frame_layout.setContentsMargins(1, 1, 1, 1)
        frame_layout.addWidget(self.view)
        layout.addWidget(frame, 1)
        self.path_label = QLabel(PATH_HINT, area)
        self.path_label.setStyleSheet(f"color: {HINT_COLOUR};")
        self.path_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        layout.addWidget(self.path_label)
        self.view.path_hovered.connect(lambda text: self.path_label.setText(
            f"Path: {text}" if text else PATH_HINT))
        self.chart = ProgressChart(self)
        self.addWidget(area)
        self.addWidget(self.chart)
        self.setStretchFactor(0, 1)
        self.setStretchFactor(1, 0)
        self.setCollapsible(0, False)
        self.setSizes([560, 230])
