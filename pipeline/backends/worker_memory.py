"""The memory limit a LocalCluster worker of this machine takes from ``cluster.memory_limit``,
found the way Dask's worker finds it, without importing Dask.

A run asks for it before any task (the long tasks' budget), so importing Dask's
``distributed`` for it (``distributed.worker_memory.parse_memory_limit``) cost 0.24 s of the
2.2 s the default study takes, where the cluster it describes may never start
(:mod:`pipeline.backends.starting`).  ``tests/test_backends.py`` holds the answers here equal
to Dask's own for every kind of setting on the machine the tests run on.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import Any

CGROUP_MEMORY_FILES = (  # Dask's places, each a limit when it holds a positive number
    "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    "/sys/fs/cgroup/memory/memory.soft_limit_in_bytes",
    "/sys/fs/cgroup/memory.max",
    "/sys/fs/cgroup/memory.high",
    "/sys/fs/cgroup/memory.low",
)


def memory_limit(setting: Any, nthreads: int) -> int | None:
    """Bytes a worker of ``nthreads`` threads may hold (None: no limit): ``auto`` is its
    share of the cores of :func:`system_memory`; a number up to 1 a fraction of it; a size
    ("4GiB") or a larger number bytes; 0 or None no limit; never more than the system's."""
    if setting is None:
        return None
    system = system_memory()
    if setting == "auto":
        limit: Any = int(system * min(1, nthreads / cores()))
    else:
        limit = setting
        try:
            limit = float(limit)
            if limit <= 1:
                limit = int(limit * system)
        except (TypeError, ValueError):
            pass
    if isinstance(limit, str):
        from dask.utils import parse_bytes  # a size given: the config's check imported it

        limit = parse_bytes(limit)
    limit = int(limit)
    if limit == 0:
        return None
    return min(limit, system)


def system_memory() -> int:
    """This system's memory for Dask: the least of the machine's memory, the cgroup limits
    set (v1 and v2) and the RSS hard limit."""
    import psutil

    limit = int(psutil.virtual_memory().total)
    if sys.platform == "linux":
        for path in CGROUP_MEMORY_FILES:
            try:
                value = int(Path(path).read_text())
            except (OSError, ValueError):
                continue
            if value > 0:
                limit = min(limit, value)
    if sys.platform != "win32":
        import resource

        hard = resource.getrlimit(resource.RLIMIT_RSS)[1]
        if 0 < hard < limit:
            limit = hard
    return limit


def cores() -> int:
    """The cores Dask counts: the CPUs this process may run on, under a cgroup CPU quota."""
    import psutil

    count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    affinity = getattr(psutil.Process(), "cpu_affinity", lambda: None)()
    if affinity:
        count = min(count or len(affinity), len(affinity))
    quota = cgroup_cpu_quota()
    if quota is not None:
        count = min(count or quota, quota)
    return count or 1


def cgroup_cpu_quota() -> int | None:
    """Whole CPUs of the cgroup's quota (rounded up), or None where none is set: cgroup v1's
    quota over its period, else v2's of this process's group (where Dask looks)."""
    if sys.platform != "linux":
        return None
    found = None
    for folder in ("cpuacct,cpu", "cpu,cpuacct"):
        try:
            found = [
                int(Path(f"/sys/fs/cgroup/{folder}/cpu.cfs_{k}_us").read_text())
                for k in ("quota", "period")
            ]
            break
        except (OSError, ValueError):
            continue
    if found is None:
        try:
            group = Path("/proc/self/cgroup").read_text().strip().split(":")[-1].rstrip("/")
            found = [int(v) for v in Path(f"/sys/fs/cgroup{group}/cpu.max").read_text().split(" ")]
        except (OSError, ValueError):
            return None
    quota, period = found
    if quota <= 0 or period <= 0:
        return None
    return math.ceil(quota / period)
