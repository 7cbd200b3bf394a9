"""The pipeline's side of the long-task facility (:mod:`solvers.longtask`).

- **The budget** (:func:`budgeted`): the memory one process of a task may hold:
  ``run.memory_budget`` if set, else what the backend answers of its workers
  (``workers(cluster)`` in :mod:`pipeline.backends`).
- **The refusal** (:func:`check_needs`): before any work (``stage=plan`` and ``run``) each
  class of tasks left to run is asked its :class:`~solvers.longtask.Need` through
  ``Family.needs``; a need over the budget, or a disk need over the free disk of the study
  folder, stops the study with one line (a StudyError: exit status 2).
- **The context** (:class:`LongTaskSetup`, :meth:`LongTaskSetup.context`): what the workers
  set around each task (``solvers.longtask.using``): the budget, the number of workers, the
  task's checkpoint folder ``<study folder>/checkpoints/<task id>/`` and where its progress
  reports go; the driver clears a task's folder once its ok row is stored
  (:func:`clear_checkpoints`).
- **Progress** (:class:`ProgressBars`): reports travel from a Dask worker to the driver as
  Dask worker events (``Worker.log_event`` on the topic :data:`TOPIC`, the driver subscribed
  with ``Client.subscribe_topic``), under ``cluster=sync`` straight to the display; the
  driver shows each running long task as a second tqdm bar below the tasks bar.
- **Warnings** (``TaskContext.warn``: a checkpoint piece that failed its check, set aside
  and recomputed) travel the same way on the topic :data:`WARNINGS`, whether or not
  progress is shown, and the driver prints each as one line (above the bars).

Nothing here imports Dask's ``distributed`` at module level (``cluster=sync`` must not).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.backends.base import Workers
from solvers.grid import Grid, _Recorder
from solvers.longtask import Budget, Checkpoints, Need, Progress, TaskContext, format_bytes
from solvers.registry import Task, get_family, identity_params

TOPIC = "guesslab-progress"  # the Dask worker-event topic of progress reports
WARNINGS = "guesslab-warnings"  # the topic of the tasks' warnings (a line each)
CHECKPOINTS = "checkpoints"  # <study folder>/checkpoints/<task id>/


# ------------------------------------------------------------------------------ budget


def budgeted(workers: Workers, memory_budget: Any) -> Workers:
    """The backend's ``workers`` with ``run.memory_budget``, when set, as their budget."""
    if memory_budget is None:
        return workers
    from dask.utils import parse_bytes

    budget = Budget(parse_bytes(memory_budget), f"run.memory_budget={memory_budget}")
    return dataclasses.replace(workers, budget=budget)


def free_disk(path: Path) -> int:
    """Free bytes on the file system of ``path`` (or of its nearest existing folder)."""
    here = path
    while not here.exists() and here != here.parent:
        here = here.parent
    return shutil.disk_usage(here).free


# ---------------------------------------------------------------------------- refusal


@dataclass(frozen=True)
class Needed:
    """The largest needs among a plan's tasks left to run (for ``stage=plan``), and how many
    of the tasks with checkpoints the free disk holds at once (``at_once``: None when it
    holds them all; the run then starts no more than that many at a time)."""

    memory: tuple[str, Task, Need] | None = None  # (task id, task, need) of the most memory
    disk: tuple[str, Task, Need] | None = None
    at_once: int | None = None
    with_disk: int = 0  # tasks left to run that keep checkpoints
    free: int | None = None  # free bytes under the study folder, when asked


