"""The zoomable, pannable view of a tree or diagram scene (mouse wheel zooms,
dragging pans); `gui.models.scene_for` picks the drawing for the model.

Until the user zooms or pans, the view keeps the whole tree fitted to the window,
also while a solver replaces the tree with better ones; `fit()` returns to that.

Large trees are built in slices of a few milliseconds (`ModelScene.build_step`) while
the previous drawing stays on screen, so a live run never stalls the event loop;
`tree_shown(tree)` says when a tree is on screen.  Hovering a node highlights its
path from the root (every path, in a diagram) and `path_hovered(text)` gives the
conditions along it.

For big trees (display only, the model never changes): Alt+click on a node, or a
click on its "+N" badge, folds or unfolds its subtree (`toggle_collapsed`);
`set_display_depth` folds everything below a depth; `find` marks and reveals the
nodes testing a column or predicting a class and `find_next` steps through them;
edges are as wide as the rows they carry (`set_edge_width_by_rows`).  Zoomed in, an
overview of the whole drawing sits in the bottom-right corner (`Minimap`); a click
or drag there moves the view.  `gui.tree_tools.TreeToolBar` puts these on buttons.
The depth limit, the search and the edge widths stay when a new tree arrives; the
folds made by hand do not (node numbers mean other nodes in another tree).
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPen, QTransform
from PySide6.QtWidgets import QApplication, QGraphicsScene, QGraphicsView, QWidget

from gui.models import scene_for
from gui.tree_scene import TEXT_LOD, ModelScene, NodeItem, TreeScene

MAX_SCALE = 4.0
MAX_FIT_SCALE = 1.25    # small trees are not blown up beyond this
READ_SCALE = 0.9        # double-clicking an overview zooms to this readable scale
ZOOM_STEP = 1.25
SYNC_NODES = 255        # trees up to this size are drawn in one go
STEP_BUDGET = 0.006     # seconds of building between two turns of the event loop
HINT = "Zoomed out: double-click a part of the tree or use the mouse wheel to read it."
FOLD_MODIFIER = Qt.AltModifier   # with a click: fold or unfold the node's subtree
MINIMAP_SIZE = QSize(220, 140)   # the overview's largest size on screen
MINIMAP_MIN_SIDE = 36            # a very wide tree's overview is stretched to this
MINIMAP_MARGIN = 10


class TreeView(QGraphicsView):
    zoom_changed = Signal(float)
    tree_shown = Signal(object)      # the tree now on screen
    path_hovered = Signal(str)       # conditions leading to the hovered node ("" when none)
    node_clicked = Signal(int)       # a tree node clicked (not dragged)
    node_menu = Signal(int, object)  # a node right-clicked: (node, global QPoint)
    display_changed = Signal()       # another drawing, or folds / depth / search changed
    found = Signal(int, int)         # search: (position of the current match or -1, count)

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
        # each class's row weight when the tree on screen was trained on weighted rows:
        # its boxes then count rows (weight / factor), not weights
        self.row_factors = None
        self._clicked_node: int | None = None   # a click waiting to be no double-click
        self._click_timer = QTimer(self, singleShot=True)
        self._click_timer.timeout.connect(self._emit_click)
        self._build_timer = QTimer(self)
        self._build_timer.setSingleShot(True)
        self._build_timer.setInterval(0)
        self._build_timer.timeout.connect(self._continue_build)
        # How trees are shown (display only), kept for the trees that follow.
        self._display_depth: int | None = None
        self._edge_width_by_rows = True
        self._query = ""
        self._match_index = -1
        self.minimap = Minimap(self)
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
            self._present(self._scene_for(tree))
            return
        if self._building is not None:
            self._next_tree = tree
            return
        self._building = self._scene_for(tree, deferred=True)
        self._build_timer.start()

    def _scene_for(self, tree, deferred: bool = False) -> ModelScene:
        return scene_for(tree, self, deferred, display_depth=self._display_depth,
                         edge_width_by_rows=self._edge_width_by_rows,
                         row_factors=self.row_factors)

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
        scene.sceneRectChanged.connect(self.minimap.redraw)
        self.tree = scene.tree
        self._match_index = -1
        if self._query and isinstance(scene, TreeScene):
            scene.find(self._query)   # marked again, without moving the view
        if self._auto_fit:
            self.fit()
        else:
            self.centerOn(old_center)
        self.minimap.redraw()
        self.tree_shown.emit(scene.tree)
        self.display_changed.emit()
        self._announce_matches()

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
        self._match_index = -1
        self.minimap.redraw()
        self.display_changed.emit()
        self._announce_matches()

    def tree_scene(self) -> ModelScene | None:
        scene = self.scene()
        return scene if isinstance(scene, ModelScene) else None

    def _folding_scene(self) -> TreeScene | None:
        """The drawing when it is a tree's (the big-tree tools work on trees only)."""
        scene = self.scene()
        return scene if isinstance(scene, TreeScene) else None

    # ------------------------------------------------------ big trees (display)
    @property
    def display_depth(self) -> int | None:
        return self._display_depth

    @property
    def edge_width_by_rows(self) -> bool:
        return self._edge_width_by_rows

    def collapsed_nodes(self) -> list[int]:
        """The folded nodes of the tree on screen (their subtrees are hidden)."""
        scene = self._folding_scene()
        return sorted(scene.collapsed) if scene is not None else []

    def display_options(self) -> dict:
        """How the tree on screen is drawn, for `save_tree_image(tree, path, **these)`
        so a picture shows the tree as displayed."""
        return {"collapsed": self.collapsed_nodes(),
                "edge_width_by_rows": self._edge_width_by_rows,
                "row_factors": self.row_factors}

    def toggle_collapsed(self, node: int) -> bool:
        """Fold `node`'s subtree into a "+N" badge, or unfold it; the node stays where
        it is on screen.  False when there is nothing to fold (a leaf, a diagram)."""
        scene = self._folding_scene()
        item = scene.node_items[node] if scene is not None and 0 <= node < len(
            scene.node_items) else None
        if item is None:
            return False
        before = item.pos()
        if not scene.toggle_collapsed(node):
            return False
        self._after_relayout(item.pos() - before)
        return True

    def set_display_depth(self, depth: int | None) -> None:
        """Show nodes down to `depth` only (None: every node), deeper subtrees folded
        with their badges; kept for the trees that follow.  Fits the drawing."""
        self._display_depth = depth
        scene = self._folding_scene()
        if scene is not None:
            scene.set_display_depth(depth)
            self.fit()
            self.minimap.redraw()
        self.display_changed.emit()

    def expand_all(self) -> None:
        self.set_display_depth(None)

    def set_edge_width_by_rows(self, on: bool) -> None:
        """Edges as wide as the share of training rows they carry (1 to 8 px at 100%),
        or all alike."""
        self._edge_width_by_rows = bool(on)
        scene = self._folding_scene()
        if scene is not None:
            scene.set_edge_width_by_rows(self._edge_width_by_rows)
            self.minimap.redraw()
        self.display_changed.emit()

    @property
    def matches(self) -> list[int]:
        scene = self._folding_scene()
        return list(scene.matches) if scene is not None else []

    @property
    def match_index(self) -> int:
        """Position of the match last shown in `matches` (-1: none shown yet)."""
        return self._match_index

    def find(self, text: str) -> list[int]:
        """Mark the nodes whose test mentions `text` (a column) and the leaves
        predicting a class whose name contains it (case-insensitive), unfold what
        hides them and show the first; the search is kept for the trees that follow."""
        self._query = text.strip()
        self._match_index = -1
        scene = self._folding_scene()
        if scene is None:
            self._announce_matches()
            return []
        matches = scene.find(self._query)
        self.minimap.redraw()
        self.display_changed.emit()
        if matches:
            self.find_next()
        else:
            self._announce_matches()
        return matches

    def find_next(self) -> int | None:
        """Show the next match (after the last, the first again); None: no match."""
        matches = self.matches
        if not matches:
            return None
        self._match_index = (self._match_index + 1) % len(matches)
        node = matches[self._match_index]
        self.show_node(node)
        self._announce_matches()
        return node

    def show_node(self, node: int) -> None:
        """Centre `node`, zoomed in far enough to read it."""
        scene = self.tree_scene()
        item = scene.node_items[node] if scene is not None else None
        if item is None or not item.isVisible():
            return
        self._auto_fit = False
        if self.zoom < TEXT_LOD:
            self._set_scale(READ_SCALE)
        self.centerOn(item.sceneBoundingRect().center())

    def center_on(self, point: QPointF) -> None:
        """Centre the view on scene `point` as the user asked (no more fitting)."""
        self._auto_fit = False
        self.centerOn(point)

    def _announce_matches(self) -> None:
        self.found.emit(self._match_index, len(self.matches))

    def _after_relayout(self, shift: QPointF) -> None:
        """After folds changed: refit, or keep the clicked node still on screen."""
        if self._auto_fit:
            self.fit()
        else:
            self.centerOn(self.mapToScene(self.viewport().rect().center()) + shift)
        self.minimap.redraw()
        self.display_changed.emit()

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
        self.minimap.follow()

    def zoom_by(self, factor: float) -> None:
        self._auto_fit = False
        self._set_scale(self.zoom * factor)

    def _set_scale(self, scale: float) -> None:
        scale = max(min(scale, MAX_SCALE), self._min_scale())
        self.setTransform(QTransform.fromScale(scale, scale))
        self.zoom_changed.emit(scale)
        self.minimap.follow()

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
            point = event.position().toPoint()
            node = self.node_at(point)
            if node is None:
                return
            if event.modifiers() & FOLD_MODIFIER or self._on_badge(node, point):
                self.toggle_collapsed(node)
            else:   # once it is no double-click (which zooms, and leaves the tab alone)
                self._clicked_node = node
                self._click_timer.start(QApplication.doubleClickInterval())

    def _emit_click(self) -> None:
        if self._clicked_node is not None:
            node, self._clicked_node = self._clicked_node, None
            self.node_clicked.emit(node)

    def _on_badge(self, node: int, point) -> bool:
        scene = self._folding_scene()
        item = scene.node_items[node] if scene is not None else None
        return item is not None and item.badge_contains(self.mapToScene(point))

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
        """Zoomed out: zoom in to read the clicked part; otherwise fit the whole tree.
        The click before it is no node click."""
        self._click_timer.stop()
        self._clicked_node = None
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
        self.minimap.follow()

    def visible_scene_rect(self) -> QRectF:
        """The part of the scene the viewport shows."""
        return self.mapToScene(self.viewport().rect()).boundingRect()

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
        self.minimap.follow()


