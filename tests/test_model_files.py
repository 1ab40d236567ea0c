"""Model files are checked before use (engine/model/schema.py, issue 19): a broken
file gives one sentence, never a traceback or a prediction that loops forever, and
every model Orchard writes still loads."""

from __future__ import annotations

import copy
import json
import os
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine.model
from engine.data.csv_reader import parse_text, read_table
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.errors import DataError
from engine.model import Diagram, Tree, load_model, model_from_dict
from engine.training import train

from conftest import SAMPLES

LIMIT = 5.0   # seconds any one load (and prediction) may take

MIXED = "age,colour,income,class\n" + "".join(
    f"{20 + 3 * k % 40},{('red', 'green', 'blue')[k % 3]},{1000 + 137 * k % 900},"
    f"{'yes' if (k * 7) % 5 > 1 else 'no'}\n" for k in range(30))
# three classes, missing numbers and categories
MULTI = "x,y,shape,kind\n" + "".join(
    f"{'' if k % 7 == 3 else k % 11},{'' if k % 5 == 1 else (k * 13) % 17 / 4},"
    f"{('round', 'flat', '')[k % 3]},{('a', 'b', 'c')[(k // 3 + k % 2) % 3]}\n"
    for k in range(36))

# name: (table, target, binarisation, missing policy, algorithm, parameters)
MODELS = {
    "greedy": ("mixed", "class", "none", "impute", "greedy", {"depth": 3}),
    "greedy-quantile": ("multi", "kind", "quantile:4", "indicator", "greedy", {"depth": 3}),
    "greedy-leaf": ("tennis", "play", "none", "impute", "greedy", {"depth": 0}),
    "blossom": ("mixed", "class", "guided", "impute", "blossom", {"depth": 2}),
    "blossom-midpoints": ("multi", "kind", "midpoints", "drop", "blossom", {"depth": 2}),
    "dl85": ("tennis", "play", "none", "impute", "dl85", {"depth": 2}),
    "contree": ("mixed", "class", "none", "impute", "contree", {"depth": 2}),
    "contree-indicator": ("multi", "kind", "none", "indicator", "contree", {"depth": 2}),
    "sat-depth": ("tennis", "play", "none", "impute", "sat-depth", {"depth": 2}),
    "odd": ("mixed", "class", "none", "impute", "odd",
            {"depth": 2, "heuristic_time": 0.2, "milp": False}),
    "odd-shared": ("multi", "kind", "none", "indicator", "odd",
                   {"depth": 3, "skeleton": "1-2-2-2", "alpha": 0.0, "seed": 0,
                    "heuristic_time": 0.2, "milp": False}),
    "odd-milp": ("tennis", "play", "none", "impute", "odd",
                 {"depth": 2, "heuristic_time": 0.2}),
    "odd-multivariate": ("tennis", "play", "none", "impute", "odd",
                         {"depth": 2, "heuristic_time": 0.2, "split": "multivariate"}),
}


@pytest.fixture(scope="module")
def tables():
    return {"mixed": parse_text(MIXED), "multi": parse_text(MULTI),
            "tennis": read_table(SAMPLES / "play_tennis.csv")}


@pytest.fixture(scope="module")
def models(tables):
    """name -> (model as trained, its JSON document, the raw table it trained on)."""
    out = {}
    for name, (table, target, binarize, missing, algorithm, params) in MODELS.items():
        raw = tables[table]
        data = prepare(raw, PrepOptions(target=target, binarize=binarize, missing=missing,
                                        depth=params["depth"]))
        model = train(data, algorithm, params, time_limit=10).tree
        out[name] = (model, model.to_dict(), raw)
    return out


