"""A Dask preload for the LocalCluster's workers when the dashboard is on: Tornado's access
log kept off the run's output.

The dashboard's HTTP servers (the scheduler's, in the driver, and each worker's) answer any
account on the machine, and Tornado logs every request it answers with an error status
(``404 GET /anything (127.0.0.1)``, a warning) through its access logger, "tornado.access",
which reaches the run's output: anyone could flood it.  A filter on that logger drops every
one of its records; the driver installs it while its LocalCluster is open (forked workers
inherit it), and this preload in each worker as it starts, whatever Dask's logging settings
are.  Tornado's errors (logged by "tornado.application") are not touched.

Imported by every worker as it starts: nothing heavy here.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

ACCESS_LOG = "tornado.access"


class _DropAll(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return False


DROP = _DropAll()


def drop_access_log() -> None:
    """Tornado's access log dropped in this process from now on."""
    logger = logging.getLogger(ACCESS_LOG)
    if DROP not in logger.filters:
        logger.addFilter(DROP)


@contextlib.contextmanager
def access_log_dropped() -> Iterator[None]:
    """Tornado's access log dropped in this process until the block ends."""
    logger = logging.getLogger(ACCESS_LOG)
    there = DROP in logger.filters
    drop_access_log()
    try:
        yield
    finally:
        if not there:
            logger.removeFilter(DROP)


def dask_setup(server: Any) -> None:
    """Dask's preload hook, called with each worker as it starts."""
    drop_access_log()
