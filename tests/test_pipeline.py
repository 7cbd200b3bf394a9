"""The study runner end to end: configs, grid, Dask, store, resume, summaries, bad input."""

from __future__ import annotations

import pandas as pd
import pyarrow.parquet as pq
import pytest
from conftest import ROOT
from helpers.store_rows import write_rows
from tests_support import cli, cli_run_in_process, compose_config, reference_task_id, run

from pipeline import store, store_layout, store_upkeep, store_writes
from pipeline.config import StudyError
from pipeline.run import run_study
from pipeline.study import plan, planned
from solvers import Family, Param, register, solve
from solvers.registry import as_int, families

STUDIES = sorted(p.stem for p in (ROOT / "conf" / "study").glob("*.yaml"))


config = compose_config


# ------------------------------------------------------------------------- configs


@pytest.mark.parametrize("name", STUDIES)
def test_every_study_config_composes_and_plans(name):
    """Each conf/study/*.yaml composes through Hydra and expands to valid tasks."""
    cfg = config(f"study={name}")
    assert cfg.study.name == name
    tasks = plan(_plain(cfg.study))
    assert tasks and len({t.task_id for t in tasks}) == len(tasks)
    assert all(t.task_id == reference_task_id(t.task) for t in tasks)  # ids as defined


def test_config_defaults_live_in_conf_only():
    """The typed config has no defaults of its own (conf/ holds each, once): every field of
    every model is required, and the composed config passes the check as it is.  The study
    file's models are the exception: a study's keys are optional (grid and strategies, or
    grids), and absent means not given."""
    from pydantic import BaseModel

    from pipeline import config as schema

    models = [m for m in vars(schema).values() if isinstance(m, type) and issubclass(m, BaseModel)]
    assert len(models) > 6 and set(schema.STUDY_MODELS) <= set(models)
    for model in set(models) - set(schema.STUDY_MODELS):
        assert all(f.is_required() for f in model.model_fields.values()), model
    for cluster in ("sync", "local", "address", "slurm"):
        extra = ["cluster.address=tcp://127.0.0.1:1"] if cluster == "address" else []
        checked = schema.checked_config(_plain(config(f"cluster={cluster}", *extra)))
        assert checked.cluster.kind == cluster


@pytest.mark.parametrize("name", STUDIES)
def test_planning_checks_each_axis_value_once_with_the_same_result(name):
    """plan() checks each axis value once and the whole-task check once per class
    (solvers.grid); the tasks, their order and their ids equal those of validating every
    combination in full, hashing it, and keeping each task's first occurrence."""
    study = _plain(config(f"study={name}").study)
    fast = plan(study)
    assert [(t.task_id, t.task) for t in fast] == reference_plan(study)
    assert len(planned(study)) == len(fast)


def reference_plan(study: dict) -> list[tuple[str, dict]]:
    """The brute-force plan: every combination validated and hashed, first occurrences."""
    import itertools

    from solvers.registry import task_id, validate

    shared = study.get("grid") or {}
    parts = study.get("grids") or [{"strategies": study.get("strategies")}]
    out: dict[str, dict] = {}
    for part in parts:
        axes = {**shared, **(part.get("grid") or {})}
        strategies = part.get("strategies")
        own_axes = {None: {}} if strategies is None else {s: a or {} for s, a in strategies.items()}
        for strategy, own in own_axes.items():
            all_axes = {**axes, **own}
            fixed = {"family": study["family"]}
            if strategy is not None:
                fixed["strategy"] = strategy
            for combo in itertools.product(*all_axes.values()):
                task = validate({**fixed, **dict(zip(all_axes, combo, strict=True))})
                out.setdefault(task_id(task), task)
    return list(out.items())


def test_planning_reports_a_bad_value_deep_in_a_grid_by_its_config_key():
    """A bad value met after the first task (the checked-once path) still names its key."""
    study = {
        "name": "deep",
        "family": "card_guessing",
        "grid": {"deck": [[3, 3, 3], [2, 2], [4, 0, 1]], "feedback": ["partial"]},
        "strategies": {"info": {"gamma": [0.1, 0.2, -0.5]}},
    }
    with pytest.raises(StudyError, match=r"study.strategies.info.gamma=-0.5: must be"):
        plan(study)
    study["strategies"] = {"greedy": {}}
    bad_deck = r"study.grid.deck=\[4, 0, 1\]: must be a list of positive integers"
    with pytest.raises(StudyError, match=bad_deck):
        plan(study)


def test_a_planned_task_owns_its_lists():
    """Tasks sharing an axis value get their own copies (mutating one leaves the rest)."""
    study = {
        "name": "own",
        "family": "card_guessing",
        "grid": {"deck": [[3, 3, 3]], "feedback": ["partial"]},
        "strategies": {"info": {"gamma": [0.1, 0.2, 0.3]}},
    }
    tasks = plan(study)
    tasks[1].task["deck"].append(9)
    assert tasks[0].task["deck"] == tasks[2].task["deck"] == [3, 3, 3]


def _plain(node):
    from omegaconf import OmegaConf

    return OmegaConf.to_container(node, resolve=True)


