"""What every LocalCluster worker sets up as it starts (a Dask worker preload: ``dask_setup``).

Imported by name in each worker (forked or spawned), so it imports nothing heavy.
"""

from __future__ import annotations

import logging
import weakref
from typing import Any

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
        if record.msg != HEARTBEAT_FAILED:
            return True
        worker = self.worker()
        return worker is not None and getattr(worker.status, "name", None) == "running"


def dask_setup(worker: Any) -> None:
    """Dask's preload hook, called with each worker as it starts."""
    logging.getLogger("distributed.worker").addFilter(HeartbeatAtCloseFilter(worker))
