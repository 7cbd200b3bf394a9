"""Where a task's pieces run: the :class:`~solvers.kit.spread.Spreader` a task that spreads
its work gets from its context (``TaskContext.spread``), as the executor running the task
hands it (``Executor.spreading``, through :func:`pipeline.running.worker.run_batch`).

- On a Dask worker (``local``, ``address``, ``slurm``, a caller's own client): the cluster
  the task runs on, through the worker's own client (``distributed.worker_client``: the
  worker's connection, so the run's TLS; the task leaves the worker's thread pool while it
  waits on its pieces, and rejoins it after): :func:`spread_here`.
- In the driver's process (``cluster=sync``): the pieces in threads of this process
  (:func:`solvers.kit.spread.in_process`), no cluster and no port; the ``local`` backend's
  executor, when it runs a task in the driver before its cluster started, starts the
  cluster and hands it instead (:mod:`pipeline.backends.starting`).

A task never starts a cluster of its own.  Dask's ``distributed`` is imported only on a
worker, or for a client already open.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from solvers.kit.spread import Spreader, in_process

__all__ = ["OnDask", "in_dask_worker", "on_this_worker", "spread_here"]


class OnDask(Spreader):
    """A task's pieces as Dask tasks over ``client``'s workers, piece ``place`` on worker
    ``place`` (modulo the workers known when the spreader was made: a hint, not a rule)."""

    def __init__(self, client: Any):
        self._dask = client
        self._address = client.scheduler.address
        info = client.scheduler_info()["workers"]
        self._hosts = sorted(info)
        self.places = max(1, len(self._hosts))
        self.threads = max([w.get("nthreads", 1) for w in info.values()] or [1])
        limits = [w.get("memory_limit") or 0 for w in info.values()]
        self.memory_limit = min([b for b in limits if b > 0], default=None)

    @property
    def description(self) -> str:
        return f"the {self.places} workers of the Dask scheduler at {self._address}"

    def where(self, place: int | None) -> list[str] | None:
        """The worker a piece at ``place`` is asked to run on (None: any, as when no worker
        was known as the spreader was made: a cluster still starting, or restarting)."""
        if place is None or not self._hosts:
            return None
        return [self._hosts[place % len(self._hosts)]]

    def submit(self, func: Callable[..., Any], /, *args: Any, place: int | None = None) -> Any:
        hint = self.where(place)
        if hint is None:
            return self._dask.submit(func, *args, pure=False)
        return self._dask.submit(func, *args, workers=hint, allow_other_workers=True, pure=False)

    def gather(self, pieces: Any) -> Any:
        return self._dask.gather(pieces)

    def map(
        self,
        func: Callable[..., Any],
        calls: Iterable[tuple],
        done: Callable[[Any], None] | None = None,
    ) -> list:
        from distributed import as_completed

        futures = [self._dask.submit(func, *args, pure=False) for args in calls]
        index = {f.key: i for i, f in enumerate(futures)}
        out: list = [None] * len(futures)
        for fut in as_completed(futures):
            out[index[fut.key]] = fut.result()
            if done is not None:
                done(out[index[fut.key]])
            fut.release()
        return out


@contextlib.contextmanager
def on_this_worker() -> Iterator[OnDask]:
    """Inside a Dask worker: the cluster it belongs to, through the worker's client; the
    calling task is out of the worker's thread pool for the block (``worker_client``)."""
    from distributed import worker_client

    with worker_client() as client:
        yield OnDask(client)


def spread_here(at_once: int) -> contextlib.AbstractContextManager[Spreader]:
    """What a task that spreads is handed where it runs: on a Dask worker, the worker's
    cluster (:func:`on_this_worker`); elsewhere, ``at_once`` threads of this process."""
    return on_this_worker() if in_dask_worker() else in_process(at_once)


def in_dask_worker() -> bool:
    """Whether this code runs in a Dask worker (never imports ``distributed`` to know)."""
    if "distributed" not in sys.modules:
        return False
    from distributed import get_worker

    try:
        get_worker()
    except ValueError:
        return False
    return True
