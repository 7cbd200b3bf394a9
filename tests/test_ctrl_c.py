"""Ctrl-C in a terminal, as a terminal sends it: SIGINT to the whole foreground process group
(the driver and its LocalCluster workers), once or twice.  The command prints the one
documented line and exits 130: no worker's traceback, no Dask warning (it printed ~75
lines, 273 on a second Ctrl-C); stopped before any batch was stored, it leaves nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

from pipeline import store

NAP_DRIVER = ROOT / "tests" / "nap_driver.py"


def _as_a_terminal_job() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a shell's background job ignores SIGINT
    os.setpgrp()  # a process group of its own, as a terminal's foreground job


def ctrl_c(outputs: Path, nap: float, ready, times: int) -> tuple[int, str, str]:
    """Run 40 naps on a 2-worker LocalCluster; once ``ready()``, send SIGINT to the process
    group ``times`` times, 0.2 s apart; (exit status, stdout, stderr)."""
    command = [
        sys.executable,
        str(NAP_DRIVER),
        "40",
        str(nap),
        "cluster=local",
        "cluster.n_workers=2",
        "run.batch_size=1",
        "run.progress=false",
        f"paths.outputs={outputs}",
    ]
    driver = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        preexec_fn=_as_a_terminal_job,
    )
    try:
        deadline = time.monotonic() + 120
        while not ready() and time.monotonic() < deadline and driver.poll() is None:
            time.sleep(0.05)
        assert driver.poll() is None, driver.communicate()
        for n in range(times):
            if n:
                time.sleep(0.2)
            os.killpg(driver.pid, signal.SIGINT)
        out, err = driver.communicate(timeout=60)
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
            driver.communicate()
    return driver.returncode, out, err


def assert_one_line(status: int, out: str, err: str, start: str) -> str:
    assert status == 130, (out, err)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(start), err
    for noise in ("Traceback", "KeyboardInterrupt", "CancelledError", "still alive", "Restart"):
        assert noise not in out + err, (out, err)
    return lines[0]


@pytest.mark.slow
@pytest.mark.parametrize("times", [1, 2])
def test_ctrl_c_while_workers_compute_is_one_line(tmp_path, times):
    results = tmp_path / "naps" / "results"
    status, out, err = ctrl_c(tmp_path, 0.3, lambda: len(store.result_files(results)) >= 3, times)
    line = assert_one_line(status, out, err, "stopped (Ctrl-C): ")
    assert str(results) in line and "run the same command again" in line
    assert store.result_files(results)


@pytest.mark.slow
@pytest.mark.parametrize("times", [1, 2])
def test_ctrl_c_before_any_batch_is_stored_leaves_nothing(tmp_path, times):
    outputs = tmp_path / "outputs"
    runs = outputs / "naps" / "runs"

    def started() -> bool:  # the cluster answered and the workers nap (30 s a task)
        if not list(runs.glob("*.yaml")):
            return False
        time.sleep(1.0)
        return True

    status, out, err = ctrl_c(outputs, 30, started, times)
    line = assert_one_line(status, out, err, "stopped (Ctrl-C) before any task finished")
    assert "nothing was stored" in line
    assert not outputs.exists(), sorted(outputs.rglob("*"))
