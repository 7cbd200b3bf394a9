"""Write a folder's files in a staging folder, and move them in only when all are written.

A family's summary writes its tables and figures into ``summary/`` with its own calls
(``DataFrame.to_parquet``, ``Figure.savefig``); a full disk in the middle of one left a
truncated file there.  :func:`staged` gives the writers a fresh folder of the same name
instead; once every file is written they are renamed into the real folder (a rename needs no
space and is atomic), and on any failure the staging folder goes with everything in it, so
the real folder keeps only complete files.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

STALE = re.compile(r"\..+\.staging-(\d+)")  # a staging folder (below), and its process's id


@contextlib.contextmanager
def staged(folder: Path) -> Iterator[Path]:
    """A new, empty folder named ``folder.name`` (links written into it keep working) in a
    hidden folder beside ``folder``; on success its entries replace those of ``folder``
    (made if missing), and the staging folder is removed whatever happens."""
    parent = folder.parent / f".{folder.name}.staging-{os.getpid()}"
    if parent.is_symlink() or parent.is_file():
        parent.unlink()
    shutil.rmtree(parent, ignore_errors=True)  # a leftover of a process killed mid-write
    stage = parent / folder.name
    stage.mkdir(parents=True)
    try:
        yield stage
        folder.mkdir(exist_ok=True)
        for entry in sorted(stage.iterdir()):
            target = folder / entry.name
            if entry.is_dir() and target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)  # os.replace cannot put a folder over a full one
            os.replace(entry, target)
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def remove_stale(where: Path) -> list[Path]:
    """Remove the staging folders in ``where`` of processes that are gone (a summary killed
    mid-write leaves its ``.summary.staging-PID`` for ever otherwise); those of live
    processes stay.  The entries themselves go: a link is unlinked, never followed.
    Returns what was removed."""
    removed = []
    try:
        entries = list(os.scandir(where))
    except OSError:
        return removed
    for entry in entries:
        found = STALE.fullmatch(entry.name)
        if found is None or _alive(int(found.group(1))):
            continue
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this machine (one of another user's counts too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
