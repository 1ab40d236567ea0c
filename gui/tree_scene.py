"""A decision tree drawn as a QGraphicsScene: what the window shows and exports print.

Layout is the tidy top-down kind: leaves sit on evenly spaced slots from left to
right, every parent is centred over its two children, and each depth has its own row.
Internal nodes are rounded boxes with the readable test (`age <= 37.5`), the number
of training rows and a stacked class-distribution bar; leaves are tinted with the
colour of the class they predict.  Each edge says whether the parent's test holds
("yes") or not ("no"); its tooltip gives the full branch condition.

A depth-10 tree has 2047 nodes and is far wider than a screen, so items paint with
a level of detail: once zoomed out so far that text could not be read, they draw
only their coloured boxes, which keeps both the picture legible and repainting fast.
Exports to vector formats set `TreeScene.always_detailed` to keep every text.

Hovering a node highlights the path from the root to it (`TreeScene.path_hovered`
tells the window which tests lead there).  A scene can be built in slices
(`deferred=True`, then `build_step(budget)` until it returns True) so the view can
draw a 2000-node incumbent without holding the event loop for more than a few
milliseconds at a time; tooltips are composed only when a node is first hovered.

`ModelScene` is what every model's drawing shares with the view and the exports
(hover, slices, legend, scene bounds); `gui.diagram_scene` draws decision diagrams
with the same items, style and colours.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from itertools import pairwise

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontInfo,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPen,
)
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene, QStyleOptionGraphicsItem

from engine.data.features import format_number
from engine.model.tree import Tree

# Okabe & Ito's colour-blind safe palette (yellow last: it is weak on white), then
# Paul Tol's "muted" scheme for problems with many classes; beyond, colours repeat.
PALETTE = (
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442",
    "#332288", "#44AA99", "#999933", "#882255", "#88CCEE", "#117733", "#CC6677",
    "#DDCC77", "#AA4499",
)

TEXT = QColor("#1b1f24")
MUTED_TEXT = QColor("#505863")
EDGE = QColor("#8a929c")
INTERNAL_FILL = QColor("#f6f7f9")
INTERNAL_BORDER = QColor("#6b7580")
EMPTY_BAR = QColor("#dde1e6")
HIGHLIGHT = QColor("#1f2328")   # the hovered path: dark and thick, any class colour

FONT_TITLE_PX = 13
FONT_SMALL_PX = 11
PAD = 7.0            # inside a box
BAR_HEIGHT = 7.0
MIN_BOX_WIDTH = 112.0
MAX_BOX_WIDTH = 250.0
H_GAP = 22.0         # between neighbouring leaf boxes
V_GAP = 58.0         # between a box's bottom and the next row's top
RADIUS = 6.0
MARGIN = 24.0        # around the whole drawing

_HAIRLINE = QPen(QColor("#6b7580"), 0)  # cosmetic: always one device pixel
_HIGHLIGHT_HAIRLINE = QPen(HIGHLIGHT, 2)
_HIGHLIGHT_HAIRLINE.setCosmetic(True)    # two device pixels at any zoom

TEXT_LOD = 0.4       # below this zoom, text is too small to read: boxes only
SHAPE_LOD = 0.12     # below this, plain rectangles without bars or rounding


def class_colour(index: int) -> QColor:
    """The fixed colour of class number `index`."""
    return QColor(PALETTE[index % len(PALETTE)])


def leaf_fill(index: int) -> QColor:
    """Light tint of a class colour, dark text stays readable on it."""
    c = class_colour(index)
    mix = 0.30
    return QColor(round(255 + (c.red() - 255) * mix), round(255 + (c.green() - 255) * mix),
                  round(255 + (c.blue() - 255) * mix))


def _font(px: int, bold: bool = False) -> QFont:
    font = QFont()
    font.setPixelSize(px)
    font.setBold(bold)
    # Name the family actually used (not the generic "Sans Serif"), so that SVG and
    # PDF viewers pick the font whose widths the layout was measured with.
    font.setFamily(QFontInfo(font).family())
    return font


def _level_of_detail(painter: QPainter) -> float:
    return QStyleOptionGraphicsItem.levelOfDetailFromTransform(painter.worldTransform())


@dataclass(frozen=True)
class BoxStyle:
    """Fonts and the one box size of a drawing, measured on the texts it shows."""

    title_font: QFont
    leaf_font: QFont
    small_font: QFont
    box_width: float
    box_height: float
    title_height: float
    small_height: float
    fits: dict  # "title" / "leaf" / "small" -> (its metrics, characters that always fit)

    @classmethod
    def measure(cls, tests: list[str], classes: list[str], subtitles: list[str],
                max_width: float = MAX_BOX_WIDTH) -> BoxStyle:
        """Boxes wide enough for the widest test, class name and subtitle (capped)."""
        title_font, leaf_font = _font(FONT_TITLE_PX), _font(FONT_TITLE_PX, bold=True)
        small_font = _font(FONT_SMALL_PX)
        tm, lm, sm = (QFontMetricsF(f) for f in (title_font, leaf_font, small_font))
        widest = max(_widest(tm, tests), _widest(lm, classes), _widest(sm, subtitles))
        box_width = min(max(widest + 2 * PAD + 6, MIN_BOX_WIDTH), max_width)
        title_height, small_height = tm.height() + 2, sm.height()
        box_height = PAD + title_height + 1 + small_height + 5 + BAR_HEIGHT + PAD
        text_width = box_width - 2 * PAD
        fits = {kind: (m, int(text_width // max(m.maxWidth(), 1.0)))
                for kind, m in (("title", tm), ("leaf", lm), ("small", sm))}
        return cls(title_font, leaf_font, small_font, box_width, box_height, title_height,
                   small_height, fits)

    def fitted(self, kind: str, text: str, mode=Qt.ElideMiddle) -> str:
        """`text` in the font `kind`, elided to the width inside a box if too long
        (only texts that might be too long are measured: 2000 nodes stay fast)."""
        metrics, safe = self.fits[kind]
        if len(text) <= safe:
            return text
        return metrics.elidedText(text, mode, self.box_width - 2 * PAD)


class NodeItem(QGraphicsItem):
    """One tree node: its box, its two lines of text and its class-distribution bar."""

    def __init__(self, node: int, title: str, subtitle: str, fractions: list[float],
                 leaf_class: int | None, style: BoxStyle,
                 tooltip: str | Callable[[], str]):
        super().__init__()
        self.node = node
        self.title = title          # shown text (possibly elided)
        self.subtitle = subtitle
        self.fractions = fractions  # share of each class, sums to 1 (or empty)
        self.leaf_class = leaf_class
        self.highlighted = False    # on the path from the root to the hovered node
        self._style = style
        self._rect = QRectF(-style.box_width / 2, 0, style.box_width, style.box_height)
        self._tooltip = tooltip     # text, or a function composing it on first use
        self.setZValue(1)
        self.setAcceptHoverEvents(True)
        if leaf_class is None:
            self._fill, self._pen = INTERNAL_FILL, QPen(INTERNAL_BORDER, 1.2)
            overview = INTERNAL_BORDER
        else:
            self._fill = leaf_fill(leaf_class)
            self._pen = QPen(class_colour(leaf_class).darker(125), 2.0)
            if not fractions:
                self._pen.setStyle(Qt.DashLine)  # no training row reaches this leaf
            overview = class_colour(leaf_class)
        # Far zoomed out: a solid block at least one pixel wide (cosmetic pen).
        self._overview_brush = QBrush(overview)
        self._overview_pen = QPen(overview, 0)

    @property
    def is_leaf(self) -> bool:
        return self.leaf_class is not None

    def texts(self) -> list[str]:
        return [self.title, self.subtitle]

    def toolTip(self) -> str:
        self._ensure_tooltip()
        return super().toolTip()

    def _ensure_tooltip(self) -> None:
        if self._tooltip is not None:
            text = self._tooltip() if callable(self._tooltip) else self._tooltip
            self._tooltip = None
            self.setToolTip(text)

    def set_highlighted(self, on: bool) -> None:
        if on != self.highlighted:
            self.highlighted = on
            self.update()

    def hoverEnterEvent(self, event) -> None:
        self._ensure_tooltip()
        scene = self.scene()
        if scene is not None:
            scene.hover_node(self.node)
        super().hoverEnterEvent(event)

    def hoverLeaveEvent(self, event) -> None:
        scene = self.scene()
        if scene is not None and scene.hovered_node == self.node:
            scene.hover_node(None)
        super().hoverLeaveEvent(event)

    def boundingRect(self) -> QRectF:
        return self._rect.adjusted(-2, -2, 2, 2)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        lod = _level_of_detail(painter)
        detailed = lod >= TEXT_LOD or self.scene().always_detailed
        painter.setPen(self._pen)
        painter.setBrush(self._fill)
        rect = self._rect
        if lod < SHAPE_LOD and not detailed:
            painter.setPen(QPen(HIGHLIGHT, 0) if self.highlighted else self._overview_pen)
            painter.setBrush(self._overview_brush)
            painter.drawRect(rect)
            return
        if self.highlighted:
            painter.setPen(QPen(HIGHLIGHT, 3.0))
        painter.drawRoundedRect(rect, RADIUS, RADIUS)
        self._paint_bar(painter)
        if not detailed:
            return
        s = self._style
        inner = rect.adjusted(PAD, PAD, -PAD, 0)
        painter.setPen(TEXT)
        painter.setFont(s.leaf_font if self.is_leaf else s.title_font)
        painter.drawText(QRectF(inner.left(), inner.top(), inner.width(), s.title_height),
                         Qt.AlignCenter, self.title)
        painter.setPen(MUTED_TEXT)
        painter.setFont(s.small_font)
        painter.drawText(QRectF(inner.left(), inner.top() + s.title_height + 1,
                                inner.width(), s.small_height), Qt.AlignCenter, self.subtitle)

    def _paint_bar(self, painter: QPainter) -> None:
        rect = self._rect
        bar = QRectF(rect.left() + PAD, rect.bottom() - PAD - BAR_HEIGHT,
                     rect.width() - 2 * PAD, BAR_HEIGHT)
        painter.setPen(Qt.NoPen)
        if not self.fractions:
            painter.setBrush(EMPTY_BAR)
            painter.drawRect(bar)
            return
        x = bar.left()
        for k, share in enumerate(self.fractions):
            if share <= 0:
                continue
            width = share * bar.width()
            painter.setBrush(class_colour(k))
            painter.drawRect(QRectF(x, bar.top(), width, bar.height()))
            x += width


_LABEL_SIZES: dict[tuple[str, str], tuple[float, float]] = {}


def _label_size(font: QFont, label: str) -> tuple[float, float]:
    key = (font.key(), label)
    if key not in _LABEL_SIZES:
        metrics = QFontMetricsF(font)
        _LABEL_SIZES[key] = (metrics.horizontalAdvance(label) + 10, metrics.height() + 2)
    return _LABEL_SIZES[key]


def elbow(start: QPointF, end: QPointF) -> tuple[QPainterPath, QPointF]:
    """A tree's connector from a parent's bottom to a child's top, and where its label
    goes: on the drop into the child, so siblings' labels never meet."""
    mid_y = start.y() + (end.y() - start.y()) * 0.3
    path = QPainterPath(start)
    path.lineTo(start.x(), mid_y)
    path.lineTo(end.x(), mid_y)
    path.lineTo(end)
    return path, QPointF(end.x(), mid_y + (end.y() - mid_y) / 2)


