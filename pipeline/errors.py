"""The errors a user meets: each carries one line that names what is wrong and where.

:class:`StudyError` is every bad config value (the key and the value named, raised before
any work, exit status 2); :class:`UnsafePath` a path the store would have to follow out of
its study folder or open although it is not a regular file; :class:`StoreError` a results
file the store cannot write; :class:`BadInput` and :class:`Unreadable` a stored study that
``describe``, ``reproduce`` or ``index`` cannot read as given.  A value or a path an error
line quotes is shortened by :func:`short_repr` and :func:`short_path`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class StudyError(ValueError):
    """A study cannot run as configured: a config value (the study's, the run's, the
    cluster's) is invalid, and the message names the config key and the value.  Raised before
    any work; exit status 2.  The one exception of every bad config value."""


class UnsafePath(OSError):
    """A path the store would have to follow out of its study folder, or open although it
    is not a regular file; nothing was read, moved or deleted through it."""


class StoreError(OSError):
    """The store cannot be written (disk full, permissions); nothing partial was left.
    Raised from the OSError of the write, with the ``folder`` it was for."""

    folder: Path | None = None


class BadInput(ValueError):
    """The command cannot check what it was given (one line saying what and why)."""


class Unreadable(ValueError):
    """An entry of the study folder that is not read, and why (one line)."""


def short_path(path: Any, longest: int = 400) -> str:
    """A path as an error line shows it: whole, unquoted, up to ``longest`` characters (the
    rule of :func:`pipeline.cli.exit_lines.abbreviated`), else :func:`short_repr`'s cut with its
    length (a name too long for any file system)."""
    text = str(path)
    return text if len(text) <= longest else short_repr(text)


def short_repr(value: Any, limit: int = 80) -> str:
    """``repr(value)``, shortened in the middle past ``limit`` characters, with the length
    of the value (a text's characters, not those of its quoted form)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    size = len(value) if isinstance(value, str) else len(text)
    return f"{text[: limit // 2]}...{text[-limit // 4 :]} ({size:,} characters)"
