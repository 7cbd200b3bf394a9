"""The long-task facility: what a task that runs for hours may ask of the place it runs.

A family's solver calls :func:`current` for the :class:`TaskContext` of the task it is
solving.  The context says how much memory one process may hold (:class:`Budget`, taken
from where the task runs), how many processes a splitting task may use, where the task keeps
its checkpoints (:class:`Checkpoints`, a folder per task id under the study folder, kept
until the task's row is stored), and takes progress reports that the driver's terminal
shows while the task runs.  A family states what a task needs (:class:`Need`) through
``Family.needs``, and the pipeline refuses a task whose need exceeds the budget before any
work starts.

Outside the pipeline (a notebook, a plain ``solvers.solve`` call) :func:`current` gives a
default context: the budget is this machine's available memory, one worker, no checkpoints,
progress reports go nowhere and there is no Dask client.

This module imports neither the pipeline nor Dask: solvers stay pure.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import json
import logging
import math
import mmap
import os
import re
import shutil
import stat
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from solvers.kit.safe_folders import ensure_folder, kind

__all__ = [
    "ALGORITHM",
    "Budget",
    "Checkpoints",
    "Deferred",
    "Need",
    "Progress",
    "SHARED",
    "TaskContext",
    "available_memory",
    "current",
    "format_bytes",
    "reset_current",
    "set_current",
    "using",
]


def format_bytes(n: float) -> str:
    """``n`` bytes for a message: "512 B", "8.0 GB", "1.2 TB", "72.4 EB" (powers of 1000;
    past 1,000 YB a whole number of YB with its thousands marked)."""
    if n < 1000:
        return f"{int(n)} B"
    for unit in ("kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"):
        n /= 1000
        if n < 1000:
            return f"{n:.1f} {unit}"
    return f"{n:,.0f} YB"


@dataclass(frozen=True)
class Budget:
    """The memory one process of a task may hold, and where that figure came from."""

    bytes: int
    # for messages, e.g. "the Dask workers' memory_limit (4.0 GB each)",
    # "available memory under cluster=sync (21.3 GB)", "run.memory_budget=8GB"
    source: str


@dataclass(frozen=True)
class Need:
    """What one task needs at its peak: memory per process and checkpoint/spill disk, and the
    checkpoint pieces it shares with the other tasks of the run under one key (e.g. one
    deck's last layer, the same for every policy): ``shared_disk`` of ``disk`` is held once
    for all the tasks of ``shared``, and the pipeline removes it when none of them is left."""

    memory: int  # bytes per process at the peak
    disk: int = 0  # bytes of checkpoint/spill files at the peak (0: none)
    note: str = ""  # e.g. "4,260,167,671 states; layers out of core"
    shared: str = ""  # the key of the pieces it shares (TaskContext.shared); "": none
    shared_disk: int = 0  # bytes of ``disk`` in those pieces
    # for the plan's table (stage=plan): the states it solves, those of its largest layer
    # (or other unit held at once), its estimated CPU seconds; 0 / None: not said
    states: int = 0
    largest: int = 0
    cpu_seconds: float | None = None
    shared_cpu_seconds: float = 0.0  # of ``cpu_seconds``, computing the shared pieces


def available_memory() -> int:
    """This machine's available memory in bytes (psutil, which Dask depends on)."""
    import psutil

    return int(psutil.virtual_memory().available)


# ------------------------------------------------------------------------- checkpoints

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+=-]{0,199}")
_PARTIAL = ".partial"  # the folder of pieces being written; its entries do not exist yet
SEALS = ".seals"  # <folder>/.seals/<piece>.json: a committed piece's sizes and checksums
DAMAGED = "damaged"  # <folder>/damaged/: pieces that failed their check, set aside
SHARED = "shared"  # <study>/checkpoints/shared/<key>/: pieces the run's tasks share
HELD = ".computing"  # <folder>/.computing: locked by the computation holding the folder
_LOCK = ".lock"  # <folder>/.lock: the lock of a folder tasks share (Checkpoints.lock)
_DROPPING = ".dropping"  # .seals/<piece>.dropping: the seal of a piece being dropped
_SEAL_MAX = 1 << 26  # bytes: a larger seal is none this guesslab wrote (one lists ~10^5 files)
# The folder's own entries beside its pieces: what each must be and what it is for (damaged
# first: the others are set aside into it)
_OWN = {
    DAMAGED: ("folder", "the folder of pieces set aside"),
    SEALS: ("folder", "the folder of the pieces' seals"),
    _PARTIAL: ("folder", "the folder of pieces being written"),
    HELD: ("file", "the file that holds the folder for one computation"),
    _LOCK: ("file", "the lock file of the folder"),
}
# The checksum of a committed piece: XXH3 with 128 bits (the xxhash package). It hashes
# 7-13 GB/s on one core of the 2-core EPYC VM the benchmarks name, against 1.2-2.5 GB/s for
# zlib.crc32 and 0.86 GB/s for hashlib.sha256 (64-256 MB buffers in memory), so checking a
# piece costs about the time to read it; 128 bits make a chance collision (a damaged piece
# taken for whole) negligible at any number of pieces.
ALGORITHM = "xxh3_128"
_BLOCK = 1 << 24  # bytes read at a time when a piece is hashed


