"""Another process holding a file lock (an ``flock``), as a live run or another account's
process would: :func:`held`; and whether a lock is held: :func:`still_held`."""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

# the holder: takes the flock, then (given an account) runs as that account, says "held", and
# holds the lock until its stdin is closed (at most 300 s)
HOLD = """
import fcntl, os, select, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
if len(sys.argv) > 2:
    os.setgid(int(sys.argv[2]))
    os.setuid(int(sys.argv[2]))
print("held", flush=True)
select.select([sys.stdin], [], [], 300)
"""


@contextlib.contextmanager
def held(lock: str | Path, account: int | None = None) -> Iterator[subprocess.Popen]:
    """Another process holding the flock on ``lock`` (made if missing, with its folder)
    inside the block; given ``account`` (a uid; root only), running as that account."""
    Path(lock).parent.mkdir(parents=True, exist_ok=True)
    extra = [] if account is None else [str(account)]
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock), *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "held\n"
        yield holder
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
        holder.stdout.close()


def still_held(lock: str | Path) -> bool:
    """Whether a process holds the flock on ``lock`` (this one does not)."""
    fd = os.open(lock, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
