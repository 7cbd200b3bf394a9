"""File locks that let several jobs (a parallel Hydra multirun) share one study folder.

``study_lock`` serialises the store's upkeep (compaction, quarantine) and the summary, so
the last job to summarise sees every job's rows.  ``running`` is held (shared) by every job
while it computes; a job that gets it exclusively knows no other job is writing, so the
temporary files it finds were left by a killed run and may be deleted.

Why fcntl and not the filelock package: ``running`` needs a shared lock (every computing
job holds it at once) that one job can try to take exclusively; filelock offers only
exclusive locks.  flock is also released by the kernel when a killed job's process dies,
which is what lets the next run tell stale temporaries from a live job's.
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Callable, Iterator
from pathlib import Path


@contextlib.contextmanager
def study_lock(study_dir: Path) -> Iterator[None]:
    """Hold the study folder's exclusive lock (blocks until no other job holds it)."""
    study_dir.mkdir(parents=True, exist_ok=True)
    with open(study_dir / ".lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextlib.contextmanager
def running(study_dir: Path, when_alone: Callable[[], object]) -> Iterator[None]:
    """Mark this job as computing in the study; call ``when_alone()`` first if no other is."""
    study_dir.mkdir(parents=True, exist_ok=True)
    with open(study_dir / ".running", "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            when_alone()
        except BlockingIOError:
            pass  # another job is computing: its temporary files are not stale
        fcntl.flock(fh, fcntl.LOCK_SH)  # shared from here on (waits out a brief clean-up)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
