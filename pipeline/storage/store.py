"""Reading a study's store: its results files (:func:`result_files`, :func:`family_files`:
regular files in real folders only, see :mod:`pipeline.storage.safe_paths`), its rows (a
DataFrame, or one family's rows read lazily through DuckDB) and each file's metadata.

Only the rows of the newest file holding a task are read (:mod:`pipeline.storage.store_newest`).
How the files are laid out and what they hold: :mod:`pipeline.storage.store_layout`; how
they are written: encoded where a batch ran (:func:`pipeline.running.worker.encode_rows`),
written by the driver (:func:`pipeline.running.driver.write_encoded`); their upkeep:
:mod:`pipeline.storage.store_upkeep`; what the store holds, counted:
:mod:`pipeline.storage.store_overview`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.storage.safe_paths import is_real_dir, real_subdirs, regular_files
from pipeline.storage.store_layout import (
    METADATA_KEY,
    PARTITION,
    family_dir,
    family_schema,
    with_family_columns,
)
from pipeline.storage.store_newest import superseded_rows
from solvers.registry import COMMON_COLUMNS, families, get_family, row_columns

if TYPE_CHECKING:  # pandas only where results are read: workers that write them skip its import
    import pandas as pd

    from solvers.kit.stored_rows import StoredRows


def result_files(results: str | Path) -> list[Path]:
    """Every finished results file under ``results``, oldest first: regular files only, in
    real ``family=*`` folders (a link, a FIFO or a folder named like one is never listed)."""
    files = [f for d in real_subdirs(Path(results), "family=") for f in part_files(d)]
    return sorted(files, key=lambda p: p.name)


def part_files(folder: Path) -> list[Path]:
    """The results files in one family's ``folder`` (``part-*.parquet``, regular files)."""
    return regular_files(folder, "part-", ".parquet")


def family_files(results: str | Path, family: str) -> list[Path]:
    """The finished results files of one family, oldest first."""
    results = Path(results)
    if not is_real_dir(results):
        return []
    return sorted(part_files(family_dir(results, family)), key=lambda p: p.name)


def stored_families(results: str | Path) -> list[str]:
    """The families with at least one results file in the store, by name."""
    results = Path(results)
    found = {p.parent.name.partition("=")[2] for p in result_files(results)}
    return sorted(found)


# What load_results adds at the end of each row from its file's metadata: the run that
# computed it (its run record's name, runs/<run>.yaml), the Hydra job of a multirun
# (hydra.job.num), and for a row a search computed, the search's name and the number of the
# trial that asked for its task; missing for files whose metadata holds none of them.
RUN_COLUMNS = ("run", "job", "search", "trial")


def load_results(path: str | Path, family: str | None = None) -> pd.DataFrame:
    """All rows of a study's store (a study folder or its results/ folder) as a DataFrame,
    with the ``family`` column taken from the path, and at the end :data:`RUN_COLUMNS`: the
    run that computed each row (the name of its ``runs/<time>.yaml`` record), the Hydra
    job of a multirun (its ``hydra.job.num``; missing for a single run), and the search
    and trial that asked for its task (missing for a row no search computed), read from
    its file's metadata.

    Families have different columns; a column a family lacks is missing (NaN) in its rows,
    and so is a column of a registered family that its files lack (written before the family
    gained it): every row of a registered family has every column of its schema.
    """
    import pandas as pd

    path = Path(path)
    results = path / "results" if is_real_dir(path / "results") else path
    frames = []
    for fam_dir in sorted(real_subdirs(results, "family=")):
        name = fam_dir.name.split("=", 1)[1]
        if family is not None and name != family:
            continue
        files = sorted(part_files(fam_dir), key=lambda p: p.name)
        if files:
            tables = [pq.read_table(f) for f in files]
            table = pa.concat_tables(tables, promote_options="permissive")
            if name in families():
                table = with_family_columns(table, name)
            frame = _with_runs(table.to_pandas(), tables)
            frame = _newest_only(frame, [len(t) for t in tables])
            frame.insert(frame.columns.get_loc("study") + 1, PARTITION, name)
            frames.append(frame)
    if not frames:
        columns = list(row_columns(family) if family else COMMON_COLUMNS)
        return pd.DataFrame(columns=[*columns, *RUN_COLUMNS])
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def _with_runs(frame: pd.DataFrame, tables: list[pa.Table]) -> pd.DataFrame:
    """``frame`` (the rows of ``tables``, in order) with :data:`RUN_COLUMNS` from each
    table's guesslab metadata (each distinct text parsed once: a run's files share it)."""
    import pandas as pd

    parsed: dict[bytes, FileRun] = {}
    runs, jobs, searches, trials = [], [], [], []
    for table in tables:
        text = (table.schema.metadata or {}).get(METADATA_KEY, b"{}")
        if text not in parsed:
            parsed[text] = _file_run(text)
        got = parsed[text]
        runs.append(got.run)
        jobs.append(got.job)
        searches.append(got.search)
        if got.trials:  # the trial of each row's task
            ids = table.column("task_id").to_pylist()
            trials.append(np.array([got.trials.get(t) for t in ids], dtype=object))
        else:
            trials.append(np.full(len(table), None, dtype=object))
    sizes = [len(t) for t in tables]
    frame["run"] = pd.array(np.repeat(np.array(runs, dtype=object), sizes), dtype="string")
    frame["job"] = pd.array(np.repeat(np.array(jobs, dtype=object), sizes), dtype="Int64")
    frame["search"] = pd.array(np.repeat(np.array(searches, dtype=object), sizes), dtype="string")
    frame["trial"] = pd.array(np.concatenate(trials) if trials else [], dtype="Int64")
    return frame


