"""The high_low float layers as a long task (``solvers/high_low/float_layers/`` through
``solvers/kit/task_context.py``): memory need against the budget, layers in memory or on disk,
checkpoints of finished layers and resuming after a kill, progress.

Values are checked against the exact rational solver (``deck.py``) to 1e-12 relative, as in
``tests/test_high_low_float_layers.py``.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from solvers.high_low import deck
from solvers.high_low.float_layers import counting, layer, sizes, solver
from solvers.high_low.scheduling import estimated_seconds, needs
from solvers.kit.budget import Budget
from solvers.kit.checkpoints import Checkpoints
from solvers.kit.task_context import TaskContext
from solvers.registry import TaskError, validate
from tests.helpers.commands import cli_run_in_process
from tests.helpers.repository import ROOT

PLENTY = Budget(10**12, "a test's budget (1.0 TB)")


def close(value: float, exact: Fraction, rel: float = 1e-12) -> bool:
    return abs(value / float(exact) - 1) <= rel


def context(folder: Path | None = None, budget: Budget = PLENTY, sink=None) -> TaskContext:
    """A hand-made task context: the pipeline's, as a running task sees it."""
    ckpt = None if folder is None else Checkpoints(folder / "ck" / "task", root=folder)
    return TaskContext(budget, checkpoints=ckpt, sink=sink, interval=0.0)


def same_solution(a: solver.Result, b: solver.Result) -> None:
    assert a.p == pytest.approx(b.p, rel=1e-12, abs=0)
    assert (a.states, a.departures, a.checked, a.uneven) == (
        b.states,
        b.departures,
        b.checked,
        b.uneven,
    )
    assert [d.state for d in a.top] == [d.state for d in b.top]
    assert [d.state for d in a.top_uneven] == [d.state for d in b.top_uneven]


def test_layers_in_memory_and_on_disk_use_one_compilation_of_the_layer_kernel():
    """Both storages pass the layer the kernel reads as a read-only array (the disk's is
    mapped read-only), so the layer kernel is compiled for one signature, not again for a
    writable array."""
    memory = solver.solve(4, 3, "lose", "optimal", False, "memory", context())
    on_disk = solver.solve(4, 3, "lose", "optimal", False, "disk", context())
    assert memory.p == on_disk.p
    assert len(layer._layer.signatures) == 1, layer._layer.signatures


@pytest.mark.parametrize("ranks, suits", [(5, 3), (4, 4), (3, 5)])
@pytest.mark.parametrize("ties", deck.TIES)
@pytest.mark.parametrize("policy", ("optimal", "majority"))
def test_layers_on_disk_equal_exact(tmp_path, ranks, suits, ties, policy):
    """Layers in files (with and without checkpoints) give the exact value to 1e-12 and the
    same states and departures as layers in memory."""
    exact, _ = deck.p_perfect(ranks, suits, ties, policy)
    dep = policy == "optimal"
    memory = solver.solve(ranks, suits, ties, policy, dep, "memory", context())
    spilled = solver.solve(ranks, suits, ties, policy, dep, "disk", context())
    kept = solver.solve(ranks, suits, ties, policy, dep, "disk", context(tmp_path))
    assert (memory.storage, spilled.storage, kept.storage) == ("memory", "disk", "disk")
    for result in (memory, spilled, kept):
        assert close(result.p, exact)
        same_solution(result, memory)


@pytest.mark.parametrize("buffer", (1, 7, 64))
def test_layers_on_disk_written_in_many_parts(tmp_path, monkeypatch, buffer):
    """On disk a layer is computed in parts of at most BUFFER values (at least one chunk):
    tiny buffers split every length into many parts, with the same values and counts."""
    monkeypatch.setattr(sizes, "BUFFER", buffer)
    memory = solver.solve(6, 3, "lose", "optimal", True, "memory", context())
    parts = solver.solve(6, 3, "lose", "optimal", True, "disk", context(tmp_path))
    assert parts.p == memory.p
    same_solution(parts, memory)
    majority = solver.solve(6, 3, "win", "majority", False, "disk", context())
    assert close(majority.p, deck.p_perfect(6, 3, "win", "majority")[0])


