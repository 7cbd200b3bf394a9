"""Dask execution: the cluster backends and the batch function the workers run.

Backends (``cluster.kind``): ``local`` (an embedded LocalCluster of worker processes bound
to 127.0.0.1), ``sync`` (everything in this process, for debugging) and ``address`` (an
existing scheduler).  All are used through one :class:`Runner` interface.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import select
import signal
import sys
import time
import traceback
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import solvers.card_guessing.layered  # noqa: F401  (installs the Dask runner of method=float, workers > 1)
from pipeline.study import StudyError
from solvers.registry import Row, get_family, param_columns, solve

CLUSTER_KINDS = ("local", "sync", "address", "slurm")


def run_batch(batch: list[tuple[str, dict]], study: str, timeout: float | None = None) -> list[Row]:
    """Rows for a batch of (task_id, task): results, or one "error" row per failing task.

    With ``timeout`` (seconds), each task runs in a forked child that is killed when the
    time is up; the task then gets an error row saying so.
    """
    rows: list[Row] = []
    for tid, task in batch:
        try:
            if timeout is None:
                out = solve(task, canonical=True)
            else:
                out = solve_with_timeout(task, timeout)
        except Exception as exc:  # a failing task becomes a row; the study goes on
            out = [error_row(task, exc)]
        for row in out:
            row["task_id"], row["study"] = tid, study
        rows.extend(out)
    return rows


class TaskTimeout(Exception):
    """A task ran past its time limit."""


def solve_with_timeout(task: dict, seconds: float) -> list[Row]:
    """solve(task) in a forked child process, killed after ``seconds``."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: solve, send the pickled outcome, leave without cleanup
        os.close(read_fd)
        try:
            payload = pickle.dumps(("ok", solve(task, canonical=True)))
        except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent
            payload = pickle.dumps(("error", f"{type(exc).__name__}: {exc}"))
        with os.fdopen(write_fd, "wb") as fh:
            fh.write(payload)
        os._exit(0)
    os.close(write_fd)
    deadline = time.monotonic() + seconds
    chunks = []
    try:
        while True:
            left = deadline - time.monotonic()
            ready = select.select([read_fd], [], [], max(0.0, left))[0] if left > 0 else []
            if not ready:
                os.kill(pid, signal.SIGKILL)
                raise TaskTimeout(f"task ran past its time limit run.task_timeout_s={seconds:g}")
            data = os.read(read_fd, 1 << 20)
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(read_fd)
        os.waitpid(pid, 0)
    if not chunks:
        raise RuntimeError("the task's process ended without a result")
    status, value = pickle.loads(b"".join(chunks))
    if status == "error":
        raise RuntimeError(value)
    return value


def batch_error_row(tid: str, task: dict, study: str, exc: BaseException) -> Row:
    """The error row of a task whose whole batch was lost (e.g. its worker died)."""
    row = error_row(task, exc)
    row["error"] = f"batch lost: {row['error']}"
    row["task_id"], row["study"] = tid, study
    return row


def error_row(task: dict, exc: BaseException) -> Row:
    """The row recorded for a task that raised: its parameters and the error message."""
    fam = get_family(task["family"])
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" (at {Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
    return {
        **param_columns(task),
        **dict.fromkeys(fam.columns),
        "status": "error",
        "error": f"{type(exc).__name__}: {exc}{where}",
        "seconds": None,
    }


def fixed_batch_size(setting: Any) -> int | None:
    """The configured tasks per batch, or None for auto (adaptive) batching."""
    if setting in (None, "auto"):
        return None
    if isinstance(setting, bool) or not isinstance(setting, int) or setting < 1:
        raise StudyError(f"run.batch_size={setting!r}: must be a positive integer or auto")
    return setting


@dataclass
class Runner:
    """A Dask client (or None for in-process execution) and how many workers it has."""

    client: Any
    n_workers: int
    description: str


@contextlib.contextmanager
def open_runner(cluster: Mapping[str, Any]) -> Iterator[Runner]:
    """A Runner for the cluster config; the embedded cluster is closed on exit."""
    kind = cluster.get("kind")
    if kind == "sync":
        yield Runner(None, 1, "in-process (sync)")
    elif kind == "local":
        yield from _local(cluster)
    elif kind == "address":
        yield from _address(cluster)
    elif kind == "slurm":
        from pipeline.slurm import open_slurm

        yield from open_slurm(cluster)
    else:
        raise StudyError(f"cluster.kind={kind!r}: unknown; valid: {', '.join(CLUSTER_KINDS)}")