def within(seconds: float, call, *args):
    """`call(*args)` in a thread: its result or its exception, and a failure (not a
    hang) when it has not returned after `seconds`."""
    outcome = {}

    def run():
        try:
            outcome["value"] = call(*args)
        except BaseException as error:  # noqa: BLE001 (re-raised in the test's thread)
            outcome["error"] = error

    thread = threading.Thread(target=run, name="model-file-case", daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s: a hang"
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def refused(call, *args) -> str:
    """The one-sentence DataError `call(*args)` raises within the time limit."""
    with pytest.raises(DataError) as error:
        within(LIMIT, call, *args)
    message = str(error.value)
    assert message.endswith(".") and "\n" not in message and "Traceback" not in message
    return message


def same_predictions(a, b, raw) -> None:
    assert np.array_equal(a.predict_frame(raw.frame), b.predict_frame(raw.frame))


# -------------------------------------------------------------- valid files load
@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_written_model_loads_and_predicts_the_same(models, name, tmp_path):
    model, document, raw = models[name]
    path = tmp_path / "model.json"
    model.save(path)
    loaded = within(LIMIT, load_model, path)
    assert type(loaded) is type(model) and loaded.to_dict() == document
    same_predictions(loaded, model, raw)
    same_predictions(model_from_dict(json.loads(json.dumps(document))), model, raw)


def test_the_models_cover_both_kinds_shared_nodes_and_weights(models):
    """The fixture really holds what the round trip should cover."""
    kinds = {type(model) for model, _, _ in models.values()}
    assert kinds == {Tree, Diagram}
    assert models["greedy-leaf"][0].n_nodes == 1
    shared = models["odd-shared"][0]
    heads = [c for c in [*shared.left, *shared.right] if c < shared.n_internal]
    assert len(heads) > len(set(heads)), "a decision node with two parents"
    assert any(w is not None for w in models["odd-multivariate"][1]["nodes"]["weights"])


@pytest.mark.parametrize("name", ["greedy-quantile", "odd-shared", "odd-multivariate"])
def test_a_model_file_with_a_bom_predicts_like_the_original(models, name, tmp_path):
    model, document, raw = models[name]
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(document, indent=1).encode())
    same_predictions(load_model(path), model, raw)


# -------------------------------------------------------------- corrupted documents
def _at(document, path):
    for key in path:
        document = document[key]
    return document


def _set(path, value):
    return lambda d: _at(d, path[:-1]).__setitem__(path[-1], value)


def _delete(path):
    return lambda d: _at(d, path[:-1]).__delitem__(path[-1])


def _internal(d, below_root=False):
    """First split node (after the root when asked) whose left child is a split."""
    n = d["nodes"]
    return next(k for k in range(1 if below_root else 0, len(n["feature"]))
                if n["feature"][k] >= 0 and n["feature"][n["left"][k]] >= 0)


def _cycle_of_two(d):
    n = d["nodes"]
    k = _internal(d)
    n["left"][n["left"][k]] = k        # k -> child -> k


def _back_to_root(d):
    n = d["nodes"]
    k = _internal(d, below_root=True)
    n["right"][n["left"][k]] = 0


def _self_loop(d):
    k = _internal(d, below_root=True)
    d["nodes"]["left"][k] = k


def _renumber(d):
    """The same tree with nodes 1.. numbered in reverse: children before parents."""
    n = d["nodes"]
    size = len(n["feature"])
    old = [0, *range(size - 1, 0, -1)]          # new id -> old id
    new = {o: i for i, o in enumerate(old)}
    for key in ("feature", "threshold", "value", "label"):
        n[key] = [n[key][o] for o in old]
    for key in ("left", "right"):
        n[key] = [-1 if n[key][o] < 0 else new[n[key][o]] for o in old]


def _deep(depth):
    value = 0.5
    for _ in range(depth):
        value = [value]
    return value


