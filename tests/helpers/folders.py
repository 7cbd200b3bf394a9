"""Copies and snapshots of folders a run wrote."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def copy_outputs(outputs: Path, to: Path) -> Path:
    """A copy of the outputs folder ``outputs`` at ``to`` (links copied as links), to change."""
    return Path(shutil.copytree(outputs, to, symlinks=True))


def snapshot(root: Path) -> dict[str, object]:
    """Every entry under ``root`` (links not followed): a file's bytes, a link's target."""
    out: dict[str, object] = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in (*dirs, *files):
            path = Path(folder, name)
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path))
            elif path.is_file():
                out[rel] = path.read_bytes()
            else:
                out[rel] = "folder"
    return out