class Checkpoints:
    """The checkpoint folder of one task: named pieces, each either committed or absent.

    A piece is a file or a folder the task writes at :meth:`path` and then :meth:`commit`
    s; committing fsyncs it, renames it into place (so after a crash a piece is either whole
    or not there) and then seals it: ``.seals/<name>.json`` records the piece's name, its
    task (the folder's name), and the size and XXH3-128 checksum of each of its files.

    A stored file is evidence, not truth: a family that reads a piece back to continue a
    computation asks :meth:`trusted` first, which checks the piece against its seal (sizes
    first, then checksums).  A piece that fails (damaged, truncated, replaced by another
    task's piece, deleted, unreadable, its seal of any other shape, or committed without a
    seal: by an older guesslab or a kill between the rename and the seal) is set aside under
    ``damaged/`` with its seal, and one line naming it and why goes to the task's warnings;
    the family recomputes it.

    Piece names are the family's own (``"layer-037"``): letters, digits and ``_.+=-``, not
    starting with a dot, not ``damaged``.  The folder (and any missing folder between
    ``root`` and it) is made on first use, one level at a time, and no symbolic link is ever
    followed below ``root``: a level above the folder that is a link or not a folder is
    refused with :class:`OSError` (nothing in the folder is used).  The folder's own entries
    (``.seals``, ``damaged``, ``.partial``, ``.computing``, ``.lock``) are checked before
    anything below them is read, written, renamed or deleted: one that is a link, a FIFO, or
    a file where a folder belongs (or the reverse) is moved as it is into ``damaged/`` with
    one line (a ``.seals`` with the pieces it would have checked, then recomputed); a piece
    or a seal that is a link or a FIFO fails its check.  A piece no later step reads is
    dropped in an order a kill leaves readable (:meth:`drop`).  Checkpoints pickle (a task
    may hand them to the workers it splits over: on a cluster the folder must be on a
    shared file system).

    The pipeline makes the task's own folder *held* (:meth:`hold`): on first use the object
    locks ``.computing`` in it for the rest of the computation, so two computations of one
    task never write the folder together.  That happens when a run is stopped while its
    workers go on (a driver killed on ``cluster=address``: Dask does not interrupt a running
    task) and a new run starts the same task: the second waits, saying so once, and then
    goes on from the pieces the first committed.  A pickled copy does not hold the folder
    (the task's helpers on other workers write pieces while the task holds it).
    """

    def __init__(self, folder: Path | str, root: Path | str | None = None):
        self.folder = Path(folder).absolute()
        self.root = self.folder.parent if root is None else Path(root).absolute()
        if self.root != self.folder and self.root not in self.folder.parents:
            raise ValueError(f"checkpoint folder {self.folder} is not below {self.root}")
        self.hash_seconds = 0.0  # wall seconds this object spent hashing pieces it committed
        self._hold: _Hold | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_hold": None}

    def hold(self, warn: Callable[[str], None]) -> None:
        """Hold the folder for this computation from this object's first use until
        :meth:`release` (see the class's notes); ``warn`` takes the one line said when
        another computation holds it and this one waits."""
        self._hold = _Hold(self, warn)

    def release(self) -> None:
        """End the hold taken by :meth:`hold` (nothing when none was taken)."""
        if self._hold is not None:
            self._hold.release()
            self._hold = None

    def _held(self) -> None:
        if self._hold is not None:
            self._hold.acquire()

    def __repr__(self) -> str:
        return f"Checkpoints({str(self.folder)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Checkpoints) and (self.folder, self.root) == (
            other.folder,
            other.root,
        )

    def __hash__(self) -> int:
        return hash((self.folder, self.root))

    def finished(self) -> set[str]:
        """The names of the pieces committed so far."""
        self._held()
        return self._pieces()

    def sealed(self) -> set[str]:
        """The names of the pieces with a seal (committed, unless deleted since)."""
        self._held()
        folder = self.folder / SEALS
        if not self._real() or kind(folder) != "folder":
            return set()
        with os.scandir(folder) as entries:
            return {
                e.name[: -len(".json")]
                for e in entries
                if e.name.endswith(".json")
                and _NAME.fullmatch(e.name[: -len(".json")])
                and e.is_file(follow_symlinks=False)
            }

    def path(self, name: str) -> Path:
        """Where to write piece ``name`` (a file, or a folder the task makes there): a
        temporary path, emptied of any leftover of an earlier attempt; the piece exists
        once :meth:`commit` is called."""
        self._held()
        tmp = self._partial(name)
        _ensure_dir(self.folder, self.root)
        self._vet()
        _ensure_dir(tmp.parent, self.root)
        _remove(tmp)
        return tmp

    def commit(self, name: str) -> None:
        """Mark piece ``name`` finished: its data is synced to disk, renamed into place
        atomically (a piece committed again replaces the old one) and sealed."""
        self._held()
        tmp = self._partial(name)
        _ensure_dir(self.folder, self.root)
        self._vet()
        what = kind(tmp)
        if what not in ("file", "folder"):
            raise FileNotFoundError(
                f"checkpoint piece {name!r}: nothing was written at {tmp} (write it at "
                "Checkpoints.path(name) first)"
            )
        _fsync_tree(tmp)
        hashing = time.perf_counter()
        seal = {"piece": name, "task": self.folder.name, "algorithm": ALGORITHM,
                "kind": what, "files": _fingerprint(tmp)}  # fmt: skip
        self.hash_seconds += time.perf_counter() - hashing
        # the old seal goes first: a kill before the new one is written leaves a piece
        # without a seal (recomputed), never a piece under another piece's seal; a mark of
        # an earlier drop of the piece goes before it (it would stand for this piece)
        _remove(self._dropping_path(name))
        _remove(self._seal_path(name))
        final = self.folder / name
        if kind(final) is not None:
            _remove(final)
        os.replace(tmp, final)
        _fsync_dir(self.folder)
        seals = self.folder / SEALS
        _ensure_dir(seals, self.root)
        staged = seals / f".{name}.json.{os.getpid()}"
        _remove(staged)
        fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with open(fd, "w") as fh:
            json.dump(seal, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(staged, self._seal_path(name))
        _fsync_dir(seals)

    def check(self, name: str) -> str | None:
        """Why piece ``name`` cannot be trusted, or None when it matches its seal (its
        files, their sizes and their checksums; sizes are compared before any byte is
        read)."""
        return self._check(name, None)

    def _check(self, name: str, warn: Callable[[str], None] | None) -> str | None:
        self._held()
        name = _checked_name(name)
        self._vet(warn)
        if not self._real() or self._dropped(name):
            return "it is not there"
        path, seal_path = self.folder / name, self._seal_path(name)
        what, sealed_as = kind(path), kind(seal_path)
        if what not in (None, "file", "folder"):
            return f"it is {what}, where a piece belongs (never followed or opened)"
        if sealed_as is None:
            if what is None:
                return "it is not there"
            return (
                "it has no seal (committed by a guesslab older than sealed checkpoints, or "
                "the run was killed between committing and sealing it, or its seal was "
                "deleted)"
            )
        if sealed_as != "file":
            return f"its seal {seal_path} is {_article(sealed_as)} (never followed or opened)"
        try:
            piece, task, sealed, algorithm, files = _read_seal(seal_path)
        except OSError as exc:
            return f"its seal {seal_path} is unreadable ({exc.strerror or exc})"
        except _BadSeal as exc:
            return f"its seal {seal_path} is unreadable ({exc})"
        if (piece, task) != (name, self.folder.name):
            return f"its seal is that of piece {piece} of task {task} (a piece copied here)"
        if what is None:
            return "it was committed and sealed, and has since been deleted"
        if algorithm != ALGORITHM:
            return f"its seal uses {algorithm!r}, which this guesslab does not check"
        if what != sealed:
            return f"it is {_article(what)}, its seal says {_article(sealed)}"
        try:
            found = _listing(path)
            if set(found) != set(files):
                return (
                    f"it holds the files {sorted(found)}, its seal lists {sorted(files)}"
                    if what == "folder"
                    else "its files differ from its seal"
                )
            for rel, size in found.items():
                if size != files[rel][0]:
                    where = f"{rel}: " if rel else ""
                    return f"{where}{size:,} bytes, {files[rel][0]:,} when it was sealed"
            for rel in sorted(found):
                if _digest(path / rel if rel else path)[1] != files[rel][1]:
                    where = f" of {rel}" if rel else ""
                    return (
                        f"the {ALGORITHM} checksum{where} differs from the one sealed at "
                        "commit (its bytes changed)"
                    )
        except OSError as exc:
            return f"it is unreadable ({exc.strerror or exc})"
        return None

    def trusted(self, name: str, warn: Callable[[str], None] | None = None) -> bool:
        """Whether piece ``name`` is committed and matches its seal.  A piece that fails
        (see :meth:`check`) is set aside under ``damaged/`` with its seal, and one line
        naming it goes to ``warn`` (default: :meth:`TaskContext.warn` of the current
        task); a piece never committed (no piece, no seal) is simply not trusted."""
        reason = self._check(name, warn)
        if reason is None:
            return True
        if reason == "it is not there":
            return False
        where = self.set_aside(name)
        kept = f"; set aside as {where}" if where is not None else ""
        self._say(warn)(
            f"checkpoint {name} of task {self.folder.name} is not used: {reason}{kept}; "
            "it is recomputed"
        )
        return False

    def set_aside(self, name: str) -> Path | None:
        """Move piece ``name`` and its seal under ``damaged/`` (never overwriting an earlier
        one); the piece's new path, or None when only a seal was there."""
        self._held()
        name = _checked_name(name)
        _ensure_dir(self.folder, self.root)
        self._vet()
        damaged = self.folder / DAMAGED
        _ensure_dir(damaged, self.root)
        tag, n = name, 0
        while kind(damaged / tag) is not None or kind(damaged / f"{tag}.seal.json"):
            n += 1
            tag = f"{name}.{n}"
        moved = None
        if kind(self.folder / name) is not None:
            moved = damaged / tag
            os.replace(self.folder / name, moved)
        if kind(self._seal_path(name)) is not None:
            os.replace(self._seal_path(name), damaged / f"{tag}.seal.json")
        _fsync_dir(self.folder)
        return moved

    def adopt(self, name: str, source: Path) -> None:
        """Commit the regular file ``source`` (another folder's committed piece) as piece
        ``name``: hard-linked where the file system allows (no second copy on disk), else
        copied; sealed here like any piece."""
        tmp = self.path(name)
        try:
            os.link(source, tmp, follow_symlinks=False)
        except OSError:
            shutil.copyfile(source, tmp, follow_symlinks=False)
        self.commit(name)

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold this folder's lock (``flock`` on ``.lock``) inside the ``with`` block: tasks
        sharing a folder (TaskContext.shared) take turns to compute or adopt its pieces.  On
        a file system without locks the block runs unlocked (then two tasks may compute a
        piece twice, each committing the same bytes)."""
        import fcntl

        _ensure_dir(self.folder, self.root)
        self._vet()
        fd = _open_own(self.folder / _LOCK)
        try:
            with contextlib.suppress(OSError):  # no locks on this file system
                fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    def drop(self, name: str) -> None:
        """Remove committed piece ``name`` and its seal (a piece no later step reads).

        In an order a kill at any point leaves to be read truly: the seal is first renamed
        ``.seals/<name>.dropping``, then the piece is removed, then that mark; a piece found
        with the mark and no seal was being dropped, and is dropped (no line said)."""
        self._held()
        name = _checked_name(name)
        if not self._real():
            return
        self._vet()
        seal, mark = self._seal_path(name), self._dropping_path(name)
        if kind(seal) is not None:  # no fsync: a kill keeps the order of these steps
            os.replace(seal, mark)
        _remove(self.folder / name)
        _remove(mark)

    def load_path(self, name: str) -> Path:
        """The committed file (or folder) of piece ``name``; FileNotFoundError if it was
        never committed."""
        self._held()
        path = self.folder / _checked_name(name)
        what = kind(path) if self._real() else None
        if what not in ("file", "folder"):
            raise FileNotFoundError(
                f"checkpoint piece {name!r} is not committed in {self.folder}"
                + ("" if what is None else f" ({path} is {_article(what)})")
            )
        return path

    def damaged(self) -> Path | None:
        """The folder of what was set aside (``damaged/``), when it is a real folder holding
        anything; None otherwise."""
        folder = self.folder / DAMAGED
        if not self._real() or kind(folder) != "folder":
            return None
        with os.scandir(folder) as entries:
            return folder if next(entries, None) is not None else None

    def clear(self) -> None:
        """Remove the folder and every piece in it (a link in it is removed, never
        followed; nothing when a level above it is not a real folder); called by the
        pipeline once the task's row is stored."""
        if self._real(above=True):
            _remove(self.folder)

    def _real(self, above: bool = False) -> bool:
        """Whether the folder (``above``: each level above it, up to the root) and every
        level between the root and it are real folders."""
        here = self.root
        parts = self.folder.relative_to(self.root).parts
        for part in ("", *(parts[:-1] if above else parts)):
            here = here / part if part else self.root
            if kind(here) != "folder":
                return False
        return True

    def _pieces(self) -> set[str]:
        """The names of the files and folders in the folder that are pieces."""
        if not self._real():
            return set()
        with os.scandir(self.folder) as entries:
            return {
                e.name
                for e in entries
                if _NAME.fullmatch(e.name)
                and e.name != DAMAGED
                and (e.is_file(follow_symlinks=False) or e.is_dir(follow_symlinks=False))
            }

    def _vet(self, warn: Callable[[str], None] | None = None) -> None:
        """Set aside, one line each, the folder's own entries (``damaged``, ``.seals``,
        ``.partial``, ``.computing``, ``.lock``) that are not what they must be: a link is
        moved as it is (its target never read, moved or deleted), a FIFO or a device never
        opened.  Every method that reads, writes, renames or deletes below the folder calls
        this first; nothing is done when the folder is not a real folder (then nothing in it
        is used)."""
        if not self._real():
            return
        for name, (wanted, role) in _OWN.items():
            what = kind(self.folder / name)
            if what is not None and what != wanted:
                self._set_aside_own(name, what, role, warn)

    def _set_aside_own(self, name: str, what: str, role: str, warn) -> None:
        """Move the folder's own entry ``name`` (found to be ``what``) into ``damaged/``; a
        ``.seals`` set aside takes the pieces with it (none can be checked without it)."""
        damaged = self.folder / DAMAGED
        if name == DAMAGED:  # into a new damaged/ of its own
            moving = _unused(self.folder, f".{DAMAGED}.set-aside")
            os.replace(damaged, moving)
            _ensure_dir(damaged, self.root)
            where = _unused(damaged, DAMAGED)
            os.replace(moving, where)
        else:
            _ensure_dir(damaged, self.root)
            where = _unused(damaged, name)
            os.replace(self.folder / name, where)
        with_it = ""
        if name == SEALS:
            pieces = sorted(self._pieces())
            for piece in pieces:
                os.replace(self.folder / piece, _unused(damaged, piece))
            if pieces:
                with_it = (
                    f", with the {len(pieces)} piece(s) beside it (none can be checked "
                    "without its seal): they are recomputed"
                )
        _fsync_dir(self.folder)
        self._say(warn)(
            f"checkpoints of task {self.folder.name}: {self.folder / name} is "
            f"{_article(what)}, where {role} belongs; set aside as {where}, never followed "
            f"or opened{with_it}"
        )

    def _say(self, warn: Callable[[str], None] | None) -> Callable[[str], None]:
        """Where a line about the folder goes: ``warn``, else the holder's, else the
        current task's warnings."""
        if warn is not None:
            return warn
        if self._hold is not None:
            return self._hold.warn
        return current().warn

    def _dropped(self, name: str) -> bool:
        """Whether piece ``name`` was being dropped (its seal renamed to the drop's mark,
        see :meth:`drop`) when its run was stopped; if so the drop is finished."""
        if kind(self._seal_path(name)) is not None or kind(self._dropping_path(name)) is None:
            return False
        _remove(self.folder / name)
        _remove(self._dropping_path(name))
        return True

    def _partial(self, name: str) -> Path:
        return self.folder / _PARTIAL / _checked_name(name)

    def _seal_path(self, name: str) -> Path:
        return self.folder / SEALS / f"{name}.json"

    def _dropping_path(self, name: str) -> Path:
        return self.folder / SEALS / f"{name}{_DROPPING}"


class _Hold:
    """The lock on ``<folder>/.computing`` of a held :class:`Checkpoints`, taken on first
    use: at once when free, else after one line to ``warn`` naming the holder (its pid, host
    and start, written in the file by the holder), waiting until the holder ends.  On a
    file system without locks the computation goes on unheld."""

    def __init__(self, checkpoints: Checkpoints, warn: Callable[[str], None]):
        self.checkpoints, self.warn = checkpoints, warn
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

        cp = self.checkpoints
        _ensure_dir(cp.folder, cp.root)
        cp._vet(self.warn)  # a .computing that is a link or a FIFO is set aside, never opened
        fd = _open_own(cp.folder / HELD)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if not self.said:
                    self.said = True
                    self.warn(
                        f"the checkpoints of task {cp.folder.name} are held by another "
                        f"computation of it ({_holder(fd)}: a run stopped while its workers "
                        "went on?); this one waits for it to end, then goes on from the "
                        "pieces it committed"
                    )
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError as exc:
                if exc.errno not in _NO_LOCKS:
                    raise OSError(
                        exc.errno, f"cannot lock {cp.folder / HELD} ({exc.strerror})"
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
            here = os.stat(self.checkpoints.folder / HELD, follow_symlinks=False)
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


def _checked_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name) or name == DAMAGED:
        raise ValueError(
            f"checkpoint piece name {name!r}: use letters, digits and _.+=- (at most 200, "
            f"not starting with a dot, not {DAMAGED!r})"
        )
    return name


class _BadSeal(ValueError):
    """A seal whose content is not that of a seal (why, in a few words)."""


def _read_seal(path: Path) -> tuple[str, str, str, str, dict[str, tuple[int, str]]]:
    """(piece, task, kind, algorithm, {file: (bytes, digest)}) of the seal at ``path`` (a
    regular file, opened without following a link or blocking on a FIFO); OSError, or
    _BadSeal for content of any other shape (not JSON, nested too deeply, too large, other
    fields or types)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _BadSeal("not a regular file")
        if info.st_size > _SEAL_MAX:
            raise _BadSeal(f"{info.st_size:,} bytes, more than any seal")
        data = b""
        while len(data) <= _SEAL_MAX and (block := os.read(fd, 1 << 20)):
            data += block
    finally:
        os.close(fd)
    try:
        seal = json.loads(data)
    except RecursionError:
        raise _BadSeal("JSON nested too deeply") from None
    except ValueError:
        raise _BadSeal("not JSON") from None
    fields = ("piece", "task", "kind", "algorithm")
    if not isinstance(seal, dict) or not all(isinstance(seal.get(k), str) for k in fields):
        raise _BadSeal(f"not the fields of a seal: {', '.join(fields)}, files")
    files: dict[str, tuple[int, str]] = {}
    for entry in seal.get("files") if isinstance(seal.get("files"), list) else [None]:
        if not (
            isinstance(entry, list)
            and len(entry) == 3
            and isinstance(entry[0], str)
            and type(entry[1]) is int
            and entry[1] >= 0
            and isinstance(entry[2], str)
            and entry[0] not in files
        ):
            raise _BadSeal("its files are not a list of [path, bytes, checksum]")
        files[entry[0]] = (entry[1], entry[2])
    return seal["piece"], seal["task"], seal["kind"], seal["algorithm"], files


def _open_own(path: Path) -> int:
    """The folder's own lock file ``path`` opened for reading and writing (made if missing),
    never through a link nor blocking on a FIFO; OSError naming it if it is not a regular
    file."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
    except OSError as exc:
        what = kind(path)
        if what in (None, "file"):
            raise
        raise OSError(exc.errno, f"{path} is {_article(what)}, where a lock file belongs") from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"{path} is {_article(kind(path) or 'gone')}, where a lock file belongs")
    os.set_blocking(fd, True)
    return fd


