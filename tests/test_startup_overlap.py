"""``cluster=local`` without waiting for the cluster: the first tasks run in the driver, the
LocalCluster starts once they took ``cluster.start_after_s`` (or at once for tasks expected
to be long), and every task is computed in exactly one place and stored once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.backends import open_executor
from pipeline.storage import store
from pipeline.storage.store import load_results
from tests.helpers.commands import cli_run_in_process
from tests.helpers.nap_driver import nap_overrides, register_nap
from tests.helpers.repository import ROOT

SOLVES = "GUESSLAB_TEST_SOLVES"  # the file each solve appends "task pid" to
STOP_AT = "GUESSLAB_TEST_STOP_AT"  # a task during which the user presses Ctrl-C (SIGINT)


def _counted_nap(task: dict) -> list[dict]:
    if os.environ.get(STOP_AT) == str(task["i"]):
        os.kill(os.getpid(), signal.SIGINT)  # the user's Ctrl-C, as the terminal sends it
        time.sleep(5)  # the signal's KeyboardInterrupt comes here
    time.sleep(task["nap"])
    with open(os.environ[SOLVES], "a") as log:
        log.write(f"{task['i']} {os.getpid()}\n")
    return [{"woke": task["i"]}]


def register_counted_naps() -> None:
    """The test family test_counted_nap: naps of an estimated length, each solve logged."""
    register_nap("test_counted_nap", _counted_nap, estimate=lambda task: task["nap"])


def naps(n: int, seconds: float, outputs: Path, *more: str) -> list[str]:
    return [
        *nap_overrides(n, seconds, "test_counted_nap"),
        "cluster=local",
        "run.progress=false",
        f"paths.outputs={outputs}",
        *more,
    ]


def solves(log: Path) -> list[tuple[int, int]]:
    """(task, process id) of every solve logged."""
    if not log.exists():
        return []
    return [tuple(map(int, line.split())) for line in log.read_text().splitlines()]


def stored_ids(results: Path) -> list[str]:
    """Every stored row's task id, over every results file (not only the newest rows)."""
    files = store.result_files(results)
    return [
        tid for f in files for tid in pq.read_table(f, columns=["task_id"])["task_id"].to_pylist()
    ]


@pytest.fixture
def counted(tmp_path, monkeypatch) -> Path:
    register_counted_naps()
    log = tmp_path / "solves.txt"
    monkeypatch.setenv(SOLVES, str(log))
    return log


def test_tasks_begun_in_the_driver_and_finished_on_the_cluster_are_each_stored_once(
    tmp_path, monkeypatch, capsys, counted
):
    """With the cluster starting mid-run, each task is solved once (in the driver or on a
    worker, and both happen) and stored once: as many rows over all files as tasks."""
    args = naps(60, 0.01, tmp_path, "cluster.n_workers=2", "cluster.start_after_s=0.1")
    done = cli_run_in_process(monkeypatch, capsys, *args, "run.batch_size=1")
    assert done.returncode == 0, done.stderr
    assert "running 60 tasks on this process, then a LocalCluster of 2" in done.stdout
    logged = solves(counted)
    assert sorted(i for i, _ in logged) == list(range(60))
    pids = {pid for _, pid in logged}
    assert os.getpid() in pids and len(pids) > 1, pids  # the driver, then the workers
    ids = stored_ids(tmp_path / "naps" / "results")
    assert len(ids) == len(set(ids)) == 60


