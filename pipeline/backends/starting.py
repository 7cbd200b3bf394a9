"""The LocalCluster's executor: the first calls run in the driver while waiting would cost
more than they do, and the cluster starts only once a study shows it is worth starting.

Starting an embedded LocalCluster costs the driver ~0.5-0.9 s on a 2-core machine (importing
Dask's ``distributed``, the scheduler, forking the workers: ``benchmarks/bench_startup.py``),
which is most of a small study's time.  So :class:`StartingExecutor` runs the calls submitted
to it in this process, as ``cluster=sync`` does, until they have taken ``start_after_s``
seconds (``cluster.start_after_s``, of the order of that start-up cost: the rule of renting
skis until the rent paid equals the price, which never costs more than twice the better
choice made in hindsight) and the tasks not yet submitted are expected, at the time a task
took here, to take as long again; then it starts the cluster, between two calls, and hands it
every call not yet begun.  A study done sooner never starts one.  It starts the cluster
before running anything here when the study's tasks are expected to be long (the family's
estimate per task over ``start_after_s``) or cannot be estimated, so a long task runs under
its worker's memory limit as before.  The driver tells it what it expects
(:meth:`StartingExecutor.expect`) before the first call and after each; a search, whose
batches are runs of their own on the executor it holds open, tells it the work of the
trials after the batch now running too (:meth:`StartingExecutor.expect_after`), so a search
of many small batches starts the cluster once its calls here took ``start_after_s``.

The cluster is started from the driver's main thread while no call runs (never from a
thread beside a running call): forked workers then inherit no lock a running call holds.
A call is run in exactly one place: in this process, or on the cluster once handed over.

Nothing here imports Dask's ``distributed`` before the cluster starts.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import AbstractContextManager, ExitStack
from typing import Any

from pipeline.backends.executor import Completed, Executor
from pipeline.backends.spreading import OnDask, in_dask_worker, on_this_worker
from pipeline.long_task_setup import events_in_this_process
from solvers.kit.spread import Spreader
from solvers.kit.task_progress import Progress
from solvers.kit.words import counted

_running: list[StartingExecutor] = []  # the executor of the run this driver process runs


def spread_from_the_driver(at_once: int) -> AbstractContextManager[Spreader]:
    """What a task that spreads its work is handed: on a Dask worker, that worker's cluster;
    in the driver, the cluster this run opens (started now if it was not: such a task is
    worth a cluster), reached through the run's own client and its TLS."""
    if in_dask_worker():
        return on_this_worker()
    if not _running:
        raise RuntimeError("spread_from_the_driver: no LocalCluster run in this process")  # a bug
    return contextlib.nullcontext(OnDask(_running[-1].client))


