"""Checkpoint pieces a run's tasks share: one deck's last layer for all its policies.

The last layer of a uniform deck (T and log A of every state with no card to come) is the
same for every policy, and costs about a third of an 11-type policy's CPU.  Out of core, the
first task of a deck computes it into ``<study>/checkpoints/shared/uniform-RxM/`` under that
folder's lock, and the deck's other tasks adopt it (hard links, sealed again in their own
folders); the disk check counts it once; the folder goes once no task of the deck is left,
and stays (to be adopted on the rerun) when one failed.  The score pass is checkpointed too:
a solve stopped inside it resumes after its newest committed edges.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from pipeline.run import run_study
from solvers.card_guessing.uniform_deck import in_memory, out_of_core
from solvers.kit.budget import Budget
from solvers.kit.checkpoints import SEALS, SHARED, Checkpoints
from solvers.kit.task_context import TaskContext
from solvers.kit.words import format_bytes
from tests.helpers.runs import compose_config

DECK = (4,) * 6
STUDY = ["study=ranks_exact", "study.grids.0.grid.deck=[[4,4,4,4,4,4]]", "stage=run"]
STUDY += ["~study.grids.0.strategies.persistent", "cluster=sync", "run.progress=false"]
STUDY += ["run.memory_budget=366MB"]  # out of core: 367 MB in memory


class Stop(Exception):
    pass


def run(outputs: Path, monkeypatch, fail: str | None = None) -> tuple[list[str], list[str]]:
    """Run the two-policy study; (the policies whose last layer was computed, the lines
    said).  ``fail``: that policy's task stops after its last layer (an error row)."""
    computed: list[str] = []
    real_last, real_solve = out_of_core._last_layer, out_of_core.solve

    def last_layer(deck, cd, sizes, store, *args):
        computed.append(store.folder.name)
        return real_last(deck, cd, sizes, store, *args)

    def solve(deck, policy="optimal", *args, **kwargs):
        if policy == fail:
            kwargs["log"] = lambda line: (_ for _ in ()).throw(Stop(line))
        return real_solve(deck, policy, *args, **kwargs)

    monkeypatch.setattr(out_of_core, "_last_layer", last_layer)
    monkeypatch.setattr(out_of_core, "solve", solve)
    said: list[str] = []
    run_study(compose_config(*STUDY, f"paths.outputs={outputs}"), log=said.append)
    monkeypatch.undo()
    return computed, said


def rows(outputs: Path) -> pd.DataFrame:
    return pd.read_parquet(outputs / "ranks_exact" / "results").set_index("strategy")


def test_a_deck_s_policies_compute_its_last_layer_once(tmp_path, monkeypatch):
    computed, _ = run(tmp_path, monkeypatch)
    assert len(computed) == 1  # the second policy adopted the first one's
    stored = rows(tmp_path)
    for policy in ("optimal", "greedy"):
        alone = in_memory.solve(DECK, policy)
        assert stored.loc[policy, "expected_score"] == alone.expected_score
        assert stored.loc[policy, "n_states"] == alone.n_states
    assert not (tmp_path / "ranks_exact" / "checkpoints").exists()  # no task of the deck left


def test_a_failed_task_keeps_the_shared_layer_and_its_rerun_adopts_it(tmp_path, monkeypatch):
    computed, _ = run(tmp_path, monkeypatch, fail="greedy")
    shared = tmp_path / "ranks_exact" / "checkpoints" / SHARED / "uniform-6x4"
    assert len(computed) == 1 and {p.name for p in shared.iterdir()} >= {"last-t", "count-024"}
    assert (rows(tmp_path).loc["greedy", "status"]) == "error"
    again, _ = run(tmp_path, monkeypatch)
    assert again == []  # adopted, not computed
    assert (
        rows(tmp_path).loc["greedy", "expected_score"]
        == in_memory.solve(DECK, "greedy").expected_score
    )
    assert not shared.exists()


def test_a_damaged_shared_piece_is_set_aside_and_computed_again(tmp_path, monkeypatch):
    run(tmp_path, monkeypatch, fail="greedy")
    shared = tmp_path / "ranks_exact" / "checkpoints" / SHARED / "uniform-6x4"
    with open(shared / "last-t", "r+b") as fh:
        fh.seek(1000)
        fh.write(b"\x07")
    again, said = run(tmp_path, monkeypatch)
    assert len(again) == 1  # computed afresh, not adopted
    named = [line for line in said if line.startswith("checkpoint last-t of task uniform-6x4")]
    assert len(named) == 1 and "checksum" in named[0]
    assert (
        rows(tmp_path).loc["greedy", "expected_score"]
        == in_memory.solve(DECK, "greedy").expected_score
    )
    # the shared folder goes with the deck's last task, what was set aside in it is kept
    kept = tmp_path / "ranks_exact" / "quarantine" / "checkpoints" / "shared-uniform-6x4"
    assert not shared.exists() and (kept / "last-t").is_file()
    assert [line for line in said if "kept as evidence in" in line and str(kept) in line] == [
        f"warning: the shared checkpoints uniform-6x4 are removed, but for what was set aside "
        f"from them (2 entries, {format_bytes(sum(p.stat().st_size for p in kept.iterdir()))})"
        f", kept as evidence in {kept} until you delete it (guesslab never does)"
    ]


