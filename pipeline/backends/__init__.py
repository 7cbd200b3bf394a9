"""Cluster backends, one module per ``cluster.kind`` over the small core in :mod:`.base`.

Each backend module has ``check(cluster)`` (refuse a config that cannot work, before any
work) and ``open(cluster)`` (a context manager yielding a :class:`.base.Runner`).  Only the
chosen backend is imported: ``cluster=sync`` never loads Dask's ``distributed``.
"""

from __future__ import annotations

import importlib
from contextlib import AbstractContextManager
from types import ModuleType
from typing import Any

from pipeline.backends.base import Runner
from pipeline.config import cluster_config, cluster_model

__all__ = ["Runner", "check_cluster", "exposure_warning", "open_runner"]


def backend(kind: str) -> ModuleType:
    """The backend module of ``cluster.kind`` (imported now)."""
    cluster_model(kind)  # refuses an unknown kind, listing the valid ones
    return importlib.import_module(f"{__name__}.{kind}")


def check_cluster(cluster: Any) -> None:
    """Refuse a cluster config that cannot work here (values, files, programs), naming the key.

    ``cluster``: a checked config, or a mapping over ``conf/cluster/<kind>.yaml``.
    """
    cluster = cluster_config(cluster)
    backend(cluster.kind).check(cluster)


def open_runner(cluster: Any) -> AbstractContextManager[Runner]:
    """A Runner for the cluster config (checked, or a mapping over its kind's YAML); what the
    backend started is closed on exit."""
    cluster = cluster_config(cluster)
    return backend(cluster.kind).open(cluster)


def exposure_warning(cluster: Any) -> str | None:
    """The backend's warning about who else can reach the cluster, or None."""
    cluster = cluster_config(cluster)
    warn = getattr(backend(cluster.kind), "exposure_warning", None)
    return None if warn is None else warn(cluster)