def fitting(disks: list[tuple[int, int]], free: int) -> int | None:
    """How many tasks' checkpoints fit in ``free`` bytes at once, the largest first, given
    (bytes > 0, number of tasks) pairs; None when all of them fit.  Every task fits alone
    (a larger one is refused before), so the answer is at least 1."""
    total = sum(d * n for d, n in disks)
    if total <= free:
        return None
    fit, used = 0, 0
    for d, n in sorted(disks, reverse=True):
        k = min(n, (free - used) // d)
        fit, used = fit + k, used + k * d
        if k < n:
            break
    return max(1, fit)


def check_needs(plan: Any, where: Workers, study_dir: Path) -> Needed:
    """Ask ``Family.needs`` of every class of tasks left to run; raise StudyError (one line:
    the task, its need, the budget and where it came from) for the first over the budget
    or over the free disk of the study folder.  Returns the largest needs found."""
    from pipeline.study import StudyError

    fam = get_family(plan.family)
    if fam.needs is None:
        return Needed()
    top_memory = top_disk = None
    free: int | None = None
    disks: list[tuple[int, int]] = []  # (bytes, tasks) of each class keeping checkpoints
    for g, grid in enumerate(plan.grids):
        for tid, task, need, n in grid_needs(grid, plan.keep[g], fam.needs, where.count):
            if need is None:
                continue
            budget = where.budget
            if budget is not None and need.memory > budget.bytes:
                raise StudyError(
                    f"{describe(task)} (task {tid}) needs {format_bytes(need.memory)} of memory "
                    f"per process{_note(need)}, over the budget of {format_bytes(budget.bytes)} "
                    f"from {budget.source}; set run.memory_budget or give the workers more "
                    "memory (a need per process: more workers do not lower it)"
                )
            if need.disk:
                free = free_disk(study_dir) if free is None else free
                if need.disk > free:
                    raise StudyError(
                        f"{describe(task)} (task {tid}) needs {format_bytes(need.disk)} of disk "
                        f"for its checkpoints{_note(need)}, over the {format_bytes(free)} free "
                        f"under {study_dir}; free some disk or choose another paths.outputs"
                    )
                disks.append((need.disk, n))
            if top_memory is None or need.memory > top_memory[2].memory:
                top_memory = (tid, task, need)
            if need.disk and (top_disk is None or need.disk > top_disk[2].disk):
                top_disk = (tid, task, need)
    at_once = None if free is None else fitting(disks, free)
    return Needed(top_memory, top_disk, at_once, sum(n for _, n in disks), free)


def at_once_text(needed: Needed, study_dir: Path, sync: bool = False) -> str | None:
    """The line saying that the tasks with checkpoints run a few at a time, or None
    (``sync``: the run executes one task at a time anyway)."""
    if needed.at_once is None or needed.disk is None or needed.free is None:
        return None
    k = needed.at_once
    return (
        f"  disk: {format_bytes(needed.free)} free under {study_dir} holds the checkpoints of "
        f"{k} of the {needed.with_disk} tasks that keep them (up to "
        f"{format_bytes(needed.disk[2].disk)} each): "
        + (
            "cluster=sync runs them one at a time"
            if sync
            else "they run " + ("one at a time" if k == 1 else f"{k} at a time")
        )
    )


def needs_text(needed: Needed, where: Workers) -> list[str]:
    """``stage=plan``'s lines on the largest needs against the budget."""
    lines = []
    if needed.memory is not None:
        tid, task, need = needed.memory
        budget = (
            f"the budget is {format_bytes(where.budget.bytes)} from {where.budget.source}"
            if where.budget is not None
            else "the workers set no memory limit: each task checks its own machine"
        )
        lines.append(
            f"  memory: the largest task ({describe(task)}) needs {format_bytes(need.memory)} "
            f"per process on {where.count} worker{'s' * (where.count != 1)}"
            f"{_note(need)}; {budget}"
        )
    if needed.disk is not None:
        tid, task, need = needed.disk
        lines.append(
            f"  disk: the largest task ({describe(task)}) needs {format_bytes(need.disk)} of "
            "checkpoints under the study folder"
        )
    return lines


def _note(need: Need) -> str:
    return f" ({need.note})" if need.note else ""


def describe(task: Task) -> str:
    """A task as the user wrote it: ``deck=[4, 4, 4] strategy=optimal``."""
    shown = {k: v for k, v in identity_params(task).items() if k != "family" and v is not None}
    return " ".join(f"{k}={v}" for k, v in shown.items())


def grid_needs(
    grid: Grid, keep: np.ndarray | None, needs: Callable[[Task, int], Any], workers: int
) -> Iterator[tuple[str, Task, Any, int]]:
    """(task id, task, need, tasks in the class) for the first task left to run of each
    class of ``grid``'s tasks agreeing on the axes ``needs`` reads (learned as it goes, as
    the grid learns the axes of its whole-task check): a 10^6-task grid over two decks asks
    twice."""
    axis_of = {name: i for i, name in enumerate(grid.names)}
    read: set[int] = set()
    while True:
        out, grew = [], False
        for position, count in _class_heads(grid, keep, sorted(read)):
            tid, task = next(grid.tasks_at([position]))
            recorder = _Recorder(task)
            need = needs(recorder, workers)
            seen = (
                set(axis_of.values())
                if recorder.everything
                else {axis_of[k] for k in recorder.read if k in axis_of}
            )
            if not seen <= read:
                read |= seen
                grew = True
                break
            out.append((tid, task, need, count))
        if not grew:
            yield from out
            return


def _class_heads(grid: Grid, keep: np.ndarray | None, axes: list[int]) -> list[tuple[int, int]]:
    """(first position left to run, tasks left to run) of each combination of ``axes``'
    values, in order of the first positions."""
    if keep is None and not axes:
        return [(0, len(grid))] if len(grid) else []
    size = 65_536
    heads: dict[tuple[int, ...], list[int]] = {}
    for lo in range(0, len(grid), size):
        hi = min(lo + size, len(grid))
        positions = np.arange(lo, hi) if keep is None else np.flatnonzero(keep[lo:hi]) + lo
        if not len(positions):
            continue
        if not axes:
            heads.setdefault((), [int(positions[0]), 0])[1] += len(positions)
            continue
        coords = np.unravel_index(positions, grid.shape)
        combos = np.stack([coords[i] for i in axes], axis=1)
        found, first, counts = np.unique(combos, axis=0, return_index=True, return_counts=True)
        for combo, i, n in zip(
            map(tuple, found.tolist()), first.tolist(), counts.tolist(), strict=True
        ):
            heads.setdefault(combo, [int(positions[i]), 0])[1] += n
    return sorted((head, n) for head, n in heads.values())


# ----------------------------------------------------------------- context on a worker


@dataclass
class LongTaskSetup:
    """What a batch's tasks get as their :class:`~solvers.longtask.TaskContext` (pickled
    with the batch to the workers).

    ``sink`` (not pickled) takes the progress reports when the tasks run in the driver's
    process (``cluster=sync``); on a Dask worker they go out as worker events when
    ``progress`` is on."""

    budget: Budget | None  # None: the memory of the machine the task runs on
    workers: int
    study_dir: Path | None  # None: no checkpoints
    progress: bool
    at_once: int | None = None  # tasks with checkpoints the free disk holds at once (None: all)
    sink: Callable[[Progress], None] | None = field(default=None, compare=False)
    # takes the tasks' warnings when they run in the driver's process (not pickled)
    warnings: Callable[[str], None] | None = field(default=None, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "sink": None, "warnings": None, "_worker": False}

    def _on_worker(self) -> Any:
        """The Dask worker of this process, or None; asked once per batch."""
        worker = self.__dict__.get("_worker", False)
        if worker is False:
            worker = self.__dict__["_worker"] = _this_worker()
        return worker

    def context(self, tid: str) -> TaskContext:
        """The context of task ``tid`` in this process (see :func:`finish`)."""
        budget = self.budget or _own_budget()
        checkpoints = (
            None
            if self.study_dir is None
            else Checkpoints(self.study_dir / CHECKPOINTS / tid, root=self.study_dir)
        )
        worker = self._on_worker()
        sink = self.sink
        if sink is None and self.progress and worker is not None:
            sink = _event_sink(worker)
        client = _WorkerClient() if worker is not None else None
        warnings = self.warnings
        if warnings is None and worker is not None:
            warnings = _warning_sink(worker, tid)
        return TaskContext(
            budget,
            workers=self.workers,
            checkpoints=checkpoints,
            task_id=tid,
            sink=sink if self.progress else None,
            client_factory=client,
            warnings=warnings,
        )


def finish(ctx: TaskContext | None) -> bool:
    """After a task: its thread rejoins the worker's pool if it seceded to use the client;
    whether it left a checkpoint folder (lstat: a link counts, to be removed)."""
    if ctx is None:
        return False
    if isinstance(ctx.client_factory, _WorkerClient):
        ctx.client_factory.rejoin()
    return ctx.checkpoints is not None and os.path.lexists(ctx.checkpoints.folder)


def _own_budget() -> Budget:
    import psutil

    free = int(psutil.virtual_memory().available)
    return Budget(free, f"available memory of this worker's machine ({format_bytes(free)})")


def _this_worker() -> Any:
    """The Dask worker running this code, or None (no Dask loaded, or not on a worker)."""
    if "distributed" not in sys.modules:
        return None
    from distributed import get_worker

    try:
        return get_worker()
    except ValueError:
        return None


def _event_sink(worker: Any) -> Callable[[Progress], None]:
    """Progress reports as worker events on TOPIC (``log_event`` may be called from any
    thread of the task)."""

    def send(report: Progress) -> None:
        worker.log_event(TOPIC, report.as_dict())

    return send


def _warning_sink(worker: Any, tid: str) -> Callable[[str], None]:
    """A task's warnings as worker events on WARNINGS."""

    def send(text: str) -> None:
        worker.log_event(WARNINGS, {"task_id": tid, "text": str(text)})

    return send


class _WorkerClient:
    """``TaskContext.client`` on a Dask worker: the worker's client, the task seceded from
    the worker's thread pool (it may wait on tasks it submits) until it ends."""

    def __init__(self) -> None:
        self.seceded = False

    def __call__(self) -> Any:
        from distributed import get_client, secede

        client = get_client()
        secede()
        self.seceded = True
        return client

    def rejoin(self) -> None:
        if self.seceded:
            from distributed import rejoin

            rejoin()
            self.seceded = False


def clear_checkpoints(study_dir: Path, task_ids: list[str]) -> None:
    """Remove the checkpoint folders of tasks whose ok rows are stored (links not followed)."""
    for tid in task_ids:
        Checkpoints(study_dir / CHECKPOINTS / tid, root=study_dir).clear()


def remove_empty_checkpoints(study_dir: Path) -> None:
    """Remove ``<study>/checkpoints`` if it is an empty real folder (at the end of a run)."""
    folder = study_dir / CHECKPOINTS
    if not folder.is_symlink():
        with contextlib.suppress(OSError):
            folder.rmdir()


# ------------------------------------------------------------------- the driver's display


class ProgressBars:
    """One tqdm bar per running long task, below the tasks bar, and the tasks' warnings as
    lines above them (to ``log``); thread-safe (Dask calls :meth:`show` and :meth:`say` from
    its event loop's thread)."""

    def __init__(self, enabled: bool, log: Callable[[str], None] = print):
        self.enabled = enabled
        self.log = log
        self.bars: dict[str | None, Any] = {}
        self.lock = threading.Lock()

    def say(self, text: str) -> None:
        """One warning line, printed above the bars (which are redrawn below it)."""
        with self.lock:
            if not self.bars:
                self.log(text)
                return
            from tqdm import tqdm

            with tqdm.external_write_mode(nolock=True):
                self.log(text)

    def on_warning(self, event: Any) -> None:
        """A Dask worker event ``(time, {"task_id", "text"})`` on :data:`WARNINGS`."""
        _, msg = event
        with contextlib.suppress(TypeError, KeyError):
            self.say(str(msg["text"]))

    def show(self, report: Progress) -> None:
        if not self.enabled:
            return
        from tqdm import tqdm

        with self.lock:
            bar = self.bars.get(report.task_id)
            if bar is None:
                name = (report.task_id or "task")[:10]
                bar = self.bars[report.task_id] = tqdm(
                    total=_whole(report.total),
                    desc=f"task {name}",
                    unit=report.unit or "it",
                    unit_scale=report.total >= 10_000,  # 1.2M/70.7G states; 3/27 layers
                    dynamic_ncols=True,
                    position=len(self.bars) + 1,
                    leave=False,
                    bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} {unit}"
                    "{postfix}",
                )
            bar.total = _whole(report.total)
            bar.n = _whole(report.done)
            bar.set_postfix_str(postfix(report), refresh=False)
            bar.refresh()
            if report.total > 0 and report.done >= report.total:
                bar.close()
                del self.bars[report.task_id]

    def on_event(self, event: Any) -> None:
        """A Dask worker event ``(time, message)`` on :data:`TOPIC`."""
        _, msg = event  # the scheduler adds the sending worker's address to the message
        with contextlib.suppress(TypeError, KeyError):
            self.show(Progress(**{k: msg[k] for k in Progress.__dataclass_fields__}))

    def close(self) -> None:
        with self.lock:
            for bar in self.bars.values():
                bar.close()
            self.bars.clear()


