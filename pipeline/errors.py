"""The errors a user meets: each carries one line that names what is wrong and where.

:class:`StudyError` is every bad config value (the key and the value named, raised before
any work, exit status 2); :class:`UnsafePath` a path the store would have to follow out of
its study folder or open although it is not a regular file; :class:`StoreError` a results
file the store cannot write; :class:`BadInput` and :class:`Unreadable` a stored study that
``describe``, ``reproduce`` or ``index`` cannot read as given.
"""

from __future__ import annotations

from pathlib import Path


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
