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

A claim is ``<study>/.claims/<host>-<pid>-<n>.json``: who (host, process id, start, command
line) and what (the study's config and ``store.recompute``).  A run checking it rebuilds that
run's plan, takes out what the store holds by then (the tasks that run stored are no longer
its), and counts the tasks both would compute; so a claim costs nothing while a run is alone
(no list of millions of ids is written), and the ids are hashed only when another run is
computing.  Claims are made and read under the study lock
(:func:`pipeline.locking.study_lock`), and a run holds an ``flock`` on its claim while it
computes: the kernel releases it when the process dies, so a claim nobody holds is a killed
run's, and is removed.
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
from typing import TYPE_CHECKING

import numpy as np

from pipeline.config import StudyError, short_repr
from pipeline.ids import ID_LENGTH, IdSet
from pipeline.launchers import user_command
from pipeline.locking import command_line
from pipeline.safe_paths import ensure_dir, open_regular, regular_files
from pipeline.study import Plan, planned

if TYPE_CHECKING:
    from pipeline.store import StoredIds
    from pipeline.study_run import StudyRun

CLAIMS = ".claims"  # <study>/.claims/: the claims of the runs computing in the study folder
_COUNTER = itertools.count()  # several claims of one process (multirun jobs in threads)


class Claim:
    """This run's claim on its tasks: held from :func:`claim` until the ``with`` block on it
    ends, which removes its file and releases its lock."""

    def __init__(self, fd: int | None = None, path: Path | None = None):
        self.fd, self.path = fd, path

    def __enter__(self) -> Claim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def release(self) -> None:
        if self.path is not None:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
        if self.fd is not None:
            os.close(self.fd)  # releases the lock
            self.fd = None
        if self.path is not None:
            with contextlib.suppress(OSError):  # other runs' claims are in it
                self.path.parent.rmdir()
            self.path = None


def claim(run: StudyRun, left: Plan, stored: StoredIds) -> Claim:
    """Claim the tasks ``left`` of ``run`` (the store holding ``stored``); StudyError (one
    line naming the other run) if a live run computes one of them.  Call under the study
    lock."""
    if not len(left):
        return Claim()
    live = _live_claims(run.folder / CLAIMS)
    if live:
        ours = IdSet(_ids(left))
        for who in live:
            shared, why = _shared(who, ours, stored)
            if shared:
                raise StudyError(_refusal(run, who, shared, len(ours), why))
    return _written(run)


def _ids(left: Plan) -> np.ndarray:
    chunks = list(left.id_chunks())
    return np.concatenate(chunks) if chunks else np.zeros(0, f"S{ID_LENGTH}")


def _shared(who: dict, ours: IdSet, stored: StoredIds) -> tuple[int, str]:
    """How many of ``ours`` the claim ``who`` holds (its study's tasks the store lacks), and
    why they are all counted when its tasks cannot be listed here."""
    try:
        theirs = planned(who["study"]).left_to_run(stored, recompute=who.get("recompute") is True)
        return sum(int(ours.contains(ids).sum()) for ids in theirs.id_chunks()), ""
    except Exception as exc:  # another version, a family unknown here: assume the worst
        return len(ours), f"; its tasks cannot be listed here ({type(exc).__name__}: {exc})"


def _refusal(run: StudyRun, who: dict, shared: int, ours: int, why: str) -> str:
    started = who.get("started")
    when = (
        time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(started))
        if isinstance(started, int | float)
        else "?"
    )
    other = (
        f"process {who.get('pid', '?')} on host {who.get('host', '?')}, started {when}: "
        f"{who.get('command', '?')}{why}"
    )
    return (
        f"paths.outputs={short_repr(run.outputs)}: another run is computing {shared} of the "
        f"{ours} task(s) this run would compute in the study folder {run.folder} ({other}); "
        "nothing was run: wait for that run to end (or stop it), then run the same command "
        "again (the tasks it stored are skipped)"
    )


def _live_claims(folder: Path) -> list[dict]:
    """What each claim a live run holds in ``folder`` says; the claims nobody holds (killed
    runs') are removed."""
    live = []
    for path in sorted(regular_files(folder, suffix=".json")):
        try:
            fd = open_regular(path, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # its run holds it: live
            live.append(_who(fd, path))
        else:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        finally:
            os.close(fd)
    return live


def _who(fd: int, path: Path) -> dict:
    try:
        with os.fdopen(os.dup(fd), "rb") as fh:
            who = json.loads(fh.read())
        if isinstance(who, dict):
            return who
    except (OSError, ValueError):
        pass
    return {"command": f"? (its claim {path} is unreadable)"}


def _written(run: StudyRun) -> Claim:
    """This run's claim, locked before anything is written in it (a run killed while
    writing leaves a claim nobody holds, removed as stale)."""
    folder = run.folder / CLAIMS
    path = folder / f"{socket.gethostname()}-{os.getpid()}-{next(_COUNTER)}.json"
    for attempt in range(5):
        ensure_dir(folder, run.folder)
        try:  # a run ending may remove the folder, empty, between the two calls
            fd = open_regular(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            break
        except FileNotFoundError:
            if attempt == 4:
                raise
    fcntl.flock(fd, fcntl.LOCK_EX)
    made = Claim(fd, path)
    try:
        who = {
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "started": time.time(),
            "command": _command(),
            "study": run.conf.study.plain(),
            "recompute": run.conf.store.recompute,
        }
        data = json.dumps(who).encode()
        while data:
            data = data[os.write(fd, data) :]
    except BaseException:
        made.release()
        raise
    return made


def _command(limit: int = 160) -> str:
    """The command line of this run for a message (``python -m pipeline ...``), one line: a
    multirun job's is the user's command, not its worker process's."""
    text = user_command() or command_line(os.getpid(), limit=limit)
    text = text if len(text) <= limit else text[: limit - 3] + "..."
    if text == "?":
        text = " ".join(sys.argv)[:limit]
    return " ".join(text.split())
