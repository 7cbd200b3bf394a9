"""The lock files that let several jobs (a parallel Hydra multirun) share one study folder.

:meth:`~pipeline.storage.study_folder.StudyFolder.locked` serialises the store's upkeep (compaction,
quarantine) and the summary, so the last job to summarize sees every job's rows.
:meth:`~pipeline.storage.study_folder.StudyFolder.running` is held (shared) by every job while it
computes; a job that gets it exclusively knows no other job is writing, so the
temporary files it finds were left by a killed run and may be deleted.  Jobs may compute
at once only when their tasks differ: :mod:`pipeline.running.claims` refuses a job whose tasks
another live job is computing (their checkpoint folders would be shared).

Why fcntl and not the filelock package: ``running`` needs a shared lock (every computing
job holds it at once) that one job can try to take exclusively; filelock offers only
exclusive locks.  flock is also released by the kernel when a killed job's process dies,
which is what lets the next run tell stale temporaries from a live job's.

The lock files (and the claims of :mod:`pipeline.running.claims`) are mode 0600 whatever the umask:
an flock needs an open file, so another account that cannot open them cannot hold them and
stall the study's runs.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from pathlib import Path

from pipeline.errors import StudyError
from pipeline.storage.safe_paths import open_regular
from solvers.kit.lock_holders import (  # noqa: F401 (pipeline.running.claims imports them from here)
    command_line,
    holders_text,
    lock_holders,
    visible,
)

LOCK_FILES = (".lock", ".running")


def open_lock(path: Path):
    """A lock file opened for appending, created if missing, readable and writable by its
    owner only (:func:`owner_only`); never through a link, never a FIFO or another special
    file (pipeline.errors.UnsafePath).  StudyError (one line) when this account may not
    open it (another account's)."""
    try:
        fd = open_regular(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, OWNER_ONLY)
    except PermissionError as exc:
        raise StudyError(not_ours(path, exc)) from None
    owner_only(fd)
    return open(fd, "a")  # noqa: SIM115


OWNER_ONLY = 0o600  # the mode of lock and claim files: read and written by their owner only


def owner_only(fd: int) -> None:
    """Make the open file ``fd`` mode 0600 if this account owns it (a file made under any
    umask, or left more open by an older guesslab); another account's file is left as it is."""
    st = os.fstat(fd)
    if st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) != OWNER_ONLY:
        os.fchmod(fd, OWNER_ONLY)


def not_ours(path: Path, exc: OSError) -> str:
    """The one line for a lock or claim file this account may not open."""
    try:
        owner = f"account uid {path.stat(follow_symlinks=False).st_uid}"
    except OSError:
        owner = "another account"
    return (
        f"{path}: this account cannot open it ({exc.strerror}): it belongs to {owner}, and "
        "the study's lock and claim files are readable by their owner only; run the study as "
        "that account, or choose another paths.outputs"
    )


def first_missing(path: Path) -> Path | None:
    """The outermost folder on the way to ``path`` (itself included) not there yet, or None."""
    missing = None
    for folder in (path, *path.parents):
        if folder.exists():
            break
        missing = folder
    return missing


def remove_if_untouched(root: Path) -> None:
    """Remove ``root`` if it holds nothing but empty folders and lock files no job holds.

    For a run that created ``root`` and failed before storing anything (e.g. the scheduler
    did not answer): it leaves nothing behind.  Any other file, or a lock another job holds,
    keeps it (and the folders above that file).
    """
    if not root.is_dir():
        return
    for path in sorted(root.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if path.is_dir() and not path.is_symlink():
            with contextlib.suppress(OSError):
                path.rmdir()  # only if empty
        elif path.name in LOCK_FILES:
            _unlink_if_free(path)
    with contextlib.suppress(OSError):
        root.rmdir()


def _unlink_if_free(path: Path) -> None:
    """Delete an empty lock file unless another job holds (or waits on) it."""
    try:
        with open_lock(path) as fh:
            if path.stat().st_size:
                return
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            path.unlink()
    except (OSError, StudyError):  # held by another job, already gone, or not ours
        return


def waiting_message(lock: Path) -> str:
    """What a job says while it waits for a lock: the lock file and who holds it."""
    who = holders_text(lock)
    return f"waiting: {who} holds the study lock {lock}; this run goes on when it is released"
