"""Settings that belong to a file, not to the window: its target, column uses, class
weights, least leaf, cost per leaf and test plan.

A least leaf of 500 rows chosen for a 300,000-row table gave one leaf, "proven
optimal", on the next file of 267 rows: these settings followed the window from
file to file without a word.  Now each file keeps its own (in the user's INI
settings, keyed by the file's full path, the last `MAX_FILES` files), every Run
records them, and opening a file brings its own back, or the defaults for a file
never run, with one sentence saying which (`describe_recalled`, `describe_reset`).
The window's own choices (algorithm, depth, time limit, missing values,
binarisation) stay as they are.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from engine.data.dataset import PrepOptions
from engine.solvers.registry import get_solver, solver_names
from gui.settings import as_list, app_settings

# The solver parameters that depend on the file's rows (the same names in every
# solver that has them).
FILE_PARAMS = ("min_leaf", "min_support", "leaf_cost")
MAX_FILES = 200
ORDER_KEY = "file_settings/order"


def _key(path: str | Path) -> str:
    return hashlib.sha1(str(Path(path).resolve()).encode()).hexdigest()


def recall(path: str | Path) -> dict[str, Any] | None:
    """The settings last run on `path`, or None."""
    text = app_settings().value(f"file_settings/{_key(path)}")
    try:
        return json.loads(text) if text else None
    except (TypeError, ValueError):
        return None


def remember(path: str | Path, settings: dict[str, Any]) -> None:
    """Keep `settings` (`file_part` of a run's settings) for `path`."""
    store, key = app_settings(), _key(path)
    order = [key] + [k for k in as_list(store.value(ORDER_KEY)) if k != key]
    for old in order[MAX_FILES:]:
        store.remove(f"file_settings/{old}")
    store.setValue(ORDER_KEY, order[:MAX_FILES])
    store.setValue(f"file_settings/{key}", json.dumps(settings))
    store.sync()


def file_part(data_settings: dict, params: dict, plan: dict | None) -> dict[str, Any]:
    """What of a run's settings belongs to its file."""
    return {"target": data_settings.get("target"),
            "task": data_settings.get("task", "auto"),
            "columns": dict(data_settings.get("columns") or {}),
            "orders": dict(data_settings.get("orders") or {}),
            "class_weight": data_settings.get("class_weight") or None,
            "params": {k: v for k, v in params.items() if k in FILE_PARAMS},
            "plan": plan}


def default_params() -> dict[str, Any]:
    """Each file parameter's default (the first solver having it says)."""
    out: dict[str, Any] = {}
    for name in solver_names():
        for p in get_solver(name).params:
            if p.name in FILE_PARAMS:
                out.setdefault(p.name, p.default)
    return out


def known_only(options: PrepOptions, columns: list[str]) -> PrepOptions:
    """`options` without the columns a file no longer has (a remembered target or
    column use of a file that has changed since)."""
    present = set(columns)
    return replace(options,
                   target=options.target if options.target in present else None,
                   ignore=tuple(c for c in options.ignore if c in present),
                   kinds={c: k for c, k in options.kinds.items() if c in present})


def describe_recalled(name: str, settings: dict[str, Any]) -> str:
    """One sentence: the file's own settings are back."""
    parts = [f"target '{settings['target']}'"] if settings.get("target") else []
    if settings.get("task", "auto") != "auto":
        parts.append(f"predicting {'a number' if settings['task'] == 'regression' else 'a class'}")
    if settings.get("class_weight"):
        parts.append(f"class weights {settings['class_weight']}")
    parts += [f"{k.replace('_', ' ')} {v:g}" for k, v in settings.get("params", {}).items()
              if v != default_params().get(k)]
    plan = settings.get("plan")
    parts.append("no test" if not plan else
                 f"{plan.get('k', 5)}-fold test" if plan.get("method") == "kfold" else
                 "hold-out test")
    return f"{name}: its settings from its last run are back ({', '.join(parts)})."


def describe_reset(name: str, changed: list[str]) -> str:
    """One sentence: a file never run starts from the defaults (`changed`: what was
    set otherwise for the file before)."""
    if not changed:
        return ""
    return (f"{name} starts from the default {', '.join(changed)}: they belong to a "
            "file, and this one has not been run yet.")