def check_cluster(cluster: Mapping[str, Any]) -> None:
    """Refuse a bad cluster config before any work (names the key and the value)."""
    kind = cluster.get("kind")
    if kind not in CLUSTER_KINDS:
        raise StudyError(f"cluster.kind={kind!r}: unknown; valid: {', '.join(CLUSTER_KINDS)}")
    if kind == "local":
        n = cluster.get("n_workers")
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise StudyError(f"cluster.n_workers={n!r}: must be a positive integer or null")
        t = cluster.get("threads_per_worker", 1)
        if isinstance(t, bool) or not isinstance(t, int) or t < 1:
            raise StudyError(f"cluster.threads_per_worker={t!r}: must be a positive integer")
        start_method(cluster.get("start_method", "auto"))
    if kind == "slurm":
        from pipeline.slurm import check_slurm

        check_slurm(cluster)
    if kind == "address":
        addr = cluster.get("address")
        if not isinstance(addr, str) or addr.partition("://")[0] not in ("tcp", "tls"):
            raise StudyError(
                f"cluster.address={addr!r}: give the scheduler address, e.g. "
                "tls://HOST:8786 (with cluster.tls.*) or tcp://127.0.0.1:8786"
            )
        tls_security(cluster)


TLS_KEYS = ("ca_file", "cert", "key")


def tls_security(cluster: Mapping[str, Any]) -> Any:
    """Dask Security for cluster.tls (None without TLS); checks the files exist first."""
    tls = cluster.get("tls") or {}
    given = {k: tls.get(k) for k in TLS_KEYS if tls.get(k)}
    address = str(cluster.get("address") or "")
    wants_tls = address.startswith("tls://") or bool(given)
    if not wants_tls:
        return None
    if address and not address.startswith("tls://"):
        raise StudyError(
            f"cluster.address={address!r}: cluster.tls is set, so use a tls:// address"
        )
    for key in TLS_KEYS:
        path = tls.get(key)
        if not path:
            raise StudyError(
                f"cluster.tls.{key}=None: a tls:// cluster needs cluster.tls.ca_file, "
                "cluster.tls.cert and cluster.tls.key (make them with python -m pipeline.certs DIR)"
            )
        if not Path(path).expanduser().is_file():
            raise StudyError(f"cluster.tls.{key}={path!r}: no such file")
    from distributed.security import Security

    return Security(
        tls_ca_file=str(Path(tls["ca_file"]).expanduser()),
        tls_client_cert=str(Path(tls["cert"]).expanduser()),
        tls_client_key=str(Path(tls["key"]).expanduser()),
        require_encryption=True,
    )


def exposure_warning(cluster: Mapping[str, Any]) -> str | None:
    """A warning when plain tcp:// goes to a scheduler that is not on this machine."""
    address = str(cluster.get("address") or "") if cluster.get("kind") == "address" else ""
    if not address.startswith("tcp://"):
        return None
    host = address[len("tcp://") :].rsplit(":", 1)[0].strip("[]")
    if host in ("localhost", "") or _is_loopback(host):
        return None
    return (
        f"cluster.address={address!r} is plain tcp:// to another machine: anyone who can "
        "reach that scheduler can run code as you, and results travel unencrypted. Use "
        "TLS: make certificates with `python -m pipeline.certs DIR`, start the scheduler and "
        "workers with them, and run with cluster.address=tls://... and cluster.tls.*"
    )


def _is_loopback(host: str) -> bool:
    import ipaddress

    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


START_METHODS = ("auto", "fork", "spawn", "forkserver")


def start_method(setting: Any = "auto") -> str:
    """How LocalCluster workers start: ``auto`` is fork on Linux, spawn elsewhere.

    A forked worker starts with the driver's modules loaded: a 2-worker LocalCluster is up in
    ~0.1 s instead of ~2 s (each spawned worker imports Dask, NumPy, Numba and the solvers
    again); macOS system libraries are not safe to fork, hence spawn there.
    """
    if setting not in START_METHODS:
        raise StudyError(
            f"cluster.start_method={setting!r}: unknown; valid: {', '.join(START_METHODS)}"
        )
    if setting == "auto":
        return "fork" if sys.platform.startswith("linux") else "spawn"
    return setting


