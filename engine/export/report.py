"""One run as a single HTML page an analyst can mail (issue 17, item 8).

The page has to open anywhere, offline, long after the run, and get through mail
filters that strip scripts and block remote content.  So it is one self-contained
file: CSS inline, the tree picture embedded as a base64 `data:` URI, the anytime
curve drawn as inline SVG by the few lines below (no plotting library), no
JavaScript, no link to another file or to the network.  Column, class and file
names come from the user's data, so every piece of text is HTML-escaped.

The engine cannot draw trees (that needs Qt), so the caller passes the picture as
PNG bytes.  The data, settings and results come in as (label, text) pairs the caller
has already worded, so the page says what the window says.  A missing part (no
picture, no curve, no tree) becomes one sentence saying so.
"""

from __future__ import annotations

import base64
import math
import time
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path

import numpy as np

from engine.data.features import format_count
from engine.export.files import write_atomically
from engine.metrics import per_class as per_class_scores
from engine.metrics import stairs

# What the page says instead of a part it cannot show.
NO_PICTURE = "No picture of the tree was given, so none is shown."
NO_RULES = "This run has no tree, so there are no rules."
NO_CONFUSION = "No confusion matrix was recorded for this run."
NO_CURVE = "The search recorded no trees along the way, so there is no curve to draw."
ONE_POINT = ("The search recorded a single tree ({error} errors at {time} s), so there is "
             "no curve to draw.")
NO_NOTES = "Nothing else to note about this run."
NOTHING = "Nothing recorded."
# Above this many classes the confusion matrix is left out (the per-class table stays).
MAX_MATRIX_CLASSES = 30

ERROR_COLOUR = "#0072B2"   # the window's anytime chart colours (gui/progress_chart.py)
BOUND_COLOUR = "#D55E00"

STYLE = """
body { font: 14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
       color: #1f2328; max-width: 60em; margin: 2em auto; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: 0.1em; }
h2 { font-size: 1.15em; margin-top: 1.8em; border-bottom: 1px solid #d0d7de; }
.date, .caption, .missing { color: #505863; }
table { border-collapse: collapse; }
th, td { border: 1px solid #d0d7de; padding: 0.25em 0.6em; text-align: left; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
td.hit { background: #ddf4ff; font-weight: 600; }
th[scope=row] { background: #f6f8fa; font-weight: normal; }
pre { background: #f6f8fa; padding: 0.8em; overflow-x: auto; font-size: 12.5px; }
img { max-width: 100%; border: 1px solid #d0d7de; }
svg text { font: 11px sans-serif; fill: #3d444d; }
"""


def per_class_rows(confusion: np.ndarray) -> list[dict[str, float]]:
    """Precision, recall, F1 and support of each class, from a confusion matrix.

    `engine.metrics.per_class` scores (true, predicted, weight) triples, so each
    nonzero cell becomes one triple weighted by its total: the same numbers as
    scoring the rows themselves, computed by the same code.
    """
    matrix = np.asarray(confusion, dtype=float)
    true, predicted = np.nonzero(matrix)
    scores = per_class_scores(true, predicted, matrix.shape[0], matrix[true, predicted])
    return [{key: float(values[k]) for key, values in scores.items()}
            for k in range(matrix.shape[0])]


