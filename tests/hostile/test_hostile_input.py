"""Hostile input: every bad value is a config error, exit
status 2, one line naming the key, before any work; a forked task never outlives its job."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.backends.local import max_workers
from pipeline.errors import StudyError
from pipeline.run import run_study
from tests.helpers.commands import cli_in_process
from tests.helpers.repository import ROOT
from tests.helpers.runs import compose_config


def nothing_at_all(root: Path) -> bool:
    return not root.exists() or not any(root.iterdir())


# -------------------------------------------------------------- item 1: runaway processes

CHILD_MUST_NOT_RETURN = """
import os, select, sys, time
sys.path.insert(0, {root!r})
from pipeline.running import worker
from solvers import solve

def broken_select(*args, **kwargs):
    raise OverflowError("timeout value is too large")

def slow_solve(*args, **kwargs):
    time.sleep(1.0)  # the child writes its result after the parent gave up and closed the pipe
    return solve(*args, **kwargs)

worker.select.select = broken_select  # the parent fails while its child is still running
worker.solve = slow_solve
task = {{"family": "card_guessing", "deck": [2, 2], "feedback": "none", "strategy": "optimal"}}
try:
    worker.solve_with_timeout(task, 10.0)
except Exception:  # as batch_rows does: the task gets an error row, the study goes on
    pass
