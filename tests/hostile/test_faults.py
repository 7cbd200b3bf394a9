"""Faults a run survives: slow tasks, foreign files in the store, unwritable outputs."""

from __future__ import annotations

import logging
import os
import time
from types import SimpleNamespace

import pandas as pd
import pytest

from pipeline.backends.executor import CallLost
from pipeline.backends.last_worker import LastWorkerWatch, NoWorkerLeft
from pipeline.backends.worker_deaths import WorkerDeaths
from pipeline.errors import StudyError
from pipeline.run import run_study
from pipeline.storage import store
from solvers import Family, Param, Rules, Solver, register
from solvers.params import as_float
from solvers.registry import families
from tests.helpers.repository import ROOT
from tests.helpers.runs import compose_config


def _sleepy(task):
    time.sleep(task["sleep"])
    return [{"slept": task["sleep"]}]


if "test_sleepy" not in families():
    register(
        Family(
            name="test_sleepy",
            version="1",
            rules=Rules(params=(Param("sleep", lambda v: as_float(v, low=0), dtype="float64"),)),
            solver=Solver(run=_sleepy, columns={"slept": "float64"}),
        )
    )


def _cfg(outputs, study, *overrides):
    from omegaconf import OmegaConf

    cfg = OmegaConf.to_container(
        compose_config(f"paths.outputs={outputs}", "run.progress=false", *overrides), resolve=True
    )
    cfg["study"] = study
    return cfg


def test_a_task_past_its_time_limit_is_an_error_row_and_the_rest_completes(outputs):
    study = {"name": "slow", "family": "test_sleepy", "grid": {"sleep": [0.0, 30.0, 0.01]}}
    cfg = _cfg(outputs, study, "cluster=sync", "run.task_timeout_s=1")
    start = time.monotonic()
    report = run_study(cfg, log=lambda *_: None)
    assert time.monotonic() - start < 20
    assert (report.computed, report.errors) == (3, 1)
    rows = store.load_results(outputs / "slow").set_index("sleep")
    assert rows.loc[30.0, "status"] == "error"
    assert "run.task_timeout_s=1" in rows.loc[30.0, "error"]
    assert rows.loc[0.01, "slept"] == 0.01


def test_time_limit_runs_tasks_in_a_child_and_returns_their_rows(outputs):
    from omegaconf import OmegaConf

    paper = OmegaConf.to_container(compose_config().study)
    run_study(_cfg(outputs, paper, "cluster=sync", "run.task_timeout_s=60"), log=lambda *_: None)
    rows = store.load_results(outputs / "paper")
    assert sorted(rows["expected_score_exact"]) == ["2383/560", "475/112"]


def test_a_foreign_or_corrupt_file_is_reported_quarantined_and_never_read(outputs):
    study = {"name": "f", "family": "test_sleepy", "grid": {"sleep": [0.0, 0.001]}}
    cfg = _cfg(outputs, study, "cluster=sync")
    run_study(cfg, log=lambda *_: None)
    folder = outputs / "f" / "results" / "family=test_sleepy"
    (folder / "part-99999999999999999999-deadbeef.parquet").write_bytes(b"PAR1 garbage")
    pd.DataFrame({"task_id": ["x"], "status": ["ok"]}).to_parquet(folder / "notes.parquet")
    (outputs / "f" / "results" / "stray.csv").write_text("a,b\n")
    messages = []
    report = run_study(cfg, log=messages.append)
    assert report.computed == 0
    warned = "\n".join(m for m in messages if m.startswith("warning"))
    assert "deadbeef.parquet" in warned and "unreadable Parquet" in warned
    assert "notes.parquet" in warned and "stray.csv" in warned
    assert sorted(p.name for p in (outputs / "f" / "quarantine").rglob("*.*")) == [
        "notes.parquet",
        "part-99999999999999999999-deadbeef.parquet",
        "stray.csv",
    ]
    rows = store.load_results(outputs / "f")
    assert len(rows) == 2 and set(rows["status"]) == {"ok"}


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_an_unwritable_output_folder_stops_before_any_work(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    cfg = _cfg(locked, {"name": "x", "family": "test_sleepy", "grid": {"sleep": [0.0]}})
    with pytest.raises(StudyError, match="paths.outputs=.*cannot write"):
        run_study(cfg, log=lambda *_: None)


def test_an_output_path_that_is_a_file_stops_before_any_work(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    cfg = _cfg(blocker, {"name": "x", "family": "test_sleepy", "grid": {"sleep": [0.0]}})
    with pytest.raises(StudyError, match="paths.outputs=.*cannot write"):
        run_study(cfg, log=lambda *_: None)
    assert blocker.read_text() == "not a folder"


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("run.task_timeout_s=-1", "run.task_timeout_s"),
        ("run.max_in_flight=0", "run.max_in_flight"),
        ("run.batch_size=zero", "run.batch_size"),
        ("stage=everything", "stage"),
    ],
)
def test_bad_run_settings_name_the_key(outputs, override, key):
    cfg = _cfg(outputs, {"name": "x", "family": "test_sleepy", "grid": {"sleep": [0.0]}}, override)
    with pytest.raises(StudyError, match=key):
        run_study(cfg, log=lambda *_: None)
    assert not outputs.exists()