class EdgeItem(QGraphicsItem):
    """A connector from a parent to a child along `path`, labelled yes / no at
    `label_at` (the scene chooses both: elbows in a tree, curves in a diagram)."""

    def __init__(self, parent_node: int, child_node: int, path: QPainterPath,
                 label_at: QPointF, label: str, condition: str, font: QFont):
        super().__init__()
        self.parent_node = parent_node
        self.child_node = child_node
        self.label = label            # "yes" or "no"
        self.condition = condition    # the branch condition in full
        self._font = font
        self._path = path
        w, h = _label_size(font, label)
        self._label_rect = QRectF(label_at.x() - w / 2, label_at.y() - h / 2, w, h)
        self._bounds = path.boundingRect().united(self._label_rect).adjusted(-2, -2, 2, 2)
        self._pen = QPen(EDGE, 1.4)
        self._pen.setCosmetic(False)
        self.highlighted = False
        self.setToolTip(condition)
        self.setZValue(0)

    def set_highlighted(self, on: bool) -> None:
        if on != self.highlighted:
            self.highlighted = on
            self.setZValue(0.5 if on else 0)
            self.update()

    def texts(self) -> list[str]:
        return [self.label]

    def boundingRect(self) -> QRectF:
        return self._bounds

    def shape(self) -> QPainterPath:
        shape = QPainterPath()
        shape.addRect(self._label_rect)
        return shape

    def paint(self, painter: QPainter, option, widget=None) -> None:
        lod = _level_of_detail(painter)
        painter.setBrush(Qt.NoBrush)
        # Thinner than a pixel on screen: draw one pixel wide so the shape stays visible.
        if self.highlighted:
            pen = QPen(HIGHLIGHT, 3.0)
            painter.setPen(pen if lod * 3.0 >= 2 else _HIGHLIGHT_HAIRLINE)
        else:
            painter.setPen(self._pen if lod * self._pen.widthF() >= 1 else _HAIRLINE)
        painter.drawPath(self._path)
        if lod < TEXT_LOD and not self.scene().always_detailed:
            return
        painter.setPen(QPen(EDGE, 1.0))
        painter.setBrush(Qt.white)
        r = self._label_rect.height() / 2
        painter.drawRoundedRect(self._label_rect, r, r)
        painter.setPen(TEXT)
        painter.setFont(self._font)
        painter.drawText(self._label_rect, Qt.AlignCenter, self.label)


