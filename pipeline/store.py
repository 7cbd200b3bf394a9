"""The Parquet store: one file per finished batch, written atomically, one row per task.

Layout: ``<study dir>/results/family=<family>/part-<utc ns>-<random>.parquet``, hive
partitioning as pyarrow's ``write_dataset`` and Spark write it: the partition column
``family`` lives in the path only, never in the files.  Every file of a family has the
family's schema (:func:`family_schema`), so ``pandas.read_parquet(results)``, pyarrow
datasets, DuckDB and Polars read a store the standard way; :func:`load_results` reads a
study whose families differ in columns.

Files are written under a hidden temporary name and renamed into place, so a reader or a
killed run never sees half a file.  A task that is run again (an error retried, or
``store.recompute=true``) gets its new row in a new file; :func:`compact` then drops the
older rows of the same task ids, file by file and atomically, so one row per task remains.
A run killed between the two leaves a task's rows in two files until the next compaction
(the next run, or ``stage=summary``); every reader here (:func:`load_results`,
:func:`store_counts`, :func:`family_rows`, hence the summary, the report and the index)
keeps only the rows of the newest file holding a task, as :func:`compact` does.

Every read, move and delete goes through :mod:`pipeline.safe_paths`: only regular files in
real folders are listed, no link is followed, and an entry that is not a regular file is
moved to quarantine as the entry itself, never opened.
"""

from __future__ import annotations

import itertools
import json
import os
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.ids import EMPTY, IdSet, first_of_each, id_array, id_order
from pipeline.safe_paths import (
    UnsafePath,
    ensure_dir,
    is_real_dir,
    kind,
    odd_entries,
    real_subdirs,
    regular_files,
)
from solvers.registry import COMMON_COLUMNS, Row, get_family, row_columns

if TYPE_CHECKING:  # pandas only where results are read: workers that write them skip its import
    import pandas as pd

    from solvers.kit.stored_rows import StoredRows

ARROW_TYPES: dict[str, pa.DataType] = {
    "string": pa.string(),
    "int64": pa.int64(),
    "float64": pa.float64(),
    "bool": pa.bool_(),
    "list<float64>": pa.list_(pa.float64()),
    "list<int64>": pa.list_(pa.int64()),
}
METADATA_KEY = b"guesslab"


PARTITION = "family"  # the hive partition column: in the path, not in the files


def family_schema(family: str) -> pa.Schema:
    """The Arrow schema of every results file of ``family`` (no partition column)."""
    columns = row_columns(get_family(family)).items()
    return pa.schema([(k, ARROW_TYPES[v]) for k, v in columns if k != PARTITION])


def family_dir(results: Path, family: str) -> Path:
    """The folder of one family's result files."""
    return results / f"family={family}"


def result_files(results: str | Path) -> list[Path]:
    """Every finished results file under ``results``, oldest first: regular files only, in
    real ``family=*`` folders (a link, a FIFO or a folder named like one is never listed)."""
    files = [f for d in real_subdirs(Path(results), "family=") for f in _part_files(d)]
    return sorted(files, key=lambda p: p.name)


def _part_files(folder: Path) -> list[Path]:
    return regular_files(folder, "part-", ".parquet")


EncodedFile = tuple[str, bytes]  # (family, the bytes of one finished Parquet file)


def write_rows(results: Path, rows: Iterable[Row], metadata: Mapping[str, Any]) -> list[Path]:
    """Write ``rows`` (grouped by family) as new files, atomically; return their paths."""
    return write_encoded(results, encode_rows(rows, metadata_bytes(metadata)))


def metadata_bytes(metadata: Mapping[str, Any]) -> bytes:
    """The run metadata as stored in every file (JSON), encoded once per run."""
    return json.dumps(dict(metadata), default=str, sort_keys=True).encode()


# Rows become Arrow columns this many at a time, as they arrive, and are dropped: a batch's
# Python rows never pile up.  Kept whole until the batch ended, 1,500 rows (and their
# lists) made the cycle collector walk them again and again: 2.3-2.8% of a worker's time on
# the load benchmark, against 0.25% in the plain loop (gc.callbacks, 30,000 tasks).
ENCODE_CHUNK = 256


