"""One family's result rows, read lazily: SQL (DuckDB) over its Parquet files or a DataFrame.

The summary stage hands a family's summary and report functions a :class:`StoredRows`
instead of a DataFrame when the family holds many rows (10^5 and more) and its functions
say they take one (:func:`takes_stored_rows`): the function then reads only what it needs
(a column subset, an aggregate in SQL), never the whole store in pandas at once.  The same
object wraps a DataFrame too, so the code that reads it is one and the same on a small
study's frame and on a large store's files.

In SQL the rows are the view ``rows`` (the family's columns and ``family``), in store order
(files oldest first, then their rows: DuckDB keeps the insertion order of a scan), the
order of :func:`pipeline.storage.store.load_results`' frame; ``ordered_rows`` adds ``_row``, the
row's place in that order, for queries that pick "the first row" of a group.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

F = TypeVar("F", bound=Callable[..., Any])


def takes_stored_rows(fn: F) -> F:
    """Mark a family's summary or report function as taking a :class:`StoredRows` (as well
    as a DataFrame); unmarked functions always get a DataFrame of every ok row."""
    fn.takes_stored_rows = True  # type: ignore[attr-defined]
    return fn


def accepts_stored_rows(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` was marked by :func:`takes_stored_rows`."""
    return bool(getattr(fn, "takes_stored_rows", False))


