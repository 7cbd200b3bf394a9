"""The plan's tasks in batches: cut as they are needed, run where the backend runs them,
back as encoded Parquet files.

- :class:`BatchCutter` cuts the tasks left to run into batches of ~``run.batch_seconds`` of
  solver time, each a :class:`TaskSlice` (a grid and positions in it).
- :func:`run_task_slice` is what a worker runs: the batch's tasks built, solved and encoded
  there, one after another (:mod:`pipeline.execute`), a :class:`DoneBatch` back.
- :func:`finished_batches` keeps up to ``BatchCutter.in_flight`` batches on the runner's
  workers (or runs them in this process under ``cluster=sync``) and yields each as it
  finishes.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from pipeline import store_writes
from pipeline.backends.base import finished
from pipeline.execute import batch_error_row, batch_rows
from pipeline.task_context import LongTaskSetup
from solvers.grid import Grid, runs

if TYPE_CHECKING:
    from pipeline.config import RunConfig
    from pipeline.study import Plan


class BatchCutter:
    """Cuts the plan's tasks into batches as they are needed, sized to take ~batch_seconds.

    A batch is a grid and positions in it (a worker builds the tasks itself).  The first
    batches (those submitted before any has finished) hold one task each; then the size
    follows the solver time per task of the batches seen, never more than ``max_batch`` and
    never so large that the last batches leave workers idle.  ``in_flight`` batches are
    out at a time: ``run.max_in_flight`` per worker, or, when the free disk holds the
    checkpoints of only ``at_once`` tasks, as many batches as hold that many tasks.

    The time per task is a running average that weighs each finished batch half: a worker's
    first tasks run with cold solver caches (on the load benchmark ~1 ms a task, then ~0.3
    ms), and the average forgets them fast.  After a start ten times slower the size is at
    90% of its target by the 10th batch, where the mean of every task seen reaches it by the
    18th (tests/test_grid.py); the load benchmark runs 58 batches, against 66-71 with the
    mean.
    """

    def __init__(self, tasks: Plan, n_workers: int, run_cfg: RunConfig, at_once: int | None = None):
        self.plan = tasks
        self.left = len(tasks)
        self.slices = tasks.slices()
        self.current: tuple[int, np.ndarray] | None = None
        self.n_workers = max(1, n_workers)
        self.fixed = None if run_cfg.batch_size == "auto" else run_cfg.batch_size
        self.max_batch = run_cfg.max_batch
        self.seconds = run_cfg.batch_seconds
        self.per_task: float | None = None  # solver seconds a task, a running average
        self.in_flight = run_cfg.max_in_flight * self.n_workers
        if at_once is not None:  # batches of one task, at most at_once of them out
            self.fixed = self.fixed or 1
            self.in_flight = min(self.in_flight, max(1, at_once // self.fixed))

    def observe(self, seconds: float, n_tasks: int) -> None:
        """Learn the time per task from a finished batch's solver seconds."""
        if n_tasks <= 0:
            return
        latest = seconds / n_tasks
        self.per_task = latest if self.per_task is None else (self.per_task + latest) / 2

    def size(self) -> int:
        if self.fixed is not None:
            return self.fixed
        if self.per_task is None:
            return 1
        per_task = max(self.per_task, 1e-6)
        target = int(self.seconds / per_task)
        # the last batches shrink so that no worker is left idle long, but not below a tenth
        # of the target: every batch costs a few ms (a Parquet file, the scheduler), and a
        # tail halving down to one task would make ~40 of the ~100 batches of the load
        # benchmark
        fair = max(target // 10, self.left // (2 * self.n_workers))
        return max(1, min(self.max_batch, target, fair))

    def next_batch(self) -> TaskSlice | None:
        """The next batch (never across two grids), or None when every task is out."""
        if self.current is None or not len(self.current[1]):
            self.current = next(self.slices, None)
            if self.current is None:
                return None
        g, positions = self.current
        size = self.size()
        self.current = (g, positions[size:])
        self.left -= min(size, len(positions))
        return TaskSlice(self.plan.grids[g], positions[:size])


class TaskSlice:
    """A batch as Dask ships it: a grid and positions in it, one opaque object.

    The worker builds the tasks and their ids (:meth:`Grid.tasks_at`), so the driver neither
    builds nor pickles a task, and the scheduler (which unpickles every task spec it is
    given) handles one small blob, not thousands of task dicts.  Positions go as their runs
    of consecutive numbers (a fresh grid's batch is one run).
    """

    __slots__ = ("grid", "runs")

    def __init__(self, grid: Grid, positions: np.ndarray):
        self.grid = grid
        self.runs = runs(positions)

    def __len__(self) -> int:
        return sum(b - a for a, b in self.runs)

    def pairs(self) -> list[tuple[str, dict]]:
        """The batch's (task_id, task) pairs, built now."""
        return list(self.iter_pairs())

    def iter_pairs(self) -> Iterator[tuple[str, dict]]:
        """The batch's (task_id, task) pairs, each built when it is asked for."""
        for a, b in self.runs:
            yield from self.grid.tasks(a, b)

    def __getstate__(self) -> bytes:
        return pickle.dumps((self.grid, self.runs), protocol=pickle.HIGHEST_PROTOCOL)

    def __setstate__(self, blob: bytes) -> None:
        self.grid, self.runs = pickle.loads(blob)


@dataclass(slots=True)
class DoneBatch:
    """A finished batch as the driver needs it: encoded files to store, and counts."""

    files: list[store_writes.EncodedFile]
    n_tasks: int
    n_rows: int
    n_errors: int
    seconds: float  # solver time of its tasks (batch sizing learns from it)
    # ok tasks that left a checkpoint folder: cleared once these rows are stored
    checkpointed: list[str] = field(default_factory=list)


def done_batch(
    rows: Iterable[dict], n_tasks: int, metadata: bytes, checkpointed: list[str] | None = None
) -> DoneBatch:
    """A batch's rows encoded as Parquet (where the batch ran), with their counts; ``rows``
    is read once, as the solver makes them (see ``store_writes.ENCODE_CHUNK``)."""
    counts = {"rows": 0, "errors": 0, "seconds": 0.0}

    def counted(rows: Iterable[dict]) -> Iterator[dict]:
        last: object = object()  # a task's rows come together, each with the task's seconds
        for row in rows:
            counts["rows"] += 1
            counts["errors"] += row["status"] == "error"
            if row.get("task_id") != last:
                counts["seconds"] += row["seconds"] or 0.0
                last = row.get("task_id")
            yield row

    files = store_writes.encode_rows(counted(rows), metadata)
    return DoneBatch(
        files=files,
        n_tasks=n_tasks,
        n_rows=counts["rows"],
        n_errors=counts["errors"],
        seconds=counts["seconds"],
        checkpointed=checkpointed if checkpointed is not None else [],
    )


def run_task_slice(
    batch: TaskSlice,
    study: str,
    timeout,
    metadata: bytes,
    cluster: Any,
    setup: LongTaskSetup | None = None,
) -> DoneBatch:
    """What the workers run: the batch's rows, encoded there, so the driver only writes.
    Tasks are built, solved and encoded one after another, never held all at once; each in
    its long-task context when ``setup`` is given."""
    kept: list[str] = []
    rows = batch_rows(batch.iter_pairs(), study, timeout, cluster, setup, kept)
    return done_batch(rows, len(batch), metadata, kept)


def finished_batches(
    runner,
    cutter: BatchCutter,
    study: str,
    timeout,
    metadata: bytes,
    setup: LongTaskSetup | None = None,
) -> Iterator[DoneBatch]:
    """A DoneBatch per finished batch, in completion order.

    At most ``cutter.in_flight`` batches are submitted at a time; a batch whose worker died
    (or that failed outside the solver) becomes error rows, and the study goes on.
    """
    if runner.client is None:
        while (batch := cutter.next_batch()) is not None:
            yield run_task_slice(batch, study, timeout, metadata, None, setup)
        return
    from distributed import as_completed

    batch_of = {}

    def submit(batch):
        fut = runner.client.submit(
            run_task_slice,
            batch,
            study,
            timeout,
            metadata,
            runner.task_cluster,
            setup,
            pure=False,
        )
        batch_of[fut] = batch
        return fut

    first = []
    while len(first) < cutter.in_flight and (batch := cutter.next_batch()) is not None:
        first.append(submit(batch))
    pending = as_completed(first)
    for fut in finished(pending, runner.watch):  # the runner watches its workers meanwhile
        batch = batch_of.pop(fut)
        try:
            done = fut.result()
        except Exception as exc:  # the worker died, or the batch could not be run at all
            rows = [batch_error_row(tid, task, study, exc) for tid, task in batch.pairs()]
            done = done_batch(rows, len(batch), metadata)
        fut.release()
        yield done
        nxt = cutter.next_batch()
        if nxt is not None:
            pending.add(submit(nxt))
