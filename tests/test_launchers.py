"""Hydra multirun launchers: basic and joblib share one store and summary; the dask plugin."""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.storage import store
from tests.helpers import commands

# these runs start clusters and Slurm jobs: a longer limit than commands.cli's
cli = functools.partial(commands.cli, timeout=600)

DECKS = ("[[3,3,3]]", "[[2,2,2]]", "[[2,2]]", "[[3,3]]")


def sweep(outputs: Path, decks: tuple[str, ...], *args: str) -> subprocess.CompletedProcess:
    """A multirun of the paper study over ``decks`` into ``outputs``."""
    grid = f"study.grid.deck={','.join(decks)}"
    return cli("-m", "study=paper", grid, f"paths.outputs={outputs}", *args)


def assert_one_store_and_summary(outputs: Path, decks: tuple[str, ...]) -> None:
    rows = store.load_results(outputs / "paper")
    assert rows["task_id"].is_unique and len(rows) == 2 * len(decks)
    summary = (outputs / "paper" / "summary.md").read_text()
    for deck in decks:
        counts = deck.strip("[]")
        assert counts in set(rows["deck"]), deck
        assert f"Deck ({counts})" in summary, f"the summary misses deck {counts}"


@pytest.mark.slow
def test_joblib_and_basic_launchers_write_one_store_and_one_summary(tmp_path):
    joblib = ("hydra/launcher=joblib", "hydra.launcher.n_jobs=2")
    parallel = sweep(tmp_path, DECKS[:2], "cluster=sync", *joblib)
    assert parallel.returncode == 0, parallel.stderr
    assert_one_store_and_summary(tmp_path, DECKS[:2])  # the last summary saw every job
    basic = sweep(tmp_path, DECKS[2:], "cluster=sync", "hydra/launcher=basic")
    assert basic.returncode == 0, basic.stderr
    assert_one_store_and_summary(tmp_path, DECKS)


@pytest.mark.slow
def test_dask_launcher_runs_the_jobs_on_a_local_cluster(tmp_path):
    res = sweep(tmp_path, DECKS[:2], "cluster=local", "hydra/launcher=dask")
    assert res.returncode == 0, res.stderr
    assert "2 jobs on LocalCluster" in res.stdout + res.stderr
    assert_one_store_and_summary(tmp_path, DECKS[:2])


@pytest.mark.slow
def test_dask_launcher_runs_the_jobs_on_an_existing_scheduler(tmp_path, dask_address):
    address = f"cluster.address={dask_address}"
    res = sweep(tmp_path, DECKS[:3], "cluster=address", address, "hydra/launcher=dask")
    assert res.returncode == 0, res.stderr
    assert f"3 jobs on scheduler {dask_address}" in res.stdout + res.stderr
    assert_one_store_and_summary(tmp_path, DECKS[:3])


@pytest.mark.slow
def test_dask_launcher_passes_on_a_bad_job_config_as_exit_2(tmp_path):
    res = sweep(tmp_path, ("[[3,3,3]]", "[[3,-1]]"), "cluster=sync", "hydra/launcher=dask")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "study.grid.deck=[3, -1]" in res.stderr


def test_the_dask_launcher_is_found_as_a_hydra_plugin():
    from hydra.core.plugins import Plugins
    from hydra.plugins.launcher import Launcher

    names = {cls.__name__ for cls in Plugins.instance().discover(Launcher)}
    assert "DaskLauncher" in names


def run_main(monkeypatch, capsys, *argv: str) -> tuple[int, str]:
    """(exit status, stderr) of `python -m pipeline ARGV`, in this process."""
    from pipeline.__main__ import main

    monkeypatch.setattr(sys, "argv", ["pipeline", *argv])
    with pytest.raises(SystemExit) as exit_info:
        main()
    return exit_info.value.code, capsys.readouterr().err


def test_a_launcher_plugin_not_installed_exits_2_saying_what_to_install(
    monkeypatch, capsys, tmp_path
):
    monkeypatch.setitem(sys.modules, "hydra_plugins.hydra_joblib_launcher", None)
    args = ("-m", "cluster=sync", f"paths.outputs={tmp_path}", "hydra/launcher=joblib")
    code, err = run_main(monkeypatch, capsys, *args)
    assert code == 2
    assert "hydra/launcher=joblib" in err and "pip install hydra-joblib-launcher" in err
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