# ------------------------------------------------------------------ anytime chart
def anytime_chart(incumbents: Sequence[tuple[float, float, float]],
                  end_time: float | None = None) -> str:
    """Training error and lower bound against time as inline SVG (two step lines,
    `polyline.error` and `polyline.bound`, each of 2n - 1 points for n incumbents,
    plus one when `end_time` is later), or a sentence when there is no curve.

    Incumbents with a time or error that is not a finite number are left out; a
    bound that is not a positive finite number is drawn at 0, as in the window.
    """
    points = [(float(t), float(e), float(b)) for t, e, b in incumbents
              if math.isfinite(t) and math.isfinite(e)]
    if not points:
        return _missing(NO_CURVE)
    if len(points) == 1:
        t, e, _ = points[0]
        return _missing(ONE_POINT.format(error=format_count(e), time=f"{t:.2f}"))
    times = [p[0] for p in points]
    error = list(zip(*stairs(times, [p[1] for p in points], end_time)))
    bound = list(zip(*stairs(times, [p[2] if math.isfinite(p[2]) and p[2] > 0 else 0.0
                                     for p in points], end_time)))
    width, height, left, right, top, bottom = 640, 300, 72, 20, 24, 48
    t_max = max(x for x, _ in error) or 1.0
    low = min(y for _, y in error + bound)
    high = max(y for _, y in error + bound)
    if high <= low:
        high = low + 1.0

    def x(t: float) -> float:
        return left + (t / t_max) * (width - left - right)

    def y(v: float) -> float:
        return top + (high - v) / (high - low) * (height - top - bottom)

    def line(pts: list[tuple[float, float]], name: str, colour: str) -> str:
        coords = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in pts)
        return (f'<polyline class="{name}" points="{coords}" fill="none" '
                f'stroke="{colour}" stroke-width="2"/>')

    x0, x1, y0, y1 = left, width - right, height - bottom, top
    parts = [
        (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
         f'viewBox="0 0 {width} {height}" role="img" '
         'aria-label="Training error and lower bound against time">'),
        f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="#3d444d"/>',
        f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}" stroke="#3d444d"/>',
        f'<text x="{x0}" y="{y0 + 16}" text-anchor="middle">0</text>',
        f'<text x="{x1}" y="{y0 + 16}" text-anchor="end">{t_max:.3g}</text>',
        f'<text x="{x0 - 6}" y="{y0}" text-anchor="end">{escape(format_count(low))}</text>',
        f'<text x="{x0 - 6}" y="{y1 + 4}" text-anchor="end">{escape(format_count(high))}</text>',
        f'<text x="{(x0 + x1) / 2}" y="{height - 10}" text-anchor="middle">time (s)</text>',
        (f'<text text-anchor="middle" transform="translate(16 {(y0 + y1) / 2}) '
         'rotate(-90)">training error</text>'),
        line(bound, "bound", BOUND_COLOUR),
        line(error, "error", ERROR_COLOUR),
        (f'<text x="{x1}" y="{y1 - 8}" text-anchor="end">'
         f'<tspan fill="{ERROR_COLOUR}">&#9632; incumbent error</tspan>  '
         f'<tspan fill="{BOUND_COLOUR}">&#9632; lower bound</tspan></text>'),
        "</svg>",
    ]
    return "\n".join(parts)


# ------------------------------------------------------------------ the page
def _missing(sentence: str) -> str:
    return f'<p class="missing">{escape(sentence)}</p>'


def _pairs(rows: Sequence[tuple[str, str]]) -> str:
    if not rows:
        return _missing(NOTHING)
    body = "".join(f'<tr><th scope="row">{escape(str(k))}</th><td>{escape(str(v))}</td></tr>'
                   for k, v in rows)
    return f"<table>{body}</table>"


def _confusion(class_names: Sequence[str], confusion: np.ndarray | None,
               caption: str) -> str:
    matrix = None if confusion is None else np.asarray(confusion, dtype=float)
    n = len(class_names)
    if matrix is None or matrix.shape != (n, n) or n == 0:
        return _missing(NO_CONFUSION)
    if n > MAX_MATRIX_CLASSES:
        return _missing(f"With {n} classes the matrix is too large for a page; the "
                        "per-class table below has each class's figures.")
    names = [escape(name) for name in class_names]
    head = "<tr><th>true \\ predicted</th>" + "".join(f"<th>{c}</th>" for c in names) + "</tr>"
    rows = "".join(
        f'<tr><th scope="row">{names[i]}</th>' + "".join(
            f'<td class="number{" hit" if i == j else ""}">{format_count(matrix[i, j])}</td>'
            for j in range(n)) + "</tr>"
        for i in range(n))
    return (f'<p class="caption">{escape(caption)} Rows: true class; columns: predicted '
            f"class.</p><table>{head}{rows}</table>")