print("returned in", os.getpid(), flush=True)
"""


def test_a_forked_task_never_returns_into_the_driver():
    """A task forked for its time limit never returns into the driver's code: with select
    failing in the parent (as for run.task_timeout_s=1e12), the child's failed pipe write
    still ends the child."""
    code = CHILD_MUST_NOT_RETURN.format(root=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.count("returned in") == 1, out.stdout + out.stderr


@pytest.mark.parametrize("value", ["1e12", "inf", "nan", "-1", "0", "2592001"])
@pytest.mark.parametrize("cluster", ["sync", "local"])
def test_absurd_task_time_limits_are_refused_up_front(tmp_path, value, cluster):
    cfg = compose_config(f"paths.outputs={tmp_path}", f"cluster={cluster}")
    cfg.run.task_timeout_s = float(value)
    with pytest.raises(StudyError, match=r"^run.task_timeout_s="):
        run_study(cfg, log=lambda *_: None)
    assert nothing_at_all(tmp_path)


# ------------------------------------------------- items 5, 7, 8: exit 2, one line, no write

BAD = [
    ("store.recompute=no", "store.recompute"),  # item 5: strings are not booleans
    ('store.recompute="false"', "store.recompute"),
    ("store.recompute=1", "store.recompute"),
    ("cluster.dashboard=maybe", "cluster.dashboard"),
    ("run.progress=maybe", "run.progress"),
    ("run.quiet=yes", "run.quiet"),
    ("run.batch_seconds=nan", "run.batch_seconds"),  # item 7: unchecked values
    ("run.batch_seconds=inf", "run.batch_seconds"),
    ("run.batch_seconds=-1", "run.batch_seconds"),
    ("cluster.memory_limit=lots", "cluster.memory_limit"),
    ("cluster.memory_limit=[1]", "cluster.memory_limit"),  # a list or a mapping, not a size
    ("cluster.memory_limit={a: 1}", "cluster.memory_limit"),
    ("cluster.n_workers=100000", "cluster.n_workers"),
    ("study.grid.foo=[1]", "study.grid.foo"),  # item 8: Hydra's errors are config errors
    ("foo=1", "foo"),
    ("study.grid.deck=[[3,3", "study.grid.deck=[[3,3"),
    ("+run.foo=1", "run.foo"),
    ("paths.outputs=${oc.env:GUESSLAB_ISSUE26_UNSET}", "paths.outputs"),
]


@pytest.mark.parametrize(("override", "key"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_value_exits_2_with_one_line_naming_the_key(
    tmp_path, monkeypatch, capsys, override, key
):
    status, err = cli_in_process(monkeypatch, capsys, f"paths.outputs={tmp_path}", override)
    assert status == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {key}"), err
    assert nothing_at_all(tmp_path)


@pytest.mark.parametrize(
    "override", ["cluster.timeout=abc", "cluster.timeout=-5s", "cluster.timeout=[1]"]
)
def test_a_bad_scheduler_timeout_exits_2(tmp_path, monkeypatch, capsys, override):
    args = ["cluster=address", "cluster.address=tcp://127.0.0.1:1", override]
    status, err = cli_in_process(monkeypatch, capsys, f"paths.outputs={tmp_path}", *args)
    assert status == 2 and err.startswith("error: cluster.timeout="), err


def test_a_study_file_that_is_not_yaml_exits_2_naming_file_and_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "study").mkdir()
    bad = tmp_path / "study" / "broken.yaml"
    bad.write_text("name: broken\nfamily: card_guessing\ngrid:\n  deck: [[3, 3]\n  x: : :\n")
    args = ["--config-dir", str(tmp_path), "study=broken", f"paths.outputs={tmp_path / 'o'}"]
    status, err = cli_in_process(monkeypatch, capsys, *args)
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert str(bad) in err and "line 5" in err


def test_many_workers_need_an_explicit_override(tmp_path):
    cfg = compose_config(f"paths.outputs={tmp_path}", "cluster.n_workers=100000")
    with pytest.raises(StudyError, match="cluster.oversubscribe=true"):
        run_study(cfg, log=lambda *_: None)
    assert nothing_at_all(tmp_path)


def test_the_most_local_workers_are_four_a_core_within_the_memory_and_never_none():
    assert max_workers(2, 24 * 2**30) == 8  # the cores bound it
    assert max_workers(64, 2**30) == 4  # the memory bounds it (256 MiB a worker)
    assert max_workers(1, 2**20) == 1


# ------------------------------------------------------------ hydra.run.dir: Hydra's run folder


def unmakeable_run_dirs(root: Path) -> list[str]:
    """Run folders no file system makes: under a file, a name of 100,000 characters, and
    (where there is a /proc) a folder in /proc."""
    (root / "a_file").write_text("")
    dirs = [str(root / "a_file" / "sub"), "x" * 100_000]
    return [*dirs, "/proc/nope"] if Path("/proc/self").is_dir() else dirs


@pytest.mark.parametrize("which", [0, 1, 2], ids=["under-a-file", "100k-characters", "proc"])
def test_a_run_folder_that_cannot_be_made_exits_2_with_one_line(
    tmp_path, monkeypatch, capsys, which
):
    """A ``hydra.run.dir`` that cannot be made is refused in one line naming the key and its
    value (shortened, its length said), exit 2, before the plan is read: no traceback."""
    monkeypatch.chdir(tmp_path)
    dirs = unmakeable_run_dirs(tmp_path)
    if which >= len(dirs):
        pytest.skip("no /proc here")
    args = [f"paths.outputs={tmp_path / 'o'}", f"hydra.run.dir={dirs[which]}", "stage=plan"]
    status, err = cli_in_process(monkeypatch, capsys, *args)
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1, err
    assert lines[0].startswith("error: hydra.run.dir=") and len(lines[0]) < 400, err
    assert "cannot make this folder" in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]


@pytest.mark.parametrize("args", [["stage=plan"], ["stage=bogus"], ["run.batch_seconds=nan"]])
def test_a_run_that_writes_nothing_makes_no_run_folder(tmp_path, monkeypatch, capsys, args):
    """Hydra's run folder is not made by ``stage=plan`` nor by a refused command."""
    monkeypatch.chdir(tmp_path)
    outputs = f"paths.outputs={tmp_path / 'o'}"
    cli_in_process(monkeypatch, capsys, outputs, f"hydra.run.dir={tmp_path / 'run'}", *args)
    assert not (tmp_path / "run").exists() and not (tmp_path / "o").exists()


def test_a_run_that_writes_makes_its_run_folder(tmp_path, monkeypatch, capsys):
    """A run that stores results makes its ``hydra.run.dir``, as Hydra does."""
    monkeypatch.chdir(tmp_path)
    args = [f"paths.outputs={tmp_path / 'o'}", "cluster=sync", "run.progress=false"]
    status, err = cli_in_process(monkeypatch, capsys, *args, "hydra.run.dir=run/deep")
    assert status == 0, err
    assert (tmp_path / "run" / "deep").is_dir() and (tmp_path / "o" / "paper").is_dir()
