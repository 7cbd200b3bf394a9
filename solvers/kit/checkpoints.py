"""The checkpoint folder of a long task: named pieces, each committed whole and sealed.

A task that runs for hours writes what it has finished as pieces of its folder
(:class:`Checkpoints`, ``<study>/checkpoints/<task id>/``, kept until the task's row is
stored); a later run of the task reads back the pieces that match their seals
(:mod:`solvers.kit.seals`) and recomputes the rest.  The pipeline holds each task's folder
for one computation at a time (:mod:`solvers.kit.hold`).

This module imports neither the pipeline nor Dask: solvers stay pure.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from solvers.kit.atomic_files import fsync_dir, fsync_tree, replace_file
from solvers.kit.current_task import running
from solvers.kit.hold import HELD, Hold, open_lock_file
from solvers.kit.safe_folders import article, ensure_folder, kind
from solvers.kit.seals import ALGORITHM, BadSeal, file_digest, fingerprint, piece_files, read_seal
from solvers.kit.words import counted

__all__ = ["DAMAGED", "SEALS", "SHARED", "Checkpoints", "checked_name"]

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+=-]{0,199}")
_PARTIAL = ".partial"  # the folder of pieces being written; its entries do not exist yet
SEALS = ".seals"  # <folder>/.seals/<piece>.json: a committed piece's sizes and checksums
DAMAGED = "damaged"  # <folder>/damaged/: pieces that failed their check, set aside
SHARED = "shared"  # <study>/checkpoints/shared/<key>/: pieces the run's tasks share
_LOCK = ".lock"  # <folder>/.lock: the lock of a folder tasks share (Checkpoints.lock)
_DROPPING = ".dropping"  # .seals/<piece>.dropping: the seal of a piece being dropped
# The folder's own entries beside its pieces: what each must be and what it is for (damaged
# first: the others are set aside into it)
_OWN = {
    DAMAGED: ("folder", "the folder of pieces set aside"),
    SEALS: ("folder", "the folder of the pieces' seals"),
    _PARTIAL: ("folder", "the folder of pieces being written"),
    HELD: ("file", "the file that holds the folder for one computation"),
    _LOCK: ("file", "the lock file of the folder"),
}


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
        self._hold: Hold | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_hold": None}

    def hold(self, warn: Callable[[str], None]) -> None:
        """Hold the folder for this computation from this object's first use until
        :meth:`release` (see the class's notes); ``warn`` takes the one line said when
        another computation holds it and this one waits."""
        self._hold = Hold(self.folder, self._prepare, warn)

    def release(self) -> None:
        """End the hold taken by :meth:`hold` (nothing when none was taken)."""
        if self._hold is not None:
            self._hold.release()
            self._hold = None

    def shared(self, key: str) -> Checkpoints:
        """The folder the run's tasks share under ``key``, beside this task's folder:
        ``<study>/checkpoints/shared/<key>/`` (see :meth:`TaskContext.shared
        <solvers.kit.task_context.TaskContext.shared>`)."""
        return Checkpoints(self.folder.parent / SHARED / checked_name(key), root=self.root)

    def _prepare(self, warn: Callable[[str], None] | None = None) -> None:
        """Make the folder (each level checked, see :func:`_ensure_dir`) and set aside its
        own entries that are not what they must be (:meth:`_vet`)."""
        _ensure_dir(self.folder, self.root)
        self._vet(warn)

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
        self._prepare()
        _ensure_dir(tmp.parent, self.root)
        _remove(tmp)
        return tmp

    def commit(self, name: str) -> None:
        """Mark piece ``name`` finished: its data is synced to disk, renamed into place
        atomically (a piece committed again replaces the old one) and sealed."""
        self._held()
        tmp = self._partial(name)
        self._prepare()
        what = kind(tmp)
        if what not in ("file", "folder"):
            raise FileNotFoundError(
                f"checkpoint piece {name!r}: nothing was written at {tmp} (write it at "
                "Checkpoints.path(name) first)"
            )
        fsync_tree(tmp)
        hashing = time.perf_counter()
        seal = {"piece": name, "task": self.folder.name, "algorithm": ALGORITHM,
                "kind": what, "files": fingerprint(tmp)}  # fmt: skip
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
        fsync_dir(self.folder)
        seals = self.folder / SEALS
        _ensure_dir(seals, self.root)
        staged = seals / f".{name}.json.{os.getpid()}"
        _remove(staged)
        sealed = json.dumps(seal).encode()
        replace_file(self._seal_path(name), lambda fh: fh.write(sealed), tmp=staged, mode=0o644)

    def check(self, name: str) -> str | None:
        """Why piece ``name`` cannot be trusted, or None when it matches its seal (its
        files, their sizes and their checksums; sizes are compared before any byte is
        read)."""
        return self._check(name, None)

    def _check(self, name: str, warn: Callable[[str], None] | None) -> str | None:
        self._held()
        name = checked_name(name)
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
            return f"its seal {seal_path} is {article(sealed_as)} (never followed or opened)"
        try:
            piece, task, sealed, algorithm, files = read_seal(seal_path)
        except OSError as exc:
            return f"its seal {seal_path} is unreadable ({exc.strerror or exc})"
        except BadSeal as exc:
            return f"its seal {seal_path} is unreadable ({exc})"
        if (piece, task) != (name, self.folder.name):
            return f"its seal is that of piece {piece} of task {task} (a piece copied here)"
        if what is None:
            return "it was committed and sealed, and has since been deleted"
        if algorithm != ALGORITHM:
            return f"its seal uses {algorithm!r}, which this guesslab does not check"
        if what != sealed:
            return f"it is {article(what)}, its seal says {article(sealed)}"
        try:
            found = piece_files(path)
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
                if file_digest(path / rel if rel else path)[1] != files[rel][1]:
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
        name = checked_name(name)
        self._prepare()
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
        fsync_dir(self.folder)
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

        self._prepare()
        fd = open_lock_file(self.folder / _LOCK)
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
        name = checked_name(name)
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
        path = self.folder / checked_name(name)
        what = kind(path) if self._real() else None
        if what not in ("file", "folder"):
            raise FileNotFoundError(
                f"checkpoint piece {name!r} is not committed in {self.folder}"
                + ("" if what is None else f" ({path} is {article(what)})")
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
                    f", with the {counted(len(pieces), 'piece')} beside it (none can be checked "
                    "without its seal): they are recomputed"
                )
        fsync_dir(self.folder)
        self._say(warn)(
            f"checkpoints of task {self.folder.name}: {self.folder / name} is "
            f"{article(what)}, where {role} belongs; set aside as {where}, never followed "
            f"or opened{with_it}"
        )

    def _say(self, warn: Callable[[str], None] | None) -> Callable[[str], None]:
        """Where a line about the folder goes: ``warn``, else the holder's, else the
        current task's warnings."""
        if warn is not None:
            return warn
        if self._hold is not None:
            return self._hold.warn
        ctx = running()  # outside the pipeline: the default context's warn, the logger's
        return ctx.warn if ctx is not None else logging.getLogger("guesslab").warning

    def _dropped(self, name: str) -> bool:
        """Whether piece ``name`` was being dropped (its seal renamed to the drop's mark,
        see :meth:`drop`) when its run was stopped; if so the drop is finished."""
        if kind(self._seal_path(name)) is not None or kind(self._dropping_path(name)) is None:
            return False
        _remove(self.folder / name)
        _remove(self._dropping_path(name))
        return True

    def _partial(self, name: str) -> Path:
        return self.folder / _PARTIAL / checked_name(name)

    def _seal_path(self, name: str) -> Path:
        return self.folder / SEALS / f"{name}.json"

    def _dropping_path(self, name: str) -> Path:
        return self.folder / SEALS / f"{name}{_DROPPING}"


def checked_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name) or name == DAMAGED:
        raise ValueError(
            f"checkpoint piece name {name!r}: use letters, digits and _.+=- (at most 200, "
            f"not starting with a dot, not {DAMAGED!r})"
        )
    return name