# Strategies of one's own whose code ends the worker process that runs them (a user's module,
# written into the test's folder); NO_RESTART set, the driver's nannies start no worker
# process after the first (a machine that cannot start one again)
DYING_STRATEGIES = '''
import ctypes
import os
import time


KEPT = []  # what ``how="keep"`` holds in this process for good


def written(size):
    """``size`` bytes, each page written: resident."""
    block = bytearray(max(0, size))
    block[::4096] = b"x" * len(block[::4096])
    return block


class Dying:
    """Guesses the first type with cards left, after ending its process as ``how`` says
    (``exit``, ``segfault``, ``memory``: ``mb`` MB more at each guess), or, ``keep``, holding
    87% of its Dask worker's memory limit for good from its first task there."""

    def __init__(self, how="exit", mb=0):
        self.how, self.mb, self.held = how, mb, []

    def start(self, deck):
        if self.how == "keep" and not KEPT:
            import psutil
            from distributed import get_worker

            try:
                limit = get_worker().memory_manager.memory_limit
            except ValueError:  # not on a worker
                return tuple(deck)
            KEPT.append(written(int(0.87 * limit) - psutil.Process().memory_info().rss))
            time.sleep(1.0)  # the worker's memory is checked twice a second: seen held
        return tuple(deck)

    def guess(self, belief):
        if self.how == "exit":
            os._exit(3)
        if self.how == "segfault":
            ctypes.string_at(0)
        if self.how == "memory":
            self.held.append(written(self.mb * 2**20))
        return next(t for t, left in enumerate(belief) if left)

    def update(self, belief, guess, yes):
        return belief[:guess] + (belief[guess] - yes,) + belief[guess + 1 :]


if os.environ.get("NO_RESTART"):
    import distributed.nanny

    _start = distributed.nanny.WorkerProcess.start
    _started = []

    async def _start_once(process):
        if _started:
            raise RuntimeError("this machine starts no more worker processes")
        _started.append(process)
        return await _start(process)

    distributed.nanny.WorkerProcess.start = _start_once
'''

DYING_STUDY = """
name: dying
family: card_guessing
grid:
  deck: [[2, 2]]
strategies:
  greedy: {}
  dying:
    _target_: dying.Dying
    how: [exit]
"""

DIES_WITHIN_S = 120  # a run whose worker dies ends well within it (it waited for ever)


def run_dying(folder, *overrides, env=None):
    """``python -m pipeline`` on the study ``dying`` (the greedy strategy and ``Dying`` as
    ``overrides`` set it) on a LocalCluster started at once; (the process, its output lines,
    the seconds it took)."""
    from tests.helpers.commands import cli

    studies = folder / "studies" / "study"
    studies.mkdir(parents=True, exist_ok=True)
    (studies / "dying.yaml").write_text(DYING_STUDY)
    (folder / "dying.py").write_text(DYING_STRATEGIES)
    args = ["--config-dir", str(folder / "studies"), "study=dying", "cluster=local"]
    env = {"PYTHONPATH": f"{folder}{os.pathsep}{ROOT}", **(env or {})}
    start = time.monotonic()
    done = cli(
        *args,
        "cluster.start_after_s=0",
        "run.progress=false",
        "run.quiet=true",  # the run's own lines, without the summary's headline table
        f"paths.outputs={folder / 'out'}",
        *overrides,
        cwd=folder,
        env=env,
        timeout=DIES_WITHIN_S,
    )
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    return done, lines, time.monotonic() - start