@pytest.mark.parametrize("storage", ("memory", "disk"))
def test_checkpoints_keep_only_the_last_finished_layer(tmp_path, storage):
    """Each finished layer is committed and the one before it dropped: after a solve the
    folder holds the last layer before the full deck, with its counts."""
    ctx = context(tmp_path)
    result = solver.solve(5, 3, "lose", "optimal", True, storage, ctx)
    assert ctx.checkpoints.finished() == {"layer-014"}
    assert (result.resumed_from, result.layers_solved) == (0, 15)
    piece = ctx.checkpoints.load_path("layer-014")
    groups = counting.group_sizes(5, 3)
    count = int(counting.layer_bases(groups, 14)[-1])
    assert (piece / "w.f64").stat().st_size == 8 * count
    with np.load(piece / "meta.npz") as meta:
        assert json.loads(str(meta["identity"]))["ranks"] == 5


KILLED = """
import os, signal, sys
from pathlib import Path
from solvers.high_low.float_layers import solver
from solvers.kit.budget import Budget
from solvers.kit.checkpoints import Checkpoints
from solvers.kit.task_context import TaskContext

folder, storage, policy, at = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])

def sink(report):
    if report.note.startswith(f"layer {at} of"):
        os.kill(os.getpid(), signal.SIGKILL)

ckpt = Checkpoints(folder / "ck" / "task", root=folder)
ctx = TaskContext(Budget(10**12, "test"), checkpoints=ckpt, sink=sink, interval=0.0)
solver.solve(6, 3, "lose", policy, policy == "optimal", storage, ctx)
"""


@pytest.mark.parametrize(
    "storage, policy",
    [
        ("memory", "optimal"),
        pytest.param("disk", "optimal", marks=pytest.mark.slow),
        pytest.param("memory", "majority", marks=pytest.mark.slow),
        ("disk", "majority"),
    ],
)
def test_resume_after_kill(tmp_path, storage, policy):
    """A solve killed (SIGKILL) after layer 9 of 18 resumes from its last committed layer on
    the rerun: the same value and departures as an uninterrupted solve, and the finished
    layers are not computed again (progress starts at the resumed layer)."""
    script = tmp_path / "killed.py"
    script.write_text(textwrap.dedent(KILLED))
    args = [sys.executable, str(script), str(tmp_path), storage, policy, "9"]
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == -signal.SIGKILL, done.stderr
    ckpt = Checkpoints(tmp_path / "ck" / "task", root=tmp_path)
    kept = ckpt.finished() & ckpt.sealed()  # committed and sealed: what a resume trusts
    assert kept in ({"layer-008"}, {"layer-009"})  # layer 9's writer may not have finished
    last = int(kept.pop()[-3:])

    notes = []
    again = solver.solve(
        6, 3, "lose", policy, policy == "optimal", storage,
        context(tmp_path, sink=lambda r: notes.append(r.note)),
    )  # fmt: skip
    assert (again.resumed_from, again.layers_solved) == (last, 18 - last)
    assert notes[0] == f"layer {last} of 18, resumed"
    assert [int(n.split()[1]) for n in notes[1:]] == list(range(last + 1, 19))
    plain = solver.solve(6, 3, "lose", policy, policy == "optimal", storage, context())
    same_solution(again, plain)
    assert close(again.p, deck.p_perfect(6, 3, "lose", policy)[0])


def test_checkpoints_of_another_solve_are_not_used(tmp_path):
    """A layer kept by another solve (other tie rule) in the same folder is ignored."""
    solver.solve(5, 3, "win", "optimal", True, "memory", context(tmp_path))
    result = solver.solve(5, 3, "lose", "optimal", True, "memory", context(tmp_path))
    assert result.resumed_from == 0
    assert close(result.p, deck.p_perfect(5, 3, "lose")[0])


def test_progress_reports_every_layer_in_states():
    """Progress after every layer: states done of all states, 'layer m of n', the last one
    complete."""
    reports = []
    solver.solve(4, 3, "lose", "optimal", False, "memory", context(sink=reports.append))
    total = sizes.size_estimate(4, 3).states
    assert [r.note for r in reports] == [f"layer {m} of 12, memory" for m in range(1, 13)]
    assert all(r.unit == "states" and r.total == total for r in reports)
    assert [r.done for r in reports] == sorted(r.done for r in reports)
    assert reports[-1].done == total and reports[-1].seconds_left == 0.0


