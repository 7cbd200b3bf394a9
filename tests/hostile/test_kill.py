"""Processes killed mid-study (SIGKILL): a worker, the driver itself, the driver while it
recomputes stored tasks (each then has rows in two files until the next compaction: every
reader keeps the newest), and a summary killed mid-write (its staging folder goes)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from distributed.diagnostics.plugin import WorkerPlugin

from pipeline.backends import Backend
from pipeline.config import plain
from pipeline.outputs.index import read_study
from pipeline.outputs.summary import write_summary
from pipeline.run import run_study
from pipeline.running.provenance import run_metadata
from pipeline.storage import store, store_overview, store_upkeep
from pipeline.storage.study_folder import StudyFolder
from solvers.registry import get_family
from tests.helpers.nap_driver import nap_overrides, register_nap
from tests.helpers.repository import ROOT
from tests.helpers.runs import compose_config, run
from tests.helpers.store_rows import write_rows

NAP_DRIVER = ROOT / "tests" / "helpers" / "nap_driver.py"


class NapFamily(WorkerPlugin):
    """A Dask worker plugin: every worker, restarted ones too, knows the test_nap family."""

    def setup(self, worker) -> None:
        register_nap()


def wait_for_files(results: Path, n: int, timeout: float = 120) -> int:
    """How many results files exist once there are at least ``n`` (or the time is up)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = len(store.result_files(results))
        if found >= n:
            return found
        time.sleep(0.02)
    raise AssertionError(f"fewer than {n} results files after {timeout} s")


def assert_every_file_complete(results: Path) -> None:
    for path in store.result_files(results):
        assert store_upkeep.bad_file_reason(path) is None, path
        pq.read_table(path)  # the whole file reads


@pytest.mark.slow
def test_a_worker_killed_mid_study_loses_and_duplicates_nothing(outputs, monkeypatch):
    register_nap()
    results = outputs / "naps" / "results"
    killed: list[int] = []
    real_open = Backend.open

    def kill_a_worker(client) -> None:
        wait_for_files(results, 4)
        pids = client.run(os.getpid)  # worker address -> its process id
        victim = sorted(pids.values())[0]
        os.kill(victim, signal.SIGKILL)
        killed.append(victim)

    @contextlib.contextmanager
    def open_and_kill(backend):
        with real_open(backend) as executor:
            executor.client.register_plugin(NapFamily(), name="nap-family")
            killer = threading.Thread(target=kill_a_worker, args=(executor.client,), daemon=True)
            killer.start()
            yield executor
            killer.join(timeout=60)

    monkeypatch.setattr(Backend, "open", open_and_kill)
    overrides = [*nap_overrides(30, 0.15), "cluster=local", "cluster.n_workers=2"]
    report = run(outputs, *overrides)
    assert killed, "no worker was killed"
    rows = store.load_results(outputs / "naps")
    assert sorted(rows["woke"]) == list(range(30))  # every task's row, exactly once
    assert rows["task_id"].is_unique and (rows["status"] == "ok").all()
    assert report.computed == 30 and report.errors == 0
    assert_every_file_complete(results)


@pytest.mark.slow
def test_a_driver_killed_mid_study_leaves_complete_files_and_a_rerun_finishes(outputs):
    register_nap()  # this process reads the files of the naps' family
    command = [
        sys.executable,
        str(NAP_DRIVER),
        "60",
        "0.1",
        "cluster=sync",
        "run.batch_size=1",
        "run.progress=false",
        f"paths.outputs={outputs}",
    ]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "cwd": ROOT}
    driver = subprocess.Popen(command, **quiet)
    results = outputs / "naps" / "results"
    try:
        wait_for_files(results, 8)
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait()
    assert driver.returncode == -signal.SIGKILL
    assert_every_file_complete(results)
    before = store.load_results(outputs / "naps")
    assert 8 <= len(before) < 60 and before["task_id"].is_unique

    again = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert again.returncode == 0, again.stderr
    assert f"60 tasks, {len(before)} already stored" in again.stdout
    after = store.load_results(outputs / "naps")
    assert sorted(after["woke"]) == list(range(60))  # the rest completed, no row twice
    assert after["task_id"].is_unique and (after["status"] == "ok").all()
    assert_every_file_complete(results)
    assert not list(results.glob("family=*/.*.tmp"))  # a killed write's temporary is gone


def raw_rows(results: Path) -> int:
    """The rows a plain Parquet reader sees (pyarrow's dataset over the results folder)."""
    return ds.dataset(results, partitioning="hive").count_rows()


def run_naps(outputs: Path, n: int, *more: str):
    register_nap()
    overrides = [*nap_overrides(n, 0), "cluster=sync", "run.progress=false", *more]
    cfg = compose_config(f"paths.outputs={outputs}", *overrides)
    return cfg, run_study(cfg, log=lambda *_: None)


