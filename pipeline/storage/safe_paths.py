"""The file-system rule of the store: nothing outside the study folder is read, moved or
deleted, and nothing but a regular file is ever opened.

The study folder is ``<paths.outputs>/<study.name>`` (``paths.outputs`` with its own links
resolved: pointing it at another disk is the user's choice).  Below it no symbolic link is
ever followed:

- :meth:`~pipeline.storage.study_folder.StudyFolder.check_safe` (called by every run, before any
  work) refuses a study folder in which a folder the pipeline uses (the study folder
  itself, ``results``, ``results/family=*``, ``quarantine``, ``summary``, ``runs``,
  ``checkpoints``, ``.claims`` and what is below ``summary`` and ``runs``) or a file it
  opens by name (``.lock``, ``.running``) is a link or a special file: the run exits 2
  naming the path, and touches nothing.  So does an entry of ``checkpoints`` or
  ``checkpoints/shared`` that is not a real folder (each is the checkpoint folder of a task
  or of a shared key).  Below those, :class:`solvers.kit.checkpoints.Checkpoints` follows no
  link either: it sets aside, with one line, an entry of its own (``.seals``,
  ``damaged``...) that is not what it must be.
- The readers (:func:`regular_files`, :func:`real_subdirs`) list entries with ``lstat``
  semantics: a link, a FIFO, a socket, a device or a folder named like a results file is
  never listed, so it is never opened (a FIFO cannot hang a reader, a link cannot bring in
  another folder's rows).  The store's upkeep
  (:func:`~pipeline.storage.store_upkeep.quarantine_bad_files`) moves each (the entry itself,
  by ``rename``: a link's target is never touched) to ``quarantine/``.
- Folders are created one level at a time and checked (:func:`ensure_dir`), and files are
  created with ``O_NOFOLLOW`` (:func:`open_regular`, :func:`write_replacing`), so a link put
  in place of a folder or a file is refused rather than written through.

The checks are ``lstat`` calls on entries as found; they guard against a link or a special
file that is there before or between runs (a mistake, or a hostile file in a shared folder),
not against the account that owns the study folder swapping entries while a run reads them.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

from pipeline.errors import UnsafePath
from solvers.kit.atomic_files import replace_file
from solvers.kit.safe_folders import ensure_folder, kind

# What the pipeline writes in paths.outputs itself, beside the study folders: the index of
# the studies (pipeline.outputs.index; its temporary has a hidden name, as every temporary)
INDEX_NAME = "index.html"
OUTPUTS_FILES = (INDEX_NAME,)
NAME_MAX = 255  # bytes in one file or folder name (Linux, macOS and their file systems)
PATH_MAX = 4096  # bytes in a path Linux accepts
BELOW_STUDY = 512  # bytes kept for the store's own paths below a study folder


def study_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a study folder in paths.outputs, or None: it must be one
    plain folder name (no ``/`` or NUL, not hidden, at most NAME_MAX bytes) and none of the
    names the pipeline writes in paths.outputs itself (OUTPUTS_FILES, in any letter case:
    some file systems ignore it)."""
    if not name or "/" in name or "\0" in name or name.startswith("."):
        return "must be a plain, non-empty name (one folder name: no '/' or NUL, no leading '.')"
    try:
        size = len(os.fsencode(name))
    except UnicodeEncodeError:
        return "must be a plain, non-empty name (this one cannot be a file name: not encodable)"
    if size > NAME_MAX:
        return f"a name of {size} bytes; a folder name has at most {NAME_MAX} bytes"
    taken = [n for n in OUTPUTS_FILES if n.casefold() == name.casefold()]
    if taken:
        case = "" if taken[0] == name else "; some file systems ignore letter case"
        return (
            f"the name of a file guesslab writes in paths.outputs beside the study folders "
            f"({taken[0]}, the index of the studies{case}); choose another name"
        )
    return None


def path_length_problem(folder: Path) -> str | None:
    """Why the store cannot live in the absolute path ``folder``, or None: a name in it of
    more than NAME_MAX bytes, or a path too long to leave BELOW_STUDY bytes below it within
    PATH_MAX (checked on the path's text: nothing is opened or made)."""
    for part in folder.parts:
        size = len(os.fsencode(part))
        if size > NAME_MAX:
            return (
                f"it holds a folder name of {size} bytes ({part[:12]}...); a folder name has "
                f"at most {NAME_MAX} bytes"
            )
    size = len(os.fsencode(str(folder)))
    if size > PATH_MAX - BELOW_STUDY:
        return (
            f"the study folder's path has {size:,} bytes; it has at most "
            f"{PATH_MAX - BELOW_STUDY:,} (the longest path Linux accepts, {PATH_MAX:,} bytes, "
            f"less {BELOW_STUDY} for the store's own paths below it)"
        )
    return None


def is_real_dir(path: Path) -> bool:
    """Whether ``path`` is a folder (not a link to one)."""
    return kind(path) == "folder"


def _article(what: str) -> str:
    return {"file": "a file", "folder": "a folder"}.get(what, what)


def real_subdirs(folder: Path, prefix: str = "") -> Iterator[Path]:
    """The folders (not links to folders) directly in ``folder`` whose names start with
    ``prefix``; nothing if ``folder`` is not a real folder."""
    if not is_real_dir(folder):
        return
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.startswith(prefix) and entry.is_dir(follow_symlinks=False):
                yield Path(entry.path)


def regular_files(folder: Path, prefix: str = "", suffix: str = "") -> list[Path]:
    """The regular files (no links, FIFOs, sockets, devices or folders) directly in a real
    ``folder`` whose names start with ``prefix`` and end with ``suffix``."""
    if not is_real_dir(folder):
        return []
    with os.scandir(folder) as entries:
        return [
            Path(e.path)
            for e in entries
            if e.name.startswith(prefix)
            and e.name.endswith(suffix)
            and e.is_file(follow_symlinks=False)
        ]


def ensure_dir(path: Path, below: Path) -> Path:
    """Create ``path`` (a folder below the folder ``below``, made if missing) one level at
    a time; UnsafePath if any level below ``below`` is a link or not a folder.  Returns
    ``path``."""
    return ensure_folder(path, below, _not_a_store_folder)


def _not_a_store_folder(here: Path, what: str) -> UnsafePath:
    return UnsafePath(
        f"{here} is {_article(what)}, where the store needs a real folder; "
        "guesslab never follows a link out of its study folder: move it away"
    )


def open_regular(path: Path, flags: int, mode: int = 0o666) -> int:
    """``os.open`` that never follows a link and never blocks on a FIFO; UnsafePath unless
    what it opened is a regular file."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK, mode)
    except OSError as exc:
        what = kind(path)
        if what not in (None, "file"):
            raise UnsafePath(f"{path} is {_article(what)}, where a regular file belongs") from exc
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        what = kind(path)
        os.close(fd)
        raise UnsafePath(f"{path} is {_article(what or 'gone')}, where a regular file belongs")
    os.set_blocking(fd, True)
    return fd


def write_replacing(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a new temporary file beside it, renamed into place
    (a link or file at ``path`` is replaced, never written through)."""
    tmp = path.with_name(f".{path.name}.tmp")
    what = kind(tmp)
    if what == "folder":
        raise UnsafePath(f"{tmp} is a folder, where a temporary file goes: move it away")
    # a stale temporary (or a link) is removed: the entry goes, a target is untouched
    return replace_file(path, lambda fh: fh.write(data), tmp=tmp)
