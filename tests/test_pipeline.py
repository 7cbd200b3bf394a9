"""A study run end to end (pipeline/run.py): on a local cluster, rerun, resumed after lost
files, beside another job writing the same store, with a failing task, and from the command
line, where bad input exits 2 naming its key."""

from __future__ import annotations

import re

import pytest

from pipeline.errors import StudyError
from pipeline.run import run_study
from pipeline.running import driver, worker
from pipeline.running.plan import plan
from pipeline.storage import store, store_upkeep
from solvers import Family, Param, Rules, Solver, register, solve
from solvers.kit.words import counted
from solvers.params import as_int
from solvers.registry import families, get_family
from tests.helpers.commands import cli, cli_run_in_process
from tests.helpers.folders import copy_outputs
from tests.helpers.repository import ROOT
from tests.helpers.runs import compose_config, run
from tests.helpers.store_rows import write_rows

config = compose_config


def _plain(node):
    from omegaconf import OmegaConf

    return OmegaConf.to_container(node, resolve=True)


# ----------------------------------------------------------------- end to end runs


def test_paper_study_on_a_local_cluster_with_two_workers(outputs):
    report = run(outputs, "cluster=local", "cluster.n_workers=2")
    assert (report.planned, report.computed, report.errors) == (2, 2, 0)
    rows = store.load_results(outputs / "paper")
    got = dict(zip(rows["strategy"], rows["expected_score_exact"], strict=True))
    assert got == {"optimal": "2383/560", "greedy": "475/112"}
    assert set(rows["status"]) == {"ok"} and rows["task_id"].is_unique
    summary = (outputs / "paper" / "summary.md").read_text()
    assert "2383/560" in summary and "475/112" in summary
    assert "ratio_to_optimal" in summary
    assert list((outputs / "paper" / "summary").glob("*.png"))
    meta = store.file_metadata(store.result_files(outputs / "paper" / "results")[0])
    assert meta["config"]["study"]["name"] == "paper"
    assert {"dask", "pyarrow", "guesslab"} <= set(meta["packages"])
    assert meta["code_version"] and meta["solver_version"] == get_family("card_guessing").version


def test_rerun_recomputes_nothing_and_recompute_replaces_rows(paper_outputs, outputs):
    copy_outputs(paper_outputs, outputs)
    files = store.result_files(outputs / "paper" / "results")
    again = run(outputs, "cluster=sync")
    assert (again.skipped, again.computed) == (2, 0)
    assert store.result_files(outputs / "paper" / "results") == files
    forced = run(outputs, "cluster=sync", "store.recompute=true")
    assert forced.computed == 2
    rows = store.load_results(outputs / "paper")
    assert len(rows) == 2 and rows["task_id"].is_unique


def test_rows_of_an_older_family_version_are_computed_again_and_summarised_apart(
    outputs, monkeypatch
):
    """Rows stored by an older version of a family are never served to a study: the next run
    computes every task again at the current version, the store keeps the old files, and the
    summary reads the current version's rows only, with a line saying what it leaves out."""
    import dataclasses

    from solvers import registry

    current = get_family("card_guessing")
    with monkeypatch.context() as patched:
        patched.setitem(
            registry._FAMILIES, "card_guessing", dataclasses.replace(current, version="1")
        )
        old = run(outputs, "cluster=sync")
    assert old.computed == 2 and current.version != "1"
    results = outputs / "paper" / "results"
    old_files = store.result_files(results)
    again = run(outputs, "cluster=sync")
    assert (again.skipped, again.computed) == (0, 2)
    assert set(old_files) < set(store.result_files(results))  # the old rows are kept
    assert len(store.load_results(outputs / "paper")) == 4
    read = store.family_rows(results, "card_guessing", "ok").frame()
    assert len(read) == 2 and set(read["expected_score_exact"]) == {"2383/560", "475/112"}
    summary = (outputs / "paper" / "summary.md").read_text()
    assert (
        f"`card_guessing`: the store keeps {counted(len(old_files), 'results file')} written by "
        f"other versions of its code, left out here (`1`; 2 rows; this version: "
        f"`{current.version}`"
    ) in summary.replace("\n", " ")
    assert run(outputs, "cluster=sync").skipped == 2


