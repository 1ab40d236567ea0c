"""The checks a model document passes before a Tree or Diagram is built from it.

A model file may be hand-edited, truncated, or written by a newer Orchard.  Built
blindly, a child index that points back up makes prediction loop forever, and an
index out of range or a string where a number belongs ends in a traceback.  So
`validate` checks the whole document first and names the first problem in one
sentence; `Tree.from_dict` and `Diagram.from_dict` then build from a document known
to be sound, without checks of their own.

What a sound document is (what `to_dict` of tree.py, diagram.py, preprocessing.py
and features.py writes):

- `format` is `orchard-tree` or `orchard-diagram`, `version` a whole number no
  newer than this Orchard's;
- the preprocessing recipe: a `target` name, a `task` (classification when absent,
  as files before regression trees have it), distinct class names (at least one;
  none for a regression),
  a known missing-value policy and binarisation, input columns with distinct names,
  a known kind and a fill (text, or a number for a numeric column), and features
  that each test one of those columns with a known operator and a value that
  operator can use on that column;
- the node arrays have one length; indices are whole numbers (never true/false) in
  range: features below the recipe's feature count, children among the nodes
  (diagrams: or the class terminals `m + c`), labels among the classes; thresholds
  are numbers (infinity allowed, NaN not); class weights are rows of `n_classes`
  finite numbers of at least 0 (a regression's rows are a weight and a squared
  error of at least 0 around a finite mean, and its labels are 0);
- the node graph from the root has no cycle, so every path ends in a leaf or a
  class terminal.  A tree is a tree (every node reached from node 0 exactly once)
  with children after their parent, as `Tree.depth` and the drawing assume; a
  diagram is a layered DAG whose shared children are legal, layers start at 0 and
  never decrease, and every arc goes to a later layer (so to a larger id, the order
  `Diagram.walk` visits nodes in).

Everything here is a loop, never recursion, so a document of any shape is checked
in bounded stack; JSON nested too deeply to parse is refused by `load_model`.
Plain Python rather than a JSON Schema library: the structural part is a few dozen
lines, while the library's `integer` admits 1.0, its `number` NaN and integers too
large for a float, its errors would need rewording into the user's sentence anyway,
and checking every element of a node array through it is about 70 times slower
(30 s against 0.4 s for the arrays of a million-node tree).
"""

from __future__ import annotations

import math
import sys

from engine.data.columns import ColumnKind
from engine.data.features import EQ, IN, LE, MISSING, NUM
from engine.data.preprocessing import Binarization
from engine.errors import DataError
from engine.model import diagram, tree
from engine.vocabulary import CLASSIFICATION, MISSING_POLICIES, REGRESSION, TASKS

FORMATS = {tree.FORMAT: tree.FORMAT_VERSION, diagram.FORMAT: diagram.FORMAT_VERSION}
MAX_NODES = 10_000_000
# A diagram's weights are held as a dense (nodes x features) matrix.
MAX_DIAGRAM_WEIGHTS = 50_000_000
KINDS = [kind.value for kind in ColumnKind]
OPS = (LE, EQ, IN, MISSING, NUM)


class _Problem(Exception):
    """The first thing wrong with a document, worded for the user."""


def validate(d, source: str = "The model document") -> None:
    """Raise DataError naming `source` and the first problem of model document `d`.

    `source` starts the sentence: "The model file 'm.json'" when read from a file.
    """
    if not isinstance(d, dict) or not isinstance(d.get("format"), str) \
            or d["format"] not in FORMATS:
        found = f" (its format is {_show(d['format'])})" if isinstance(d, dict) \
            and "format" in d else ""
        raise DataError(f"{source} is not an Orchard tree or decision diagram{found}.")
    if "version" not in d:
        raise DataError(f"{source} is not a valid Orchard model: it has no 'version'.")
    version = d["version"]
    if not _is_int(version) or version < 0:
        raise DataError(f"{source} is not a valid Orchard model: its version {_show(version)} "
                        "is not a whole number.")
    if version > FORMATS[d["format"]]:
        raise DataError(f"{source} was saved by a newer Orchard (format version "
                        f"{version}); please upgrade.")
    try:
        n_features, n_classes = _preprocessing(_get(d, "preprocessing", dict))
        nodes = _get(d, "nodes", dict)
        if d["format"] == tree.FORMAT:
            _tree(nodes, n_features, n_classes)
            _edits(d)
        elif n_classes == 0:
            raise _Problem("a decision diagram predicts classes, but its recipe is a "
                           "regression's")
        else:
            _diagram(d, nodes, n_features, n_classes)
    except _Problem as problem:
        raise DataError(f"{source} is not a valid Orchard model: {problem}.") from None


