"""A stored study read back, read only: its results files, each one's metadata, each
family's newest rows with the columns their files hold, and the run configs to recompute
them from (the run records under ``runs/``, or the config in the files' metadata):
what :mod:`pipeline.reproduce` recomputes and compares.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from pipeline import store, store_layout
from pipeline.safe_paths import is_real_dir
from solvers.kit.words import counted

FILE = "__file"  # a stored row's file, by its place in StoredStudy.files


class BadInput(ValueError):
    """The command cannot check what it was given (one line saying what and why)."""


@dataclass
class StoredStudy:
    """What a study folder holds, read once: its results files (oldest first), each one's
    metadata, each family's newest rows (with their file), the configs to recompute from."""

    folder: Path
    files: list[Path]
    metadata: list[dict[str, Any]]
    rows: dict[str, pa.Table]  # family -> its newest rows, column FILE: their file
    columns: dict[int, tuple[str, ...]]  # file (its place in files) -> the columns it holds
    configs: list[dict[str, Any]]
    configs_from: str  # where the configs were read, for the table


def stored_study(folder: Path) -> StoredStudy:
    """The study stored in ``folder`` (a study folder, or its ``results``), read only;
    BadInput naming the folder when it holds no guesslab results."""
    folder = Path(folder).expanduser()
    if not folder.is_dir():
        raise BadInput(f"{folder}: {'not a folder' if folder.exists() else 'no such folder'}")
    results = folder / "results"
    if not is_real_dir(results) and folder.name == "results":
        folder, results = folder.parent, folder
    files = [f for f in store_layout.result_files(results) if results_file(f)]
    if not files:
        raise BadInput(
            f"{folder}: not a study folder (no guesslab results files under "
            f"{results}/family=*/part-*.parquet)"
        )
    metadata = store.files_metadata(files)
    configs, configs_from = stored_configs(folder, metadata)
    rows, columns = {}, {}
    for family in store_layout.stored_families(results):
        rows[family], held = newest_rows(files, family)
        columns.update(held)
    return StoredStudy(folder, files, metadata, rows, columns, configs, configs_from)


def results_file(path: Path) -> bool:
    """Whether ``path`` is a guesslab results file: a Parquet file with guesslab's metadata,
    of any family (one not registered here: its tasks are said to be not reproducible here)
    and any schema (one written before a column was added: the columns it holds compared)."""
    try:
        return store_layout.METADATA_KEY in (pq.read_schema(path).metadata or {})
    except (OSError, pa.ArrowException):
        return False


def newest_rows(files: list[Path], family: str) -> tuple[pa.Table, dict[int, tuple[str, ...]]]:
    """(one family's stored rows, each task's from the newest file holding it as the store's
    readers keep them, with the column FILE: the row's file by its place in ``files``; the
    columns each of those files holds)."""
    tables, columns = [], {}
    for n, path in enumerate(files):
        if path.parent.name == f"family={family}":
            with pq.ParquetFile(path) as pf:
                table = pf.read()
            columns[n] = tuple(table.column_names)
            tables.append(table.append_column(FILE, pa.array(np.full(len(table), n), pa.int64())))
    table = pa.concat_tables(tables, promote_options="permissive")
    ids, at = table.column("task_id").to_pylist(), table.column(FILE).to_pylist()
    newest: dict[str, int] = {}
    for tid, n in zip(ids, at, strict=True):
        newest[tid] = max(newest.get(tid, n), n)
    keep = [newest[tid] == n for tid, n in zip(ids, at, strict=True)]
    return table.filter(pa.array(keep)), columns


def stored_configs(folder: Path, metadata: list[dict[str, Any]]) -> tuple[list[dict], str]:
    """The configs to recompute from, and where they were read: the run records under
    ``runs/`` when there are any, else the distinct configs of the files' metadata."""
    records = sorted((folder / "runs").glob("*.yaml")) if is_real_dir(folder / "runs") else []
    configs = []
    for path in records:
        with contextlib.suppress(OSError, yaml.YAMLError):
            config = yaml.safe_load(path.read_text())
            if isinstance(config, dict) and isinstance(config.get("study"), dict):
                configs.append(config)
    if configs:
        return configs, f"{counted(len(configs), 'run record')} under {folder / 'runs'}"
    distinct = {json.dumps(m.get("config"), sort_keys=True): m.get("config") for m in metadata}
    configs = [c for c in distinct.values() if isinstance(c, dict) and "study" in c]
    distinct_configs = counted(len(configs), "distinct config")
    return configs, f"the metadata of the results files ({distinct_configs})"
