"""Editing a tree by hand: collapse a subtree into a leaf, or re-solve it optimally.

The "interactive tree" of SAS and JMP, with optimal subtrees.  Every edit returns a
new `Tree` and leaves its input alone, so the window's undo is simply the previous
tree.  An edited tree carries what was done to it (`Tree.edits`), which its JSON and
every export repeat, so nobody mistakes it for a solver's optimum.

Pruning needs no data: `Tree.value` holds the training weight of each class at every
node, so a collapsed node's error is its weight minus its majority's.  Re-solving
needs the training rows in the tree's own features (`training_matrix`), then trains
an exact solver on the rows that reach the node with the depth left under it, and
keeps the old subtree unless the new one has a smaller error: an edit by re-solving
never makes the tree worse.  The same two steps (`solve_under`, `graft`) build the
`hybrid` solver's trees: greedy subtrees under the leaves of an exact top.
"""

from __future__ import annotations

import math
from contextlib import nullcontext
from dataclasses import dataclass, replace

import numpy as np

from engine.data.dataset import Dataset
from engine.data.features import EQ, IN, LE, NUM, Feature, format_count
from engine.errors import DataError, ParameterError
from engine.model.tree import Tree
from engine.solvers.monitor import Monitor
from engine.solvers.protocol import Result, Status, leaf_penalty
from engine.solvers.warm_start import leaf_parameter, least_leaf
from engine.training import train

# Errors are sums of float weights: smaller means smaller by more than rounding.
TOLERANCE = 1e-9


# ------------------------------------------------------------------ structure
def subtree_nodes(tree: Tree, node: int) -> list[int]:
    """`node` and every node under it, parents before children."""
    out, stack = [], [node]
    while stack:
        k = stack.pop()
        out.append(k)
        if not tree.is_leaf(k):
            stack += [int(tree.right[k]), int(tree.left[k])]
    return out


def node_depth(tree: Tree, node: int) -> int:
    """How many tests lie between the root and `node`."""
    return int(tree.node_depths()[node])


def node_text(tree: Tree, node: int) -> str:
    """`node` in the words of the tree view: "the node 'age <= 37.5' under 'income >
    50'", "the root 'age <= 37.5'", "the leaf under 'income <= 50'".

    The window never shows node numbers, and one test can sit at several nodes, so a
    node is named by its test and the branch conditions that lead to it.
    """
    parent = np.full(tree.n_nodes, -1)
    for k in range(tree.n_nodes):
        if not tree.is_leaf(k):
            parent[tree.left[k]] = parent[tree.right[k]] = k
    path, child = [], node
    while parent[child] >= 0:
        up = int(parent[child])
        left, right = tree.branch_conditions(up)
        path.append(left if tree.left[up] == child else right)
        child = up
    under = f" under '{' and '.join(reversed(path))}'" if path else ""
    if tree.is_leaf(node):
        return f"the leaf{under}" if path else "the root"
    return f"{'the node' if path else 'the root'} '{tree.condition(node)}'{under}"


def _check_node(tree: Tree, node: int) -> None:
    if not 0 <= node < tree.n_nodes:
        raise ParameterError(f"The tree has no node {node} (it has {tree.n_nodes}).")


def graft(tree: Tree, subtrees: dict[int, Tree | None], note: str | None = None) -> Tree:
    """`tree` with the subtree under each node of `subtrees` replaced by the tree given
    for it (None: by a leaf, which predicts the node's class), in one pass (the nodes
    must not lie under one another).  `note` is added to the tree's edits: an edit by
    hand says what was done; a solver building its tree this way (`hybrid`) gives none.
    """
    arrays = {key: [] for key in ("feature", "threshold", "left", "right", "value",
                                  "label")}

    def add(source: Tree, k: int) -> int:
        for key, values in arrays.items():
            values.append(getattr(source, key)[k])
        return len(arrays["feature"]) - 1

    # (source tree, its node, where the new node's index goes: (parent, side) or None)
    stack: list[tuple[Tree, int, tuple[int, str] | None]] = [(tree, 0, None)]
    while stack:
        source, k, slot = stack.pop()
        collapsed = source is tree and k in subtrees and subtrees[k] is None
        if source is tree and k in subtrees and not collapsed:
            source, k = subtrees[k], 0
        new = add(source, k)
        if slot is not None:
            arrays[slot[1]][slot[0]] = new
        if collapsed:   # a leaf now
            arrays["feature"][new], arrays["left"][new], arrays["right"][new] = -1, -1, -1
            arrays["threshold"][new] = 0.0
            continue
        if not source.is_leaf(k):
            stack.append((source, int(source.right[k]), (new, "right")))
            stack.append((source, int(source.left[k]), (new, "left")))
    return Tree(np.array(arrays["feature"], dtype=np.int32),
                np.array(arrays["threshold"], dtype=np.float64),
                np.array(arrays["left"], dtype=np.int32),
                np.array(arrays["right"], dtype=np.int32),
                np.array(arrays["value"], dtype=np.float64).reshape(
                    len(arrays["feature"]), tree.value.shape[1]),
                np.array(arrays["label"], dtype=np.int32), tree.prep,
                tree.edits + ((note,) if note else ()))


