"""The lock a kernel holds on this machine while it compiles, and how a compilation waits.

A kernel's lock is an ``flock`` on ``<kernel>.lock`` beside its entry in Numba's cache folder
(:mod:`solvers.kit.compile_once`).  Only a compilation takes it: a kernel that Numba's cache
holds is loaded without it.  What another account can do to it is bounded:

- The lock file is mode 0600 whatever the umask (an older one, more open, is made so when this
  account opens it): another account cannot open it, so cannot hold it.
- A lock file of another account (made in a shared ``NUMBA_CACHE_DIR``), or a lock held by a
  process of another account (opened while the file was still readable by all), could be
  held for ever: it is not waited for.  One line says so, naming the account and the
  holder, and the kernel is compiled without it.

A lock held by a process of this account (another worker compiling the kernel) is waited
for, at most :data:`WAIT_AT_MOST` seconds: after :data:`SAY_AFTER` seconds one line says
what the wait is for and who holds the lock (process id and command line), and a lock still
held at the end of the wait is said again and the kernel compiled without it.  Ctrl-C and
SIGTERM end the wait at once, inside :func:`solvers.kit.compiled.ctrl_c_held` too (where the
ranked solver calls, so compiles, its kernels).

Why a try every :data:`POLL` seconds and not a blocking ``flock``: a blocking ``flock``
cannot be given up after a time, and inside ``ctrl_c_held`` a signal is only noted, so
Python would go back to the ``flock`` until the lock is released.  The study's locks
(:meth:`pipeline.storage.study_folder.StudyFolder.locked`) block, and say who holds them, the
same way.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Callable, Iterator

from solvers.kit.compiled import stop_noted
from solvers.kit.lock_holders import account_of, account_text, holders_text, lock_holders

try:
    import fcntl
except ImportError:  # no flock (Windows): each process compiles as Numba alone does
    fcntl = None  # type: ignore[assignment]

OWNER_ONLY = 0o600  # a lock file's mode: another account cannot open it, so cannot hold it
SAY_AFTER = 2.0  # seconds of waiting for a lock before the wait is said
WAIT_AT_MOST = 300.0  # seconds of waiting for a lock of this account before compiling anyway
POLL = 0.05  # seconds between two tries of a held lock
_HELD: dict[str, list[int]] = {}  # lock path -> [open file, depth], this process's locks


@contextlib.contextmanager
def machine_lock(path: str, kernel: str, say: Callable[[str], None]) -> Iterator[None]:
    """Hold the ``flock`` on ``path`` (made if missing) inside the block, for the compilation
    of ``kernel`` (its name in the lines said to ``say``); held already by this process, it
    is held once more.  Where no lock can be had (no such file system feature, another
    account's lock, a wait over :data:`WAIT_AT_MOST`) the block runs unlocked."""
    held = _HELD.get(path)
    if held is not None:
        held[1] += 1
        try:
            yield
        finally:
            held[1] -= 1
        return
    fd = _locked(path, kernel, say)
    if fd is not None:
        _HELD[path] = [fd, 1]
    try:
        yield
    finally:
        if fd is not None:
            del _HELD[path]
            os.close(fd)  # releases the lock


def _locked(path: str, kernel: str, say: Callable[[str], None]) -> int | None:
    """An open file of ``path`` holding its exclusive flock, or None when none is had."""
    if fcntl is None:
        return None
    flags = os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, OWNER_ONLY)
    except PermissionError:
        say(_without(kernel, f"this account cannot open its compile lock {path}"))
        return None
    except OSError:
        return None
    try:
        if _taken(fd, path, kernel, say):
            return fd
    except BaseException:  # Ctrl-C while waiting
        os.close(fd)
        raise
    os.close(fd)
    return None


def _taken(fd: int, path: str, kernel: str, say: Callable[[str], None]) -> bool:
    """Whether this process now holds the lock on ``fd`` (see the module's docstring)."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        return False
    if info.st_uid != os.geteuid():
        say(_without(kernel, f"its compile lock {path} is of {account_text(info.st_uid)}"))
        return False
    if stat.S_IMODE(info.st_mode) != OWNER_ONLY:
        os.fchmod(fd, OWNER_ONLY)
    start = time.monotonic()
    said = asked = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            pass
        except OSError:  # a file system without locks
            return False
        waited = time.monotonic() - start
        say_now = not said and waited >= SAY_AFTER
        if (not asked or say_now) and _another_accounts(path):
            say(_without(kernel, f"its compile lock {path} is held by {holders_text(path)}"))
            return False
        asked = True
        if say_now:
            said = True
            say(
                f"waiting for the Numba kernel {kernel}: {holders_text(path)} holds its "
                f"compile lock {path} (compiling it, once for this machine); this run loads "
                f"it when the lock is released, or compiles it itself after "
                f"{WAIT_AT_MOST:.0f} s"
            )
        if waited >= WAIT_AT_MOST:
            held = f"its compile lock {path} is still held after {waited:.0f} s"
            say(_without(kernel, f"{held} by {holders_text(path)}"))
            return False
        if stop_noted():  # Ctrl-C or SIGTERM noted by ctrl_c_held: the block hands it on
            raise KeyboardInterrupt
        time.sleep(POLL)


def _another_accounts(path: str) -> bool:
    """Whether a process of another account holds the flock on ``path``."""
    return any(account_of(pid) not in (None, os.geteuid()) for pid in lock_holders(path))


def _without(kernel: str, why: str) -> str:
    return f"the Numba kernel {kernel} is compiled without waiting for a lock: {why}"