def assert_no_dask_noise(lines):
    text = "\n".join(lines)
    for noise in ("Traceback", "Restarting", "exceeded", "KilledWorker", "nanny", "SIGTERM"):
        assert noise not in text, text


@pytest.mark.slow
def test_a_strategy_over_the_workers_memory_limit_is_an_error_row_naming_it(tmp_path):
    """A strategy holding 600 MB on a worker limited to 300 MB: its nanny ends the worker
    (each time it runs the task), and the task's row is an error naming the strategy, its
    arguments and the memory limit; one line says so, no Dask line reaches the output, the
    other strategy's row is stored, exit 1."""
    done, lines, _ = run_dying(
        tmp_path,
        "cluster.n_workers=1",
        "cluster.memory_limit=300MB",
        "study.strategies.dying.how=[memory]",
        "+study.strategies.dying.mb=[600]",
    )
    assert done.returncode == 1, lines
    assert_no_dask_noise(lines)
    rows = store.load_results(tmp_path / "out" / "dying").set_index("strategy")
    assert rows.loc["greedy", "status"] == "ok"
    error = rows.loc["dying", "error"]
    assert error.startswith("batch lost: strategy 'dying' (dying.Dying, how='memory', mb=600): ")
    assert "more than the worker's memory limit (300.0 MB, cluster.memory_limit=300MB)" in error
    said = [line for line in lines if line.startswith("warning: a batch of 1 task was lost")]
    assert len(said) == 1 and "strategy 'dying' (dying.Dying, how='memory', mb=600)" in said[0]
    # the study, the cluster, the lost batch, the study done, the summary, and the failed
    # task: its count, its strategy with its first error line, where its row is
    assert len(lines) == 8, lines


@pytest.mark.slow
def test_a_strategy_that_ends_its_process_is_a_lost_batch_naming_it_and_how(tmp_path):
    """``os._exit`` and a segmentation fault in a strategy's code end the worker process each
    time the task runs: the task's row names the strategy, its arguments and how the process
    ended, one line says so; the run goes on, exit 1.  Each in a run of its own: with two
    tasks ending workers at once, Dask may hold one task on a worker the other ends."""
    ended = {
        "exit": "its process exited with status 3",
        "segfault": "killed by SIGSEGV (a crash in compiled code)",
    }
    for how, words in ended.items():
        done, lines, _ = run_dying(tmp_path / how, f"study.strategies.dying.how=[{how}]")
        assert done.returncode == 1, lines
        assert_no_dask_noise(lines)
        rows = store.load_results(tmp_path / how / "out" / "dying")
        errors = dict(zip(rows["strategy_params"], rows["error"], strict=True))
        assert rows.set_index("strategy").loc["greedy", "status"] == "ok"
        error = errors[f'{{"how":"{how}"}}']
        assert error.startswith(f"batch lost: strategy 'dying' (dying.Dying, how='{how}'): ")
        assert words in error, error
        said = [line for line in lines if line.startswith("warning: a batch of 1 task was lost")]
        assert len(said) == 1, lines
        assert len(lines) == 8, lines  # as above: one lost batch and one failed task


@pytest.mark.slow
def test_a_strategy_keeping_most_of_the_workers_memory_does_not_stall_the_run(tmp_path):
    """A strategy that keeps 87% of its worker's memory limit for good (over the 80% at which
    Dask would pause the worker until memory is freed, under the 95% at which it ends it):
    the worker goes on taking batches, every task is stored, exit 0, nothing else said."""
    done, lines, _ = run_dying(
        tmp_path,
        "cluster.n_workers=1",
        "cluster.memory_limit=300MB",
        "study.strategies.dying.how=[keep]",
        "study.grid.deck=[[2,2],[3,3],[2,2,2],[4,4]]",
        "run.batch_size=1",
    )
    assert done.returncode == 0, lines
    rows = store.load_results(tmp_path / "out" / "dying")
    assert len(rows) == 8 and set(rows["status"]) == {"ok"}
    assert len(lines) == 4, lines  # the study, the cluster, the study done, the summary


