"""A decision tree drawn as a QGraphicsScene: what the window shows and exports print.

Layout is the tidy top-down kind: leaves sit on evenly spaced slots from left to
right, every parent is centred over its two children, and each depth has its own row.
Internal nodes are rounded boxes with the readable test (`age <= 37.5`), the number
of training rows and a stacked class-distribution bar; leaves are tinted with the
colour of the class they predict.  Each edge says whether the parent's test holds
("yes") or not ("no"); its tooltip gives the full branch condition.  Whatever the
solver, the test reads in positive words (`colour = red`) and its "yes" child is
drawn on the left, its "no" child on the right (`engine.export.walk.branches`, which
the diagram drawing and the exports use too); the tree's arrays are not changed.

A depth-10 tree has 2047 nodes and is far wider than a screen, so items paint with
a level of detail: once zoomed out so far that text could not be read, they draw
only their coloured boxes, which keeps both the picture legible and repainting fast.
Exports to vector formats set `TreeScene.always_detailed` to keep every text.

Hovering a node highlights the path from the root to it (`TreeScene.path_hovered`
tells the window which tests lead there).  A scene can be built in slices
(`deferred=True`, then `build_step(budget)` until it returns True) so the view can
draw a 2000-node incumbent without holding the event loop for more than a few
milliseconds at a time; tooltips are composed only when a node is first hovered.

Trees of depth 6-10 are read with display tools that never touch the model: a
subtree can be collapsed (its node then carries a "+N" badge counting the hidden
nodes, and the layout is recomputed so hidden parts take no room), a display depth
collapses everything below it, `find` marks the nodes testing a column or predicting
a class, and edges are as wide as the share of training weight they carry.  All
items are built once; collapsing only hides items and moves the rest (`relayout`).

`ModelScene` is what every model's drawing shares with the view and the exports
(hover, slices, legend, scene bounds); `gui.diagram_scene` draws decision diagrams
with the same items, style and colours.
"""

from __future__ import annotations

import math
import re

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

from engine.data.features import format_count, format_number
from engine.export.walk import Branches, branches
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
MATCH = QColor("#e8590c")       # nodes found by a search: an orange ring, not a class colour
BADGE_FILL = QColor("#3d444d")  # the "+N" badge of a collapsed subtree

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
BADGE_HEIGHT = 16.0  # the "+N" pill straddling a collapsed node's bottom edge
STACK_OFFSET = 4.0   # a collapsed node shows a second box behind it, this far down-right
MATCH_RING = 4.0     # a found node's ring, this far outside its box
EDGE_WIDTH = 1.4     # an edge's width when widths do not follow the rows
MIN_EDGE_WIDTH, MAX_EDGE_WIDTH = 1.0, 8.0  # widths by rows: no weight .. all of it

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
        width = self.box_width - 2 * PAD
        if metrics.horizontalAdvance(text) <= width:
            return text
        for shorter in fewer_values(text):   # a value group loses whole values
            if metrics.horizontalAdvance(shorter) <= width:
                return shorter
            text = shorter
        return metrics.elidedText(text, mode, width)