class StoredRows:
    """The rows of one family (ok rows, say) as a DuckDB view ``rows``, read on demand."""

    def __init__(
        self,
        family: str,
        *,
        files: Iterable[Path] = (),
        frame: pd.DataFrame | None = None,
        columns: Sequence[str] = (),
        where: str = "",
        superseded: Any = None,
    ):
        """``files`` (oldest first) with the family's ``columns``, or ``frame``; ``where``
        (SQL) selects the rows this object stands for, e.g. ``status = 'ok'``;
        ``superseded``: an Arrow table of (filename, task_id) pairs whose rows are left out
        (the older rows of a task a newer file holds too:
        pipeline.storage.store_newest.superseded_rows)."""
        self.family = family
        self.files = [Path(f) for f in files]
        self._con = connect()
        self._memo: dict[Any, Any] = {}
        if superseded is not None:
            self._con.register("superseded", superseded)
        rows, ordered = self._sources(frame, columns, where, superseded is not None)
        self._con.sql(f"CREATE VIEW rows AS {rows}")
        self._con.sql(f"CREATE VIEW ordered_rows AS {ordered}")

    def _sources(
        self, frame: pd.DataFrame | None, columns: Sequence[str], where: str, newest: bool
    ) -> tuple[str, str]:
        """The SQL of the views ``rows`` and ``ordered_rows`` (the same rows with ``_row``,
        their place in the store: the file's place in the list, then the row's in its file);
        ``newest``: without the rows of the registered table ``superseded``."""
        cond = f"WHERE {where}" if where else ""
        family = sql_text(self.family)
        if frame is not None:
            frame = frame.drop(columns=["family"], errors="ignore").reset_index(drop=True)
            self._con.register("source_frame", frame.assign(_row=range(len(frame))))
            ordered = f"SELECT *, {family} AS family FROM source_frame {cond}"
            return f"SELECT * EXCLUDE (_row) FROM ({ordered})", ordered
        if not self.files:
            cols = ", ".join(f"NULL AS {quoted(c)}" for c in columns) or "NULL AS task_id"
            empty = f"SELECT {cols}, NULL AS family WHERE false"
            return empty, f"SELECT *, 0 AS _row FROM ({empty})"
        names = ", ".join(sql_text(str(f)) for f in self.files)
        found, differ = file_columns(self._con, names)
        order = pd.DataFrame({"filename": [str(f) for f in self.files]})
        self._con.register("file_order", order.assign(file_no=range(len(order))))
        cols = ", ".join(quoted(c) if c in found else f"NULL AS {quoted(c)}" for c in columns)
        by_name = "true" if differ else "false"  # by name: ~0.1 MB and 0.3 ms more a file
        scan = f"read_parquet([{names}], union_by_name = {by_name}, hive_partitioning = false"
        if newest:  # an anti join keeps no order: the rows are put in store order
            ordered = (
                f"SELECT {cols}, {family} AS family, file_no * 4294967296 + file_row_number "
                f"AS _row FROM (SELECT * FROM {scan}, filename = true, file_row_number = true) "
                f"ANTI JOIN superseded USING (filename, task_id)) "
                f"JOIN file_order USING (filename) {cond}"
            )
            return f"SELECT * EXCLUDE (_row) FROM ({ordered}) ORDER BY _row", ordered
        return (  # rows: in file order (the list's), then row order (DuckDB keeps a scan's)
            f"SELECT {cols}, {family} AS family FROM {scan}) {cond}",
            f"SELECT {cols}, {family} AS family, file_no * 4294967296 + file_row_number AS _row "
            f"FROM {scan}, filename = true, file_row_number = true) "
            f"JOIN file_order USING (filename) {cond}",
        )

    def count(self, where: str = "") -> int:
        """How many rows (matching the SQL condition ``where``, if given)."""
        cond = f"WHERE {where}" if where else ""
        return int(self._con.sql(f"SELECT count(*) FROM rows {cond}").fetchall()[0][0])

    @property
    def columns(self) -> list[str]:
        """The column names (the family's, then ``family``)."""
        return [r[0] for r in self._con.sql("DESCRIBE rows").fetchall()]

    def query(self, sql: str) -> pd.DataFrame:
        """The result of ``sql`` (which reads the view ``rows``) as a DataFrame."""
        return self._con.sql(sql).to_arrow_table().to_pandas()

    def frame(
        self, columns: Sequence[str] | None = None, where: str = "", limit: int | None = None
    ) -> pd.DataFrame:
        """The rows (matching ``where``, the first ``limit``) in store order, ``columns`` only
        (default all), with ``family`` after ``study`` as in ``load_results``."""
        cols = ", ".join(quoted(c) for c in columns) if columns is not None else "*"
        cond = f"WHERE {where}" if where else ""
        lim = f"LIMIT {int(limit)}" if limit is not None else ""
        out = self.query(f"SELECT {cols} FROM rows {cond} {lim}")
        if "family" in out and "study" in out:
            out.insert(out.columns.get_loc("study") + 1, "family", out.pop("family"))
        return out

    def cached_query(self, sql: str) -> pd.DataFrame:
        """:meth:`query`, run once per object and ``sql`` (a summary and a report that need
        the same rows read them once)."""
        return self.memo(("query", sql), lambda: self.query(sql))

    def cached_frame(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """:meth:`frame` of ``columns``, read once per object (a summary and a report that
        need the same columns read them once)."""
        key = tuple(columns) if columns is not None else None
        return self.memo(("frame", key), lambda: self.frame(columns))

    def memo(self, key: Any, compute: Callable[[], Any]) -> Any:
        """``compute()``, run once per object and ``key`` (a table the summary and the report
        both build from the rows, such as mastermind's result table of 10^6 grid points)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def __len__(self) -> int:
        """How many rows (see :meth:`count`)."""
        return self.count()


# DuckDB's memory for one query's hash tables and buffers (it spills to a temporary folder
# beyond): card_guessing's reduction of 10^7 rows took 1.4 GB with 1 GB allowed, 0.9 GB
# with 500 MB, and 30% more time.
DUCKDB_MEMORY = "500MB"


def connect() -> Any:
    """A new in-memory DuckDB connection: 2 threads, DUCKDB_MEMORY, spilling to the system's
    temporary folder, no progress bar."""
    import tempfile

    import duckdb

    spill = Path(tempfile.gettempdir()) / "guesslab-duckdb"
    config = {"threads": 2, "memory_limit": DUCKDB_MEMORY, "temp_directory": str(spill)}
    con = duckdb.connect(config=config)
    # set only where it is on: in a Jupyter kernel it is off, and DuckDB refuses to change it
    # there without ipywidgets ("required package 'ipywidgets' is missing")
    if con.sql("SELECT current_setting('enable_progress_bar')").fetchall()[0][0]:
        con.sql("SET enable_progress_bar = false")
    return con


def file_columns(con: Any, names: str) -> tuple[set[str], bool]:
    """(the column names any of the files ``names`` (SQL string literals) has, whether two
    files differ in their columns), from the Parquet footers."""
    query = (
        "SELECT list(DISTINCT name), count(DISTINCT columns) FROM (SELECT name, "
        "string_agg(name, ',' ORDER BY name) OVER (PARTITION BY file_name) AS columns "
        f"FROM parquet_schema([{names}]))"
    )
    found, layouts = con.sql(query).fetchall()[0]
    return set(found or ()), int(layouts) > 1


def sql_text(value: str) -> str:
    """``value`` as an SQL string literal."""
    return "'" + value.replace("'", "''") + "'"


def quoted(name: str) -> str:
    """A column name as an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def frame_of(rows: pd.DataFrame | StoredRows, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """``rows`` as a DataFrame: a DataFrame as it is, stored rows' ``columns`` read once
    (those of ``columns`` the rows have; default all)."""
    if isinstance(rows, pd.DataFrame):
        return rows
    have = rows.columns
    return rows.cached_frame([c for c in columns if c in have] if columns is not None else None)
