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
import math
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

__all__ = [
    "Budget",
    "Checkpoints",
    "Deferred",
    "Need",
    "Progress",
    "TaskContext",
    "available_memory",
    "current",
    "format_bytes",
    "reset_current",
    "set_current",
    "using",
]


def format_bytes(n: float) -> str:
    """``n`` bytes for a message: "512 B", "8.0 GB", "1.2 TB" (powers of 1000)."""
    if n < 1000:
        return f"{int(n)} B"
    for unit in ("kB", "MB", "GB", "TB", "PB"):
        n /= 1000
        if n < 1000 or unit == "PB":
            return f"{n:.1f} {unit}"
    raise AssertionError  # unreachable


@dataclass(frozen=True)
class Budget:
    """The memory one process of a task may hold, and where that figure came from."""

    bytes: int
    # for messages, e.g. "the Dask workers' memory_limit (4.0 GB each)",
    # "available memory under cluster=sync (21.3 GB)", "run.memory_budget=8GB"
    source: str


@dataclass(frozen=True)
class Need:
    """What one task needs at its peak: memory per process and checkpoint/spill disk."""

    memory: int  # bytes per process at the peak
    disk: int = 0  # bytes of checkpoint/spill files at the peak (0: none)
    note: str = ""  # e.g. "4,260,167,671 states; layers out of core"


def available_memory() -> int:
    """This machine's available memory in bytes (psutil, which Dask depends on)."""
    import psutil

    return int(psutil.virtual_memory().available)


# ------------------------------------------------------------------------- checkpoints

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+=-]{0,199}")
_PARTIAL = ".partial"  # the folder of pieces being written; its entries do not exist yet


class Checkpoints:
    """The checkpoint folder of one task: named pieces, each either committed or absent.

    A piece is a file or a folder the task writes at :meth:`path` and then :meth:`commit`
    s; committing fsyncs it and renames it into place, so after a crash a piece is either
    whole or not there.  Piece names are the family's own (``"layer-037"``): letters,
    digits and ``_.+=-``, not starting with a dot.  The folder (and any missing folder
    between ``root`` and it) is made on first use, one level at a time, and no symbolic
    link is ever followed below ``root``: a link where a folder or a piece belongs is
    refused with :class:`OSError`.  Checkpoints pickle (a task may hand them to the workers
    it splits over: on a cluster the folder must be on a shared file system).
    """

    def __init__(self, folder: Path | str, root: Path | str | None = None):
        self.folder = Path(folder).absolute()
        self.root = self.folder.parent if root is None else Path(root).absolute()
        if self.root != self.folder and self.root not in self.folder.parents:
            raise ValueError(f"checkpoint folder {self.folder} is not below {self.root}")

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
        if not self._real():
            return set()
        with os.scandir(self.folder) as entries:
            return {
                e.name
                for e in entries
                if _NAME.fullmatch(e.name)
                and (e.is_file(follow_symlinks=False) or e.is_dir(follow_symlinks=False))
            }

    def path(self, name: str) -> Path:
        """Where to write piece ``name`` (a file, or a folder the task makes there): a
        temporary path, emptied of any leftover of an earlier attempt; the piece exists
        once :meth:`commit` is called."""
        tmp = self._partial(name)
        _ensure_dir(tmp.parent, self.root)
        _remove(tmp)
        return tmp

    def commit(self, name: str) -> None:
        """Mark piece ``name`` finished: its data is synced to disk and it is renamed into
        place atomically (a piece committed again replaces the old one)."""
        tmp = self._partial(name)
        what = _kind(tmp)
        if what not in ("file", "folder"):
            raise FileNotFoundError(
                f"checkpoint piece {name!r}: nothing was written at {tmp} (write it at "
                "Checkpoints.path(name) first)"
            )
        _fsync_tree(tmp)
        final = self.folder / name
        if _kind(final) is not None:
            _remove(final)
        os.replace(tmp, final)
        _fsync_dir(self.folder)

    def load_path(self, name: str) -> Path:
        """The committed file (or folder) of piece ``name``; FileNotFoundError if it was
        never committed."""
        path = self.folder / _checked_name(name)
        what = _kind(path) if self._real() else None
        if what not in ("file", "folder"):
            raise FileNotFoundError(
                f"checkpoint piece {name!r} is not committed in {self.folder}"
                + ("" if what is None else f" ({path} is {what})")
            )
        return path

    def clear(self) -> None:
        """Remove the folder and every piece in it (a link in it is removed, never
        followed); called by the pipeline once the task's row is stored."""
        _remove(self.folder)

    def _real(self) -> bool:
        """Whether the folder and every level between the root and it are real folders."""
        here = self.root
        for part in ("", *self.folder.relative_to(self.root).parts):
            here = here / part if part else self.root
            if _kind(here) != "folder":
                return False
        return True

    def _partial(self, name: str) -> Path:
        return self.folder / _PARTIAL / _checked_name(name)


def _checked_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(
            f"checkpoint piece name {name!r}: use letters, digits and _.+=- (at most 200, "
            "not starting with a dot)"
        )
    return name


def _kind(path: Path) -> str | None:
    """What ``path`` is ("folder", "file", "a symbolic link"...), links not followed;
    None: nothing there."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def _ensure_dir(path: Path, root: Path) -> None:
    """Make ``path`` below ``root`` one level at a time, refusing any level that is not a
    real folder (a link is never followed)."""
    if _kind(root) is None:
        root.mkdir(parents=True, exist_ok=True)
    here = root
    for part in ("", *path.relative_to(root).parts):
        here = here / part if part else root
        with contextlib.suppress(FileExistsError):
            os.mkdir(here)
        what = _kind(here)
        if what != "folder":
            raise OSError(
                f"{here} is {what or 'gone'}, where a checkpoint folder belongs; a link is "
                "never followed: move it away"
            )


def _remove(path: Path) -> None:
    """Remove a file, a link (not its target) or a folder tree (links in it not followed)."""
    what = _kind(path)
    if what is None:
        return
    if what == "folder":
        shutil.rmtree(path)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _fsync_tree(path: Path) -> None:
    if _kind(path) == "file":
        _fsync_file(path)
        return
    for folder, _dirs, files in os.walk(path, followlinks=False):
        for name in files:
            if _kind(Path(folder, name)) == "file":
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
    _reporter: _Reporter = field(init=False, repr=False)
    _client: Any = field(init=False, default=None, repr=False)

    def __post_init__(self) -> None:
        self._reporter = _Reporter(self.task_id, self.sink, self.interval)

    def progress(self, done: float, total: float, unit: str = "", note: str = "") -> None:
        """Report that ``done`` of ``total`` units (states, layers...) are finished, with an
        optional short note.  Cheap to call often: reports closer than ``interval`` seconds
        are dropped, except the last (done >= total)."""
        self._reporter(done, total, unit, note)

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
