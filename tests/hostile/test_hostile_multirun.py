"""A refused multirun writes nothing: no sweep folder, no multirun.yaml, no job folder (not
even outside paths.outputs, with study.name=../../escape)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.commands import cli_in_process


def multirun(monkeypatch, capsys, *args: str) -> tuple[int, str]:
    """(exit status, stderr) of ``python -m pipeline -m ARGS``, run in this process."""
    return cli_in_process(monkeypatch, capsys, "-m", *args)


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


@pytest.mark.parametrize("launcher", ["basic", "joblib"])
def test_a_refused_job_of_a_good_sweep_writes_nothing_anywhere(
    tmp_path, monkeypatch, capsys, launcher
):
    """A sweep of study.name=good,../../ESCAPED: the refused job makes no folder anywhere
    (none from its own overrides, none outside paths.outputs); every job runs in the one
    sweep folder Hydra made for the good job, which holds only multirun.yaml."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    status, err = multirun(
        monkeypatch,
        capsys,
        "cluster=sync",
        "run.progress=false",
        "paths.outputs=A/out",
        "study.name=good,../../ESCAPED",
        f"hydra/launcher={launcher}",
    )
    assert status == 2 and "study.name='../../ESCAPED'" in err, err
    outside = [p for p in files_under(tmp_path) if work / "A" not in (p, *p.parents)]
    assert outside == [work]
    sweeps = list((work / "A" / "out" / "paper" / "multirun").iterdir())
    assert len(sweeps) == 1 and [p.name for p in sweeps[0].iterdir()] == ["multirun.yaml"]
    good = work / "A" / "out" / "good"
    assert (good / "summary.md").is_file() and not (good / "multirun").exists()