# ------------------------------------------------------------------ the recipe
def _preprocessing(prep: dict) -> tuple[int, int]:
    """(number of features, number of classes) of a sound recipe; 0 classes for a
    regression."""
    _get(prep, "target", str, "preprocessing.")
    regression = _choice({"task": CLASSIFICATION, **prep}, "task", TASKS,
                         "preprocessing") == REGRESSION
    classes = _get(prep, "class_names", list, "preprocessing.")
    if regression and classes:
        raise _Problem("'preprocessing.class_names' names classes, but the task is "
                       "regression")
    if not classes and not regression:
        raise _Problem("'preprocessing.class_names' is empty")
    _each(classes, "preprocessing.class_names", lambda v: isinstance(v, str), "text")
    _distinct(classes, "preprocessing.class_names", "class")
    _choice(prep, "missing", MISSING_POLICIES)
    binarize = _get(prep, "binarize", str, "preprocessing.")
    try:
        Binarization.parse(binarize)
    except DataError:
        raise _Problem(f"'preprocessing.binarize' is {_show(binarize)}, not none, midpoints, "
                       "quantile:K or guided[:K]") from None
    numeric: dict[str, bool] = {}
    columns = _get(prep, "columns", list, "preprocessing.")
    for i, column in enumerate(columns):
        where = f"preprocessing.columns[{i}]"
        if not isinstance(column, dict):
            raise _Problem(f"'{where}' is not a JSON object")
        name = _get(column, "name", str, where + ".")
        if name in numeric:
            raise _Problem(f"'preprocessing.columns' names column {_show(name)} twice")
        _choice(column, "kind", KINDS, where)
        if "fill" not in column:
            raise _Problem(f"'{where}' has no 'fill'")
        fill = column["fill"]
        if not isinstance(fill, str) and not _is_real(fill):
            raise _Problem(f"'{where}.fill' is {_show(fill)}, not text or a number")
        numeric[name] = not isinstance(fill, str)
    features = _get(prep, "features", list, "preprocessing.")
    for i, feature in enumerate(features):
        _feature(feature, f"preprocessing.features[{i}]", numeric)
    return len(features), len(classes)


def _feature(feature, where: str, numeric: dict[str, bool]) -> None:
    """A feature names an input column, a known test, and a value that test can use."""
    if not isinstance(feature, dict):
        raise _Problem(f"'{where}' is not a JSON object")
    column = _get(feature, "column", str, where + ".")
    if column not in numeric:
        raise _Problem(f"'{where}' tests column {_show(column)}, which is not one of the "
                       "input columns")
    op = _choice(feature, "op", OPS, where)
    value = feature.get("value")
    route = feature.get("missing")
    if route is not None and (not isinstance(route, bool) or op == MISSING):
        raise _Problem(f"'{where}.missing' is {_show(route)}, not true, false or null"
                       + (" (a missing test has no route)" if op == MISSING else ""))
    if op in (NUM, LE) and not numeric[column]:
        raise _Problem(f"'{where}' compares column {_show(column)} with a number, but the "
                       "column holds text")
    if op == IN and numeric[column]:
        raise _Problem(f"'{where}' tests a group of text values on column {_show(column)}, "
                       "which holds numbers")
    ordered = feature.get("ordered", False)
    if not isinstance(ordered, bool) or (ordered and op != IN):
        raise _Problem(f"'{where}.ordered' is {_show(ordered)}: only a group of levels "
                       "(op 'in') may be ordered, with true or false")
    if op == MISSING or (op == NUM and route is None):
        fits, wanted = value is None, "null"
    elif op == IN:
        fits = isinstance(value, list) and len(value) > 0 and \
            all(isinstance(v, str) for v in value)
        wanted = "a non-empty list of texts"
    elif op in (LE, NUM) or numeric[column]:
        fits, wanted = _is_real(value), "a number"
    else:
        fits, wanted = isinstance(value, str), "text"
    if not fits:
        raise _Problem(f"'{where}.value' is {_show(value)}, not {wanted}")


# ------------------------------------------------------------------ trees
def _tree(nodes: dict, n_features: int, n_classes: int) -> None:
    feature, left, right, label = (_ints(nodes, key) for key in
                                   ("feature", "left", "right", "label"))
    _reals(nodes, "threshold")
    value = _get(nodes, "value", list, "nodes.")
    n = len(feature)
    if n == 0:
        raise _Problem("'nodes.feature' is empty: a tree has at least one node")
    _same_length(n, "nodes.feature", nodes, ("threshold", "left", "right", "value",
                                             "label"))
    for k in range(n):
        if feature[k] == -1:
            if left[k] != -1 or right[k] != -1:
                raise _Problem(f"node {k} is a leaf (feature -1) but has children "
                               f"{_show(left[k])} and {_show(right[k])}")
        else:
            _index(feature[k], n_features, f"node {k}'s feature", "features")
            for side, child in (("left", left[k]), ("right", right[k])):
                if not 0 <= child < n:
                    raise _Problem(f"node {k}'s {side} child {_show(child)} is not one of the "
                                   f"{n} nodes")
        if n_classes == 0:
            _regression_value(value[k], label[k], f"'nodes.value[{k}]'")
            continue
        _index(label[k], n_classes, f"node {k}'s class", "classes")
        _weights(value[k], n_classes, f"'nodes.value[{k}]'")

    def children(k):
        return () if feature[k] == -1 else (("left", left[k]), ("right", right[k]))

    parent = _graph(0, children, n, shared=False)
    for k in range(n):
        if parent[k] is None:
            raise _Problem(f"node {k} cannot be reached from the root (node 0)")
        for side, child in children(k):
            if child < k:
                raise _Problem(f"node {k}'s {side} child {child} comes before it (children "
                               "come after their parent)")