def collapse(tree: Tree, node: int) -> Tree:
    """`tree` with the subtree under `node` collapsed into one leaf, which predicts
    the class the node already predicted (its majority)."""
    _check_node(tree, node)
    if tree.is_leaf(node):
        raise ParameterError(f"Nothing to collapse: {node_text(tree, node)} is already a "
                             "leaf.")
    return graft(tree, {node: None}, f"collapsed {node_text(tree, node)} into a leaf "
                 f"({tree.class_names[tree.label[node]]})")


# ------------------------------------------------------------------ figures
def training_error(tree: Tree, node: int = 0) -> float:
    """Misclassified training weight (a regression's squared error) under `node` (the
    whole tree by default), from what the tree keeps at its leaves."""
    leaves = [k for k in subtree_nodes(tree, node) if tree.is_leaf(k)]
    return float(tree.node_errors[leaves].sum())


def training_confusion(tree: Tree) -> np.ndarray:
    """The training confusion matrix (rows: true class, columns: predicted), from the
    class weights at the leaves; empty for a regression (no classes)."""
    n = len(tree.class_names)
    matrix = np.zeros((n, n))
    for k in np.flatnonzero(tree.feature < 0):
        matrix[:, tree.label[k]] += tree.value[k]
    return matrix


# ------------------------------------------------------------------ re-solving
def training_matrix(tree: Tree, data: Dataset) -> np.ndarray:
    """`data`'s rows in `tree`'s features.

    The data the window holds may be prepared differently from the tree's own
    features (`auto` binarises continuous columns for Blossom, guided by greedy), so
    each of the tree's features is found in `data` or computed: a threshold from its
    numeric column, a group of text values typed by hand from the data's test of each
    value (`group_column`).  The tree's root weights must be `data`'s class totals: otherwise these
    are not the rows it was trained on, and a re-solved subtree would mean nothing.
    """
    if tree.features == data.features:
        X = data.X
    else:
        index = {f: j for j, f in enumerate(data.features)}
        numeric = {(f.column, f.missing): j for j, f in enumerate(data.features)
                   if f.op == NUM}
        columns = []
        for f in tree.features:
            if f in index:
                columns.append(data.X[:, index[f]])
            elif f.op == LE and (f.column, f.missing) in numeric:
                columns.append(data.X[:, numeric[f.column, f.missing]] <= f.value)
            elif (group := group_column(f, data)) is not None:
                columns.append(group)
            else:
                raise DataError(f"The data as prepared now have no feature "
                                f"'{f.condition()}' that this tree tests: prepare them "
                                "as they were for this run to re-solve a subtree.")
        binary = all(f.binary for f in tree.features)
        X = np.column_stack(columns).astype(np.uint8 if binary else np.float64)
    totals = np.bincount(data.y, weights=data.w, minlength=len(tree.class_names))
    if len(data.class_names) != len(tree.class_names) or \
            not np.allclose(totals, tree.value[0], rtol=1e-9, atol=1e-9):
        raise DataError("The rows prepared now are not the rows this tree was trained "
                        "on (their class totals differ): prepare the data as they were for "
                        "this run to re-solve a subtree.")
    return X