def fewer_values(text: str) -> list[str]:
    """`text` with a value group (`engine.data.features.format_group`) shown with
    fewer and fewer whole values, "{AA, UA, … and 14 more}" down to one value, then
    as "{16 values}": a group too wide for its box is cut between values, never
    inside one (the tooltip and Copy rule have them all)."""
    match = re.fullmatch(r"(.*?)\{(.*)\}(.*)", text, re.S)
    if match is None:
        return []
    head, inner, tail = match.groups()
    parts = inner.split(", ")
    more = 0
    last = re.fullmatch(r"… and (\d+) more", parts[-1])
    if last:
        more, parts = int(last.group(1)), parts[:-1]
    return [f"{head}{{{', '.join(parts[:k])}, … and {more + len(parts) - k} more}}{tail}"
            for k in range(len(parts) - 1, 0, -1)] + \
        [f"{head}{{{more + len(parts)} values}}{tail}"]


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
        self.matched = False        # found by the last search
        self.hidden_count = 0       # collapsed: the nodes hidden below ("+N"), else 0
        self._style = style
        self._rect = QRectF(-style.box_width / 2, 0, style.box_width, style.box_height)
        self._tooltip = tooltip     # text, or a function composing it on first use
        self._base_tooltip: str | None = None
        self._badge = QRectF()
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
        return [self.title, self.subtitle] + ([self.badge_text] if self.hidden_count else [])

    @property
    def badge_text(self) -> str:
        return f"+{self.hidden_count}"

    def toolTip(self) -> str:
        self._ensure_tooltip()
        return super().toolTip()

    def _ensure_tooltip(self) -> None:
        if self._tooltip is not None:
            text = self._tooltip() if callable(self._tooltip) else self._tooltip
            self._tooltip = None
            self._base_tooltip = text
            self._show_tooltip()

    def _show_tooltip(self) -> None:
        """The composed text plus, in a tree, how to fold or unfold this subtree (Qt
        reads the stored tooltip, so it is stored again when the node folds)."""
        text = self._base_tooltip
        if self.hidden_count:
            text += (f"\n{self.hidden_count} nodes hidden below: click the badge or "
                     "Alt+click to expand")
        elif not self.is_leaf and isinstance(self.scene(), TreeScene):
            text += "\nAlt+click to collapse this subtree"
        self.setToolTip(text)

    def set_highlighted(self, on: bool) -> None:
        if on != self.highlighted:
            self.highlighted = on
            self.update()

    def set_matched(self, on: bool) -> None:
        if on != self.matched:
            self.matched = on
            self.update()

    def set_hidden_count(self, count: int) -> None:
        """Fold (count > 0: a badge "+count" and a box stacked behind) or unfold."""
        if count == self.hidden_count:
            return
        self.prepareGeometryChange()
        self.hidden_count = count
        self._badge = QRectF()
        if count:
            metrics = QFontMetricsF(self._style.small_font)
            width = metrics.horizontalAdvance(self.badge_text) + 14
            self._badge = QRectF(-width / 2, self._rect.bottom() - BADGE_HEIGHT / 3,
                                 width, BADGE_HEIGHT)
        if self._base_tooltip is not None:
            self._show_tooltip()
        self.update()

    def badge_contains(self, scene_point: QPointF) -> bool:
        """True when `scene_point` falls on this node's "+N" badge (a click expands)."""
        return self.hidden_count > 0 and self._badge.adjusted(-3, -3, 3, 3).contains(
            self.mapFromScene(scene_point))

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
        bounds = self._rect.adjusted(-MATCH_RING - 2, -MATCH_RING - 2, MATCH_RING + 2,
                                     MATCH_RING + 2)
        if self.hidden_count:
            bounds = bounds.united(self._rect.translated(STACK_OFFSET, STACK_OFFSET))
            bounds = bounds.united(self._badge.adjusted(-2, -2, 2, 2))
        return bounds

    def shape(self) -> QPainterPath:
        """The box and its badge (a click beside the box is not on the node)."""
        path = QPainterPath()
        path.addRect(self._rect)
        if self.hidden_count:
            path.addRect(self._badge)
        return path

    def paint(self, painter: QPainter, option, widget=None) -> None:
        lod = _level_of_detail(painter)
        detailed = lod >= TEXT_LOD or self.scene().always_detailed
        rect = self._rect
        if lod < SHAPE_LOD and not detailed:
            if self.hidden_count:  # something is folded here: a darker block beneath
                painter.setPen(Qt.NoPen)
                painter.setBrush(BADGE_FILL)
                painter.drawRect(rect.translated(STACK_OFFSET, STACK_OFFSET))
            painter.setPen(QPen(HIGHLIGHT, 0) if self.highlighted else
                           QPen(MATCH, 0) if self.matched else self._overview_pen)
            # found nodes turn orange: a ring would be thinner than a pixel here
            painter.setBrush(MATCH if self.matched else self._overview_brush)
            painter.drawRect(rect)
            return
        if self.hidden_count:
            painter.setPen(self._pen)
            painter.setBrush(INTERNAL_FILL)
            painter.drawRoundedRect(rect.translated(STACK_OFFSET, STACK_OFFSET),
                                    RADIUS, RADIUS)
        if self.matched:
            painter.setPen(QPen(MATCH, 3.0))
            painter.setBrush(Qt.NoBrush)
            ring = rect.adjusted(-MATCH_RING, -MATCH_RING, MATCH_RING, MATCH_RING)
            painter.drawRoundedRect(ring, RADIUS + MATCH_RING, RADIUS + MATCH_RING)
        painter.setPen(QPen(HIGHLIGHT, 3.0) if self.highlighted else self._pen)
        painter.setBrush(self._fill)
        painter.drawRoundedRect(rect, RADIUS, RADIUS)
        self._paint_bar(painter)
        if self.hidden_count:
            self._paint_badge(painter, detailed)
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

    def _paint_badge(self, painter: QPainter, detailed: bool) -> None:
        painter.setPen(Qt.NoPen)
        painter.setBrush(BADGE_FILL)
        r = self._badge.height() / 2
        painter.drawRoundedRect(self._badge, r, r)
        if detailed:
            painter.setPen(Qt.white)
            painter.setFont(self._style.small_font)
            painter.drawText(self._badge, Qt.AlignCenter, self.badge_text)

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
                 label_at: QPointF, label: str, condition: str, font: QFont,
                 weight: float = 0.0, width: float = EDGE_WIDTH):
        super().__init__()
        self.parent_node = parent_node
        self.child_node = child_node
        self.label = label            # "yes" or "no"
        self.condition = condition    # the branch condition in full
        self._font = font
        self._pen = QPen(EDGE, width)
        self._pen.setCosmetic(False)
        self._pen.setJoinStyle(Qt.MiterJoin)  # wide elbows keep square corners
        self._pen.setCapStyle(Qt.FlatCap)     # and end where the boxes begin
        self.highlighted = False
        self.weight = weight  # share of the root's training weight reaching the child
        self.offset = None    # in a tree: the child's place relative to the parent's
        self._label_size = _label_size(font, label)
        self.set_path(path, label_at)
        self.setToolTip(condition)
        self.setZValue(0)

    @property
    def width(self) -> float:
        return self._pen.widthF()

    def set_path(self, path: QPainterPath, label_at: QPointF) -> None:
        """Route the connector anew (after the layout changed)."""
        self.prepareGeometryChange()
        self._path = path
        w, h = self._label_size
        self._label_rect = QRectF(label_at.x() - w / 2, label_at.y() - h / 2, w, h)
        self._update_bounds()

    def set_width(self, width: float) -> None:
        """Draw `width` scene units wide (a tree's edges: by the rows they carry)."""
        if width != self._pen.widthF():
            self.prepareGeometryChange()
            self._pen.setWidthF(width)
            self._update_bounds()
            self.update()

    def _update_bounds(self) -> None:
        grow = max(2.0, self._highlight_width() / 2 + 1)
        self._bounds = self._path.boundingRect().adjusted(-grow, -grow, grow, grow).united(
            self._label_rect.adjusted(-2, -2, 2, 2))

    def _highlight_width(self) -> float:
        return max(3.0, self._pen.widthF() + 1.5)

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
            width = self._highlight_width()
            pen = QPen(HIGHLIGHT, width, Qt.SolidLine, Qt.FlatCap, Qt.MiterJoin)
            painter.setPen(pen if lod * width >= 2 else _HIGHLIGHT_HAIRLINE)
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

    def __init__(self, class_names: list[str], font: QFont, header: str = "Classes:"):
        super().__init__()
        self._font = font
        metrics = QFontMetricsF(font)
        self._entries: list[tuple[QRectF, QRectF, QColor, str]] = []
        x, h = 0.0, metrics.height()
        names = list(class_names)
        shown = names[:self.MAX_SHOWN]
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


