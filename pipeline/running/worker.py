"""The worker's side of a run: a batch of tasks to encoded rows, where the executor runs it.

- :class:`TaskSlice` is a batch as it travels (a grid and positions in it, or positions in
  several small grids of one kind): the worker builds its tasks itself.
- :func:`run_batch` is what the executor runs: the batch's tasks built, solved and encoded
  one after another (:func:`batch_rows`: an error row for a task that fails, a time limit
  per task with ``run.task_timeout_s``, each long task in its context), a :class:`DoneBatch`
  back for the driver to store (:mod:`pipeline.running.driver`).
- :func:`encode_rows` encodes a batch's rows: Parquet files in memory, one per family,
  the run's metadata in each (:func:`metadata_bytes`), the rows turned into Arrow columns
  ``ENCODE_CHUNK`` at a time as they come, so the driver only writes finished bytes.
- :func:`lost_batch` is the driver's :class:`DoneBatch` of a batch its worker never returned
  (an error row per task).

Where it runs is the executor's business (:mod:`pipeline.backends`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import os
import pickle
import select
import signal
import threading
import time
import traceback
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.backends.executor import CallLost
from pipeline.ctrl_c import stopping
from pipeline.exception_chain import raised_from
from pipeline.long_task_setup import LongTaskSetup, finish
from pipeline.running import failed_tasks
from pipeline.storage.store_layout import METADATA_KEY, family_schema
from solvers.grid import Grid, runs
from solvers.kit.current_task import Deferred, reset_current, set_current, using
from solvers.kit.interrupts import raised_by_code
from solvers.kit.spread import Spreading
from solvers.kit.task_context import current
from solvers.own_strategy import StrategyError, is_own, strategy_words
from solvers.registry import Row, get_family, param_columns, solve


class TaskSlice:
    """A batch as Dask ships it: positions in a grid (or in several grids of one kind, each
    a grid part of few tasks: a search's trials), one opaque object.

    The worker builds the tasks and their ids (:meth:`Grid.tasks_at`), so the driver neither
    builds nor pickles a task, and the scheduler (which unpickles every task spec it is
    given) handles one small blob, not thousands of task dicts.  Positions go as their runs
    of consecutive numbers (a fresh grid's batch is one run).
    """

    __slots__ = ("pieces",)

    def __init__(self, grid: Grid, positions: np.ndarray):
        self.pieces: list[tuple[Grid, list[tuple[int, int]]]] = [(grid, runs(positions))]

    def add(self, grid: Grid, positions: np.ndarray) -> None:
        """Positions of another grid, after those the batch holds."""
        self.pieces.append((grid, runs(positions)))

    def __len__(self) -> int:
        return sum(b - a for _, grid_runs in self.pieces for a, b in grid_runs)

    def pairs(self) -> list[tuple[str, dict]]:
        """The batch's (task_id, task) pairs, built now."""
        return list(self.iter_pairs())

    def iter_pairs(self) -> Iterator[tuple[str, dict]]:
        """The batch's (task_id, task) pairs, each built when it is asked for."""
        for grid, grid_runs in self.pieces:
            for a, b in grid_runs:
                yield from grid.tasks(a, b)

    def __getstate__(self) -> bytes:
        return pickle.dumps(self.pieces, protocol=pickle.HIGHEST_PROTOCOL)

    def __setstate__(self, blob: bytes) -> None:
        self.pieces = pickle.loads(blob)


EncodedFile = tuple[str, bytes]  # (family, the bytes of one finished Parquet file)


@dataclass(slots=True)
class DoneBatch:
    """A finished batch as the driver needs it: encoded files to store, and counts."""

    files: list[EncodedFile]
    n_tasks: int
    n_rows: int
    n_errors: int
    seconds: float  # solver time of its tasks (batch sizing learns from it)
    # the first few error rows, as a message shows them (pipeline.running.failed_tasks.kept)
    failures: list[dict] = field(default_factory=list)
    # ok tasks that left a checkpoint folder: cleared once these rows are stored
    checkpointed: list[str] = field(default_factory=list)
    # a task's checkpoint write the disk refused for room: (where, errno); the run stops
    no_room: tuple[str, int] | None = None


def done_batch(
    rows: Iterable[dict],
    n_tasks: int,
    metadata: bytes,
    checkpointed: list[str] | None = None,
    no_room: list[tuple[str, int]] | None = None,
) -> DoneBatch:
    """A batch's rows encoded as Parquet (where the batch ran), with their counts; ``rows``
    is read once, as the solver makes them (see ``ENCODE_CHUNK``)."""
    counts = {"rows": 0, "errors": 0, "seconds": 0.0}
    failures: list[dict] = []

    def counted(rows: Iterable[dict]) -> Iterator[dict]:
        last: object = object()  # a task's rows come together, each with the task's seconds
        for row in rows:
            counts["rows"] += 1
            if row["status"] == "error":
                counts["errors"] += 1
                if len(failures) < failed_tasks.SHOWN:
                    failures.append(failed_tasks.kept(row))
            if row.get("task_id") != last:
                counts["seconds"] += row["seconds"] or 0.0
                last = row.get("task_id")
            yield row

    files = encode_rows(counted(rows), metadata)
    return DoneBatch(
        files=files,
        n_tasks=n_tasks,
        n_rows=counts["rows"],
        n_errors=counts["errors"],
        seconds=counts["seconds"],
        failures=failures,
        checkpointed=checkpointed if checkpointed is not None else [],
        no_room=no_room[0] if no_room else None,  # read once the rows are: they fill it
    )


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


def run_batch(
    batch: TaskSlice,
    study: str,
    timeout,
    metadata: bytes,
    spreading: Spreading | None = None,
    setup: LongTaskSetup | None = None,
) -> DoneBatch:
    """What the executor runs: the batch's rows, encoded where it runs, so the driver only
    writes them.
    Tasks are built, solved and encoded one after another, never held all at once; each in
    its long-task context when ``setup`` is given, where a task that spreads its work is
    handed ``spreading`` (the executor's: :attr:`Executor.spreading`)."""
    kept: list[str] = []
    no_room: list[tuple[str, int]] = []
    rows = batch_rows(batch.iter_pairs(), study, timeout, spreading, setup, kept, no_room)
    return done_batch(rows, len(batch), metadata, kept, no_room)


def batch_rows(
    batch: Iterable[tuple[str, dict]],
    study: str,
    timeout: float | None = None,
    spreading: Spreading | None = None,
    setup: LongTaskSetup | None = None,
    checkpointed: list[str] | None = None,
    no_room: list[tuple[str, int]] | None = None,
) -> Iterator[Row]:
    """Rows for a batch of (task_id, task): results, or one "error" row per failing task,
    task by task as they are solved (the tasks are taken from ``batch`` one at a time too: a
    worker holds one task and the rows not yet encoded).

    With ``timeout`` (seconds), each task runs in a forked child that is killed when the
    time is up; the task then gets an error row saying so.  With ``setup``, each task runs
    inside its :class:`~solvers.kit.task_context.TaskContext` (budget, checkpoints, progress,
    and ``spreading``: what a task that spreads its work gets from ``TaskContext.spread``;
    None: threads of this process), and the ids of ok tasks that left a checkpoint folder are
    appended to ``checkpointed`` (the driver clears those folders once the rows are stored);
    a task that kept checkpoints and failed for a write the disk refused for room appends
    where and why to ``no_room`` (:func:`refused_for_room`: the driver stops the run,
    naming the checkpoints).
    """
    if setup is None:
        for tid, task in batch:
            yield from _task_rows(tid, task, study, timeout)
        return
    # one holder for the batch: a task's context is made only if it asks (current())
    held = Deferred(lambda tid: setup.context(tid, spreading))
    token = set_current(held)
    try:
        for tid, task in batch:
            held.key, held.ctx = tid, None
            failed: list[BaseException] = []
            try:
                out = _task_rows(tid, task, study, timeout, failed)
            finally:
                kept = held.ctx is not None and finish(held.ctx)
            keeps = held.ctx.checkpoints if held.ctx is not None else None
            refused = refused_for_room(failed[0], keeps.folder) if failed and keeps else None
            if refused is not None and no_room is not None:
                no_room.append(refused)
            if kept and checkpointed is not None and out and out[0]["status"] == "ok":
                checkpointed.append(tid)
            yield from out
    finally:
        with contextlib.suppress(ValueError):  # closed from another context: nothing to undo
            reset_current(token)


def _task_rows(tid: str, task: dict, study: str, timeout, failed: list | None = None) -> list[Row]:
    """The task's rows, or its one error row (its exception appended to ``failed``):
    whatever the task's code raises, SystemExit (a ``sys.exit()`` in a strategy of one's
    own) and a KeyboardInterrupt it raised itself included; only a stop (Ctrl-C, SIGTERM)
    goes through, to stop the run."""
    try:
        out = _solved(task, timeout)
    except BaseException as exc:  # a failing task becomes a row; the study goes on
        stop = ctrl_c_inside(exc)
        if stop is not None:  # Ctrl-C, not a failure of the task: the run stops
            raise stop from None
        out = [error_row(task, exc)]
        if failed is not None:
            failed.append(exc)
    if stopping():  # the command's Ctrl-C came, and the task's code caught it
        raise KeyboardInterrupt  # the run stops all the same (later Ctrl-Cs are ignored)
    for row in out:
        row["task_id"], row["study"] = tid, study
    return out


DISK_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)  # more space would let the write pass


def refused_for_room(exc: BaseException, checkpoints: Path) -> tuple[str, int] | None:
    """(where, errno) when ``exc``, a task's error, is a write the disk refused for room
    (full, over quota, past a file size limit; of the task that keeps its checkpoints in
    ``checkpoints``, the file the error names, else that folder), or None."""
    error = raised_from(exc, OSError)
    if error is None or error.errno not in DISK_FULL:
        return None
    return str(error.filename or checkpoints), error.errno


def ctrl_c_inside(exc: BaseException) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt an error stands for, or None: a compiled function interrupted by
    Ctrl-C (a Numba kernel's call) raises ``SystemError: ... returned a result with an
    exception set`` with the KeyboardInterrupt as its cause; a library may wrap it likewise.
    A KeyboardInterrupt that code raised itself (:func:`raised_by_code`: a strategy of one's
    own) stands for no stop: it is the task's error."""
    found = raised_from(exc, KeyboardInterrupt)
    return None if found is None or raised_by_code(found) else found


def _solved(task: dict, timeout: float | None) -> list[Row]:
    if timeout is None:
        return solve(task, canonical=True)
    return solve_with_timeout(task, timeout)


class TaskTimeout(Exception):
    """A task ran past its time limit."""


def solve_with_timeout(task: dict, seconds: float) -> list[Row]:
    """solve(task) in a forked child process, killed after ``seconds``.

    The child's progress reports come back through the same pipe as its result, each a
    frame of its own, and go to the parent's task context
    (:func:`solvers.kit.task_context.current`).
    """
    read_fd, write_fd = os.pipe()
    parent = current()
    pid = os.fork()
    if pid == 0:  # the child always ends in os._exit: it must never return into the driver
        try:
            os.close(read_fd)
            lock = threading.Lock()

            def send(tag: bytes, payload: bytes) -> None:
                with lock:
                    _write_all(write_fd, tag + len(payload).to_bytes(8, "big") + payload)

            relay = None
            if parent.sink is not None:
                relay = lambda report: send(b"p", pickle.dumps(report))  # noqa: E731
            try:
                with using(dataclasses.replace(parent, sink=relay)):
                    payload = pickle.dumps(("ok", solve(task, canonical=True)))
            except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent
                payload = pickle.dumps(("error", f"{type(exc).__name__}: {exc}"))
            send(b"r", payload)
            os.close(write_fd)
        finally:
            os._exit(0)
    os.close(write_fd)
    deadline = time.monotonic() + seconds
    buffer = bytearray()
    result: bytes | None = None
    try:
        while True:
            left = deadline - time.monotonic()
            ready = select.select([read_fd], [], [], max(0.0, left))[0] if left > 0 else []
            if not ready:
                os.kill(pid, signal.SIGKILL)
                raise TaskTimeout(f"task ran past its time limit run.task_timeout_s={seconds:g}")
            data = os.read(read_fd, 1 << 20)
            if not data:
                break
            buffer += data
            while len(buffer) >= 9 and len(buffer) >= 9 + int.from_bytes(buffer[1:9], "big"):
                end = 9 + int.from_bytes(buffer[1:9], "big")
                tag, payload = bytes(buffer[:1]), bytes(buffer[9:end])
                del buffer[:end]
                if tag == b"r":
                    result = payload
                elif parent.sink is not None:
                    parent.sink(pickle.loads(payload))
    finally:
        os.close(read_fd)
        os.waitpid(pid, 0)
    if result is None:
        raise RuntimeError("the task's process ended without a result")
    status, value = pickle.loads(result)
    if status == "error":
        raise RuntimeError(value)
    return value


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def batch_error_row(tid: str, task: dict, study: str, exc: BaseException) -> Row:
    """The error row of a task whose whole batch was lost (e.g. its worker died): what the
    task ran (:func:`task_words`) and why it was lost."""
    row = error_row(task, exc)
    why = str(exc) if isinstance(exc, CallLost) else row["error"]
    row["error"] = f"batch lost: {task_words(task)}: {why}"
    row["task_id"], row["study"] = tid, study
    return row


def task_words(task: Mapping[str, Any]) -> str:
    """What a task ran, for a message: its strategy of one's own with its class and
    arguments (``strategy 'switch' (mystrat.SwitchAfterNo, patience=2)``), a built-in
    strategy by name, or its family."""
    if is_own(task):
        return strategy_words(task)
    if task.get("strategy") is not None:
        return f"strategy {task['strategy']!r}"
    return f"a task of {task['family']}"


def error_row(task: dict, exc: BaseException) -> Row:
    """The row recorded for a task that raised: its parameters and the error message."""
    fam = get_family(task["family"])
    tb = traceback.extract_tb(_where_raised(exc))
    where = f" (at {Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
    return {
        **param_columns(task),
        **dict.fromkeys(fam.solver.columns),
        "status": "error",
        "error": f"{type(exc).__name__}: {exc}{where}",
        "seconds": None,
    }


def _where_raised(exc: BaseException) -> TracebackType | None:
    """The traceback an error row's place is read from: a strategy of one's own's error is
    where its code raised (the StrategyError's cause), or none (a check of its answer)."""
    if isinstance(exc, StrategyError):
        return exc.__cause__.__traceback__ if exc.__cause__ is not None else None
    return exc.__traceback__


def lost_batch(batch: TaskSlice, study: str, metadata: bytes, exc: BaseException) -> DoneBatch:
    """The DoneBatch of a batch whose worker never returned it (it died, or the batch could
    not be run at all): an error row per task, saying why."""
    rows = [batch_error_row(tid, task, study, exc) for tid, task in batch.pairs()]
    return done_batch(rows, len(batch), metadata)