def another_job_s_rows(task) -> list[dict]:
    """The rows another job of the "paper" study writes for a planned task."""
    rows = solve(task.task)
    for row in rows:
        row["task_id"], row["study"] = task.task_id, "paper"
    return rows


def test_a_fresh_run_skips_the_final_compaction_unless_another_job_wrote(outputs, monkeypatch):
    """The closing compaction (a read of every file) runs only when rows may repeat: a rerun
    of stored tasks, or files another job wrote into the store meanwhile (here a row of the
    same task, written while this run was going); each task keeps one row either way."""
    compactions = []
    real_compact = store_upkeep.compact
    monkeypatch.setattr(
        store_upkeep, "compact", lambda files: compactions.append(1) or real_compact(files)
    )
    run(outputs, "cluster=sync")
    assert len(compactions) == 1  # the tidy-up before the run; nothing to drop after it

    task = plan(_plain(config().study))[0]
    real_write = driver.write_encoded

    def write_beside_another_job(folder, files):
        # the other job's row of the same task lands first
        if not folder.result_files():
            other = another_job_s_rows(task)
            real_write(folder, worker.encode_rows(other, b'{"written_by": "another job"}'))
        return real_write(folder, files)

    monkeypatch.setattr(driver, "write_encoded", write_beside_another_job)
    compactions.clear()
    run(outputs.parent / "second", "cluster=sync")
    assert len(compactions) == 2
    rows = store.load_results(outputs.parent / "second" / "paper")
    assert len(rows) == 2 and rows["task_id"].is_unique


def test_a_file_landing_just_after_the_opening_compaction_is_compacted_away(outputs, monkeypatch):
    """Another job's row of a task this run will compute lands right after the opening
    compaction has read the store: the run still ends with one row per task."""
    task = plan(_plain(config().study))[0]
    real_compact = store_upkeep.compact
    calls = []

    def compact_then_another_job_writes(files):
        status = real_compact(files)
        if not calls:
            results = outputs / "paper" / "results"
            write_rows(results, another_job_s_rows(task), {"written_by": "another job"})
        calls.append(1)
        return status

    monkeypatch.setattr(store_upkeep, "compact", compact_then_another_job_writes)
    report = run(outputs, "cluster=sync")
    assert report.computed == 2
    rows = store.load_results(outputs / "paper")
    assert len(rows) == 2 and rows["task_id"].is_unique


def test_resume_after_losing_result_files(outputs):
    """Run, delete some result files, run again: the rows come back, none twice."""
    overrides = (
        "cluster=sync",
        "study.grid.deck=[[3,3,3],[2,2,2],[2,2],[1,1,1]]",
        "run.batch_size=1",
    )
    run(outputs, *overrides)
    results = outputs / "paper" / "results"
    files = store.result_files(results)
    assert len(files) == 8
    before = store.load_results(results).sort_values("task_id")
    for path in files[::3]:
        path.unlink()
    report = run(outputs, *overrides)
    assert report.computed == 3 and report.skipped == 5
    after = store.load_results(results).sort_values("task_id")
    assert after["task_id"].is_unique and len(after) == 8
    assert after["expected_score_exact"].tolist() == before["expected_score_exact"].tolist()


def _boom(task):
    if task["n"] == 3:
        raise ArithmeticError("three is unlucky")
    return [{"value": float(task["n"])}]


if "test_flaky" not in families():
    register(
        Family(
            name="test_flaky",
            version="1",
            rules=Rules(params=(Param("n", lambda v: as_int(v, low=0), dtype="int64"),)),
            solver=Solver(run=_boom, columns={"value": "float64"}),
        )
    )


def test_a_failing_task_becomes_an_error_row_and_is_retried(outputs, tmp_path):
    study = {"name": "flaky", "family": "test_flaky", "grid": {"n": [1, 2, 3]}}
    cfg = _plain(config(f"paths.outputs={outputs}", "cluster=sync", "run.progress=false"))
    cfg["study"] = study
    report = run_study(cfg, log=lambda *_: None)
    assert (report.computed, report.errors) == (3, 1)
    rows = store.load_results(outputs / "flaky").set_index("n")
    assert rows.loc[3, "status"] == "error" and "three is unlucky" in rows.loc[3, "error"]
    assert rows.loc[2, "value"] == 2.0
    summary = (outputs / "flaky" / "summary.md").read_text()
    assert "three is unlucky" in summary
    again = run_study(cfg, log=lambda *_: None)
    assert (again.skipped, again.computed, again.errors) == (2, 1, 1)
    assert store.load_results(outputs / "flaky")["task_id"].is_unique