@pytest.mark.slow
def test_a_local_cluster_left_without_workers_stops_the_run_with_one_line(tmp_path):
    """A worker process that dies and cannot be started again leaves the LocalCluster
    without workers: the run does not wait for ever; the batches that were on the worker are
    stored as failed tasks naming their strategy, and one line says why the run stops,
    exit 2."""
    done, lines, took = run_dying(
        tmp_path,
        "cluster.n_workers=1",
        "study.strategies.dying.how=[exit]",
        env={"NO_RESTART": "1"},
    )
    assert done.returncode == 2, lines
    assert took < DIES_WITHIN_S
    assert_no_dask_noise(lines)
    assert lines[-1].startswith("error: cluster=local: the LocalCluster has no worker left"), lines
    assert "Dask could not start its worker processes again" in lines[-1]
    assert "its process exited with status 3" in lines[-1]
    rows = store.load_results(tmp_path / "out" / "dying").set_index("strategy")
    error = rows.loc["dying", "error"]
    assert error.startswith("batch lost: strategy 'dying' (dying.Dying, how='exit'): ")
    assert "the LocalCluster has no worker left" in error


def test_a_nanny_s_restart_cancelled_as_the_cluster_closes_is_kept_off_the_output():
    """A nanny starting a worker again when the cluster closes logs the CancelledError with
    its traceback and no message (Dask's ``log_errors``): it goes to the run's log as one
    line, not to the terminal; any other error the nanny logs still shows."""
    import asyncio
    import sys

    deaths = WorkerDeaths()

    def logged(error: BaseException) -> logging.LogRecord:
        try:
            raise error
        except BaseException:
            info = sys.exc_info()
        return logging.LogRecord(
            "distributed.nanny", logging.ERROR, "nanny.py", 1, error, None, info
        )

    assert not deaths.filter(logged(asyncio.CancelledError()))
    assert deaths.lines[-1].endswith("(the cluster closed)")
    assert deaths.filter(logged(RuntimeError("Nanny failed to start")))


def nanny_line(name: str, text: str, level: int = logging.WARNING) -> logging.LogRecord:
    return logging.LogRecord(name, level, "nanny.py", 1, text, None, None)


def test_dask_s_lines_about_dying_workers_are_read_and_taken_off_the_output():
    """Each of Dask's lines about a worker process that dies is kept for the run's log and
    not printed; what it says (exit status, signal, over the memory limit) names how the
    last process that ran a lost call ended.  Other lines pass as their logger's level has
    it (the nanny's INFO lines, let through to the filter, go no further)."""
    deaths = WorkerDeaths("300.0 MB, cluster.memory_limit=300MB")
    said = {
        nanny_line("distributed.nanny", "Worker process 11 exited with status 3", logging.INFO),
        nanny_line("distributed.nanny", "Worker process 12 was killed by signal 11", logging.INFO),
        nanny_line(
            "distributed.nanny.memory",
            "Worker tls://127.0.0.1:4000 (pid=13) exceeded 95% memory budget. Restarting...",
        ),
        nanny_line("distributed.nanny", "Restarting worker (status=Status.running)"),
        nanny_line("distributed.worker.memory", "Unmanaged memory use is high. This may ..."),
    }
    assert not any(deaths.filter(record) for record in said)
    assert len(deaths.lines) == len(said)
    assert deaths.filter(nanny_line("distributed.scheduler", "Some other warning"))
    assert not deaths.filter(nanny_line("distributed.nanny", "Start Nanny at", logging.INFO))
    assert deaths.how_it_ended(11) == (
        "its process exited with status 3 (code in the task ended it: os._exit, or a "
        "library's exit)"
    )
    assert deaths.how_it_ended(12) == "its process was killed by SIGSEGV (a crash in compiled code)"
    assert deaths.how_it_ended(13) == (
        "Dask ended it for holding more than the worker's memory limit (300.0 MB, "
        "cluster.memory_limit=300MB)"
    )

    class KilledWorker(Exception):  # as distributed.scheduler's, as far as it is read
        allowed_failures = 3
        last_worker = SimpleNamespace(pid=11)

    lost = deaths.explained(KilledWorker())
    assert isinstance(lost, CallLost)
    assert str(lost).startswith("the worker process running it died each of the 4 times")
    assert str(lost).endswith(
        "the last time its process exited with status 3 (code in the "
        "task ended it: os._exit, or a library's exit)"
    )
    other = RuntimeError("boom")
    assert deaths.explained(other) is other