def group_column(f: Feature, data: Dataset) -> np.ndarray | None:
    """The 0/1 column of a group of text values (`IN`) from the data's test of each of
    them ("column = value", with the same missing-cell route), or None when the data
    lack one (a column with more values than are tested one by one)."""
    if f.op != IN or f.ordered:
        return None
    index = {(g.column, g.value, g.missing): j for j, g in enumerate(data.features)
             if g.op == EQ}
    found = [index.get((f.column, v, f.missing)) for v in f.value]
    if any(j is None for j in found):
        return None
    return data.X[:, found].astype(bool).any(axis=1)


def resolve_algorithm(tree: Tree) -> str:
    """The exact solver for a subtree: Blossom on 0/1 features, ConTree on numbers."""
    return "blossom" if all(f.binary for f in tree.features) else "contree"


@dataclass
class Resolved:
    """What re-solving a subtree gave."""

    tree: Tree            # the edited tree, or the same tree when nothing better came
    node: int
    name: str             # the node in the user's words (`node_text`)
    depth: int            # the depth the subtree could use
    rows: int             # training rows reaching the node
    old_error: float      # the subtree's misclassified weight before
    new_error: float      # and after (never more without a cost per leaf)
    result: Result        # the solver's own result on the node's rows
    old_objective: float = math.nan   # with the run's cost per leaf: error + leaves' cost
    new_objective: float = math.nan
    subtree: Tree | None = None       # the new subtree (in the tree's terms) when better
    below: bool = False               # the node's split kept, its children re-solved

    @property
    def improved(self) -> bool:
        return self.new_objective < self.old_objective

    def summary(self) -> str:
        """One sentence saying what happened, for the status line and the history."""
        if self.improved:
            cost = ("" if self.new_objective == self.new_error else
                    f" (errors + cost per leaf: {format_count(self.old_objective)} to "
                    f"{format_count(self.new_objective)})")
            done = "Optimised below" if self.below else "Re-solved"
            return (f"{done} {self.name} ({self.rows:,} rows, depth {self.depth}): its "
                    f"error went from {format_count(self.old_error)} to "
                    f"{format_count(self.new_error)}{cost}.")
        what, (is_, was) = (("The subtrees below", ("are", "were")) if self.below else
                            ("The subtree of", ("is", "was")))
        stopped = self.result.status == Status.CANCELLED
        proof = (f"{is_} optimal" if self.result.optimal else
                 f"{was} not beaten before Stop" if stopped else
                 f"{was} not beaten within the time limit")
        return (f"{what} {self.name} ({self.rows:,} rows, depth {self.depth}) "
                f"{proof}: the tree is unchanged (error {format_count(self.old_error)}).")


def remaining_depth(tree: Tree, node: int, depth_limit: int | None) -> int:
    """The depth a re-solved subtree may use: the run's limit minus the node's depth,
    or, without a limit, the height of the subtree there now."""
    depths = tree.node_depths()
    if depth_limit is None:
        return max(1, int(depths[subtree_nodes(tree, node)].max() - depths[node]))
    return depth_limit - int(depths[node])


def resolve_subtree(tree: Tree, data: Dataset, node: int, depth_limit: int | None,
                    monitor: Monitor | None = None, algorithm: str | None = None,
                    params: dict | None = None) -> Resolved:
    """Re-solve the subtree under `node` optimally on the rows that reach it.

    `depth_limit` is the run's (the subtree gets what is left under the node);
    `monitor` carries Stop and the time limit; `params` are the run's (`solve_under`).
    The new subtree replaces the old one only when its error (plus its leaves' cost)
    is smaller.
    """
    _check_node(tree, node)
    depth = remaining_depth(tree, node, depth_limit)
    if depth < 1:
        name = node_text(tree, node)
        raise ParameterError(f"{name[0].upper()}{name[1:]} is at the depth limit "
                             f"({depth_limit}): no depth is left under it; raise the depth "
                             "and run again to grow it.")
    resolved = solve_under(tree, data, node, depth, monitor,
                           algorithm or resolve_algorithm(tree), params or {})
    if resolved.subtree is not None:
        resolved.tree = graft(tree, {node: resolved.subtree},
                              f"re-solved {resolved.name} (depth {depth}, error "
                              f"{format_count(resolved.old_error)} -> "
                              f"{format_count(resolved.new_error)})")
    return resolved