def _unused(folder: Path, name: str) -> Path:
    """``folder/name``, or ``name.1``, ``name.2``... the first that is not there."""
    path, n = folder / name, 0
    while kind(path) is not None:
        n += 1
        path = folder / f"{name}.{n}"
    return path


def _article(what: str) -> str:
    """What :func:`kind` says, for a sentence: "a file", "a folder", "a FIFO"..."""
    return {"file": "a file", "folder": "a folder"}.get(what, what)


def _listing(path: Path) -> dict[str, int]:
    """{path relative to the piece ("" for a file piece): bytes} of a piece's regular files,
    links not followed; OSError for anything in it that is not a regular file or folder."""
    if kind(path) == "file":
        return {"": os.lstat(path).st_size}
    out = {}
    for folder, dirs, files in os.walk(path, followlinks=False):
        for entry in (*dirs, *files):
            full = Path(folder, entry)
            what = kind(full)
            if what == "file":
                out[full.relative_to(path).as_posix()] = os.lstat(full).st_size
            elif what != "folder":
                raise OSError(f"{full} is {_article(what)}, not a file of a checkpoint piece")
    return out


def _digest(path: Path) -> tuple[int, str]:
    """(bytes, XXH3-128 hex digest) of the regular file ``path``.

    The file is mapped and hashed block by block, each block's pages dropped from the process
    once hashed (they stay in the page cache): a Dask nanny counts mapped pages as the
    worker's memory.  Mapped, not read: on a 229 MB file from the page cache, 3.7 GB/s
    against 0.2-0.8 GB/s through read() into a buffer (the copy), on the benchmarks' VM."""
    import xxhash

    hasher = xxhash.xxh3_128()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        size = os.fstat(fd).st_size
        if size:
            with mmap.mmap(fd, size, access=mmap.ACCESS_READ) as mapped:
                _advise(mapped, "MADV_SEQUENTIAL")
                with memoryview(mapped) as view:
                    for lo in range(0, size, _BLOCK):
                        hi = min(size, lo + _BLOCK)
                        hasher.update(view[lo:hi])
                        _advise(mapped, "MADV_DONTNEED", lo, hi - lo)
    finally:
        os.close(fd)
    return size, hasher.hexdigest()


