"""A refused multirun writes nothing (issue 26, item 4): Hydra wrote the sweep folder and its
multirun.yaml (even outside paths.outputs, with study.name=../../escape) before any job ran."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pipeline.__main__ import main


def multirun(monkeypatch, capsys, *args: str) -> tuple[int, str]:
    """(exit status, stderr) of ``python -m pipeline -m ARGS``, run in this process."""
    monkeypatch.setattr(sys, "argv", ["pipeline", "-m", *args])
    try:
        main()
        status = 0
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    return status, capsys.readouterr().err


def files_under(root: Path) -> list[Path]:
    return sorted(root.rglob("*")) if root.exists() else []


@pytest.mark.parametrize(
    "bad",
    [
        ["study.name=../../escape"],
        ["run.batch_seconds=nan,-1"],  # every job of the sweep refused
        ["store.recompute=no"],
        ["study.grid.deck=[[3,-1]],[[0,3]]"],
    ],
    ids=["escape", "every-job-bad", "not-a-bool", "bad-grids"],
)
def test_a_refused_multirun_writes_nothing_anywhere(tmp_path, monkeypatch, capsys, bad):
    outputs = tmp_path / "deep" / "x"
    monkeypatch.chdir(tmp_path)
    status, err = multirun(
        monkeypatch, capsys, "study=paper", "cluster=sync", f"paths.outputs={outputs}", *bad
    )
    assert status == 2, err
    assert err.startswith("error: ") and "Traceback" not in err
    assert files_under(tmp_path) == []


def test_a_good_multirun_still_runs_every_job(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    status, err = multirun(
        monkeypatch,
        capsys,
        "study=paper",
        "cluster=sync",
        "run.progress=false",
        f"paths.outputs={tmp_path}",
        "run.batch_seconds=2,1",
    )
    assert status == 0, err
    assert len(list((tmp_path / "paper" / "runs").glob("*.yaml"))) == 1  # 2nd job: all stored
    assert list((tmp_path / "paper" / "multirun").glob("*/multirun.yaml"))