class LegendItem(QGraphicsItem):
    """Colour key: one swatch per class, laid out in a single row."""

    MAX_SHOWN = 24

    def __init__(self, class_names: list[str], font: QFont):
        super().__init__()
        self._font = font
        metrics = QFontMetricsF(font)
        self._entries: list[tuple[QRectF, QRectF, QColor, str]] = []
        x, h = 0.0, metrics.height()
        names = list(class_names)
        shown = names[:self.MAX_SHOWN]
        header = "Classes:"
        self._header = QRectF(0, 0, metrics.horizontalAdvance(header) + 4, h)
        self._header_text = header
        x = self._header.width() + 8
        for k, name in enumerate(shown):
            text = metrics.elidedText(str(name), Qt.ElideRight, 160)
            swatch = QRectF(x, (h - 11) / 2, 11, 11)
            label = QRectF(x + 15, 0, metrics.horizontalAdvance(text) + 2, h)
            self._entries.append((swatch, label, class_colour(k), text))
            x = label.right() + 14
        self._more = ""
        if len(names) > len(shown):
            self._more = f"+ {len(names) - len(shown)} more"
            self._more_rect = QRectF(x, 0, metrics.horizontalAdvance(self._more) + 4, h)
            x = self._more_rect.right()
        self._rect = QRectF(0, 0, x, h)

    def texts(self) -> list[str]:
        return [self._header_text] + [e[3] for e in self._entries] + (
            [self._more] if self._more else [])

    def boundingRect(self) -> QRectF:
        return self._rect.adjusted(-1, -1, 1, 1)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setFont(self._font)
        painter.setPen(MUTED_TEXT)
        painter.drawText(self._header, Qt.AlignVCenter | Qt.AlignLeft, self._header_text)
        for swatch, label, colour, text in self._entries:
            painter.setPen(Qt.NoPen)
            painter.setBrush(colour)
            painter.drawRoundedRect(swatch, 2, 2)
            painter.setPen(TEXT)
            painter.drawText(label, Qt.AlignVCenter | Qt.AlignLeft, text)
        if self._more:
            painter.setPen(MUTED_TEXT)
            painter.drawText(self._more_rect, Qt.AlignVCenter | Qt.AlignLeft, self._more)


