"""The driver's side of a run: the tasks left cut into batches, submitted to the executor,
each finished batch's files stored as it comes back.

- :class:`BatchCutter` cuts the tasks left to run into batches of ~``run.batch_seconds`` of
  solver time, each a :class:`~pipeline.running.worker.TaskSlice` (a grid and positions in it, or
  positions in several small grids of one kind).
- :func:`finished_batches` keeps up to ``BatchCutter.in_flight`` batches out on the executor
  (:mod:`pipeline.backends`) and yields each as it finishes (:mod:`pipeline.running.worker` is what
  runs them).
- :func:`compute` is ``stage=run``'s work once the tasks are claimed: the executor opened,
  the batches' files written to the store and their tasks' checkpoints cleared as they come.
- :func:`write_encoded` stores a finished batch's files (encoded where it ran:
  :func:`pipeline.running.worker.encode_rows`), one per family, each written atomically under a
  hidden temporary name renamed into place, so a reader or a killed run never sees half a
  file; a write that fails raises :class:`~pipeline.errors.StoreError`.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

import pipeline.running.worker
from pipeline.backends.executor import CallLost
from pipeline.errors import StoreError, UnsafePath
from pipeline.long_task_setup import LongTaskSetup
from pipeline.running.failed_tasks import SHOWN
from pipeline.running.progress import ProgressBars, tasks_bar
from pipeline.running.provenance import run_metadata
from pipeline.running.worker import (
    DISK_FULL,
    DoneBatch,
    EncodedFile,
    TaskSlice,
    lost_batch,
    metadata_bytes,
    task_words,
)
from pipeline.storage.safe_paths import ensure_dir
from solvers.kit.atomic_files import replace_file
from solvers.kit.words import counted

if TYPE_CHECKING:
    from pipeline.backends.executor import Executor
    from pipeline.config import RunConfig
    from pipeline.running.plan import StudyPlan
    from pipeline.storage.study_folder import StudyFolder
    from solvers.grid import Grid
# ``run`` is always the run's pipeline.run.StudyRun, not imported here, not even for a type
# checker: pipeline.run imports this module, and imports point one way (no cycle)


class BatchCutter:
    """Cuts the plan's tasks into batches as they are needed, sized to take ~batch_seconds.

    A batch is a grid and positions in it (a worker builds the tasks itself), or positions
    in consecutive grids of one kind (one strategy, the same axes: the same kernels and the
    same columns), so that grid parts of a few tasks each (a search's trials) share a batch
    and a results file rather than making one each.  The first task of each kind goes out
    first, alone, before any kind's second task, so the first tasks the workers run are of
    different kinds (a grid's tasks are of one strategy): on a machine where the solvers'
    kernels are not compiled yet, each worker compiles those of its own kind at the same
    time, rather than waiting for another to compile the ones they all need.  The first
    batches (those submitted before any has finished) hold one task each; then the size
    follows the solver time per task of the batches seen, never more than ``max_batch`` and
    never so large that the last batches leave workers idle.  ``in_flight`` batches are
    out at a time: ``run.max_in_flight`` per worker, or, when the free disk holds the
    checkpoints of only ``at_once`` tasks, as many batches as hold that many tasks.

    ``per_task``, when given, is the solver time per task an earlier run of tasks of the
    same kinds measured (a search's batch before): batches are sized from it from the first
    one, and no first task goes out alone (its kernels ran already).

    The time per task is a running average that weighs each finished batch half: a worker's
    first tasks run with cold solver caches (on the load benchmark ~1 ms a task, then ~0.3
    ms), and the average forgets them fast.  After a start ten times slower the size is at
    90% of its target by the 10th batch, where the mean of every task seen reaches it by the
    18th (tests/test_grid.py); the load benchmark runs 58 batches, against 66-71 with the
    mean.
    """

    def __init__(
        self,
        tasks: StudyPlan,
        n_workers: int,
        run_cfg: RunConfig,
        at_once: int | None = None,
        per_task: float | None = None,
    ):
        self.plan = tasks
        self.left = self.total = len(tasks)
        n_grids = len(tasks.grids)
        self._slices = [tasks.slices(grids=[g]) for g in range(n_grids)]
        self._pending: list[np.ndarray] = [np.empty(0, np.int64)] * n_grids
        self._kinds = [_kind(grid) for grid in tasks.grids]
        self._started: set[tuple] = set()  # kinds whose first task is out
        self._first = 0  # grids before it have no task left
        # grids before it have had their first task out, or are of a kind that had
        self._turn = 0 if per_task is None else n_grids
        self.n_workers = max(1, n_workers)
        self.fixed = None if run_cfg.batch_size == "auto" else run_cfg.batch_size
        self.max_batch = run_cfg.max_batch
        self.seconds = run_cfg.batch_seconds
        self.per_task = per_task  # solver seconds a task, a running average
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
        floor = target // 10
        if self.n_workers == 1:  # no worker to leave idle: batches of the target to the end
            fair = self.left
        elif self.total <= target * self.n_workers:
            # a run of at most one batch's target a worker (a search's batch): shared evenly
            # among the workers, a batch each, where the floor below would cut it into
            # batches of a tenth of the target (a file and a scheduler's round trip each)
            fair = -(-self.total // self.n_workers)
        else:
            # the last batches shrink so that no worker is left idle long, but not below a
            # tenth of the target: every batch costs a few ms (a Parquet file, the
            # scheduler), and a tail halving down to one task would make ~40 of the ~100
            # batches of the load benchmark
            fair = max(floor, self.left // (2 * self.n_workers))
        return max(1, min(self.max_batch, target, fair))

    def out_at_once(self) -> int:
        """How many batches to keep out: ``in_flight``, but one a worker until a batch has
        finished, so that no worker holds a first task of another kind queued behind its own
        first task (Dask hands a worker its next task before its first one ends): a worker
        that would wait for kernels another one compiles takes the next kind instead."""
        return self.in_flight if self.per_task is not None else min(self.in_flight, self.n_workers)

    def next_batch(self) -> TaskSlice | None:
        """The next batch, or None when every task is out: the first task of each kind of
        grid (in the grids' order), then the rest in study order, a batch spanning the next
        grids while they are of the kind of its first."""
        n_grids = len(self._pending)
        while self._first < n_grids and not self._has_tasks(self._first):
            self._first += 1
        if self._first == n_grids:
            return None
        while self._turn < n_grids and (
            self._kinds[self._turn] in self._started or not self._has_tasks(self._turn)
        ):
            self._turn += 1
        if self._turn < n_grids:  # a kind none of whose tasks is out yet: its first task
            g, self._turn = self._turn, self._turn + 1
            self._started.add(self._kinds[g])
            self.left -= 1
            first, self._pending[g] = self._pending[g][:1], self._pending[g][1:]
            return TaskSlice(self.plan.grids[g], first)
        size = self.size()
        g = self._first
        batch = None
        while size and g < n_grids and self._kinds[g] == self._kinds[self._first]:
            if self._has_tasks(g):
                positions = self._pending[g]
                taken, self._pending[g] = positions[:size], positions[size:]
                size -= len(taken)
                self.left -= len(taken)
                if batch is None:
                    batch = TaskSlice(self.plan.grids[g], taken)
                else:
                    batch.add(self.plan.grids[g], taken)
            g += 1
        return batch

    def _has_tasks(self, g: int) -> bool:
        """Whether grid ``g`` has tasks not yet cut into a batch (its next slice read)."""
        while not len(self._pending[g]):
            nxt = next(self._slices[g], None)
            if nxt is None:
                return False
            self._pending[g] = nxt[1]
        return True


def _kind(grid: Grid) -> tuple:
    """What tasks of one batch share: the strategy (a strategy of one's own: its class) and
    the axes' names (so the same kernels, and the same columns in the batch's file)."""
    base = grid.base
    return (base.get("strategy"), base.get("strategy_target"), grid.names)


@dataclass(frozen=True)
class BatchWork:
    """What every batch of a run is run with, beside its tasks: the study's name, the time
    limit per task, the results files' metadata and the long tasks' setup."""

    study: str
    timeout: float | None
    metadata: bytes
    setup: LongTaskSetup | None = None


def finished_batches(
    executor: Executor,
    cutter: BatchCutter,
    work: BatchWork,
    say: Callable[[str], None] | None = None,
) -> Iterator[DoneBatch]:
    """A DoneBatch per finished batch, in completion order.

    At most ``cutter.out_at_once()`` batches are out at a time (fewer where the executor runs
    fewer at once); a batch its worker never returned (the worker died, or the batch failed
    outside the solver) becomes error rows, one line to ``say`` (:func:`lost_line`), and the
    study goes on.
    """
    batch_of: dict[Any, TaskSlice] = {}

    def submit(batch: TaskSlice) -> None:
        handle = executor.submit(
            pipeline.running.worker.run_batch,  # looked up now: a benchmark may wrap it
            batch,
            work.study,
            work.timeout,
            work.metadata,
            executor.spreading,
            work.setup,
        )
        batch_of[handle] = batch

    def fill() -> None:
        while len(batch_of) < executor.in_flight(cutter.out_at_once()):
            if (batch := cutter.next_batch()) is None:
                return
            submit(batch)

    fill()
    for call in executor.completed():
        batch = batch_of.pop(call.handle)
        if call.lost is None:
            yield call.result
        else:
            if say is not None:
                say(lost_line(batch, call.lost))
            yield lost_batch(batch, work.study, work.metadata, call.lost)
        fill()


SHOWN_TASKS = 3  # what a lost batch's line names of the tasks it held


def lost_line(batch: TaskSlice, exc: BaseException) -> str:
    """The one line of a lost batch: what it held (its tasks' strategies and arguments, the
    first SHOWN_TASKS), why it was lost, and that its tasks are stored as failed."""
    held = list(dict.fromkeys(task_words(task) for _, task in batch.iter_pairs()))
    named = "; ".join(held[:SHOWN_TASKS]) + (
        f"; and {len(held) - SHOWN_TASKS} more" if len(held) > SHOWN_TASKS else ""
    )
    why = str(exc) if isinstance(exc, CallLost) else f"{type(exc).__name__}: {exc}"
    return (
        f"warning: a batch of {counted(len(batch), 'task')} was lost ({named}): {why}; its "
        "tasks are stored as failed (the next run computes them again)"
    )


def compute(run, left: StudyPlan, setup: LongTaskSetup) -> None:
    """The tasks ``left`` to run, in batches on the backend's executor; each finished
    batch's files stored as it comes back."""
    settings = run.conf.run
    with run.backend.open() as executor:
        executor.expect(seconds_per_task(left), len(left))  # it may start its workers now
        run.report.run_record = run.folder.save_run_config(run.given)  # the cluster answered
        executor.log_file = run.report.run_record.with_suffix(".log")  # detail spared the terminal
        work = BatchWork(  # every file names the run record (its rows' run)
            run.report.study,
            settings.task_timeout_s,
            metadata_bytes(
                run_metadata(run.given, run.plan.fam, run.report.run_record.stem, run.search)
            ),
            setup,
        )
        run.log(f"running {counted(len(left), 'task')} on {executor.description}")
        cutter = BatchCutter(left, executor.n_workers, settings, setup.at_once, run.per_task)
        with (
            tasks_bar(len(left), settings.progress) as bar,
            ProgressBars(setup.progress, run.log) as bars,  # running long tasks, below the bar
            executor.worker_events(bars.show if bars.enabled else None, bars.say),
        ):
            for done in finished_batches(executor, cutter, work, bars.say):
                stored(run, done, bars.say)
                cutter.observe(done.seconds, done.n_tasks)
                executor.expect(cutter.per_task, cutter.left)
                bar.update(done.n_tasks)
        run.per_task = cutter.per_task  # for a next run of tasks of these kinds (a search's)


def seconds_per_task(tasks: StudyPlan) -> float | None:
    """The family's estimate of a task's solver seconds, on average over ``tasks`` (None:
    the family gives none)."""
    estimate = tasks.estimated_seconds() if len(tasks) else None
    return None if estimate is None else estimate[0] / len(tasks)


def stored(run, done: DoneBatch, say: Callable[[str], None]) -> None:
    """A finished batch's files written to the store, its tasks' checkpoints cleared (what
    was set aside in them kept, a line to ``say`` each)."""
    report = run.report
    try:
        report.files += write_encoded(run.folder, done.files)
    except StoreError as exc:
        if done.no_room is None:
            raise StoreError(write_failed(run, exc)) from exc
        raise StoreError(checkpoints_refused(run, done.no_room)) from exc  # what came first
    run.folder.checkpoints.clear(done.checkpointed, say)  # their rows are stored
    report.rows_written += done.n_rows
    report.computed += done.n_tasks
    report.errors += done.n_errors
    report.failures += done.failures[: max(0, SHOWN - len(report.failures))]
    if done.no_room is not None:  # the next task would find no room either: the run stops
        raise StoreError(checkpoints_refused(run, done.no_room))


def checkpoints_refused(run, refused: tuple[str, int]) -> str:
    """The one line for a task's checkpoint write the disk refused for room (``refused``:
    where, errno): where, why, what is stored and kept, that the same command resumes."""
    where, code = refused
    report = run.report
    return (
        f"{run.folder.outputs_key}: cannot write a task's checkpoints to {where} "
        f"({os.strerror(code)}); the stored results are intact ("
        f"{counted(report.computed, 'task')} of this run stored, {report.skipped:,} stored "
        "before) and the checkpoints written are kept: free some space, then run the same "
        "command again to resume (stored tasks are skipped, a task with checkpoints resumes "
        "from them)"
    )


def write_failed(run, exc: StoreError) -> str:
    """The one line for a batch the store could not write (a full disk, say): where, why,
    that the stored results are intact (files written whole), that the same command resumes."""
    code = getattr(exc.__cause__, "errno", None)
    why = os.strerror(code) if code else str(exc)
    free = "free some space, then " if code in DISK_FULL else ""
    report = run.report
    return (
        f"{run.folder.outputs_key}: cannot write results to {exc.folder or run.folder.results} "
        f"({why}); the stored results are intact (no partial file is left; "
        f"{counted(report.computed, 'task')} of this run stored, {report.skipped:,} stored "
        f"before): {free}run the same command again to resume (stored tasks are skipped)"
    )


def write_encoded(folder: StudyFolder, files: Iterable[EncodedFile]) -> list[Path]:
    """Store encoded files (see :func:`pipeline.running.worker.encode_rows`) atomically in the
    store of the study ``folder``; return their paths."""
    return [_atomic_write(data, folder.family_dir(family)) for family, data in files]


def _atomic_write(data: bytes, folder: Path) -> Path:
    name = f"part-{time.time_ns():020d}-{uuid.uuid4().hex[:8]}.parquet"
    try:
        # the study folder (results' parent) was checked; results and the family folder are
        # made here, each checked to be a real folder (never a link out of the study folder)
        ensure_dir(folder, below=folder.parent.parent)
        replace_file(folder / name, lambda fh: fh.write(data))
    except UnsafePath:
        raise
    except OSError as exc:
        error = StoreError(f"cannot write results to {folder}: {exc}")
        error.folder = folder
        raise error from exc
    return folder / name