def _whole(x: float) -> float | int:
    return int(x) if float(x).is_integer() else x


def postfix(report: Progress) -> str:
    """``1.2M states/s, 3.4 min left, layer 12``: the rate, the time left, the note."""
    parts = []
    if report.rate:
        parts.append(f"{_scaled(report.rate)} {report.unit or 'it'}/s")
    if report.seconds_left is not None:
        parts.append(f"{_span(report.seconds_left)} left")
    if report.note:
        parts.append(report.note)
    return ", ".join(parts)


def _scaled(x: float) -> str:
    for size, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= size:
            return f"{x / size:.3g}{suffix}"
    return f"{x:.3g}"


def _span(seconds: float) -> str:
    for unit, size in (("days", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= 2 * size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s"


@contextlib.contextmanager
def progress_shown(runner: Any, bars: ProgressBars) -> Iterator[None]:
    """The runner's workers' warnings (always) and progress events (when ``bars`` are
    enabled) shown on ``bars`` while the block runs."""
    client = runner.client
    if client is None:
        try:
            yield
        finally:
            bars.close()
        return
    topics = {WARNINGS: bars.on_warning}
    if bars.enabled:
        topics[TOPIC] = bars.on_event
    for topic, handler in topics.items():
        client.subscribe_topic(topic, handler)
    try:
        yield
    finally:
        for topic in topics:
            with contextlib.suppress(Exception):
                client.unsubscribe_topic(topic)
        bars.close()