# Applied to the `greedy-quantile` tree: 11 nodes, depth 3, three classes.
TREE_CORRUPTIONS = {
    # missing keys
    "no nodes": _delete(["nodes"]),
    "no preprocessing": _delete(["preprocessing"]),
    "no version": _delete(["version"]),
    "no feature array": _delete(["nodes", "feature"]),
    "no threshold array": _delete(["nodes", "threshold"]),
    "no value array": _delete(["nodes", "value"]),
    "no label array": _delete(["nodes", "label"]),
    "no class names": _delete(["preprocessing", "class_names"]),
    "no target": _delete(["preprocessing", "target"]),
    "column without a fill": lambda d: d["preprocessing"]["columns"][0].pop("fill"),
    "feature without an op": lambda d: d["preprocessing"]["features"][0].pop("op"),
    # wrong containers
    "nodes a list": _set(["nodes"], [1, 2]),
    "preprocessing a string": _set(["preprocessing"], "recipe"),
    "feature array an object": _set(["nodes", "feature"], {"0": 1}),
    "columns null": _set(["preprocessing", "columns"], None),
    # structure truncated: arrays out of step with each other
    "label array one short": lambda d: d["nodes"]["label"].pop(),
    "threshold array one long": lambda d: d["nodes"]["threshold"].append(0.5),
    "every array emptied": lambda d: [v.clear() for v in d["nodes"].values()],
    "value row too short": _set(["nodes", "value", 0], [1.0, 2.0]),
    "value row too long": _set(["nodes", "value", 0], [1.0, 2.0, 3.0, 4.0]),
    # out-of-range indices
    "feature out of range": _set(["nodes", "feature", 0], 999),
    "feature one past the end": lambda d: d["nodes"]["feature"].__setitem__(
        0, len(d["preprocessing"]["features"])),
    "feature negative": _set(["nodes", "feature", 0], -7),
    "left child out of range": _set(["nodes", "left", 0], 999),
    "right child negative": _set(["nodes", "right", 0], -5),
    "label out of range": _set(["nodes", "label", 1], 3),
    "label negative": _set(["nodes", "label", 1], -1),
    "huge feature index": _set(["nodes", "feature", 0], 2 ** 70),
    # a string (or another type) where a number belongs
    "feature text": _set(["nodes", "feature", 0], "age"),
    "feature true": _set(["nodes", "feature", 0], True),
    "feature 0.0": _set(["nodes", "feature", 0], 0.0),
    "child text": _set(["nodes", "left", 0], "1"),
    "label null": _set(["nodes", "label", 0], None),
    "threshold text": _set(["nodes", "threshold", 0], "2.5"),
    "threshold NaN": _set(["nodes", "threshold", 0], float("nan")),
    "threshold too large for a float": _set(["nodes", "threshold", 0], 10 ** 400),
    "class weight text": _set(["nodes", "value", 0, 0], "3"),
    "class weight negative": _set(["nodes", "value", 0, 0], -1.0),
    "class weight infinite": _set(["nodes", "value", 0, 0], float("inf")),
    "class weight false": _set(["nodes", "value", 0, 0], False),
    "version text": _set(["version"], "1"),
    "fill a list": lambda d: d["preprocessing"]["columns"][0].__setitem__("fill", [1]),
    "fill NaN": lambda d: d["preprocessing"]["columns"][0].__setitem__("fill", float("nan")),
    "feature value text on a number column": lambda d: next(
        f for f in d["preprocessing"]["features"] if f["op"] == "<=").__setitem__("value", "x"),
    "class name a number": _set(["preprocessing", "class_names", 0], 1),
    # bogus enum values
    "unknown format": _set(["format"], "orchard-forest"),
    "format a number": _set(["format"], 3),
    "version from the future": _set(["version"], 99),
    "unknown feature op": lambda d: d["preprocessing"]["features"][0].__setitem__("op", "~"),
    "unknown column kind": lambda d: d["preprocessing"]["columns"][0].__setitem__(
        "kind", "colour"),
    "unknown missing policy": _set(["preprocessing", "missing"], "ignore"),
    "unknown binarisation": _set(["preprocessing", "binarize"], "quantile:1"),
    "threshold test on a text column": lambda d: next(
        f for f in d["preprocessing"]["features"] if f["op"] == "=").__setitem__("op", "<="),
    "feature on an unknown column": lambda d: d["preprocessing"]["features"][0].__setitem__(
        "column", "nowhere"),
    "class named twice": lambda d: d["preprocessing"]["class_names"].__setitem__(
        1, d["preprocessing"]["class_names"][0]),
    "column named twice": lambda d: d["preprocessing"]["columns"].append(
        d["preprocessing"]["columns"][0]),
    # deep nesting inside a valid JSON document
    "threshold nested 500 deep": _set(["nodes", "threshold", 0], _deep(500)),
    "nodes nested 500 deep": _set(["nodes"], _deep(500)),
    # the node graph
    "child points to itself": _self_loop,
    "cycle of two nodes": _cycle_of_two,
    "cycle back to the root": _back_to_root,
    "root is its own child": _set(["nodes", "left", 0], 0),
    "two parents": lambda d: d["nodes"]["right"].__setitem__(0, d["nodes"]["left"][0]),
    "leaf with a child": lambda d: d["nodes"]["left"].__setitem__(
        d["nodes"]["feature"].index(-1), 1),
    "split without children": _set(["nodes", "left", 0], -1),
    "unreachable node": lambda d: [d["nodes"][key].append(d["nodes"][key][-1]) for key in
                                   ("feature", "threshold", "left", "right", "value",
                                    "label")],
    "children before their parent": _renumber,
}


