"""A Hydra launcher that runs each job of a multirun as one task on a Dask cluster.

The cluster is the app's own ``cluster`` config (``cluster=local``, ``address`` or
``slurm``; ``sync`` runs the jobs here one after another), opened with guesslab's
:func:`pipeline.backends.open_executor`.  Each job runs with ``cluster.kind=sync``, so its
tasks run inside the worker that got the job: the jobs, not their tasks, are what the
cluster spreads out.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, configure_log, filter_overrides, run_job, setup_globals
from hydra.plugins.launcher import Launcher
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf, open_dict

log = logging.getLogger(__name__)


def execute_job(
    idx: int,
    overrides: Sequence[str],
    hydra_context: HydraContext,
    config: DictConfig,
    task_function: TaskFunction,
    singleton_state: dict[Any, Any],
    command: str | None = None,
) -> JobReturn:
    """The JobReturn of one job, run here (a failed job's JobFailed is in it, as Hydra does);
    ``command``: the driver's, which the job names as its own (a claim's command line)."""
    from hydra.core.hydra_config import HydraConfig

    from pipeline.multirun_jobs import COMMAND_ENV

    if command is not None:
        os.environ[COMMAND_ENV] = command

    setup_globals()
    Singleton.set_state(singleton_state)
    sweep_config = hydra_context.config_loader.load_sweep_config(config, list(overrides))
    with open_dict(sweep_config):
        sweep_config.hydra.job.id = f"{sweep_config.hydra.job.name}_{idx}"
        sweep_config.hydra.job.num = idx
        sweep_config.cluster = {"kind": "sync"}  # the job's tasks run in the job's worker
    HydraConfig.instance().set_config(sweep_config)
    return run_job(
        hydra_context=hydra_context,
        config=sweep_config,
        task_function=task_function,
        job_dir_key="hydra.sweep.dir",
        job_subdir_key="hydra.sweep.subdir",
    )


class DaskLauncher(Launcher):
    """Hydra launcher: every job of the sweep is a task on the configured Dask cluster."""

    def __init__(self) -> None:
        self.config: DictConfig | None = None
        self.task_function: TaskFunction | None = None
        self.hydra_context: HydraContext | None = None

    def setup(
        self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig
    ) -> None:
        self.config = config
        self.task_function = task_function
        self.hydra_context = hydra_context

    def launch(
        self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int
    ) -> Sequence[JobReturn]:
        """Run the jobs on the cluster; returns their JobReturns in order."""
        assert self.config is not None and self.task_function is not None
        setup_globals()
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        from pipeline.backends.base import quiet_dask_logs

        quiet_dask_logs()
        Path(str(self.config.hydra.sweep.dir)).mkdir(parents=True, exist_ok=True)
        cluster = OmegaConf.to_container(self.config.cluster, resolve=True)
        jobs = [(initial_job_idx + i, list(o)) for i, o in enumerate(job_overrides)]
        return self._run_all(cluster, jobs)

    def _run_all(self, cluster: dict, jobs: list[tuple[int, list[str]]]) -> list[JobReturn]:
        from pipeline.backends import open_executor
        from pipeline.errors import StudyError
        from pipeline.multirun_jobs import COMMAND_ENV

        args = (
            self.hydra_context,
            self.config,
            self.task_function,
            Singleton.get_state(),
            os.environ.get(COMMAND_ENV),  # a worker elsewhere does not inherit it
        )
        try:
            with open_executor(cluster) as executor:  # checked first
                executor.expect(None, len(jobs))  # a job is a whole study, of a time not known
                log.info(f"dask launcher: {len(jobs)} jobs on {executor.description}")
                for idx, overrides in jobs:
                    log.info(f"\t#{idx} : {' '.join(filter_overrides(overrides))}")
                calls = [executor.submit(execute_job, idx, o, *args) for idx, o in jobs]
                return executor.gathered(calls)  # cluster=sync: run here, one by one
        except StudyError as exc:
            print(f"error: {exc}", file=sys.stderr)
            sys.exit(2)