def _per_class(class_names: Sequence[str], rows: Sequence[Mapping[str, float]]) -> str:
    if not class_names or len(rows) != len(class_names):
        return _missing(NO_CONFUSION)
    head = ("<tr><th>Class</th><th>Precision</th><th>Recall</th><th>F1</th>"
            "<th>Support</th></tr>")
    body = "".join(
        f"<tr><th scope=\"row\">{escape(name)}</th>"
        + "".join(f'<td class="number">{100 * row[key]:.1f}%</td>'
                  for key in ("precision", "recall", "f1"))
        + f'<td class="number">{format_count(row["support"])}</td></tr>'
        for name, row in zip(class_names, rows))
    return f"<table>{head}{body}</table>"


def _picture(png: bytes | None) -> str:
    if not png:
        return _missing(NO_PICTURE)
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="The tree of this run" src="data:image/png;base64,{data}">'


def run_report_html(*, title: str, data_summary: Sequence[tuple[str, str]],
                    settings: Sequence[tuple[str, str]],
                    metrics: Sequence[tuple[str, str]], class_names: Sequence[str],
                    confusion: np.ndarray | None,
                    per_class: Sequence[Mapping[str, float]] | None = None,
                    rules_text: str, incumbents: Sequence[tuple[float, float, float]],
                    tree_png: bytes | None, notes: Sequence[str],
                    date: str | None = None, end_time: float | None = None,
                    confusion_caption: str = "Training rows.",
                    held_out: np.ndarray | None = None,
                    held_out_caption: str = "", tuning: dict | None = None) -> str:
    """The whole report as one HTML document (see the module doc).

    `confusion` has one row per true class and one column per predicted class;
    `per_class` holds one mapping per class with `precision`, `recall`, `f1` (0 to
    1) and `support`, computed from `confusion` when None.  `incumbents` are the
    anytime curve's `(time s, error, lower bound)`, `end_time` where its lines end
    (the run's time).  `date` defaults to now.  `held_out`, the confusion matrix of a
    test's held-out rows (all its splits), adds their matrix and per-class table;
    `tuning`, the tuning that chose the run's setting, its curve.
    """
    if per_class is None and confusion is not None and np.ndim(confusion) == 2 \
            and np.shape(confusion) == (len(class_names), len(class_names)):
        per_class = per_class_rows(confusion)
    when = date or time.strftime("%Y-%m-%d %H:%M")
    notes_html = ("<ul>" + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>"
                  if notes else _missing(NO_NOTES))
    sections = [
        ("Data", _pairs(data_summary)),
        ("Settings", _pairs(settings)),
        ("Results", _pairs(metrics)),
        ("Confusion matrix", _confusion(class_names, confusion, confusion_caption)),
        ("Precision, recall and F1 per class", _per_class(class_names, per_class or [])),
        *([("Held-out rows", _confusion(class_names, held_out, held_out_caption)
            + _per_class(class_names, per_class_rows(held_out)))]
          if held_out is not None else []),
        ("Tree", _picture(tree_png)),
        ("Rules", f"<pre>{escape(rules_text)}</pre>" if rules_text.strip()
         else _missing(NO_RULES)),
        ("Anytime curve", anytime_chart(incumbents, end_time)),
        *([("Tuning", tuning_section(tuning))] if tuning else []),
        ("Notes", notes_html),
    ]
    body = "\n".join(f"<h2>{escape(heading)}</h2>\n{content}" for heading, content in sections)
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
            f"<h1>{escape(title)}</h1>\n"
            f'<p class="date">{escape(when)} · Orchard run report</p>\n'
            f"{body}\n</body>\n</html>\n")