def encode_rows(rows: Iterable[Row], metadata: bytes) -> list[EncodedFile]:
    """Parquet files (in memory, one per family, in the order the families first appear)
    holding ``rows`` and the run metadata; ``rows`` is read once, ENCODE_CHUNK at a time.

    Workers call this on their own batch, so the driver only writes finished bytes.
    """
    pending: dict[str, list[Row]] = {}
    encoded: dict[str, list[pa.RecordBatch]] = {}
    types: dict[str, pa.StructType] = {}
    for row in rows:
        family = row["family"]
        chunk = pending.setdefault(family, [])
        chunk.append(row)
        if len(chunk) >= ENCODE_CHUNK:
            encoded.setdefault(family, []).append(_record_batch(chunk, family, types))
            pending[family] = []
    out = []
    for family, chunk in pending.items():
        batches = encoded.get(family, [])
        if chunk:
            batches.append(_record_batch(chunk, family, types))
        table = pa.Table.from_batches(batches)
        sink = pa.BufferOutputStream()
        pq.write_table(table.replace_schema_metadata({METADATA_KEY: metadata}), sink)
        out.append((family, sink.getvalue().to_pybytes()))
    return out


def _record_batch(rows: list[Row], family: str, types: dict[str, pa.StructType]) -> pa.RecordBatch:
    """``rows`` (of ``family``) turned into columns by Arrow's C++ converter: a struct array
    of the dicts, 2.1 us a row of the load benchmark against 3.6 us for Python lists per
    column.  Keys outside the schema (the partition column) are left out."""
    if family not in types:
        types[family] = _row_type(family)
    return pa.RecordBatch.from_struct_array(pa.array(rows, type=types[family]))


def _row_type(family: str) -> pa.StructType:
    """A family's row as an Arrow struct (the fields of its files' schema; ~50 us)."""
    return pa.struct(list(family_schema(family)))


def write_encoded(results: Path, files: Iterable[EncodedFile]) -> list[Path]:
    """Store encoded files (see :func:`encode_rows`) atomically; return their paths."""
    return [_atomic_write(data, family_dir(results, family)) for family, data in files]


class StoreError(OSError):
    """The store cannot be written (disk full, permissions); nothing partial was left.
    Raised from the OSError of the write, with the ``folder`` it was for."""

    folder: Path | None = None


def _atomic_write(data: bytes, folder: Path) -> Path:
    name = f"part-{time.time_ns():020d}-{uuid.uuid4().hex[:8]}.parquet"
    tmp = folder / f".{name}.tmp"
    try:
        # the study folder (results' parent) was checked; results and the family folder are
        # made here, each checked to be a real folder (never a link out of the study folder)
        ensure_dir(folder, below=folder.parent.parent)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
        with open(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, folder / name)
    except UnsafePath:
        raise
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        error = StoreError(f"cannot write results to {folder}: {exc}")
        error.folder = folder
        raise error from exc
    return folder / name


def bad_file_reason(path: Path) -> str | None:
    """Why ``path`` is not a readable guesslab results file of its folder's family, or None."""
    if not path.name.startswith("part-") or path.suffix != ".parquet":
        return "not named part-*.parquet"
    family = path.parent.name.partition("=")[2]
    try:
        schema = pq.read_schema(path)
    except Exception as exc:  # noqa: BLE001 - any unreadable file is reported, not read
        return f"unreadable Parquet: {exc}"
    if METADATA_KEY not in (schema.metadata or {}):
        return "no guesslab metadata (a foreign file)"
    try:
        expected = family_schema(family)
    except Exception:  # noqa: BLE001
        return f"unknown family {family!r}"
    if schema.remove_metadata() != expected:
        return "schema differs from the family's (written by another version?)"
    return None


def _replace_file(path: Path, table: pa.Table, metadata: Mapping[bytes, bytes] | None) -> None:
    """Write ``table`` (with ``metadata``) over ``path`` through a new temporary file."""
    tmp = path.with_name(f".{path.name}.tmp")
    if kind(tmp) is not None:
        tmp.unlink()  # a stale temporary, or a link: the entry goes, never its target
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
    with open(fd, "wb") as fh:
        pq.write_table(table.replace_schema_metadata(metadata), fh)
    os.replace(tmp, path)