def test_a_study_done_before_the_cluster_would_start_never_starts_one(tmp_path):
    """The default study on the default cluster runs in the driver alone (Dask's
    ``distributed`` is never imported) and stores the values ``cluster=sync`` stores."""
    code = (
        "import sys; from pipeline.__main__ import main\n"
        f"sys.argv = ['pipeline', 'paths.outputs={tmp_path / 'local'}', 'run.progress=false']\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "print('distributed' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "False"
    sync = [sys.executable, "-m", "pipeline", "cluster=sync", f"paths.outputs={tmp_path / 'sync'}"]
    assert subprocess.run(sync, capture_output=True, cwd=ROOT).returncode == 0
    columns = ["task_id", "expected_score_exact", "score_variance_exact"]
    local, by_sync = (
        load_results(tmp_path / kind / "paper" / "results")[columns]
        .sort_values("task_id")
        .reset_index(drop=True)
        for kind in ("local", "sync")
    )
    assert local.equals(by_sync)


def test_ctrl_c_while_the_driver_runs_the_first_tasks_says_what_is_stored(
    tmp_path, monkeypatch, capsys, counted
):
    """Ctrl-C in a task the driver runs before the cluster starts: the one line saying what
    is stored, exit 130; the same command then computes the rest, each task once."""
    args = naps(12, 0.0, tmp_path, "cluster.start_after_s=100", "run.batch_size=1")
    monkeypatch.setenv(STOP_AT, "7")
    stopped = cli_run_in_process(monkeypatch, capsys, *args)
    assert stopped.returncode == 130, stopped.stderr
    line = stopped.stderr.strip().splitlines()[-1]
    assert line.startswith("stopped (Ctrl-C): ") and "run the same command again" in line
    before = len(stored_ids(tmp_path / "naps" / "results"))
    assert before == 7 and "7 of 12 tasks computed in this run and stored" in line, line
    monkeypatch.delenv(STOP_AT)
    again = cli_run_in_process(monkeypatch, capsys, *args)
    assert again.returncode == 0, again.stderr
    ids = stored_ids(tmp_path / "naps" / "results")
    assert len(ids) == len(set(ids)) == 12
    assert sorted(i for i, _ in solves(counted)) == list(range(12))


def test_the_cluster_starts_first_for_long_tasks_and_when_a_task_asks_for_it():
    """Tasks expected to be quick leave the cluster unstarted; a task that spreads over the
    cluster, run in the driver, gets the client of the cluster started for it; tasks
    expected to be longer than ``start_after_s`` (or of no estimate) start it at once."""
    cluster = {"kind": "local", "n_workers": 1, "start_after_s": 0.5, "tls": False}
    with open_executor(cluster) as executor:
        executor.expect(0.01, 10)
        assert not executor.started and executor.description.startswith("this process, then")
        with executor.spreading(2) as spread:  # what a spreading task run here is handed
            assert executor.started and spread.places == 1  # the cluster's one worker
            assert spread.gather(spread.submit(sum, [1, 2])) == 3
        assert executor.description.split(",")[:2] == ["LocalCluster", " 1 worker process"]
    with open_executor(cluster) as executor:
        executor.expect(2.0, 1)
        assert executor.started


def _pause(i: int) -> int:
    time.sleep(0.02)
    return i


@pytest.mark.parametrize(
    ("told", "after", "starts"),
    [(None, 0, True), ((0.02, 9), 0, True), ((1e-4, 9), 0, False), ((1e-4, 9), 5.0, True)],
)
def test_calls_run_here_until_they_took_start_after_s_and_the_work_left_is_longer(
    told, after, starts
):
    """Not told what is left (a caller of open_executor), the calls run here until they took
    ``start_after_s``, then the rest go to the started cluster; told that little is left,
    none starts, unless the runs after this one (a search's batches to come) are told to
    take longer. Either way every call completes once, with its own result."""
    import contextlib

    from pipeline.backends.starting import StartingExecutor
    from pipeline.backends.sync import SyncExecutor

    opened = []

    def start():
        opened.append(SyncExecutor())  # stands for the cluster's executor
        return contextlib.nullcontext(opened[-1])

    executor = StartingExecutor(2, "test", start, start_after_s=0.05)
    executor.expect_after(after)
    if told is not None:
        executor.expect(*told)
    handles = {executor.submit(_pause, i): i for i in range(12)}
    done = {call.handle: call.result for call in executor.completed()}
    assert done == handles
    assert executor.started is starts and len(opened) == int(starts)
    assert executor.seconds_here >= 0.05 if starts else executor.seconds_here > 0.2
