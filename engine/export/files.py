"""Atomic file writes, so an export that fails never leaves a broken file behind.

A writer that raises halfway (a bug, a full disk, Ctrl+C) would otherwise leave a
truncated model or script that looks valid at a glance, or destroy the previous good
export it was replacing.  Everything is written to a temporary file in the target's
folder (same file system, so the final rename is atomic) and renamed into place only
once complete.

Only regular files are replaced that way.  A symbolic link is followed (its target is
written, the link stays), and a pipe or device such as `/dev/stdout` is written
directly: renaming over it would replace it with a plain file.  `check_output` refuses
what cannot be written (a folder, a missing folder) before any work starts.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from engine.errors import DataError


def check_output(path: str | Path) -> None:
    """Raise a one-sentence DataError if `path` cannot be written as a file."""
    path = Path(path)
    target = path.resolve() if path.is_symlink() else path
    if target.is_dir():
        raise DataError(f"'{path}' is a folder: give the name of a file to write.")
    if target.exists() and not target.is_file():
        return   # a pipe or a device: written directly
    folder = target.parent
    if not folder.is_dir():
        raise DataError(f"Cannot write '{path}': the folder '{folder}' does not exist.")
    if not os.access(folder, os.W_OK):
        raise DataError(f"Cannot write '{path}': the folder '{folder}' is not writable.")


def write_atomically(path: str | Path, write: Callable[[Path], None]) -> None:
    """Call `write(temporary_path)`, then move the finished file to `path`.

    On any failure the temporary file is removed and `path` is left untouched; an
    OSError (missing folder, no permission, full disk) becomes a one-sentence
    DataError for the user, anything else propagates unchanged.  A symbolic link's
    target is written; a pipe or device is written directly (see the module doc).
    """
    check_output(path)
    shown, path = Path(path), Path(path).resolve() if Path(path).is_symlink() else Path(path)
    if path.exists() and not path.is_file():
        try:
            write(path)
        except OSError as error:
            raise DataError(f"Cannot write '{shown}' ({error.strerror or error}).") from None
        return
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