def drawn_children(tree: Tree) -> tuple[list[int], list[int], list[Branches | None]]:
    """Each node's child drawn on the left (its "yes") and on the right ("no"), -1 at
    leaves, and how each internal node is shown (`branches`; None at leaves)."""
    n = tree.n_nodes
    forks: list[Branches | None] = [None] * n
    first, second = [-1] * n, [-1] * n
    for node in np.flatnonzero(tree.feature >= 0).tolist():
        fork = forks[node] = branches(tree, node)
        first[node], second[node] = fork.yes, fork.no
    return first, second, forks


def tree_layout(tree: Tree, folded=frozenset(),
                children: tuple[list[int], list[int]] | None = None
                ) -> tuple[list[int], np.ndarray, np.ndarray]:
    """Shown nodes in pre-order, with each node's slot (x in leaf widths) and depth.

    Leaves take consecutive slots from left to right; a parent sits midway between
    its two children, its "yes" child on the left (`children`: the left and right
    child of every node, from `drawn_children`, computed when not given).  A node in
    `folded` is laid out as a leaf and nothing below it is listed, so a collapsed
    subtree takes one slot.  (Plain lists: for 2047 nodes this takes about a
    millisecond, numpy element access would take several.)
    """
    n = tree.n_nodes
    left, right = children if children is not None else drawn_children(tree)[:2]
    ends = (tree.feature < 0).tolist()
    for node in folded:
        ends[node] = True
    slot = [0.0] * n
    depth = [0] * n
    order: list[int] = []
    stack = [0]
    next_slot = 0
    while stack:
        node = stack.pop()
        order.append(node)
        if ends[node]:
            slot[node] = next_slot
            next_slot += 1
        else:
            d = depth[node] + 1
            depth[left[node]] = depth[right[node]] = d
            stack.append(right[node])
            stack.append(left[node])   # left is popped first
    for node in reversed(order):
        if not ends[node]:
            slot[node] = (slot[left[node]] + slot[right[node]]) / 2
    return order, np.array(slot), np.array(depth, dtype=np.int64)


