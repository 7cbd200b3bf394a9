"""One test process at a time installs what the machine lacks (the browser, Slurm)."""

from __future__ import annotations

import contextlib
import fcntl
import tempfile
from pathlib import Path


@contextlib.contextmanager
def one_process_at_a_time(name: str):
    """Hold a lock file named for ``name`` in the temporary folder while the block runs: the
    test processes (pytest-xdist) may each find the browser or Slurm missing, and two apt-get
    runs at once fail on dpkg's lock.  The later one waits, then finds the setup done.  The
    lock is this process's own (Python does not pass it on to the setup's daemons)."""
    with open(Path(tempfile.gettempdir()) / f"guesslab-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