def optimise_below(tree: Tree, data: Dataset, node: int, depth_limit: int | None,
                   monitor: Monitor | None = None, params: dict | None = None) -> Resolved:
    """Keep `node`'s split and re-solve the subtrees under both its children
    optimally, in one edit: the step after a split made by hand ("optimise below
    here").  Each child gets the depth left under it (at least 1), the run's least
    leaf and cost per leaf, and its share of the time limit; a child's new subtree is
    kept only when it is better, so the tree never gets worse.
    """
    _check_node(tree, node)
    if tree.is_leaf(node):
        raise ParameterError(f"{node_text(tree, node)[0].upper()}{node_text(tree, node)[1:]}"
                             " is a leaf: split it first, or re-solve it to grow it.")
    algorithm, params = resolve_algorithm(tree), params or {}
    children = [int(tree.left[node]), int(tree.right[node])]
    parts, grafts = [], {}
    for i, child in enumerate(children):
        depth = max(1, remaining_depth(tree, child, depth_limit))
        with nullcontext() if monitor is None else monitor.share(1.0 / (len(children) - i)):
            part = solve_under(tree, data, child, depth, monitor, algorithm, params)
        parts.append(part)
        if part.subtree is not None:
            grafts[child] = part.subtree
    old_error = sum(p.old_error for p in parts)
    new_error = sum(p.new_error for p in parts)
    resolved = Resolved(tree, node, node_text(tree, node), max(p.depth for p in parts),
                        sum(p.rows for p in parts), old_error, new_error,
                        _joined(parts), sum(p.old_objective for p in parts),
                        sum(p.new_objective for p in parts), below=True)
    if grafts:
        resolved.tree = graft(tree, grafts, f"optimised below {resolved.name} (depth "
                              f"{resolved.depth}, error {format_count(old_error)} -> "
                              f"{format_count(new_error)})")
    return resolved


def _joined(parts: list[Resolved]) -> Result:
    """One result for several re-solved subtrees: optimal only if every one was."""
    first = parts[0].result
    return replace(first, optimal=all(p.result.optimal for p in parts),
                   status=next((p.result.status for p in parts if not p.result.optimal),
                               first.status))


def solve_under(tree: Tree, data: Dataset, node: int, depth: int, monitor: Monitor | None,
                algorithm: str, params: dict) -> Resolved:
    """`algorithm`'s tree of `depth` on the rows of `data` that reach `node`, kept (as
    `Resolved.subtree`, in `tree`'s terms) only when its error plus its leaves' cost
    is smaller than the subtree's there now; `Resolved.tree` is `tree` unchanged.

    `params` are the run's: its least leaf weight holds in the new subtree too (DL8.5
    searches when `algorithm` has none), and its cost per leaf is the same weight per
    leaf (the subtree's `leaf_cost` is that weight as a share of the node's rows).
    """
    X = training_matrix(tree, data)
    rows = tree.reaches(X, node)
    sub = Dataset(X[rows], data.y[rows], data.w[rows], tree.prep, data.report,
                  None if data.counts is None else data.counts[rows], data.class_weights)
    sub_params: dict = {"depth": depth}
    least = least_leaf(params)
    if least > 1:
        if leaf_parameter(algorithm) is None:
            algorithm = "dl85"   # (0/1 features: the exact search with a least leaf)
        sub_params[leaf_parameter(algorithm)] = int(least)
    penalty = leaf_penalty(params, data.w.sum())
    if penalty:   # (a cost of the node's whole weight or more: no split pays)
        sub_params["leaf_cost"] = min(1.0, penalty / max(float(sub.w.sum()), 1e-300))
    old_error = training_error(tree, node)
    old_objective = old_error + penalty * sum(tree.is_leaf(k)
                                              for k in subtree_nodes(tree, node))
    result = train(sub, algorithm, sub_params, monitor=monitor)
    resolved = Resolved(tree, node, node_text(tree, node), depth, int(rows.sum()),
                        old_error, old_error, result, old_objective, old_objective)
    if result.tree is not None:
        error = result.tree.error(sub.X, sub.y, sub.w)
        objective = error + penalty * result.tree.n_leaves
        if objective < old_objective - TOLERANCE * max(1.0, old_objective):
            resolved.new_error, resolved.new_objective = error, objective
            resolved.subtree = _as_subtree(result.tree, tree)
    return resolved


def _as_subtree(sub: Tree, tree: Tree) -> Tree:
    """A solver's tree on a node's rows, in the whole tree's terms (same recipe)."""
    return replace(sub, prep=tree.prep, edits=())