# ---------------------------------------------------------------- the command line


def test_one_task_is_said_in_the_singular_in_the_plan_the_run_and_the_summary(
    tmp_path, monkeypatch, capsys
):
    """A study of one task: the plan, the run's lines and summary.md say "1 task", "1 sampled
    task", "1 result row", never "1 tasks"."""
    one = [f"paths.outputs={tmp_path}", "~study.strategies.greedy", "cluster=sync"]
    plan = cli_run_in_process(monkeypatch, capsys, *one, "stage=plan")
    assert plan.returncode == 0, plan.stderr
    assert "study paper: 1 task (1 grid, 1 strategy), 0 already stored, 1 to run" in plan.stdout
    assert "(the family's estimate, from 1 sampled task)" in plan.stdout
    done = cli_run_in_process(monkeypatch, capsys, *one, "run.progress=false")
    assert done.returncode == 0, done.stderr
    assert "study paper: 1 task, 0 already stored" in done.stdout
    assert "running 1 task on this process" in done.stdout
    summary = (tmp_path / "paper" / "summary.md").read_text()
    assert "1 task, 1 result row: 1 ok, 0 failed" in summary
    assert "1 tasks" not in plan.stdout + done.stdout + summary


def test_every_count_of_a_run_s_lines_marks_its_thousands(monkeypatch):
    """The run's line, the line of a run stopped while computing or while writing the
    summary, and the summary's status line write every count in one style: thousands
    marked (3,606), as the plan's line does."""
    import signal
    from pathlib import Path

    import pandas as pd

    from pipeline.cli import exit_lines
    from pipeline.run import StudyReport
    from pipeline.storage.store_overview import StoreCounts, status_line
    from pipeline.storage.study_folder import StudyFolder

    report = StudyReport(
        "grid", StudyFolder(Path("/studies/grid")), 3606, 1200, 2406, 1001, stage="run"
    )
    monkeypatch.setattr(exit_lines, "_stored_counts", lambda folder: (3606, 2605))
    by_status = pd.DataFrame(
        {"family": ["f", "f"], "status": ["ok", "error"], "rows": [2605, 1001],
         "tasks": [2605, 1001], "seconds": [1.0, 2.0]}
    )  # fmt: skip
    lines = [
        report.line(),
        exit_lines.stopped_message(report, signal.SIGINT),
        exit_lines.summary_stopped_message(report, signal.SIGINT, ""),
        status_line(StoreCounts(by_status, 3606)),
    ]
    run_line = "study grid: 3,606 tasks, 1,200 already stored, 2,406 computed, 1,001 failed"
    assert run_line in lines[0]
    assert "2,406 of 3,606 tasks computed" in lines[1] and "the 1,200 stored" in lines[1]
    assert "the store holds 3,606 tasks (2,605 ok)" in lines[2]
    assert lines[3].startswith("3,606 tasks, 3,606 result rows: 2,605 ok, 1,001 failed;")
    assert not [n for line in lines for n in re.findall(r"\d{4,}", line)], lines


def test_cli_runs_the_default_study(tmp_path):
    """The command runs the default study, saying where its tasks run in words, and ends
    with the summary's first table fitted to the terminal's 80 columns (the answer: greedy's
    475/112 against the optimum's 2383/560, as docs/usage.md shows it); with run.quiet=true,
    with the summary's path."""
    res = cli("cluster=sync", f"paths.outputs={tmp_path}", env={"COLUMNS": "80"})
    assert res.returncode == 0, res.stderr
    assert "running 2 tasks on this process (cluster=sync)\n" in res.stdout
    summary = tmp_path / "paper" / "summary.md"
    assert summary.exists()
    assert not (ROOT / "outputs" / "paper" / "hydra").exists()
    said = res.stdout.splitlines()
    table = said[said.index(f"summary: {summary}") + 1 :]
    assert table[:2] == ["", "Deck (3,3,3), partial feedback"], said
    assert all(len(line) <= 80 for line in table), table
    (exact,) = [line for line in table if line.startswith("expected_score_exact ")]
    assert exact.split()[1:] == ["475/112", "2383/560"], table
    assert "\n".join(table) + "\n```" in (ROOT / "docs" / "usage.md").read_text()  # as shown
    quiet = cli("cluster=sync", f"paths.outputs={tmp_path}", "run.quiet=true")
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout.splitlines()[-1] == f"summary: {summary}", quiet.stdout


