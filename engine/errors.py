"""Errors that reach the user as one clear sentence.

Anything the user can cause (a bad file, a bad option) raises `OrchardError` with a
message that is a complete sentence; the CLI prints it and exits with status 2, the GUI
shows it in a dialog. Everything else is a bug and keeps its traceback.
"""

from collections.abc import Callable


class OrchardError(Exception):
    """A problem with the user's input, explained in one sentence."""


class DataError(OrchardError):
    """The data file cannot be read or used as asked."""


class ParameterError(OrchardError):
    """A solver or option value is unknown or out of range."""


class Interrupted(OrchardError):
    """Work stopped by the user or its time limit before it had a model to keep.

    `status` is `cancelled` or `time_limit` (the values of `Status`), so the CLI can
    exit 130 for a stop and the GUI can say which one happened.
    """

    def __init__(self, message: str, status: str):
        super().__init__(message)
        self.status = status


# What a long data stage calls between chunks of work: `progress(stage, fraction)`
# reports how far it got (fraction in [0, 1], or None when unknown) and raises
# `Interrupted` when the work should stop.  `Monitor.checkpoint` is one.
Progress = Callable[[str, "float | None"], None]