def _advise(mapped: mmap.mmap, name: str, *span: int) -> None:
    """``mapped.madvise(mmap.<name>, *span)`` where the platform has it."""
    flag = getattr(mmap, name, None)
    if flag is not None:
        mapped.madvise(flag, *span)


def _fingerprint(path: Path) -> list[list]:
    """[relative path, bytes, digest] of each file of a piece, in path order: its seal."""
    out = []
    for rel in sorted(_listing(path)):
        size, digest = _digest(path / rel if rel else path)
        out.append([rel, size, digest])
    return out


def _ensure_dir(path: Path, root: Path) -> None:
    """Make ``path`` below ``root`` one level at a time, refusing any level that is not a
    real folder (a link is never followed)."""
    ensure_folder(path, root, _not_a_checkpoint_folder)


def _not_a_checkpoint_folder(here: Path, what: str) -> OSError:
    never = "; a link is never followed" if what.startswith("a symbolic link") else ""
    return OSError(
        f"{here} is {_article(what)}, where a checkpoint folder belongs{never}: move it away"
    )


def _remove(path: Path) -> None:
    """Remove a file, a link (not its target) or a folder tree (links in it not followed)."""
    what = kind(path)
    if what is None:
        return
    if what == "folder":
        shutil.rmtree(path)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _fsync_tree(path: Path) -> None:
    if kind(path) == "file":
        _fsync_file(path)
        return
    for folder, _dirs, files in os.walk(path, followlinks=False):
        for name in files:
            if kind(Path(folder, name)) == "file":
                _fsync_file(Path(folder, name))
        _fsync_dir(Path(folder))


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):  # some file systems refuse fsync on a folder
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# ---------------------------------------------------------------------------- progress


