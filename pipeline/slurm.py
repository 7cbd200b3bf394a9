"""The ``slurm`` cluster backend: Dask workers as Slurm jobs through dask-jobqueue.

Each job runs one worker process with ``cores`` threads.  Workers retire gracefully after
``lifetime`` (give or take ``lifetime_stagger``), before the job's ``walltime``; adaptive
scaling between ``minimum_jobs`` and ``maximum_jobs`` replaces them, so the walltime never
cuts a batch short.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import shutil
import signal
from collections.abc import Iterator, Mapping
from typing import Any

from pipeline.study import StudyError

Seconds = float
SETUP_HINT = "scripts/slurm_setup.sh sets up a single-node Slurm on this machine"


def walltime_seconds(walltime: Any) -> Seconds:
    """Seconds in a Slurm walltime "[D-]HH:MM:SS" (or "MM:SS"); raises ValueError."""
    text = str(walltime)
    days, _, clock = text.rpartition("-")
    parts = [int(p) for p in clock.split(":")]
    if not 1 <= len(parts) <= 3 or any(p < 0 for p in parts):
        raise ValueError(text)
    while len(parts) < 3:
        parts.insert(0, 0)
    hours, minutes, seconds = parts
    return ((int(days or 0) * 24 + hours) * 60 + minutes) * 60 + seconds


def duration_seconds(cluster: Mapping[str, Any], key: str) -> Seconds:
    """A duration setting ("50m", "90s", 30) in seconds, or StudyError naming the key."""
    from dask.utils import parse_timedelta

    value = cluster.get(key)
    try:
        seconds = parse_timedelta(value, default="seconds")
    except (TypeError, ValueError, KeyError):
        seconds = None
    if seconds is None or seconds < 0:
        raise StudyError(f"cluster.{key}={value!r}: give a duration such as 50m or 90s")
    return float(seconds)


def check_slurm(cluster: Mapping[str, Any]) -> None:
    """Refuse a slurm cluster config that cannot work, before any work (names the key)."""
    if importlib.util.find_spec("dask_jobqueue") is None:
        raise StudyError(
            "cluster.kind='slurm' needs dask-jobqueue: pip install 'guesslab[slurm]' "
            "(or pip install dask-jobqueue)"
        )
    if shutil.which("sbatch") is None:
        raise StudyError(
            "cluster.kind='slurm': Slurm is not available here (no sbatch on PATH); "
            f"run on a Slurm login node, start Slurm ({SETUP_HINT}) or use cluster=local"
        )
    for key in ("cores", "minimum_jobs", "maximum_jobs"):
        n = cluster.get(key)
        low = 0 if key == "minimum_jobs" else 1
        if isinstance(n, bool) or not isinstance(n, int) or n < low:
            raise StudyError(f"cluster.{key}={n!r}: must be an integer of at least {low}")
    if cluster["minimum_jobs"] > cluster["maximum_jobs"]:
        raise StudyError(
            f"cluster.minimum_jobs={cluster['minimum_jobs']!r}: more than "
            f"cluster.maximum_jobs={cluster['maximum_jobs']!r}"
        )
    try:
        wall = walltime_seconds(cluster.get("walltime"))
    except ValueError:
        raise StudyError(
            f"cluster.walltime={cluster.get('walltime')!r}: give it as HH:MM:SS"
        ) from None
    life = duration_seconds(cluster, "lifetime") + duration_seconds(cluster, "lifetime_stagger")
    if life >= wall:
        raise StudyError(
            f"cluster.lifetime={cluster.get('lifetime')!r}: lifetime + lifetime_stagger must "
            f"stay under cluster.walltime={cluster.get('walltime')!r}, or the walltime kills "
            "workers in the middle of a batch"
        )
    duration_seconds(cluster, "worker_timeout")
    slurm_security(cluster)


def worker_args(cluster: Mapping[str, Any]) -> list[str]:
    """The dask worker options that retire a worker before its job's walltime."""
    return [
        "--lifetime",
        f"{duration_seconds(cluster, 'lifetime'):g}s",
        "--lifetime-stagger",
        f"{duration_seconds(cluster, 'lifetime_stagger'):g}s",
    ]


