"""A real Dask cluster of subprocesses on 127.0.0.1: `dask scheduler` and `dask worker`s."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.repository import ROOT

DASK_CLI = Path(sys.executable).parent / "dask"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_workers(address: str, n: int, timeout: float = 60) -> None:
    """Return once the scheduler at ``address`` has ``n`` workers."""
    from distributed import Client

    with Client(address, timeout=timeout) as client:
        client.wait_for_workers(n, timeout=timeout)


def start_cluster(
    n_workers: int = 2, env: dict[str, str] | None = None
) -> tuple[str, list[subprocess.Popen]]:
    """Start `dask scheduler` and ``n_workers`` `dask worker --nthreads 1` (environment
    ``env``, else this process's; the repository first on the path); (address, procs)."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
    scheduler = [str(DASK_CLI), "scheduler", "--host", "127.0.0.1", "--port", str(port)]
    procs = [subprocess.Popen([*scheduler, "--no-dashboard"], **quiet)]
    for _ in range(n_workers):
        worker = [str(DASK_CLI), "worker", address, "--nthreads", "1", "--host", "127.0.0.1"]
        procs.append(subprocess.Popen([*worker, "--no-dashboard"], **quiet))
    try:
        wait_for_workers(address, n_workers)
    except Exception:
        stop(procs)
        raise
    return address, procs


def stop(procs: list[subprocess.Popen]) -> None:
    """Stop the processes this module started: workers killed at once, the scheduler asked."""
    scheduler, *workers = procs
    for proc in workers:
        proc.kill()
    scheduler.terminate()
    deadline = time.monotonic() + 20
    for proc in procs:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