def _edits(d: dict) -> None:
    """A tree edited by hand lists its edits as text (optional)."""
    edits = d.get("edits", [])
    if not isinstance(edits, list) or not all(isinstance(e, str) for e in edits):
        raise _Problem("'edits' is not a list of texts")


# ------------------------------------------------------------------ diagrams
def _diagram(d: dict, nodes: dict, n_features: int, n_classes: int) -> None:
    layer, feature, left, right = (_ints(nodes, key) for key in
                                   ("layer", "feature", "left", "right"))
    _reals(nodes, "threshold")
    weights = _get(nodes, "weights", list, "nodes.")
    m, n = len(layer), len(layer) + n_classes
    _same_length(m, "nodes.layer", nodes, ("feature", "weights", "threshold", "left",
                                           "right"))
    if m * n_features > MAX_DIAGRAM_WEIGHTS:
        raise _Problem(f"it is too large ({m:,} decision nodes over {n_features:,} "
                       "features)")
    value = _get(d, "value", list)
    if len(value) != n:
        raise _Problem(f"'value' has {len(value)} rows, not one per decision node and "
                       f"class ({m} + {n_classes})")
    for row, counts in enumerate(value):
        _weights(counts, n_classes, f"'value[{row}]'")
    if "root" not in d:
        raise _Problem("it has no 'root'")
    root = d["root"]
    if not _is_int(root) or not 0 <= root < n:
        raise _Problem(f"its root {_show(root)} is neither a decision node (0 to {m - 1}) "
                       f"nor a class terminal ({m} to {n - 1})")
    for k in range(m):
        if not 0 <= layer[k] <= k or (k and layer[k] < layer[k - 1]):
            raise _Problem(f"node {k}'s layer {_show(layer[k])} is out of order (layers start "
                           "at 0, number the nodes layer by layer and skip none)")
        terms = weights[k]
        if terms is None:
            if feature[k] == -1:
                raise _Problem(f"node {k} has neither a feature (-1) nor weights")
            _index(feature[k], n_features, f"node {k}'s feature", "features")
        elif feature[k] != -1:
            raise _Problem(f"node {k} has both a feature ({_show(feature[k])}) and weights")
        else:
            _terms(terms, k, n_features)
        for side, child in (("left", left[k]), ("right", right[k])):
            if not 0 <= child < n:
                raise _Problem(f"node {k}'s {side} child {_show(child)} is neither a decision "
                               f"node (0 to {m - 1}) nor a class terminal ({m} to {n - 1})")

    def children(k):
        return (("left", left[k]), ("right", right[k])) if k < m else ()

    _graph(root, children, n, shared=True)
    for k in range(m):
        for side, child in children(k):
            if child < m and layer[child] <= layer[k]:
                raise _Problem(f"node {k}'s {side} child {child} is not in a later layer")


def _terms(terms, k: int, n_features: int) -> None:
    """The (feature, weight) pairs of a multivariate test."""
    where = f"'nodes.weights[{k}]'"
    if not isinstance(terms, list) or len(terms) > n_features:
        raise _Problem(f"{where} is not a list of at most {n_features} [feature, weight] "
                       "pairs")
    seen = set()
    for term in terms:
        if not (isinstance(term, list) and len(term) == 2 and _is_int(term[0])
                and _is_finite(term[1])):
            raise _Problem(f"{where} holds {_show(term)}, not a [feature, weight] pair "
                           "of a whole number and a finite number")
        _index(term[0], n_features, f"node {k}'s weight on feature", "features")
        if term[0] in seen:
            raise _Problem(f"{where} weighs feature {term[0]} twice")
        seen.add(term[0])


