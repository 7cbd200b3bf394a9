"""Which run computes which tasks of a study folder: a run claims the tasks it is about to
compute, and a run whose tasks overlap a live claim is refused before it computes any.

Several runs may compute in one study folder at once when their tasks differ (the jobs of a
parallel multirun, one deck each: :mod:`pipeline.storage.study_folder`). Two runs computing
the same task would share its checkpoint folder (``<study>/checkpoints/<task id>/``): one
clears it once its row is stored while the other writes layers in it, and each replaces the
pieces the other commits. So the second run of the same tasks (the same command started
twice, or two multirun jobs that share tasks) is refused with one line naming the other run
(its host, process id, start and command line) and exit status 2, before any task runs; the
first run goes on untouched.

A claim is ``<study>/.claims/<host>-<pid>-<n>.json``: who (host, process id, start, command
line) and what (the study's config and ``store.recompute``).  A run checking it rebuilds that
run's plan, takes out what the store holds by then (the tasks that run stored are no longer
its), and counts the tasks both would compute; so a claim costs nothing while a run is alone
(no list of millions of ids is written), and the ids are hashed only when another run is
computing.  Claims are made and read under the study lock
(:meth:`pipeline.storage.study_folder.StudyFolder.locked`), and a run holds an ``flock`` on its
claim while it computes: the kernel releases it when the process dies, so a claim nobody
holds is a killed run's (or one whose code ended its process), and is removed, in one line.

A claim is read as evidence, not trusted:

- Its file is mode 0600 (:data:`pipeline.storage.locking.OWNER_ONLY`, whatever the umask): another
  account cannot open it, so cannot hold its lock.
- A held claim naming a process of this host that is gone (no such process, or a zombie)
  is not believed, whoever holds its lock: it is removed, one line says so (naming the
  holders), and the run goes on.
- A held claim that is not what a run writes (over :data:`CLAIM_BYTES`, not JSON, nested
  past the parser's depth, a field missing or of another type) is *unreadable*: removed, in
  one line, and the run goes on.
- Listing a claim's tasks costs work in proportion to their number, so a claim whose study
  names more tasks than :data:`LISTED` or this run's own study (counted from its axes, before
  anything is planned) is not listed: all of this run's tasks count as its.
- What a claim says (host, process id, command line) reaches a message made visible
  (:func:`pipeline.storage.locking.visible`: control characters as escapes) and cut.
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
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.config import checked_study
from pipeline.errors import StudyError, short_repr
from pipeline.multirun_jobs import user_command
from pipeline.running.plan import StudyPlan, named_tasks, planned
from pipeline.storage.ids import IdSet
from pipeline.storage.locking import (
    OWNER_ONLY,
    command_line,
    holders_text,
    not_ours,
    owner_only,
    visible,
)
from pipeline.storage.safe_paths import ensure_dir, open_regular, regular_files
from solvers.kit.words import counted

if TYPE_CHECKING:
    from pipeline.storage.store_newest import StoredIds
# ``run`` is always the run's pipeline.run.StudyRun, not imported here, not even for a type
# checker: pipeline.run imports this module, and imports point one way (no cycle)

_COUNTER = itertools.count()  # several claims of one process (multirun jobs in threads)
CLAIM_BYTES = 1 << 20  # the most a claim's file holds; a larger study config is not listed
LISTED = 100_000  # a claim's tasks are listed up to this many (or as many as this run's own)


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


def claim(run, left: StudyPlan, stored: StoredIds) -> Claim:
    """Claim the tasks ``left`` of ``run`` (the store holding ``stored``); StudyError (one
    line naming the other run) if a live run computes one of them.  A claim not believed or
    unreadable is removed, said in one line to ``run.log``.  Call under the study lock."""
    if not len(left):
        return Claim()
    live = _live_claims(run.folder.claims, run.log)
    if live:
        ours = IdSet(left.ids())
        most = max(LISTED, run.plan.n_tasks)
        for who in live:
            shared, why = _shared(who, ours, stored, most)
            if shared:
                raise StudyError(_refusal(run, who, shared, len(ours), why))
    return _written(run)


def _shared(who: dict, ours: IdSet, stored: StoredIds, most: int) -> tuple[int, str]:
    """How many of ``ours`` the claim ``who`` holds (its study's tasks the store lacks), and
    why they are all counted when its tasks cannot be listed here (another version, a family
    unknown here, more than ``most`` tasks, a study config too large for its claim)."""
    if who["study"] is None:
        return len(ours), f"; its tasks cannot be listed here ({visible(who['unlisted'])})"
    try:
        study = checked_study(who["study"])
        named = named_tasks(study)
        if named > most:
            return len(ours), (
                f"; its tasks cannot be listed here (its study names up to {named:,} tasks: "
                f"a claim's are listed up to {most:,}, the larger of {LISTED:,} and this "
                "run's own)"
            )
        theirs = planned(study).left_to_run(stored, recompute=who["recompute"])
        return int(ours.contains(theirs.ids()).sum()), ""
    except Exception as exc:  # another version, a family unknown here: assume the worst
        why = visible(f"{type(exc).__name__}: {exc}")
        return len(ours), f"; its tasks cannot be listed here ({why})"


def _refusal(run, who: dict, shared: int, ours: int, why: str) -> str:
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(who["started"]))
    other = (
        f"process {who['pid']} on host {visible(who['host'], 80)}, started {when}: "
        f"{visible(who['command'])}{why}"
    )
    return (
        f"paths.outputs={short_repr(run.folder.outputs)}: another run is computing {shared} of the "
        f"{counted(ours, 'task')} this run would compute in the study folder {run.folder} "
        f"({other}); "
        "nothing was run: wait for that run to end (or stop it), then run the same command "
        "again (the tasks it stored are skipped)"
    )


def _live_claims(folder: Path, say: Callable[[str], object]) -> list[dict]:
    """What each claim a live run holds in ``folder`` says.  The claims nobody holds (killed
    runs') are removed; so are, each said in one line to ``say``, the held claims that are
    unreadable or name a process of this host that is gone."""
    live = []
    for path in sorted(regular_files(folder, suffix=".json")):
        try:
            fd = open_regular(path, os.O_RDONLY)
        except FileNotFoundError:
            continue
        except PermissionError as exc:  # another account's file: its lock cannot be seen
            raise StudyError(not_ours(path, exc)) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # someone holds it: its run, if what it says holds
            who = _who(fd)
            why = _not_believed(who) if isinstance(who, dict) else f"unreadable ({who})"
            if why is None:
                live.append(who)
                continue
            say(
                f"warning: the claim {path} is {why}; held by {holders_text(path)}, it is not "
                "believed: removed, and this run goes on"
            )
            _remove(path)
        else:  # nobody holds it: its run's process ended without removing it
            say(_stale(path, _who(fd)))
            _remove(path)
        finally:
            os.close(fd)
    return live


def _stale(path: Path, who: dict | str) -> str:
    """The line of a claim nobody holds: the run that wrote it ended without its end (killed,
    or its process ended by code it ran: ``os._exit`` in a strategy of one's own), so its
    tasks are no longer claimed; what it stored is kept, the rest is computed."""
    if isinstance(who, dict):
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(who["started"]))
        run = f"of process {who['pid']} on host {visible(who['host'], 80)}, started {when}"
    else:
        run = "of a run"
    return (
        f"note: the claim {path} {run} is held by no process: that run ended without "
        "finishing (killed, or its process was ended by code it ran); removed, and this run "
        "computes what it left undone"
    )


def _remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


# what a claim holds: each field and the types a run writes there
_FIELDS = {
    "host": (str,),
    "pid": (int,),
    "started": (int, float),
    "command": (str,),
    "study": (dict, type(None)),
    "recompute": (bool,),
}


def _who(fd: int) -> dict | str:
    """What the claim open at ``fd`` says, checked field by field; or why it is unreadable
    (at most CLAIM_BYTES are read and parsed, whatever its content)."""
    try:
        data = os.pread(fd, CLAIM_BYTES + 1, 0)
    except OSError as exc:
        return f"it cannot be read: {exc.strerror or exc}"
    if len(data) > CLAIM_BYTES:
        return f"more than {CLAIM_BYTES:,} bytes"
    try:
        who = json.loads(data)
    except RecursionError:
        return "JSON nested deeper than it can be read"
    except ValueError as exc:  # not JSON, not UTF-8
        return visible(f"not JSON: {exc}", 80)
    if not isinstance(who, dict):
        return f"a JSON {type(who).__name__}, not an object"
    for key, types in _FIELDS.items():
        value = who.get(key)
        if key not in who:
            return f"its {key!r} is missing"
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            shown = short_repr(value, 40) if isinstance(value, str | int | float) else ""
            return f"its {key!r} is a {type(value).__name__} {shown}".rstrip()
    if not 0 < who["pid"] < 2**31:
        return f"its 'pid' {short_repr(who['pid'], 40)} is no process id"
    if not 0 <= who["started"] < 2**38:  # NaN and infinities too
        return f"its 'started' {short_repr(who['started'], 40)} is no time"
    if who["study"] is None and not isinstance(who.get("unlisted"), str):
        return "it names no study and says not why"
    return who


def _not_believed(who: dict) -> str | None:
    """Why the held claim ``who`` is not believed (it names a process of this host that is
    gone), or None."""
    if who["host"] != socket.gethostname():
        return None  # another host's process: nothing here tells
    pid = who["pid"]
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        gone = "no such process"
    except PermissionError:
        return None  # another account's process: alive
    else:
        if not _zombie(pid):
            return None
        gone = "it has ended (a zombie)"
    return f"from process {pid} of this host, which is gone ({gone})"


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read(4096).rpartition(b")")[2].split()[:1] == [b"Z"]
    except OSError:
        return False


def _written(run) -> Claim:
    """This run's claim, locked before anything is written in it (a run killed while
    writing leaves a claim nobody holds, removed as stale)."""
    folder = run.folder.claims
    path = folder / f"{socket.gethostname()}-{os.getpid()}-{next(_COUNTER)}.json"
    for attempt in range(5):
        ensure_dir(folder, run.folder.path)
        try:  # a run ending may remove the folder, empty, between the two calls
            fd = open_regular(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, OWNER_ONLY)
            break
        except FileNotFoundError:
            if attempt == 4:
                raise
    made = Claim(fd, path)
    try:
        owner_only(fd)  # 0600 whatever the umask
        fcntl.flock(fd, fcntl.LOCK_EX)
        who = {
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "started": time.time(),
            "command": _command(),
            "study": run.conf.study.plain(),
            "recompute": run.conf.store.recompute,
        }
        data = json.dumps(who).encode()
        if len(data) > CLAIM_BYTES:  # the others count every task as this run's
            who["study"] = None
            who["unlisted"] = (
                f"its study's config has {len(data):,} bytes, more than a claim holds "
                f"({CLAIM_BYTES:,})"
            )
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
    given = user_command()
    text = visible(given, limit) if given else command_line(os.getpid(), limit=limit)
    if text == "?":
        text = " ".join(sys.argv)[:limit]
    return " ".join(text.split())
