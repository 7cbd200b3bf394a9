"""Cluster backends, one module per ``cluster.kind`` over the small core in :mod:`.base`.

Each backend module answers four calls, each given the checked cluster config:

- ``check(cluster)``: refuse a config that cannot work here, before any work;
- ``workers(cluster)``: what it knows of the workers a run's tasks get, before it opens them
  (:class:`.base.Workers`: how many, the memory of each, whether the driver runs the tasks
  itself);
- ``open(cluster, workers)``: a context manager yielding an :class:`.executor.Executor`
  (where the run's batches execute), given what ``workers`` answered (``cluster=address``
  asks its scheduler once, there);
- ``exposure_warning(cluster)``, where it has one: who else can reach the cluster.

:class:`Backend` binds the chosen module to a checked cluster config (a model of
:mod:`pipeline.config`) and asks ``workers`` once; :func:`open_executor` is the one way in from
a cluster section as a mapping (Python callers, the ``dask`` launcher).  Only the chosen
backend is imported: ``cluster=sync`` never loads Dask's ``distributed``.  A Dask client the
caller started and keeps is one more way to run: :func:`.given_client.open_executor_on`.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any

from pipeline.backends.base import Workers, quiet_while_stopping
from pipeline.backends.executor import Executor
from pipeline.config import cluster_config

__all__ = ["Backend", "backend_of", "open_executor"]


class Backend:
    """The backend of a checked cluster config (``Config.cluster``): its module, imported
    now, and its answers, each asked of it once."""

    def __init__(self, cluster: Any):
        self.cluster = cluster
        self.module = importlib.import_module(f"{__name__}.{cluster.kind}")
        self._workers: Workers | None = None

    def check(self) -> None:
        """Refuse a cluster config that cannot work here (values, files, programs), naming
        the key."""
        self.module.check(self.cluster)

    def exposure_warning(self) -> str | None:
        """The backend's warning about who else can reach the cluster, or None."""
        warn = getattr(self.module, "exposure_warning", None)
        return None if warn is None else warn(self.cluster)

    def workers(self) -> Workers:
        """What the backend knows of its workers, asked once (``cluster=address``: its
        scheduler answers one ``identity`` request)."""
        if self._workers is None:
            self._workers = self.module.workers(self.cluster)
        return self._workers

    def open(self) -> AbstractContextManager[Executor]:
        """An executor on the workers; what the backend started is closed on exit, without a
        word from Dask once Ctrl-C stopped the run (:func:`.base.quiet_while_stopping`)."""
        return quiet_while_stopping(self.module.open(self.cluster, self.workers()))


def backend_of(cluster: Any, client: Any = None) -> Any:
    """The backend a run's tasks go to: the Dask client the caller gave and keeps
    (:class:`.given_client.ClientBackend`, the cluster section unused), else the checked
    cluster config's (:class:`Backend`)."""
    if client is None:
        return Backend(cluster)
    from pipeline.backends.given_client import ClientBackend

    return ClientBackend(client)


def open_executor(cluster: Mapping[str, Any]) -> AbstractContextManager[Executor]:
    """An executor for a cluster section (a mapping over ``conf/cluster/<kind>.yaml``: from
    Python, ``open_executor({"kind": "local", "n_workers": 2})``), checked first; what the
    backend started is closed on exit."""
    backend = Backend(cluster_config(cluster))
    backend.check()
    return backend.open()