@pytest.mark.parametrize("name", sorted(TREE_CORRUPTIONS))
def test_a_corrupted_tree_file_is_refused_in_one_sentence(models, name, tmp_path):
    document = copy.deepcopy(models["greedy-quantile"][1])
    TREE_CORRUPTIONS[name](document)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(document))
    message = refused(load_model, path)
    assert message.startswith(f"The model file '{path}' ")


def test_the_message_says_what_is_wrong(models, tmp_path):
    document = copy.deepcopy(models["greedy-quantile"][1])
    _self_loop(document)
    k = _internal(models["greedy-quantile"][1], below_root=True)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(document))
    assert refused(load_model, path) == (
        f"The model file '{path}' is not a valid Orchard model: node {k}'s left child "
        f"{k} points back to itself.")
    _cycle_of_two(document := copy.deepcopy(models["greedy-quantile"][1]))
    assert "points back to an ancestor" in refused(model_from_dict, document)
    document = copy.deepcopy(models["greedy-quantile"][1])
    document["nodes"]["threshold"][2] = "2.5"
    assert refused(model_from_dict, document) == (
        "The model document is not a valid Orchard model: 'nodes.threshold[2]' is '2.5', "
        "not a number.")
    document["version"] = 7
    assert "newer Orchard" in refused(model_from_dict, document)


def _diagram_child(d, internal: bool):
    """(node, side) of the first arc into a decision node (or a terminal)."""
    n, m = d["nodes"], len(d["nodes"]["layer"])
    return next((k, side) for k in range(m) for side in ("left", "right")
                if (n[side][k] < m) == internal)


def _diagram_cycle(d):
    k, side = _diagram_child(d, internal=True)
    child = d["nodes"][side][k]
    d["nodes"]["left"][child] = k


