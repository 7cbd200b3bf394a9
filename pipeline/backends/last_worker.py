"""The LocalCluster left without a worker while the driver waits: said, and the run stopped.

A LocalCluster's nanny starts its worker process again when it dies; but a nanny that cannot
(the new process fails to start), or whose worker was closed rather than killed (retired, or
ended by an exception inside its event loop), closes itself.  With no nanny left the
scheduler keeps the run's calls for a worker that never comes, and the driver would wait
for ever.  :class:`LastWorkerWatch` looks once a second while the driver waits.
"""

from __future__ import annotations

import time
from typing import Any

from pipeline.backends.worker_deaths import WorkerDeaths
from pipeline.errors import StudyError
from solvers.kit.words import counted


class NoWorkerLeft(StudyError):
    """The LocalCluster has no worker left, and none will come: the run stops.  ``lost``: the
    keys of the calls that were running on a worker that died (each becomes error rows
    before the run stops); ``why``: what they are lost to."""

    def __init__(self, message: str, lost: set, why: str):
        super().__init__(message)
        self.lost = lost
        self.why = why


class LastWorkerWatch:
    """The driver's watch on its LocalCluster while it waits for its calls (a DaskExecutor's
    ``watch``, about once a second): when the scheduler has no worker and no nanny is
    starting one (each closed: its worker could not be started again, or was retired), or
    none has joined for ``grace`` seconds, it raises :class:`NoWorkerLeft`.  Without it the
    scheduler keeps the calls for a worker that never comes, and the driver waits for ever.
    ``pending()``: the keys of the calls the driver waits for."""

    def __init__(self, lc: Any, deaths: WorkerDeaths, pending: Any, grace: float = 60.0):
        self.lc, self.deaths, self.pending, self.grace = lc, deaths, pending, grace
        self.since: float | None = None  # when the scheduler was first seen without workers

    def __call__(self) -> None:
        keys = list(self.pending())
        state = self.state(keys)
        if state is None or state[0]:  # the cluster is closing, or has workers
            self.since = None
            return
        _, starting, ran = state
        now = time.monotonic()
        self.since = now if self.since is None else self.since
        if starting and now - self.since < self.grace:
            return  # a nanny starts its worker again
        raise NoWorkerLeft(self.line(starting, len(ran)), ran, self.why())

    def state(self, keys: list) -> tuple[int, int, set] | None:
        """(workers the scheduler has, nannies running, the keys of ``keys`` that ran on a
        worker that died), read on the cluster's event loop; None once it has closed."""

        async def read() -> tuple[int, int, set]:
            scheduler = self.lc.scheduler
            nannies = [n for n in self.lc.workers.values() if n.status.name in RUNNING]
            tasks = scheduler.tasks
            ran = {k for k in keys if (ts := tasks.get(k)) is not None and ts.suspicious}
            return len(scheduler.workers), len(nannies), ran

        try:
            return self.lc.sync(read)
        except RuntimeError:  # the loop has closed
            return None

    def why(self) -> str:
        """What the calls that were on a worker when it died are lost to."""
        return (
            "the worker process it was on (running it, or holding it next) died and the "
            "LocalCluster has no worker left (the last worker process to die: "
            f"{self.deaths.how_it_ended(self.deaths.last)})"
        )

    def line(self, starting: int, ran: int) -> str:
        """The one line of the run stopped for want of workers."""
        if starting:
            gone = f"no worker has joined its scheduler for {self.grace:g} s"
        elif self.deaths.restart_failed:
            gone = "Dask could not start its worker processes again"
        else:
            gone = "its worker processes were closed and none took their place"
        held = (
            f"stored as failed tasks: those of the {counted(ran, 'batch')} it held"
            if ran
            else "no batch was on it"
        )
        return (
            f"cluster=local: the LocalCluster has no worker left ({gone}; the last worker "
            f"process to die: {self.deaths.how_it_ended(self.deaths.last)}); "
            f"{held}; not run: the other tasks; the results stored so far are intact: run "
            "the same command again to compute the rest (stored tasks are skipped, failed "
            "ones computed again)"
        )


RUNNING = ("init", "starting", "running")  # a nanny's states while it may start a worker
