"""The zoomable, pannable view of a tree or diagram scene (mouse wheel zooms,
dragging pans); `gui.models.scene_for` picks the drawing for the model.

Until the user zooms or pans, the view keeps the whole tree fitted to the window,
also while a solver replaces the tree with better ones; `fit()` returns to that.

Large trees are built in slices of a few milliseconds (`ModelScene.build_step`) while
the previous drawing stays on screen, so a live run never stalls the event loop;
`tree_shown(tree)` says when a tree is on screen.  Hovering a node highlights its
path from the root (every path, in a diagram) and `path_hovered(text)` gives the
conditions along it.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QPainter, QTransform
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView

from gui.models import scene_for
from gui.tree_scene import TEXT_LOD, ModelScene, NodeItem

MAX_SCALE = 4.0
MAX_FIT_SCALE = 1.25    # small trees are not blown up beyond this
READ_SCALE = 0.9        # double-clicking an overview zooms to this readable scale
ZOOM_STEP = 1.25
SYNC_NODES = 255        # trees up to this size are drawn in one go
STEP_BUDGET = 0.006     # seconds of building between two turns of the event loop
HINT = "Zoomed out: double-click a part of the tree or use the mouse wheel to read it."


class TreeView(QGraphicsView):
    zoom_changed = Signal(float)
    tree_shown = Signal(object)      # the tree now on screen
    path_hovered = Signal(str)       # conditions leading to the hovered node ("" when none)
    node_clicked = Signal(int)       # a tree node clicked (not dragged)
    node_menu = Signal(int, object)  # a node right-clicked: (node, global QPoint)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing)
        self.setDragMode(QGraphicsView.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.AnchorViewCenter)
        self.setViewportUpdateMode(QGraphicsView.SmartViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.DontSavePainterState, True)
        self.setBackgroundBrush(Qt.white)
        self.setFrameShape(QGraphicsView.NoFrame)
        self._auto_fit = True
        self._dragging = False
        self._moved = False          # the mouse moved while pressed: a drag, not a click
        self.tree = None
        self._building: ModelScene | None = None  # scene being built in slices
        self._next_tree = None                    # newest tree waiting for its turn
        self._build_timer = QTimer(self)
        self._build_timer.setSingleShot(True)
        self._build_timer.setInterval(0)
        self._build_timer.timeout.connect(self._continue_build)
        self.show_message("Open a CSV file, then press Run to grow a tree.")

    # ---------------------------------------------------------------- content
    def show_tree(self, tree, wait: bool = False) -> None:
        """Draw `tree`, keeping the user's zoom and position if they chose one.

        A large tree is built in slices; meanwhile the previous drawing stays, and a
        tree arriving during the build replaces any tree still waiting.  `wait`
        builds at once whatever the size.
        """
        if wait or (tree.n_nodes <= SYNC_NODES and self._building is None):
            self._cancel_build()
            self._present(scene_for(tree, self))
            return
        if self._building is not None:
            self._next_tree = tree
            return
        self._building = scene_for(tree, self, deferred=True)
        self._build_timer.start()

    @property
    def is_building(self) -> bool:
        return self._building is not None

    def _continue_build(self) -> None:
        scene = self._building
        if scene is None:
            return
        if not scene.build_step(STEP_BUDGET):
            self._build_timer.start()
            return
        self._building = None
        self._present(scene)
        if self._next_tree is not None:
            tree, self._next_tree = self._next_tree, None
            self.show_tree(tree)

    def _cancel_build(self) -> None:
        self._build_timer.stop()
        if self._building is not None:
            self._building.deleteLater()
        self._building, self._next_tree = None, None

    def _present(self, scene: ModelScene) -> None:
        old_center = self.mapToScene(self.viewport().rect().center())
        self._replace_scene(scene)
        scene.path_hovered.connect(self._hovered)
        self.tree = scene.tree
        if self._auto_fit:
            self.fit()
        else:
            self.centerOn(old_center)
        self.tree_shown.emit(scene.tree)

    def _hovered(self, node) -> None:
        scene = self.tree_scene()
        if scene is None or node is None:
            self.path_hovered.emit("")
            return
        self.path_hovered.emit(scene.hover_text(node))

    def leaveEvent(self, event) -> None:
        scene = self.tree_scene()
        if scene is not None:
            scene.hover_node(None)
        super().leaveEvent(event)

    def show_message(self, text: str) -> None:
        """Replace the drawing with a centred message (no tree)."""
        self._cancel_build()
        scene = QGraphicsScene(self)
        scene.setBackgroundBrush(Qt.white)
        font = QFont()
        font.setPixelSize(15)
        item = scene.addSimpleText(text, font)
        item.setBrush(QColor("#6b7580"))
        scene.setSceneRect(item.boundingRect().adjusted(-40, -40, 40, 40))
        self._replace_scene(scene)
        self.tree = None
        self.resetTransform()
        self._auto_fit = True

    def tree_scene(self) -> ModelScene | None:
        scene = self.scene()
        return scene if isinstance(scene, ModelScene) else None

    def _replace_scene(self, scene: QGraphicsScene) -> None:
        old = self.scene()
        self.setScene(scene)
        if old is not None:
            old.deleteLater()

    # ------------------------------------------------------------------- zoom
    @property
    def zoom(self) -> float:
        return self.transform().m11()

    def fit(self) -> None:
        """Show the whole tree (within reasonable scale limits) and follow new trees."""
        self._auto_fit = True
        scene = self.scene()
        if scene is None:
            return
        rect: QRectF = scene.sceneRect()
        view = self.viewport().rect()
        if rect.isEmpty() or view.width() < 10 or view.height() < 10:
            return
        scale = min(view.width() / rect.width(), view.height() / rect.height())
        self._set_scale(min(scale, MAX_FIT_SCALE))
        self.centerOn(rect.center())

    def zoom_by(self, factor: float) -> None:
        self._auto_fit = False
        self._set_scale(self.zoom * factor)

    def _set_scale(self, scale: float) -> None:
        scale = max(min(scale, MAX_SCALE), self._min_scale())
        self.setTransform(QTransform.fromScale(scale, scale))
        self.zoom_changed.emit(scale)

    def _min_scale(self) -> float:
        scene = self.scene()
        if scene is None or scene.sceneRect().isEmpty():
            return 0.01
        rect, view = scene.sceneRect(), self.viewport().rect()
        fitting = min(view.width() / rect.width(), view.height() / rect.height())
        return max(min(fitting * 0.5, 0.5), 0.002)

    # ----------------------------------------------------------------- events
    def wheelEvent(self, event) -> None:
        delta = event.angleDelta().y() or event.angleDelta().x()
        if delta:
            self.zoom_by(ZOOM_STEP ** (delta / 120))
        event.accept()

    def mousePressEvent(self, event) -> None:
        self._dragging = event.button() == Qt.LeftButton
        self._moved = False
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        if self._dragging:
            self._auto_fit = False  # the user has taken over the position
            self._moved = True
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        clicked = self._dragging and not self._moved
        self._dragging = False
        super().mouseReleaseEvent(event)
        if clicked:
            node = self.node_at(event.position().toPoint())
            if node is not None:
                self.node_clicked.emit(node)

    def node_at(self, point) -> int | None:
        """The tree node drawn at viewport `point` (None: none)."""
        item = self.itemAt(point)
        while item is not None and not isinstance(item, NodeItem):
            item = item.parentItem()
        return None if item is None else item.node

    def contextMenuEvent(self, event) -> None:
        node = self.node_at(event.pos())
        if node is not None:
            self.node_menu.emit(node, event.globalPos())
        event.accept()

    def mouseDoubleClickEvent(self, event) -> None:
        """Zoomed out: zoom in to read the clicked part; otherwise fit the whole tree."""
        if self.tree is not None and self.zoom < TEXT_LOD:
            point = self.mapToScene(event.position().toPoint())
            self._auto_fit = False
            self._set_scale(READ_SCALE)
            self.centerOn(point)
        else:
            self.fit()
        event.accept()

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        super().scrollContentsBy(dx, dy)
        if self.tree is not None and self.zoom < TEXT_LOD:
            self.viewport().update()  # the hint stays put: repaint rather than scroll it

    def drawForeground(self, painter: QPainter, rect: QRectF) -> None:
        """A hint over the overview of a tree too big to read when fitted."""
        if self.tree is None or self.zoom >= TEXT_LOD:
            return
        painter.save()
        painter.resetTransform()
        font = QFont()
        font.setPixelSize(12)
        painter.setFont(font)
        metrics = painter.fontMetrics()
        box = QRectF(8, 8, metrics.horizontalAdvance(HINT) + 16, metrics.height() + 8)
        painter.setPen(QColor("#c9ced4"))
        painter.setBrush(QColor(255, 255, 255, 235))
        painter.drawRoundedRect(box, 4, 4)
        painter.setPen(QColor("#3d444d"))
        painter.drawText(box, Qt.AlignCenter, HINT)
        painter.restore()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self._auto_fit and self.tree is not None:
            self.fit()
