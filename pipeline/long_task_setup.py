"""What a long task gets where it runs: its :class:`~solvers.kit.task_context.TaskContext`.

:class:`LongTaskSetup` goes with each batch to the workers, which set each task's context
from it (``solvers.kit.current_task.using``): the budget, the number of workers, the task's
checkpoint folder ``<study folder>/checkpoints/<task id>/`` (held by one computation of the
task at a time: :meth:`~solvers.kit.checkpoints.Checkpoints.hold`) and where its progress reports
and warnings go: to the handlers of :func:`events_in_this_process` when the task runs in the
driver's process, else, on a Dask worker, out as worker events on :data:`TOPIC` and
:data:`WARNINGS` (the executor subscribes the driver's handlers to them:
:mod:`pipeline.backends.dask_executor`), and the way a task that spreads its work is
handed to spread it (the executor's ``spreading``, :mod:`pipeline.backends.spreading`).
The driver clears a task's folder once its ok row is stored
(:meth:`~pipeline.storage.checkpoints.StudyCheckpoints.clear`); what was set aside in it
(its ``damaged/`` folder) is kept, in ``<study folder>/quarantine/checkpoints/<task id>/``.

Nothing here imports Dask's ``distributed`` at module level (``cluster=sync`` must not).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.storage.checkpoints import StudyCheckpoints
from solvers.kit.budget import Budget, available_memory
from solvers.kit.spread import Spreading
from solvers.kit.task_context import TaskContext
from solvers.kit.task_progress import Progress
from solvers.kit.words import format_bytes

TOPIC = "guesslab-progress"  # the Dask worker-event topic of progress reports
WARNINGS = "guesslab-warnings"  # the topic of the tasks' warnings (a line each)


@dataclass(frozen=True)
class EventHandlers:
    """Where the events of tasks running in the driver's process go: each progress report
    (None: progress is not shown) and each warning line."""

    progress: Callable[[Progress], None] | None
    warning: Callable[[str], None]


_HERE: ContextVar[EventHandlers | None] = ContextVar("guesslab_events_here", default=None)


@contextlib.contextmanager
def events_in_this_process(
    progress: Callable[[Progress], None] | None, warning: Callable[[str], None]
) -> Iterator[None]:
    """While the block runs, the tasks run in this process send their progress reports to
    ``progress`` and their warnings to ``warning`` (the in-process executor's worker
    events)."""
    token = _HERE.set(EventHandlers(progress, warning))
    try:
        yield
    finally:
        _HERE.reset(token)


@dataclass
class LongTaskSetup:
    """What a batch's tasks get as their :class:`~solvers.kit.task_context.TaskContext` (pickled
    with the batch to the workers)."""

    budget: Budget | None  # None: the memory of the machine the task runs on
    workers: int
    study_dir: Path | None  # None: no checkpoints
    progress: bool
    at_once: int | None = None  # tasks with checkpoints the free disk holds at once (None: all)
    shared: tuple[str, ...] = ()  # keys of the checkpoint pieces the tasks share (Need.shared)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_worker": False}

    def _on_worker(self) -> Any:
        """The Dask worker of this process, or None; asked once per batch."""
        worker = self.__dict__.get("_worker", False)
        if worker is False:
            worker = self.__dict__["_worker"] = _this_worker()
        return worker

    def context(
        self,
        tid: str,
        spreading: Spreading | None = None,
    ) -> TaskContext:
        """The context of task ``tid`` in this process (see :func:`finish`); a task that
        spreads its work gets ``spreading`` (the executor's, where the task runs; None:
        threads of this process)."""
        budget = self.budget or _own_budget()
        checkpoints = (
            None if self.study_dir is None else StudyCheckpoints(self.study_dir).of_task(tid)
        )
        worker = self._on_worker()
        here = _HERE.get()
        if here is not None:  # run in the driver's process: straight to its handlers
            sink, warnings = here.progress, here.warning
        elif worker is not None:  # on a Dask worker: worker events, which the driver follows
            sink, warnings = _event_sink(worker), _warning_sink(worker, tid)
        else:
            sink = warnings = None
        ctx = TaskContext(
            budget,
            workers=self.workers,
            checkpoints=checkpoints,
            task_id=tid,
            sink=sink if self.progress else None,
            spreading=spreading,
            warnings=warnings,
        )
        if checkpoints is not None:  # one computation of the task at a time writes its folder
            checkpoints.hold(ctx.warn)
        return ctx


def finish(ctx: TaskContext | None) -> bool:
    """After a task: its checkpoint folder is no longer held; whether it left a checkpoint
    folder (lstat: a link counts, to be removed)."""
    if ctx is None:
        return False
    if ctx.checkpoints is not None:
        ctx.checkpoints.release()
    return ctx.checkpoints is not None and os.path.lexists(ctx.checkpoints.folder)


def _own_budget() -> Budget:
    free = available_memory()
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
