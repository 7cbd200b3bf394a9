"""The study's folder on disk, ``<paths.outputs>/<study.name>``: one :class:`StudyFolder`.

It owns the folder's layout (``results/``, ``runs/``, ``checkpoints/``, ``quarantine/``,
``summary/``, the lock files and ``.claims/``), the checks a run makes before it writes there,
the study's locks, its records of runs, the folders it writes whole (:meth:`StudyFolder.staged`)
and the store's upkeep under them.  The run, the driver, reproduce and the index hold one of
these rather than paths.

Each check raises StudyError naming ``paths.outputs`` (as the user wrote it) or
``study.name``, and the path; none makes or writes anything but a probe file it removes.
The file-system rule inside the folder (no link followed, no special file opened) is
:mod:`pipeline.storage.safe_paths`; :meth:`StudyFolder.unsafe_entries` holds the folder to it.

The locks let the jobs of a parallel multirun share the folder (their tasks differ:
:mod:`pipeline.running.claims`): :meth:`StudyFolder.locked` serialises the store's upkeep and
the summary; :meth:`StudyFolder.running` is held, shared, by every computing job, so one that
gets it alone knows the temporaries it finds are a killed run's.  fcntl, not the filelock
package: ``running`` is a shared lock one job may try to take alone (filelock has exclusive
locks only), and the kernel releases a killed job's flock.  The lock files are their owner's
only (:mod:`pipeline.storage.locking`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import os
import re
import shutil
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.errors import StudyError, UnsafePath, short_repr
from pipeline.storage import own_files, store_layout
from pipeline.storage.checkpoints import StudyCheckpoints
from pipeline.storage.locking import OWNER_ONLY, not_ours, owner_only
from pipeline.storage.own_files import INDEX_TITLE, REPORT_NAME, SUMMARY_NAME
from pipeline.storage.safe_paths import (
    INDEX_NAME,
    ensure_dir,
    is_real_dir,
    kind,
    open_regular,
    path_length_problem,
    real_subdirs,
)
from solvers.kit.lock_holders import holders_text

if TYPE_CHECKING:
    from pipeline.storage.store_newest import StoredIds
    from pipeline.storage.store_overview import StoreCounts

# Folders below the study folder that the pipeline reads or writes; below SCANNED every
# entry must be a real folder or a regular file (plots and run configs are written there).
CLAIMS = ".claims"  # <study>/.claims/: the claims of the runs computing in the study folder
STUDY_FOLDERS = ("results", "quarantine", "summary", "runs", "checkpoints", CLAIMS)
SCANNED = ("summary", "runs")
STUDY_FILES = (".lock", ".running")  # opened by name: the study's locks
STALE = re.compile(r"\..+\.staging-(\d+)")  # a staging folder (staged), its process's id


@dataclass(frozen=True)
class StudyFolder:
    """The folder of one study: its layout, its checks, its locks and its store's upkeep.

    ``outputs`` is ``paths.outputs`` as the user wrote it, quoted by the messages (None: the
    folder above, as a path)."""

    path: Path
    outputs: Any = None

    @classmethod
    def of(cls, cfg: Mapping[str, Any]) -> StudyFolder:
        """The folder of the configured study: <paths.outputs>/<study.name>."""
        outputs = cfg["paths"]["outputs"]
        path = Path(str(outputs)).expanduser().resolve() / str(cfg["study"]["name"])
        return cls(path, outputs)

    @classmethod
    def all_in(cls, outputs: Path | str) -> list[StudyFolder]:
        """Every study folder in ``outputs`` (one holding a results/ folder), by name: real
        folders only (a link to another folder is not a study of these outputs, and is never
        followed; see :mod:`pipeline.storage.safe_paths`)."""
        found = real_subdirs(Path(outputs).resolve())
        return [cls(p) for p in sorted(found) if is_real_dir(p / "results")]

    def __post_init__(self) -> None:
        if self.outputs is None:
            object.__setattr__(self, "outputs", str(self.path.parent))

    def __str__(self) -> str:
        return str(self.path)

    @property
    def outputs_key(self) -> str:
        """``paths.outputs=<as given>``: how the messages name the setting."""
        return f"paths.outputs={self.outputs!r}"

    # ------------------------------------------------------------------------------ layout

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def results(self) -> Path:
        """The store: ``results/family=<name>/part-*.parquet``."""
        return self.path / "results"

    @property
    def quarantine(self) -> Path:
        return self.path / "quarantine"

    @property
    def runs(self) -> Path:
        """The configs of the runs, one ``<time>.yaml`` each."""
        return self.path / "runs"

    @property
    def checkpoints(self) -> StudyCheckpoints:
        """The tasks' checkpoint folders (``checkpoints/<task id>/``, and
        ``checkpoints/shared/<key>/`` for the pieces a run's tasks share)."""
        return StudyCheckpoints(self.path)

    @property
    def claims(self) -> Path:
        """The claims of the runs computing here (:mod:`pipeline.running.claims`)."""
        return self.path / CLAIMS

    @property
    def summary(self) -> Path:
        """``summary.md``; its tables and figures are in ``summary/``."""
        return self.path / SUMMARY_NAME

    @property
    def report(self) -> Path:
        return self.path / REPORT_NAME

    @property
    def index(self) -> Path:
        """The index of the studies in paths.outputs, beside this folder."""
        return self.path.parent / INDEX_NAME

    def family_dir(self, family: str) -> Path:
        """Where the store keeps ``family``'s files."""
        return store_layout.family_dir(self.results, family)

    # ------------------------------------------------------------------ the file-system rule

    def unsafe_entries(self) -> list[tuple[Path, str]]:
        """Each path of the folder the store could only use by following a link out of it or
        by opening a special file, with what it is (empty: the folder is fine).

        Checked: the folder, each of STUDY_FOLDERS and STUDY_FILES, ``results/family=*``, the
        entries of the checkpoint folders (each a real folder), and everything below SCANNED.
        ``lstat`` only, nothing is opened."""
        found = []

        def expect(path: Path, wanted: str) -> bool:
            what = kind(path)
            if what is not None and what != wanted:
                found.append((path, what))
            return what == wanted

        if not expect(self.path, "folder"):
            return found
        for name in STUDY_FOLDERS:
            expect(self.path / name, "folder")
        for name in STUDY_FILES:
            expect(self.path / name, "file")
        if is_real_dir(self.results):
            with os.scandir(self.results) as entries:
                for entry in entries:
                    if entry.name.startswith("family=") and entry.is_symlink():
                        found.append((Path(entry.path), kind(Path(entry.path)) or "gone"))
        found += self.checkpoints.not_folders()
        for name in SCANNED:
            top = self.path / name
            if not is_real_dir(top):
                continue
            for folder, dirs, files in os.walk(top, followlinks=False):
                for entry in (*dirs, *files):
                    path = Path(folder, entry)
                    what = kind(path)
                    if what not in (None, "file", "folder"):
                        found.append((path, what))
        return sorted(found)

    def check_safe(self) -> None:
        """Refuse a link out of the study folder, or a FIFO that would hang a reader: a
        StudyError naming the first path :meth:`unsafe_entries` finds."""
        found = self.unsafe_entries()
        if not found:
            return
        path, what = found[0]
        more = f" (and {len(found) - 1} more such entries)" if len(found) > 1 else ""
        wanted = "a file" if path.name in STUDY_FILES else "a real folder or a regular file"
        if path == self.path or (path.parent == self.path and path.name in STUDY_FOLDERS):
            wanted = "a real folder"
        if path.parent.name == "results" and path.name.startswith("family="):
            wanted = "a real folder"
        if path.parent in self.checkpoints.folders():
            wanted = "a real folder (a checkpoint folder)"
        what = {"file": "a file", "folder": "a folder"}.get(what, what)
        problem = UnsafePath(
            f"{path} is {what}, where the study needs {wanted}{more}; guesslab never "
            "follows a link out of its study folder nor opens a special file: move it away"
        )
        raise StudyError(f"{self.outputs_key}: {problem}")

    # ------------------------------------------------------------------ checks before a run

    def check_path(self) -> None:
        """Refuse a study folder whose path the file system cannot hold."""
        problem = path_length_problem(self.path)
        if problem is not None:
            raise StudyError(f"paths.outputs={short_repr(self.outputs)}: {problem}")

    def check_summary_target(self, stored_only: bool) -> None:
        """Refuse, before any work, a summary that could not be written: ``<paths.outputs>/
        index.html`` a folder (the index goes there); with ``stored_only`` (``stage=summary``)
        also a study with no stored results (a misspelled name would get an empty summary) and a
        study folder or paths.outputs that cannot be written.  At both stages, a summary.md,
        report.html or index.html that guesslab did not write (:meth:`check_own_files`).
        Nothing is made or written."""
        index = self.index
        if kind(index) == "folder":
            raise StudyError(
                f"{self.outputs_key}: {index} is a folder, where every summary writes the "
                "index of the studies in paths.outputs; move it away (a study's folder: rename it)"
            )
        stored = bool(self.result_files())
        if stored_only and not stored:
            names = [s.name for s in StudyFolder.all_in(self.path.parent)]
            more = f" and {len(names) - 10} more" if len(names) > 10 else ""
            held = ", ".join(names[:10]) + more if names else "none"
            raise StudyError(
                f"study.name={self.name!r}: no results are stored in {self.path}, so stage=summary "
                f"has nothing to summarize and wrote nothing; studies with results in "
                f"{self.outputs_key}: {held}"
            )
        self.check_own_files(stored)
        if stored_only:
            self.check_writable(self.path, "the summary")
            self.check_writable(self.path.parent, "the index of its studies")

    def check_own_files(self, stored: bool) -> None:
        """Refuse the summary of a study whose ``summary.md`` or ``report.html``, or an
        ``index.html`` in paths.outputs, is not a file guesslab wrote (a folder of the user's
        given as the study's folder, the user's own index.html): the summary would replace it.
        An unmarked summary.md is guesslab's only where results are stored (``stored``)."""
        name = self.name
        old_summary = None
        if stored:  # the summary's own module (matplotlib): only where a summary is made
            from solvers.kit.summary_parts import markdown_code

            old_summary = f"# Study {markdown_code(name)}"
        summary, report = self.summary, self.report
        for path, problem in [
            (summary, own_files.not_ours(summary, "", old_summary=old_summary)),
            (report, own_files.not_ours(report, f"Study {name}")),
        ]:
            if problem is not None:
                raise StudyError(
                    f"study.name={short_repr(name)}: {path} is {problem}, and every summary of "
                    "this study replaces it; move it away, or choose another study.name or "
                    "paths.outputs (nothing was run or written)"
                )
        index = self.index
        if (problem := own_files.not_ours(index, INDEX_TITLE)) is not None:
            raise StudyError(
                f"{self.outputs_key}: {index} is {problem}, and every summary replaces it "
                "with the index of the studies in paths.outputs; move it away, or choose another "
                "paths.outputs (nothing was run or written)"
            )

    def check_results_target(self) -> Path | None:
        """Refuse, before any work, a study folder where results cannot be stored: one that
        cannot be written, or whose ``results`` is a file.  The folder is made if missing;
        returned: the outermost folder made (None: it was there), which
        :meth:`remove_if_untouched` removes again if the run stores nothing (a refusal here
        removes it at once)."""
        made = self._first_missing()
        try:
            self.check_writable(self.path)
            results = self.results
            if results.exists() and not results.is_dir():
                raise StudyError(
                    f"{self.outputs_key}: {results} is a file, not the results "
                    "folder; move it away (or choose another paths.outputs)"
                )
        except StudyError:
            if made is not None:
                self.remove_if_untouched(made)
            raise
        return made

    def check_writable(self, where: Path, what: str = "results") -> None:
        """Refuse, before any work, an output folder that cannot be written."""
        try:
            where.mkdir(parents=True, exist_ok=True)
            probe = where / f".write-probe-{os.getpid()}"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
            os.close(os.open(probe, flags, 0o600))
            probe.unlink()
        except OSError as exc:
            raise StudyError(
                f"{self.outputs_key}: cannot write {what} under {where} ({exc.strerror or exc})"
            ) from None

    # ------------------------------------------------------------------------------- locks

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the study's exclusive lock (blocks until no other job holds it): the store's
        upkeep and the summary run under it, so the last job to summarize sees every row."""
        self.path.mkdir(parents=True, exist_ok=True)
        lock = self.path / ".lock"
        with _open_lock(lock) as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                print(_waiting_message(lock), file=sys.stderr, flush=True)
                fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def running(self, when_alone: Callable[[], object]) -> Iterator[None]:
        """Mark this job as computing in the study (a shared lock every computing job holds);
        call ``when_alone()`` first if no other job is: the temporaries it finds are then a
        killed run's."""
        self.path.mkdir(parents=True, exist_ok=True)
        with _open_lock(self.path / ".running") as fh:
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

    def _first_missing(self) -> Path | None:
        """The outermost folder on the way to this one (itself included) that is not there
        yet, or None: what a run that goes on to make the folder creates."""
        missing = None
        for folder in (self.path, *self.path.parents):
            if folder.exists():
                break
            missing = folder
        return missing

    def remove_if_untouched(self, root: Path) -> None:
        """Remove ``root`` (what :meth:`check_results_target` made) if it holds
        nothing but empty folders and lock files no job holds, so a run that failed before
        storing anything leaves nothing behind.  Any other file, or a lock another job holds,
        keeps it (and the folders above that file)."""
        if not root.is_dir():
            return
        for path in sorted(root.rglob("*"), key=lambda p: len(p.parts), reverse=True):
            if path.is_dir() and not path.is_symlink():
                with contextlib.suppress(OSError):
                    path.rmdir()  # only if empty
            elif path.name in STUDY_FILES:
                _unlink_if_free(path)
        with contextlib.suppress(OSError):
            root.rmdir()

    # ------------------------------------------------------------------- files written whole

    @contextlib.contextmanager
    def staged(self, name: str) -> Iterator[Path]:
        """A new, empty folder named ``name`` (links written into it keep working) in a hidden
        folder ``.<name>.staging-<pid>`` of the study folder; on success its entries replace
        those of ``<study>/<name>`` (made if missing), and the staging folder is removed
        whatever happens.

        A family's summary writes its tables and figures into ``summary/`` with its own calls
        (``DataFrame.to_parquet``, ``Figure.savefig``): a full disk in the middle of one would
        leave a truncated file there.  Here its files are renamed in only once every one is
        written (a rename needs no space and is atomic), so ``summary/`` keeps complete files
        only."""
        folder = self.path / name
        parent = self.path / f".{name}.staging-{os.getpid()}"
        if parent.is_symlink() or parent.is_file():
            parent.unlink()
        shutil.rmtree(parent, ignore_errors=True)  # a leftover of a process killed mid-write
        stage = parent / name
        stage.mkdir(parents=True)
        try:
            yield stage
            folder.mkdir(exist_ok=True)
            for entry in sorted(stage.iterdir()):
                target = folder / entry.name
                if entry.is_dir() and target.is_dir() and not target.is_symlink():
                    shutil.rmtree(target)  # os.replace cannot put a folder over a full one
                os.replace(entry, target)
        finally:
            shutil.rmtree(parent, ignore_errors=True)

    def remove_stale_staging(self) -> list[Path]:
        """Remove the staging folders (:meth:`staged`) of processes that are gone (a summary
        killed mid-write leaves its ``.summary.staging-PID`` for ever otherwise); those of live
        processes stay.  The entries themselves go: a link is unlinked, never followed.
        Returns what was removed."""
        removed = []
        try:
            entries = list(os.scandir(self.path))
        except OSError:
            return removed
        for entry in entries:
            found = STALE.fullmatch(entry.name)
            if found is None or _alive(int(found.group(1))):
                continue
            path = Path(entry.path)
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
            removed.append(path)
        return removed

    # ---------------------------------------------------------------------- the run records

    def save_run_config(self, given: dict[str, Any]) -> Path:
        """Keep the run's config (plain, resolved) under ``runs/``; its path."""
        import yaml

        runs = ensure_dir(self.runs, below=self.path)
        stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H-%M-%S-%fZ")
        path = runs / f"{stamp}.yaml"
        fd = open_regular(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        try:
            with open(fd, "w") as fh:
                fh.write(yaml.safe_dump(given, sort_keys=False))
        except BaseException:  # a full disk: no empty or partial record of the run is left
            path.unlink(missing_ok=True)
            raise
        return path

    # ------------------------------------------------------------------------- the store

    def result_files(self) -> list[Path]:
        """The results files of the store (regular files only)."""
        from pipeline.storage.store import result_files

        return result_files(self.results)

    def written_by_others(self, listed: set[Path], ours: list[Path]) -> bool:
        """Whether results files appeared since ``listed`` that are not ``ours`` (another job of
        a parallel multirun sharing the store wrote them): they may hold tasks of ours too."""
        return bool(set(self.result_files()) - listed - set(ours))

    def stored_ids(self) -> StoredIds:
        """The ids of the tasks stored (read only)."""
        from pipeline.storage.store_newest import ids_in

        return ids_in(self.result_files())

    def counts(self) -> StoreCounts:
        """What the store holds, counted."""
        from pipeline.storage.store_overview import store_counts

        return store_counts(self.results)

    def compact(self) -> StoredIds:
        """Drop the rows a newer file supersedes; the ids that remain (under :meth:`locked`)."""
        from pipeline.storage.store_upkeep import compact

        return compact(self.result_files())

    def remove_temporaries(self) -> int:
        """Delete the temporary files a killed run left in the store; how many."""
        from pipeline.storage.store_upkeep import remove_temporaries

        return remove_temporaries(self.results)

    def tidied(self, log: Callable[[str], object]) -> StoredIds:
        """Under :meth:`locked`: stale staging folders removed, the entries of the store that
        are not results files moved to ``quarantine/`` (one line each), the store compacted;
        the ids stored."""
        from pipeline.storage.store_upkeep import quarantine_bad_files

        self.remove_stale_staging()
        for path, reason in quarantine_bad_files(self.results, self.quarantine):
            log(f"warning: {path} is not a guesslab results file ({reason}); moved to quarantine/")
        return self.compact()


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this machine (one of another user's counts too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _open_lock(path: Path):
    """A lock file opened for appending, created if missing, readable and writable by its
    owner only (:func:`~pipeline.storage.locking.owner_only`); never through a link, never a
    FIFO or another special file (pipeline.errors.UnsafePath).  StudyError (one line) when
    this account may not open it (another account's)."""
    try:
        fd = open_regular(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, OWNER_ONLY)
    except PermissionError as exc:
        raise StudyError(not_ours(path, exc)) from None
    owner_only(fd)
    return open(fd, "a")  # noqa: SIM115


def _unlink_if_free(path: Path) -> None:
    """Delete an empty lock file unless another job holds (or waits on) it."""
    try:
        with _open_lock(path) as fh:
            if path.stat().st_size:
                return
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            path.unlink()
    except (OSError, StudyError):  # held by another job, already gone, or not ours
        return


def _waiting_message(lock: Path) -> str:
    """What a job says while it waits for a lock: the lock file and who holds it."""
    who = holders_text(lock)
    return f"waiting: {who} holds the study lock {lock}; this run goes on when it is released"