def tuning_section(tuning: dict) -> str:
    """The tuning that chose the run's setting (`Tuning.to_dict`): each candidate's mean
    validation score against its mean leaves as inline SVG (± one standard error, the
    chosen one circled, the best filled), and one sentence saying how it chose."""
    scored = [(i, c) for i, c in enumerate(tuning.get("candidates", []))
              if c.get("complete") and math.isfinite(c.get("mean_accuracy", math.nan))]
    measure = tuning.get("measure", "validation accuracy")
    chosen, best = tuning.get("chosen"), tuning.get("best")
    names = {i: ", ".join(f"{k.replace('_', ' ')} {c[k]:g}" for k in
                          ("depth", "min_leaf", "leaf_cost") if c.get(k) is not None)
             for i, c in scored}
    text = (f"<p>Chosen by {escape(str(tuning.get('scored_on', 'cross-validation')))}: "
            f"{escape(names.get(chosen, '?'))}, the simplest setting within "
            f"{escape(str(tuning.get('rule', 'half a standard error')))} of the best "
            f"{escape(measure)} ({escape(names.get(best, '?'))}).</p>")
    if not scored:
        return text + _missing("No setting was scored on every split.")
    width, height, left, right, top, bottom = 640, 300, 72, 20, 24, 48
    xs = [c["mean_leaves"] for _, c in scored]
    lows = [c["mean_accuracy"] - c["standard_error"] for _, c in scored]
    highs = [c["mean_accuracy"] + c["standard_error"] for _, c in scored]
    x_low, x_high = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    y_low, y_high = min(lows), max(highs) if max(highs) > min(lows) else min(lows) + 0.01

    def x(v: float) -> float:
        return left + (v - x_low) / (x_high - x_low) * (width - left - right)

    def y(v: float) -> float:
        return top + (y_high - v) / (y_high - y_low) * (height - top - bottom)

    x0, x1, y0, y1 = left, width - right, height - bottom, top
    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
              f'viewBox="0 0 {width} {height}" role="img" '
              f'aria-label="{escape(measure)} against leaves">'),
             f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="#3d444d"/>',
             f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}" stroke="#3d444d"/>',
             f'<text x="{x0}" y="{y0 + 16}" text-anchor="middle">{x_low:.3g}</text>',
             f'<text x="{x1}" y="{y0 + 16}" text-anchor="end">{x_high:.3g}</text>',
             f'<text x="{x0 - 6}" y="{y0}" text-anchor="end">{100 * y_low:.1f}%</text>',
             f'<text x="{x0 - 6}" y="{y1 + 4}" text-anchor="end">{100 * y_high:.1f}%</text>',
             (f'<text x="{(x0 + x1) / 2}" y="{height - 10}" text-anchor="middle">'
              'leaves (mean over the splits)</text>'),
             (f'<text text-anchor="middle" transform="translate(16 {(y0 + y1) / 2}) '
              f'rotate(-90)">{escape(measure)}</text>')]
    for i, c in scored:
        cx, mean, se = x(c["mean_leaves"]), c["mean_accuracy"], c["standard_error"]
        kind = "chosen" if i == chosen else "best" if i == best else "candidate"
        parts.append(f'<line class="{kind}" x1="{cx:.1f}" y1="{y(mean - se):.1f}" '
                     f'x2="{cx:.1f}" y2="{y(mean + se):.1f}" stroke="{ERROR_COLOUR}"/>')
        parts.append(f'<circle class="{kind}" cx="{cx:.1f}" cy="{y(mean):.1f}" '
                     f'r="{7 if i == chosen else 4}" fill="'
                     f'{ERROR_COLOUR if i != chosen else "none"}" stroke="'
                     f'{BOUND_COLOUR if i == chosen else ERROR_COLOUR}" stroke-width="2">'
                     f'<title>{escape(names[i])}: {100 * mean:.1f}%</title></circle>')
    parts.append("</svg>")
    return text + "\n".join(parts)


def write_report(path: str | Path, html_text: str) -> None:
    """Write the report to `path` in UTF-8, atomically (`files.write_atomically`)."""
    write_atomically(path, lambda temporary: temporary.write_text(html_text,
                                                                  encoding="utf-8"))
