"""Trained models: `Tree` (every tree solver) and `Diagram` (the `odd` solver).

`load_model` reads either kind from its JSON file, dispatching on the document's
`format` field (`orchard-tree` or `orchard-diagram`), so `orchard predict` and the
GUI accept both without asking which one they hold.  Every document is checked by
`engine.model.schema.validate` before a model is built from it.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

from engine.errors import DataError
from engine.model.diagram import Diagram
from engine.model.schema import validate
from engine.model.tree import FORMAT as TREE_FORMAT
from engine.model.tree import Tree

__all__ = ["Diagram", "Tree", "load_model", "model_from_dict"]


def model_from_dict(d: dict, source: str = "The model document") -> Tree | Diagram:
    """The model a JSON document describes; DataError (one sentence starting with
    `source`) if it is not a sound Orchard model (see `engine.model.schema`)."""
    validate(d, source)
    return (Tree if d["format"] == TREE_FORMAT else Diagram).from_dict(d)


# A model file is kilobytes to a few megabytes; far more is not one.
MAX_MODEL_BYTES = 200 << 20


def load_model(path: str | Path) -> Tree | Diagram:
    """Tree or diagram saved at `path`, with one-sentence errors for bad files."""
    path = Path(path)
    subject = f"The model file '{path}'"
    try:
        info = path.stat()   # before opening: opening a pipe would wait for a writer
        if stat.S_ISDIR(info.st_mode):
            raise DataError(f"'{path}' is a folder, not a model file.")
        if not stat.S_ISREG(info.st_mode):
            raise DataError(f"{subject} is not a regular file (a pipe, a socket or a "
                            "device).")
        if info.st_size > MAX_MODEL_BYTES:
            raise DataError(f"{subject} is {info.st_size >> 20} MB: too large to be an "
                            "Orchard model.")
        with path.open("rb") as stream:
            content = stream.read(MAX_MODEL_BYTES + 1)   # the file may have grown
    except FileNotFoundError:
        raise DataError(f"{subject} does not exist.") from None
    except OSError as error:
        raise DataError(f"{subject} cannot be read ({error.strerror or error}).") from None
    except ValueError:   # a name holding a NUL character
        raise DataError(f"{subject} cannot be read: its name is not a valid path.") from None
    if len(content) > MAX_MODEL_BYTES:
        raise DataError(f"{subject} is over {MAX_MODEL_BYTES >> 20} MB: too large to be "
                        "an Orchard model.")
    return model_from_dict(_parse(content, subject), subject)


def _parse(content: bytes, subject: str):
    """The JSON value of a file's bytes (UTF-8, with or without a BOM)."""
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DataError(f"{subject} is not UTF-8 text, so not an Orchard model.") from None
    if not text.strip():
        raise DataError(f"{subject} is empty.")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise DataError(f"{subject} is not valid JSON (line {error.lineno}, column "
                        f"{error.colno}: {error.msg[0].lower()}{error.msg[1:]}).") from None
    except RecursionError:
        raise DataError(f"{subject} nests its JSON too deeply to be a model.") from None
    except ValueError:   # e.g. an integer of more digits than Python converts
        raise DataError(f"{subject} holds a number too long to read.") from None
