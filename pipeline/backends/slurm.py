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
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator

from pipeline.backends.backend import Backend
from pipeline.backends.base import (
    TLSFiles,
    Workers,
    quiet_dask_logs,
    tls_files,
    tls_security,
    worker_budget,
)
from pipeline.backends.dask_executor import DaskExecutor
from pipeline.config import ClusterSettings, Duration, Memory, PositiveInt, folder_path, seconds
from pipeline.errors import StudyError

SETUP_HINT = "scripts/slurm_setup.sh sets up a single-node Slurm on this machine"


def _at_least(value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"must be an integer of at least {low}")
    return value


def walltime_seconds(walltime: Any) -> float:
    """Seconds in a Slurm walltime "[D-]HH:MM:SS" (or "MM:SS"); raises ValueError."""
    text = str(walltime)
    days, _, clock = text.rpartition("-")
    parts = [int(p) for p in clock.split(":")]
    if not 1 <= len(parts) <= 3 or any(p < 0 for p in parts):
        raise ValueError(text)
    while len(parts) < 3:
        parts.insert(0, 0)
    hours, minutes, secs = parts
    return ((int(days or 0) * 24 + hours) * 60 + minutes) * 60 + secs


def _walltime(value: Any) -> str:
    try:
        walltime_seconds(value)
    except ValueError:
        raise ValueError("give it as HH:MM:SS") from None
    return str(value)


class SlurmSettings(ClusterSettings):
    """``cluster=slurm``: conf/cluster/slurm.yaml says what each key does."""

    kind: Literal["slurm"]
    queue: str | None
    account: str | None
    cores: PositiveInt
    memory: Memory
    walltime: Annotated[Any, AfterValidator(_walltime)]
    lifetime: Duration
    lifetime_stagger: Duration
    minimum_jobs: Annotated[int, BeforeValidator(lambda v: _at_least(v, 0))]
    maximum_jobs: Annotated[int, BeforeValidator(lambda v: _at_least(v, 1))]
    scheduler_host: str | None
    log_directory: Annotated[
        str | None, AfterValidator(lambda v: v if v is None else folder_path(v))
    ]
    job_extra_directives: list[str]
    worker_timeout: Duration
    tls: TLSFiles


class SlurmBackend(Backend):
    """Dask workers as Slurm jobs (dask-jobqueue's SLURMCluster), scaled between
    cluster.minimum_jobs and cluster.maximum_jobs."""

    settings_model = SlurmSettings
    order = 3
    cluster: SlurmSettings

    def check(self) -> None:
        """Refuse a slurm cluster config that cannot work, before any work (names the
        key)."""
        cluster = self.cluster
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

    def find_workers(self) -> Workers:
        """Up to cluster.maximum_jobs workers, one a job, each with the job's
        cluster.memory."""
        from dask.utils import parse_bytes

        memory = self.cluster.memory
        budget = worker_budget(parse_bytes(memory), f"cluster.memory={memory}")
        return Workers(self.cluster.maximum_jobs, budget)

    def executor(self, workers: Workers) -> contextlib.AbstractContextManager[DaskExecutor]:
        """An executor on an adaptive SLURMCluster (:func:`opened`)."""
        return opened(self.cluster, workers)


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
def opened(cluster: Any, workers: Workers) -> Iterator[DaskExecutor]:
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
