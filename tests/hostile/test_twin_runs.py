"""Two runs of one study folder computing the same tasks (pipeline/running/claims.py): the second is
refused before it computes anything (exit 2, one line naming the study folder and the other
run), and the first finishes with its checkpoints untouched; runs of different tasks still
compute at once, and a killed run's claim stops nobody."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from pipeline.errors import StudyError
from pipeline.run import prepared
from pipeline.running import claims
from pipeline.storage.study_folder import CLAIMS
from solvers.high_low.float_layers import solver
from solvers.kit.budget import Budget
from solvers.kit.task_context import TaskContext
from tests.helpers.commands import own_study_command
from tests.helpers.nap_driver import nap_overrides, register_nap
from tests.helpers.repository import ROOT
from tests.helpers.runs import compose_config, run

TWIN = """\
name: twin
family: high_low
grid:
  ranks: [9]
  suits: [4]
  ties: [lose]
  method: [float]
strategies:
  optimal: {}
"""


def twin_command(folder: Path) -> list[str]:
    """The float layers of the 9 x 4 deck (36 layers, each committed as a checkpoint), run
    in the driver's process into ``folder``/out."""
    return own_study_command(
        folder, "twin", f"paths.outputs={folder / 'out'}", "cluster=sync", "run.progress=false",
        "stage=run",
    )  # fmt: skip


