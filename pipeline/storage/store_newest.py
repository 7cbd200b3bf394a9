"""Which stored rows count: a task's rows in the newest file holding it.

A task run again gets its new row in a new file; until :func:`pipeline.storage.store_upkeep.compact`
drops the older rows, every reader keeps only the rows of the newest file holding a task.
The ids are read as arrays (no Python object per row).
"""

from __future__ import annotations

import itertools
import os
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.storage.ids import EMPTY, IdSet, first_of_each, id_array, id_order


@dataclass(frozen=True)
class StoredIds:
    """The ids of the tasks a store holds: all of them, and those whose rows are ok."""

    every: IdSet
    ok: IdSet


def ids_in(files: list[Path]) -> StoredIds:
    """The ids the results ``files`` (oldest first) hold (read-only: what ``stage=plan``
    counts; rows of a task in several files, before :func:`~pipeline.storage.store_upkeep.compact`,
    count by the newest file's status).  A file that cannot be read as a results file (foreign
    or corrupt: a run's upkeep quarantines it) holds no ids."""
    return newest_rows(files, skip_unreadable=True)[0]


def newest_rows(
    files: list[Path], skip_unreadable: bool = False
) -> tuple[StoredIds, list[np.ndarray]]:
    """(the stored ids, per file which rows belong to the newest file holding their task).

    ``files`` oldest first.  Arrays throughout: at 10^6 rows ~60 MB and a second; Python
    sets and dicts of the ids took ~10x the memory.  ``skip_unreadable``: a file without
    readable ids holds none (else its error is raised)."""
    ids, ok, file_no = [], [], []
    for n, path in enumerate(files):
        try:
            file_ids, file_ok = ids_and_ok(path)
        except (OSError, KeyError, pa.ArrowException):
            if not skip_unreadable:
                raise
            file_ids, file_ok = id_array(pa.array([], pa.string())), np.zeros(0, bool)
        ids.append(file_ids)
        ok.append(file_ok)
        file_no.append(np.full(len(file_ids), n, np.int32))
    if not ids:
        return StoredIds(EMPTY, EMPTY), []
    all_ids, all_ok, all_files = np.concatenate(ids), np.concatenate(ok), np.concatenate(file_no)
    order = id_order(all_ids)  # stable: a task's rows stay oldest file first
    sorted_ids, sorted_files = all_ids[order], all_files[order]
    starts = first_of_each(sorted_ids)
    group = np.cumsum(starts) - 1  # the task of each sorted row
    last = np.r_[np.flatnonzero(starts)[1:], len(order)] - 1  # each task's newest row
    kept = np.empty(len(order), bool)
    kept[order] = sorted_files == sorted_files[last][group]
    ok_task = np.zeros(len(last), bool)
    ok_task[group[(all_ok & kept)[order]]] = True  # a task with an ok row in its newest file
    unique = sorted_ids[starts]
    bounds = np.cumsum([0, *map(len, ids)])
    per_file = [kept[a:b] for a, b in itertools.pairwise(bounds)]
    every = IdSet(unique, sorted_unique=True)
    return StoredIds(every, IdSet(unique[ok_task], sorted_unique=True)), per_file


SUPERSEDED_COLUMNS = ("filename", "task_id")
_superseded_cache: dict[tuple, pa.Table | None] = {}
SUPERSEDED_CACHE = 32  # sets of files remembered (a summary asks for a family's 3-4 times)