# Applied to the `odd-shared` diagram (7 nodes in 4 layers, shared children) or,
# for the weights, the `odd-multivariate` one.
DIAGRAM_CORRUPTIONS = {
    "no root": _delete(["root"]),
    "root out of range": _set(["root"], 10_000),
    "root negative": _set(["root"], -1),
    "root text": _set(["root"], "0"),
    "root true": _set(["root"], True),
    "no layers": _delete(["nodes", "layer"]),
    "no value": _delete(["value"]),
    "no weights": _delete(["nodes", "weights"]),
    "child out of range": _set(["nodes", "left", 0], 10_000),
    "child past the last class terminal": lambda d: d["nodes"]["right"].__setitem__(
        0, len(d["nodes"]["layer"]) + len(d["preprocessing"]["class_names"])),
    "child points to itself": _set(["nodes", "left", 0], 0),
    "cycle of two nodes": _diagram_cycle,
    "a child in an earlier layer": lambda d: d["nodes"]["left"].__setitem__(
        len(d["nodes"]["layer"]) - 1, 1),
    "a child in the same layer": lambda d: d["nodes"]["left"].__setitem__(1, 2),
    "layers decrease": lambda d: d["nodes"]["layer"].__setitem__(
        len(d["nodes"]["layer"]) - 1, 0),
    "layer negative": _set(["nodes", "layer", 0], -1),
    "layer huge": lambda d: d["nodes"]["layer"].__setitem__(
        len(d["nodes"]["layer"]) - 1, 2 ** 40),
    "feature out of range": _set(["nodes", "feature", 0], 999),
    "feature -1 without weights": _set(["nodes", "feature", 0], -1),
    "too few value rows": lambda d: d["value"].pop(),
    "value row of text": _set(["value", 0], "abc"),
    "layer array one short": lambda d: d["nodes"]["layer"].pop(),
    "threshold null": _set(["nodes", "threshold", 0], None),
    "weights on a univariate node": _set(["nodes", "weights", 0], [[0, 1.0]]),
}
WEIGHT_CORRUPTIONS = {
    "weights not pairs": _set(["nodes", "weights", 0], [[1]]),
    "weights a number": _set(["nodes", "weights", 0], 3),
    "weight on a feature out of range": _set(["nodes", "weights", 0], [[999, 1.0]]),
    "weight on a negative feature": _set(["nodes", "weights", 0], [[-1, 1.0]]),
    "weight text": _set(["nodes", "weights", 0], [[0, "1"]]),
    "weight infinite": _set(["nodes", "weights", 0], [[0, float("inf")]]),
    "feature weighed twice": _set(["nodes", "weights", 0], [[0, 1.0], [0, 2.0]]),
    "weights and a feature": _set(["nodes", "feature", 0], 0),
    "weights nested deep": _set(["nodes", "weights", 0], [_deep(300)]),
}


@pytest.mark.parametrize("name", sorted(DIAGRAM_CORRUPTIONS) + sorted(WEIGHT_CORRUPTIONS))
def test_a_corrupted_diagram_is_refused_in_one_sentence(models, name):
    base = "odd-multivariate" if name in WEIGHT_CORRUPTIONS else "odd-shared"
    document = copy.deepcopy(models[base][1])
    assert document["nodes"]["layer"], "the fixture needs a decision node"
    {**DIAGRAM_CORRUPTIONS, **WEIGHT_CORRUPTIONS}[name](document)
    assert refused(model_from_dict, document).startswith("The model document ")


# -------------------------------------------------------------- files that are not models
VALID = b'{"format": "orchard-tree", "version": 1}'
FILE_CONTENTS = {
    "empty": b"",
    "blank lines": b"\n \n",
    "only a BOM": b"\xef\xbb\xbf",
    "open brace": b"{",
    "truncated document": VALID[:25],
    "a list": b"[1]",
    "null": b"null",
    "a number": b"42",
    "an object without a format": b"{}",
    "a format but nothing else": VALID,
    "format not text": b'{"format": 3}',
    "utf-16": '{"format": "orchard-tree"}'.encode("utf-16"),
    "latin-1 text": '{"format": "orchard-tree", "x": "caf\xe9"}'.encode("latin-1"),
    "binary": bytes(range(256)),
    "deeply nested arrays": b"[" * 200_000 + b"]" * 200_000,
    "deeply nested objects": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    "an integer of 5000 digits": b'{"format": "orchard-tree", "version": ' + b"1" * 5000
                                 + b"}",
    "NaN literal": b"NaN",
}


@pytest.mark.parametrize("name", sorted(FILE_CONTENTS))
def test_a_file_that_is_no_model_is_refused_in_one_sentence(name, tmp_path):
    path = tmp_path / "m.json"
    path.write_bytes(FILE_CONTENTS[name])
    assert refused(load_model, path).startswith(f"The model file '{path}' ")