def tree_layout(tree: Tree) -> tuple[list[int], np.ndarray, np.ndarray]:
    """Reachable nodes in pre-order, with each node's slot (x in leaf widths) and depth.

    Leaves take consecutive slots from left to right; a parent sits midway between
    its two children.
    """
    n = tree.n_nodes
    slot = np.zeros(n, dtype=np.float64)
    depth = np.zeros(n, dtype=np.int64)
    order: list[int] = []
    stack = [0]
    while stack:
        node = stack.pop()
        order.append(node)
        if not tree.is_leaf(node):
            for child in (tree.right[node], tree.left[node]):  # left is popped first
                depth[child] = depth[node] + 1
                stack.append(int(child))
    next_slot = 0
    for node in order:
        if tree.is_leaf(node):
            slot[node] = next_slot
            next_slot += 1
    for node in reversed(order):
        if not tree.is_leaf(node):
            slot[node] = (slot[tree.left[node]] + slot[tree.right[node]]) / 2
    return order, slot, depth


def _widest(metrics: QFontMetricsF, texts: list[str]) -> float:
    """Width of the widest text, measuring only the longest few (by characters)."""
    if not texts:
        return 0.0
    longest = sorted(set(texts), key=len, reverse=True)[:24]
    return max(metrics.horizontalAdvance(t) for t in longest)


def count_text(total: float) -> str:
    return f"{format_number(total)} row{'' if total == 1 else 's'}"


def leaf_subtitle(right: float, total: float) -> str:
    """What a leaf (or class terminal) says under its class: `12 of 14 rows`."""
    return f"{format_number(right)} of {count_text(total)}" if total > 0 else "no rows"