def test_an_unknown_launcher_exits_2_listing_the_known_ones(monkeypatch, capsys, tmp_path):
    args = ("-m", "cluster=sync", f"paths.outputs={tmp_path}", "hydra/launcher=carrier_pigeon")
    code, err = run_main(monkeypatch, capsys, *args)
    assert code == 2
    assert "hydra/launcher='carrier_pigeon'" in err and "joblib" in err and "dask" in err


def test_the_slurm_launcher_without_slurm_exits_2_saying_what_to_start(
    monkeypatch, capsys, tmp_path
):
    monkeypatch.setattr("pipeline.cli.preflight.shutil.which", lambda name: None)
    args = ("-m", "cluster=sync", f"paths.outputs={tmp_path}", "hydra/launcher=submitit_slurm")
    code, err = run_main(monkeypatch, capsys, *args)
    assert code == 2
    assert "hydra/launcher=submitit_slurm" in err and "no sbatch" in err


@pytest.mark.slow
def test_dask_launcher_exits_1_when_tasks_of_remote_jobs_failed(tmp_path):
    timeout = "run.task_timeout_s=0.000001"  # every task runs past its limit: error rows
    res = sweep(tmp_path, DECKS[:2], timeout, "cluster=local", "hydra/launcher=dask")
    assert res.returncode == 1, res.stdout + res.stderr
    rows = store.load_results(tmp_path / "paper")
    assert len(rows) == 4 and (rows["status"] == "error").all()


@pytest.mark.slow
@pytest.mark.parametrize("launcher", ["joblib", "basic"])
def test_a_multirun_with_failed_tasks_exits_1_after_running_every_job(tmp_path, launcher):
    """The failure count lives in the job's process (joblib: a loky worker): it must still
    reach the driver's exit status."""
    timeout = "run.task_timeout_s=0.000001"  # every task runs past its limit: error rows
    res = sweep(tmp_path, DECKS[:2], timeout, "cluster=sync", f"hydra/launcher={launcher}")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "2 tasks failed:" in res.stderr
    rows = store.load_results(tmp_path / "paper")
    assert len(rows) == 4 and (rows["status"] == "error").all()  # both jobs ran


@pytest.mark.slow
@pytest.mark.parametrize("launcher", ["joblib", "basic"])
def test_a_multirun_with_a_bad_job_config_exits_2_and_runs_the_good_jobs(tmp_path, launcher):
    res = sweep(tmp_path, ("[[3,-1]]", "[[2,2]]"), "cluster=sync", f"hydra/launcher={launcher}")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "study.grid.deck=[3, -1]" in res.stderr
    rows = store.load_results(tmp_path / "paper")
    assert set(rows["deck"]) == {"2,2"} and (rows["status"] == "ok").all()


@pytest.mark.slow
def test_a_run_refused_by_a_joblib_job_names_the_users_command(tmp_path):
    """A joblib multirun's job computes in a loky worker process; a second run of its tasks
    is refused naming the command the user typed (``python -m pipeline -m ...``), not the
    worker's (``... joblib.externals.loky ...``)."""
    import time

    from tests.helpers.toy_layers import guesslab, toy_env, toy_folder

    folder = toy_folder(tmp_path, layers=3)
    gate = tmp_path / "gate"
    gate.touch()  # each job waits at layer 1 while this file exists
    env = toy_env(folder, TOY_GATE=str(gate), TOY_GATE_AT="1")
    joblib = ("hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "study.name=toy,toy_b")
    studies = ("--config-dir", str(folder / "studies"), "study=toy", "paths.outputs=out")
    multirun = subprocess.Popen(
        commands.pipeline_command("-m", *studies, *joblib, "cluster=sync", "run.progress=false"),
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        claims = folder / "out" / "toy" / ".claims"
        deadline = time.monotonic() + 120
        while not list(claims.glob("*.json")) or not all(
            p.stat().st_size for p in claims.glob("*.json")
        ):
            assert multirun.poll() is None and time.monotonic() < deadline, multirun.communicate()
            time.sleep(0.05)
        refused = guesslab(folder, "cluster=sync", "run.progress=false")
    finally:
        gate.unlink()
        out, err = multirun.communicate(timeout=300)
    assert refused.returncode == 2, refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert "another run is computing" in line and "loky" not in line, line
    assert f"python -m pipeline -m --config-dir {folder / 'studies'} study=toy" in line, line
    assert multirun.returncode == 0, err