def test_multirun_jobs_share_one_store_and_summary(tmp_path, monkeypatch, capsys):
    """A multirun of the basic launcher (its jobs run one after another in the command's
    process), run in this process: one store, one summary, and each row names its run (the
    job's run record) and its Hydra job, which tell the jobs' rows apart (and no search or
    trial: no search computed them)."""
    res = cli_run_in_process(
        monkeypatch,
        capsys,
        "-m",
        "study=paper",
        "study.grid.deck=[[3,3,3]],[[2,2,2]]",
        "cluster=sync",
        f"paths.outputs={tmp_path}",
    )
    assert res.returncode == 0, res.stderr
    rows = store.load_results(tmp_path / "paper")
    assert sorted(rows["deck"].unique()) == ["2,2,2", "3,3,3"] and len(rows) == 4
    records = sorted(p.stem for p in (tmp_path / "paper" / "runs").glob("*.yaml"))
    assert sorted(rows["run"].unique()) == records and len(records) == 2
    decks = rows.groupby("job")["deck"].agg(lambda d: sorted(set(d)))
    assert decks.to_dict() == {0: ["3,3,3"], 1: ["2,2,2"]}
    assert rows.groupby("job")["run"].nunique().to_dict() == {0: 1, 1: 1}
    assert rows["search"].isna().all() and rows["trial"].isna().all()  # no search computed them
    summary = (tmp_path / "paper" / "summary.md").read_text()
    assert "Deck (2,2,2)" in summary and "Deck (3,3,3)" in summary


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("study.grid.deck=[[3,-1,3]]", "study.grid.deck=[3, -1, 3]"),
        ("study.grid.deck=[[3,2.5]]", "study.grid.deck=[3, 2.5]"),
        ("study.grid.deck=[[]]", "study.grid.deck=[]"),
        ("study.family=poker", "study.family='poker'"),
        ("+study.strategies.psychic={}", "study.strategies.psychic"),
        ("+study.grid.colour=[red]", "study.grid.colour='red'"),
        ("study.grid.deck=[[13,13,13,13]]", "too large for the exact solver"),
        ("study=nonexistent", "study='nonexistent': unknown study; valid:"),
        ("cluster=moon", "cluster='moon': unknown cluster; valid:"),
        ("cluster=address", "cluster.address"),
    ],
)
def test_bad_input_exits_2_naming_the_key_and_writes_nothing(
    tmp_path, monkeypatch, capsys, override, key
):
    """The command in this process (as tests/hostile/test_hostile_input.py runs its bad values): the
    exit status, the message and the store are what is checked, not the process."""
    res = cli_run_in_process(monkeypatch, capsys, "cluster=sync", f"paths.outputs={tmp_path}",
                             override)  # fmt: skip
    assert res.returncode == 2, res.stdout + res.stderr
    assert key in res.stderr
    assert "Traceback" not in res.stderr
    assert not tmp_path.exists() or not any(tmp_path.rglob("*.parquet"))


def test_bad_values_never_touch_existing_results(paper_outputs, outputs):
    copy_outputs(paper_outputs, outputs)
    files = {p: p.read_bytes() for p in store.result_files(outputs / "paper" / "results")}
    with pytest.raises(StudyError, match="study.grid.deck"):
        run(outputs, "cluster=sync", "study.grid.deck=[[0,3]]")
    assert {p: p.read_bytes() for p in store.result_files(outputs / "paper" / "results")} == files


def test_a_local_cluster_run_prints_no_dask_chatter(tmp_path):
    """Dask configures its child loggers when imported (after the run began): the local
    backend quiets them again, so a run on the LocalCluster prints the pipeline's lines only."""
    args = "cluster.start_after_s=0", "run.progress=false"
    res = cli(f"paths.outputs={tmp_path}", *args, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    output = res.stdout + res.stderr
    assert "running 2 tasks on LocalCluster" in output
    for chatter in ("Start Nanny", "Registering Worker", "Scheduler at", "State start"):
        assert chatter not in output