class FileRun(NamedTuple):
    """What a file's metadata says of the run that wrote it (each None where it says
    nothing): the run record's name, the multirun job's number, the search's name, and the
    trial number of each task a search's trial asked for."""

    run: str | None
    job: int | None
    search: str | None
    trials: dict[str, int]


def _file_run(text: bytes) -> FileRun:
    """What a file's metadata text records of its run (an older file, a single run, a run
    of no search or metadata not readable: None or empty for what it does not record)."""
    try:
        meta = json.loads(text)
    except ValueError:
        meta = None
    if not isinstance(meta, dict):
        return FileRun(None, None, None, {})
    run, job, search = meta.get("run"), meta.get("job"), meta.get("search")
    num = job.get("num") if isinstance(job, dict) else None
    name = search.get("name") if isinstance(search, dict) else None
    asked = search.get("trials") if isinstance(search, dict) else None
    trials = {k: v for k, v in (asked.items() if isinstance(asked, dict) else ()) if _whole(v)}
    return FileRun(
        run if isinstance(run, str) else None,
        num if _whole(num) else None,
        name if isinstance(name, str) else None,
        trials if isinstance(name, str) else {},
    )


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _newest_only(frame: pd.DataFrame, file_rows: list[int]) -> pd.DataFrame:
    """``frame`` (the rows of files holding ``file_rows`` rows each, oldest first) without
    the rows of a task that a newer file holds too (see
    :func:`~pipeline.storage.store_upkeep.compact`)."""
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


def current_version_files(files: list[Path], family: str) -> tuple[list[Path], list[Path]]:
    """(the files written by the family's current version, the others): each file's
    ``solver_version`` (its metadata) against the family's version now.  The files of other
    versions (rows of an older version of a package family, or of other code of a family
    registered from elsewhere, whose version carries its code's fingerprint: ``1+code.…``)
    are kept in the store and left out of what is read for summaries, reports and
    comparisons; a file that records no version is not the current version's."""
    version = get_family(family).version
    same = [file_solver_version(f) == version for f in files]
    kept = [f for f, ok in zip(files, same, strict=True) if ok]
    return kept, [f for f, ok in zip(files, same, strict=True) if not ok]


def file_solver_version(path: Path) -> str | None:
    """The family version that wrote the results file ``path`` (its metadata's
    ``solver_version``), or None; remembered per file, size and modification time, since
    every read of a family's rows asks (3,000 files: 1.5 s to read their footers, 0.05 s to
    find them remembered)."""
    stat = Path(path).stat()
    return _solver_version(str(path), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=65536)
def _solver_version(path: str, size: int, mtime_ns: int) -> str | None:
    try:
        meta = files_metadata([path])[0]
    except (OSError, ValueError, pa.ArrowException):  # metadata that cannot be read records none
        return None
    version = meta.get("solver_version") if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


def family_rows(
    results: str | Path, family: str, status: str | None = None, where: str = ""
) -> StoredRows:
    """One family's rows (those with ``status``, or all; and matching the SQL condition
    ``where``, if given), read lazily through DuckDB."""
    from solvers.kit.stored_rows import StoredRows, sql_text

    conditions = [f"status = {sql_text(status)}"] if status is not None else []
    where = " AND ".join([*conditions, *([f"({where})"] if where else [])])
    columns = family_schema(family).names
    files = current_version_files(family_files(results, family), family)[0]
    superseded = superseded_rows(files)  # none unless a run was killed before compacting
    return StoredRows(family, files=files, columns=columns, where=where, superseded=superseded)


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