@dataclass(frozen=True)
class Progress:
    """One progress report of a running task, as the driver receives it."""

    task_id: str | None
    done: float
    total: float
    unit: str
    note: str
    rate: float | None  # units per second since the task's first report (None: not yet)
    seconds_left: float | None  # at that rate (None: unknown)
    at: float  # time.time() of the report

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


Sink = Callable[[Progress], None]


class _Reporter:
    """Rate-limits a task's progress calls and works out its rate and time left."""

    def __init__(self, task_id: str | None, sink: Sink | None, interval: float):
        self.task_id, self.sink, self.interval = task_id, sink, interval
        self.lock = threading.Lock()
        self.first: tuple[float, float] | None = None  # (monotonic time, done) of the first
        self.last_sent = -math.inf

    def __call__(self, done: float, total: float, unit: str, note: str) -> None:
        if self.sink is None:
            return
        now = time.monotonic()
        with self.lock:
            if self.first is None:
                self.first = (now, float(done))
            final = total > 0 and done >= total
            if now - self.last_sent < self.interval and not final:
                return
            self.last_sent = now
            t0, d0 = self.first
        # no rate before 0.1% of the work is done: high/low's first layers (a few states
        # each, after the files are made) gave "1.72 states/s, 141040.5 days left"
        enough = done - d0 >= total / 1000 if total > 0 else done > d0
        rate = (done - d0) / (now - t0) if now > t0 and done > d0 and enough else None
        left = (total - done) / rate if rate else (0.0 if final else None)
        self.sink(
            Progress(self.task_id, float(done), float(total), unit, note, rate, left, time.time())
        )


