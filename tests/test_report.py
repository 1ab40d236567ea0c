"""The one-page HTML report of a run (issue 17, item 8).

A real tree is trained on the loans sample; the report must parse as HTML with
balanced tags, say every class, the accuracy and every line of the rules export,
draw the anytime curve as SVG step lines of 2n - 1 points for n incumbents, embed
the picture or say why there is none, escape hostile names, and be written whole.
"""

import base64
import re
from html import escape
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLES

from engine.data.csv_reader import read_table
from engine.data.dataset import PrepOptions
from engine.featurize import prepare
from engine.errors import DataError
from engine.evaluation import CrossValidation, Plan
from engine.export import write_export
from engine.export.report import (
    NO_CURVE,
    NO_PICTURE,
    NO_RULES,
    ONE_POINT,
    per_class_rows,
    run_report_html,
    write_report,
)
from engine.metrics import class_scores, confusion_matrix
from engine.solvers.monitor import Monitor
from engine.training import train

LOANS = SAMPLES / "loans.csv"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(40))
VOID = {"meta", "img", "br", "hr", "link", "input"}
SVG_EMPTY = {"polyline", "line"}   # written self-closing (`<line .../>`)


class Checker(HTMLParser):
    """Parses the page and checks that every opened tag is closed in order."""

    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.tags: list[str] = []
        self.text: list[str] = []
        self.polylines: dict[str, str] = {}

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "polyline":
            attributes = dict(attrs)
            self.polylines[attributes["class"]] = attributes["points"]
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "polyline":
            attributes = dict(attrs)
            self.polylines[attributes["class"]] = attributes["points"]

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse(page: str) -> Checker:
    checker = Checker()
    checker.feed(page)
    checker.close()
    assert checker.stack == [], f"unclosed tags {checker.stack}"
    return checker


@pytest.fixture(scope="module")
def trained():
    data = prepare(read_table(LOANS), PrepOptions(binarize="quantile:4"))
    result = train(data, "blossom", {"depth": 3})
    assert len(result.incumbents) >= 2
    matrix = confusion_matrix(data.y, result.tree.predict(data.X), data.n_classes, data.w)
    return data, result, matrix


def rules_export(tree, tmp_path: Path) -> str:
    path = tmp_path / "rules.txt"
    write_export(tree, path, "rules")
    return path.read_text(encoding="utf-8")


def report(data, result, matrix, rules: str, **changes) -> str:
    accuracy = 1 - result.train_error / data.w.sum()
    arguments = {
        "title": "Run #1 Blossom on loans.csv", "date": "2024-05-01 10:00",
        "data_summary": [("File", "loans.csv"), ("Rows", f"{data.n_rows:,}")],
        "settings": [("Algorithm", "Blossom"), ("depth", "3")],
        "metrics": [("Training accuracy", f"{100 * accuracy:.1f}%")],
        "class_names": list(data.class_names), "confusion": matrix, "rules_text": rules,
        "incumbents": [tuple(map(float, p)) for p in result.incumbents],
        "tree_png": PNG, "notes": ["A note & more."]}
    arguments.update(changes)
    return run_report_html(**arguments)


def point_count(points: str) -> int:
    return len(points.split())


# ------------------------------------------------------------------ the page
def test_report_holds_every_part_of_a_real_run(trained, tmp_path):
    data, result, matrix = trained
    rules = rules_export(result.tree, tmp_path)
    page = report(data, result, matrix, rules)
    checker = parse(page)
    text = "".join(checker.text)
    for tag in ("html", "head", "title", "style", "body", "h1", "table", "pre", "svg", "img"):
        assert tag in checker.tags
    assert "script" not in checker.tags and "http://" not in page.replace(
        'xmlns="http://www.w3.org/2000/svg"', "")
    for heading in ("Data", "Settings", "Results", "Confusion matrix",
                    "Precision, recall and F1 per class", "Tree", "Rules",
                    "Anytime curve", "Notes"):
        assert f"<h2>{escape(heading)}</h2>" in page
    assert "2024-05-01 10:00" in text and "Run #1 Blossom on loans.csv" in text
    for name in data.class_names:
        assert f'<th scope="row">{escape(name)}</th>' in page
    accuracy = 1 - result.train_error / data.w.sum()
    assert f"<td>{100 * accuracy:.1f}%</td>" in page
    pre = re.search(r"<pre>(.*?)</pre>", page, re.DOTALL).group(1)
    lines = [line for line in rules.splitlines() if line.strip()]
    assert len(lines) > 5 and "IF " in rules
    for line in lines:
        assert escape(line) in pre
    assert "A note &amp; more." in page


