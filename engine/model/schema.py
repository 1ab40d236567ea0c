"""The checks a model document passes before a Tree or Diagram is built from it.

A model file may be hand-edited, truncated, or written by a newer Orchard.  Built
blindly, a child index that points back up makes prediction loop forever, and an
index out of range or a string where a number belongs ends in a traceback.  So
`validate` checks the whole document first (types, lengths that must agree, index
ranges, a node graph that ends in leaves) and names the first problem in one
sentence; the model classes then build from a document known to be sound.
"""

from __future__ import annotations

import math

from engine.data.columns import ColumnKind
from engine.data.features import EQ, LE, MISSING, NUM
from engine.data.preprocessing import MISSING_POLICIES
from engine.errors import DataError

TREE_FORMAT, DIAGRAM_FORMAT = "orchard-tree", "orchard-diagram"
MAX_NODES = 10_000_000
KINDS = {kind.value for kind in ColumnKind}


class _Problem(Exception):
    """The first thing wrong with a document, worded for the user."""


def validate(d) -> None:
    """Raise DataError naming the first problem of model document `d`, if any."""
    try:
        _document(d)
    except _Problem as problem:
        raise DataError(f"It is not a valid Orchard model: {problem}.") from None


def _document(d) -> None:
    if not isinstance(d, dict):
        raise _Problem("the file holds no JSON object")
    kind = d.get("format")
    if not isinstance(kind, str) or kind not in (TREE_FORMAT, DIAGRAM_FORMAT):
        raise _Problem(f"its format is {kind!r}, not {TREE_FORMAT!r} or "
                       f"{DIAGRAM_FORMAT!r}")
    version = d.get("version", 0)
    if not _is_int(version) or version < 0:
        raise _Problem(f"its version is {version!r}, not a whole number")
    n_features, n_classes = _preprocessing(_field(d, "preprocessing", dict))
    nodes = _field(d, "nodes", dict)
    if kind == TREE_FORMAT:
        _tree(nodes, n_features, n_classes)
    else:
        _diagram(d, nodes, n_features, n_classes)


def _preprocessing(prep: dict) -> tuple[int, int]:
    """(number of features, number of classes) of a sound recipe."""
    if not isinstance(prep.get("target"), str):
        raise _Problem("its preprocessing names no target column")
    classes = _field(prep, "class_names", list)
    if not classes:
        raise _Problem("its preprocessing names no class")
    if not all(isinstance(name, str) for name in classes):
        raise _Problem("its class names are not all text")
    if not isinstance(prep.get("missing"), str) or prep["missing"] not in MISSING_POLICIES:
        raise _Problem(f"its missing-value policy {prep.get('missing')!r} is unknown")
    if not isinstance(prep.get("binarize"), str):
        raise _Problem("its binarisation is not named")
    numeric = {}
    for number, column in enumerate(_field(prep, "columns", list)):
        if not (isinstance(column, dict) and isinstance(column.get("name"), str)
                and isinstance(column.get("kind"), str) and column["kind"] in KINDS
                and (isinstance(column.get("fill"), str) or _is_number(column.get("fill")))):
            raise _Problem(f"input column {number} of its preprocessing is not a name, a "
                           "kind and a fill value")
        numeric[column["name"]] = not isinstance(column["fill"], str)
    features = _field(prep, "features", list)
    for number, feature in enumerate(features):
        if not _feature_ok(feature, numeric):
            raise _Problem(f"feature {number} of its preprocessing is not a test on one "
                           "of its input columns")
    return len(features), len(classes)


def _feature_ok(feature, numeric: dict[str, bool]) -> bool:
    """A feature names an input column, a known test, and a value that test can use."""
    if not isinstance(feature, dict) or not isinstance(feature.get("column"), str) \
            or feature["column"] not in numeric:
        return False
    op, value, is_number = feature.get("op"), feature.get("value"), numeric[feature["column"]]
    if not isinstance(op, str):
        return False
    if op in (NUM, MISSING):
        return value is None and (op == MISSING or is_number)
    if op == LE:
        return is_number and _is_number(value) and not math.isnan(value)
    if op == EQ:
        return (_is_number(value) and not math.isnan(value)) if is_number else \
            isinstance(value, str)
    return False


