"""What every LocalCluster worker sets up as it starts (a Dask worker preload: ``dask_setup``).

Imported by name in each worker (forked or spawned), so it imports nothing heavy.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import weakref
from typing import Any

from pipeline.backends import refusals, worker_deaths

HEARTBEAT_FAILED = "Failed to communicate with scheduler during heartbeat."


class HeartbeatAtCloseFilter(logging.Filter):
    """Drops Dask's "failed heartbeat" error, with its traceback, once the worker is leaving.

    A heartbeat in flight while the cluster retires its workers finds its connection closed,
    and the worker logs the error with a 40-line traceback (dask/distributed#7105, open):
    on a finished, correct run, once in 16 runs of the load benchmark (2026-11-25).  The
    scheduler tells a worker it is retiring before it drops the connection, so the error is
    kept while the worker is running and dropped when it is not.
    """

    def __init__(self, worker: Any):
        super().__init__()
        self.worker = weakref.ref(worker)

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.at_close_only(record):
            return True
        worker = self.worker()
        return worker is not None and getattr(worker.status, "name", None) == "running"

    @staticmethod
    def at_close_only(record: logging.LogRecord) -> bool:
        """Whether ``record`` is a message a closing worker logs about its own closing."""
        return record.msg == HEARTBEAT_FAILED


class CancelledAtCloseFilter(HeartbeatAtCloseFilter):
    """Drops Dask's "Async instruction for <Task ...> ended with CancelledError" (a warning
    per running task, written to stdout by the driver's logging) once the worker is
    leaving: it is how a worker's running tasks end when the run is stopped (Ctrl-C), which
    the driver reports in its one line."""

    @staticmethod
    def at_close_only(record: logging.LogRecord) -> bool:
        text = str(record.msg)
        return text.startswith("Async instruction for ") and text.endswith(
            "ended with CancelledError"
        )


class PoolClosedAtCloseFilter(HeartbeatAtCloseFilter):
    """Drops Dask's "ConnectionPool is closed" error, with its traceback, that a worker logs
    when it closes after its nanny has already closed its connections (the cluster closing
    while the nanny starts a worker again, after one died): nothing is left for the worker
    to tell its nanny (:func:`closing_quietly`)."""

    @staticmethod
    def at_close_only(record: logging.LogRecord) -> bool:
        return str(record.msg) == POOL_CLOSED


POOL_CLOSED = "ConnectionPool is closed"  # Dask's words (distributed.core.ConnectionPool)
# Dask's ``log_errors`` logs on the logger of the module whose function it wraps (for
# ``Worker.close``, distributed.worker), not on distributed.utils; a filter on a logger sees
# only the records logged on that logger, so it goes on each name the error is logged under.
POOL_CLOSED_LOGGERS = ("distributed.utils", "distributed.worker", "distributed.core")


def closing_quietly(worker: Any) -> None:
    """A worker's close without the RuntimeError "ConnectionPool is closed" of a worker whose
    nanny closed first: uncaught, it ends the worker's process with a traceback on the
    terminal (multiprocessing's "Process Dask Worker process (from Nanny)") after the run."""
    close = worker.close

    async def quiet_close(*args: Any, **kwargs: Any) -> Any:
        try:
            return await close(*args, **kwargs)
        except RuntimeError as exc:
            if str(exc) != POOL_CLOSED:
                raise
            return None

    worker.close = quiet_close


def at_close_filters(worker: Any) -> list[tuple[str, logging.Filter]]:
    """The log filters a worker puts on Dask's loggers: (logger name, filter) pairs."""
    return [
        *((name, PoolClosedAtCloseFilter(worker)) for name in POOL_CLOSED_LOGGERS),
        ("distributed.worker", HeartbeatAtCloseFilter(worker)),
        ("distributed.worker.state_machine", CancelledAtCloseFilter(worker)),
    ]


def dask_setup(worker: Any) -> None:
    """Dask's preload hook, called with each worker as it starts."""
    for name, quiet in at_close_filters(worker):
        logging.getLogger(name).addFilter(quiet)
    closing_quietly(worker)
    refusals.in_worker()  # refused TLS handshakes: kept for the driver, off the output
    worker_deaths.in_worker()  # its memory warnings: the driver names a worker's death
    ignore_stops()


STOPS = (signal.SIGINT, signal.SIGTERM)  # what a worker ignores: the driver stops it


def ignore_stops() -> None:
    """Ctrl-C in a terminal goes to every process of the foreground group, the workers
    included, and so does SIGTERM sent to the group (``kill -- -PGID``, a batch system
    stopping a job); each worker would print its own KeyboardInterrupt traceback (~75 lines
    on the first Ctrl-C), or die at once, its nanny starting another while the driver stops
    the cluster.  A worker ignores both: the driver stops the run and closes the cluster, and
    a worker whose driver is gone exits on its own (Dask watches the parent process).

    A nanny ending a worker over its memory limit sends SIGTERM first, then SIGKILL at its
    next check (half a second later, ``local_cluster_settings``) if the worker is still over
    the limit: the worker ignoring SIGTERM is killed by the second.  Forked workers already
    start with both ignored (pipeline.backends.local); this covers spawned ones, from the
    moment the worker starts."""
    with contextlib.suppress(ValueError):  # not the main thread: nothing to change here
        for stop in STOPS:
            signal.signal(stop, signal.SIG_IGN)