def _widest(metrics: QFontMetricsF, texts: list[str]) -> float:
    """Width of the widest text, measuring only the longest few (by characters)."""
    if not texts:
        return 0.0
    longest = sorted(set(texts), key=len, reverse=True)[:24]
    return max(metrics.horizontalAdvance(t) for t in longest)


# A regression's legend: what its boxes' bars say.
REGRESSION_KEY = "Each box: the mean of its rows; its bar, that mean between the lowest " \
    "and the highest leaf's."


def predicted_texts(tree: Tree) -> list[str]:
    """What each node would predict, as its box says it: a class name, or a
    regression's mean."""
    if tree.regression:
        return [format_number(float(m)) for m in tree.value[:, 1]]
    names = [str(c) for c in tree.class_names]
    return [names[k] for k in tree.label.tolist()]


def mean_bars(tree: Tree) -> list[list[float]]:
    """A regression's bar of each node: one share, where its mean lies between the
    lowest and the highest mean of the leaves with rows (a sliver at the lowest)."""
    weight, mean = tree.value[:, 0], tree.value[:, 1]
    leaves = (tree.feature < 0) & (weight > 0)
    low, high = (float(mean[leaves].min()), float(mean[leaves].max())) if leaves.any() \
        else (0.0, 0.0)
    span = high - low
    return [[min(max((float(m) - low) / span if span > 0 else 1.0, 0.03), 1.0)]
            if w > 0 else [] for w, m in zip(weight.tolist(), mean.tolist())]


