"""``cluster=address``: an existing Dask scheduler (``dask scheduler`` and ``dask worker``)."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Annotated, Any, Literal

from pydantic import AfterValidator

from pipeline.backends.backend import Backend
from pipeline.backends.base import (
    CERTS_HINT,
    TLSFiles,
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
from pipeline.config import MAX_TIMEOUT_S, ClusterSettings, duration, seconds
from pipeline.errors import StudyError
from solvers.kit.words import counted


class AddressSettings(ClusterSettings):
    """``cluster=address``: conf/cluster/address.yaml says what each key does."""

    kind: Literal["address"]
    address: Annotated[Any, AfterValidator(lambda v: _address(v))]
    timeout: Annotated[Any, AfterValidator(lambda v: _wait(v))]
    tls: TLSFiles


class AddressBackend(Backend):
    """An existing Dask scheduler, reached at cluster.address (over TLS with cluster.tls)."""

    settings_model = AddressSettings
    order = 2
    cluster: AddressSettings

    def check(self) -> None:
        """Refuse TLS settings that do not fit the address, or TLS files that are missing."""
        security_files(self.cluster)

    def exposure_warning(self) -> str | None:
        """A warning when plain tcp:// goes to a scheduler that is not on this machine."""
        address = self.cluster.address
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

    def find_workers(self) -> Workers:
        """The scheduler's workers as it reports them to one ``identity`` request
        (:func:`scheduler_workers`)."""
        return scheduler_workers(self.cluster)

    def executor(self, workers: Workers) -> contextlib.AbstractContextManager[DaskExecutor]:
        """An executor on the scheduler (:func:`opened`)."""
        return opened(self.cluster, workers)


def _address(value: Any) -> str:
    if not isinstance(value, str) or value.partition("://")[0] not in ("tcp", "tls"):
        raise ValueError(
            "give the scheduler address, e.g. tls://HOST:8786 (with cluster.tls.*) "
            "or tcp://127.0.0.1:8786"
        )
    scheme, _, rest = value.partition("://")
    problem = _host_port_problem(rest)
    if problem:
        raise ValueError(
            f"malformed address: {problem}; give it as {scheme}://HOST:PORT "
            f"(e.g. {scheme}://127.0.0.1:8786)"
        )
    return value


def _host_port_problem(text: str) -> str | None:
    """What is wrong with the ``HOST:PORT`` of a scheduler address (None: nothing), as
    Dask reads it: a host, then a port from 1 to 65535; an IPv6 host in brackets."""
    if not text:
        return "no host and port"
    if "://" in text:
        return f"a second '://' in {text!r}"
    if text.startswith("["):  # [IPv6]:PORT
        host, bracket, tail = text[1:].partition("]")
        if not bracket or (tail and not tail.startswith(":")):
            return f"{text!r} is not [IPv6 address]:PORT"
        sep, port = tail[:1], tail[1:]
    else:
        host, sep, port = text.rpartition(":")
        if ":" in host:
            return f"{text!r} has more than one colon (an IPv6 host goes in brackets, [::1])"
    if not sep:
        return f"no port after {text!r}"
    if not host:
        return "no host before the port"
    if not (port.isascii() and port.isdigit()) or not 1 <= int(port) <= 65535:
        return f"the port {port!r} is not a number from 1 to 65535"
    return None


MAX_WAIT = "30d"  # the longest cluster.timeout: as long as a task may run (MAX_TIMEOUT_S)


def _wait(value: Any) -> Any:
    """``cluster.timeout``: a duration above 0 and at most MAX_WAIT (kept as given)."""
    duration(value)
    wait = seconds(value)
    if wait <= 0:
        raise ValueError("give a duration above 0 s, such as 30s")
    if wait > MAX_TIMEOUT_S:
        raise ValueError(f"must be at most {MAX_WAIT} (30 days)")
    return value


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


def scheduler_workers(cluster: Any) -> Workers:
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
def opened(cluster: Any, workers: Workers) -> Iterator[DaskExecutor]:
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
