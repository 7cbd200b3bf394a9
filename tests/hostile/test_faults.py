"""Faults a run survives: slow tasks, foreign files in the store, unwritable outputs."""

from __future__ import annotations

import os
import time

import pandas as pd
import pytest

from pipeline import store
from pipeline.config import StudyError
from pipeline.run import run_study
from solvers import Family, Param, register
from solvers.params import as_float
from solvers.registry import families
from tests.helpers.runs import compose_config


def _sleepy(task):
    time.sleep(task["sleep"])
    return [{"slept": task["sleep"]}]


if "test_sleepy" not in families():
    register(
        Family(
            name="test_sleepy",
            version="1",
            params=(Param("sleep", lambda v: as_float(v, low=0), dtype="float64"),),
            run=_sleepy,
            columns={"slept": "float64"},
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
