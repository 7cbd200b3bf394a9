"""The executors the backends open: each runs the driver's calls and hands back their results
as they complete; a Dask client the caller keeps runs a study's tasks on its workers once
they run this guesslab, and stays the caller's."""

from __future__ import annotations

import pytest

import pipeline.running.worker
from pipeline.backends.given_client import guesslab_identity, open_executor_on, worker_mismatch
from pipeline.backends.sync import SyncExecutor
from pipeline.config import checked_config, plain
from pipeline.errors import StudyError
from pipeline.long_task_setup import LongTaskSetup
from pipeline.run import run_study
from pipeline.running.driver import BatchCutter, BatchWork, finished_batches
from pipeline.running.plan import planned
from pipeline.storage import store
from tests.helpers.runs import compose_config


@pytest.fixture(scope="module")
def client():
    """A Dask client of an in-process LocalCluster, as a notebook starts one."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=1,
            threads_per_worker=2,
            processes=False,
            protocol="tcp://",
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


def paper(outputs) -> tuple:
    cfg = compose_config(f"paths.outputs={outputs}", "run.progress=false")
    conf = checked_config(plain(cfg))
    return cfg, conf


def test_the_sync_executor_runs_each_call_here_in_order_when_its_result_is_asked_for():
    ran: list[int] = []
    executor = SyncExecutor()
    first = executor.submit(ran.append, 1)
    second = executor.submit(ran.append, 2)
    assert ran == [] and executor.in_flight(8) == 1
    assert [call.handle for call in executor.completed()] == [first, second]
    assert ran == [1, 2]


def test_the_sync_executor_hands_a_task_s_warnings_and_progress_to_the_handlers():
    said: list[str] = []
    shown: list[object] = []
    setup = LongTaskSetup(None, 1, None, progress=True)
    with SyncExecutor().worker_events(shown.append, said.append):
        ctx = setup.context("t1")
        ctx.warn("a piece set aside")
        assert ctx.sink is not None
    assert said == ["a piece set aside"]
    assert setup.context("t1").warnings is None  # outside the block: no handler


def test_a_study_runs_on_a_client_the_caller_keeps(client, tmp_path):
    cfg, _ = paper(tmp_path)
    lines: list[str] = []
    report = run_study(cfg, log=lines.append, client=client)
    assert report.computed == report.planned == 2 and report.errors == 0
    assert any("tasks on the given Dask client (scheduler " in line for line in lines), lines
    assert len(store.load_results(report.folder.path)) == 2
    assert client.submit(sum, [1, 2], pure=False).result() == 3  # still the caller's, open
    assert len(client.scheduler_info()["workers"]) == 1


def test_a_client_whose_workers_run_another_guesslab_is_refused_before_any_task(
    client, tmp_path, monkeypatch
):
    import pipeline.backends.given_client as given_client

    def identity(dask_worker=None):  # a worker answers with another version
        mine = guesslab_identity()
        return mine if dask_worker is None else {**mine, "version": "9.9"}

    monkeypatch.setattr(given_client, "guesslab_identity", identity)
    cfg, _ = paper(tmp_path / "out")
    with pytest.raises(StudyError) as refused:
        run_study(cfg, log=lambda *_: None, client=client)
    (line,) = str(refused.value).splitlines()
    assert line.startswith("the Dask client's worker ") and "runs guesslab 9.9, code" in line
    assert "install the same guesslab on every worker" in line
    assert not (tmp_path / "out").exists()  # refused before anything was written
    assert client.submit(sum, [1, 2], pure=False).result() == 3


def test_a_worker_that_cannot_run_guesslab_is_named_with_its_error():
    mine = guesslab_identity()
    theirs = {"tcp://10.0.0.2:1": mine, "tcp://10.0.0.3:1": ModuleNotFoundError("solvers")}
    line = worker_mismatch(mine, theirs)
    assert line == (
        "the Dask client's worker tcp://10.0.0.3:1 cannot run guesslab (ModuleNotFoundError: "
        f"solvers); install this guesslab (guesslab {mine['version']}, code solvers "
        f"{mine['code']['solvers']}, pipeline {mine['code']['pipeline']}) on every worker"
    )
    other = {**mine, "families": {**mine["families"], "high_low": "99"}}  # not its version
    assert "(families high_low differ)" in worker_mismatch(mine, {"w": other})
    assert worker_mismatch(mine, {"w": dict(mine)}) is None


def test_a_batch_its_worker_never_returned_becomes_error_rows(client, tmp_path, monkeypatch):
    """On Dask a call that fails outside the solver is lost: its tasks become error rows and
    the run goes on; in this process the same failure is raised."""

    def worker_gone(*args):
        raise OSError("the worker's process ended")

    monkeypatch.setattr(pipeline.running.worker, "run_batch", worker_gone)
    _, conf = paper(tmp_path)
    work = BatchWork("paper", None, pipeline.running.worker.metadata_bytes({}))
    plan = planned(conf.study)
    with open_executor_on(client) as executor:
        done = list(finished_batches(executor, BatchCutter(plan, 1, conf.run), work))
    assert sum(d.n_tasks for d in done) == sum(d.n_errors for d in done) == plan.n_tasks == 2
    with pytest.raises(OSError, match="ended"):
        list(finished_batches(SyncExecutor(), BatchCutter(plan, 1, conf.run), work))
