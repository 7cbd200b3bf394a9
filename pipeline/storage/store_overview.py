"""What a store holds, counted: rows, distinct tasks and solver seconds per family and status
(:func:`store_counts`, by DuckDB from three columns), or of rows already in a DataFrame
(:func:`frame_counts`).  Only the rows of the newest file holding a task count.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.storage.store import family_files, stored_families
from pipeline.storage.store_newest import (
    files_key,
    newest_source,
    remember_superseded,
    superseded_rows,
)
from solvers.kit.words import counted

if TYPE_CHECKING:  # pandas only where results are read: workers that write them skip its import
    import pandas as pd


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


def status_line(counts: StoreCounts, left_out: int = 0) -> str:
    """Tasks, ok and failed result rows, and solver time, in one sentence: the status line of
    ``summary.md`` and of ``report.html``, counting what their tables show (``counts``); then
    how many ``left_out`` rows the store keeps besides (rows of other versions of the code,
    which each family's notes count)."""
    besides = (
        f" The store keeps {counted(left_out, 'more row')}, computed by other versions of "
        "the code and left out here (each family's notes say which)."
        if left_out
        else ""
    )
    if not counts.rows:
        held = "The store holds no results yet." if not left_out else "No results shown."
        return held + besides
    ok = counts.rows_with("ok")
    return (
        f"{counted(counts.tasks, 'task')}, {counted(counts.rows, 'result row')}: {ok:,} ok, "
        f"{counts.rows - ok:,} failed; "
        f"{counts.seconds:.2f} s of solver time.{besides}"
    )


# (family, its files) -> (the files whose rows a page shows, an SQL condition on their rows)
Shown = Callable[[str, list[Path]], tuple[list[Path], str]]


def store_counts(results: str | Path, shown: Shown | None = None) -> StoreCounts:
    """Rows, distinct tasks and solver seconds per family and status, and distinct tasks in
    all: one DuckDB query per family over its files' task_id, status and seconds columns
    (task ids hash the family, so no id is in two families).  10^6 rows: ~0.5 s and ~0.2 GB
    while it runs (grouping sets, or one query over every file with the family taken from
    the path, took twice the memory).

    Only the rows of the newest file holding a task count (see :func:`superseded_rows`).
    A family with as many rows as tasks has no task in two files, and costs nothing more;
    one with more (several rows per task, or a task stored twice) has its ids read once.
    With ``shown``, only the rows a summary shows count (the files and rows it picks of
    each family's)."""
    import pandas as pd

    from solvers.kit.stored_rows import connect

    parts, tasks, superseded = [], 0, 0
    with connect() as con:
        for family in stored_families(results):
            files, where = (
                shown(family, family_files(results, family))
                if shown
                else (
                    family_files(results, family),
                    "",
                )
            )
            if not files:
                continue
            table, n_tasks = _family_counts(con, newest_source(con, files, None), where)
            if int(table["rows"].sum()) == n_tasks:  # one row per task: none in two files
                if not where:  # (rows left out may be: nothing is said of them)
                    remember_superseded(files_key(files), None)
            elif (older := superseded_rows(files)) is not None:
                before = int(table["rows"].sum())
                table, n_tasks = _family_counts(con, newest_source(con, files, older), where)
                superseded += before - int(table["rows"].sum())
            tasks += n_tasks
            parts.append(table.assign(family=family))
    if not parts:
        return StoreCounts(pd.DataFrame(columns=OVERVIEW_COLUMNS), 0)
    by_status = pd.concat(parts, ignore_index=True)[OVERVIEW_COLUMNS]
    return StoreCounts(by_status, tasks, superseded)


def _family_counts(con: Any, source: str, where: str = "") -> tuple[pd.DataFrame, int]:
    """(rows, distinct tasks and solver seconds per status; distinct tasks) of ``source``
    (its rows matching the SQL condition ``where``, if given).  Every row of a task carries
    the task's solver seconds: they count once per task."""
    if where:
        source = f"(SELECT * FROM {source} WHERE {where})"
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
