"""The Parquet store: one file per finished batch, written atomically, one row per task.

Layout: ``<study dir>/results/family=<family>/part-<utc ns>-<random>.parquet``, hive
partitioning as pyarrow's ``write_dataset`` and Spark write it: the partition column
``family`` lives in the path only, never in the files.  Every file a run writes has the
family's schema (:func:`family_schema`), so ``pandas.read_parquet(results)``, pyarrow
datasets, DuckDB and Polars read a store the standard way;
:func:`~pipeline.storage.store.load_results` reads a study whose families differ in columns.  A file
written before the family gained a column (``score_std``, ``deck_counts``) holds the rest of
the schema (:func:`fits_family_schema`): it is kept and read, its rows missing (null) in the
columns it lacks.

Files are written under a hidden temporary name and renamed into place, so a reader or a
killed run never sees half a file.  A task that is run again (an error retried, or
``store.recompute=true``) gets its new row in a new file;
:func:`~pipeline.storage.store_upkeep.compact` then drops the older rows of the same task ids, file
by file and atomically, so one row per task remains.  A run killed between the two leaves a
task's rows in two files until the next compaction (the next run, or ``stage=summary``);
every reader (:func:`~pipeline.storage.store.load_results`,
:func:`~pipeline.storage.store_overview.store_counts`, :func:`~pipeline.storage.store.family_rows`,
hence the summary, the report and the index) keeps only the rows of the newest file holding a
task, as :func:`~pipeline.storage.store_upkeep.compact` does.

Every read, move and delete goes through :mod:`pipeline.storage.safe_paths`: only regular files in
real folders are listed, no link is followed, and an entry that is not a regular file is
moved to quarantine as the entry itself, never opened.

This module says how the files are laid out and what they hold (a write that failed raises
:class:`~pipeline.errors.StoreError`); beside it a batch's new files are encoded where it ran
(:func:`pipeline.running.worker.encode_rows`) and written by the driver
(:func:`pipeline.running.driver.write_encoded`); ``store`` (the files listed, their rows and
metadata read), ``store_upkeep`` (quarantine, compaction, leftovers), ``store_newest`` (which
rows count) and ``store_overview`` (counts).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from solvers.registry import COMMON_COLUMNS, get_family, row_columns

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


def fits_family_schema(schema: pa.Schema, family: str) -> bool:
    """Whether a results file's ``schema`` (its metadata left out) is ``family``'s, or the
    schema of a file written before the family gained columns: every column it holds is the
    family's, of the same type, and it holds every common column (``task_id``, ``status``...)."""
    expected = family_schema(family)
    for field in schema:
        at = expected.get_field_index(field.name)
        if at < 0 or expected.field(at).type != field.type:
            return False
    return all(name in schema.names for name in COMMON_COLUMNS if name != PARTITION)


def with_family_columns(table: pa.Table, family: str) -> pa.Table:
    """``table`` (rows of ``family``'s files) with every column of the family's schema, in
    its order: a column its files lack (written before the family gained it) all null;
    columns the schema does not know kept after them."""
    expected = family_schema(family)
    columns = [
        table.column(f.name) if f.name in table.column_names else pa.nulls(len(table), f.type)
        for f in expected
    ]
    others = [name for name in table.column_names if name not in expected.names]
    return pa.table(
        [*columns, *(table.column(n) for n in others)], names=[*expected.names, *others]
    )


def family_dir(results: Path, family: str) -> Path:
    """The folder of one family's result files."""
    return results / f"family={family}"


def written_ns(path: Path) -> int:
    """When the results file ``path`` was written (ns since the epoch), from its name
    (``part-<ns>-<random>.parquet``; compaction keeps the name); 0 if not named so."""
    stamp = path.name.split("-")[1] if path.name.count("-") >= 2 else ""
    return int(stamp) if stamp.isdigit() else 0
