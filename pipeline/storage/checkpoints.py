"""The checkpoints of a study's tasks, as the study folder lays them out.

``<study>/checkpoints/<task id>/`` is a task's own folder and
``<study>/checkpoints/shared/<key>/`` the pieces a run's tasks share; what is inside each
(pieces, seals, ``damaged/``) is :class:`solvers.kit.checkpoints.Checkpoints`'s.  Once a
task's ok row is stored its folder goes (:meth:`StudyCheckpoints.clear`), and at the end of
a run the shared folders no task left needs (:meth:`StudyCheckpoints.tidy`); what was set
aside in either is kept, in ``<study>/quarantine/checkpoints/``, where guesslab never
removes it.  :meth:`StudyCheckpoints.kept` counts what the folders already hold, for the
plan's disk need (:mod:`pipeline.running.needs`): the committed pieces with a seal, as regular files
found without following links, on the study folder's file system, whose every hard link is
in those folders.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pipeline.storage.safe_paths import ensure_dir, is_real_dir
from solvers.kit.checkpoints import DAMAGED, SHARED, Checkpoints, committed_files
from solvers.kit.safe_folders import kind
from solvers.kit.words import counted, format_bytes

CHECKPOINTS = "checkpoints"  # <study>/checkpoints/<task id>/
QUARANTINE = "quarantine"  # <study>/quarantine/checkpoints/<task id>/: a cleared damaged/
_TASK_ID = re.compile(r"[0-9a-f]{20}")


@dataclass(frozen=True)
class Kept:
    """Bytes the checkpoint folders of a study already hold (:meth:`StudyCheckpoints.kept`):
    per task id (``own``) and per shared key (``shared``)."""

    own: dict[str, int] = dataclasses.field(default_factory=dict)
    shared: dict[str, int] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class StudyCheckpoints:
    """The checkpoint folders of the study in the folder ``study``."""

    study: Path

    @property
    def root(self) -> Path:
        """``<study>/checkpoints``: a folder per task."""
        return self.study / CHECKPOINTS

    @property
    def shared_root(self) -> Path:
        """``<study>/checkpoints/shared``: a folder per key the run's tasks share."""
        return self.root / SHARED

    @property
    def kept_aside(self) -> Path:
        """Where what was set aside in a cleared folder is kept."""
        return self.study / QUARANTINE / CHECKPOINTS

    def folders(self) -> tuple[Path, Path]:
        """The folders whose every entry is a checkpoint folder: of a task, or of pieces a
        run's tasks share."""
        return self.root, self.shared_root

    def not_folders(self) -> list[tuple[Path, str]]:
        """Each entry of :meth:`folders` that is not a real folder, with what it is (``lstat``
        only: nothing is followed or opened)."""
        found = []
        for folder in self.folders():  # the first real: lstat follows a link above
            if is_real_dir(self.root) and is_real_dir(folder):
                with os.scandir(folder) as entries:
                    for entry in entries:
                        if not entry.is_dir(follow_symlinks=False):
                            found.append((Path(entry.path), kind(Path(entry.path)) or "gone"))
        return found

    def of_task(self, tid: str) -> Checkpoints:
        """The checkpoint folder of the task ``tid`` (made on first use)."""
        return Checkpoints(self.root / tid, root=self.study)

    def task_folders(self) -> list[Path]:
        """The tasks' checkpoint folders there are (real folders; empty when none)."""
        return [Path(e.path) for e in _real_dirs(self.root) if e.name != SHARED]

    def kept_line(self) -> str:
        """What the unfinished tasks' checkpoints keep, for the one line on a stop ("" if
        none): the next run of the same command resumes each task from its own."""
        tasks = self.task_folders()
        if not tasks:
            return ""
        return (
            f"the checkpoints of {counted(len(tasks), 'unfinished task')} are kept in "
            f"{self.root} (the same command resumes them)"
        )

    def clear(self, task_ids: list[str], log: Callable[[str], None]) -> None:
        """Remove the checkpoint folders of tasks whose ok rows are stored (links not
        followed), keeping what was set aside in them (:meth:`keep_set_aside`)."""
        for tid in task_ids:
            self.cleared(self.of_task(tid), log)

    def tidy(self, keys: tuple[str, ...], still_needed: set[str], log: Callable[[str], None]):
        """At the end of a run: remove the shared checkpoint folders of ``keys`` that no task
        left to run needs (keeping what was set aside in them), then ``shared`` and
        ``checkpoints`` if they are left empty (links not followed)."""
        for key in sorted(set(keys) - still_needed):
            self.cleared(Checkpoints(self.shared_root / key, root=self.study), log)
        for folder in (self.shared_root, self.root):
            if not folder.is_symlink():
                with contextlib.suppress(OSError):
                    folder.rmdir()

    def cleared(self, checkpoints: Checkpoints, log: Callable[[str], None]) -> None:
        """Remove a checkpoint folder no task needs any more, once what was set aside in it
        is kept (:meth:`keep_set_aside`); a folder whose ``damaged/`` cannot be kept is left
        as it is, and one line says so."""
        try:
            self.keep_set_aside(checkpoints, log)
        except OSError as exc:
            log(
                f"warning: what was set aside in {checkpoints.folder / DAMAGED} could not be "
                f"moved to {self.kept_aside} ({exc.strerror or exc}); the "
                "checkpoint folder is left as it is"
            )
            return
        checkpoints.clear()

    def keep_set_aside(self, checkpoints: Checkpoints, log: Callable[[str], None]) -> None:
        """Move the ``damaged/`` folder of ``checkpoints`` (what failed its check or was not
        what it must be, set aside while the task ran) to ``<study>/quarantine/checkpoints/
        <folder name>`` (``.1``, ``.2``... if taken), where guesslab never removes it, with
        one line saying where and how much; nothing when there is none."""
        damaged = checkpoints.damaged()
        if damaged is None:
            return
        place = ensure_dir(self.kept_aside, below=self.study)
        is_shared = checkpoints.folder.parent.name == SHARED
        name = checkpoints.folder.name
        if is_shared:  # beside the tasks' (hex ids)
            name = f"{SHARED}-{name}"
        target, n = place / name, 0
        while kind(target) is not None:
            n += 1
            target = place / f"{name}.{n}"
        os.rename(damaged, target)
        entries, size = len(os.listdir(target)), 0
        for folder, dirs, files in os.walk(target, followlinks=False):
            for entry in (*dirs, *files):
                with contextlib.suppress(OSError):
                    size += os.lstat(Path(folder, entry)).st_size
        what = (
            f"the shared checkpoints {checkpoints.folder.name} are removed"
            if is_shared
            else f"task {checkpoints.folder.name} is stored and its checkpoints removed"
        )
        log(
            f"warning: {what}, but for what was set aside from them ({entries} entries, "
            f"{format_bytes(size)}), kept as evidence in {target} until you delete it (guesslab "
            "never does)"
        )

    def kept(self) -> Kept:
        """What the committed, sealed pieces under ``<study>/checkpoints/`` hold, per task
        folder and per shared folder (see the module's notes for what is counted).  A file is
        counted once: for the shared folder when one of its links is there (a task adopts the
        shared pieces by hard links), else for the first task folder holding it."""
        try:
            top = os.stat(self.root, follow_symlinks=False)
        except OSError:
            return Kept()
        if not stat.S_ISDIR(top.st_mode):
            return Kept()
        files: dict[tuple[int, int], list] = {}  # (device, inode) -> [bytes, links, seen, owner]
        for entry in _real_dirs(self.root):
            if entry.name == SHARED:
                folders = [(("shared", e.name), e) for e in _real_dirs(Path(entry.path))]
            elif _TASK_ID.fullmatch(entry.name):
                folders = [(("own", entry.name), entry)]
            else:
                continue
            for owner, folder in folders:
                for st in committed_files(Path(folder.path)):
                    if st.st_dev != top.st_dev:
                        continue
                    size = min(st.st_size, st.st_blocks * 512)
                    found = files.setdefault((st.st_dev, st.st_ino), [size, st.st_nlink, 0, owner])
                    found[2] += 1
                    if owner[0] == "shared":
                        found[3] = owner
        kept = Kept()
        for size, links, seen, (kind_, name) in files.values():
            if seen == links and size:
                into = kept.shared if kind_ == "shared" else kept.own
                into[name] = into.get(name, 0) + size
        return kept


def _real_dirs(folder: Path) -> list[os.DirEntry]:
    """The real folders (not links) in ``folder``, by name; none when it cannot be listed."""
    try:
        with os.scandir(folder) as entries:
            return sorted((e for e in entries if e.is_dir(follow_symlinks=False)), key=_name)
    except OSError:
        return []


def _name(entry: os.DirEntry) -> str:
    return entry.name
