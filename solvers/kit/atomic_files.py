"""Files made durable: a file or a folder synced to disk, so a rename that follows it
survives a crash with the bytes it names.  Nothing of a game or a solver: the pipeline's
store and the checkpoints of long tasks both use it."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from solvers.kit.safe_folders import kind


def fsync_tree(path: Path) -> None:
    if kind(path) == "file":
        fsync_file(path)
        return
    for folder, _dirs, files in os.walk(path, followlinks=False):
        for name in files:
            if kind(Path(folder, name)) == "file":
                fsync_file(Path(folder, name))
        fsync_dir(Path(folder))


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):  # some file systems refuse fsync on a folder
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
