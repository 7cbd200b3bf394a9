"""Cluster backends: one class per way of running over one declared base
(:class:`.backend.Backend`), each cluster kind's in its own module with its settings model
beside it (``sync``, ``local``, ``address``, ``slurm``), chosen by kind through the registry
the config holds (:func:`pipeline.config.cluster_backends`: a backend registers itself as its
class is defined, and the config imports every module here to find them); the Dask client a
caller keeps is one more (:class:`.given_client.ClientBackend`).

A backend answers the run through the same calls whatever its kind: ``check`` (refuse a
config that cannot work here, before any work), ``exposure_warning`` (who else can reach the
cluster), ``workers`` (what it knows of the workers a run's tasks get, before it opens them:
:class:`.base.Workers`) and ``open`` (a context manager yielding an
:class:`.executor.Executor`, where the run's batches execute).  :func:`backend_of` gives the
backend of a run; :func:`open_executor` is the one way in from a cluster section as a
mapping (Python callers, the ``dask`` launcher).  No backend imports Dask's ``distributed``
before it opens its executor: ``cluster=sync`` never loads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any

from pipeline.backends.backend import Backend
from pipeline.backends.executor import Executor
from pipeline.config import ClusterSettings, cluster_backends, cluster_config

__all__ = ["Backend", "backend_of", "open_executor"]


def backend_of(cluster: ClusterSettings, client: Any = None) -> Backend:
    """The backend a run's tasks go to: the Dask client the caller gave and keeps
    (:class:`.given_client.ClientBackend`, the cluster section unused), else the registered
    backend of the checked cluster section's kind."""
    if client is None:
        return cluster_backends()[cluster.kind](cluster)
    from pipeline.backends.given_client import ClientBackend

    return ClientBackend(client)


def open_executor(cluster: Mapping[str, Any]) -> AbstractContextManager[Executor]:
    """An executor for a cluster section (a mapping over ``conf/cluster/<kind>.yaml``: from
    Python, ``open_executor({"kind": "local", "n_workers": 2})``), checked first; what the
    backend started is closed on exit."""
    backend = backend_of(cluster_config(cluster))
    backend.check()
    return backend.open()
