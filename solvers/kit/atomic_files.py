"""A file replaced whole or not at all, and files made durable.

:func:`replace_file` writes a file over a path the one way the project does: the bytes go
into a new temporary file beside it (never through a link: ``O_EXCL | O_NOFOLLOW``), are
synced to disk, and the temporary is renamed over the path, then the folder is synced, so a
reader or a crash sees the old file or the new one, whole, and never a file whose rename
survived without its bytes.  The pipeline's store (its new files and its compaction), its
summary and report (:func:`pipeline.storage.safe_paths.write_replacing`) and the seals of checkpoint
pieces all write so.  Nothing of a game or a solver: the pipeline and the solvers' kit both
import it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from solvers.kit.safe_folders import kind

Writer = Callable[[BinaryIO], object]  # writes a file's content into the open file it is given


def replace_file(path: Path, write: Writer, *, tmp: Path | None = None, mode: int = 0o666) -> Path:
    """Write the file ``path`` whole, by ``write(fh)`` on a new temporary file ``tmp``
    (default ``.<name>.tmp`` beside it), synced to disk and renamed over ``path`` (a link or
    file there is replaced, never written through), then the folder synced; returns
    ``path``.  A stale entry at ``tmp`` that is not a folder is removed first (a link: the
    entry, never its target); on any failure the temporary goes and ``path`` is as it was."""
    tmp = path.with_name(f".{path.name}.tmp") if tmp is None else tmp
    if kind(tmp) not in (None, "folder"):
        tmp.unlink()
    try:
        write_new_file(tmp, write, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(path.parent)
    return path


def write_new_file(path: Path, write: Writer, mode: int = 0o666) -> None:
    """Create the file ``path`` (it must not exist; a link there fails, never followed) with
    ``mode`` (less the umask), fill it by ``write(fh)`` and sync it to disk."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with open(fd, "wb") as fh:
        write(fh)
        fh.flush()
        os.fsync(fh.fileno())


def fsync_tree(path: Path) -> None:
    """Sync to disk the file ``path``, or every file and folder of the folder ``path`` (links
    not followed)."""
    if kind(path) == "file":
        fsync_file(path)
        return
    for folder, _dirs, files in os.walk(path, followlinks=False):
        for name in files:
            if kind(Path(folder, name)) == "file":
                fsync_file(Path(folder, name))
        fsync_dir(Path(folder))


def fsync_file(path: Path) -> None:
    """Sync the regular file ``path`` to disk (a link fails, never followed)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    """Sync the folder ``path`` (its entries: a rename in it) to disk, where the file
    system allows it."""
    with contextlib.suppress(OSError):  # some file systems refuse fsync on a folder
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
