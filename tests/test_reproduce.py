"""``python -m pipeline.reproduce STUDY_FOLDER`` (pipeline/reproduce.py,
pipeline/readback/compare_rows.py) and what every results file records for it
(pipeline/running/provenance.py).

A stored study is recomputed from its run records, or from its files' metadata alone, into a
fresh folder and compared column by column, bit for bit: a value changed by hand is named
(task, column, both values; exit 1), a family whose version changed is reported as such, a
sample is drawn by its seed, and the folder checked keeps its bytes and times.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.readback.compare_rows import differences
from pipeline.reproduce import main, reproduce
from pipeline.storage import store, store_layout
from solvers import registry
from solvers.kit.budget import Need
from solvers.kit.words import counted
from tests.helpers.commands import (
    module_command,
    own_family_env,
    own_study_command,
)
from tests.helpers.folders import copy_outputs
from tests.helpers.repository import ROOT
from tests.helpers.runs import run, run_first_left_study

EXACT = ("cluster=sync", "stage=run", "study.grid.deck=[[2,2],[3,3]]")
MONTE_CARLO = (
    "cluster=sync",
    "stage=run",
    "study.grid.deck=[[2,3]]",
    "+study.grid.method=[monte_carlo]",
    "+study.grid.n_games=[200]",
)
TASKS = 6  # 2 decks x 2 strategies exact, 1 deck x 2 strategies by Monte Carlo


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> Path:
    """A study folder where two runs stored 6 tasks (exact values, and Monte Carlo rows
    seeded per task) under cluster=sync.  Read only: a test that changes it works on a copy."""
    outputs = tmp_path_factory.mktemp("reproduce") / "outputs"
    run(outputs, *EXACT)
    run(outputs, *MONTE_CARLO)
    return outputs / "paper"


@pytest.fixture
def study(stored: Path, tmp_path: Path) -> Path:
    """A copy of the stored study, to change."""
    return copy_outputs(stored.parent, tmp_path / "outputs") / stored.name


def snapshot(folder: Path) -> dict[str, tuple[bytes | None, int]]:
    """Every entry under ``folder`` (and itself): its bytes (None: a folder) and mtime."""
    out = {".": (None, folder.lstat().st_mtime_ns)}
    for path in sorted(folder.rglob("*")):
        data = path.read_bytes() if path.is_file() else None
        out[str(path.relative_to(folder))] = (data, path.lstat().st_mtime_ns)
    return out


def reproduce_command(*args: str) -> subprocess.CompletedProcess:
    """``python -m pipeline.reproduce ARGS`` as a user runs it."""
    return module_command("pipeline.reproduce", *args)


def changed_file(folder: Path, change) -> Path:
    """Rewrite the first results file of ``folder`` with ``change(table, metadata)`` applied
    (a pair back); its path."""
    path = store.result_files(folder / "results")[0]
    table = pq.read_table(path)
    meta = json.loads(table.schema.metadata[store_layout.METADATA_KEY])
    table, meta = change(table, meta)
    metadata = {store_layout.METADATA_KEY: json.dumps(meta).encode()}
    pq.write_table(table.replace_schema_metadata(metadata), path)
    return path


def test_a_stored_study_reproduces_on_a_local_cluster_and_its_folder_is_unchanged(stored):
    """Every stored task, exact and Monte Carlo, recomputed on a LocalCluster from the run
    records: exit 0, all reproduced, the stored and the current versions listed; the folder checked
    keeps every byte and every modification time."""
    before = snapshot(stored)
    done = reproduce_command(str(stored), "--cluster", "local", "--workers", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{TASKS} stored tasks chosen, recomputed on cluster=local" in done.stdout
    assert f"reproduced: {TASKS}\n  differs: 0\n  not reproducible here: 0" in done.stdout
    assert "2 run records under" in done.stdout
    for name in ("numba", "llvmlite", "numpy", "code", "python"):
        assert f"\n  {name} " in done.stdout
    assert snapshot(stored) == before


def test_a_stored_study_reproduces_on_an_existing_scheduler(stored, dask_address, capsys):
    """``--cluster address --address ADDR``: the tasks recomputed on a scheduler's workers
    that the caller keeps, compared as anywhere; either flag alone is refused in one line
    naming the key."""
    assert (
        main([str(stored), "--sample", "2", "--cluster", "address", "--address", dask_address]) == 0
    )
    out = capsys.readouterr().out
    assert "2 stored tasks chosen, recomputed on cluster=address" in out
    assert "reproduced: 2\n  differs: 0" in out
    assert main([str(stored), "--address", dask_address]) == 2
    assert f"cluster.address={dask_address!r}: unknown key" in capsys.readouterr().err
    assert main([str(stored), "--cluster", "address"]) == 2
    assert "cluster.address: required, and not given" in capsys.readouterr().err


def test_a_value_changed_by_hand_is_named_with_both_values(study, capsys):
    """One float of one stored row moved by one unit in the last place: the task (by its
    strategy and the parameters that tell the study's tasks apart, and by its id), the
    column and both values are named, exit 1; the other tasks reproduce."""
    changed = {}

    def nudge(table: pa.Table, meta: dict):
        values = table.column("expected_score").to_pylist()
        row = table.slice(0, 1).to_pylist()[0]
        changed.update(task=row["task_id"], old=values[0])
        changed["name"] = f"strategy={row['strategy']} deck={row['deck']} method={row['method']}"
        values[0] = changed["new"] = float(np.nextafter(values[0], np.inf))
        i = table.schema.get_field_index("expected_score")
        return table.set_column(i, "expected_score", pa.array(values, pa.float64())), meta

    changed_file(study, nudge)
    status = main([str(study)])
    out = capsys.readouterr().out
    assert status == 1, out
    assert f"reproduced: {TASKS - 1}\n  differs: 1" in out
    assert "  task" in out and "id" in out
    line = next(x for x in out.splitlines() if changed["task"] in x)
    assert line.split() == [*changed["name"].split(), changed["task"], "expected_score",
                            repr(changed["new"]), repr(changed["old"])]  # fmt: skip


def test_a_folder_with_only_its_results_reproduces_from_their_metadata(study, capsys):
    """runs/ deleted (a study folder someone published with its Parquet files only): the
    configs come from the files' metadata, and every task reproduces."""
    shutil.rmtree(study / "runs")
    for name in (".lock", ".running"):
        (study / name).unlink(missing_ok=True)
    assert main([str(study)]) == 0
    out = capsys.readouterr().out
    assert "configs: the metadata of the results files (2 distinct configs)" in out
    assert f"reproduced: {TASKS}\n" in out


def test_a_run_record_of_another_guesslab_s_settings_reproduces(study, capsys):
    """A run record lacking a run setting and holding one this guesslab does not know (a
    study stored by another version of guesslab): the defaults fill in, the unknown one is
    left out, and every task reproduces."""
    import yaml

    for path in (study / "runs").glob("*.yaml"):
        config = yaml.safe_load(path.read_text())
        del config["run"]["max_in_flight"]
        config["run"]["retired_setting"] = 1
        path.write_text(yaml.safe_dump(config))
    assert main([str(study)]) == 0
    assert f"reproduced: {TASKS}\n" in capsys.readouterr().out


def test_a_file_written_before_a_column_was_added_is_compared_on_its_own_columns(study, capsys):
    """A results file without one of its family's columns (written by a guesslab before the
    column was added): its rows are compared on the columns it holds, the other files' on
    theirs, and every task reproduces; a value changed there is still found."""
    changed_file(study, lambda t, m: (t.drop_columns(["bound_upper"]), m))
    assert main([str(study)]) == 0
    assert f"reproduced: {TASKS}\n" in capsys.readouterr().out

    def other_count(table: pa.Table, meta: dict):
        i = table.schema.get_field_index("n_states")
        states = [n + 1 for n in table.column("n_states").to_pylist()]
        return table.set_column(i, "n_states", pa.array(states, pa.int64())), meta

    changed_file(study, other_count)
    assert main([str(study)]) == 1
    assert "n_states" in capsys.readouterr().out


def test_a_plan_kept_to_some_task_ids_holds_those_alone():
    """StudyPlan.only: the tasks asked for (in study order), counted as the plan's tasks."""
    from pipeline.running.plan import planned
    from pipeline.storage.ids import IdSet, id_array

    plan = planned({"name": "p", "family": "card_guessing", "grid": {"deck": [[2, 2], [3, 3]]},
                    "strategies": {"optimal": {}, "greedy": {}}})  # fmt: skip
    every = [t.task_id for t in plan]
    kept = plan.only(IdSet(id_array([every[3], every[0], "0" * 20])))
    assert [t.task_id for t in kept] == [every[0], every[3]]
    assert (kept.n_tasks, len(kept), kept.stored) == (2, 2, 0)
    assert len(plan) == 4  # the plan kept from is left as it is


def test_a_sample_recomputes_that_many_tasks_drawn_by_its_seed(stored):
    """--sample 2: two stored tasks recomputed, the same two for the same seed."""
    first = reproduce(stored, sample=2, seed=7)
    again = reproduce(stored, sample=2, seed=7)
    assert first.chosen == 2 and len(first.reproduced) == 2 and first.status == 0
    assert first.reproduced == again.reproduced
    every = reproduce(stored, sample=TASKS + 5)  # more than stored: all of them
    assert len(every.reproduced) == TASKS


def test_a_family_version_change_is_reported_as_such_not_as_a_difference(study, capsys):
    """A file whose metadata names another version of its family: its tasks are not
    reproducible here (the stored and the current version said), none of them differs; the
    others reproduce: exit 4 (not all was checked), said in a line of its own."""
    path = changed_file(study, lambda t, m: (t, {**m, "solver_version": "0"}))
    tasks = pq.read_table(path, columns=["task_id"]).column("task_id").to_pylist()
    status = main([str(study)])
    out = capsys.readouterr().out
    assert status == 4, out
    assert f"not reproducible here: {len(set(tasks))}" in out
    for task in tasks:
        line = next(x for x in out.splitlines() if f"  {task}  " in x)
        here = registry.get_family("card_guessing").version
        assert f"card_guessing's version changed: stored by version 0, version {here} here" in line
    assert "differs: 0" in out
    assert (
        f"  not all was checked: {counted(len(set(tasks)), 'task')} not reproducible here "
        "(below); "
        "what was compared reproduces (exit 4)"
    ) in out


def test_a_task_too_large_for_this_machine_is_not_reproducible_here(stored, monkeypatch, capsys):
    """A family whose needs exceed this machine's memory: its tasks are reported with the
    need and the budget, not recomputed, not counted as differing; with nothing else chosen,
    nothing was compared: exit 3, said in the table."""
    family = registry.get_family("card_guessing")
    scheduling = dataclasses.replace(
        family.scheduling, needs=lambda task, workers: Need(memory=10**18)
    )
    huge = dataclasses.replace(family, scheduling=scheduling)
    monkeypatch.setitem(registry._FAMILIES, "card_guessing", huge)
    assert main([str(stored), "--sample", "1"]) == 3  # nothing compared
    out = capsys.readouterr().out
    assert "not reproducible here: 1" in out and "nothing could be compared here" in out
    assert "too large for this machine: needs 1.0 EB of memory per process, over the budget" in out


def test_into_keeps_the_recomputed_store_and_must_be_new(stored, tmp_path, capsys):
    """--into DIR: the recomputed store is kept there; a folder that holds anything, or one
    inside the folder checked, is refused in one line (exit 2) before any work."""
    into = tmp_path / "again"
    assert main([str(stored), "--into", str(into)]) == 0
    new = store.load_results(into / "paper")
    assert sorted(new["task_id"]) == sorted(store.load_results(stored)["task_id"])
    assert main([str(stored), "--into", str(into)]) == 2
    assert main([str(stored), "--into", str(stored / "inside")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-2] == f"error: --into={str(into)!r}: not an empty folder; name a new one"
    assert "inside the folder checked" in err[-1]
    assert not (stored / "inside").exists()


def test_a_folder_that_is_not_a_study_is_one_line_and_exit_2(tmp_path):
    """``guesslab reproduce FOLDER`` on a folder without results: one line naming it, exit 2."""
    code = "import sys; from pipeline.command import cli; sys.argv[0] = 'guesslab'; cli()"
    done = subprocess.run(
        [sys.executable, "-c", code, "reproduce", str(tmp_path)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: {tmp_path}: not a study folder (no guesslab results files under "
        f"{tmp_path}/results/family=*/part-*.parquet)"
    ]


# ------------------------------------------------------------------ the comparison


def test_floats_compare_bit_for_bit_lists_item_by_item_within_a_declared_tolerance():
    """-0.0 is not 0.0, a NaN is the same NaN, a list differs by one item; a tolerance
    declared for a column accepts a difference within it, only there."""
    stored = pa.table({
        "task_id": ["a", "b", "c", "d"],
        "x": [0.0, float("nan"), 1.0, None],
        "pmf": [[0.5, 0.5], [1.0], [0.25, 0.75], None],
        "seconds": [1.0, 2.0, 3.0, 4.0],
    })  # fmt: skip
    new = pa.table({
        "task_id": ["a", "b", "c", "d"],
        "x": [-0.0, float("nan"), 1.0 + 1e-12, None],
        "pmf": [[0.5, 0.5], [1.0], [0.25, 0.7500000000000001], None],
        "seconds": [9.0, 9.0, 9.0, 9.0],
    })  # fmt: skip
    found = {(d.task_id, d.column) for d in differences(stored, new)}
    assert found == {("a", "x"), ("c", "x"), ("c", "pmf")}
    found = {(d.task_id, d.column) for d in differences(stored, new, {"x": 1e-9})}
    assert found == {("c", "pmf")}


def test_the_run_and_job_load_results_adds_are_not_compared():
    """Rows that differ only in ``run`` and ``job`` (which run and multirun job computed
    them, as ``load_results`` gives them) reproduce: they are the run's, not the task's."""
    stored = pa.table({"task_id": ["a"], "x": [1], "run": ["2026-01-01"], "job": [0]})
    new = pa.table({"task_id": ["a"], "x": [1], "run": ["2026-02-02"], "job": [1]})
    assert differences(stored, new) == []


def test_a_missing_or_extra_row_is_a_difference():
    """A task with one row fewer recomputed: that row named, the rows present compared."""
    stored = pa.table({"task_id": ["a", "a", "b"], "x": [1, 2, 3]})
    new = pa.table({"task_id": ["a", "b"], "x": [1, 3]})
    found = [(d.task_id, d.column, d.stored, d.new) for d in differences(stored, new)]
    assert found == [("a", "(row)", "row 1", None)]


# ------------------------------------------------------------------ provenance


def test_every_file_names_the_packages_own_code_and_config_dir(tmp_path, monkeypatch, capsys):
    """The metadata of a file written by the command names numba and llvmlite beside the
    other packages, the fingerprint of a strategy of one's own, and the --config-dir the
    study came from; the study then reproduces, its own strategy too; once the strategy's
    file is edited, its task is not reproducible here, the two fingerprints said (exit 4)."""
    outputs = run_first_left_study(tmp_path, monkeypatch, capsys)
    meta = store.file_metadata(store.result_files(outputs / "mine" / "results")[0])
    assert {"numba", "llvmlite", "numpy", "dask"} <= set(meta["packages"])
    from solvers.own_code import files_fingerprint

    own = meta["own_code"]["strategies"]["first"]
    assert own == {
        "target": "mine_first.FirstLeft",
        "fingerprint": files_fingerprint([tmp_path / "mine_first.py"]),
    }
    given = [s["path"] for s in meta["config_sources"] if s["provider"] == "command-line"]
    assert given == [str(tmp_path / "studies")]
    assert main([str(outputs / "mine")]) == 0
    out = capsys.readouterr().out
    assert "reproduced: 2\n" in out
    assert f"--config-dir  {tmp_path / 'studies'}" in out
    with (tmp_path / "mine_first.py").open("a") as fh:
        fh.write("# an edit\n")  # the strategy's code is no longer the stored rows' code
    assert main([str(outputs / "mine")]) == 4  # not all was checked
    out = capsys.readouterr().out
    assert "reproduced: 1\n  differs: 0\n  not reproducible here: 1" in out
    assert (
        f"the code of its strategy of one's own mine_first.FirstLeft changed: fingerprint "
        f"{own['fingerprint']} stored, {files_fingerprint([tmp_path / 'mine_first.py'])} here"
    ) in out


def test_a_strategy_of_one_s_own_not_importable_leaves_the_others_reproduced(tmp_path, monkeypatch,
                                                                           capsys):  # fmt: skip
    """A study of a built-in strategy and one of one's own, reproduced where the module of
    the latter cannot be imported: the built-in strategy's tasks are recomputed and
    reproduce; each task of the other is named once, by its strategy and deck, as not
    importable here, the import error said once in its line; exit 4, said in the table."""
    outputs = run_first_left_study(tmp_path, monkeypatch, capsys, "[[2, 2], [3, 3]]")
    done = reproduce_command(str(outputs / "mine"))  # mine_first is not on its PYTHONPATH
    assert done.returncode == 4, done.stdout + done.stderr
    assert "reproduced: 2\n  differs: 0\n  not reproducible here: 2\n" in done.stdout
    assert "  not all was checked: 2 tasks not reproducible here (below)" in done.stdout
    error = "ModuleNotFoundError: No module named 'mine_first'"
    assert done.stdout.count(error) == 2
    for deck in ("2,2", "3,3"):
        line = next(x for x in done.stdout.splitlines() if f"strategy=first deck={deck}" in x)
        assert (
            "its strategy of one's own mine_first.FirstLeft is not importable here: module "
            f"'mine_first' cannot be imported ({error})"
        ) in line
    assert "strategy=optimal" not in done.stdout  # both reproduced: not listed


def test_a_config_without_its_strategies_not_importable_keeps_the_rest():
    """reproduce.importable: a strategy of one's own that cannot be imported is left out of
    each grid part, a part left without strategies is left out, the config given is left as
    it was; a config with nothing else left is None; the import is tried once per target."""
    from pipeline.reproduce import importable

    bad = {"_target_": "no_such_module_here.Strategy"}
    config = {"stage": "run", "study": {"name": "s", "family": "card_guessing", "grids": [
        {"grid": {"deck": [[2, 2]]}, "strategies": {"optimal": {}, "mine": bad}},
        {"grid": {"deck": [[3, 3]]}, "strategies": {"mine": bad}},
    ]}}  # fmt: skip
    missing: dict = {}
    kept = importable(config, missing)
    assert kept["study"]["grids"] == [{"grid": {"deck": [[2, 2]]}, "strategies": {"optimal": {}}}]
    assert kept["stage"] == "run" and len(config["study"]["grids"]) == 2
    assert list(missing) == ["no_such_module_here.Strategy"]
    assert "cannot be imported (ModuleNotFoundError" in missing["no_such_module_here.Strategy"]
    alone = {"study": {"name": "s", "family": "card_guessing", "strategies": {"mine": bad}}}
    assert importable(alone, missing) is None
    builtin = {"study": {"name": "s", "family": "card_guessing", "strategies": {"optimal": {}}}}
    assert importable(builtin, missing) is builtin


TOY_GAME = """
from solvers.params import Param, as_int
from solvers.registry import Family, Rules, Solver, register

register(Family(
    name="toy_sum", version="1",
    solver=Solver(run=lambda task: [{"total": task["n"] * (task["n"] + 1) // 2}],
                  columns={"total": "int64"}),
    rules=Rules(params=(Param("n", lambda v: as_int(v, low=1), 3, "how many numbers",
                              dtype="int64"),)),
))
"""


def test_a_family_of_one_s_own_is_fingerprinted_and_reproduces_where_it_is_registered(tmp_path):
    """A family from GUESSLAB_FAMILIES: every file names its module and the fingerprint of its
    code; the study reproduces where the family is registered, and where it is not, its tasks
    are not reproducible here (said so), exit 0."""
    (tmp_path / "toygame.py").write_text(TOY_GAME)
    (tmp_path / "studies" / "study").mkdir(parents=True)
    (tmp_path / "studies" / "study" / "toy.yaml").write_text(
        "name: toy\nfamily: toy_sum\ngrid:\n  n: [2, 5]\n"
    )
    env = own_family_env(tmp_path, "toygame")
    command = own_study_command(tmp_path, "toy", "cluster=sync", "stage=run", "paths.outputs=out")
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "out" / "toy"
    meta = store.file_metadata(store.result_files(folder / "results")[0])
    from solvers.own_code import files_fingerprint

    fingerprint = files_fingerprint([tmp_path / "toygame.py"])
    assert meta["own_code"]["family"] == {"module": "toygame", "fingerprint": fingerprint}
    assert meta["own_code"]["GUESSLAB_FAMILIES"] == "toygame"
    assert meta["solver_version"] == f"1+code.{fingerprint}"
    reproduce = [sys.executable, "-m", "pipeline.reproduce", str(folder)]
    here = subprocess.run(reproduce, env=env, capture_output=True, text=True)
    assert here.returncode == 0, here.stdout + here.stderr
    assert "reproduced: 2\n" in here.stdout
    env.pop("GUESSLAB_FAMILIES")
    elsewhere = subprocess.run(reproduce, env=env, capture_output=True, text=True)
    assert elsewhere.returncode == 3, elsewhere.stdout + elsewhere.stderr
    assert "reproduced: 0\n  differs: 0\n  not reproducible here: 2" in elsewhere.stdout
    assert "family 'toy_sum' is not registered here" in elsewhere.stdout
