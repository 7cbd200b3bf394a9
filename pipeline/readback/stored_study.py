"""A stored study read back, read only: its results files, each one's metadata, each
family's newest rows with the columns their files hold, and the run configs to recompute
them from (the run records under ``runs/``, then the configs in the files' metadata):
what :mod:`pipeline.reproduce` recomputes and compares.

It reads the folder alone, as :mod:`pipeline.storage.safe_paths` reads a study: no symbolic link is
followed and nothing but a regular file is opened (``O_NOFOLLOW | O_NONBLOCK``, then
``fstat``), so a link out of the folder brings nothing in and a FIFO or a device cannot hang
or flood the reader; a run record over :data:`MAX_RECORD_BYTES` is not read.  Each entry
that is not read (a link, a special file, a results file that cannot be read, a run record
too large or not YAML) is kept in :attr:`StoredStudy.skipped` with why, for the command to
name.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.config_files import yaml_content
from pipeline.errors import BadInput, StudyError, Unreadable, UnsafePath
from pipeline.storage.locking import visible
from pipeline.storage.safe_paths import open_regular
from pipeline.storage.store_layout import METADATA_KEY
from pipeline.storage.study_folder import StudyFolder
from solvers.kit.safe_folders import article, kind
from solvers.kit.words import counted, format_bytes

FILE = "__file"  # a stored row's file, by its place in StoredStudy.files
# A run record is a run's config, 1-2 kB for a shipped study; PyYAML reads about 0.1 MB a
# second on a loaded 2-core machine (1.2 MB took 13 s), so a larger file is not read: the
# configs in the results files' metadata (JSON) plan its tasks instead.
MAX_RECORD_BYTES = 1_000_000
# Planning costs work in proportion to a study's tasks (200,000 took 9 s on a loaded 2-core
# machine): a stored config naming more than this, and more than 10 times the tasks the
# folder stores, is not planned (a run record forged to name 10^9 tasks would never end).
MOST_PLANNED = 1_000_000


@dataclass
class StoredStudy:
    """What a study folder holds, read once: its results files (oldest first), each one's
    metadata, each family's newest rows (with their file), the configs to recompute from,
    and the entries not read with why."""

    folder: StudyFolder
    files: list[Path]
    metadata: list[dict[str, Any]]
    rows: dict[str, pa.Table]  # family -> its newest rows, column FILE: their file
    columns: dict[int, tuple[str, ...]]  # file (its place in files) -> the columns it holds
    configs: list[dict[str, Any]]
    configs_from: str  # where the configs were read, for the table
    skipped: list[tuple[Path, str]] = field(default_factory=list)  # not used: path, why
    sources: list[Path | None] = field(default_factory=list)  # each config's run record

    @property
    def stored_tasks(self) -> int:
        """How many tasks the folder stores (its readable files')."""
        return sum(len(pc.unique(t.column("task_id"))) for t in self.rows.values())


def stored_study(folder: Path) -> StoredStudy:
    """The study stored in ``folder`` (a study folder, or its ``results``), read only;
    BadInput naming the folder when it holds no readable guesslab results."""
    folder = Path(folder).expanduser()
    if not folder.is_dir():
        raise BadInput(f"{folder}: {'not a folder' if folder.exists() else 'no such folder'}")
    results = folder / "results"
    if kind(results) is None and folder.name == "results":
        folder, results = folder.parent, folder
    what = kind(results)
    if what not in (None, "folder"):
        raise BadInput(
            f"{path_text(results)} is {article(what)}, where the study's results folder belongs; "
            "reproduce reads nothing through a link nor opens a special file"
        )
    files, metadata, tables, skipped = read_results(results)
    if not files:
        not_read = f"; not read: {path_text(skipped[0][0])} ({skipped[0][1]})" if skipped else ""
        more = f" and {len(skipped) - 1} more" if len(skipped) > 1 else ""
        raise BadInput(
            f"{folder}: not a study folder (no {'readable ' * bool(skipped)}guesslab results "
            f"files under {results}/family=*/part-*.parquet{not_read}{more})"
        )
    rows, columns = {}, {}
    for family in sorted({p.parent.name.partition("=")[2] for p in files}):
        rows[family], held = newest_rows(files, tables, family)
        columns.update(held)
    study = StoredStudy(StudyFolder(folder), files, metadata, rows, columns, [], "", skipped)
    study.configs, study.sources, study.configs_from, not_records = stored_configs(
        study.folder, metadata, study.stored_tasks
    )
    study.skipped = sorted(skipped + not_records)
    return study


def path_text(path: Path) -> str:
    """A path for a line of text: its unprintable characters as escapes, never cut."""
    return visible(str(path), limit=10**6)


# ----------------------------------------------------------------- the results files


def read_results(
    results: Path,
) -> tuple[list[Path], list[dict[str, Any]], list[pa.Table], list[tuple[Path, str]]]:
    """(the results files read, oldest first; each one's metadata; each one's rows; the
    entries not read with why): every ``family=*`` folder and ``part-*.parquet`` file of
    ``results``, each opened only if it is a real folder or a regular file."""
    found, skipped = [], []
    for family_dir in entries(results, "family="):
        what = kind(family_dir)
        if what != "folder":
            skipped.append((family_dir, not_followed(what, "a family's folder of results")))
            continue
        for path in entries(family_dir, "part-", ".parquet"):
            what = kind(path)
            if what != "file":
                skipped.append((path, not_followed(what, "a results file")))
            else:
                found.append(path)
    files, metadata, tables = [], [], []
    parsed: dict[bytes, dict[str, Any]] = {}  # a run writes the same metadata in its files
    schemas: dict[str, pa.Schema] = {}  # each family's columns over its files read so far
    for path in sorted(found, key=lambda p: p.name):
        try:
            meta, table = results_file(path, parsed)
            family = path.parent.name
            schemas[family] = joined(schemas.get(family, table.schema), table.schema)
        except Unreadable as exc:
            skipped.append((path, str(exc)))
            continue
        files.append(path)
        metadata.append(meta)
        tables.append(table)
    return files, metadata, tables, skipped


def joined(schema: pa.Schema, other: pa.Schema) -> pa.Schema:
    """The columns of a family's files read so far, ``schema``, with those of another file,
    ``other`` (a column added since, or a type widened); Unreadable when a column's types
    cannot be joined (text where the other files hold numbers)."""
    try:
        return pa.unify_schemas([schema, other], promote_options="permissive")
    except (pa.ArrowException, ValueError, TypeError) as exc:
        raise Unreadable(
            f"its columns cannot be read with the family's other files ({one_line(exc)})"
        ) from None


def entries(folder: Path, prefix: str = "", suffix: str = "") -> list[Path]:
    """The entries of the real folder ``folder`` named ``prefix...suffix`` (not hidden), by
    name; none when ``folder`` is missing or not a real folder."""
    if kind(folder) != "folder":
        return []
    with os.scandir(folder) as found:
        names = [e.name for e in found if e.name.startswith(prefix) and e.name.endswith(suffix)]
    return [folder / n for n in sorted(names) if not n.startswith(".")]


def not_followed(what: str | None, belongs: str) -> str:
    """Why an entry that is ``what`` (:func:`kind`) is not read where ``belongs`` belongs."""
    if what is None:
        return "gone while the folder was read"
    return f"{article(what)}, where {belongs} belongs: never followed or opened"


def results_file(path: Path, parsed: dict[bytes, dict[str, Any]]) -> tuple[dict, pa.Table]:
    """(the guesslab metadata, the rows) of the results file ``path``, opened as a regular
    file without following a link; Unreadable saying why not: not Parquet (truncated,
    damaged), no guesslab metadata (another program's file), or rows that cannot be read."""
    with opened(path, "a results file") as fh:
        try:
            pf = pq.ParquetFile(fh)
            text = (pf.metadata.metadata or {}).get(METADATA_KEY)
            if text is not None and text not in parsed:
                parsed[text] = json.loads(text)
            table = pf.read()
        except (OSError, ValueError, pa.ArrowException) as exc:  # JSON's errors: ValueError
            raise Unreadable(f"cannot be read as a results file ({one_line(exc)})") from None
    if text is None:
        raise Unreadable(
            f"not a guesslab results file (its Parquet metadata has no "
            f"{METADATA_KEY.decode()!r} key)"
        )
    if not isinstance(parsed[text], dict):
        raise Unreadable("not a guesslab results file (its guesslab metadata is not a mapping)")
    if "task_id" not in table.column_names or not pa.types.is_string(
        table.schema.field("task_id").type
    ):
        raise Unreadable("not a guesslab results file (it has no task_id column of text)")
    if table.column("task_id").null_count:
        raise Unreadable("not a guesslab results file (a row without a task id)")
    return parsed[text], table


def opened(path: Path, belongs: str):
    """``path`` opened for reading as a binary file, only if it is a regular file (a link is
    not followed, a FIFO not waited on); Unreadable saying why not, where ``belongs``
    belongs."""
    try:
        fd = open_regular(path, os.O_RDONLY)
    except UnsafePath:
        raise Unreadable(not_followed(kind(path), belongs)) from None
    except OSError as exc:
        raise Unreadable(f"cannot be opened ({exc.strerror or one_line(exc)})") from None
    return os.fdopen(fd, "rb")


def one_line(exc: BaseException) -> str:
    """An exception's message on one line, unprintable characters as escapes, cut."""
    return visible(" ".join(str(exc).split()) or type(exc).__name__, limit=200)


def newest_rows(
    files: list[Path], tables: list[pa.Table], family: str
) -> tuple[pa.Table, dict[int, tuple[str, ...]]]:
    """(one family's stored rows, each task's from the newest file holding it as the store's
    readers keep them, with the column FILE: the row's file by its place in ``files``; the
    columns each of those files holds)."""
    held, columns = [], {}
    for n, (path, table) in enumerate(zip(files, tables, strict=True)):
        if path.parent.name == f"family={family}":
            columns[n] = tuple(table.column_names)
            held.append(table.append_column(FILE, pa.array(np.full(len(table), n), pa.int64())))
    table = pa.concat_tables(held, promote_options="permissive")
    ids, at = table.column("task_id").to_pylist(), table.column(FILE).to_pylist()
    newest: dict[str, int] = {}
    for tid, n in zip(ids, at, strict=True):
        newest[tid] = max(newest.get(tid, n), n)
    keep = [newest[tid] == n for tid, n in zip(ids, at, strict=True)]
    return table.filter(pa.array(keep)), columns


# ----------------------------------------------------------------- the configs


def stored_configs(
    folder: StudyFolder, metadata: list[dict[str, Any]], stored: int
) -> tuple[list[dict], list[Path | None], str, list[tuple[Path, str]]]:
    """(the configs to recompute from, the run record of each (None: from the metadata),
    where they were read, the run records not read or not used with why): the run records
    under ``runs/`` (one naming too many tasks for the ``stored`` ones left out:
    :func:`planned_too_many`), then each distinct config of the files' metadata that no
    record holds (for the tasks of a record not read, or a folder without ``runs/``)."""
    found, skipped = run_records(folder.runs, stored)
    records = [config for _, config in found]
    sources: list[Path | None] = [path for path, _ in found]
    studies = {json.dumps(c["study"], sort_keys=True, default=str) for c in records}
    distinct = {json.dumps(m.get("config"), sort_keys=True): m.get("config") for m in metadata}
    more = [
        c
        for c in distinct.values()
        if isinstance(c, dict)
        and isinstance(c.get("study"), dict)
        and json.dumps(c["study"], sort_keys=True, default=str) not in studies
    ]
    from_metadata = f"the metadata of the results files ({counted(len(more), 'distinct config')})"
    if not records:
        return more, [None] * len(more), from_metadata, skipped
    where = f"{counted(len(records), 'run record')} under {path_text(folder.runs)}"
    if more:
        where += f", then {from_metadata}"
    return records + more, sources + [None] * len(more), where, skipped


def run_records(
    runs: Path, stored: int
) -> tuple[list[tuple[Path, dict[str, Any]]], list[tuple[Path, str]]]:
    """(each run record of ``runs/*.yaml`` with its config, oldest first; the records not
    read or not used, with why)."""
    what = kind(runs)
    if what not in (None, "folder"):
        return [], [(runs, not_followed(what, "the folder of run records"))]
    configs, skipped = [], []
    for path in entries(runs, suffix=".yaml"):
        try:
            config = run_record(path)
        except Unreadable as exc:
            skipped.append((path, str(exc)))
            continue
        too_many = planned_too_many(config["study"], stored)
        if too_many:
            skipped.append((path, f"{too_many}: not used"))
        else:
            configs.append((path, config))
    return configs, skipped


def planned_too_many(study: dict[str, Any], stored: int) -> str | None:
    """Why a stored study config is not planned to find the ``stored`` tasks of its folder,
    or None: it names (counted from its axes, nothing planned) more than MOST_PLANNED tasks
    and more than 10 times ``stored``.  A config that cannot be checked is left to the
    planning, which says why."""
    from pipeline.config import checked_study
    from pipeline.running.plan import named_tasks

    try:
        named = named_tasks(checked_study(study))
    except StudyError:
        return None
    most = max(MOST_PLANNED, 10 * stored)
    if named <= most:
        return None
    return (
        f"its study names up to {named:,} tasks, more than are planned to find the {stored:,} "
        f"the folder stores (at most {most:,}: the larger of {MOST_PLANNED:,} and 10 times "
        "those)"
    )


def run_record(path: Path) -> dict[str, Any]:
    """The run config the file ``path`` holds, read in bounded time and memory (a regular
    file of at most MAX_RECORD_BYTES, read as a config file is: :func:`yaml_content`);
    Unreadable saying why not."""
    with opened(path, "a run record") as fh:
        size = os.fstat(fh.fileno()).st_size
        data = fh.read(MAX_RECORD_BYTES + 1) if size <= MAX_RECORD_BYTES else b""
    if max(size, len(data)) > MAX_RECORD_BYTES:  # the file may grow while it is read
        size = f"{format_bytes(size)} ({size:,} bytes)" if size > MAX_RECORD_BYTES else "growing"
        raise Unreadable(
            f"{size}, more than a run record holds (at most {format_bytes(MAX_RECORD_BYTES)}): "
            "not read"
        )
    try:
        config = yaml_content(data, path)
    except StudyError as exc:
        text = str(exc)
        raise Unreadable(text.removeprefix(f"{path}:").strip()) from None
    if not isinstance(config, dict) or not isinstance(config.get("study"), dict):
        raise Unreadable("not a run record (no study section)")
    try:  # a run record is written from a Hydra config, whose keys are text
        json.dumps(config, sort_keys=True, default=str)
    except (TypeError, ValueError):
        raise Unreadable("not a run record (a mapping whose keys are not all text)") from None
    return config


# ----------------------------------------------------------------- the rows' names


def row_names(study: StoredStudy) -> dict[str, str]:
    """Each stored task as a reader knows it, task id -> ``strategy=optimal deck=2,2``: its
    strategy, the family's first parameter (the deck, the game's size) and the parameters
    whose values differ between the family's stored tasks; a family not registered here:
    its strategy alone."""
    from solvers.registry import TaskError, get_family

    out = {}
    for family, table in study.rows.items():
        try:
            params = list(get_family(family).rules.identity_names)
        except TaskError:
            params = []
        params = [p for p in params if p in table.column_names and not p.startswith("strategy")]
        first: dict[str, int] = {}  # each task's first row
        for i, tid in enumerate(table.column("task_id").to_pylist()):
            first.setdefault(tid, i)
        rows = table.take(pa.array(list(first.values()), pa.int64()))
        values = {p: [value_text(v) for v in rows.column(p).to_pylist()] for p in params}
        shown_params = [p for i, p in enumerate(params) if i == 0 or len(set(values[p])) > 1]
        keys = (["strategy"] if "strategy" in rows.column_names else []) + shown_params
        texts = {k: values.get(k) or [value_text(v) for v in rows.column(k).to_pylist()]
                 for k in keys}  # fmt: skip
        for i, tid in enumerate(first):
            parts = [f"{k}={texts[k][i]}" for k in keys if texts[k][i] != ""]
            out[tid] = visible(" ".join(parts), limit=200)
    return out


def value_text(value: Any) -> str:
    """A stored parameter's value as a row's name shows it ("" for none)."""
    if value is None:
        return ""
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)
