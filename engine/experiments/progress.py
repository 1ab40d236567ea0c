"""A one-line text progress bar for `orchard sweep`, so no extra dependency is needed.

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
    def __init__(self, stream: TextIO = sys.stderr):
        self.stream = stream
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
