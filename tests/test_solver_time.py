"""Solver time is counted once per task wherever it is added up: every row of a task carries
the task's ``seconds`` (a Markov-chain task of ``triples`` has a row per level), and the
store's counts, the summary, the report and batch sizing sum it per task, not per row."""

from __future__ import annotations

import pytest

from pipeline.storage import store, store_overview
from tests.helpers.runs import run


@pytest.fixture(scope="module")
def hitting_store(tmp_path_factory):
    """The store of ``triples_hitting`` on a smaller deck: 4 tasks of many rows each."""
    outputs = tmp_path_factory.mktemp("hitting")
    report = run(
        outputs, "study=triples_hitting", "cluster=sync", "study.grid.ranks=[6]",
        "study.grid.start=[1,2,3,4]",
    )  # fmt: skip
    assert report.errors == 0 and report.computed == 4
    return outputs / "triples_hitting"


def per_task_seconds(rows) -> float:
    """The solver seconds of the rows' tasks, each task once (plain pandas)."""
    return float(rows.groupby("task_id")["seconds"].max().sum())


def test_the_store_counts_a_task_s_seconds_once(hitting_store):
    """store_counts and frame_counts: the seconds of each task once, however many rows."""
    rows = store.load_results(hitting_store / "results")
    assert len(rows) > 2 * rows["task_id"].nunique()  # many rows per task
    counts = store_overview.store_counts(hitting_store / "results")
    assert counts.seconds == pytest.approx(per_task_seconds(rows), rel=1e-12)
    assert counts.seconds < rows["seconds"].sum() / 2  # the per-row sum is what it is not
    assert store_overview.frame_counts(rows).seconds == pytest.approx(counts.seconds, rel=1e-12)
    assert counts.rows == len(rows) and counts.tasks == rows["task_id"].nunique()


def test_the_summary_and_report_quote_the_per_task_sum(hitting_store):
    """The summary's and the report's status lines give the per-task sum."""
    seconds = store_overview.store_counts(hitting_store / "results").seconds
    line = f"{seconds:.2f} s of solver time"
    assert line in (hitting_store / "summary.md").read_text()
    assert line in (hitting_store / "report.html").read_text()
