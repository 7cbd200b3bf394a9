"""``stage=plan``'s estimate of a run's time (pipeline/run_estimate.py) against the runs of
the shipped studies measured in docs/data/plan_estimates.yaml
(benchmarks/bench_plan_estimate.py writes it)."""

from __future__ import annotations

import pytest
import yaml

from benchmarks.bench_plan_estimate import study_estimate
from pipeline.run_estimate import FIXED_S, PER_TASK_S, run_time
from tests.helpers.repository import ROOT

DATA = ROOT / "docs" / "data" / "plan_estimates.yaml"


@pytest.fixture(scope="module")
def measured() -> dict:
    return yaml.safe_load(DATA.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def estimates(measured) -> dict[str, dict[str, float]]:
    """The estimate of each measured study by the code as it is now."""
    return {name: study_estimate(name) for name in measured["studies"]}


def test_every_shipped_study_is_measured_or_listed_as_not_measured(measured):
    """A study added to conf/study/ must be run by the benchmark (or listed, with why, as
    too long to run), so the table cannot forget it; and no entry names a study that is
    gone."""
    shipped = {p.stem for p in (ROOT / "conf" / "study").glob("*.yaml")}
    runs, skipped = set(measured["studies"]), set(measured["not_measured"])
    assert not runs & skipped
    assert runs | skipped == shipped, (
        f"missing {shipped - runs - skipped}, gone {runs | skipped - shipped}"
    )
    assert all(why.strip() for why in measured["not_measured"].values())


def test_the_estimate_is_within_2x_of_each_measured_run(measured, estimates):
    """For every measured study, the estimate of the code as it is now is within a factor
    of 2 of the run's CPU time (what the run takes on an idle machine on two workers, where
    the shared machine's wall time is not a fair measure); the data file's estimate column
    is the code's (the table is not stale)."""
    for name, row in measured["studies"].items():
        now = estimates[name]
        ratio = now["cpu_s"] / row["cpu_s"]
        assert 0.5 <= ratio <= 2, (
            f"{name}: estimate {now['cpu_s']:.1f} s / measured {row['cpu_s']} s"
        )
        assert row["tasks"] == now["tasks"], name
        assert row["estimate_cpu_s"] == pytest.approx(now["cpu_s"], rel=0.02, abs=0.1), name
        assert row["ratio"] == pytest.approx(now["cpu_s"] / row["cpu_s"], abs=0.01), name


def test_a_run_s_fixed_costs_are_counted_beside_its_tasks():
    """A run of tiny tasks costs its start, summary and report (and its cluster when one
    starts); on an idle machine the tasks' time is spread over the workers."""
    tiny = run_time(2, 0.01, 2, serial=False, start_after_s=0.5)
    assert not tiny.cluster and tiny.cpu_s == pytest.approx(FIXED_S + 0.01 + 2 * PER_TASK_S)
    big = run_time(1000, 100.0, 2, serial=False, start_after_s=0.5)
    assert big.cluster and big.cpu_s > FIXED_S + 100 and big.wall_s < big.cpu_s / 1.8
    assert run_time(1000, 100.0, 2, serial=True, start_after_s=None).wall_s > 100
    long_tasks = run_time(3, 3.0, 2, serial=False, start_after_s=0.5)  # 1 s a task: at once
    assert long_tasks.cluster


def test_stage_plan_says_the_run_time(monkeypatch, capsys, tmp_path):
    """``stage=plan`` prints the run's time beside the tasks' solver time."""
    from tests.helpers.commands import cli_run_in_process

    out = cli_run_in_process(
        monkeypatch, capsys, "study=gamma_sweep", "stage=plan", f"paths.outputs={tmp_path}"
    )
    assert out.returncode == 0, out.stderr
    assert "run time: about" in out.stdout and "of CPU" in out.stdout, out.stdout