def files_of(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` with its bytes (links not followed)."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def wait_until_stopped(pid: int, timeout: float = 30) -> None:
    """Until every thread of process ``pid`` is stopped (SIGSTOP takes effect when a thread
    next leaves the kernel: one on another core may still finish a write meanwhile)."""
    deadline = time.monotonic() + timeout
    while True:
        states = []
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(FileNotFoundError):  # a thread that has just ended
                states.append((task / "stat").read_text().rpartition(")")[2].split()[0])
        if all(state in "tT" for state in states):
            return
        assert time.monotonic() < deadline, f"process {pid} not stopped: {states}"
        time.sleep(0.005)


@pytest.mark.slow
def test_a_second_run_of_the_same_long_task_is_refused_and_the_first_finishes(tmp_path):
    """The first run is stopped (SIGSTOP) once a layer of its task is committed, the same
    command is started: it exits 2 with one line naming the study folder and the first run's
    process, and writes nothing; the first run, resumed, stores the value of a plain solve
    and clears its checkpoints."""
    (tmp_path / "studies" / "study").mkdir(parents=True)
    (tmp_path / "studies" / "study" / "twin.yaml").write_text(TWIN)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    study = tmp_path / "out" / "twin"
    first = subprocess.Popen(
        twin_command(tmp_path),
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not list(study.glob("checkpoints/*/.seals/layer-*.json")):
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline, "no layer committed in time"
            time.sleep(0.005)
        first.send_signal(signal.SIGSTOP)  # computing: its claim and its checkpoints held
        wait_until_stopped(first.pid)  # a write under way when the signal came is finished
        before = files_of(study)
        second = subprocess.run(
            twin_command(tmp_path), cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )
        assert files_of(study) == before  # checkpoints, claim and store as they were
        first.send_signal(signal.SIGCONT)
        out, err = first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()
    assert second.returncode == 2, second.stdout + second.stderr
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in second.stderr, second.stderr
    assert lines[0].startswith("error: paths.outputs=")
    assert str(study) in lines[0] and f"process {first.pid} on host" in lines[0]
    assert "another run is computing 1 of the 1 task this run" in lines[0]
    assert first.returncode == 0, out + err
    rows = pd.read_parquet(study / "results")
    assert list(rows["status"]) == ["ok"]
    plain = solver.solve(9, 4, "lose", "optimal", True, "memory",
                               TaskContext(Budget(10**12, "a test's budget")))  # fmt: skip
    assert rows["p_perfect"].iloc[0] == pytest.approx(plain.p, rel=1e-12, abs=0)
    assert len(list((study / "runs").glob("*.yaml"))) == 1  # the first run's record only
    assert not (study / "checkpoints").exists() and not (study / CLAIMS).exists()


# ---------------------------------------------------------------- claims, in this process


def naps(outputs: Path, n: int, seconds: float) -> list[str]:
    """The overrides of a study of ``n`` naps of ``seconds`` under cluster=sync, results
    under ``outputs`` (the family test_nap registered in this process)."""
    register_nap()
    return [*nap_overrides(n, seconds), "cluster=sync", f"paths.outputs={outputs}"]


def claimed_by_another_run(outputs: Path, n: int, seconds: float) -> claims.Claim:
    """A claim on the tasks of ``naps(n, seconds)`` left to run, as another live run holds
    it (its own open file, so its lock stops this process's runs as another process's
    would)."""
    register_nap()
    other = prepared(compose_config(*naps(outputs, n, seconds)), log=lambda *_: None)
    stored = other.folder.stored_ids()
    return claims.claim(other, other.plan.left_to_run(stored), stored)


@pytest.mark.parametrize("n_claimed, n_ours", [(4, 4), (2, 4), (6, 3)])
def test_a_run_is_refused_when_a_live_run_claims_one_of_its_tasks(tmp_path, n_claimed, n_ours):
    with claimed_by_another_run(tmp_path, n_claimed, 0):
        with pytest.raises(StudyError) as refused:
            run(tmp_path, *naps(tmp_path, n_ours, 0))
        message = str(refused.value)
        shared = min(n_claimed, n_ours)
        assert f"another run is computing {shared} of the {n_ours} tasks this run" in message
        assert str(tmp_path / "naps") in message and f"process {os.getpid()} on host" in message
        assert not (tmp_path / "naps" / "results").exists()  # nothing computed or stored
        assert not (tmp_path / "naps" / "runs").exists()
    report = run(tmp_path, *naps(tmp_path, n_ours, 0))  # the claim released: it runs
    assert report.computed == n_ours
    assert not (tmp_path / "naps" / CLAIMS).exists()


def test_runs_of_different_tasks_of_one_study_folder_compute_at_once(tmp_path):
    """The jobs of a parallel multirun (one nap length each) share the study folder."""
    with claimed_by_another_run(tmp_path, 4, 0.001):
        report = run(tmp_path, *naps(tmp_path, 4, 0))
        assert report.computed == 4
        assert len(list((tmp_path / "naps" / CLAIMS).glob("*.json"))) == 1  # theirs


def test_a_killed_run_s_claim_is_removed_and_stops_nobody(tmp_path):
    dead = claimed_by_another_run(tmp_path, 4, 0)
    os.close(dead.fd)  # what the kernel does when the run's process dies: its file stays
    dead.fd = None
    assert len(list((tmp_path / "naps" / CLAIMS).iterdir())) == 1
    report = run(tmp_path, *naps(tmp_path, 4, 0))
    assert report.computed == 4
    assert not (tmp_path / "naps" / CLAIMS).exists()


def test_a_run_with_nothing_left_to_compute_claims_nothing(tmp_path):
    run(tmp_path, *naps(tmp_path, 3, 0))
    with claimed_by_another_run(tmp_path, 3, 0) as theirs:
        assert theirs.fd is None  # every task stored: no claim, nobody refused
        assert run(tmp_path, *naps(tmp_path, 3, 0)).skipped == 3


def test_a_live_claim_whose_tasks_cannot_be_listed_counts_as_all_of_them(tmp_path):
    """A claim of a family unknown here (another guesslab, another GUESSLAB_FAMILIES): the
    run cannot tell which tasks it holds, so it assumes every one."""
    with claimed_by_another_run(tmp_path, 2, 0) as theirs:
        who = json.loads(theirs.path.read_text())
        who["study"]["family"] = "no_such_family"
        theirs.path.write_text(json.dumps(who))  # the same file: its lock stays held
        with pytest.raises(StudyError) as refused:
            run(tmp_path, *naps(tmp_path, 3, 0.5))  # tasks of its own, but who can tell
        message = str(refused.value)
        assert "another run is computing 3 of the 3 tasks this run" in message
        assert "its tasks cannot be listed here" in message and "no_such_family" in message