# ---------------------------------------------------------------------------- the context


@dataclass
class TaskContext:
    """What the task running in this process may ask of the place it runs.

    The pipeline makes one per task (:func:`using`); :func:`current` returns it.
    """

    budget: Budget
    workers: int = 1  # processes a splitting task may use (1 under sync)
    checkpoints: Checkpoints | None = None  # None: the run keeps none
    task_id: str | None = None
    # where progress reports go (the pipeline: to the driver's terminal); None: nowhere
    sink: Sink | None = None
    # seconds between two reports that are passed on (the last one, done == total, always is)
    interval: float = 0.5
    # the Dask client of the cluster the task runs on (called once, on first use); None: none
    client_factory: Callable[[], Any] | None = None
    # where the task's warnings go (the pipeline: a line on the driver's terminal); None:
    # the ``guesslab`` logger (Python's logging prints warnings to stderr unless configured)
    warnings: Callable[[str], None] | None = None
    _reporter: _Reporter = field(init=False, repr=False)
    _client: Any = field(init=False, default=None, repr=False)

    def __post_init__(self) -> None:
        self._reporter = _Reporter(self.task_id, self.sink, self.interval)

    def progress(self, done: float, total: float, unit: str = "", note: str = "") -> None:
        """Report that ``done`` of ``total`` units (states, layers...) are finished, with an
        optional short note.  Cheap to call often: reports closer than ``interval`` seconds
        are dropped, except the last (done >= total)."""
        self._reporter(done, total, unit, note)

    def warn(self, text: str) -> None:
        """Say ``text`` (one line, e.g. a checkpoint piece that failed its check) to whoever
        runs the task, at once: on the pipeline's terminal, or the ``guesslab`` logger."""
        if self.warnings is not None:
            self.warnings(text)
        else:
            logging.getLogger("guesslab").warning(text)

    def shared(self, key: str) -> Checkpoints | None:
        """The checkpoint folder the run's tasks share under ``key`` (a family's name for
        pieces several tasks compute alike: ``<study>/checkpoints/shared/<key>/``; see
        :class:`Need`), or None when the run keeps no checkpoints.  Take its
        :meth:`Checkpoints.lock` to compute or adopt its pieces."""
        if self.checkpoints is None:
            return None
        folder = self.checkpoints.folder.parent / SHARED / _checked_name(key)
        return Checkpoints(folder, root=self.checkpoints.root)

    def client(self) -> Any:
        """The Dask client of the cluster this task runs on, or None (under
        ``cluster=sync`` or outside the pipeline).  Inside a Dask worker the task leaves
        the worker's thread pool on the first call (``distributed.secede``), so it may wait
        on the tasks it submits; the pipeline rejoins it when the task ends."""
        if self._client is None and self.client_factory is not None:
            self._client = self.client_factory()
        return self._client