def _tree(nodes: dict, n_features: int, n_classes: int) -> None:
    feature, left, right, label = (_ints(nodes, key) for key in
                                   ("feature", "left", "right", "label"))
    threshold = _numbers(nodes, "threshold")
    value = _field(nodes, "value", list)
    n = len(feature)
    if n == 0:
        raise _Problem("the tree has no node")
    for key, array in (("threshold", threshold), ("left", left), ("right", right),
                       ("value", value), ("label", label)):
        if len(array) != n:
            raise _Problem(f"it has {n} node features but {len(array)} node {key}s")
    for node in range(n):
        _counts(value[node], n_classes, f"node {node}'s class weights")
        if not 0 <= label[node] < n_classes:
            raise _Problem(f"node {node}'s class {label[node]} is not one of the "
                           f"{n_classes} classes")
        leaf = feature[node] == -1
        if leaf != (left[node] == -1) or leaf != (right[node] == -1):
            raise _Problem(f"node {node} is neither a leaf nor a split with two children")
        if not leaf and not 0 <= feature[node] < n_features:
            raise _Problem(f"node {node} tests feature {feature[node]}, but there are "
                           f"{n_features}")
        for child in (left[node], right[node]):
            if not leaf and not 0 < child < n:
                raise _Problem(f"node {node}'s child {child} is not a node")
    _acyclic([0], lambda k: () if feature[k] == -1 else (left[k], right[k]), n, tree=True)


def _diagram(d: dict, nodes: dict, n_features: int, n_classes: int) -> None:
    layer, feature, left, right = (_ints(nodes, key) for key in
                                   ("layer", "feature", "left", "right"))
    threshold = _numbers(nodes, "threshold")
    weights = _field(nodes, "weights", list)
    m = len(layer)
    for key, array in (("feature", feature), ("threshold", threshold), ("left", left),
                       ("right", right), ("weights", weights)):
        if len(array) != m:
            raise _Problem(f"it has {m} node layers but {len(array)} node {key}s")
    value = _field(d, "value", list)
    if len(value) != m + n_classes:
        raise _Problem(f"it has {len(value)} class-weight rows, not {m + n_classes}")
    for row, counts in enumerate(value):
        _counts(counts, n_classes, f"row {row} of the class weights")
    root = d.get("root")
    if not _is_int(root) or not 0 <= root < m + n_classes:
        raise _Problem(f"its root {root!r} is not a node")
    for k in range(m):
        terms = weights[k]
        if terms is None:
            if not 0 <= feature[k] < n_features:
                raise _Problem(f"node {k} tests feature {feature[k]}, but there are "
                               f"{n_features}")
        elif not isinstance(terms, list) or not all(
                isinstance(t, list) and len(t) == 2 and _is_int(t[0])
                and 0 <= t[0] < n_features and _is_number(t[1]) and math.isfinite(t[1])
                for t in terms):
            raise _Problem(f"node {k}'s weights are not (feature, number) pairs")
        for child in (left[k], right[k]):
            if not 0 <= child < m + n_classes:
                raise _Problem(f"node {k}'s child {child} is neither a node nor a class")
    _acyclic([root], lambda k: (left[k], right[k]) if k < m else (), m + n_classes,
             tree=False)


def _acyclic(roots: list[int], children, n: int, tree: bool) -> None:
    """Every path from the roots ends (no cycle); in a tree no node has two parents."""
    state = [0] * n   # 0 unseen, 1 on the current path, 2 done
    for root in roots:
        stack = [(root, iter(children(root)))]
        state[root] = 1
        while stack:
            node, pending = stack[-1]
            child = next(pending, None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif state[child] == 1:
                raise _Problem(f"node {node}'s child {child} leads back to itself")
            elif state[child] == 2:
                if tree:
                    raise _Problem(f"node {child} has two parents")
            else:
                state[child] = 1
                stack.append((child, iter(children(child))))


def _field(d: dict, key: str, kind: type):
    if key not in d:
        raise _Problem(f"it has no '{key}'")
    if not isinstance(d[key], kind):
        raise _Problem(f"its '{key}' is not a JSON {'object' if kind is dict else 'list'}")
    return d[key]


def _ints(nodes: dict, key: str) -> list[int]:
    values = _field(nodes, key, list)
    if len(values) > MAX_NODES:
        raise _Problem(f"it has more than {MAX_NODES:,} nodes")
    if not all(_is_int(v) for v in values):
        raise _Problem(f"its node {key}s are not all whole numbers")
    return values


def _numbers(nodes: dict, key: str) -> list[float]:
    values = _field(nodes, key, list)
    if not all(_is_number(v) and not math.isnan(v) for v in values):
        raise _Problem(f"its node {key}s are not all numbers")
    return values


def _counts(counts, n_classes: int, what: str) -> None:
    if not isinstance(counts, list) or len(counts) != n_classes or not all(
            _is_number(c) and math.isfinite(c) and c >= 0 for c in counts):
        raise _Problem(f"{what} are not {n_classes} numbers of at least 0")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