def test_default_config_is_the_paper_study_on_a_local_cluster():
    cfg = config()
    assert cfg.study.name == "paper" and cfg.cluster.kind == "local"
    assert cfg.cluster.n_workers == 2 and cfg.cluster.threads_per_worker == 1


def test_strategy_axes_multiply_only_their_own_rows():
    study = _plain(config("study.grid.deck=[[3,3,3],[2,2]]").study)
    study["strategies"]["greedy"]["tie_break"] = ["lowest", "highest", "uniform"]
    tasks = plan(study)
    by_strategy = pd.Series([t.task["strategy"] for t in tasks]).value_counts()
    assert by_strategy["optimal"] == 2 and by_strategy["greedy"] == 6


def test_a_study_may_list_several_grids_sharing_axes():
    study = {
        "name": "mixed",
        "family": "card_guessing",
        "grid": {"feedback": ["partial"]},
        "grids": [
            {"grid": {"deck": [[3, 3, 3], [2, 2]]}, "strategies": {"optimal": {}}},
            {"grid": {"deck": [[1, 1, 1]]}, "strategies": {"greedy": {"tie_break": ["highest"]}}},
        ],
    }
    tasks = [t.task for t in plan(study)]
    assert [(t["strategy"], t["deck"]) for t in tasks] == [
        ("optimal", [3, 3, 3]),
        ("optimal", [2, 2]),
        ("greedy", [1, 1, 1]),
    ]
    study["grids"][1]["grid"]["deck"] = [[1, -1]]
    with pytest.raises(StudyError, match=r"study.grids\[1\].grid.deck=\[1, -1\]"):
        plan(study)
    study["grids"][1]["grid"]["feedback"] = ["partial"]
    with pytest.raises(StudyError, match=r"study.grids\[1\].grid.feedback: also a shared axis"):
        plan(study)


def test_command_line_overrides_reach_the_grid():
    cfg = config("study.grid.deck=[[2,2,2,2]]")
    assert [t.task["deck"] for t in plan(_plain(cfg.study))] == [[2, 2, 2, 2]] * 2


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
    meta = store.file_metadata(store_layout.result_files(outputs / "paper" / "results")[0])
    assert meta["config"]["study"]["name"] == "paper"
    assert {"dask", "pyarrow", "guesslab"} <= set(meta["packages"])
    assert meta["code_version"] and meta["solver_version"] == "1"


def test_family_folder_reads_with_plain_pandas_pyarrow_and_duckdb(outputs):
    run(outputs, "cluster=sync", "study.grid.deck=[[3,3,3],[2,2,2]]")
    folder = outputs / "paper" / "results" / "family=card_guessing"
    df = pd.read_parquet(folder)
    assert len(df) == 4
    import duckdb

    n = duckdb.sql(f"select count(*) from read_parquet('{folder}/*.parquet')").fetchall()[0][0]
    assert n == 4
    assert pq.ParquetDataset(folder).read().num_rows == 4


def test_rerun_recomputes_nothing_and_recompute_replaces_rows(outputs):
    run(outputs, "cluster=sync")
    files = store_layout.result_files(outputs / "paper" / "results")
    again = run(outputs, "cluster=sync")
    assert (again.skipped, again.computed) == (2, 0)
    assert store_layout.result_files(outputs / "paper" / "results") == files
    forced = run(outputs, "cluster=sync", "store.recompute=true")
    assert forced.computed == 2
    rows = store.load_results(outputs / "paper")
    assert len(rows) == 2 and rows["task_id"].is_unique


def test_a_batch_s_rows_are_encoded_chunk_by_chunk_as_they_arrive():
    """Rows of two families, interleaved and many chunks long, come out as one file per
    family (in the order they first appear) holding every row in order; the counts a batch
    reports are read on the way; the rows are read from an iterator once."""
    from pipeline.batches import done_batch

    n = 3 * store_writes.ENCODE_CHUNK + 7

    def rows():
        for i in range(n):
            family = "high_low" if i % 3 == 0 else "card_guessing"
            status = "error" if i % 5 == 0 else "ok"
            yield {
                "family": family,
                "task_id": f"{i:04d}",
                "study": "s",
                "status": status,
                "seconds": 0.5,
            }

    done = done_batch(rows(), n_tasks=n, metadata=b'{"run": 1}')
    assert [family for family, _ in done.files] == ["high_low", "card_guessing"]
    assert (done.n_tasks, done.n_rows) == (n, n)
    assert done.n_errors == len(range(0, n, 5)) and done.seconds == 0.5 * n
    import io

    for family, blob in done.files:
        table = pq.read_table(io.BytesIO(blob))
        want = [r["task_id"] for r in rows() if r["family"] == family]
        assert table["task_id"].to_pylist() == want
        assert table.schema.metadata[store_layout.METADATA_KEY] == b'{"run": 1}'


