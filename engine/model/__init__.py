"""Trained models: `Tree` (every tree solver) and `Diagram` (the `odd` solver).

`load_model` reads either kind from its JSON file, dispatching on the document's
`format` field (`orchard-tree` or `orchard-diagram`), so `orchard predict` and the
GUI accept both without asking which one they hold.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

from engine.errors import DataError
from engine.model.diagram import FORMAT as DIAGRAM_FORMAT
from engine.model.diagram import Diagram
from engine.model.schema import validate
from engine.model.tree import FORMAT as TREE_FORMAT
from engine.model.tree import Tree

__all__ = ["Diagram", "Tree", "load_model", "model_from_dict"]


def model_from_dict(d: dict) -> Tree | Diagram:
    """The model a JSON document describes (DataError, one sentence, if it is not a
    sound Orchard model: see `engine.model.schema`)."""
    validate(d)
    kind = Tree if d["format"] == TREE_FORMAT else Diagram
    try:
        return kind.from_dict(d)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
        # the recipe's inner fields (columns, features) are checked by building them
        raise DataError(f"It is not a valid Orchard model: its preprocessing recipe is "
                        f"malformed ({type(error).__name__}: {error}).") from None


# A model file is kilobytes to a few megabytes; far more is not one.
MAX_MODEL_BYTES = 200 << 20


def load_model(path: str | Path) -> Tree | Diagram:
    """Tree or diagram saved at `path`, with one-sentence errors for bad files."""
    path = Path(path)
    subject = f"The model file '{path}'"
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise DataError(f"'{path}' is a folder, not a model file.")
        if not stat.S_ISREG(info.st_mode):
            raise DataError(f"{subject} is not a regular file (a pipe or a device).")
        if info.st_size > MAX_MODEL_BYTES:
            raise DataError(f"{subject} is {info.st_size >> 20} MB: too large to be an "
                            "Orchard model.")
        d = json.loads(path.read_bytes().decode("utf-8-sig"))
    except FileNotFoundError:
        raise DataError(f"{subject} does not exist.") from None
    except OSError as error:
        raise DataError(f"{subject} cannot be read ({error.strerror or error}).") from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise DataError(f"{subject} is not valid JSON.") from None
    except RecursionError:
        raise DataError(f"{subject} nests its JSON too deeply to be a model.") from None
    if not isinstance(d, dict) or d.get("format") not in (TREE_FORMAT, DIAGRAM_FORMAT):
        raise DataError(f"{subject} is not an Orchard tree or decision diagram.")
    try:
        return model_from_dict(d)
    except DataError as error:
        raise DataError(f"{subject}: {str(error)[0].lower()}{str(error)[1:]}") from None
