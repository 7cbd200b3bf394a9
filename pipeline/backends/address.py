"""``cluster=address``: an existing Dask scheduler (``dask scheduler`` and ``dask worker``)."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

from pipeline.backends.base import (
    CERTS_HINT,
    Workers,
    is_loopback,
    quiet_dask_logs,
    tls_files,
    tls_security,
    worker_budget,
)
from pipeline.backends.dask_executor import DaskExecutor
from pipeline.backends.probe import (
    NoWorkersWatch,
    check_scheduler,
    connection_error,
    workers_present,
)
from pipeline.config import StudyError, seconds
from solvers.kit.words import counted


def check(cluster: Any) -> None:
    """Refuse TLS settings that do not fit the address, or TLS files that are missing."""
    security_files(cluster)


def security_files(cluster: Any) -> dict[str, str] | None:
    """The client's TLS files for a tls:// address (None for tcp://), checked."""
    tls_address = cluster.address.startswith("tls://")
    if cluster.tls.given() and not tls_address:
        raise StudyError(
            f"cluster.address={cluster.address!r}: cluster.tls is set, so use a tls:// address"
        )
    files = tls_files(cluster.tls)
    if tls_address and not files:
        raise StudyError(
            "cluster.tls.ca_file=None: a tls:// cluster needs cluster.tls.ca_file, "
            f"cluster.tls.cert and cluster.tls.key ({CERTS_HINT})"
        )
    return files


def exposure_warning(cluster: Any) -> str | None:
    """A warning when plain tcp:// goes to a scheduler that is not on this machine."""
    address = cluster.address
    if not address.startswith("tcp://"):
        return None
    host = address[len("tcp://") :].rsplit(":", 1)[0].strip("[]")
    if host in ("localhost", "") or is_loopback(host):
        return None
    return (
        f"cluster.address={address!r} is plain tcp:// to another machine: anyone who can "
        "reach that scheduler can run code as you, and results travel unencrypted. Use "
        "TLS: make certificates with `python -m pipeline.certs DIR`, start the scheduler and "
        "workers with them, and run with cluster.address=tls://... and cluster.tls.*"
    )


def workers(cluster: Any) -> Workers:
    """The scheduler's workers as it reports them to one ``identity`` request (no client):
    how many, and the smallest ``memory_limit`` (None when a worker has none: each task
    then takes its own machine's available memory).  A scheduler that does not answer in
    cluster.timeout, or something else answering, is a StudyError naming the address."""
    security = _security(cluster)
    try:
        reply = check_scheduler(cluster.address, seconds(cluster.timeout), security)
    except Exception as exc:  # noqa: BLE001 - whatever answered, it is not our scheduler
        raise StudyError(connection_error(cluster, exc, security is not None)) from None
    limits = [w.get("memory_limit") or None for w in reply.get("workers", {}).values()]
    known = [m for m in limits if m]
    every = bool(limits) and len(known) == len(limits)
    budget = worker_budget(min(known), f"scheduler {cluster.address}") if every else None
    return Workers(max(1, len(limits)), budget)


def _security(cluster: Any) -> Any:
    """The client's Dask Security for a tls:// address, or None."""
    files = security_files(cluster)
    return tls_security(files) if files else None


@contextlib.contextmanager
def open(cluster: Any, workers: Workers) -> Iterator[DaskExecutor]:  # noqa: A001 - the backend interface's name
    """An executor on the scheduler at cluster.address, which answered as one (``workers``);
    StudyError if it no longer does."""
    from distributed import Client

    quiet_dask_logs()

    security = _security(cluster)
    try:
        client = Client(cluster.address, timeout=seconds(cluster.timeout), security=security)
    except Exception as exc:  # noqa: BLE001 - whatever answered, it is not our scheduler
        raise StudyError(connection_error(cluster, exc, security is not None)) from None
    with client:
        n_workers = workers_present(client, cluster)
        differences = version_differences(client)
        if differences:
            warnings.warn(
                "package versions differ between this client and the workers: "
                + "; ".join(differences),
                stacklevel=2,
            )
        description = f"scheduler {cluster.address}, {counted(n_workers, 'worker')}"
        watch = NoWorkersWatch(client, cluster)
        yield DaskExecutor(client, n_workers, description, watch=watch)


def version_differences(client: Any) -> list[str]:
    """Human-readable differences of key package versions between client and workers."""
    versions = client.get_versions(check=False)
    mine = versions["client"]["packages"]
    out = []
    for worker, info in versions.get("workers", {}).items():
        theirs = info.get("packages", {})
        for pkg in ("python", "dask", "distributed", "numpy", "pandas", "msgpack", "cloudpickle"):
            if pkg in mine and pkg in theirs and mine[pkg] != theirs[pkg]:
                out.append(f"{pkg}: client {mine[pkg]}, worker {worker} {theirs[pkg]}")
    return out