def _unused(folder: Path, name: str) -> Path:
    """``folder/name``, or ``name.1``, ``name.2``... the first that is not there."""
    path, n = folder / name, 0
    while kind(path) is not None:
        n += 1
        path = folder / f"{name}.{n}"
    return path


def _ensure_dir(path: Path, root: Path) -> None:
    """Make ``path`` below ``root`` one level at a time, refusing any level that is not a
    real folder (a link is never followed)."""
    ensure_folder(path, root, _not_a_checkpoint_folder)


def _not_a_checkpoint_folder(here: Path, what: str) -> OSError:
    never = "; a link is never followed" if what.startswith("a symbolic link") else ""
    return OSError(
        f"{here} is {article(what)}, where a checkpoint folder belongs{never}: move it away"
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


def committed_files(folder: Path) -> Iterator[os.stat_result]:
    """The ``lstat`` of each regular file of the committed pieces in the checkpoint folder
    ``folder`` with a seal (a piece that is a folder: its files, links not followed); read
    without a :class:`Checkpoints` and without checking a seal (what a task may reuse, for
    the plan's disk need)."""
    try:
        with os.scandir(folder) as entries:
            pieces = [e for e in entries if _NAME.fullmatch(e.name) and e.name != DAMAGED]
    except OSError:
        return
    for piece in sorted(pieces, key=lambda e: e.name):
        try:
            seal = os.stat(folder / SEALS / f"{piece.name}.json", follow_symlinks=False)
            st = piece.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(seal.st_mode):
            continue
        if stat.S_ISREG(st.st_mode):
            yield st
        elif stat.S_ISDIR(st.st_mode):
            for here, _, names in os.walk(piece.path, followlinks=False):
                for name in sorted(names):
                    with contextlib.suppress(OSError):
                        inner = os.stat(os.path.join(here, name), follow_symlinks=False)
                        if stat.S_ISREG(inner.st_mode):
                            yield inner