def quarantine_bad_files(results: Path, quarantine: Path) -> list[tuple[Path, str]]:
    """Move every entry of the store that is not a results file into ``quarantine``;
    (path, reason) each.

    Foreign and unreadable files go, and so does every entry that is not a regular file (a
    link, a FIFO, a socket, a device, a folder named like a results file): it is renamed as
    it is, never opened or followed, so a link's target is never read, moved or deleted.
    ``results`` and the family folders must be real folders (see
    :func:`pipeline.safe_paths.check_study_folder`); a link there is left alone.
    """
    if not is_real_dir(results):
        return []
    moved = []
    for folder in sorted(real_subdirs(results, "family=")):
        for path in sorted(p for p in regular_files(folder) if not p.name.startswith(".")):
            reason = bad_file_reason(path)
            if reason is not None:
                moved.append((_quarantine(path, quarantine, folder.name), reason))
        with os.scandir(folder) as entries:
            subdirs = [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
        odd = [*odd_entries(folder), *((p, "folder") for p in subdirs)]
        for path, what in sorted(odd):
            if not path.name.startswith(".") or what == "folder":
                moved.append((_quarantine(path, quarantine, folder.name), _not_a_file(what)))
    for path in sorted(p for p in regular_files(results) if not p.name.startswith(".")):
        moved.append((_quarantine(path, quarantine), "not inside a family=<name> folder"))
    for path, what in odd_entries(results):
        if not (path.name.startswith("family=") and what.startswith("a symbolic link")):
            moved.append((_quarantine(path, quarantine), _not_a_file(what)))
    return moved


def _not_a_file(what: str) -> str:
    """Why an entry that is not a regular file was quarantined."""
    if what == "folder":
        return "a folder, not a results file"
    return f"not a regular file but {what}, never opened or followed"


def _quarantine(path: Path, quarantine: Path, family: str = "") -> Path:
    """Move the entry ``path`` (itself: a link is not followed) into ``quarantine/family``
    (each level made a real folder), under a name no earlier quarantined entry has; returns
    ``path``."""
    folder = ensure_dir(quarantine / family if family else quarantine, below=quarantine.parent)
    target = folder / path.name
    n = 1
    while kind(target) is not None:
        target = folder / f"{path.name}.{n}"
        n += 1
    os.rename(path, target)
    return path


@dataclass(frozen=True)
class StoredIds:
    """The ids of the tasks a store holds: all of them, and those whose rows are ok."""

    every: IdSet
    ok: IdSet


def stored_ids(results: Path) -> StoredIds:
    """The ids the store holds (read-only: what ``stage=plan`` counts; rows of a task in
    several files, before :func:`compact`, count by the newest file's status).  A file
    that cannot be read as a results file (foreign or corrupt: a run's upkeep quarantines
    it) holds no ids."""
    return _newest_rows(result_files(results), skip_unreadable=True)[0]


def ids_in(files: list[Path]) -> StoredIds:
    """The ids the results ``files`` (oldest first) hold, as :func:`stored_ids` counts them."""
    return _newest_rows(files, skip_unreadable=True)[0]


def written_ns(path: Path) -> int:
    """When the results file ``path`` was written (ns since the epoch), from its name
    (``part-<ns>-<random>.parquet``; compaction keeps the name); 0 if not named so."""
    stamp = path.name.split("-")[1] if path.name.count("-") >= 2 else ""
    return int(stamp) if stamp.isdigit() else 0


def compact(results: Path) -> StoredIds:
    """Drop rows superseded by a newer file holding the same task; the ids that remain.

    A task may have several rows (one per target, say); they always come in one file, so
    the newest file that holds a task keeps all its rows and older files lose theirs.  The
    store is read once (two columns, as arrays: no Python object per row), and the ids of
    every task that remains come back, so a run knows what to skip without reading it again.
    """
    files = result_files(results)
    stored, keep_per_file = _newest_rows(files)
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


def _newest_rows(
    files: list[Path], skip_unreadable: bool = False
) -> tuple[StoredIds, list[np.ndarray]]:
    """(the stored ids, per file which rows belong to the newest file holding their task).

    ``files`` oldest first.  Arrays throughout: at 10^6 rows ~60 MB and a second; Python
    sets and dicts of the ids took ~10x the memory.  ``skip_unreadable``: a file without
    readable ids holds none (else its error is raised)."""
    ids, ok, file_no = [], [], []
    for n, path in enumerate(files):
        try:
            file_ids, file_ok = _ids_and_ok(path)
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

    The same verdict as :func:`compact` (the ids read as arrays, ~1 s at 10^6 rows),
    remembered per set of files: a file is never changed in place (compaction writes a new
    one over it), so its path, inode, size and time name its content.  A file that cannot
    be read holds no rows here, as for :func:`stored_ids`.
    """
    key = _files_key(files)
    if key in _superseded_cache:
        return _superseded_cache[key]
    _, keep = _newest_rows(files, skip_unreadable=True)
    names: list[str] = []
    ids: list[np.ndarray] = []
    for path, kept in zip(files, keep, strict=True):
        if len(kept) and not kept.all():
            dropped = np.unique(_ids_and_ok(path)[0][~kept])
            names += [str(path)] * len(dropped)
            ids.append(dropped)
    found = None
    if names:
        task_ids = pa.array(np.concatenate(ids).astype(str), pa.string())
        found = pa.table([pa.array(names, pa.string()), task_ids], names=SUPERSEDED_COLUMNS)
    _remember(key, found)
    return found


def _files_key(files: list[Path]) -> tuple:
    """What identifies the content of ``files``: each one's path, inode, size and mtime."""
    key = []
    for path in files:
        try:
            st = path.stat()
        except OSError:
            return (object(),)  # gone meanwhile: a key no later call matches
        key.append((str(path), st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(key)


def _remember(key: tuple, found: pa.Table | None) -> None:
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


def _ids_and_ok(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """The task ids (an ``S20`` array) and which rows are ok, of one results file.

    Read through ParquetFile, not read_table: the dataset layer read_table goes through
    costs ~1 ms more per file, and its first use imports pandas (~0.5 s).
    """
    with pq.ParquetFile(path) as pf:
        table = pf.read(columns=["task_id", "status"])
    ok = pc.equal(table.column("status"), "ok").fill_null(False)
    return id_array(table.column("task_id")), ok.to_numpy(zero_copy_only=False)


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


def load_results(path: str | Path, family: str | None = None) -> pd.DataFrame:
    """All rows of a study's store (a study folder or its results/ folder) as a DataFrame,
    with the ``family`` column taken from the path.

    Families have different columns; a column a family lacks is missing (NaN) in its rows.
    """
    import pandas as pd

    path = Path(path)
    results = path / "results" if is_real_dir(path / "results") else path
    frames = []
    for fam_dir in sorted(real_subdirs(results, "family=")):
        name = fam_dir.name.split("=", 1)[1]
        if family is not None and name != family:
            continue
        files = sorted(_part_files(fam_dir), key=lambda p: p.name)
        if files:
            tables = [pq.read_table(f) for f in files]
            table = pa.concat_tables(tables, promote_options="permissive")
            frame = _newest_only(table.to_pandas(), [len(t) for t in tables])
            frame.insert(frame.columns.get_loc("study") + 1, PARTITION, name)
            frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=list(row_columns(family) if family else COMMON_COLUMNS))
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def _newest_only(frame: pd.DataFrame, file_rows: list[int]) -> pd.DataFrame:
    """``frame`` (the rows of files holding ``file_rows`` rows each, oldest first) without
    the rows of a task that a newer file holds too (see :func:`compact`)."""
    import pandas as pd

    if frame["task_id"].is_unique:
        return frame
    file_no = pd.Series(np.repeat(np.arange(len(file_rows)), file_rows))
    newest = file_no.groupby(frame["task_id"].to_numpy(), sort=False).transform("max")
    return frame[(file_no == newest).to_numpy()].reset_index(drop=True)


def file_metadata(path: str | Path) -> dict[str, Any]:
    """The guesslab key-value metadata of one results file (config, versions, code)."""
    return files_metadata([path])[0]


def files_metadata(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    """The guesslab metadata of each file, in order: each footer read once (Parquet's file
    metadata, not the Arrow schema: 1.9 s instead of 2.6 s for 5,790 files) and each
    distinct text parsed once (a run writes the same metadata into all its files).  Files
    of one run share one dict: read it, do not change it."""
    parsed: dict[bytes, dict[str, Any]] = {}
    out = []
    for path in paths:
        text = (pq.read_metadata(path).metadata or {}).get(METADATA_KEY, b"{}")
        if text not in parsed:
            parsed[text] = json.loads(text)
        out.append(parsed[text])
    return out


def family_files(results: str | Path, family: str) -> list[Path]:
    """The finished results files of one family, oldest first."""
    results = Path(results)
    if not is_real_dir(results):
        return []
    return sorted(_part_files(family_dir(results, family)), key=lambda p: p.name)


def current_code_files(files: list[Path], family: str) -> tuple[list[Path], list[Path]]:
    """(the files written by this code of the family, the others): for a family registered
    from elsewhere, whose version carries its code's fingerprint (``1+code.…``), the files
    of other versions of that code are kept in the store and left out of what is read for
    summaries, reports and comparisons; for every other family, all files."""
    from solvers.registry import get_family

    version = get_family(family).version
    if "+code." not in version:
        return files, []
    same = [meta.get("solver_version") == version for meta in files_metadata(files)]
    kept = [f for f, ok in zip(files, same, strict=True) if ok]
    return kept, [f for f, ok in zip(files, same, strict=True) if not ok]


def stored_families(results: str | Path) -> list[str]:
    """The families with at least one results file in the store, by name."""
    results = Path(results)
    found = {p.parent.name.partition("=")[2] for p in result_files(results)}
    return sorted(found)


def family_rows(
    results: str | Path, family: str, status: str | None = None, where: str = ""
) -> StoredRows:
    """One family's rows (those with ``status``, or all; and matching the SQL condition
    ``where``, if given), read lazily through DuckDB."""
    from solvers.kit.stored_rows import StoredRows, sql_text

    conditions = [f"status = {sql_text(status)}"] if status is not None else []
    where = " AND ".join([*conditions, *([f"({where})"] if where else [])])
    columns = family_schema(family).names
    files = current_code_files(family_files(results, family), family)[0]
    superseded = superseded_rows(files)  # none unless a run was killed before compacting
    return StoredRows(family, files=files, columns=columns, where=where, superseded=superseded)


OVERVIEW_COLUMNS = ["family", "status", "rows", "tasks", "seconds"]


@dataclass(frozen=True)
class StoreCounts:
    """What a store holds, counted by DuckDB from three columns (no row reaches pandas)."""

    by_status: pd.DataFrame  # per family and status: rows, distinct tasks, solver seconds
    tasks: int  # distinct task ids in the whole store
    superseded: int = 0  # older rows of tasks a newer file holds too: left out of the counts

    @property
    def rows(self) -> int:
        """Rows in the store."""
        return int(self.by_status["rows"].sum())

    def rows_with(self, status: str, family: str | None = None) -> int:
        """Rows with ``status`` (of ``family``, or of every family)."""
        return int(self._part(status, family)["rows"].sum())

    def tasks_with(self, status: str) -> int:
        """Distinct tasks with a row of ``status`` (task ids are distinct across families)."""
        return int(self._part(status, None)["tasks"].sum())

    @property
    def seconds(self) -> float:
        """Solver seconds of every task (once per task, however many rows it has)."""
        return float(self.by_status["seconds"].sum())

    @property
    def families(self) -> list[str]:
        """The families with rows, by name."""
        return sorted(set(self.by_status["family"]))

    def _part(self, status: str, family: str | None) -> pd.DataFrame:
        table = self.by_status
        keep = table["status"] == status
        if family is not None:
            keep &= table["family"] == family
        return table[keep]


def store_counts(results: str | Path) -> StoreCounts:
    """Rows, distinct tasks and solver seconds per family and status, and distinct tasks in
    all: one DuckDB query per family over its files' task_id, status and seconds columns
    (task ids hash the family, so no id is in two families).  10^6 rows: ~0.5 s and ~0.2 GB
    while it runs (grouping sets, or one query over every file with the family taken from
    the path, took twice the memory).

    Only the rows of the newest file holding a task count (see :func:`superseded_rows`).
    A family with as many rows as tasks has no task in two files, and costs nothing more;
    one with more (several rows per task, or a task stored twice) has its ids read once."""
    import pandas as pd

    from solvers.kit.stored_rows import connect

    parts, tasks, superseded = [], 0, 0
    with connect() as con:
        for family in stored_families(results):
            files = family_files(results, family)
            table, n_tasks = _family_counts(con, newest_source(con, files, None))
            if int(table["rows"].sum()) == n_tasks:  # one row per task: none in two files
                _remember(_files_key(files), None)
            elif (older := superseded_rows(files)) is not None:
                before = int(table["rows"].sum())
                table, n_tasks = _family_counts(con, newest_source(con, files, older))
                superseded += before - int(table["rows"].sum())
            tasks += n_tasks
            parts.append(table.assign(family=family))
    if not parts:
        return StoreCounts(pd.DataFrame(columns=OVERVIEW_COLUMNS), 0)
    by_status = pd.concat(parts, ignore_index=True)[OVERVIEW_COLUMNS]
    return StoreCounts(by_status, tasks, superseded)


def _family_counts(con: Any, source: str) -> tuple[pd.DataFrame, int]:
    """(rows, distinct tasks and solver seconds per status; distinct tasks) of ``source``.
    Every row of a task carries the task's solver seconds: they count once per task."""
    per_task = (
        "SELECT status, task_id, count(*) AS rows, max(seconds) AS seconds "
        f"FROM {source} GROUP BY status, task_id"
    )
    query = (
        "SELECT status, sum(rows)::BIGINT AS rows, count(*) AS tasks, "
        f"coalesce(sum(seconds), 0) AS seconds FROM ({per_task}) "
        "GROUP BY status ORDER BY status"
    )
    table = con.sql(query).to_arrow_table().to_pandas()
    if len(table) > 1:  # a task may have rows of two statuses: count it once
        return table, int(con.sql(f"SELECT count(DISTINCT task_id) FROM {source}").fetchall()[0][0])
    return table, int(table["tasks"].sum())


def files_sql(files: Iterable[Path]) -> str:
    """A list of file paths as an SQL list of string literals (for DuckDB's read_parquet)."""
    from solvers.kit.stored_rows import sql_text

    return "[" + ", ".join(sql_text(str(f)) for f in files) + "]"


# A family with more ok rows than this hands its summary and report functions a lazy
# StoredRows (solvers/kit/stored_rows.py) when they take one; fewer: a DataFrame, as always.
LARGE_ROWS = 100_000


def ok_rows(
    results: str | Path,
    family: str,
    *,
    lazy_ok: bool,
    large_rows: int = LARGE_ROWS,
    where: str = "",
) -> pd.DataFrame | StoredRows:
    """A family's ok rows (those matching the SQL condition ``where`` too, if given): a
    StoredRows when there are more than ``large_rows`` and the function they are for takes
    one (``lazy_ok``), else a DataFrame in store order."""
    stored = family_rows(results, family, "ok", where=where)
    if lazy_ok and stored.count() > large_rows:
        return stored
    return stored.frame().reset_index(drop=True)


def frame_counts(rows: pd.DataFrame) -> StoreCounts:
    """:class:`StoreCounts` of rows already in a DataFrame (``load_results``' frame)."""
    import pandas as pd

    if not len(rows):
        return StoreCounts(pd.DataFrame(columns=OVERVIEW_COLUMNS), 0)
    per_task = (  # every row of a task carries the task's seconds: once per task
        rows.assign(seconds=rows["seconds"].fillna(0))
        .groupby(["family", "status", "task_id"], as_index=False)
        .agg(rows=("task_id", "size"), seconds=("seconds", "max"))
    )
    table = per_task.groupby(["family", "status"], as_index=False).agg(
        rows=("rows", "sum"), tasks=("task_id", "size"), seconds=("seconds", "sum")
    )
    return StoreCounts(table[OVERVIEW_COLUMNS], int(rows["task_id"].nunique()))