def test_confusion_and_per_class_scores(trained):
    data, result, matrix = trained
    page = report(data, result, matrix, "x")
    for value in matrix.ravel():
        assert f">{value:,.0f}</td>" in page
    expected = class_scores(data.y, result.tree.predict(data.X), list(data.class_names),
                            data.w)["per_class"]
    rows = per_class_rows(matrix)
    for name, row in zip(data.class_names, rows):
        for key in ("precision", "recall", "f1", "support"):
            assert row[key] == pytest.approx(expected[name][key])
        assert (f'<td class="number">{100 * row["precision"]:.1f}%</td>'
                f'<td class="number">{100 * row["recall"]:.1f}%</td>'
                f'<td class="number">{100 * row["f1"]:.1f}%</td>') in page


def test_per_class_rows_of_a_known_matrix():
    rows = per_class_rows(np.array([[3.0, 1.0], [0.0, 0.0]]))
    assert rows[0] == {"precision": 1.0, "recall": 0.75, "f1": pytest.approx(6 / 7),
                       "support": 4.0}
    assert rows[1] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 0.0}


def test_anytime_chart_is_two_step_lines(trained):
    """n incumbents -> 2n - 1 points per line (each later incumbent adds the corner
    at the previous value, then its own); `end_time` after the last adds one."""
    data, result, matrix = trained
    n = len(result.incumbents)
    polylines = parse(report(data, result, matrix, "x")).polylines
    assert set(polylines) == {"error", "bound"}
    assert point_count(polylines["error"]) == point_count(polylines["bound"]) == 2 * n - 1
    later = float(result.incumbents[-1][0]) + 1.0
    polylines = parse(report(data, result, matrix, "x", end_time=later)).polylines
    assert point_count(polylines["error"]) == 2 * n
    # the error never rises: its y in pixels (counted downwards) never decreases
    ys = [float(p.split(",")[1]) for p in polylines["error"].split()]
    assert ys == sorted(ys)
    page = report(data, result, matrix, "x", incumbents=[(0.0, 5, 1), (1.0, 3, 2),
                                                          (3.0, 2, 2)])
    assert point_count(parse(page).polylines["error"]) == 5
    assert "time (s)" in page and "training error" in page


def test_missing_parts_are_explained(trained):
    data, result, matrix = trained
    page = report(data, result, matrix, "x", tree_png=None, incumbents=[])
    parse(page)
    assert escape(NO_PICTURE) in page and "data:image/png" not in page
    assert escape(NO_CURVE) in page and "<svg" not in page
    single = report(data, result, matrix, "x", incumbents=[(0.25, 12.0, 3.0)])
    parse(single)
    assert escape(ONE_POINT.format(error="12", time="0.25")) in single
    assert "<svg" not in single
    empty = report(data, result, matrix, "", metrics=[], notes=[], confusion=None)
    parse(empty)
    assert "no rules" in empty and "No confusion matrix" in empty


def test_picture_is_embedded(trained):
    data, result, matrix = trained
    page = report(data, result, matrix, "x")
    uri = "data:image/png;base64," + base64.b64encode(PNG).decode("ascii")
    assert f'src="{uri}"' in page
    assert escape(NO_PICTURE) not in page


def test_hostile_names_are_escaped(trained):
    data, result, matrix = trained
    hostile = "<script>alert(1)</script>"
    page = report(data, result, matrix, f"IF x THEN {hostile}", title=hostile,
                  class_names=[hostile, "b&b"], notes=[hostile],
                  data_summary=[(hostile, hostile)])
    checker = parse(page)
    assert "<script" not in page.lower() and "script" not in checker.tags
    assert escape(hostile) in page and "b&amp;b" in page
    assert hostile in "".join(checker.text)   # the reader sees the name as written