def class_counts(values, names: list[str]) -> str:
    """`Rows per class: no: 20, yes: 2`, the last line of every node's tooltip."""
    return "Rows per class: " + ", ".join(f"{names[k]}: {format_number(float(v))}"
                                          for k, v in enumerate(values))


class ModelScene(QGraphicsScene):
    """What the view, the window and the picture exports use of any model's drawing.

    `tree` is the model drawn (a `Tree` here, a `Diagram` in `DiagramScene`),
    `node_items[i]` node i's box (None where nothing is drawn), `edge_items` the
    connectors.  Hovering a node highlights what the subclass's `_highlight` names and
    `hover_text` puts it in words.  `deferred=True` only prepares; `build_step(budget)`
    then runs the subclass's `_build_steps` generator a slice at a time and returns
    True once the drawing is complete (`complete`).
    """

    path_hovered = Signal(object)   # node under the mouse (int), or None
    STEP_ITEMS = 48                 # items added between two checks of the budget
    description = "Decision tree"   # what the picture shows, for image metadata

    def __init__(self, model, n_nodes: int, parent=None):
        super().__init__(parent)
        self.tree = model
        self.always_detailed = False
        self.complete = False
        self.hovered_node: int | None = None
        self.setBackgroundBrush(Qt.white)
        self.setItemIndexMethod(QGraphicsScene.BspTreeIndex)
        self.node_items: list[NodeItem | None] = [None] * n_nodes
        self.edge_items: list[EdgeItem] = []

    def _start(self, deferred: bool) -> None:
        """Begin the build (subclasses call this once their own state is set)."""
        self._steps = self._build_steps()
        if not deferred:
            self.build_step(None)

    # ------------------------------------------------------------------ content
    def texts(self) -> list[str]:
        """Every text the drawing shows (for search, tests and accessibility)."""
        out: list[str] = []
        for item in self.items(Qt.AscendingOrder):
            if hasattr(item, "texts"):
                out.extend(item.texts())
        return out

    # ------------------------------------------------------------------ hover
    def _highlight(self, node: int) -> tuple[set[int], set[tuple[int, int]]]:
        """Nodes and (parent, child) arcs to highlight when `node` is hovered."""
        raise NotImplementedError

    def hover_text(self, node: int) -> str:
        """The conditions leading to `node`, for the line under the drawing."""
        raise NotImplementedError

    def hover_node(self, node: int | None) -> None:
        """Highlight the way from the root to `node` (None: no highlight)."""
        if node == self.hovered_node:
            return
        nodes, arcs = self._highlight(node) if node is not None else (set(), set())
        for item in self.node_items:
            if item is not None:
                item.set_highlighted(item.node in nodes)
        for edge in self.edge_items:
            edge.set_highlighted((edge.parent_node, edge.child_node) in arcs)
        self.hovered_node = node
        self.path_hovered.emit(node)

    def highlighted_nodes(self) -> list[int]:
        return sorted(item.node for item in self.node_items
                      if item is not None and item.highlighted)

    # ------------------------------------------------------------------- build
    def build_step(self, budget: float | None) -> bool:
        """Add items for about `budget` seconds (None: all); True when complete."""
        deadline = None if budget is None else time.perf_counter() + budget
        for _ in self._steps:
            if deadline is not None and time.perf_counter() >= deadline:
                return False
        self.complete = True
        return True

    def _build_steps(self):
        """The build as a generator: each `yield` is a point where it may pause."""
        raise NotImplementedError

    def _add_legend(self, names: list[str], style: BoxStyle, x: float,
                    extent: QRectF) -> None:
        """The class key above the drawing, from `x`; the scene covers both and a margin.

        `extent` is the drawing's own, known from the layout (cheaper than asking every
        item for its bounds)."""
        legend = LegendItem(names, style.small_font)
        legend.setPos(x, -legend.boundingRect().height() - 18)
        self.addItem(legend)
        self.legend = legend
        bounds = extent.united(QRectF(legend.pos(), legend.boundingRect().size()))
        self.setSceneRect(bounds.adjusted(-MARGIN - 2, -MARGIN - 2, MARGIN + 2, MARGIN + 2))