def regression_subtitle(weight: float, squared: float) -> str:
    """What a regression's box says under its mean: `281 rows · rmse 36.3`."""
    if weight <= 0:
        return "no rows"
    return f"{count_text(weight)} · rmse {format_number(math.sqrt(squared / weight))}"


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
            if hasattr(item, "texts") and item.isVisible():
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
        self._set_highlight(*(self._highlight(node) if node is not None else (set(), set())))
        self.hovered_node = node
        self.path_hovered.emit(node)

    def light_path(self, path: list[int]) -> None:
        """Highlight exactly `path` (root first) and the arcs along it: one row's way
        through the model (in a diagram, one of the ways into its terminal).  Folded
        parts on the way are unfolded; the light stays until another node is hovered."""
        self.reveal(path)
        self._set_highlight(set(path), set(pairwise(path)))
        self.hovered_node = None

    def reveal(self, nodes) -> bool:
        """Unfold what hides `nodes`; only trees fold (`TreeScene.reveal`)."""
        return False

    def _set_highlight(self, nodes: set[int], arcs: set[tuple[int, int]]) -> None:
        for item in self.node_items:
            if item is not None:
                item.set_highlighted(item.node in nodes)
        for edge in self.edge_items:
            edge.set_highlighted((edge.parent_node, edge.child_node) in arcs)

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
        legend = LegendItem(names, style.small_font) if not self.tree.regression else \
            LegendItem([], style.small_font, REGRESSION_KEY)
        legend.setPos(x, -legend.boundingRect().height() - 18)
        self.addItem(legend)
        self.legend = legend
        self._set_extent(extent)

    def _set_extent(self, extent: QRectF) -> None:
        """The scene covers the drawing's `extent`, the legend and a margin."""
        legend = self.legend
        bounds = extent.united(QRectF(legend.pos(), legend.boundingRect().size()))
        self.setSceneRect(bounds.adjusted(-MARGIN - 2, -MARGIN - 2, MARGIN + 2, MARGIN + 2))