def slurm_security(cluster: Mapping[str, Any]) -> Any:
    """Dask Security for cluster.tls (None without): one certificate for every role.

    The scheduler, the workers (in their Slurm jobs) and this client all use cluster.tls.cert
    and cluster.tls.key, signed by cluster.tls.ca_file; the files must be readable on the
    compute nodes (a shared file system).  ``python -m pipeline.certs DIR`` makes them.
    """
    from pipeline.execute import TLS_KEYS

    tls = cluster.get("tls") or {}
    if not any(tls.get(k) for k in TLS_KEYS):
        return None
    from pathlib import Path

    for key in TLS_KEYS:
        path = tls.get(key)
        if not path or not Path(path).expanduser().is_file():
            raise StudyError(f"cluster.tls.{key}={path!r}: no such file (TLS needs all three)")
    from distributed.security import Security

    ca, cert, key = (str(Path(tls[k]).expanduser()) for k in TLS_KEYS)
    return Security(
        tls_ca_file=ca,
        tls_scheduler_cert=cert,
        tls_scheduler_key=key,
        tls_worker_cert=cert,
        tls_worker_key=key,
        tls_client_cert=cert,
        tls_client_key=key,
        require_encryption=True,
    )


def slurm_cluster_kwargs(cluster: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments of dask_jobqueue.SLURMCluster for the cluster config."""
    security = slurm_security(cluster)
    tls = {} if security is None else {"security": security, "protocol": "tls://"}
    return {
        **tls,
        "queue": cluster.get("queue"),
        "account": cluster.get("account"),
        "cores": cluster["cores"],
        "processes": 1,
        "memory": str(cluster["memory"]),
        "walltime": str(cluster["walltime"]),
        "worker_extra_args": worker_args(cluster),
        "job_extra_directives": list(cluster.get("job_extra_directives") or []),
        # no dashboard here, so no use for the workers' statistical profiler (its sampling
        # costs ~20% of small tasks' time, see pipeline.execute._local)
        "job_script_prologue": ["export DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False"],
        "log_directory": cluster.get("log_directory"),
        "scheduler_options": {
            "host": cluster.get("scheduler_host") or "127.0.0.1",
            "dashboard_address": None,
        },
    }


def slurm_cluster_class() -> type:
    """dask_jobqueue.SLURMCluster, imported without what the import does to this process.

    Importing dask_jobqueue replaces the SIGINT handler with ``sys.exit()`` (its runner
    module does so at import), so Ctrl-C would end a study with exit status 0 as if it had
    succeeded, and it resets Dask's loggers: both are put back.
    """
    previous = signal.getsignal(signal.SIGINT)
    from dask_jobqueue import SLURMCluster

    if signal.getsignal(signal.SIGINT) is not previous and previous is not None:
        with contextlib.suppress(ValueError):  # only the main thread may set handlers
            signal.signal(signal.SIGINT, previous)
    for name in ("distributed", "bokeh", "tornado"):
        logging.getLogger(name).setLevel(logging.WARNING)
    return SLURMCluster


def open_slurm(cluster: Mapping[str, Any]) -> Iterator[Any]:
    """A Runner on an adaptive SLURMCluster; its jobs are cancelled on exit."""
    from distributed import Client

    from pipeline.execute import Runner

    check_slurm(cluster)
    SLURMCluster = slurm_cluster_class()
    with SLURMCluster(**slurm_cluster_kwargs(cluster)) as sc, Client(sc) as client:
        sc.adapt(minimum_jobs=cluster["minimum_jobs"], maximum_jobs=cluster["maximum_jobs"])
        wait = duration_seconds(cluster, "worker_timeout")
        try:
            client.wait_for_workers(1, timeout=wait)
        except TimeoutError:
            raise StudyError(
                f"cluster.worker_timeout={cluster.get('worker_timeout')!r}: no Slurm job "
                "started a worker in time; see `squeue` and the job logs "
                f"(cluster.log_directory={cluster.get('log_directory')!r})"
            ) from None
        n = cluster["maximum_jobs"]
        yield Runner(client, n, f"Slurm (dask-jobqueue), {cluster['minimum_jobs']}-{n} jobs")
