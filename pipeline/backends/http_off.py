"""A Dask preload for the LocalCluster's scheduler and workers when the dashboard is off:
no HTTP server at all.

Dask starts an HTTP server in every scheduler and worker whether or not the dashboard is
on (plain HTTP on 127.0.0.1: workers, task names, call stacks and logs under /info, metrics
under /metrics), readable by every account on the machine.  With ``cluster.dashboard=false``
the LocalCluster is started with no HTTP routes (``distributed.scheduler.http.routes`` and
``distributed.worker.http.routes`` empty: any request is a 404), and this preload, which
runs as each server starts, closes the listening socket and drops the server from the
services a scheduler or worker advertises.
"""

from __future__ import annotations

from typing import Any


def dask_setup(server: Any) -> None:
    """Dask's preload hook, called with the scheduler or a worker as it starts."""
    http = getattr(server, "http_server", None)
    if http is not None:
        http.stop()  # closes the listening socket
    server.services.pop("dashboard", None)