class TreeScene(ModelScene):
    """The drawing of one tree; `node_items[i]` is node i's box (None if unreachable)."""

    def __init__(self, tree: Tree, parent=None, deferred: bool = False):
        super().__init__(tree, tree.n_nodes, parent)
        self.parent_of = np.full(tree.n_nodes, -1, dtype=np.int64)
        internal = np.flatnonzero(tree.feature >= 0)
        self.parent_of[tree.left[internal]] = internal
        self.parent_of[tree.right[internal]] = internal
        self._start(deferred)

    # ------------------------------------------------------------------ hover
    def path_to(self, node: int) -> list[int]:
        """Nodes from the root down to `node`."""
        path = [int(node)]
        while self.parent_of[path[-1]] >= 0:
            path.append(int(self.parent_of[path[-1]]))
        return path[::-1]

    def path_conditions(self, node: int) -> list[str]:
        """The branch conditions a row satisfies to reach `node`, from the root."""
        path = self.path_to(node)
        out = []
        for parent, child in pairwise(path):
            left_text, right_text = self.tree.branch_conditions(parent)
            out.append(left_text if self.tree.left[parent] == child else right_text)
        return out

    def _highlight(self, node: int) -> tuple[set[int], set[tuple[int, int]]]:
        path = self.path_to(node)
        return set(path), set(pairwise(path))

    def hover_text(self, node: int) -> str:
        conditions = self.path_conditions(node)
        text = " → ".join(conditions) if conditions else "root"
        if self.tree.is_leaf(node):
            text += f"  ⇒  {self.tree.class_names[self.tree.label[node]]}"
        return text

    # ------------------------------------------------------------------- build
    def _build_steps(self):
        tree = self.tree
        names = [str(c) for c in tree.class_names]
        order, slot, depth = tree_layout(tree)
        is_leaf = (tree.feature < 0).tolist()
        value = tree.value.tolist()
        labels = tree.label.tolist()
        totals = [sum(row) for row in value]
        yield

        titles, subtitles = {}, {}
        for i, node in enumerate(order):
            total = totals[node]
            if is_leaf[node]:
                titles[node] = names[labels[node]]
                subtitles[node] = leaf_subtitle(value[node][labels[node]], total)
            else:
                titles[node] = tree.condition(node, True)
                subtitles[node] = count_text(total)
            if i % 256 == 255:
                yield

        style = BoxStyle.measure([titles[n] for n in order if not is_leaf[n]],
                                 [titles[n] for n in order if is_leaf[n]],
                                 list(subtitles.values()))
        box_width, box_height = style.box_width, style.box_height
        slot_width = box_width + H_GAP
        row_height = box_height + V_GAP
        positions: dict[int, QPointF] = {}
        for i, node in enumerate(order):
            pos = QPointF(slot[node] * slot_width, depth[node] * row_height)
            positions[node] = pos
            total = totals[node]
            fractions = [v / total for v in value[node]] if total > 0 else []
            leaf = is_leaf[node]
            title = style.fitted("leaf" if leaf else "title", titles[node])
            subtitle = style.fitted("small", subtitles[node], Qt.ElideRight)
            item = NodeItem(node, title, subtitle, fractions,
                            labels[node] if leaf else None, style,
                            partial(node_tooltip, tree, node, names, titles[node]))
            item.setPos(pos)
            self.addItem(item)
            self.node_items[node] = item
            if i % self.STEP_ITEMS == self.STEP_ITEMS - 1:
                yield

        count = 0
        for node in order:
            if is_leaf[node]:
                continue
            left_text, right_text = tree.branch_conditions(node)
            test = titles[node]
            start = positions[node] + QPointF(0, box_height)
            for child, condition in ((tree.left[node], left_text),
                                     (tree.right[node], right_text)):
                child = int(child)
                label = "yes" if condition == test else "no"
                edge = EdgeItem(node, child, *elbow(start, positions[child]), label,
                                condition, style.small_font)
                self.addItem(edge)
                self.edge_items.append(edge)
            count += 1
            if count % (self.STEP_ITEMS // 2) == 0:
                yield

        xs = [slot[n] for n in order]
        left = min(xs) * slot_width - box_width / 2
        right = max(xs) * slot_width + box_width / 2
        bottom = max(depth[n] for n in order) * row_height + box_height
        self._add_legend(names, style, -box_width / 2, QRectF(left, 0, right - left, bottom))


def node_tooltip(tree: Tree, node: int, names: list[str], title: str) -> str:
    """A node's tooltip (composed when first hovered; holds no reference to the scene,
    so a replaced drawing is freed at once rather than by the garbage collector)."""
    if tree.is_leaf(node):
        head = f"Leaf predicting {names[tree.label[node]]}"
    else:
        head = f"Split: {title}"
    return f"{head}\n{class_counts(tree.value[node], names)}"