# ------------------------------------------------------------------ the graph
def _graph(root: int, children, n: int, shared: bool) -> list:
    """Walk from `root` (depth first, with a stack): refuse a child that leads back
    up (a cycle), and when `shared` is false a child with two parents.  Returns each
    node's parent (-1 for the root, None where never reached)."""
    parent: list = [None] * n
    parent[root] = -1
    on_path = [False] * n
    on_path[root] = True
    stack = [(root, iter(children(root)))]
    while stack:
        node, pending = stack[-1]
        step = next(pending, None)
        if step is None:
            on_path[node] = False
            stack.pop()
            continue
        side, child = step
        if on_path[child]:
            back = "itself" if child == node else "an ancestor"
            raise _Problem(f"node {node}'s {side} child {child} points back to {back}")
        if parent[child] is not None:
            if not shared and parent[child] == node:
                raise _Problem(f"node {node}'s two children are both node {child}")
            if not shared:
                raise _Problem(f"node {child} has two parents (nodes {parent[child]} and "
                               f"{node})")
            continue   # a shared child of a diagram, already checked below it
        parent[child] = node
        on_path[child] = True
        stack.append((child, iter(children(child))))
    return parent


# ------------------------------------------------------------------ pieces
def _get(d: dict, key: str, kind: type, where: str = ""):
    """`d[key]`, which must be there and of `kind` (dict, list or str)."""
    if key not in d:
        raise _Problem(f"'{where[:-1]}' has no '{key}'" if where else f"it has no '{key}'")
    value = d[key]
    if not isinstance(value, kind):
        name = {dict: "a JSON object", list: "a list", str: "text"}[kind]
        raise _Problem(f"'{where}{key}' is {_show(value)}, not {name}")
    return value


def _choice(d: dict, key: str, allowed, where: str = "preprocessing") -> str:
    value = _get(d, key, str, where + ".")
    if value not in allowed:
        raise _Problem(f"'{where}.{key}' is {_show(value)}, not one of {', '.join(allowed)}")
    return value


def _ints(nodes: dict, key: str) -> list[int]:
    values = _get(nodes, key, list, "nodes.")
    if len(values) > MAX_NODES:
        raise _Problem(f"'nodes.{key}' has more than {MAX_NODES:,} nodes")
    _each(values, f"nodes.{key}", _is_int, "a whole number")
    return values


def _reals(nodes: dict, key: str) -> list:
    values = _get(nodes, key, list, "nodes.")
    _each(values, f"nodes.{key}", _is_real, "a number")
    return values


def _each(values: list, where: str, ok, wanted: str) -> None:
    if not all(map(ok, values)):
        i = next(i for i, v in enumerate(values) if not ok(v))
        raise _Problem(f"'{where}[{i}]' is {_show(values[i])}, not {wanted}")


def _same_length(n: int, first: str, nodes: dict, keys) -> None:
    for key in keys:
        if len(nodes[key]) != n:
            raise _Problem(f"'{first}' has {n} entries but 'nodes.{key}' has "
                           f"{len(nodes[key])}: the node arrays must have one length")


def _distinct(values: list, where: str, what: str) -> None:
    if len(set(values)) != len(values):
        seen = set()
        twice = next(v for v in values if v in seen or seen.add(v))
        raise _Problem(f"'{where}' names {what} {_show(twice)} twice")


def _index(value: int, count: int, what: str, things: str) -> None:
    if not 0 <= value < count:
        raise _Problem(f"{what} {_show(value)} is not one of the {count} {things}"
                       + (f" (0 to {count - 1})" if count else ""))


def _weights(counts, n_classes: int, where: str) -> None:
    if not isinstance(counts, list) or len(counts) != n_classes or not all(
            _is_finite(c) and c >= 0 for c in counts):
        raise _Problem(f"{where} is not a list of {n_classes} class weights (finite "
                       "numbers of at least 0)")


def _regression_value(value, label: int, where: str) -> None:
    if not isinstance(value, list) or len(value) != 3 or not all(map(_is_finite, value)) \
            or value[0] < 0 or value[2] < 0:
        raise _Problem(f"{where} is not a regression node's [weight, mean, squared error] "
                       "(finite numbers, the weight and the error at least 0)")
    if label != 0:
        raise _Problem(f"{where[:-1]}'s label is {_show(label)}: a regression node's is 0")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_real(value) -> bool:
    """A number numpy can hold as a float64: not true/false, not NaN, not an integer
    too large for a float (infinity is allowed: thresholds and fills may be)."""
    if isinstance(value, float):
        return not math.isnan(value)
    return _is_int(value) and abs(value) <= sys.float_info.max


def _is_finite(value) -> bool:
    return _is_real(value) and math.isfinite(value)


def _show(value) -> str:
    """A short description of a JSON value for a message."""
    if isinstance(value, dict):
        return "a JSON object"
    if isinstance(value, list):
        if len(value) > 4 or any(isinstance(v, list | dict) for v in value):
            return "a list"
        text = f"[{', '.join(map(_show, value))}]"
        return text if len(text) <= 40 else "a list"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if _is_int(value) and abs(value) >= 10 ** 30:
        return "a number of more than 30 digits"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
