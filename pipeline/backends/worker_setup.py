"""What every LocalCluster worker sets up as it starts (a Dask worker preload: ``dask_setup``).

Imported by name in each worker (forked or spawned), so it imports nothing heavy.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import weakref
from typing import Any

from pipeline.backends import refusals

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


def dask_setup(worker: Any) -> None:
    """Dask's preload hook, called with each worker as it starts."""
    logging.getLogger("distributed.worker").addFilter(HeartbeatAtCloseFilter(worker))
    logging.getLogger("distributed.worker.state_machine").addFilter(CancelledAtCloseFilter(worker))
    refusals.in_worker()  # refused TLS handshakes: kept for the driver, off the output
    ignore_ctrl_c()


def ignore_ctrl_c() -> None:
    """Ctrl-C in a terminal goes to every process of the foreground group, the workers
    included; each would print its own KeyboardInterrupt traceback (~75 lines on the first
    Ctrl-C).  A worker ignores it: the driver stops the run and closes the cluster, and a
    worker whose driver is gone exits on its own (Dask watches the parent process).  Forked
    workers already start with it ignored (pipeline.backends.local); this covers spawned
    ones, from the moment the worker starts."""
    with contextlib.suppress(ValueError):  # not the main thread: nothing to change here
        signal.signal(signal.SIGINT, signal.SIG_IGN)