def test_every_reader_keeps_the_newest_rows_of_a_task_stored_twice(outputs):
    """What a run killed between storing rerun tasks and compacting leaves: their older rows
    in older files.  Every reader (load_results, the store's counts, the DuckDB helper, the
    summary) keeps each task's rows of the newest file, and counts the older ones as
    superseded."""
    cfg, _ = run_naps(outputs, 6)
    study, results = outputs / "naps", outputs / "naps" / "results"
    first = store.load_results(study).sort_values("woke").head(3).astype(object)
    rerun = first.where(first.notna(), None).to_dict("records")
    for row in rerun[:2]:
        row["woke"] += 100  # a recomputed value, to tell the newer row from the older
    rerun[2].update(status="error", error="RuntimeError: boom", woke=None)
    # a newer file, as a rerun writes
    write_rows(results, rerun, run_metadata(plain(cfg), get_family("test_nap")))
    assert raw_rows(results) == 9  # what a plain Parquet reader sees until compaction

    rows = store.load_results(study)
    assert len(rows) == 6 and rows["task_id"].is_unique
    assert sorted(rows["woke"].dropna().astype(int)) == [3, 4, 5, 100, 101]
    assert (rows["status"] == "error").sum() == 1
    counts = store_overview.store_counts(results)
    assert (counts.rows, counts.tasks, counts.rows_with("ok"), counts.superseded) == (6, 6, 5, 3)
    ok = store.family_rows(results, "test_nap", "ok")  # the DuckDB helper
    assert ok.count() == 5
    assert sorted(ok.frame()["woke"]) == [3, 4, 5, 100, 101]
    assert sorted(ok.query("SELECT woke FROM rows")["woke"]) == [3, 4, 5, 100, 101]
    write_summary(StudyFolder(study), {"name": "naps"})
    assert "6 tasks, 6 result rows: 5 ok, 1 failed" in (study / "summary.md").read_text()
    assert "6 tasks, 6 result rows: 5 ok, 1 failed" in (study / "report.html").read_text()
    status = read_study(StudyFolder(study))[1]  # the index's line of the study
    assert (status["tasks"], status["ok"], status["failed"]) == (6, 5, 1)
    assert raw_rows(results) == 9  # the summary above read the store; it changed nothing

    run_naps(outputs, 6, "stage=summary")  # the summary stage compacts the store
    assert raw_rows(results) == 6
    assert sorted(store.load_results(study)["woke"].dropna().astype(int)) == [3, 4, 5, 100, 101]


@pytest.mark.slow
def test_a_driver_killed_while_it_recomputes_leaves_one_row_per_task_for_every_reader(outputs):
    command = [
        sys.executable,
        str(NAP_DRIVER),
        "60",
        "0.05",
        "cluster=sync",
        "run.batch_size=1",
        "run.progress=false",
        f"paths.outputs={outputs}",
    ]
    study, results = outputs / "naps", outputs / "naps" / "results"
    first = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert first.returncode == 0, first.stderr
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "cwd": ROOT}
    driver = subprocess.Popen([*command, "store.recompute=true"], **quiet)
    try:
        wait_for_files(results, 60 + 8)  # 8 tasks recomputed and stored, not compacted
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait()
    twice = raw_rows(results) - 60
    assert twice >= 8  # a plain Parquet reader sees those tasks twice
    rows = store.load_results(study)
    assert len(rows) == 60 and rows["task_id"].is_unique
    assert store_overview.store_counts(results).rows == 60

    summary = subprocess.run(
        [*command, "stage=summary"], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert summary.returncode == 0, summary.stderr
    assert f"store: {twice} superseded rows dropped" in summary.stdout
    assert "60 tasks, 60 result rows: 60 ok" in (study / "summary.md").read_text()
    assert raw_rows(results) == 60  # compacted: every reader sees one row per task
    assert_every_file_complete(results)


def _dead_pid() -> int:
    gone = subprocess.Popen(["true"])
    gone.wait()
    return gone.pid


@pytest.mark.parametrize("stage", ["summary", "run"])
def test_the_next_summary_or_run_removes_staging_folders_of_dead_processes(outputs, stage):
    """A summary killed mid-write left its ``.summary.staging-PID`` for ever."""
    run_naps(outputs, 3, "stage=run")
    study = outputs / "naps"
    dead = study / f".summary.staging-{_dead_pid()}"
    (dead / "summary").mkdir(parents=True)
    (dead / "summary" / "half_a_figure.png").write_bytes(b"\x89PNG")
    alive = subprocess.Popen(["sleep", "60"])
    try:
        live = study / f".summary.staging-{alive.pid}"  # a summary still writing
        (live / "summary").mkdir(parents=True)
        run_naps(outputs, 4, f"stage={stage}")
        assert not dead.exists()
        assert (live / "summary").is_dir()
    finally:
        alive.kill()
        alive.wait()
