"""What the store holds of a search's tasks: each task's status and objective column, read
from the results files once and then from each batch's new files (a later file's rows of a
task supersede an earlier one's, as in the store).

A file is read only once the store's check passes (:func:`pipeline.storage.store_upkeep.
bad_file_reason`: a Parquet file of the family's schema with guesslab's metadata); a file
that fails it, or whose rows cannot be read, is named and its rows are not used: its tasks
count as not stored, and the next batch's run moves it to ``quarantine/`` and solves them
again when a trial asks for them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.storage.store import part_files
from pipeline.storage.store_layout import family_dir
from pipeline.storage.store_upkeep import bad_file_reason


@dataclass(frozen=True)
class TaskValue:
    """A stored task's value of the objective's column (the mean over its ok rows), its
    exact value (``p/q``, or None), and its first error line (None: ok)."""

    value: float | None
    exact: str | None
    error: str | None


class TaskValues:
    """Task id -> :class:`TaskValue` for one family's rows in a store."""

    def __init__(self, results: Path, family: str, column: str, log: Callable[[str], None] = print):
        self.family, self.column, self.log = family, column, log
        self.found: dict[str, TaskValue] = {}
        folder = family_dir(results, family)
        self.read(sorted(part_files(folder), key=lambda p: p.name) if folder.is_dir() else [])

    def get(self, task_id: str) -> TaskValue | None:
        return self.found.get(task_id)

    def read(self, files: Iterable[Path]) -> None:
        """Take each file's rows (in the order given: later files supersede)."""
        for path in files:
            if f"family={self.family}" not in str(path):
                continue
            reason = bad_file_reason(path)
            if reason is not None:
                self.log(
                    f"warning: {path} is not a guesslab results file ({reason}); its rows "
                    "are not used"
                )
                continue
            names = pq.read_schema(path).names
            wanted = [c for c in ("task_id", "status", "error", self.column) if c in names]
            exact = f"{self.column}_exact"
            wanted += [exact] if exact in names else []
            try:
                table = pq.read_table(path, columns=wanted).to_pydict()
            except (OSError, pa.ArrowException) as exc:  # a footer whole, its pages damaged
                self.log(f"warning: {path}: its rows cannot be read ({exc}); not used")
                continue
            per_task: dict[str, list[int]] = {}
            for i, tid in enumerate(table["task_id"]):
                per_task.setdefault(tid, []).append(i)
            for tid, rows in per_task.items():
                self.found[tid] = _task_value(table, rows, self.column, exact)


def _task_value(table: dict, rows: list[int], column: str, exact: str) -> TaskValue:
    bad = [i for i in rows if table["status"][i] != "ok"]
    if bad:
        error = (table.get("error") or [None] * (max(rows) + 1))[bad[0]] or "failed"
        return TaskValue(None, None, str(error).splitlines()[0])
    values = [table[column][i] for i in rows] if column in table else []
    if not values or any(v is None for v in values):
        return TaskValue(None, None, f"no {column} in its rows")
    exacts = [table[exact][i] for i in rows] if exact in table else [None]
    one_exact = exacts[0] if len(rows) == 1 else None
    return TaskValue(sum(values) / len(values), one_exact, None)