def superseded_rows(files: list[Path]) -> pa.Table | None:
    """Which rows of ``files`` (one family's results files, oldest first) a newer file
    supersedes, as a table of (filename, task_id) pairs: the older rows of a task stored
    in two files, which a run killed between storing a rerun task and compacting leaves;
    None when no task is in two files.

    The same verdict as :func:`~pipeline.storage.store_upkeep.compact` (the ids read as arrays, ~1 s
    at 10^6 rows), remembered per set of files: a file is never changed in place (compaction
    writes a new one over it), so its path, inode, size and time name its content.  A file
    that cannot be read holds no rows here, as for :func:`ids_in`.
    """
    key = files_key(files)
    if key in _superseded_cache:
        return _superseded_cache[key]
    _, keep = newest_rows(files, skip_unreadable=True)
    names: list[str] = []
    ids: list[np.ndarray] = []
    for path, kept in zip(files, keep, strict=True):
        if len(kept) and not kept.all():
            dropped = np.unique(ids_and_ok(path)[0][~kept])
            names += [str(path)] * len(dropped)
            ids.append(dropped)
    found = None
    if names:
        task_ids = pa.array(np.concatenate(ids).astype(str), pa.string())
        found = pa.table([pa.array(names, pa.string()), task_ids], names=SUPERSEDED_COLUMNS)
    remember_superseded(key, found)
    return found


def files_key(files: list[Path]) -> tuple:
    """What identifies the content of ``files``: each one's path, inode, size and mtime."""
    key = []
    for path in files:
        try:
            st = path.stat()
        except OSError:
            return (object(),)  # gone meanwhile: a key no later call matches
        key.append((str(path), st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(key)


def remember_superseded(key: tuple, found: pa.Table | None) -> None:
    if len(_superseded_cache) >= SUPERSEDED_CACHE:
        _superseded_cache.pop(next(iter(_superseded_cache)))
    _superseded_cache[key] = found


def newest_source(con: Any, files: list[Path], superseded: pa.Table | None) -> str:
    """The SQL source of ``files``' rows (one family's) with the ``superseded`` rows left out
    (registered in ``con`` as the table ``superseded``), for a FROM clause."""
    scan = f"read_parquet({files_sql(files)}, union_by_name = false, hive_partitioning = false"
    if superseded is None:
        return f"{scan})"
    con.register("superseded", superseded)
    return (
        f"(SELECT * EXCLUDE (filename) FROM {scan}, filename = true) "
        "ANTI JOIN superseded USING (filename, task_id))"
    )


def ids_and_ok(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """The task ids (an ``S20`` array) and which rows are ok, of one results file (read-only
    arrays).

    Read through ParquetFile, not read_table: the dataset layer read_table goes through
    costs ~1 ms more per file, and its first use imports pandas (~0.5 s).  A small file is
    read once per process while it stays the same file (:data:`SEEN_FILES`): a search, or a
    run of many small batches, reads the store before each batch, and would otherwise read
    every file it wrote again each time.
    """
    identity = file_identity(path)
    if identity is not None and identity in SEEN_FILES:
        SEEN_FILES.move_to_end(identity)
        return SEEN_FILES[identity]
    with pq.ParquetFile(path) as pf:
        table = pf.read(columns=["task_id", "status"])
    ok = pc.equal(table.column("status"), "ok").fill_null(False)
    found = id_array(table.column("task_id")), ok.to_numpy(zero_copy_only=False)
    if identity is not None and len(found[0]) <= SEEN_ROWS:
        for array in found:
            array.flags.writeable = False
        SEEN_FILES[identity] = found
        while len(SEEN_FILES) > SEEN_MAX:
            SEEN_FILES.popitem(last=False)
    return found


# the ids of small results files read in this process, by file identity (a file written
# anew, in place or renamed over, has another): at most SEEN_MAX files of SEEN_ROWS rows
# each (~0.5 MB at most in all: the store's big files are read each time, as before)
SEEN_FILES: OrderedDict[tuple, tuple[np.ndarray, np.ndarray]] = OrderedDict()
SEEN_MAX, SEEN_ROWS = 2048, 200


def file_identity(path: Path) -> tuple | None:
    """What tells one file from another at ``path`` (device, inode, size, modification
    time), or None when it cannot be read."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def files_sql(files: Iterable[Path]) -> str:
    """A list of file paths as an SQL list of string literals (for DuckDB's read_parquet)."""
    from solvers.kit.stored_rows import sql_text

    return "[" + ", ".join(sql_text(str(f)) for f in files) + "]"