def test_a_truncated_model_file_is_refused(models, tmp_path):
    text = json.dumps(models["odd-shared"][1])
    path = tmp_path / "m.json"
    for cut in (len(text) // 3, len(text) // 2, len(text) - 1):
        path.write_text(text[:cut])
        assert "is not valid JSON (line 1, column" in refused(load_model, path)


def test_missing_folders_pipes_and_huge_files_are_refused(tmp_path, monkeypatch):
    assert "does not exist" in refused(load_model, tmp_path / "absent.json")
    assert "is a folder" in refused(load_model, tmp_path)
    pipe = tmp_path / "pipe.json"
    os.mkfifo(pipe)   # opening it would wait for a writer: refused before that
    assert "not a regular file" in refused(load_model, pipe)
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 2048)
    monkeypatch.setattr(engine.model, "MAX_MODEL_BYTES", 1024)
    assert "too large" in refused(load_model, big)


# -------------------------------------------------------------- fuzzing
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 40) | st.integers()
    | st.floats() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4),
                                                                inner, max_size=3),
    max_leaves=6)


def _places(value, prefix=()):
    """Paths of every value inside a document (the document itself excluded)."""
    stack = [(value, prefix)]
    while stack:
        value, prefix = stack.pop()
        if prefix:
            yield prefix
        items = value.items() if isinstance(value, dict) else \
            enumerate(value) if isinstance(value, list) else ()
        stack.extend((inner, (*prefix, key)) for key, inner in items)


@st.composite
def mutated(draw, documents):
    """(name, document): the valid model document `name` with 1 to 4 places changed:
    a value replaced by any JSON value, an index moved, a key or element deleted, an
    array cut or extended, a value nested in a list or an object."""
    name = draw(st.sampled_from(sorted(documents)))
    document = copy.deepcopy(documents[name])
    for _ in range(draw(st.integers(1, 4))):
        places = sorted(_places(document), key=repr)
        graph = [p for p in places if p[0] in ("nodes", "root")]   # most often
        path = draw(st.sampled_from(graph if graph and draw(st.integers(0, 3)) else places))
        parent, key = _at(document, path[:-1]), path[-1]
        value = parent[key]
        how = draw(st.sampled_from(["index", "index", "replace", "delete", "resize",
                                    "nest"]))
        if how == "replace":
            parent[key] = draw(JSON_VALUES)
        elif how == "index":
            parent[key] = draw(st.integers(-2, 20))
        elif how == "delete":
            del parent[key]
        elif how == "resize" and isinstance(value, list):
            if value and draw(st.booleans()):
                del value[draw(st.integers(0, len(value) - 1)):]
            else:
                value.extend(draw(st.lists(st.sampled_from(value) if value else JSON_VALUES,
                                           min_size=1, max_size=3)))
        else:
            parent[key] = [value] if draw(st.booleans()) else {"value": value}
    return name, document


def _use(document, raw) -> None:
    """Load a document and use the model the way the CLI and the GUI do."""
    try:
        model = model_from_dict(document)
    except DataError:
        return
    n_classes = len(model.class_names)
    try:
        predicted = model.predict_frame(raw.frame)
    except DataError:   # e.g. a renamed input column the table lacks
        return
    assert ((0 <= predicted) & (predicted < n_classes)).all(), "a class that is none"
    assert model.depth >= 0 and model.n_leaves >= 1
    if isinstance(model, Diagram):
        assert sum(map(len, model.layers)) == model.n_internal


FUZZED = ("greedy-quantile", "contree-indicator", "dl85", "odd-shared", "odd-multivariate")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_model_documents_load_and_predict_or_are_refused(models, data):
    """model_from_dict either refuses a mutated document with DataError or returns a
    model that predicts real classes on its training rows in bounded time."""
    name, document = data.draw(mutated({name: models[name][1] for name in FUZZED}))
    within(LIMIT, _use, document, models[name][2])