def test_compaction_keeps_each_task_s_newest_rows_and_the_files_readable(tmp_path):
    """An older file losing some rows is rewritten in place, its schema and metadata kept; a
    file losing all its rows goes; every remaining task's status comes back."""
    results = tmp_path / "results"

    def row(tid, status):
        return {"family": "card_guessing", "task_id": tid, "study": "s", "status": status}

    (old,) = write_rows(results, [row("a", "ok"), row("b", "error")], {"run": 1})
    (gone,) = write_rows(results, [row("c", "error")], {"run": 2})
    (new,) = write_rows(results, [row("b", "ok"), row("c", "ok")], {"run": 3})
    stored = store_upkeep.compact(results)
    assert sorted(stored.every.ids) == sorted(stored.ok.ids) == [b"a", b"b", b"c"]
    assert store_layout.result_files(results) == [old, new] and not gone.exists()
    assert pq.read_table(old)["task_id"].to_pylist() == ["a"]
    assert store_upkeep.bad_file_reason(old) is None and store.file_metadata(old) == {"run": 1}
    assert sorted(store.load_results(results)["task_id"]) == ["a", "b", "c"]


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
    import pipeline.run as run_module

    compactions = []
    real_compact = store_upkeep.compact
    monkeypatch.setattr(
        store_upkeep, "compact", lambda results: compactions.append(1) or real_compact(results)
    )
    run(outputs, "cluster=sync")
    assert len(compactions) == 1  # the tidy-up before the run; nothing to drop after it

    task = plan(_plain(config().study))[0]
    real_write = store_writes.write_encoded

    def write_beside_another_job(results, files):
        # the other job's row of the same task lands first
        if not store_layout.result_files(results):
            other = another_job_s_rows(task)
            real_write(results, store_writes.encode_rows(other, b'{"written_by": "another job"}'))
        return real_write(results, files)

    monkeypatch.setattr(run_module.store_writes, "write_encoded", write_beside_another_job)
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

    def compact_then_another_job_writes(results):
        status = real_compact(results)
        if not calls:
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
    files = store_layout.result_files(results)
    assert len(files) == 8
    before = store.load_results(results).sort_values("task_id")
    for path in files[::3]:
        path.unlink()
    report = run(outputs, *overrides)
    assert report.computed == 3 and report.skipped == 5
    after = store.load_results(results).sort_values("task_id")
    assert after["task_id"].is_unique and len(after) == 8
    assert after["expected_score_exact"].tolist() == before["expected_score_exact"].tolist()


def test_a_killed_write_leaves_no_broken_file(outputs):
    run(outputs, "cluster=sync")
    folder = outputs / "paper" / "results" / "family=card_guessing"
    (folder / ".part-0-dead.parquet.tmp").write_bytes(b"half a file")
    assert len(pd.read_parquet(folder)) == 2  # readers skip hidden files
    run(outputs, "cluster=sync", "study.grid.deck=[[2,2]]")
    assert not list(folder.glob(".*.tmp"))


def _boom(task):
    if task["n"] == 3:
        raise ArithmeticError("three is unlucky")
    return [{"value": float(task["n"])}]


if "test_flaky" not in families():
    register(
        Family(
            name="test_flaky",
            version="1",
            params=(Param("n", lambda v: as_int(v, low=0), dtype="int64"),),
            run=_boom,
            columns={"value": "float64"},
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


def test_cli_runs_the_default_study(tmp_path):
    res = cli("cluster=sync", f"paths.outputs={tmp_path}")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "paper" / "summary.md").exists()
    assert not (ROOT / "outputs" / "paper" / "hydra").exists()


def test_multirun_jobs_share_one_store_and_summary(tmp_path, monkeypatch, capsys):
    """A multirun of the basic launcher (its jobs run one after another in the command's
    process), run in this process."""
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
    """The command in this process (as tests/test_hostile_input.py runs its bad values): the
    exit status, the message and the store are what is checked, not the process."""
    res = cli_run_in_process(monkeypatch, capsys, "cluster=sync", f"paths.outputs={tmp_path}",
                             override)  # fmt: skip
    assert res.returncode == 2, res.stdout + res.stderr
    assert key in res.stderr
    assert "Traceback" not in res.stderr
    assert not tmp_path.exists() or not any(tmp_path.rglob("*.parquet"))


def test_bad_values_never_touch_existing_results(outputs):
    run(outputs, "cluster=sync")
    files = {p: p.read_bytes() for p in store_layout.result_files(outputs / "paper" / "results")}
    with pytest.raises(StudyError, match="study.grid.deck"):
        run(outputs, "cluster=sync", "study.grid.deck=[[0,3]]")
    assert {
        p: p.read_bytes() for p in store_layout.result_files(outputs / "paper" / "results")
    } == files


def test_the_default_run_prints_no_dask_chatter(tmp_path):
    """Dask configures its child loggers when imported (after the run began): the local
    backend quiets them again, so a run prints the pipeline's lines only."""
    res = cli(f"paths.outputs={tmp_path}", "run.progress=false", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    output = res.stdout + res.stderr
    assert "running 2 tasks on LocalCluster" in output
    for chatter in ("Start Nanny", "Registering Worker", "Scheduler at", "State start"):
        assert chatter not in output