class Minimap(QWidget):
    """The whole drawing in a thumbnail in the view's bottom-right corner, with the
    part on screen outlined; a click or a drag there centres the view on that point.

    It is a widget over the view, not an item of the scene, so it neither scrolls
    with the drawing nor appears in exported pictures.  Shown only while some of the
    drawing is off screen.  The thumbnail is rendered once per drawing (and after
    folds change it), not on every scroll.  A very wide tree's thumbnail is stretched
    to MINIMAP_MIN_SIDE pixels high rather than flattened to a line.
    """

    def __init__(self, view: TreeView):
        super().__init__(view)
        self._view = view
        self._image: QImage | None = None
        self.setCursor(Qt.PointingHandCursor)
        self.setToolTip("Overview: click or drag to move the view")
        self.hide()

    def redraw(self) -> None:
        """The drawing changed: render the thumbnail anew when next shown."""
        self._image = None
        self.follow()

    def follow(self) -> None:
        """Show or hide, place and repaint after the view moved, zoomed or resized."""
        view = self._view
        scene = view.tree_scene()
        if scene is None or not scene.complete or view.tree is None:
            self.hide()
            return
        rect = scene.sceneRect()
        tolerance = 2 / max(view.zoom, 1e-6)   # two pixels of rounding
        fits = view.visible_scene_rect().adjusted(
            -tolerance, -tolerance, tolerance, tolerance).contains(rect)
        if fits or rect.isEmpty():
            self.hide()
            return
        size = self._size_for(rect)
        if size != self.size():
            self.resize(size)
            self._image = None
        area = view.viewport().geometry()
        self.move(area.right() - size.width() - MINIMAP_MARGIN,
                  area.bottom() - size.height() - MINIMAP_MARGIN)
        self.show()
        self.raise_()
        self.update()

    @staticmethod
    def _size_for(rect: QRectF) -> QSize:
        scale = min(MINIMAP_SIZE.width() / rect.width(),
                    MINIMAP_SIZE.height() / rect.height())
        return QSize(max(MINIMAP_MIN_SIDE, round(rect.width() * scale)),
                     max(MINIMAP_MIN_SIDE, round(rect.height() * scale)))

    def _thumbnail(self) -> QImage:
        if self._image is None or self._image.size() != self.size():
            scene = self._view.tree_scene()
            image = QImage(self.size(), QImage.Format_ARGB32_Premultiplied)
            image.fill(Qt.white)
            painter = QPainter(image)
            painter.setRenderHint(QPainter.Antialiasing)
            scene.render(painter, QRectF(image.rect()), scene.sceneRect(),
                         Qt.IgnoreAspectRatio)
            painter.end()
            self._image = image
        return self._image

    def scene_point(self, pos: QPointF) -> QPointF:
        """The scene point under `pos` (this widget's coordinates)."""
        rect = self._view.tree_scene().sceneRect()
        return QPointF(rect.left() + pos.x() / self.width() * rect.width(),
                       rect.top() + pos.y() / self.height() * rect.height())

    def _to_map(self, rect: QRectF) -> QRectF:
        scene_rect = self._view.tree_scene().sceneRect()
        sx, sy = self.width() / scene_rect.width(), self.height() / scene_rect.height()
        return QRectF((rect.left() - scene_rect.left()) * sx,
                      (rect.top() - scene_rect.top()) * sy,
                      rect.width() * sx, rect.height() * sy)

    def paintEvent(self, event) -> None:
        if self._view.tree_scene() is None:
            return
        painter = QPainter(self)
        painter.drawImage(0, 0, self._thumbnail())
        seen = self._to_map(self._view.visible_scene_rect()).intersected(
            QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5))
        painter.setPen(QPen(QColor("#0b5cad"), 1.5))
        painter.setBrush(QColor(11, 92, 173, 40))
        painter.drawRect(seen)
        painter.setPen(QColor("#9aa3ad"))
        painter.setBrush(Qt.NoBrush)
        painter.drawRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5))
        painter.end()

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.LeftButton:
            self._move_view(event.position())
        event.accept()

    def mouseMoveEvent(self, event) -> None:
        if event.buttons() & Qt.LeftButton:
            self._move_view(event.position())
        event.accept()

    def _move_view(self, pos: QPointF) -> None:
        if self._view.tree_scene() is None:
            return
        self._view.center_on(self.scene_point(pos))
