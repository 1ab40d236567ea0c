"""Model files are checked before use (engine/model/schema.py, issue 19): a broken
file gives one sentence, never a traceback or a prediction that loops forever."""

from __future__ import annotations

import copy
import faulthandler
import json
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.data.csv_reader import parse_text
from engine.data.dataset import PrepOptions, prepare
from engine.errors import DataError
from engine.model import load_model, model_from_dict
from engine.training import train

TABLE = "age,colour,income,class\n" + "".join(
    f"{20 + 3 * k % 40},{('red', 'green', 'blue')[k % 3]},{1000 + 137 * k % 900},"
    f"{'yes' if (k * 7) % 5 > 1 else 'no'}\n" for k in range(30))


@pytest.fixture(scope="module")
def raw():
    return parse_text(TABLE)


@pytest.fixture(scope="module")
def documents(raw):
    """A tree of each exact family and greedy, and a decision diagram, as JSON dicts."""
    out = {}
    for algorithm, binarize in (("greedy", "none"), ("blossom", "guided"),
                                ("dl85", "guided"), ("contree", "none"), ("odd", "none")):
        data = prepare(raw, PrepOptions(binarize=binarize, depth=2))
        params = {"depth": 2} if algorithm != "odd" else {"depth": 2, "heuristic_time": 1}
        out[algorithm] = train(data, algorithm, params).tree.to_dict()
    return out


def test_every_written_model_loads_and_predicts_the_same(documents, raw, tmp_path):
    for name, document in documents.items():
        original = model_from_dict(document)
        path = tmp_path / f"{name}.json"
        path.write_bytes(b"\xef\xbb\xbf" + json.dumps(document).encode())   # with a BOM
        loaded = load_model(path)
        assert (loaded.predict_frame(raw.frame) == original.predict_frame(raw.frame)).all()


def _set(path, value):
    def change(d):
        target = d
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


def _delete(path):
    def change(d):
        target = d
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return change


TREE_CORRUPTIONS = {
    "no nodes": _delete(["nodes"]),
    "no preprocessing": _delete(["preprocessing"]),
    "no feature array": _delete(["nodes", "feature"]),
    "no value array": _delete(["nodes", "value"]),
    "nodes not an object": _set(["nodes"], [1, 2]),
    "feature out of range": _set(["nodes", "feature", 0], 999),
    "feature negative": _set(["nodes", "feature", 0], -7),
    "feature text": _set(["nodes", "feature", 0], "age"),
    "feature bool": _set(["nodes", "feature", 0], True),
    "feature float": _set(["nodes", "feature", 0], 0.5),
    "child out of range": _set(["nodes", "left", 0], 999),
    "child is the root": _set(["nodes", "left", 0], 0),
    "child points to itself": lambda d: d["nodes"]["right"].__setitem__(
        d["nodes"]["right"][0], d["nodes"]["right"][0]),
    "label out of range": _set(["nodes", "label", 1], 5),
    "label text": _set(["nodes", "label", 1], "yes"),
    "threshold nan text": _set(["nodes", "threshold", 0], "NaN"),
    "threshold null": _set(["nodes", "threshold", 0], None),
    "value row too short": _set(["nodes", "value", 0], [1.0]),
    "value negative": _set(["nodes", "value", 0], [-1.0, 2.0]),
    "value text": _set(["nodes", "value", 0], ["a", "b"]),
    "arrays of different lengths": lambda d: d["nodes"]["label"].pop(),
    "leaf with a child": _set(["nodes", "left", 1], 0),
    "split without children": _set(["nodes", "left", 0], -1),
    "no class names": _set(["preprocessing", "class_names"], []),
    "class names not text": _set(["preprocessing", "class_names"], [1, 2]),
    "features not a list": _set(["preprocessing", "features"], {}),
    "unknown column kind": lambda d: d["preprocessing"]["columns"][0].__setitem__(
        "kind", "colour"),
    "column without a name": lambda d: d["preprocessing"]["columns"][0].pop("name"),
    "unknown feature op": lambda d: d["preprocessing"]["features"][0].__setitem__(
        "op", "~"),
    "unknown format": _set(["format"], "orchard-forest"),
    "version text": _set(["version"], "2"),
    "version from the future": _set(["version"], 99),
    "two parents": lambda d: d["nodes"]["right"].__setitem__(0, d["nodes"]["left"][0]),
}


@pytest.mark.parametrize("name", sorted(TREE_CORRUPTIONS))
def test_a_corrupted_tree_is_refused_in_one_sentence(documents, name, tmp_path):
    document = copy.deepcopy(documents["blossom"])
    assert document["nodes"]["feature"][0] >= 0, "the fixture needs a split at the root"
    TREE_CORRUPTIONS[name](document)
    path = tmp_path / "model.json"
    path.write_text(json.dumps(document))
    with pytest.raises(DataError) as error:
        load_model(path)
    assert "\n" not in str(error.value) and str(error.value).endswith(".")


DIAGRAM_CORRUPTIONS = {
    "root out of range": _set(["root"], 10_000),
    "root text": _set(["root"], "0"),
    "child out of range": _set(["nodes", "left", 0], 10_000),
    "child points to itself": lambda d: d["nodes"]["left"].__setitem__(0, 0),
    "weights not pairs": _set(["nodes", "weights", 0], [[1]]),
    "too few value rows": lambda d: d["value"].pop(),
    "no layers": _delete(["nodes", "layer"]),
}


@pytest.mark.parametrize("name", sorted(DIAGRAM_CORRUPTIONS))
def test_a_corrupted_diagram_is_refused(documents, name):
    document = copy.deepcopy(documents["odd"])
    assert document["nodes"]["layer"], "the fixture needs a decision node"
    DIAGRAM_CORRUPTIONS[name](document)
    with pytest.raises(DataError):
        model_from_dict(document)


@pytest.mark.parametrize("content", [b"", b"{", b"[1]", b"null", b"\xff\xfe\x00",
                                     b"[" * 200_000 + b"]" * 200_000, b'{"format": 3}'])
def test_files_that_are_not_models(content, tmp_path):
    path = tmp_path / "model.json"
    path.write_bytes(content)
    with pytest.raises(DataError):
        load_model(path)


JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-3, 10**6)
                           | st.floats(allow_nan=False) | st.text(max_size=4),
                           lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                           max_leaves=6)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _paths(inner, (*prefix, index))


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_model_documents_never_crash_or_hang(documents, raw, data):
    """Any place of a valid document replaced by any JSON value (or deleted): the
    model is refused with DataError, or it loads and predicts in bounded time."""
    name = data.draw(st.sampled_from(sorted(documents)))
    document = copy.deepcopy(documents[name])
    for _ in range(data.draw(st.integers(1, 3))):
        paths = [p for p in _paths(document) if p]
        path = data.draw(st.sampled_from(paths))
        parent = document
        for key in path[:-1]:
            parent = parent[key]
        if data.draw(st.booleans()):
            parent[path[-1]] = data.draw(JSON_VALUES)
        elif isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent.pop(path[-1])
    faulthandler.dump_traceback_later(30, exit=True, file=sys.__stderr__)
    try:
        model = model_from_dict(document)
        model.predict_frame(raw.frame)
    except DataError:
        pass
    finally:
        faulthandler.cancel_dump_traceback_later()