# ------------------------------------------------------------------ memory need and budget


def test_storage_follows_the_budget(monkeypatch):
    """Both layers in memory when they fit the budget, on disk when only the out-of-core
    need does; refused, naming the need and the budget, when neither does."""
    monkeypatch.setattr(sizes, "BUFFER", 16)  # a buffer smaller than 5 x 3's layers
    size = sizes.sizing(5, 3)
    assert size.out_of_core < size.in_memory
    for budget, where in ((size.in_memory, "memory"), (size.in_memory - 1, "disk")):
        ctx = context(budget=Budget(budget, "test"))
        assert solver.solve(5, 3, context=ctx).storage == where
    small = Budget(size.out_of_core - 1, "run.memory_budget=0.2GB")
    with pytest.raises(TaskError) as err:
        solver.solve(5, 3, context=context(budget=small))
    message = str(err.value)
    assert err.value.key == "ranks" and "\n" not in message
    assert "needs 300.0 MB of memory per process" in message
    assert "over the budget: run.memory_budget=0.2GB" in message


def test_needs_of_the_large_decks():
    """Scheduling.needs: the out-of-core memory (one layer and a buffer) and two layers of disk,
    from exact counts; 14 x 4 in memory takes 7.0 GB plus the process, 15 x 4 29.2 GB."""
    task = validate({"family": "high_low", "ranks": 14, "suits": 4, "method": "float"})
    need = needs(task, 1)
    assert need == needs(task, 4)  # one process, whatever the workers
    assert need.memory == sizes.OVERHEAD + 3_502_013_080 + 8 * sizes.BUFFER
    assert need.disk == 6_980_915_648
    assert "4,891,490,532 states" in need.note and "7.3 GB per process" in need.note
    size = sizes.sizing(15, 4)
    assert size.in_memory - sizes.OVERHEAD == 29_222_878_304
    assert needs(validate({"family": "high_low", "n": 6}), 1) is None
    exact = validate({"family": "high_low", "ranks": 3, "suits": 2})
    assert needs(exact, 1) is None


@pytest.mark.parametrize("ranks, suits", [(32, 4), (21, 8), (200, 4)])
def test_decks_beyond_the_codes_are_refused_up_front(ranks, suits):
    """A count vector must fit a 64-bit code: refused at validation, naming ranks."""
    with pytest.raises(TaskError) as err:
        validate({"family": "high_low", "ranks": ranks, "suits": suits, "method": "float"})
    assert err.value.key == "ranks" and "bits" in str(err.value)


def test_the_pipeline_refuses_a_study_over_its_budget(tmp_path, monkeypatch, capsys):
    """stage=plan with run.memory_budget between 14 x 4 and 15 x 4: exit 2, one line naming the
    15 x 4 task, its need and the budget; nothing written.  The command runs in this process
    (its exit status and lines are what is checked)."""
    done = cli_run_in_process(
        monkeypatch,
        capsys,
        "study=high_low_exact",
        "stage=plan",
        "cluster=sync",
        "run.memory_budget=10GB",
        f"paths.outputs={tmp_path}",
    )
    assert done.returncode == 2, done.stderr
    message = done.stderr.strip()
    assert "\n" not in message and "ranks=15" in message
    assert "needs 14.9 GB of memory per process" in message
    assert "budget of 10.0 GB from run.memory_budget=10GB" in message
    assert not list(tmp_path.iterdir())


def test_plan_estimates_the_float_path_from_its_states():
    """stage=plan's model: 14 x 4 takes about 176 CPU seconds a solve (measured: 702 s for
    its four solves); the exact path is estimated from its states; the float path of
    distinct cards gives none."""
    float_task = validate({"family": "high_low", "ranks": 14, "suits": 4, "method": "float"})
    assert estimated_seconds(float_task) == pytest.approx(176.1, abs=0.1)
    small, large = ({"family": "high_low", "ranks": r, "suits": 2} for r in (3, 5))
    assert 0 < estimated_seconds(validate(small)) < estimated_seconds(validate(large)) < 1
    assert estimated_seconds(validate({"family": "high_low", "n": 9, "method": "float"})) is None
