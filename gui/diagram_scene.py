"""A decision diagram drawn as a QGraphicsScene, with the tree drawing's boxes,
connectors, legend, colours and fonts (`gui.tree_scene`).

The layout is a simplified layered (Sugiyama-style) drawing:

- one row per layer, top to bottom; the class terminals reached share a last row,
  one box per class;
- an arc that skips rows (a long arc, often straight into a terminal) reserves a
  narrow lane in every row it crosses, so it passes between boxes, never under one;
- row by row, each box or lane wishes to sit under the mean x of where its arcs
  come from (nudged left for an arc taken when the test holds, right otherwise);
  ordering a row by these wishes keeps crossings few, and the row is then placed as
  near to them as the spacing allows (least squares, by pool-adjacent-violators);
- arcs are smooth curves, straight down their lanes, and a gap between rows grows
  with how far the curves into the next row travel sideways, so none runs flat;
  several arcs entering one box land on spread-out points of its top, ordered by
  where they come from; a node's two arcs leave from two points of its bottom with
  their "yes" / "no" labels just below, so no label strays next to another node's.

As in a tree (`engine.export.walk.branches`), a node shows its test in positive
words (`colour = blue`, not `colour != blue`) and its "yes" arc, where the test
holds, leaves from the left of its box and its "no" arc from the right, whichever
child the diagram's arrays call left; the layout wishes the yes child to the left.

Hovering a node highlights every node and arc on some path from the root to it:
all the ways a row can arrive there, several in a DAG.  (The arcs its training
rows actually took are not recorded: a diagram keeps only each node's class
totals.)  `hover_text` spells out those paths, the first few when there are many.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from itertools import pairwise

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QPainterPath

from engine.export.walk import Branches, branches
from engine.model.diagram import Diagram
from gui.tree_scene import (
    H_GAP,
    BoxStyle,
    EdgeItem,
    ModelScene,
    NodeItem,
    class_counts,
    count_text,
    leaf_subtitle,
)

MAX_BOX_WIDTH = 340.0   # wider than a tree's: multivariate tests are long, rows narrow
V_GAP = 74.0            # least gap between rows: room for curves and their labels
MAX_V_GAP = 3 * V_GAP   # the most a gap grows for curves travelling far sideways
STEEPNESS = 0.3         # gap per unit of the widest sideways travel into a row
LANE_WIDTH = 26.0       # room a long arc takes in a row it crosses
OUT_SPREAD = 22.0       # a node's two arcs leave this far left and right of its centre
IN_STEP = 14.0          # between the ends of arcs entering the same box
LABEL_DROP = 26.0       # a label sits this far along its arc from the parent
SHOWN_PATHS = 3         # paths spelled out when hovering a node several paths reach


@dataclass(frozen=True)
class Arc:
    tail: int
    head: int
    holds: bool          # taken when the tail's test holds: its "yes", drawn left


@dataclass
class DiagramLayout:
    row: dict[int, int]       # drawn node -> row (its layer; terminals in the last row)
    x: dict[int, float]       # drawn node -> centre x
    lanes: list[list[float]]  # per arc: x of its lane in each row it crosses


def diagram_forks(diagram: Diagram) -> dict[int, Branches]:
    """How every decision node reachable from the root is drawn (`branches`), in node
    order (children always have larger ids, so this is a topological order)."""
    forks, reached = {}, {diagram.root}
    for node in range(diagram.root, diagram.n_internal):
        if node in reached:
            forks[node] = fork = branches(diagram, node)
            reached |= {fork.yes, fork.no}
    return forks


def diagram_arcs(diagram: Diagram, forks: dict[int, Branches] | None = None) -> list[Arc]:
    """Both arcs of every decision node reachable from the root, yes then no, in node
    order (`forks`: from `diagram_forks`, computed when not given)."""
    forks = diagram_forks(diagram) if forks is None else forks
    return [Arc(node, child, holds) for node, fork in forks.items()
            for holds, child in fork.arcs]


def diagram_layout(diagram: Diagram, arcs: list[Arc], node_width: float,
                   lane_width: float) -> DiagramLayout:
    """Rows and x of every drawn node, and the lanes of long arcs (see the module
    docstring); `node_width` and `lane_width` include the gaps between them."""
    drawn = {diagram.root} | {arc.head for arc in arcs}
    last = max((int(diagram.layer[n]) for n in drawn if not diagram.is_terminal(n)),
               default=-1) + 1
    row = {n: last if diagram.is_terminal(n) else int(diagram.layer[n]) for n in drawn}
    x = {diagram.root: 0.0}
    lanes: list[list[float]] = [[] for _ in arcs]
    nudge = node_width / 2
    for r in range(row[diagram.root] + 1, last + 1):
        # what wants a place in row r: a node (key = its id) or arc i's lane (key ~i),
        # and the x its arcs come from (nudged, then as they are: ties keep the
        # order of the row above)
        wishes: dict[int, list[tuple[float, float]]] = defaultdict(list)
        for i, arc in enumerate(arcs):
            if row[arc.tail] < r <= row[arc.head]:
                if row[arc.tail] == r - 1:
                    came = x[arc.tail]
                    wished = came + (-nudge if arc.holds else nudge)
                else:
                    came = wished = lanes[i][-1]
                wishes[arc.head if row[arc.head] == r else ~i].append((wished, came))
        wish = {key: tuple(sum(v) / len(v) for v in zip(*xs)) for key, xs in wishes.items()}
        order = sorted(wish, key=lambda key: (*wish[key], key))
        placed = _spread([wish[key][0] for key in order],
                         [node_width if key >= 0 else lane_width for key in order])
        for key, at in zip(order, placed):
            if key >= 0:
                x[key] = at
            else:
                lanes[~key].append(at)
    return DiagramLayout(row, x, lanes)


def _spread(wishes: list[float], widths: list[float]) -> list[float]:
    """Positions in the given order, neighbours at least their half widths apart,
    minimising the squared distances to `wishes`.

    With `offset[i]` the tightest packing, `x[i] = offset[i] + p[i]` for a
    non-decreasing `p`, so this is isotonic regression of `wishes - offset`,
    solved exactly by pooling adjacent violators.
    """
    offsets = [0.0]
    for a, b in pairwise(widths):
        offsets.append(offsets[-1] + (a + b) / 2)
    blocks: list[list[float]] = []   # [sum of targets, count] of each pooled block
    for wish, offset in zip(wishes, offsets):
        blocks.append([wish - offset, 1])
        while len(blocks) > 1 and blocks[-2][0] * blocks[-1][1] > blocks[-1][0] * blocks[-2][1]:
            total, count = blocks.pop()
            blocks[-1][0] += total
            blocks[-1][1] += count
    shifts = [total / count for total, count in blocks for _ in range(int(count))]
    return [offset + shift for offset, shift in zip(offsets, shifts)]


def _curve(path: QPainterPath, a: QPointF, b: QPointF) -> None:
    """A smooth drop from `a` (a bottom) to `b` (a top), vertical at both ends."""
    bend = QPointF(0, (b.y() - a.y()) / 2)
    path.cubicTo(a + bend, b - bend, b)


def arc_path(stops: list[QPointF]) -> tuple[QPainterPath, QPointF]:
    """The arc through `stops` (start, then the top and bottom of each lane, then the
    end) and where its label goes: just below the parent, on the first curve."""
    path = QPainterPath(stops[0])
    for a, b in zip(stops[::2], stops[1::2]):
        if path.currentPosition() != a:
            path.lineTo(a)          # straight down a lane
        _curve(path, a, b)
    first = QPainterPath(stops[0])
    _curve(first, stops[0], stops[1])
    return path, first.pointAtPercent(first.percentAtLength(LABEL_DROP))


class DiagramScene(ModelScene):
    """The drawing of one decision diagram; `node_items[k]` is node k's box (decision
    nodes, then the terminal of class c at `n_internal + c`; None where not drawn)."""

    description = "Decision diagram"

    def __init__(self, diagram: Diagram, parent=None, deferred: bool = False):
        super().__init__(diagram, diagram.n_internal + diagram.n_classes, parent)
        self.forks = diagram_forks(diagram)   # each node's test, yes and no child
        self.arcs = diagram_arcs(diagram, self.forks)
        self._into: dict[int, list[Arc]] = defaultdict(list)
        for arc in self.arcs:
            self._into[arc.head].append(arc)
        self._start(deferred)

    # ------------------------------------------------------------------ hover
    def ancestors(self, node: int) -> set[int]:
        """Every node with a path to `node`."""
        seen, stack = set(), [node]
        while stack:
            for arc in self._into[stack.pop()]:
                if arc.tail not in seen:
                    seen.add(arc.tail)
                    stack.append(arc.tail)
        return seen

    def _highlight(self, node: int) -> tuple[set[int], set[tuple[int, int]]]:
        nodes = self.ancestors(node) | {node}
        return nodes, {(a.tail, a.head) for a in self.arcs
                       if a.tail in nodes and a.head in nodes}

    def paths_to(self, node: int, limit: int) -> list[list[Arc]]:
        """At most `limit` paths from the root to `node`, as their arcs."""
        found: list[list[Arc]] = []

        def climb(at: int, below: list[Arc]) -> None:
            if len(found) >= limit:
                return
            if at == self.tree.root:
                found.append(below)
            for arc in self._into[at]:
                climb(arc.tail, [arc, *below])

        climb(node, [])
        return found

    def count_paths(self, node: int) -> int:
        """Number of paths from the root to `node` (counted, not listed)."""
        count = defaultdict(int, {self.tree.root: 1})
        for arc in self.arcs:   # tails in topological order
            count[arc.head] += count[arc.tail]
        return count[node]

    def condition(self, arc: Arc) -> str:
        """What a row satisfies to follow `arc`."""
        return self.forks[arc.tail].condition(arc.holds)

    def hover_text(self, node: int) -> str:
        texts = [" → ".join(self.condition(a) for a in path) or "root"
                 for path in self.paths_to(node, SHOWN_PATHS)]
        n = self.count_paths(node)
        text = texts[0] if n == 1 else (f"{n} paths: " + "  |  ".join(texts)
                                        + ("  |  …" if n > len(texts) else ""))
        if self.tree.is_terminal(node):
            text += f"  ⇒  {self.tree.class_names[self.tree.label(node)]}"
        return text

    # ------------------------------------------------------------------- build
    def _build_steps(self):
        diagram = self.tree
        names = [str(c) for c in diagram.class_names]
        drawn = sorted({diagram.root} | {arc.head for arc in self.arcs})
        value = diagram.value.tolist()
        titles, subtitles, tooltips = {}, {}, {}
        for node in drawn:
            total = sum(value[node])
            if diagram.is_terminal(node):
                c = diagram.label(node)
                titles[node] = names[c]
                subtitles[node] = leaf_subtitle(value[node][c], total)
                arcs_in = len(self._into[node])
                head = (f"Class terminal {names[c]}: {arcs_in} arc{'s' * (arcs_in != 1)} "
                        "end here" if arcs_in else f"Every row is predicted {names[c]}")
            else:
                titles[node] = self.forks[node].text
                subtitles[node] = count_text(total)
                head = f"Layer {int(diagram.layer[node]) + 1} test: {titles[node]}"
            tooltips[node] = f"{head}\n{class_counts(value[node], names)}"
        style = BoxStyle.measure([titles[n] for n in drawn if not diagram.is_terminal(n)],
                                 [titles[n] for n in drawn if diagram.is_terminal(n)],
                                 list(subtitles.values()), MAX_BOX_WIDTH)
        layout = diagram_layout(diagram, self.arcs, style.box_width + H_GAP, LANE_WIDTH)
        yield

        x, row = layout.x, layout.row
        starts, ends = self._ports(layout, style.box_width)
        # each arc's x at every row boundary it crosses: leaving its parent, its lanes,
        # entering its child
        tracks = [[starts[i], *layout.lanes[i], ends[i]] for i in range(len(self.arcs))]
        top = self._row_tops(tracks, row, style.box_height)
        for i, node in enumerate(drawn):
            total = sum(value[node])
            terminal = diagram.is_terminal(node)
            item = NodeItem(node, style.fitted("leaf" if terminal else "title", titles[node]),
                            style.fitted("small", subtitles[node], Qt.ElideRight),
                            [v / total for v in value[node]] if total > 0 else [],
                            diagram.label(node) if terminal else None, style,
                            tooltips[node])
            item.setPos(x[node], top[row[node]])
            self.addItem(item)
            self.node_items[node] = item
            if i % self.STEP_ITEMS == self.STEP_ITEMS - 1:
                yield

        for i, arc in enumerate(self.arcs):
            stops = [QPointF(starts[i], top[row[arc.tail]] + style.box_height)]
            for r, lane in enumerate(layout.lanes[i], start=row[arc.tail] + 1):
                stops += [QPointF(lane, top[r]), QPointF(lane, top[r] + style.box_height)]
            stops.append(QPointF(ends[i], top[row[arc.head]]))
            edge = EdgeItem(arc.tail, arc.head, *arc_path(stops),
                            self.forks[arc.tail].label(arc.holds), self.condition(arc),
                            style.small_font)
            self.addItem(edge)
            self.edge_items.append(edge)
            if i % self.STEP_ITEMS == self.STEP_ITEMS - 1:
                yield

        half = style.box_width / 2
        left, right = min(x.values()) - half, max(x.values()) + half
        bottom = top[-1] + style.box_height
        self._add_legend(names, style, x[diagram.root] - half,
                         QRectF(left, 0, right - left, bottom))

    def _row_tops(self, tracks: list[list[float]], row: dict[int, int],
                  box_height: float) -> list[float]:
        """y of each row's top: a gap grows (up to MAX_V_GAP) with the widest sideways
        travel of the curves into the row, so they do not run flat for long."""
        gaps = [V_GAP] * (max(row.values()) + 1)
        for arc, track in zip(self.arcs, tracks):
            for r, (a, b) in enumerate(pairwise(track), start=row[arc.tail] + 1):
                gaps[r] = max(gaps[r], min(abs(b - a) * STEEPNESS, MAX_V_GAP))
        tops = [0.0]
        for gap in gaps[1:]:
            tops.append(tops[-1] + box_height + gap)
        return tops

    def _ports(self, layout: DiagramLayout,
               box_width: float) -> tuple[list[float], list[float]]:
        """x where each arc leaves its parent's bottom and enters its child's top."""
        x = layout.x
        came_from = [lanes[-1] if lanes else x[arc.tail]
                     for arc, lanes in zip(self.arcs, layout.lanes)]
        goes_to = [lanes[0] if lanes else x[arc.head]
                   for arc, lanes in zip(self.arcs, layout.lanes)]
        starts, ends = [0.0] * len(self.arcs), [0.0] * len(self.arcs)
        out: dict[int, list[int]] = defaultdict(list)
        into: dict[int, list[int]] = defaultdict(list)
        for i, arc in enumerate(self.arcs):
            out[arc.tail].append(i)
            into[arc.head].append(i)
        for tail, ids in out.items():   # yes on the left, even if its child is not
            ids.sort(key=lambda i: not self.arcs[i].holds)
            for i, side in zip(ids, (-OUT_SPREAD, OUT_SPREAD)):
                starts[i] = x[tail] + side
        room = 0.7 * box_width
        for head, ids in into.items():
            ids.sort(key=lambda i: (came_from[i], i))
            step = min(IN_STEP, room / max(len(ids) - 1, 1))
            for k, i in enumerate(ids):
                ends[i] = x[head] + (k - (len(ids) - 1) / 2) * step
        return starts, ends