class StartingExecutor(Executor):
    """Calls run in this process until they took ``start_after_s`` seconds and the work left
    (as :meth:`expect` was last told; not told: unknown, so worth it) is longer still, then on
    the executor ``start()`` opens (a context manager yielding a DaskExecutor, closed with
    this executor); ``start_after_s=0`` starts it at the first call.  A task run here that
    spreads its work gets the cluster, started for it (:func:`spread_from_the_driver`)."""

    spreading = staticmethod(spread_from_the_driver)

    def __init__(
        self,
        n_workers: int,
        description: str,
        start: Callable[[], AbstractContextManager[Executor]],
        start_after_s: float,
    ):
        super().__init__(n_workers, description)
        if start_after_s > 0:
            workers = counted(n_workers, "worker process")
            self.description = (
                f"this process, then a LocalCluster of {workers} if the tasks take over "
                f"{start_after_s:g} s"
            )
        self._start = start
        self.start_after_s = start_after_s
        self._stack = ExitStack()
        self._cluster: Executor | None = None
        self._queue: collections.deque[tuple[int, Callable[..., Any], tuple]] = collections.deque()
        self._handles = itertools.count()
        self._on_cluster: dict[Hashable, int] = {}  # the cluster's handle -> this executor's
        self._events: tuple[Any, Any] | None = None
        self._events_stack: ExitStack | None = None
        self.seconds_here = 0.0  # the calls' time in this process
        self._left_s: float | None = None  # the work left, as last told (None: not told)
        self._after_s = 0.0  # the work of the runs that follow this one (a search's)

    # ---------------------------------------------------------------- the Executor interface

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Hashable:
        handle = next(self._handles)
        if self._cluster is None:
            self._queue.append((handle, fn, args))
        else:
            self._on_cluster[self._cluster.submit(fn, *args)] = handle
        return handle

    def completed(self) -> Iterator[Completed]:
        while self._cluster is None and self._queue:
            if self._worth_starting():
                self._start_cluster()
                break
            handle, fn, args = self._queue.popleft()
            began = time.perf_counter()
            try:
                result = fn(*args)
            finally:
                self.seconds_here += time.perf_counter() - began
            yield Completed(handle, result)
        if self._cluster is None:
            return
        for call in self._cluster.completed():
            yield Completed(self._on_cluster.pop(call.handle), call.result, call.lost)

    @contextlib.contextmanager
    def worker_events(
        self, progress: Callable[[Progress], None] | None, warning: Callable[[str], None]
    ) -> Iterator[None]:
        """The calls run here send their events straight to the handlers; once the cluster
        runs, its workers' events are followed too, until the block ends."""
        with events_in_this_process(progress, warning), ExitStack() as stack:
            self._events, self._events_stack = (progress, warning), stack
            if self._cluster is not None:
                stack.enter_context(self._cluster.worker_events(progress, warning))
            try:
                yield
            finally:
                self._events = self._events_stack = None

    def cancel(self) -> None:
        self._queue.clear()
        if self._cluster is not None:
            self._cluster.cancel()

    # ------------------------------------------------------------------------ the start

    def expect(self, seconds_per_task: float | None, tasks_left: int) -> None:
        """Start the cluster now when a task is expected to take longer than
        ``start_after_s`` (or its time is not known), or when the calls run here took
        ``start_after_s`` and the tasks left are expected to take as long again."""
        if self._cluster is not None:
            return
        if seconds_per_task is None or seconds_per_task > self.start_after_s:
            self._start_cluster()
            return
        self._left_s = seconds_per_task * tasks_left + self._after_s
        if self._worth_starting():
            self._start_cluster()

    def expect_after(self, seconds: float) -> None:
        self._after_s = max(0.0, seconds)

    def _worth_starting(self) -> bool:
        """Whether the calls run here took ``start_after_s`` and the work left is longer."""
        left = self._left_s
        return self.seconds_here >= self.start_after_s and (
            left is None or left > self.start_after_s
        )

    @property
    def started(self) -> bool:
        """Whether the cluster runs (calls go to it)."""
        return self._cluster is not None

    @property
    def client(self) -> Any:
        """The Dask client of the cluster, started now if it was not (for what needs the
        cluster itself rather than calls on it)."""
        if self._cluster is None:
            self._start_cluster()
        return self._cluster.client

    def _start_cluster(self) -> None:
        """Open the cluster and hand it the calls not yet begun, in their order."""
        self._cluster = self._stack.enter_context(self._start())
        self.description = self._cluster.description
        if self._events_stack is not None:
            self._events_stack.enter_context(self._cluster.worker_events(*self._events))
        while self._queue:
            handle, fn, args = self._queue.popleft()
            self._on_cluster[self._cluster.submit(fn, *args)] = handle


@contextlib.contextmanager
def starting(
    n_workers: int,
    description: str,
    start: Callable[[], AbstractContextManager[Executor]],
    start_after_s: float,
) -> Iterator[StartingExecutor]:
    """A :class:`StartingExecutor`; its cluster, if it started, closed on exit (told what
    ended the block, as its own ``with`` would be)."""
    executor = StartingExecutor(n_workers, description, start, start_after_s)
    _running.append(executor)
    try:
        with executor._stack:
            yield executor
    finally:
        _running.remove(executor)