def test_the_disk_check_counts_the_shared_pieces_once(tmp_path, monkeypatch):
    """Three policies of one deck, and a free disk that holds their files with the last
    layer once but not three times: all three run at once."""
    from pipeline.run import prepared
    from pipeline.running import needs

    overrides = [*STUDY[:3], "cluster=sync", f"paths.outputs={tmp_path}"]
    study = prepared(compose_config(*overrides))
    plan = out_of_core.plan(DECK)
    shared = out_of_core.last_layer_bytes(plan.sizes)
    free = 3 * (plan.disk - shared) + shared  # exactly enough with the last layer once
    assert free < 3 * plan.disk - plan.disk // 3
    monkeypatch.setattr(needs, "free_disk", lambda path: free)
    needed = needs.check_needs(study.plan, study.workers, study.folder)
    assert needed.with_disk == 3 and needed.shared == ("uniform-6x4",)
    assert needed.at_once is None
    monkeypatch.setattr(needs, "free_disk", lambda path: free - 1)
    assert needs.check_needs(study.plan, study.workers, study.folder).at_once == 2


@pytest.mark.parametrize("policies", [2, 3])
def test_the_plan_counts_the_shared_last_layer_s_cpu_once(tmp_path, policies):
    """stage=plan's CPU: each task's as if alone in the table, the study's with the last
    layer once (the solver-time line agrees)."""
    from pipeline.run import plan_text, prepared
    from solvers.card_guessing.tasks import ranked_tasks

    overrides = [*STUDY[:2], *STUDY[3:], "stage=plan", f"paths.outputs={tmp_path}"]
    if policies == 3:
        overrides.remove("~study.grids.0.strategies.persistent")
    study = prepared(compose_config(*overrides))
    said: list[str] = []
    study.log = said.append
    text = plan_text(study)
    alone = ranked_tasks.estimated_seconds({"method": "ranked", "deck": list(DECK)})
    last = ranked_tasks.last_layer_seconds(DECK)
    assert 0 < last < alone
    (cpu,) = [line for line in text.splitlines() if line.startswith("  CPU: ")]
    assert cpu.startswith(f"  CPU: {alone * policies - last * (policies - 1):.2g} s for the "
                          f"{policies} tasks, the pieces they share computed once")  # fmt: skip
    assert cpu.endswith(f"({alone * policies:.2g} s if each computed its own)")
    assert "pieces the tasks share computed once" in text.splitlines()[1]


# the score pass's checkpoints, on a smaller deck: 21 layers, 176,096 ranks
SCORED = (4,) * 5


@pytest.fixture(scope="module")
def uninterrupted() -> in_memory.Solution:
    return out_of_core.solve(SCORED, chunk=4096)


def stopped_in_the_score_pass(tmp_path: Path) -> Checkpoints:
    """The checkpoints of a solve of SCORED stopped once the score pass reached layer 10."""
    store = Checkpoints(tmp_path / "ck" / "task", root=tmp_path)

    def stop(line: str) -> None:
        if line.startswith("score pass, layer 10:"):
            raise Stop(line)

    with pytest.raises(Stop):
        out_of_core.solve(SCORED, checkpoints=store, chunk=4096, log=stop)
    return store


def test_a_solve_stopped_in_its_score_pass_resumes_after_its_last_edges(tmp_path, uninterrupted):
    store = stopped_in_the_score_pass(tmp_path)
    assert "edges-010" in store.finished() and "edges-009" not in store.finished()
    said: list[str] = []
    again = out_of_core.solve(SCORED, checkpoints=store, chunk=4096, log=said.append)
    assert not [line for line in said if line.startswith("layer ")]  # no layer computed
    assert [line.split(":")[0] for line in said if line.startswith("score pass")][0] == (
        "score pass, layer 11"
    )
    assert again.score_pmf == uninterrupted.score_pmf  # the same bits
    assert again.expected_score == uninterrupted.expected_score


def test_a_damaged_edges_piece_starts_the_score_pass_over(tmp_path, uninterrupted):
    store = stopped_in_the_score_pass(tmp_path)
    (store.folder / SEALS / "edges-010.json").unlink()
    lines: list[str] = []
    said: list[str] = []
    again = out_of_core.solve(SCORED, checkpoints=store, chunk=4096, log=said.append,
                              warn=lines.append)  # fmt: skip
    assert len(lines) == 1 and lines[0].startswith("checkpoint edges-010 of task task")
    assert [line for line in said if line.startswith("score pass")][0].startswith(
        "score pass, layer 0:"
    )
    assert again.score_pmf == uninterrupted.score_pmf


def test_shared_folders_lie_beside_the_tasks_and_lock(tmp_path):
    ctx = TaskContext(
        Budget(10**9, "test"),
        checkpoints=Checkpoints(tmp_path / "checkpoints" / "abc", root=tmp_path),
    )
    shared = ctx.shared("uniform-6x4")
    assert shared.folder == tmp_path / "checkpoints" / SHARED / "uniform-6x4"
    with shared.lock():
        assert (shared.folder / ".lock").is_file()
    assert TaskContext(Budget(1, "t")).shared("k") is None
    source = tmp_path / "piece"
    source.write_bytes(b"x" * 100)
    shared.adopt("p", source)
    assert shared.trusted("p", pytest.fail)
    assert shared.load_path("p").stat().st_ino == source.stat().st_ino  # a hard link
    shutil.rmtree(tmp_path / "checkpoints")
