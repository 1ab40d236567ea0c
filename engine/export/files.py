"""Atomic file writes, so an export that fails never leaves a broken file behind.

A writer that raises halfway (a bug, a full disk, Ctrl+C) would otherwise leave a
truncated model or script that looks valid at a glance, or destroy the previous good
export it was replacing.  Everything is written to a temporary file in a hidden
folder beside the target (same file system, so the final rename is atomic) and renamed
into place only once complete.  `write_all` does that for several files at once, all
or nothing: a run asked for a model and a script must not leave the model alone when
the script fails (every file is written before any is renamed into place).

Only regular files are replaced that way.  A symbolic link is followed (its target is
written, the link stays), and a pipe or device such as `/dev/stdout` is written
directly: renaming over it would replace it with a plain file.  `check_output` refuses
what cannot be written (a folder, a missing folder, a name longer than the file
system allows) before any work starts.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Callable, Sequence
from contextlib import suppress
from pathlib import Path

from engine.errors import DataError, OrchardError

NAME_MAX = 255   # bytes in a file name where the file system does not say (Windows, ...)


def check_output(path: str | Path) -> None:
    """Raise a one-sentence DataError if `path` cannot be written as a file."""
    path = Path(path)
    try:
        target = _target(path)
        if target.is_dir():
            raise DataError(f"'{path}' is a folder: give the name of a file to write.")
        if target.exists() and not target.is_file():
            return   # a pipe or a device: written directly
        folder = target.parent
        if not folder.is_dir():
            raise DataError(f"Cannot write '{path}': the folder '{folder}' does not "
                            "exist.")
        if not os.access(folder, os.W_OK):
            raise DataError(f"Cannot write '{path}': the folder '{folder}' is not "
                            "writable.")
        size, limit = len(os.fsencode(target.name)), _name_max(folder)
        if size > limit:
            raise DataError(f"Cannot write '{path}': the file name is too long ({size} "
                            f"bytes; the file system allows {limit}).")
    except OSError as error:   # e.g. a whole path longer than the system allows
        raise DataError(f"Cannot write '{path}' ({error.strerror or error}).") from None


def write_atomically(path: str | Path, write: Callable[[Path], None]) -> None:
    """Call `write(temporary_path)`, then move the finished file to `path`.

    On any failure the temporary file is removed and `path` is left untouched; an
    OSError (missing folder, no permission, full disk) becomes a one-sentence
    DataError for the user, anything else propagates unchanged.  A symbolic link's
    target is written; a pipe or device is written directly (see the module doc).
    """
    write_all([(path, write)])


def write_all(outputs: Sequence[tuple[str | Path, Callable[[Path], None]]]) -> None:
    """Write every `(path, write)` of `outputs` as `write_atomically` does, all or
    nothing: each `write(temporary_path)` runs first, and only once all have succeeded
    are the files renamed into place.  On any failure every temporary file and every
    output already renamed in this call is removed (a rename fails only in rare cases,
    so the second half is a last resort); an OSError becomes one sentence naming the
    file.  Pipes and devices are written directly and cannot be taken back.

    A temporary file has its target's very name, in a new hidden folder beside it: a
    writer may take the format or a title from the name (images), and a name as long
    as the file system allows still fits.  A writer's own one-sentence error naming
    that file is made to name the user's."""
    for path, _ in outputs:
        check_output(path)
    staged, moved = [], []     # (temporary, target, shown) being written; targets renamed
    shown = None
    try:
        for shown, write in outputs:
            target = _target(Path(shown))
            if target.exists() and not target.is_file():
                write(target)
                continue
            folder = target.with_name(f".{secrets.token_hex(4)}.orchard-tmp")
            folder.mkdir()
            staged.append((folder / target.name, target, shown))
            write(folder / target.name)
        for temporary, target, shown in staged:
            os.replace(temporary, target)
            moved.append(target)
    except BaseException as error:
        for target in moved:
            with suppress(OSError):
                target.unlink()
        if isinstance(error, OSError):
            raise DataError(f"Cannot write '{shown}' "
                            f"({error.strerror or error}).") from None
        if isinstance(error, OrchardError):
            error.args = (_as_given(str(error), staged),)
        raise
    finally:
        for temporary, _, _ in staged:
            shutil.rmtree(temporary.parent, ignore_errors=True)


def _target(path: Path) -> Path:
    """The file `path` names: a symbolic link's target, or `path` itself."""
    return path.resolve() if path.is_symlink() else path


def _as_given(message: str, staged: list[tuple[Path, Path, str | Path]]) -> str:
    """`message` naming the files and folders the user gave, not the temporary ones."""
    for temporary, target, shown in staged:
        message = message.replace(str(temporary), str(shown))
        message = message.replace(str(temporary.parent), str(target.parent))
    return message


def _name_max(folder: Path) -> int:
    """The longest file name, in bytes, that `folder`'s file system accepts."""
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (AttributeError, OSError, ValueError):   # no pathconf, or no answer
        return NAME_MAX
