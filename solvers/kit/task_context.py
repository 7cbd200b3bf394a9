"""The task context: what the task running in this process may ask of the place it runs.

A family's solver calls :func:`current` for the :class:`TaskContext` of the task it is
solving.  The context says how much memory one process may hold
(:class:`~solvers.kit.budget.Budget`, taken from where the task runs), how many processes a
splitting task may use, where the task keeps its checkpoints
(:class:`~solvers.kit.checkpoints.Checkpoints`, a folder per task id under the study folder,
kept until the task's row is stored), and takes progress reports that the driver's terminal
shows while the task runs.  A family states what a task needs
(:class:`~solvers.kit.budget.Need`) through ``Scheduling.needs``, and the pipeline refuses a
task whose need exceeds the budget before any work starts.

Outside the pipeline (a notebook, a plain ``solvers.solve`` call) :func:`current` gives a
default context: the budget is this machine's available memory, one worker, no checkpoints,
progress reports go nowhere and a task's pieces run in this process
(:func:`~solvers.kit.spread.in_process`).

A task that spreads its work asks its context for a way to spread (:meth:`TaskContext.spread`),
never for a cluster: where its pieces run is the pipeline's choice.

This module imports neither the pipeline nor Dask: solvers stay pure.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from solvers.kit.budget import Budget, available_memory
from solvers.kit.checkpoints import Checkpoints
from solvers.kit.current_task import CURRENT, Deferred
from solvers.kit.spread import Spreader, Spreading, in_process
from solvers.kit.task_progress import ProgressReporter, Sink
from solvers.kit.words import format_bytes

__all__ = ["TaskContext", "current"]


@dataclass
class TaskContext:
    """What the task running in this process may ask of the place it runs.

    The pipeline makes one per task (:func:`~solvers.kit.current_task.using`); :func:`current`
    returns it.
    """

    budget: Budget
    workers: int = 1  # processes a splitting task may use (1 under sync)
    checkpoints: Checkpoints | None = None  # None: the run keeps none
    task_id: str | None = None
    # where progress reports go (the pipeline: to the driver's terminal); None: nowhere
    sink: Sink | None = None
    # seconds between two reports that are passed on (the last one, done == total, always is)
    interval: float = 0.5
    # a way to spread the task's pieces: ``spreading(n)`` gives a context manager yielding a
    # Spreader for a task that asks to run ``n`` pieces at once (the pipeline's: where the
    # task runs); None: in this process (:func:`~solvers.kit.spread.in_process`)
    spreading: Spreading | None = None
    # where the task's warnings go (the pipeline: a line on the driver's terminal); None:
    # the ``guesslab`` logger (Python's logging prints warnings to stderr unless configured)
    warnings: Callable[[str], None] | None = None
    _reporter: ProgressReporter = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._reporter = ProgressReporter(self.task_id, self.sink, self.interval)

    def progress(self, done: float, total: float, unit: str = "", note: str = "") -> None:
        """Report that ``done`` of ``total`` units (states, layers...) are finished, with an
        optional short note.  Cheap to call often: reports closer than ``interval`` seconds
        are dropped, except the last (done >= total)."""
        self._reporter(done, total, unit, note)

    def warn(self, text: str) -> None:
        """Say ``text`` (one line, e.g. a checkpoint piece that failed its check) to whoever
        runs the task, at once: on the pipeline's terminal, or the ``guesslab`` logger."""
        if self.warnings is not None:
            self.warnings(text)
        else:
            logging.getLogger("guesslab").warning(text)

    def shared(self, key: str) -> Checkpoints | None:
        """The checkpoint folder the run's tasks share under ``key`` (a family's name for
        pieces several tasks compute alike: ``<study>/checkpoints/shared/<key>/``; see
        :class:`Need`), or None when the run keeps no checkpoints.  Take its
        :meth:`Checkpoints.lock` to compute or adopt its pieces."""
        return None if self.checkpoints is None else self.checkpoints.shared(key)

    def spread(self, at_once: int = 1) -> AbstractContextManager[Spreader]:
        """A way to spread this task's pieces, for a ``with`` block: ``at_once`` is how many
        the task asks to run at the same time (its ``workers`` knob).  On a Dask worker, the
        cluster the task runs on, through the worker's own client and its TLS (the task
        leaves the worker's thread pool for the block, so it may wait on its pieces); under
        ``cluster=sync`` and outside the pipeline, ``at_once`` threads of this process (one:
        one piece after another).  No task ever starts a cluster of its own."""
        return (self.spreading or in_process)(max(1, int(at_once or 1)))


def current() -> TaskContext:
    """The context of the task running in this process: the one the pipeline set around
    it, or outside the pipeline a default (available memory, one worker, no checkpoints,
    progress a no-op, pieces spread in this process)."""
    ctx = CURRENT.get()
    if type(ctx) is Deferred:
        return ctx.get()
    if ctx is None:
        free = available_memory()
        ctx = TaskContext(Budget(free, f"available memory of this machine ({format_bytes(free)})"))
    return ctx
