"""Stored rows against recomputed ones, column by column: what :mod:`pipeline.reproduce`
reports as reproduced or differing.

Rows are matched by task id and their place among the task's rows (a task may give several
rows, always in the same order).  Every column but the row's bookkeeping (:data:`NOT_RESULTS`:
the solver's seconds, the study's name, the run and Hydra job) is compared: text, integers
and booleans exactly, floats bit for bit (``-0.0`` is not ``0.0``; a NaN equals a NaN of the
same bits), lists item by item the same way, a missing value only to a missing value.  A
family's solver may declare ``tolerances`` (``Solver(tolerances=...)``), a mapping of float
columns to the largest absolute difference it accepts in them (with its reason in the
family's docstring).  No built-in family declares one: their parallel kernels split the
work between threads but add no float across them, and
Monte Carlo draws are seeded per task, so a value does not depend on the backend or the
threads (what was measured: docs/usage.md, "Reproduce a stored study").
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

# what a row records of its run, not of its task (run, job, search and trial: the columns
# load_results adds from a file's metadata, if a frame of it is compared)
NOT_RESULTS = ("seconds", "study", "run", "job", "search", "trial")
ROW = "__row"  # a row's place among its task's rows


@dataclass(frozen=True)
class Difference:
    """One value that did not reproduce: the task, the column, the stored and the new value
    (a whole row missing on one side: column ``(row)``, the missing side None)."""

    task_id: str
    column: str
    stored: Any
    new: Any


def tolerances(family: Any) -> Mapping[str, float]:
    """The absolute tolerance a family declares per float column (``Solver.tolerances``)."""
    return dict(family.solver.tolerances)


def numbered(table: pa.Table) -> pa.Table:
    """``table`` with each row's place among the rows of its task (0, 1, ...) as ROW, sorted by
    task id and that place."""
    ids = table.column("task_id").to_pylist()
    seen: dict[str, int] = {}
    places = []
    for tid in ids:
        places.append(seen.get(tid, 0))
        seen[tid] = places[-1] + 1
    table = table.append_column(ROW, pa.array(places, pa.int64()))
    return table.sort_by([("task_id", "ascending"), (ROW, "ascending")])


def row_keys(table: pa.Table) -> list[tuple[str, int]]:
    """(task id, place among its task's rows) of each row of a :func:`numbered` table."""
    ids, places = table.column("task_id").to_pylist(), table.column(ROW).to_pylist()
    return list(zip(ids, places, strict=True))


def differences(
    stored: pa.Table, new: pa.Table, tolerance: Mapping[str, float] | None = None
) -> list[Difference]:
    """Every value of ``stored`` (one family's rows) that ``new`` does not reproduce, rows
    matched as the module says; the columns compared are those of ``stored``."""
    stored, new = numbered(stored), numbered(new)
    keys_s, keys_n = row_keys(stored), row_keys(new)
    found: list[Difference] = []
    if keys_s != keys_n:
        at_n = {k: i for i, k in enumerate(keys_n)}
        at_s = {k: i for i, k in enumerate(keys_s)}
        found += [Difference(k[0], "(row)", f"row {k[1]}", None) for k in keys_s if k not in at_n]
        found += [Difference(k[0], "(row)", None, f"row {k[1]}") for k in keys_n if k not in at_s]
        both = [k for k in keys_s if k in at_n]
        stored = stored.take(pa.array([at_s[k] for k in both], pa.int64()))
        new = new.take(pa.array([at_n[k] for k in both], pa.int64()))
        keys_s = both
    tolerance = tolerance or {}
    for name in stored.column_names:
        if name in (*NOT_RESULTS, ROW, "task_id") or name not in new.column_names:
            continue
        a, b = stored.column(name), new.column(name)
        for i in np.flatnonzero(~_same(a, b, tolerance.get(name))).tolist():
            found.append(Difference(keys_s[i][0], name, a[i].as_py(), b[i].as_py()))
    return found


def _same(a: pa.ChunkedArray, b: pa.ChunkedArray, tolerance: float | None) -> np.ndarray:
    """Which rows hold the same value in ``a`` and ``b`` (as the module says)."""
    if len(a) == 0:
        return np.ones(0, bool)
    null_a = a.is_null().to_numpy(zero_copy_only=False)
    null_b = b.is_null().to_numpy(zero_copy_only=False)
    if pa.types.is_floating(a.type) and a.type == b.type:
        x = a.to_numpy(zero_copy_only=False).astype(np.float64)
        y = b.to_numpy(zero_copy_only=False).astype(np.float64)
        same = x.view(np.int64) == y.view(np.int64)
        if tolerance is not None:
            same |= np.abs(x - y) <= tolerance
    elif pa.types.is_list(a.type) or a.type != b.type:
        pairs = zip(a.to_pylist(), b.to_pylist(), strict=True)
        same = np.array([same_value(x, y, tolerance) for x, y in pairs], bool)
    else:
        same = pc.equal(a, b).fill_null(False).to_numpy(zero_copy_only=False)
    return np.where(null_a | null_b, null_a & null_b, same)


def same_value(x: Any, y: Any, tolerance: float | None = None) -> bool:
    """Whether two values are the same: floats bit for bit (or within ``tolerance``), lists
    item by item, anything else by equality and type."""
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(
            same_value(u, v, tolerance) for u, v in zip(x, y, strict=True)
        )
    if isinstance(x, float) and isinstance(y, float):
        if struct.pack("<d", x) == struct.pack("<d", y):
            return True
        return tolerance is not None and abs(x - y) <= tolerance
    return type(x) is type(y) and x == y


def shown(value: Any, other: Any = None, width: int = 40) -> str:
    """A value for the table: a float as Python writes it (its hex digits when that text
    equals the other value's: two NaNs, say), a list shortened, missing as ``-``."""
    if value is None:
        return "-"
    if isinstance(value, float):
        text = repr(value)
        return value.hex() if isinstance(other, float) and repr(other) == text else text
    text = str(value)
    return text if len(text) <= width else f"{text[: width - 12]}... ({len(text)} chars)"
