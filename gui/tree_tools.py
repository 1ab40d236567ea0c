"""The row of tools above a big tree: a depth limit, a search, edge widths by rows
and Expand all, all working on a `TreeView` (display only: the model never changes).

The window puts it above the view (`TreeToolBar(view, parent)`); it follows the
view through its signals, so it needs no further calls: it enables itself when a
tree is on screen and disables itself for decision diagrams and messages, which
have none of these tools.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QWidget,
)

from gui.tree_scene import TreeScene
from gui.tree_view import TreeView

FOLD_HINT = ("Alt+click a node, or click its +N badge, to collapse or expand its "
             "subtree (the model itself is not changed)")
SEARCH_WIDTH = 200


class TreeToolBar(QWidget):
    """Depth limit ("Show depth: all / 1..N"), search (Enter finds the next match,
    "k of n" beside it), "Edge width by rows" and "Expand all" for `view`."""

    def __init__(self, view: TreeView, parent=None):
        super().__init__(parent)
        self.view = view
        self._query = ""   # what the last search looked for (Enter again: next match)
        self.setToolTip(FOLD_HINT)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)

        layout.addWidget(QLabel("Show depth:", self))
        self.depth_spin = QSpinBox(self)
        self.depth_spin.setRange(0, 1)
        self.depth_spin.setSpecialValueText("all")   # 0 stands for no limit
        self.depth_spin.setToolTip("Show nodes down to this depth only; deeper subtrees "
                                   "are collapsed into +N badges.\n" + FOLD_HINT)
        self.depth_spin.valueChanged.connect(self._depth_chosen)
        layout.addWidget(self.depth_spin)

        self.search_edit = QLineEdit(self)
        self.search_edit.setPlaceholderText("Find a column or class…")
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.setFixedWidth(SEARCH_WIDTH)
        self.search_edit.setToolTip("Nodes testing a column, or leaves predicting a class, "
                                    "whose name contains this text; Enter shows the next")
        self.search_edit.returnPressed.connect(self.find_next)
        self.search_edit.textChanged.connect(self._text_changed)
        layout.addWidget(self.search_edit)
        self.found_label = QLabel("", self)
        self.found_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        layout.addWidget(self.found_label, 1)

        self.width_box = QCheckBox("Edge width by rows", self)
        self.width_box.setToolTip("Draw each edge as wide as the share of training rows "
                                  "reaching its child")
        self.width_box.setChecked(view.edge_width_by_rows)
        self.width_box.toggled.connect(view.set_edge_width_by_rows)
        layout.addWidget(self.width_box)

        self.expand_button = QPushButton("Expand all", self)
        self.expand_button.setToolTip("Show every node again")
        self.expand_button.clicked.connect(view.expand_all)
        layout.addWidget(self.expand_button)

        view.display_changed.connect(self._sync)
        view.found.connect(self._show_found)
        self._sync()

    # ---------------------------------------------------------------- actions
    def find_next(self) -> None:
        """Enter in the search box: a new text searches, the same text steps on."""
        text = self.search_edit.text().strip()
        if text != self._query:
            self._query = text
            self.view.find(text)
        else:
            self.view.find_next()

    def _text_changed(self, text: str) -> None:
        if not text.strip() and self._query:   # cleared: the marks go too
            self._query = ""
            self.view.find("")

    def _depth_chosen(self, value: int) -> None:
        depth = value or None
        if depth != self.view.display_depth:
            self.view.set_display_depth(depth)

    # ------------------------------------------------------------- following
    def _sync(self) -> None:
        """Follow the view: enabled for trees only, depth range of the tree shown."""
        scene = self.view.tree_scene()
        is_tree = isinstance(scene, TreeScene)
        self.setEnabled(is_tree)
        if not is_tree:
            return
        deepest = max(scene.depth_of) if scene.depth_of else 0
        self.depth_spin.blockSignals(True)
        self.depth_spin.setMaximum(max(deepest, 1))
        self.depth_spin.setValue(self.view.display_depth or 0)
        self.depth_spin.blockSignals(False)
        self.width_box.blockSignals(True)
        self.width_box.setChecked(self.view.edge_width_by_rows)
        self.width_box.blockSignals(False)

    def _show_found(self, index: int, count: int) -> None:
        if not self._query:
            self.found_label.setText("")
        elif count == 0:
            self.found_label.setText(f"no node matches '{self._query}'")
        elif index < 0:   # a new tree, marked again: Enter shows the first
            self.found_label.setText(f"{count} match{'es' * (count != 1)}")
        else:
            self.found_label.setText(f"{index + 1} of {count}")