def test_write_report_replaces_the_file_whole(trained, tmp_path, monkeypatch):
    data, result, matrix = trained
    page = report(data, result, matrix, "rules ü")
    target = tmp_path / "report.html"
    target.write_text("old report", encoding="utf-8")
    write_report(target, page)
    assert target.read_text(encoding="utf-8") == page
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]   # no temporary left

    def fail(self, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", fail)
    with pytest.raises(DataError, match="No space left"):
        write_report(target, "new")
    monkeypatch.undo()
    assert target.read_text(encoding="utf-8") == page
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]
    with pytest.raises(DataError, match="folder"):
        write_report(tmp_path / "missing" / "report.html", page)


# ------------------------------------------------------------------ the window's glue
def test_report_for_a_run_record(tmp_path):
    from gui.results_panel import errors_text, percent
    from gui.run_report import report_for_run
    from gui.runs import RunRecord, run_task

    raw = read_table(LOANS)
    options = PrepOptions(binarize="quantile:4")
    data = prepare(raw, options)
    params = {"depth": 2}
    validation = CrossValidation(raw, options, "blossom", params,
                                 Plan(method="holdout", test_size=0.25), baselines=True)
    outcome = run_task(data, "blossom", params, Monitor())
    settings = {"file": "loans.csv", "target": "decision", "missing": "impute",
                "binarize": "quantile:4", "columns": {"age": "ignore"}}
    run = RunRecord.from_outcome(3, outcome, data, "blossom", params, settings, 30.0,
                                 data_path=str(LOANS))
    run.evaluation = validation.run()   # what the window attaches when it is ready
    page = report_for_run(run, PNG)
    checker = parse(page)
    text = "".join(checker.text)
    assert f"Run {run.label}" in text and run.finished_at in text
    assert f"<td>{percent(run.train_accuracy)} ({escape(errors_text(run))})</td>" in page
    assert escape(run.evaluation.summary()) in page
    assert "Most common class, same rows" in text and "Greedy tree, same depth" in text
    assert "Ignored columns" in text and "30 s" in text
    for name in run.class_names:
        assert name in text
    for line in rules_export(run.tree, tmp_path).splitlines():
        assert escape(line) in page
    # the curve ends at the run's final error and bound, at the run's time
    n = len(run.incumbents)
    extra = int(run.incumbents[-1][1:] != (run.train_error, run.lower_bound))
    extended = not extra and run.time_s > run.incumbents[-1][0]
    assert point_count(checker.polylines["error"]) == 2 * (n + extra) - 1 + extended
    assert "data:image/png;base64," in page
    assert escape(NO_PICTURE) in report_for_run(run, None)
    # a run without a tree (stopped before any) still makes a whole page
    from dataclasses import replace
    empty = report_for_run(replace(run, tree=None, incumbents=[]), None)
    parse(empty)
    assert escape(NO_RULES) in empty and escape(NO_CURVE) in empty


def test_report_of_a_regression_run(tmp_path):
    """A regression's report: RMSE and R² on training and held-out rows, no confusion
    matrix nor per-class table, the leaves' means in the rules."""
    from gui.run_report import report_for_run
    from gui.runs import RunRecord, run_task
    from test_regression import house_table

    path = house_table(tmp_path / "house.csv", rows=300)
    raw = read_table(path)
    options = PrepOptions()
    data = prepare(raw, options)
    assert data.regression
    params = {"depth": 2}
    outcome = run_task(data, "greedy", params, Monitor())
    run = RunRecord.from_outcome(1, outcome, data, "greedy", params,
                                 {"file": "house.csv", "target": "price"}, 30.0,
                                 data_path=str(path))
    run.evaluation = CrossValidation(raw, options, "greedy", params, Plan("kfold", 3),
                                     baselines=True).run()
    page = report_for_run(run, PNG)
    text = "".join(parse(page).text)
    assert "Training RMSE" in text and "Training R²" in text
    assert "test R²" in text and "Training rows' mean, same rows" in text
    assert "Training accuracy" not in text and "Balanced accuracy" not in text
    assert "rmse" in text   # the rules' leaves: their mean and spread
