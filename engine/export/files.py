"""Atomic file writes, so an export that fails never leaves a broken file behind.

A writer that raises halfway (a bug, a full disk, Ctrl+C) would otherwise leave a
truncated model or script that looks valid at a glance, or destroy the previous good
export it was replacing.  Everything is written to a temporary file in the target's
folder (same file system, so the final rename is atomic) and renamed into place only
once complete.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from engine.errors import DataError


def write_atomically(path: str | Path, write: Callable[[Path], None]) -> None:
    """Call `write(temporary_path)`, then move the finished file to `path`.

    On any failure the temporary file is removed and `path` is left untouched; an
    OSError (missing folder, no permission, full disk) becomes a one-sentence
    DataError for the user, anything else propagates unchanged.
    """
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        write(temporary)
        os.replace(temporary, path)
    except BaseException as error:
        with suppress(OSError):
            temporary.unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise DataError(f"Cannot write '{path}' "
                            f"({error.strerror or error}).") from None
        raise
