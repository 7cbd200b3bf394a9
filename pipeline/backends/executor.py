"""What every backend opens: an :class:`Executor`, where a run's batches execute.

The driver (:mod:`pipeline.running.driver`) and the ``dask`` Hydra launcher use an executor only
through this class: submit a call, take the calls as they complete, follow the workers'
events, cancel what is left.  One class per way of running:

- :class:`pipeline.backends.sync.SyncExecutor` (``cluster=sync``): each call runs in this
  process when its result is asked for;
- :class:`pipeline.backends.starting.StartingExecutor` (``local``): the first calls in this
  process, then, once they took ``cluster.start_after_s``, a LocalCluster's DaskExecutor;
- :class:`pipeline.backends.dask_executor.DaskExecutor` (``address``, ``slurm``,
  and a notebook's own Dask client through
  :func:`pipeline.backends.given_client.open_executor_on`): each call a task on the
  cluster's workers.

Nothing here imports Dask's ``distributed`` (``cluster=sync`` must not).
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.backends.spreading import spread_here
from solvers.kit.spread import Spreading
from solvers.kit.task_progress import Progress


class CallLost(Exception):
    """Why a call never came back, in words a row gives as they are (its worker's death, as
    the executor knows it)."""


@dataclass(frozen=True, slots=True)
class Completed:
    """A submitted call that finished: its handle (what :meth:`Executor.submit` returned) and
    its result, or ``lost``: why the call never came back (its worker died, or it could not
    be run at all there), its result then None."""

    handle: Hashable
    result: Any = None
    lost: BaseException | None = None


class Executor(abc.ABC):
    """Where a run's calls execute, as a backend's ``open`` made it (and closes it on exit).

    ``n_workers``: the worker processes the calls spread over; ``description``: the words
    for them in the run's line ("running N tasks on ..."); ``log_file``: the run's log
    (``runs/<time>.log``), set by the run once its record is written, where a backend keeps
    detail it spares the terminal.  :attr:`spreading` is what a task that spreads its work
    is handed where a call runs (``TaskContext.spread``): a module-level function (it goes
    with the calls) ``(at_once) -> context manager yielding a Spreader``; by default the
    cluster of the Dask worker running the call, else threads of this process
    (:func:`pipeline.backends.spreading.spread_here`).
    """

    spreading: Spreading = staticmethod(spread_here)

    def __init__(self, n_workers: int, description: str):
        self.n_workers = n_workers
        self.description = description
        self.log_file: Path | None = None

    @abc.abstractmethod
    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Hashable:
        """Have ``fn(*args)`` run; a handle naming this call in :meth:`completed`."""

    @abc.abstractmethod
    def completed(self) -> Iterator[Completed]:
        """The submitted calls as they complete, until none is left (calls submitted while
        this iterates are waited for too)."""

    @abc.abstractmethod
    def worker_events(
        self, progress: Callable[[Progress], None] | None, warning: Callable[[str], None]
    ) -> AbstractContextManager[None]:
        """While the block runs, the tasks' progress reports go to ``progress`` (None: not
        followed) and their warnings, a line each, to ``warning``, wherever the tasks run."""

    @abc.abstractmethod
    def cancel(self) -> None:
        """Drop every call submitted and not yet completed."""

    def expect(self, seconds_per_task: float | None, tasks_left: int) -> None:  # noqa: B027 - a no-op by default
        """Told before the first call and after each: the solver seconds a task is expected
        to take (the family's estimate, then the time measured; None: not known) and how
        many tasks are not yet submitted.  An executor that starts its workers only when a
        run is worth it decides with this (:mod:`pipeline.backends.starting`); the others
        ignore it."""

    def expect_after(self, seconds: float) -> None:  # noqa: B027 - a no-op by default
        """Told by a run of runs (a search's batches): the solver seconds of the work that
        follows the run now going (the trials not yet solved), counted with the tasks left
        when an executor decides whether its workers are worth starting."""

    def in_flight(self, wanted: int) -> int:
        """How many calls to keep submitted at once, of the ``wanted``: all of them, unless
        the executor runs fewer at a time."""
        return wanted

    def gathered(self, handles: Iterable[Hashable]) -> list[Any]:
        """The results of the calls of ``handles``, in their order, once every submitted call
        completed; the error of the first call found lost is raised."""
        results = {}
        for call in self.completed():
            if call.lost is not None:
                raise call.lost
            results[call.handle] = call.result
        return [results[h] for h in handles]
