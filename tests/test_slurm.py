"""cluster=slurm and the submitit launcher against a real single-node Slurm on this machine.

The session fixture runs scripts/slurm_setup.sh (apt-get install slurm-wlm munge, then
munged, slurmctld and slurmd started directly); the tests skip only where that cannot run.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.config import cluster_config
from pipeline.run import run_study
from pipeline.storage import store
from tests.helpers import commands
from tests.helpers.repository import ROOT
from tests.helpers.runs import compose_config
from tests.helpers.setup_lock import one_process_at_a_time

# these runs start clusters and Slurm jobs: a longer limit than commands.cli's
cli = functools.partial(commands.cli, timeout=600)

SETUP = ROOT / "scripts" / "slurm_setup.sh"
CANNOT_RUN = 3  # the script's exit status when this machine cannot host Slurm


@pytest.fixture(scope="session")
def slurm() -> Iterator[None]:
    """A single-node Slurm answering `srun -N1 hostname` (set up once per session)."""
    if os.geteuid() != 0 and shutil.which("sbatch") is None:
        pytest.skip("Slurm is not installed and installing it needs root")
    if shutil.which("apt-get") is None and shutil.which("sbatch") is None:
        pytest.skip("Slurm is not installed and there is no apt-get to install it")
    with one_process_at_a_time("slurm-setup"):
        res = subprocess.run(["bash", str(SETUP)], capture_output=True, text=True, timeout=900)
    if res.returncode == CANNOT_RUN:
        pytest.skip(f"scripts/slurm_setup.sh cannot run here: {res.stderr.strip()}")
    assert res.returncode == 0, f"scripts/slurm_setup.sh failed:\n{res.stderr}"
    yield


def slurm_overrides(tmp_path: Path) -> list[str]:
    """cluster=slurm sized for this machine, job logs under tmp_path."""
    return [
        "cluster=slurm",
        "cluster.memory=1GiB",
        "cluster.walltime=00:10:00",
        "cluster.lifetime=8m",
        "cluster.lifetime_stagger=1m",
        f"cluster.log_directory={tmp_path / 'slurm-logs'}",
    ]


SIGINT_AFTER_IMPORT = """
import signal
from pipeline.backends.slurm import slurm_cluster_class
slurm_cluster_class()
print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)
"""


def test_using_dask_jobqueue_leaves_ctrl_c_a_keyboard_interrupt():
    """Importing dask_jobqueue makes SIGINT call sys.exit() (exit status 0 on Ctrl-C, as if
    the study had succeeded); the backend puts Python's own handler back."""
    pytest.importorskip("dask_jobqueue")
    assert commands.python_output(SIGINT_AFTER_IMPORT) == "True"


def test_slurm_jobs_retire_their_workers_before_the_walltime(tmp_path):
    pytest.importorskip("dask_jobqueue")
    from pipeline.backends.slurm import slurm_cluster_class, slurm_cluster_kwargs

    SLURMCluster = slurm_cluster_class()

    cfg = compose_config(*slurm_overrides(tmp_path))
    with SLURMCluster(**slurm_cluster_kwargs(cluster_config(cfg.cluster))) as cluster:
        script = cluster.job_script()
    assert "#SBATCH -t 00:10:00" in script
    assert "--lifetime 480s --lifetime-stagger 60s" in script  # 8 + 1 minutes < 10 minutes
    assert "--nthreads 1" in script


@pytest.mark.slow
def test_a_study_runs_on_slurm(slurm, tmp_path):
    outputs = tmp_path / "outputs"
    cfg = compose_config(
        f"paths.outputs={outputs}", "run.progress=false", *slurm_overrides(tmp_path)
    )
    messages: list[str] = []
    report = run_study(cfg, log=messages.append)
    assert (report.computed, report.errors) == (2, 0)
    assert any("on Slurm (dask-jobqueue)" in m for m in messages)
    rows = store.load_results(outputs / "paper")
    assert sorted(rows["expected_score_exact"]) == ["2383/560", "475/112"]
    assert list((tmp_path / "slurm-logs").glob("*.err")), "no Slurm job ran a worker"


@pytest.mark.slow
def test_a_submitit_multirun_runs_each_job_on_slurm(slurm, tmp_path):
    res = cli(
        "-m",
        "study=paper",
        "study.grid.deck=[[3,3,3]],[[2,2,2]]",
        "cluster=sync",
        "hydra/launcher=submitit_slurm",
        "hydra.launcher.timeout_min=10",
        f"paths.outputs={tmp_path}",
    )
    assert res.returncode == 0, res.stderr
    rows = store.load_results(tmp_path / "paper")
    assert sorted(rows["deck"].unique()) == ["2,2,2", "3,3,3"] and rows["task_id"].is_unique
    summary = (tmp_path / "paper" / "summary.md").read_text()
    assert "Deck (2,2,2)" in summary and "Deck (3,3,3)" in summary
    assert list(tmp_path.glob("paper/multirun/*/.submitit/*/*_result.pkl"))  # ran via Slurm


@pytest.mark.slow
def test_the_dask_launcher_runs_jobs_on_slurm_workers(slurm, tmp_path):
    res = cli(
        "-m",
        "study=paper",
        "study.grid.deck=[[3,3,3]],[[2,2]]",
        *slurm_overrides(tmp_path),
        "hydra/launcher=dask",
        f"paths.outputs={tmp_path}",
    )
    assert res.returncode == 0, res.stderr
    assert "2 jobs on Slurm (dask-jobqueue)" in res.stdout + res.stderr
    rows = store.load_results(tmp_path / "paper")
    assert sorted(rows["deck"].unique()) == ["2,2", "3,3,3"] and rows["task_id"].is_unique
