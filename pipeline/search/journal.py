"""A search's Optuna journal, ``<study>/search/<name>.journal``, checked before it is trusted.

Optuna replays the journal's lines to go on with a search.  A line garbled in the middle
makes it raise; a last line cut short, or garbled, it skips without a word; a journal cut at
the end of a line it replays as it is, the trials told after the cut silently gone.  So
beside the journal guesslab keeps its seal, ``<name>.journal.seal`` (the journal's length
and XXH3-128 digest, written after each batch is told, as a checkpoint piece's seal is: see
:mod:`solvers.kit.seals`), and before the journal is used it is checked: a regular file, at
least as long as sealed, its sealed bytes those sealed, every line a JSON object ended by a
newline, and then replayed by Optuna without error.  A journal that fails is moved, with its
seal, to ``<study>/quarantine/search/`` and named in one line; the search starts a new
journal, and the trials asked again find their tasks in the store (the same seed asks the
same parameters again), so they cost nothing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.storage.safe_paths import ensure_dir, open_regular
from pipeline.storage.study_folder import StudyFolder
from solvers.kit.safe_folders import article, kind

ALGORITHM = "xxh3_128"
SEAL_MAX = 1 << 12  # bytes: a larger seal is none guesslab wrote (one holds ~100)
_BLOCK = 1 << 20  # bytes read at a time


class SearchJournal:
    """The journal of the search ``name`` in the study ``folder``, and its seal."""

    def __init__(self, folder: StudyFolder, name: str, log: Callable[[str], None]):
        self.folder, self.log = folder, log
        folder = ensure_dir(self.folder.path / "search", below=self.folder.path)
        self.path = folder / f"{name}.journal"
        self.seal_path = folder / f"{name}.journal.seal"

    def open(self, make: Callable[[], Any]) -> Any:
        """``make()`` (the Optuna study over a storage of :attr:`path`, made by ``make``)
        once the journal is checked; again over a new journal when it fails, the journal
        set aside and named."""
        reason = self.problem()
        if reason is None:
            try:
                study = make()
            except Exception as exc:  # noqa: BLE001 - whatever a journal Optuna cannot replay raises
                reason = f"Optuna cannot replay it ({type(exc).__name__}: {exc})"
            else:
                self.seal()
                return study
        self.set_aside(reason)
        study = make()
        self.seal()
        return study

    # ------------------------------------------------------------------------- the checks

    def problem(self) -> str | None:
        """Why the journal cannot be trusted, or None (no journal yet: a new search)."""
        what = kind(self.path)
        if what is None:
            return None
        if what != "file":
            return f"{article(what)}, not a journal file; never opened or followed"
        try:
            sealed = self.sealed()
        except (OSError, ValueError) as exc:
            return f"its seal {self.seal_path.name} cannot be used ({exc})"
        try:
            return _content_problem(self.path, sealed)
        except OSError as exc:
            return f"unreadable ({exc})"

    def sealed(self) -> tuple[int, str] | None:
        """(bytes, digest) the seal holds, or None when there is none (a search killed
        before its first batch was told); ValueError for a seal of another shape."""
        what = kind(self.seal_path)
        if what is None:
            return None
        if what != "file":
            raise ValueError(f"{article(what)}, not a seal")
        fd = open_regular(self.seal_path, os.O_RDONLY)
        with open(fd, "rb") as fh:
            data = fh.read(SEAL_MAX + 1)
        if len(data) > SEAL_MAX:
            raise ValueError(f"more than {SEAL_MAX:,} bytes, no seal guesslab wrote")
        seal = json.loads(data)  # ValueError: not JSON
        if not (
            isinstance(seal, dict)
            and seal.get("algorithm") == ALGORITHM
            and type(seal.get("bytes")) is int
            and seal["bytes"] >= 0
            and isinstance(seal.get("digest"), str)
        ):
            raise ValueError(f"not a seal: bytes, digest and algorithm {ALGORITHM}")
        return seal["bytes"], seal["digest"]

    # ------------------------------------------------------------------------- writing

    def seal(self) -> None:
        """Seal the journal as it is now (after a batch is told)."""
        if kind(self.path) != "file":
            return
        size, digest = _digest(self.path, None)
        seal = {"bytes": size, "digest": digest, "algorithm": ALGORITHM}
        # Written whole and renamed into place, but not synced to disk (6 ms a batch, on a
        # loaded disk): a seal older than its journal after a crash vouches for a shorter
        # prefix, and one lost or cut short sets the journal aside, which the stored tasks
        # make cost no solving.
        tmp = self.seal_path.with_name(f".{self.seal_path.name}.tmp")
        with open(open_regular(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "wb") as fh:
            fh.write(json.dumps(seal).encode())
        os.replace(tmp, self.seal_path)

    def set_aside(self, reason: str) -> None:
        """Move the journal and its seal to ``quarantine/search/``; say so in one line."""
        moved = [self.quarantined(p) for p in (self.path, self.seal_path) if kind(p)]
        where = f"moved to {moved[0].parent}" if moved else "not found"
        self.log(
            f"warning: {self.path} is not a journal this search can go on from ({reason}); "
            f"{where}: the search starts a new journal, its trials' tasks stored are not "
            "solved again"
        )

    def quarantined(self, path: Path) -> Path:
        """Move the entry ``path`` itself (a link is not followed) to
        ``<study>/quarantine/search/``, under a name no entry there has; where it went.  (The
        store's own quarantine, :mod:`pipeline.storage.store_upkeep`, files entries by
        family.)"""
        folder = ensure_dir(self.folder.quarantine / "search", below=self.folder.path)
        target, n = folder / path.name, 1
        while kind(target) is not None:
            target, n = folder / f"{path.name}.{n}", n + 1
        os.rename(path, target)
        return target


def _content_problem(path: Path, sealed: tuple[int, str] | None) -> str | None:
    """Why the journal file ``path`` is not one Optuna wrote and ``sealed`` vouches for."""
    fd = open_regular(path, os.O_RDONLY)
    with open(fd, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if sealed is not None:
            want, digest = sealed
            if size < want:
                return f"{size:,} bytes, shorter than the {want:,} sealed when a batch was told"
            if _digest(path, want)[1] != digest:
                return f"its first {want:,} bytes are not those sealed (changed or damaged)"
        for number, line in enumerate(fh, start=1):
            if not line.endswith(b"\n"):
                return f"line {number} is cut short"
            try:
                entry = json.loads(line)
            except (ValueError, RecursionError):
                return f"line {number} is not JSON"
            if not isinstance(entry, dict) or "op_code" not in entry:
                return f"line {number} is not an entry of Optuna's journal"
    return None


def _digest(path: Path, size: int | None) -> tuple[int, str]:
    """(bytes, XXH3-128 hex digest) of the first ``size`` bytes of ``path`` (all: None)."""
    import xxhash

    hasher = xxhash.xxh3_128()
    fd = open_regular(path, os.O_RDONLY)
    done = 0
    with open(fd, "rb") as fh:
        while size is None or done < size:
            block = fh.read(_BLOCK if size is None else min(_BLOCK, size - done))
            if not block:
                break
            hasher.update(block)
            done += len(block)
    return done, hasher.hexdigest()