class Deferred:
    """A context made on first use: ``make(key)`` runs when the task first asks
    :func:`current` (a task that never asks costs the pipeline a contextvar set and reset,
    not the making of a context); ``ctx`` is the context made, or None."""

    __slots__ = ("ctx", "key", "make")

    def __init__(self, make: Callable[[Any], TaskContext], key: Any = None):
        self.make, self.key = make, key
        self.ctx: TaskContext | None = None

    def get(self) -> TaskContext:
        if self.ctx is None:
            self.ctx = self.make(self.key)
        return self.ctx


_CURRENT: contextvars.ContextVar[TaskContext | Deferred | None] = contextvars.ContextVar(
    "guesslab_task_context", default=None
)


def current() -> TaskContext:
    """The context of the task running in this process: the one the pipeline set around
    it, or outside the pipeline a default (available memory, one worker, no checkpoints,
    progress a no-op, no client)."""
    ctx = _CURRENT.get()
    if type(ctx) is Deferred:
        return ctx.get()
    if ctx is None:
        free = available_memory()
        ctx = TaskContext(Budget(free, f"available memory of this machine ({format_bytes(free)})"))
    return ctx


@contextlib.contextmanager
def using(ctx: TaskContext | Deferred) -> Iterator[TaskContext | Deferred]:
    """Make ``ctx`` (or the context a :class:`Deferred` makes on first use) the
    :func:`current` context inside the ``with`` block."""
    token = _CURRENT.set(ctx)
    try:
        yield ctx
    finally:
        _CURRENT.reset(token)


def set_current(ctx: TaskContext | Deferred) -> contextvars.Token:
    """:func:`using` without the ``with`` block (a hot loop): the token for
    :func:`reset_current`."""
    return _CURRENT.set(ctx)


def reset_current(token: contextvars.Token) -> None:
    """Undo the :func:`set_current` that gave ``token``."""
    _CURRENT.reset(token)
