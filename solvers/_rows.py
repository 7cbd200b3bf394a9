"""One family's result rows, read lazily: SQL (DuckDB) over its Parquet files or a DataFrame.

The summary stage hands a family's summary and report functions a :class:`StoredRows`
instead of a DataFrame when the family holds many rows (10^5 and more) and its functions
say they take one (:func:`takes_stored_rows`): the function then reads only what it needs
(a column subset, an aggregate in SQL), never the whole store in pandas at once.  The same
object wraps a DataFrame too, so the code that reads it is one and the same on a small
study's frame and on a large store's files.

In SQL the rows are the view ``rows`` (the family's columns and ``family``), in store order
(files oldest first, then their rows: DuckDB keeps the insertion order of a scan), the
order of :func:`pipeline.store.load_results`' frame.
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
    ):
        """``files`` (oldest first) with the family's ``columns``, or ``frame``; ``where``
        (SQL) selects the rows this object stands for, e.g. ``status = 'ok'``."""
        import duckdb

        self.family = family
        self.files = [Path(f) for f in files]
        self._con = duckdb.connect(config={"threads": 2, "memory_limit": "1GB"})
        self._frames: dict[tuple[str, ...] | None, pd.DataFrame] = {}
        self._con.sql(f"CREATE VIEW rows AS {self._source(frame, columns, where)}")

    def _source(self, frame: pd.DataFrame | None, columns: Sequence[str], where: str) -> str:
        cond = f"WHERE {where}" if where else ""
        if frame is not None:
            frame = frame.drop(columns=["family"], errors="ignore").reset_index(drop=True)
            self._con.register("source_frame", frame)
            return f"SELECT *, {sql_text(self.family)} AS family FROM source_frame {cond}"
        if not self.files:
            cols = ", ".join(f"NULL AS {quoted(c)}" for c in columns) or "NULL AS task_id"
            return f"SELECT {cols}, NULL AS family WHERE false"
        names = ", ".join(sql_text(str(f)) for f in self.files)
        found = self._file_columns(names)
        cols = ", ".join(quoted(c) if c in found else f"NULL AS {quoted(c)}" for c in columns)
        return (  # in file order (the list's), then row order: DuckDB keeps insertion order
            f"SELECT {cols}, {sql_text(self.family)} AS family "
            f"FROM read_parquet([{names}], union_by_name = true, hive_partitioning = false) "
            f"{cond}"
        )

    def _file_columns(self, names: str) -> set[str]:
        query = f"DESCRIBE SELECT * FROM read_parquet([{names}], union_by_name = true)"
        return {r[0] for r in self._con.sql(query).fetchall()}

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

    def cached_frame(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """:meth:`frame` of ``columns``, read once per object (a summary and a report that
        need the same columns read them once)."""
        key = tuple(columns) if columns is not None else None
        if key not in self._frames:
            self._frames[key] = self.frame(columns)
        return self._frames[key]

    def __len__(self) -> int:
        """How many rows (see :meth:`count`)."""
        return self.count()


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
