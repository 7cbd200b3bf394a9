"""Which run computes which tasks of a study folder: a run claims the tasks it is about to
compute, and a run whose tasks overlap a live claim is refused before it computes any.

Several runs may compute in one study folder at once when their tasks differ (the jobs of a
parallel multirun, one deck each: :mod:`pipeline.locking`).  Two runs computing the same task
would share its checkpoint folder (``<study>/checkpoints/<task id>/``): one clears it once
its row is stored while the other writes layers in it, and each replaces the pieces the
other commits.  So the second run of the same tasks (the same command started twice, or
two multirun jobs that share tasks) is refused with one line naming the other run (its
host, process id, start and command line) and exit status 2, before any task runs; the
first run goes on untouched.

A claim is ``<study>/.claims/<host>-<pid>-<n>.json`` (who: host, process id, start, command
line, number of tasks) and ``.ids`` beside it (the sorted ids of the tasks, 20 bytes each, as
a NumPy ``.npy`` file).  Claims are made and read under the study lock
(:func:`pipeline.locking.study_lock`), and a run holds an ``flock`` on its ``.json`` while it
computes: the kernel releases it when the process dies, so a claim nobody holds is a
killed run's, and is removed.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.config import StudyError, short_repr
from pipeline.ids import ID_LENGTH, IdSet
from pipeline.locking import command_line
from pipeline.safe_paths import ensure_dir, open_regular, regular_files
from pipeline.study import Plan

CLAIMS = ".claims"  # <study>/.claims/: the claims of the runs computing in the study folder
_COUNTER = itertools.count()  # several claims of one process (multirun jobs in threads)


class Claim:
    """This run's claim on its tasks: held from :func:`claim` until the ``with`` block on it
    ends, which removes its files and releases its lock."""

    def __init__(self, fd: int | None = None, paths: tuple[Path, ...] = ()):
        self.fd, self.paths = fd, paths

    def __enter__(self) -> Claim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def release(self) -> None:
        for path in self.paths:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        if self.fd is not None:
            os.close(self.fd)  # releases the lock
            self.fd = None
        if self.paths:
            with contextlib.suppress(OSError):  # other runs' claims are in it
                self.paths[0].parent.rmdir()


def claim(study_dir: Path, left: Plan, outputs: Any) -> Claim:
    """Claim the tasks of ``left`` for this run; StudyError (one line naming the other run)
    if a live claim of another run holds one of them.  Call under the study lock."""
    if not len(left):
        return Claim()
    ours = IdSet(_ids(left))
    for who, theirs in _live_claims(study_dir / CLAIMS):
        shared = len(ours) if theirs is None else int(theirs.contains(ours.ids).sum())
        if shared:
            raise StudyError(_refusal(study_dir, outputs, who, shared, len(ours)))
    return _written(study_dir, ours)


def _ids(left: Plan) -> np.ndarray:
    chunks = list(left.id_chunks())
    return np.concatenate(chunks) if chunks else np.zeros(0, f"S{ID_LENGTH}")


def _refusal(study_dir: Path, outputs: Any, who: dict, shared: int, ours: int) -> str:
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(who.get("started", 0))))
    other = (
        f"process {who.get('pid', '?')} on host {who.get('host', '?')}, started {started}: "
        f"{who.get('command', '?')}"
    )
    return (
        f"paths.outputs={short_repr(outputs)}: another run is computing {shared} of the "
        f"{ours} task(s) this run would compute in the study folder {study_dir} ({other}); "
        "nothing was run: wait for that run to end (or stop it), then run the same command "
        "again (the tasks it stored are skipped)"
    )


def _live_claims(folder: Path) -> list[tuple[dict, IdSet | None]]:
    """(who, their ids or None if unreadable) of each claim a live run holds in ``folder``;
    the claims nobody holds (killed runs') are removed."""
    live = []
    for path in sorted(regular_files(folder, suffix=".json")):
        try:
            fd = open_regular(path, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # its run holds it: live
            live.append((_who(fd, path), _their_ids(path.with_suffix(".ids"))))
        else:
            for stale in (path.with_suffix(".ids"), path):
                with contextlib.suppress(FileNotFoundError):
                    stale.unlink()
        finally:
            os.close(fd)
    return live


def _who(fd: int, path: Path) -> dict:
    try:
        with os.fdopen(os.dup(fd), "rb") as fh:
            who = json.loads(fh.read(1 << 16))
        return who if isinstance(who, dict) else {}
    except (OSError, ValueError):
        return {"command": f"? (its claim {path} is unreadable)"}


def _their_ids(path: Path) -> IdSet | None:
    """The ids of a claim's ``.ids`` file, or None when it cannot be read (then the claim
    counts as holding every task)."""
    try:
        fd = open_regular(path, os.O_RDONLY)
        with os.fdopen(fd, "rb") as fh:
            ids = np.load(fh, allow_pickle=False)
        if ids.dtype.kind != "S":
            return None
        return IdSet(ids, sorted_unique=True)
    except (OSError, ValueError):
        return None


def _written(study_dir: Path, ours: IdSet) -> Claim:
    """This run's claim files, locked: the lock is taken before anything is written in
    them, so a run killed while writing leaves a claim nobody holds (removed as stale)."""
    folder = study_dir / CLAIMS
    name = f"{socket.gethostname()}-{os.getpid()}-{next(_COUNTER)}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    for attempt in range(5):
        ensure_dir(folder, study_dir)
        try:  # a run ending may remove the folder, empty, between the two calls
            fd = open_regular(folder / f"{name}.json", flags, 0o644)
            break
        except FileNotFoundError:
            if attempt == 4:
                raise
    fcntl.flock(fd, fcntl.LOCK_EX)
    made = Claim(fd, (folder / f"{name}.ids", folder / f"{name}.json"))
    try:
        with os.fdopen(open_regular(made.paths[0], flags, 0o644), "wb") as fh:
            np.save(fh, ours.ids, allow_pickle=False)
        who = {
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "started": time.time(),
            "command": _command(),
            "tasks": len(ours),
        }
        os.write(fd, json.dumps(who).encode())
    except BaseException:
        made.release()
        raise
    return made


def _command(limit: int = 160) -> str:
    """This process's command line for a message (``python -m pipeline ...``), one line."""
    text = command_line(os.getpid(), limit=limit)
    if text == "?":
        text = " ".join(sys.argv)[:limit]
    return " ".join(text.split())
