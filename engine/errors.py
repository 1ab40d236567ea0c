"""Errors that reach the user as one clear sentence.

Anything the user can cause (a bad file, a bad option) raises `OrchardError` with a
message that is a complete sentence; the CLI prints it and exits with status 2, the GUI
shows it in a dialog. Everything else is a bug and keeps its traceback.
"""


class OrchardError(Exception):
    """A problem with the user's input, explained in one sentence."""


class DataError(OrchardError):
    """The data file cannot be read or used as asked."""


class ParameterError(OrchardError):
    """A solver or option value is unknown or out of range."""
