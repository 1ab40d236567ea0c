"""A run of the history as the HTML report of `engine.export.report` (issue 17, item 8).

The engine writes the page; this module words a `RunRecord` for it in the window's
own terms (the Results tab's figures, `percent` and `count`), takes the rules from
the rules export, and extends the anytime curve to the run's end as the chart does.
The tree's picture is the caller's: it passes PNG bytes (or None) from the view.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from engine.data.features import format_count
from engine.export import rules_text as export_rules
from engine.export.report import run_report_html, write_report
from gui.image_export import save_tree_image
from gui.models import is_model, kind_name, size_text
from gui.results_panel import (
    algorithm_text,
    bound_text,
    fit_rows,
    test_rows,
    weighted,
)
from gui.runs import RunRecord

ROW_OPTIONS = {"drop_inconsistent": "rows with conflicting classes dropped",
               "merge_duplicates": "duplicate rows merged",
               "remove_redundant": "redundant features removed"}


def rules_text(model) -> str:
    """The text of the model's `rules` export (`engine.export.WRITERS["rules"]`):
    nested rules then the rule list for a tree, the node list and paths for a
    diagram; "" when there is no model."""
    return export_rules(model) if is_model(model) else ""


def report_for_run(run: RunRecord, tree_png: bytes | None) -> str:
    """The report of `run` as one HTML document; `tree_png` is its tree's picture."""
    curve = list(run.incumbents)
    if curve and (curve[-1][1] != run.train_error or curve[-1][2] != run.lower_bound):
        # the search ended after its last tree: the final bound, as the chart shows it
        curve.append((max(run.time_s, curve[-1][0]), run.train_error, run.lower_bound))
    return run_report_html(
        title=f"Run {run.label}", date=run.finished_at, data_summary=_data(run),
        settings=_settings(run), metrics=_metrics(run), class_names=run.class_names,
        confusion=run.train_confusion, rules_text=rules_text(run.tree),
        incumbents=curve, end_time=run.time_s, tree_png=tree_png, notes=_notes(run),
        confusion_caption=("Training rows, weighted by class: a cell is its rows' total "
                           "weight." if weighted(run) else "Training rows."),
        tuning=run.tuning, **_held_out(run))


def _held_out(run: RunRecord) -> dict:
    """The test's held-out confusion matrix (every split's, one row each), if any."""
    ev = run.evaluation
    if ev is None or not ev.folds:
        return {}
    done = "" if ev.complete else f" ({len(ev.folds)} of {ev.n_folds} splits done)"
    return {"held_out": ev.test_confusion(),
            "held_out_caption": f"Held-out rows of the {ev.plan.describe()}{done}: each "
                                "row counted once, predicted by the split's tree that did "
                                "not train on it."}


def _data(run: RunRecord) -> list[tuple[str, str]]:
    settings = run.data_settings
    rows = [("File", run.dataset_name or "not recorded"),
            ("Rows", f"{run.n_rows:,}"),
            ("Features", f"{run.n_features:,} (after preparation)"),
            ("Target", str(settings.get("target") or "?")),
            ("Classes", f"{len(run.class_names):,}")]
    if run.total_weight != run.n_rows:
        rows.append(("Total row weight", format_count(run.total_weight)))
    rows += [("Missing values", str(settings.get("missing", "?"))),
             ("Binarisation", str(settings.get("binarize", "?")))]
    if settings.get("class_weight"):
        rows.append(("Class weights", str(settings["class_weight"])))
    ignored = [name for name, choice in (settings.get("columns") or {}).items()
               if choice == "ignore"]
    if ignored:
        rows.append(("Ignored columns", ", ".join(map(str, ignored))))
    cleaning = [text for key, text in ROW_OPTIONS.items() if settings.get(key)]
    if cleaning:
        rows.append(("Row cleaning", "; ".join(cleaning)))
    return rows


def _settings(run: RunRecord) -> list[tuple[str, str]]:
    rows = [("Algorithm", algorithm_text(run))]
    rows += [(str(key), str(value)) for key, value in run.params.items()]
    rows.append(("Time limit", "none" if run.time_limit is None
                 else f"{run.time_limit:g} s"))
    if run.evaluation is not None:
        rows.append(("Test plan", run.evaluation.plan.describe()))
    return rows


def _metrics(run: RunRecord) -> list[tuple[str, str]]:
    proven = run.optimal and run.status_text != "optimal"
    rows = [("Status", run.status_text + (" — proven optimal" if proven else "")),
            *fit_rows(run), ("Lower bound", bound_text(run)), *test_rows(run)]
    if is_model(run.tree):
        rows.append((kind_name(run.tree), size_text(run.tree)))
    rows.append(("Time", f"{run.time_s:.2f} s"))
    return rows


def _notes(run: RunRecord) -> list[str]:
    notes = [f"Why this algorithm: {run.reason}."] if run.reason else []
    if run.evaluation is not None and run.evaluation.verdict():
        notes.append(run.evaluation.verdict())
    return notes + ([run.message] if run.message else [])


def tree_png(model) -> bytes | None:
    """The model's picture as PNG bytes, drawn as File → Export picture draws it."""
    if not is_model(model):
        return None
    with tempfile.TemporaryDirectory(prefix="orchard-report-") as folder:
        path = Path(folder) / "tree.png"
        save_tree_image(model, path)
        return path.read_bytes()


def save_report(run: RunRecord, path: str | Path) -> None:
    """Write `run`'s report, its tree's picture included, to `path` (atomically)."""
    write_report(path, report_for_run(run, tree_png(run.tree)))