class FakeCluster:
    """A LocalCluster as LastWorkerWatch reads it: its scheduler's workers and tasks, its
    nannies' states, its loop (``sync``)."""

    def __init__(self, workers: int, nannies: list[str], suspicious: dict[str, int]):
        tasks = {k: SimpleNamespace(suspicious=n) for k, n in suspicious.items()}
        self.scheduler = SimpleNamespace(workers=dict.fromkeys(range(workers)), tasks=tasks)
        self.workers = {
            i: SimpleNamespace(status=SimpleNamespace(name=s)) for i, s in enumerate(nannies)
        }

    def sync(self, fn):
        import asyncio

        return asyncio.run(fn())


def test_a_local_cluster_without_workers_stops_the_wait_naming_the_batches_it_held():
    """The watch lets the driver wait while the scheduler has a worker, or a nanny starts
    one (up to its grace); with no worker and none starting it raises NoWorkerLeft naming
    the calls that were on a worker that died."""
    deaths = WorkerDeaths()
    pending = lambda: ["a", "b", "c"]  # noqa: E731
    LastWorkerWatch(FakeCluster(1, ["running"], {"a": 1}), deaths, pending)()  # a worker
    restarting = LastWorkerWatch(FakeCluster(0, ["running"], {"a": 1}), deaths, pending)
    restarting()  # a nanny starts its worker again: the wait goes on
    restarting.grace = 0
    with pytest.raises(NoWorkerLeft, match="no worker has joined its scheduler for 0 s"):
        restarting()
    gone = LastWorkerWatch(FakeCluster(0, ["closed"], {"a": 1, "b": 0}), deaths, pending)
    with pytest.raises(NoWorkerLeft) as stop:
        gone()
    assert stop.value.lost == {"a"}
    assert "its worker processes were closed and none took their place" in str(stop.value)
    assert "stored as failed tasks: those of the 1 batch it held" in str(stop.value)
    assert "the LocalCluster has no worker left" in stop.value.why


def test_a_handshake_cut_short_as_a_worker_dies_is_not_counted_as_a_refusal():
    """A worker process killed while it connects leaves its TLS handshake half done, which
    the listener logs as it logs a stranger's refused connection: one within a second of a
    worker's death is not counted (its line goes to the run's log with the deaths); one at
    another time, or a handshake that failed otherwise, still is."""
    from pipeline.backends.refusals import Refusals

    def handshake(when: float, why: str) -> logging.LogRecord:
        text = f"Listener on 'tls://127.0.0.1:1': TLS handshake failed with remote 'x': {why}"
        record = nanny_line("distributed.comm.tcp", text)
        record.created = when
        return record

    refused = Refusals()
    eof = "[SSL: UNEXPECTED_EOF_WHILE_READING] EOF occurred in violation of protocol (_ssl.c:1)"
    refused.add(handshake(100.0, eof), "connection")  # as a worker died at 100.002
    refused.add(handshake(200.0, eof), "connection")  # a stranger leaving half way
    refused.add(handshake(100.1, "[SSL] certificate required"), "connection")
    forgiven = refused.forgive([100.002])
    assert len(forgiven) == 1 and "EOF occurred" in forgiven[0]
    seen = refused.take()
    assert seen["count"] == 2 and forgiven[0] not in seen["lines"]
