"""``cluster=sync``: every task in this process, one after another (for debugging: pdb works).

Imports nothing from Dask.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
from collections.abc import Callable, Hashable, Iterator
from contextlib import AbstractContextManager
from typing import Any, Literal

from pipeline.backends.backend import Backend
from pipeline.backends.base import Workers
from pipeline.backends.executor import Completed, Executor
from pipeline.config import ClusterSettings
from pipeline.long_task_setup import events_in_this_process
from solvers.kit.budget import Budget, available_memory
from solvers.kit.task_progress import Progress
from solvers.kit.words import format_bytes


class SyncSettings(ClusterSettings):
    """``cluster=sync``: no setting but the kind."""

    kind: Literal["sync"]


class SyncBackend(Backend):
    """Every task in this process, one after another."""

    settings_model = SyncSettings
    order = 0

    def check(self) -> None:
        """Nothing can be wrong with running in this process."""

    def find_workers(self) -> Workers:
        """One process, this one, with this machine's available memory (psutil), of its
        memory."""
        import psutil

        free = available_memory()
        budget = Budget(free, f"available memory under cluster=sync ({format_bytes(free)})")
        memory = int(psutil.virtual_memory().total)
        total = Budget(memory, f"this machine's memory ({format_bytes(memory)})")
        return Workers(1, budget, serial=True, memory=total)

    def executor(self, workers: Workers) -> AbstractContextManager[SyncExecutor]:
        """An executor running the calls in this process."""
        return contextlib.nullcontext(SyncExecutor())


class SyncExecutor(Executor):
    """Each call run in this process, in the order submitted, when :meth:`completed` reaches
    it; an error it raises is raised there (a call here is never lost).  One call is out at a
    time, so a batch is cut knowing every batch before it."""

    def __init__(self) -> None:
        super().__init__(1, "this process (cluster=sync)")
        self._queue: collections.deque[tuple[int, Callable[..., Any], tuple]] = collections.deque()
        self._handles = itertools.count()

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Hashable:
        handle = next(self._handles)
        self._queue.append((handle, fn, args))
        return handle

    def completed(self) -> Iterator[Completed]:
        while self._queue:
            handle, fn, args = self._queue.popleft()
            yield Completed(handle, fn(*args))

    def worker_events(
        self, progress: Callable[[Progress], None] | None, warning: Callable[[str], None]
    ) -> AbstractContextManager[None]:
        """The tasks run here: their events go straight to the handlers."""
        return events_in_this_process(progress, warning)

    def cancel(self) -> None:
        self._queue.clear()

    def in_flight(self, wanted: int) -> int:
        return 1
