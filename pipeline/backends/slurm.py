"""The ``slurm`` cluster backend: Dask workers as Slurm jobs through dask-jobqueue.

Each job runs one worker process with ``cores`` threads.  Workers retire gracefully after
``lifetime`` (give or take ``lifetime_stagger``), before the job's ``walltime``; adaptive
scaling between ``minimum_jobs`` and ``maximum_jobs`` replaces them, so the walltime never
cuts a batch short.
"""

from __future__ import annotations

import contextlib
import importlib.util
import shutil
import signal
from collections.abc import Iterator
from typing import Any

from pipeline.backends.base import (
    Workers,
    quiet_dask_logs,
    tls_files,
    tls_security,
    worker_budget,
)
from pipeline.backends.dask_executor import DaskExecutor
from pipeline.config import StudyError, seconds, walltime_seconds

SETUP_HINT = "scripts/slurm_setup.sh sets up a single-node Slurm on this machine"


def check(cluster: Any) -> None:
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
    if cluster.minimum_jobs > cluster.maximum_jobs:
        raise StudyError(
            f"cluster.minimum_jobs={cluster.minimum_jobs!r}: more than "
            f"cluster.maximum_jobs={cluster.maximum_jobs!r}"
        )
    if seconds(cluster.lifetime) + seconds(cluster.lifetime_stagger) >= walltime_seconds(
        cluster.walltime
    ):
        raise StudyError(
            f"cluster.lifetime={cluster.lifetime!r}: lifetime + lifetime_stagger "
            f"must stay under cluster.walltime={cluster.walltime!r}, or the walltime kills "
            "workers in the middle of a batch"
        )
    tls_files(cluster.tls)


def workers(cluster: Any) -> Workers:
    """Up to cluster.maximum_jobs workers, one a job, each with the job's cluster.memory."""
    from dask.utils import parse_bytes

    budget = worker_budget(parse_bytes(cluster.memory), f"cluster.memory={cluster.memory}")
    return Workers(cluster.maximum_jobs, budget)


def worker_args(cluster: Any) -> list[str]:
    """The dask worker options that retire a worker before its job's walltime."""
    return [
        "--lifetime",
        f"{seconds(cluster.lifetime):g}s",
        "--lifetime-stagger",
        f"{seconds(cluster.lifetime_stagger):g}s",
    ]


def slurm_cluster_kwargs(cluster: Any) -> dict[str, Any]:
    """Keyword arguments of dask_jobqueue.SLURMCluster for the cluster config.

    With TLS, the scheduler, the workers (in their Slurm jobs) and this client all use
    cluster.tls.cert and cluster.tls.key, signed by cluster.tls.ca_file; the files must be
    readable on the compute nodes (a shared file system).
    """
    files = tls_files(cluster.tls)
    tls = {} if files is None else {"security": tls_security(files, "all"), "protocol": "tls://"}
    return {
        **tls,
        "queue": cluster.queue,
        "account": cluster.account,
        "cores": cluster.cores,
        "processes": 1,
        "memory": str(cluster.memory),
        "walltime": str(cluster.walltime),
        "worker_extra_args": worker_args(cluster),
        "job_extra_directives": list(cluster.job_extra_directives),
        # no dashboard here, so no use for the workers' statistical profiler (its sampling
        # costs ~20% of small tasks' time, see pipeline.backends.local)
        "job_script_prologue": ["export DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False"],
        "log_directory": cluster.log_directory,
        "scheduler_options": {
            "host": cluster.scheduler_host or "127.0.0.1",
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
    quiet_dask_logs()
    return SLURMCluster


@contextlib.contextmanager
def open(cluster: Any, workers: Workers) -> Iterator[DaskExecutor]:  # noqa: A001 - the backend interface's name
    """An executor on an adaptive SLURMCluster; its jobs are cancelled on exit."""
    from distributed import Client

    SLURMCluster = slurm_cluster_class()
    with SLURMCluster(**slurm_cluster_kwargs(cluster)) as sc, Client(sc) as client:
        sc.adapt(minimum_jobs=cluster.minimum_jobs, maximum_jobs=cluster.maximum_jobs)
        try:
            client.wait_for_workers(1, timeout=seconds(cluster.worker_timeout))
        except TimeoutError:
            raise StudyError(
                f"cluster.worker_timeout={cluster.worker_timeout!r}: no Slurm job "
                "started a worker in time; see `squeue` and the job logs "
                f"(cluster.log_directory={cluster.log_directory!r})"
            ) from None
        description = f"Slurm (dask-jobqueue), {cluster.minimum_jobs}-{workers.count} jobs"
        yield DaskExecutor(client, workers.count, description)
