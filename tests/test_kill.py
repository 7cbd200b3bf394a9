"""Processes killed mid-study (SIGKILL): a worker, then the driver itself."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import ROOT
from distributed.diagnostics.plugin import WorkerPlugin
from nap_driver import nap_overrides, register_nap
from tests_support import compose_config

import pipeline.run
from pipeline import store
from pipeline.run import run_study

NAP_DRIVER = ROOT / "tests" / "nap_driver.py"


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
        assert store.bad_file_reason(path) is None, path
        pq.read_table(path)  # the whole file reads


@pytest.mark.slow
def test_a_worker_killed_mid_study_loses_and_duplicates_nothing(outputs, monkeypatch):
    register_nap()
    results = outputs / "naps" / "results"
    killed: list[int] = []
    real_open = pipeline.run.open_runner

    def kill_a_worker(client) -> None:
        wait_for_files(results, 4)
        pids = client.run(os.getpid)  # worker address -> its process id
        victim = sorted(pids.values())[0]
        os.kill(victim, signal.SIGKILL)
        killed.append(victim)

    @contextlib.contextmanager
    def open_and_kill(cluster):
        with real_open(cluster) as runner:
            runner.client.register_plugin(NapFamily(), name="nap-family")
            killer = threading.Thread(target=kill_a_worker, args=(runner.client,), daemon=True)
            killer.start()
            yield runner
            killer.join(timeout=60)

    monkeypatch.setattr(pipeline.run, "open_runner", open_and_kill)
    overrides = [*nap_overrides(30, 0.15), "cluster=local", "cluster.n_workers=2"]
    cfg = compose_config(f"paths.outputs={outputs}", "run.progress=false", *overrides)
    report = run_study(cfg, log=lambda *_: None)
    assert killed, "no worker was killed"
    rows = store.load_results(outputs / "naps")
    assert sorted(rows["woke"]) == list(range(30))  # every task's row, exactly once
    assert rows["task_id"].is_unique and (rows["status"] == "ok").all()
    assert report.computed == 30 and report.errors == 0
    assert_every_file_complete(results)


@pytest.mark.slow
def test_a_driver_killed_mid_study_leaves_complete_files_and_a_rerun_finishes(outputs):
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
