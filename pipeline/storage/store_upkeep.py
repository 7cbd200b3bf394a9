"""The store's upkeep before and after a run: entries that are not results files moved to
quarantine, leftover temporaries of a killed run removed, and the older rows of a task
stored twice dropped (:func:`compact`), file by file and atomically.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.storage.safe_paths import ensure_dir, is_real_dir, kind, real_subdirs
from pipeline.storage.store_layout import METADATA_KEY, fits_family_schema
from pipeline.storage.store_newest import SEEN_MAX, StoredIds, file_identity, newest_rows
from solvers.kit.atomic_files import replace_file
from solvers.registry import families


def bad_file_reason(path: Path) -> str | None:
    """Why ``path`` is not a readable guesslab results file of its folder's family, or None
    (a file found good is not read again while it stays the same file: :data:`GOOD_FILES`)."""
    if not path.name.startswith("part-") or path.suffix != ".parquet":
        return "not named part-*.parquet"
    identity = file_identity(path)
    if identity is not None and identity in GOOD_FILES:
        return None
    reason = _schema_problem(path)
    if reason is None and identity is not None:
        GOOD_FILES.add(identity)
        if len(GOOD_FILES) > 4 * SEEN_MAX:
            GOOD_FILES.clear()
    return reason


GOOD_FILES: set[tuple] = set()  # identities of the results files found good in this process


def _schema_problem(path: Path) -> str | None:
    family = path.parent.name.partition("=")[2]
    try:
        schema = pq.read_schema(path)
    except Exception as exc:  # noqa: BLE001 - any unreadable file is reported, not read
        return f"unreadable Parquet: {exc}"
    if METADATA_KEY not in (schema.metadata or {}):
        return "no guesslab metadata (a foreign file)"
    if family not in families():
        return f"unknown family {family!r}"
    if not fits_family_schema(schema.remove_metadata(), family):
        return "schema differs from the family's (written by another version?)"
    return None


def _replace_file(path: Path, table: pa.Table, metadata: Mapping[bytes, bytes] | None) -> None:
    """Write ``table`` (with ``metadata``) over ``path`` through a new temporary file, synced
    to disk with its folder (:func:`~solvers.kit.atomic_files.replace_file`)."""
    replace_file(path, lambda fh: pq.write_table(table.replace_schema_metadata(metadata), fh))


def quarantine_bad_files(results: Path, quarantine: Path) -> list[tuple[Path, str]]:
    """Move every entry of the store that is not a results file into ``quarantine``;
    (path, reason) each.

    Foreign and unreadable files go, and so does every entry that is not a regular file (a
    link, a FIFO, a socket, a device, a folder named like a results file): it is renamed as
    it is, never opened or followed, so a link's target is never read, moved or deleted.
    ``results`` and the family folders must be real folders (see
    :meth:`pipeline.storage.study_folder.StudyFolder.check_safe`); a link there is left alone.
    """
    moved = []
    folders: dict[str, Path] = {}  # quarantine/<family>/, made once each (real folders)
    for path, family, reason in _bad_entries(results):
        if family not in folders:
            where = quarantine / family if family else quarantine
            folders[family] = ensure_dir(where, below=quarantine.parent)
        moved.append((_move_into(path, folders[family]), reason))
    return moved


def _bad_entries(results: Path) -> list[tuple[Path, str, str]]:
    """What :func:`quarantine_bad_files` moves, found before anything is moved: (the entry,
    the name of its family's folder or "" for one directly in ``results``, why) each."""
    if not is_real_dir(results):
        return []
    found = []
    files, others = _entries(results)
    for folder in (p for p, what in others if what == "folder" and p.name.startswith("family=")):
        family_files, family_others = _entries(folder)
        for path in family_files:
            if not path.name.startswith(".") and (reason := bad_file_reason(path)) is not None:
                found.append((path, folder.name, reason))
        for path, what in family_others:
            if not path.name.startswith(".") or what == "folder":
                found.append((path, folder.name, _not_a_file(what)))
    for path in files:
        if not path.name.startswith("."):
            found.append((path, "", "not inside a family=<name> folder"))
    for path, what in others:
        if what != "folder" and not (
            path.name.startswith("family=") and what.startswith("a symbolic link")
        ):
            found.append((path, "", _not_a_file(what)))
    return found


def _entries(folder: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """(the regular files, every other entry with what it is: "folder" for a real folder, else
    a link, a FIFO...) directly in the real ``folder``, each sorted; one scan, ``lstat``
    semantics: nothing is opened or followed."""
    files, others = [], []
    with os.scandir(folder) as entries:
        for entry in entries:
            path = Path(entry.path)
            if entry.is_file(follow_symlinks=False):
                files.append(path)
            elif entry.is_dir(follow_symlinks=False):
                others.append((path, "folder"))
            else:
                others.append((path, kind(path) or "gone"))
    return sorted(files), sorted(others)


def _not_a_file(what: str) -> str:
    """Why an entry that is not a regular file was quarantined."""
    if what == "folder":
        return "a folder, not a results file"
    return f"not a regular file but {what}, never opened or followed"


def _move_into(path: Path, folder: Path) -> Path:
    """Move the entry ``path`` (itself: a link is not followed) into the real ``folder``, under
    a name no earlier quarantined entry has; returns ``path``."""
    target = folder / path.name
    n = 1
    while kind(target) is not None:
        target = folder / f"{path.name}.{n}"
        n += 1
    os.rename(path, target)
    return path


def compact(files: list[Path]) -> StoredIds:
    """Drop rows of ``files`` (a store's results files, oldest first:
    :meth:`~pipeline.storage.study_folder.StudyFolder.result_files`) superseded by a newer file
    holding the same task; the ids that remain.

    A task may have several rows (one per target, say); they always come in one file, so
    the newest file that holds a task keeps all its rows and older files lose theirs.  The
    store is read once (two columns, as arrays: no Python object per row), and the ids of
    every task that remains come back, so a run knows what to skip without reading it again.
    """
    stored, keep_per_file = newest_rows(files)
    for path, keep in zip(files, keep_per_file, strict=True):
        if keep.all():
            continue
        with pq.ParquetFile(path) as pf:
            table = pf.read()
        if not keep.any():
            path.unlink()
            continue
        _replace_file(path, table.filter(pa.array(keep)), table.schema.metadata)
    return stored


def remove_temporaries(results: Path) -> int:
    """Delete temporary files a killed run left behind (in real family folders only, the
    entries themselves: a link's target is never touched); return how many."""
    stale = []
    for folder in real_subdirs(results, "family="):
        with os.scandir(folder) as entries:
            stale += [
                Path(e.path)
                for e in entries
                if e.name.startswith(".part-")
                and e.name.endswith(".tmp")
                and not e.is_dir(follow_symlinks=False)
            ]
    for path in stale:
        path.unlink()
    return len(stale)