def local_cluster_settings(dashboard: bool, method: str = "auto") -> dict[str, Any]:
    """Dask settings for an embedded LocalCluster: less bookkeeping on the machine's cores.

    The workers' statistical profiler feeds the dashboard and costs ~20% of the solver's
    time on small tasks: on only with the dashboard.  The nannies' memory checks (every
    100 ms), the system monitors (every 500 ms) and the event-loop health ticks (every 20 ms)
    run in the driver and in every worker; at their defaults they took ~2 of the driver's
    6 CPU seconds while the load study ran (benchmarks/bench_load.py, 100,000 tasks).  Memory
    is still checked twice a second.  Workers start by ``method`` (:func:`start_method`).
    """
    return {
        "distributed.worker.multiprocessing-method": start_method(method),
        "distributed.worker.profile.enabled": dashboard,
        "distributed.worker.memory.monitor-interval": "500ms",
        "distributed.admin.system-monitor.interval": "2s",
        "distributed.admin.tick.interval": "1s",
    }


@contextlib.contextmanager
def _ready_to_fork(enabled: bool) -> Iterator[None]:
    """The driver prepared for forking its workers (nothing when ``enabled`` is false).

    pandas is imported first: pyarrow imports it the first time it builds an array (to check
    for pandas inputs), so every worker's first Parquet encoding cost ~0.4 s of CPU; imported
    once here (where the summary needs it anyway), the forked workers start with it.

    Then the driver's objects leave the cycle collector's reach (``gc.freeze``, as the gc
    module's documentation advises before a fork) until the cluster closes: a forked worker
    inherits the driver's heap (with a planned study of 100,000 tasks, ~400,000 objects the
    collector tracks), and each of its full collections walked all of it (0.25-0.3 s each
    on the load benchmark, touching, hence copying, inherited pages).
    """
    if not enabled:
        yield
        return
    import pandas  # noqa: F401

    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _local(cluster: Mapping[str, Any]) -> Iterator[Runner]:
    import dask
    from distributed import Client, LocalCluster

    n_workers = cluster.get("n_workers") or os.cpu_count() or 1
    dashboard = bool(cluster.get("dashboard"))
    method = start_method(cluster.get("start_method", "auto"))
    with (
        _ready_to_fork(method == "fork"),
        dask.config.set(local_cluster_settings(dashboard, method)),
        LocalCluster(
            n_workers=n_workers,
            threads_per_worker=cluster.get("threads_per_worker", 1),
            processes=True,
            host="127.0.0.1",
            # the scheduler's HTTP server (dashboard or not) on loopback, at a free port
            scheduler_kwargs={"dashboard": dashboard, "dashboard_address": "127.0.0.1:0"},
            memory_limit=cluster.get("memory_limit", "auto"),
        ) as lc,
        Client(lc) as client,
    ):
        link = f", dashboard {client.dashboard_link}" if dashboard else ""
        yield Runner(client, n_workers, f"LocalCluster, {n_workers} worker processes{link}")


def _address(cluster: Mapping[str, Any]) -> Iterator[Runner]:
    from distributed import Client

    address = cluster["address"]
    security = tls_security(cluster)
    try:
        client = Client(address, timeout=cluster.get("timeout", "30s"), security=security)
    except (OSError, TimeoutError, ValueError) as exc:
        hint = (
            "is the scheduler running, and do cluster.tls.* come from the cluster's CA?"
            if security
            else "is the scheduler running (dask scheduler), and is the address right?"
        )
        reason = f"cannot connect to the scheduler ({type(exc).__name__}: {exc}); {hint}"
        raise StudyError(f"cluster.address={address!r}: {reason}") from None
    with client:
        n_workers = max(1, len(client.scheduler_info().get("workers", {})))
        differences = version_differences(client)
        if differences:
            import warnings

            warnings.warn(
                "package versions differ between this client and the workers: "
                + "; ".join(differences),
                stacklevel=2,
            )
        yield Runner(client, n_workers, f"scheduler {address}, {n_workers} workers")


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
