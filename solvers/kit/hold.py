"""The hold on a task's checkpoint folder: one computation of a task writes it at a time.

The pipeline holds the folder of each task it runs (:meth:`Checkpoints.hold
<solvers.kit.checkpoints.Checkpoints.hold>`): on first use the computation locks
``<folder>/.computing`` (``flock``) for the rest of its run, and a second computation of the
same task (a run stopped while its workers went on, started again) waits for it, saying so
once.  The folder's ``.lock`` (tasks sharing a folder take turns) is opened the same way.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

from solvers.kit.safe_folders import article, kind

HELD = ".computing"  # <folder>/.computing: locked by the computation holding the folder


class Hold:
    """The lock on ``<folder>/.computing`` of a held checkpoint folder, taken on first use:
    at once when free, else after one line to ``warn`` naming the holder (its pid, host and
    start, written in the file by the holder), waiting until the holder ends.  On a file
    system without locks the computation goes on unheld.  ``prepare(warn)`` makes the
    folder and sets aside its own entries that are not what they must be (a ``.computing``
    that is a link or a FIFO is never opened)."""

    def __init__(
        self,
        folder: Path,
        prepare: Callable[[Callable[[str], None]], None],
        warn: Callable[[str], None],
    ):
        self.folder, self.prepare, self.warn = folder, prepare, warn
        self.fd: int | None = None
        self.said = False  # the one line was said (a wait is said once)
        self.mutex = threading.Lock()  # a task's threads may touch its folder at once

    def acquire(self) -> None:
        if self.fd is not None:
            return
        import socket

        with self.mutex:
            if self.fd is not None:
                return
            while self.fd is None:
                fd = self._locked()
                me = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()}
                try:
                    if not self._still_there(fd):  # the folder was cleared while this waited
                        os.close(fd)
                        continue
                    os.ftruncate(fd, 0)
                    os.pwrite(fd, json.dumps(me).encode(), 0)
                except BaseException:
                    os.close(fd)
                    raise
                self.fd = fd

    def _locked(self) -> int:
        """The open ``.computing`` of the folder (made if missing), locked: at once, or after
        the one line (unless said before) and a wait for its holder to end."""
        import fcntl

        self.prepare(self.warn)
        fd = open_lock_file(self.folder / HELD)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if not self.said:
                    self.said = True
                    self.warn(
                        f"the checkpoints of task {self.folder.name} are held by another "
                        f"computation of it ({_holder(fd)}: a run stopped while its workers "
                        "went on?); this one waits for it to end, then goes on from the "
                        "pieces it committed"
                    )
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError as exc:
                if exc.errno not in _NO_LOCKS:
                    raise OSError(
                        exc.errno, f"cannot lock {self.folder / HELD} ({exc.strerror})"
                    ) from exc
                # a file system without locks: the computation goes on unheld
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _still_there(self, fd: int) -> bool:
        """Whether the locked file is still the folder's ``.computing`` (the holder's run may
        have stored the task and cleared the folder while this waited: a lock on a removed
        file holds nothing)."""
        try:
            here = os.stat(self.folder / HELD, follow_symlinks=False)
        except FileNotFoundError:
            return False
        return os.path.samestat(os.fstat(fd), here)

    def release(self) -> None:
        with self.mutex:
            if self.fd is not None:
                os.close(self.fd)  # releases the lock
                self.fd = None


_NO_LOCKS = (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS)


def _holder(fd: int) -> str:
    """Who holds a ``.computing`` lock, as its holder wrote it."""
    try:
        held = json.loads(os.pread(fd, 4096, 0) or b"{}")
        since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(held["since"])))
        return f"pid {int(held['pid'])} on {held['host']}, since {since}"
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return "holder unknown"


def open_lock_file(path: Path) -> int:
    """The folder's own lock file ``path`` opened for reading and writing (made if missing),
    never through a link nor blocking on a FIFO; OSError naming it if it is not a regular
    file."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
    except OSError as exc:
        what = kind(path)
        if what in (None, "file"):
            raise
        raise OSError(exc.errno, f"{path} is {article(what)}, where a lock file belongs") from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"{path} is {article(kind(path) or 'gone')}, where a lock file belongs")
    os.set_blocking(fd, True)
    return fd
