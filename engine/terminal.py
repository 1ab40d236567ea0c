"""What the command line shows while it works: `orchard sweep`'s one-line progress
bar and `fit`/`tune`'s stage line, with no dependency (and nothing heavy imported).

On a terminal the line is redrawn in place; in a log file (not a terminal) each
update is its own line, which keeps the log readable.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

WIDTH = 30


def clock(seconds: float) -> str:
    minutes, seconds = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


class ProgressBar:
    def __init__(self, stream: TextIO | None = None):
        # sys.stderr as it is now, not when this module was imported (a test's
        # captured stream is closed by then)
        self.stream = stream = stream or sys.stderr
        self.in_place = stream.isatty()
        self.start = time.monotonic()
        self.drawn = False

    def __call__(self, finished: int, total: int, failed: int) -> None:
        elapsed = time.monotonic() - self.start
        filled = round(WIDTH * finished / total) if total else WIDTH
        text = (f"[{'#' * filled}{'.' * (WIDTH - filled)}] {finished}/{total} fits"
                f"{f', {failed} failed' if failed else ''}, {clock(elapsed)}")
        if 0 < finished < total:
            text += f", about {clock(elapsed * (total - finished) / finished)} left"
        if self.in_place:
            self.stream.write(f"\r{text}\033[K")
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        """End the bar's line, so what is printed next starts on its own line."""
        if self.in_place and self.drawn:
            self.stream.write("\n")
            self.stream.flush()
        self.drawn = False


class StageLine:
    """What a long `orchard fit` is doing, on stderr: the stage and how far it got.

    Silent for the first `after` seconds, so quick runs print nothing; then at most
    one update every `every` seconds (redrawn in place on a terminal, one line each
    in a log).  `stage` is `Monitor.on_progress`, `incumbent` its `on_incumbent`.
    """

    def __init__(self, stream: TextIO | None = None, after: float = 1.0,
                 every: float = 0.5):
        self.stream, self.after = stream or sys.stderr, after
        stream = self.stream
        self.every = every if stream.isatty() else max(every, 2.0)
        self.in_place = stream.isatty()
        self.start = time.monotonic()
        self.last = -float("inf")
        self.last_text = ""
        self.drawn = False

    def stage(self, stage: str, fraction: float | None = None) -> None:
        done = "" if fraction is None else f" {100 * fraction:.0f}%"
        self._show(f"{stage[:1].upper()}{stage[1:]}{done}")

    def incumbent(self, tree, t: float, error: float, lower_bound: float) -> None:
        bound = f", lower bound {lower_bound:g}" if lower_bound > 0 else ""
        self._show(f"Searching: best tree so far has {error:g} errors{bound}", force=True)

    def _show(self, text: str, force: bool = False) -> None:
        now = time.monotonic()
        if now - self.start < self.after or text == self.last_text:
            return
        if now - self.last < self.every and not (force and self.in_place):
            return
        self.last, self.last_text = now, text
        line = f"orchard: {text} ({clock(now - self.start)})"
        self.stream.write(f"\r{line}\033[K" if self.in_place else line + "\n")
        self.stream.flush()
        self.drawn = True

    def note(self, text: str) -> None:
        """Print `text` on a line of its own (above the stage line, which comes back
        with its next update)."""
        if self.in_place and self.drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.drawn, self.last_text = False, ""
        print(f"orchard: {text}", file=sys.stderr, flush=True)

    def close(self) -> None:
        """End the in-place line, so what is printed next starts on its own line."""
        if self.in_place and self.drawn:
            self.stream.write("\n")
            self.stream.flush()
        self.drawn = False