class TreeScene(ModelScene):
    """The drawing of one tree; `node_items[i]` is node i's box (None if unreachable).

    `collapsed` holds the internal nodes whose subtrees are folded away (display
    only: the tree is not changed); a node is shown when no ancestor is folded.
    Every item exists from the build on, so folding only hides, shows and moves
    items (`relayout`), with no new measuring of texts.
    """

    def __init__(self, tree: Tree, parent=None, deferred: bool = False,
                 collapsed=(), display_depth: int | None = None,
                 edge_width_by_rows: bool = True, row_factors=None):
        super().__init__(tree, tree.n_nodes, parent)
        # the class weights at the nodes, as rows: a weighted run's boxes count rows
        self.rows = tree.value if row_factors is None else \
            np.rint(tree.value / np.asarray(row_factors, dtype=float))
        self.parent_of = np.full(tree.n_nodes, -1, dtype=np.int64)
        internal = np.flatnonzero(tree.feature >= 0)
        self.parent_of[tree.left[internal]] = internal
        self.parent_of[tree.right[internal]] = internal
        # how each internal node is drawn: its test, yes child (left), no child (right)
        first, second, self.forks = drawn_children(tree)
        self._children = (first, second)
        self._order, _, depth = self._layout()   # every reachable node, pre-order
        self.depth_of: list[int] = depth.tolist()
        self.subtree_size = self._subtree_sizes()
        self.display_depth: int | None = None
        self.collapsed: set[int] = set()
        self.edge_width_by_rows = edge_width_by_rows
        self.matches: list[int] = []
        self._placed: dict[int, tuple[float, float]] = {}  # node -> where its item is
        self._relayout_pending = False
        self.display_depth = display_depth
        self.collapsed = self._folds_below(display_depth) | {
            int(n) for n in collapsed if self._foldable(int(n))}
        self._start(deferred)

    def _subtree_sizes(self) -> list[int]:
        """Nodes in each node's subtree, itself included (children before parents)."""
        size = [1] * self.tree.n_nodes
        left, right = self.tree.left.tolist(), self.tree.right.tolist()
        for node in reversed(self._order):
            if left[node] >= 0:
                size[node] += size[left[node]] + size[right[node]]
        return size

    def _layout(self, folded=frozenset()) -> tuple[list[int], np.ndarray, np.ndarray]:
        return tree_layout(self.tree, folded, self._children)

    def _foldable(self, node: int) -> bool:
        return 0 <= node < self.tree.n_nodes and not self.tree.is_leaf(node)

    # ------------------------------------------------------------------ hover
    def path_to(self, node: int) -> list[int]:
        """Nodes from the root down to `node`."""
        path = [int(node)]
        while self.parent_of[path[-1]] >= 0:
            path.append(int(self.parent_of[path[-1]]))
        return path[::-1]

    def path_conditions(self, node: int, full: bool = False) -> list[str]:
        """The branch conditions a row satisfies to reach `node`, from the root
        (`full`: value groups with every value, as Copy rule copies them)."""
        path = self.path_to(node)
        out = []
        for parent, child in pairwise(path):
            fork = self.forks[parent]
            out.append(fork.condition(child == fork.yes, full))
        return out

    def _highlight(self, node: int) -> tuple[set[int], set[tuple[int, int]]]:
        path = self.path_to(node)
        return set(path), set(pairwise(path))

    def hover_text(self, node: int) -> str:
        conditions = self.path_conditions(node)
        text = " → ".join(conditions) if conditions else "root"
        if self.tree.is_leaf(node):
            text += f"  ⇒  {predicted_texts(self.tree)[node]}"
        return text

    # --------------------------------------------------------- folding (display)
    def hidden_count(self, node: int) -> int:
        """Nodes a fold at `node` hides: all of its descendants."""
        return self.subtree_size[node] - 1

    def shown_nodes(self) -> list[int]:
        """Nodes drawn with the current folds, in pre-order."""
        return self._layout(self.collapsed)[0]

    def toggle_collapsed(self, node: int) -> bool:
        """Fold `node`'s subtree away, or unfold it; False for a leaf (nothing to do)."""
        if not self._foldable(node):
            return False
        self.collapsed.symmetric_difference_update({node})
        self.relayout()
        return True

    def set_display_depth(self, depth: int | None) -> None:
        """Show nodes down to `depth` (None: all); every subtree starting deeper is
        folded, so unfolding one of them opens one more level, not all the rest."""
        self.display_depth = depth
        self.collapsed = self._folds_below(depth)
        self.relayout()

    def _folds_below(self, depth: int | None) -> set[int]:
        if depth is None:
            return set()
        is_leaf = (self.tree.feature < 0).tolist()
        return {n for n in self._order if not is_leaf[n] and self.depth_of[n] >= depth}

    def expand_all(self) -> None:
        self.set_display_depth(None)

    def reveal(self, nodes) -> bool:
        """Unfold every ancestor of `nodes` so that they are shown; True if any was."""
        opened = set()
        for node in nodes:
            parent = int(self.parent_of[node])
            while parent >= 0:
                if parent in self.collapsed:
                    opened.add(parent)
                parent = int(self.parent_of[parent])
        if opened:
            self.collapsed -= opened
            self.relayout()
        return bool(opened)

    # ------------------------------------------------------------------ search
    def find(self, text: str) -> list[int]:
        """Nodes whose test mentions `text` (a column, a value) or leaves predicting a
        class whose name contains it, case-insensitively, in pre-order; they are
        marked and unfolded.  Empty text clears the marks."""
        needle = text.strip().casefold()
        tree = self.tree
        predicted = [name.casefold() for name in predicted_texts(tree)]
        found = []
        if needle:
            for node in self._order:
                if tree.is_leaf(node):
                    hit = needle in predicted[node]
                else:
                    hit = (needle in tree.features[tree.feature[node]].column.casefold()
                           or needle in self.forks[node].text.casefold())
                if hit:
                    found.append(node)
        self.set_matches(found)
        self.reveal(found)
        return found

    def set_matches(self, nodes) -> None:
        self.matches = list(nodes)
        marked = set(self.matches)
        for item in self.node_items:
            if item is not None:
                item.set_matched(item.node in marked)

    # -------------------------------------------------------------- edge width
    @staticmethod
    def edge_width(weight: float) -> float:
        """Width of an edge carrying `weight` of the root's training weight (0..1)."""
        weight = min(max(weight, 0.0), 1.0)
        return MIN_EDGE_WIDTH + (MAX_EDGE_WIDTH - MIN_EDGE_WIDTH) * weight

    def set_edge_width_by_rows(self, on: bool) -> None:
        """Edges as wide as the share of rows they carry, or all alike."""
        self.edge_width_by_rows = on
        for edge in self.edge_items:
            edge.set_width(self.edge_width(edge.weight) if on else EDGE_WIDTH)

    # ------------------------------------------------------------------ layout
    def relayout(self) -> None:
        """Place the shown nodes anew with the current folds: hidden parts take no
        room.  Items that stay put are not touched, so folding one subtree of 2047
        nodes takes a few tens of milliseconds.  During a build, the build does it."""
        if not self.complete:
            self._relayout_pending = True
            return
        order, slot, depth = self._layout(self.collapsed)
        places = self._places(order, slot, depth)
        shown = set(order)
        moved = set()
        for node in self._order:
            item = self.node_items[node]
            if node in shown:
                if self._placed.get(node) != places[node]:
                    item.setPos(*places[node])
                    self._placed[node] = places[node]
                    moved.add(node)
                item.set_hidden_count(self.hidden_count(node) if node in self.collapsed
                                      else 0)
                if not item.isVisible():
                    item.setVisible(True)
            elif item.isVisible():
                item.setVisible(False)
        for edge in self.edge_items:
            parent, child = edge.parent_node, edge.child_node
            on = parent in shown and parent not in self.collapsed
            if on and (parent in moved or child in moved):
                self._route(edge)
            if edge.isVisible() != on:
                edge.setVisible(on)
        if self.hovered_node is not None and self.hovered_node not in shown:
            self.hover_node(None)
        self._set_extent(self._extent(order, slot, depth))

    def _places(self, order: list[int], slot, depth) -> dict[int, tuple[float, float]]:
        slot_width, row_height = self._grid[0], self._grid[1]
        slots, depths = slot.tolist(), depth.tolist()
        return {n: (slots[n] * slot_width, depths[n] * row_height) for n in order}

    def _elbow(self, parent: int, child: int) -> tuple[QPainterPath, QPointF]:
        """The connector in its parent's coordinates (the edge item sits where the
        parent does, so a subtree moved as a whole only moves its edges)."""
        px, py = self._placed[parent]
        cx, cy = self._placed[child]
        return elbow(QPointF(0, self._grid[3]), QPointF(cx - px, cy - py))

    def _route(self, edge: EdgeItem) -> None:
        """Follow the parent's and child's places: a move, and a new path only when
        the child moved relative to the parent."""
        px, py = self._placed[edge.parent_node]
        cx, cy = self._placed[edge.child_node]
        if edge.offset != (cx - px, cy - py):
            edge.offset = (cx - px, cy - py)
            edge.set_path(*self._elbow(edge.parent_node, edge.child_node))
        edge.setPos(px, py)

    def _extent(self, order: list[int], slot, depth) -> QRectF:
        slot_width, row_height, box_width, box_height = self._grid
        xs = slot[order]
        left = float(xs.min()) * slot_width - box_width / 2
        right = float(xs.max()) * slot_width + box_width / 2 + STACK_OFFSET
        bottom = float(depth[order].max()) * row_height + box_height + BADGE_HEIGHT
        return QRectF(left, 0, right - left, bottom)

    # ------------------------------------------------------------------- build
    def _build_steps(self):
        tree = self.tree
        regression = tree.regression
        names = [str(c) for c in tree.class_names]
        predicted = predicted_texts(tree)
        order = self._order
        shown, slot, depth = self._layout(self.collapsed)
        is_leaf = (tree.feature < 0).tolist()
        value = self.rows.tolist()
        labels = tree.label.tolist()
        totals = tree.node_weights.tolist() if regression else [sum(row) for row in value]
        bars = mean_bars(tree) if regression else None
        root_total = totals[0]
        yield

        titles, subtitles = {}, {}
        for i, node in enumerate(order):
            total = totals[node]
            if regression:
                titles[node] = predicted[node] if is_leaf[node] else self.forks[node].text
                subtitles[node] = regression_subtitle(total, value[node][2])
            elif is_leaf[node]:
                titles[node] = predicted[node]
                subtitles[node] = leaf_subtitle(value[node][labels[node]], total)
            else:
                titles[node] = self.forks[node].text
                subtitles[node] = count_text(total)
            if i % 256 == 255:
                yield

        style = BoxStyle.measure([titles[n] for n in order if not is_leaf[n]],
                                 [titles[n] for n in order if is_leaf[n]],
                                 list(subtitles.values()))
        box_width, box_height = style.box_width, style.box_height
        self._grid = (box_width + H_GAP, box_height + V_GAP, box_width, box_height)
        # Hidden nodes wait, invisible, where their folded ancestor is drawn.
        places = self._places(shown, slot, depth)
        for node in order:
            if node not in places:
                places[node] = places[int(self.parent_of[node])]
        self._placed = places
        visible = set(shown)
        for i, node in enumerate(order):
            total = totals[node]
            fractions = bars[node] if regression else \
                [v / total for v in value[node]] if total > 0 else []
            leaf = is_leaf[node]
            title = style.fitted("leaf" if leaf else "title", titles[node])
            subtitle = style.fitted("small", subtitles[node], Qt.ElideRight)
            item = NodeItem(node, title, subtitle, fractions,
                            labels[node] if leaf else None, style,
                            partial(node_tooltip, tree, self.rows, node, names,
                                    titles[node]))
            item.setPos(*places[node])
            if node not in visible:
                item.setVisible(False)
            elif node in self.collapsed:
                item.set_hidden_count(self.hidden_count(node))
            self.addItem(item)
            self.node_items[node] = item
            if i % self.STEP_ITEMS == self.STEP_ITEMS - 1:
                yield

        count = 0
        for node in order:
            if is_leaf[node]:
                continue
            fork = self.forks[node]
            drawn = node in visible and node not in self.collapsed
            for holds, child in fork.arcs:   # yes (left), then no (right)
                weight = totals[child] / root_total if root_total > 0 else 0.0
                edge = EdgeItem(node, child, *self._elbow(node, child), fork.label(holds),
                                fork.condition(holds), style.small_font, weight,
                                self.edge_width(weight) if self.edge_width_by_rows
                                else EDGE_WIDTH)
                px, py = places[node]
                edge.setPos(px, py)
                edge.offset = (places[child][0] - px, places[child][1] - py)
                if not drawn:
                    edge.setVisible(False)
                self.addItem(edge)
                self.edge_items.append(edge)
            count += 1
            if count % (self.STEP_ITEMS // 2) == 0:
                yield

        self._add_legend(names, style, -box_width / 2, self._extent(shown, slot, depth))
        if self._relayout_pending:   # folds changed while building
            self._relayout_pending = False
            self.complete = True
            self.relayout()


def node_tooltip(tree: Tree, rows: np.ndarray, node: int, names: list[str],
                 title: str) -> str:
    """A node's tooltip (composed when first hovered; holds no reference to the scene,
    so a replaced drawing is freed at once rather than by the garbage collector): its
    rows per class, and their weights when the run weighted its classes."""
    if tree.regression:
        weight, mean, squared = (float(v) for v in tree.value[node])
        head = f"Leaf predicting {format_number(mean)}" if tree.is_leaf(node) else \
            f"Split: {title}"
        return f"{head}\n{regression_subtitle(weight, squared)}, mean {format_number(mean)}"
    if tree.is_leaf(node):
        head = f"Leaf predicting {names[tree.label[node]]}"
    else:
        head = f"Split: {title}"
    text = f"{head}\n{class_counts(rows[node], names)}"
    if rows is not tree.value:
        text += "\nWeight per class: " + ", ".join(
            f"{names[k]}: {format_count(float(v))}" for k, v in enumerate(tree.value[node]))
    return text
