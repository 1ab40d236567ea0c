"""The zoomable, pannable view of a tree scene (mouse wheel zooms, dragging pans).

Until the user zooms or pans, the view keeps the whole tree fitted to the window,
also while a solver replaces the tree with better ones; `fit()` returns to that.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPainter, QTransform
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView

from gui.tree_scene import TEXT_LOD, TreeScene

MAX_SCALE = 4.0
MAX_FIT_SCALE = 1.25    # small trees are not blown up beyond this
READ_SCALE = 0.9        # double-clicking an overview zooms to this readable scale
ZOOM_STEP = 1.25
HINT = "Zoomed out: double-click a part of the tree or use the mouse wheel to read it."


class TreeView(QGraphicsView):
    zoom_changed = Signal(float)

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
        self.tree = None
        self.show_message("Open a CSV file, then press Run to grow a tree.")

    # ---------------------------------------------------------------- content
    def show_tree(self, tree) -> TreeScene:
        """Draw `tree`, keeping the user's zoom and position if they chose one."""
        old_center = self.mapToScene(self.viewport().rect().center())
        scene = TreeScene(tree, self)
        self._replace_scene(scene)
        self.tree = tree
        if self._auto_fit:
            self.fit()
        else:
            self.centerOn(old_center)
        return scene

    def show_message(self, text: str) -> None:
        """Replace the drawing with a centred message (no tree)."""
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

    def tree_scene(self) -> TreeScene | None:
        scene = self.scene()
        return scene if isinstance(scene, TreeScene) else None

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
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        if self._dragging:
            self._auto_fit = False  # the user has taken over the position
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        self._dragging = False
        super().mouseReleaseEvent(event)

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
