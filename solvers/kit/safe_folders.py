"""Folders and entries seen without following a link: what an entry is, and a folder made
one level at a time below a root, each level checked to be a real folder.  The store
(pipeline.storage.safe_paths) and the checkpoints of long tasks (solvers.kit.checkpoints) both stand
on these, each naming its own exception and message."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from pathlib import Path


def kind(path: Path) -> str | None:
    """What ``path`` is, without following a link: "folder", "file", "a symbolic link (to
    X)", "a FIFO"..., or None if there is nothing there."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):  # nothing there (or a file above it)
        return None
    return _kind_of_mode(path, mode)


def article(what: str) -> str:
    """What :func:`kind` says, for a sentence: "a file", "a folder", "a FIFO"..."""
    return {"file": "a file", "folder": "a folder"}.get(what, what)


def _kind_of_mode(path: Path, mode: int) -> str:
    """What an entry of ``lstat`` mode ``mode`` is (see :func:`kind`)."""
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        try:
            return f"a symbolic link (to {os.readlink(path)})"
        except OSError:
            return "a symbolic link"
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def ensure_folder(path: Path, below: Path, refused: Callable[[Path, str], Exception]) -> Path:
    """Create ``path`` (a folder below the folder ``below``, both made if missing) one level
    at a time; raises ``refused(level, what it is)`` if ``below`` or any level below it is a
    link or not a folder ("gone" when it vanished).  Returns ``path``."""
    rel = path.relative_to(below)
    if kind(below) is None:
        below.mkdir(parents=True, exist_ok=True)
    here = below
    for part in ("", *rel.parts):
        here = here / part if part else below
        with contextlib.suppress(FileExistsError):
            os.mkdir(here)
        what = kind(here)
        if what != "folder":
            raise refused(here, what or "gone")
    return path
