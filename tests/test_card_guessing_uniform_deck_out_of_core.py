"""A uniform deck solved out of core and over Dask workers (uniform_deck/out_of_core.py).

Checked against the in-memory solve (uniform_deck/in_memory.py) to 1e-12 (the values come
out bit for bit; the score distribution's last sum runs in another order), in this process
and on LocalClusters whose workers are capped below what one process needs, with each
worker's measured peak RSS under its cap; a run killed mid-way resumes from its committed
layers without recomputing them.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from pipeline.backends.spreading import OnDask
from solvers import TaskError, solve
from solvers.card_guessing.tasks import ranked_tasks
from solvers.card_guessing.uniform_deck import chunks, in_memory, last_layer, out_of_core, values
from solvers.kit import current_task
from solvers.kit.budget import Budget
from solvers.kit.checkpoints import SEALS, Checkpoints
from solvers.kit.task_context import TaskContext
from solvers.registry import get_family, validate
from tests.helpers.pages import ranks_table

REL = 1e-12
POLICIES = [("optimal", 0.0), ("greedy", 0.0), ("persistent", ranked_tasks.PERSISTENT_WINDOW)]


def same(a: in_memory.Solution, b: in_memory.Solution) -> None:
    def close(x, y):
        return abs(x - y) <= REL * max(1.0, abs(y))

    assert close(a.expected_score, b.expected_score)
    assert close(a.score_variance, b.score_variance)
    assert len(a.score_pmf) == len(b.score_pmf)
    assert all(close(x, y) for x, y in zip(a.score_pmf, b.score_pmf, strict=True))
    assert (a.n_states, a.rank_space, a.layer_sizes) == (b.n_states, b.rank_space, b.layer_sizes)


@pytest.mark.parametrize(("policy", "window"), POLICIES)
@pytest.mark.parametrize("deck", [(4,), (2, 2), (3, 3, 3), (4, 4, 4, 4), (2,) * 6])
def test_out_of_core_in_this_process_matches_in_memory(deck, policy, window):
    layered = out_of_core.solve(deck, policy, window, chunk=out_of_core.ALIGN)
    same(layered, in_memory.solve(deck, policy, window=window))


def test_in_memory_and_out_of_core_solves_use_one_compilation_of_each_layer_kernel():
    """Both solves pass the layers a kernel reads as read-only arrays (the out-of-core solve
    maps its files read-only) and the pieces it writes as writable ones, so the layer kernel
    and the last layer's, the dearest to compile, are each compiled for one signature."""
    deck = (3, 3, 3)
    same(out_of_core.solve(deck, "optimal", 0.0, chunk=out_of_core.ALIGN),
         in_memory.solve(deck, "optimal"))  # fmt: skip
    assert len(values.layer_values.signatures) == 1, values.layer_values.signatures
    assert len(last_layer.pass_logs.signatures) == 1, last_layer.pass_logs.signatures


@pytest.mark.parametrize(("policy", "window"), POLICIES)
def test_a_chunk_computed_in_several_kernel_calls_gives_the_same_values(
    policy, window, monkeypatch
):
    """Chunks of 16,384 ranks computed 1,000 ranks a call (SUB), each call's rows written at
    its own offset: the same solution as in_memory.py."""
    monkeypatch.setattr(chunks, "SUB", 1000)
    deck = (4,) * 5
    layered = out_of_core.solve(deck, policy, window, chunk=4 * out_of_core.ALIGN)
    same(layered, in_memory.solve(deck, policy, window=window))


def _rss_file_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssFile:"):
            return int(line.split()[1])
    raise AssertionError("no RssFile in /proc/self/status")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
def test_the_next_layer_s_pages_leave_the_process_after_each_call(tmp_path):
    """A layer chunk's reads of the next layer map its pages into the worker (they count in
    the resident memory Dask's nanny compares with its limit); _unmap_pages drops them."""
    path = tmp_path / "layer"
    rows = 64 * 2**20 // 24
    np.arange(rows * 3, dtype=np.float64).tofile(path)
    mapped = chunks._mapped(str(path), rows, 3)
    before = _rss_file_kb()
    assert float(mapped[::100, 0].sum()) > 0  # touches every page
    touched = _rss_file_kb()
    assert touched - before > 48 * 1024, (before, touched)
    chunks._unmap_pages(mapped)
    assert _rss_file_kb() - before < 8 * 1024
    assert mapped[rows - 1, 2] == rows * 3 - 1  # still readable: mapped again on demand


def test_chunks_are_page_aligned_and_sized_by_the_budget():
    assert out_of_core.chunk_states(10**9) % out_of_core.ALIGN == 0
    small, large = out_of_core.chunk_states(5 * 10**8), out_of_core.chunk_states(4 * 10**9)
    assert out_of_core.MIN_CHUNK <= small < large
    per = out_of_core.BYTES_PER_CHUNK_STATE
    assert out_of_core.BASE_BYTES + large * per <= 4 * 10**9
    assert out_of_core.chunk_states(4 * 10**9, threads=2) < large
    assert list(out_of_core.bounds(10, 4)) == [0, 4, 8, 10]


def peak_rss() -> int:
    """This process's own peak resident set in bytes: VmHWM of /proc/self/status (Linux).
    Not ru_maxrss, which survives exec and starts a forked child at its parent's resident
    size: read in a worker started late in the suite, it gave the test process's 1.5 GB."""
    status = Path("/proc/self/status")
    for line in status.read_text().splitlines() if status.exists() else []:
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # no /proc


def capped_cluster(workers: int, cap: int):
    """A LocalCluster of ``workers`` processes capped at ``cap`` bytes each.  Spawned, not
    forked: a forked worker starts with its parent's resident pages (this test process has
    grown to over 1 GB by the end of the suite), and Dask's nanny would count them against
    the cap."""
    import dask
    from distributed import Client, LocalCluster

    with dask.config.set({"distributed.worker.multiprocessing-method": "spawn"}):
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            # any free port: with None, two such clusters at once (the module fixture's
            # and a test's) warned that 8787 was taken
            dashboard_address="127.0.0.1:0",
            memory_limit=cap,
        )
    return cluster, Client(cluster)


CAP = 700 * 10**6


@pytest.fixture(scope="module")
def two_workers():
    cluster, client = capped_cluster(2, CAP)
    yield client
    client.close()
    cluster.close()


@pytest.mark.parametrize(("policy", "window"), POLICIES)
def test_two_capped_workers_match_one_process(policy, window, tmp_path, two_workers):
    deck = (4,) * 5
    store = Checkpoints(tmp_path / "ck", root=tmp_path)
    sol = out_of_core.solve(
        deck, policy, window, spread=OnDask(two_workers), checkpoints=store, chunk=out_of_core.ALIGN
    )
    same(sol, in_memory.solve(deck, policy, window=window))
    peaks = two_workers.run(peak_rss)
    assert len(peaks) == 2 and all(p < CAP for p in peaks.values()), peaks


@pytest.mark.slow
def test_eight_types_on_three_capped_workers(tmp_path, monkeypatch):
    """8 types of 4 on 3 workers, each capped at 450 MB: one process needs ~900 MB (its
    arrays ~550 MB; 594 MB measured).  Every policy's mean, variance and distribution to
    1e-12, every worker's measured peak RSS under its cap.  The policies share the deck's
    last layer, as a run's tasks do: the first computes it on the capped workers, the
    others adopt it.  So do the in-memory solves they are checked against: the first
    computes the last layer's log A (which no policy changes, and no solve writes to), the
    others reuse it."""
    deck = (4,) * 8
    cap = 450 * 10**6
    assert ranked_tasks.in_memory_bytes(deck) > cap
    last_logs: list = []
    computed = in_memory.last_layer_log_counts

    def computed_once(cd):
        if not last_logs:
            last_logs.append(computed(cd))
        return last_logs[0]

    monkeypatch.setattr(in_memory, "last_layer_log_counts", computed_once)
    shared = Checkpoints(tmp_path / "shared", root=tmp_path)
    adopted = []
    cluster, client = capped_cluster(3, cap)
    try:
        for policy, window in POLICIES:
            said: list[str] = []
            sol = out_of_core.solve(deck, policy, window, spread=OnDask(client), budget_bytes=cap,
                                    shared=shared, log=said.append)  # fmt: skip
            alone = in_memory.solve(deck, policy, window=window)
            same(sol, alone)
            assert abs(alone.expected_score - ranks_table()[8][policy]) <= 5e-13  # the page's
            adopted.append(any(line.startswith("layer 32 (last): adopted") for line in said))
        peaks = client.run(peak_rss)
    finally:
        client.close()
        cluster.close()
    assert len(peaks) == 3 and all(p < cap for p in peaks.values()), peaks
    assert adopted == [False, True, True]


RUN = """
import sys, time
from solvers.kit.checkpoints import Checkpoints
from solvers.card_guessing.uniform_deck import out_of_core
store = Checkpoints(sys.argv[1], root=sys.argv[2])
def log(message):
    print(message, flush=True)
    if message.startswith("layer 12:"):  # said once layer 12 is committed (and 13 dropped):
        time.sleep(120)  # hold there until the test kills the run (else it may finish first)
sol = out_of_core.solve((4,) * 5, checkpoints=store, chunk=4096, log=log)
print("VALUE", repr(sol.expected_score), flush=True)
"""


def test_killed_run_resumes_from_its_committed_layers(tmp_path):
    folder, root = tmp_path / "ck", tmp_path
    proc = subprocess.Popen([sys.executable, "-c", RUN, str(folder), str(root)])
    deadline = time.monotonic() + 300
    # a layer's last piece is its count, sealed just after it is renamed into place
    while not (folder / SEALS / "count-012.json").exists():
        assert proc.poll() is None and time.monotonic() < deadline, "no layer 12 committed"
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (folder / "count-000").exists(), "the run finished before it was killed"
    kept = {p.name: p.stat().st_mtime_ns for p in folder.iterdir() if p.is_file()}
    store = Checkpoints(folder, root=root)
    logged: list[str] = []
    sol = out_of_core.solve((4,) * 5, checkpoints=store, chunk=4096, log=logged.append)
    assert sol.expected_score == in_memory.solve((4,) * 5).expected_score
    resumed = json.loads(store.load_path("meta.json").read_text())
    assert resumed["deck"] == [4] * 5
    first = int(logged[0].split("layers ")[1].split("..")[0])
    assert 0 < first <= 12 and logged[0].startswith("resuming")
    redone = [int(m.split(":")[0].split()[1]) for m in logged[1:] if m.startswith("layer ")]
    assert redone == list(range(first - 1, -1, -1))  # finished layers not recomputed
    for name, mtime in kept.items():  # committed pieces untouched (some dropped once read)
        if (folder / name).exists() and name.startswith(("best-", "count-", "last-")):
            assert (folder / name).stat().st_mtime_ns == mtime, name


def test_a_folder_of_another_solve_is_refused(tmp_path):
    store = Checkpoints(tmp_path / "ck", root=tmp_path)
    out_of_core.solve((2, 2), checkpoints=store, chunk=4096)
    with pytest.raises(ValueError, match="holds another solve"):
        out_of_core.solve((2, 2), "greedy", checkpoints=store, chunk=4096)


def test_needs_replace_the_fixed_limit():
    fam = get_family("card_guessing")
    small = validate({"family": "card_guessing", "deck": [4] * 4, "method": "ranked"})
    need = fam.scheduling.needs(small, 1)
    assert need.disk == 0 and need.memory == ranked_tasks.in_memory_bytes([4] * 4)
    big = validate({"family": "card_guessing", "deck": [4] * 13, "method": "ranked"})
    need = fam.scheduling.needs(big, 64)
    plan = out_of_core.plan([4] * 13)
    assert need.memory == plan.memory < 10**9
    # every layer's choices, the last layer's log A and T, two value layers at the peak
    sizes = plan.sizes
    pair = max(sizes[i] + sizes[i + 1] for i in range(51))
    assert need.disk == plan.disk >= sum(sizes) + 9 * sizes[52] + 24 * pair
    assert "70,729,002,512 ranked states" in need.note
    assert fam.scheduling.needs(validate({"family": "card_guessing", "deck": [4, 4]}), 1) is None
    assert not hasattr(ranked_tasks, "MAX_BYTES")


def test_ranked_task_goes_out_of_core_when_the_budget_is_short(tmp_path):
    task = validate({"family": "card_guessing", "deck": [4] * 5, "method": "ranked"})
    fam = get_family("card_guessing")
    short = TaskContext(
        Budget(ranked_tasks.in_memory_bytes([4] * 5) - 1, "a test budget"),
        checkpoints=Checkpoints(tmp_path / "ck", root=tmp_path),
    )
    reports: list = []
    short.sink = reports.append
    short.interval = 0.0
    short.__post_init__()
    with current_task.using(short):
        assert fam.scheduling.spreads_over_cluster(task)
        row = solve(task)[0]
    assert not fam.scheduling.spreads_over_cluster(
        task
    )  # the default budget (this machine's memory) holds it
    assert row["expected_score"] == in_memory.solve([4] * 5).expected_score
    assert (tmp_path / "ck" / "layer-000").is_file()  # layers were files: checkpoints
    assert reports and reports[-1].done == reports[-1].total and reports[-1].unit == "ranks"


def test_a_workers_ranked_task_outside_a_cluster_runs_its_chunks_one_at_a_time(monkeypatch):
    """A ranked task with workers=2 and no cluster (outside the pipeline, as under
    cluster=sync) goes out of core with its chunks one after another in this process (each
    chunk's kernels use every core; two threads launching parallel kernels at once end the
    process under Numba's workqueue layer), and gives in_memory.py's values."""
    spreaders = []
    real = out_of_core.solve

    def spy(*args, **kwargs):
        spreaders.append((kwargs["spread"].places, kwargs["spread"].threads))
        return real(*args, **{**kwargs, "chunk": out_of_core.ALIGN})

    monkeypatch.setattr(out_of_core, "solve", spy)
    (row,) = solve({"family": "card_guessing", "deck": [4] * 5, "method": "ranked", "workers": 2})
    assert spreaders == [(1, 1)]
    sol = in_memory.solve([4] * 5)
    assert row["expected_score"] == sol.expected_score and row["n_states"] == sol.n_states


WORKQUEUE_RUN = """
from solvers import solve
from solvers.card_guessing.uniform_deck import in_memory, out_of_core
out_of_core.chunk_states = lambda *_: out_of_core.ALIGN  # many chunks a layer
(row,) = solve({"family": "card_guessing", "deck": [4] * 5, "method": "ranked", "workers": 2})
print(row["status"], row["expected_score"] == in_memory.solve([4] * 5).expected_score)
"""


def test_a_workers_ranked_task_runs_under_numba_s_workqueue_threading_layer():
    """Under Numba's workqueue threading layer (not thread-safe: the one left where neither
    TBB nor OpenMP is found) a ranked task with workers=2 in one process completes with
    in_memory.py's value: no two threads launch its parallel kernels at once."""
    env = {**os.environ, "NUMBA_THREADING_LAYER": "workqueue"}
    done = subprocess.run(
        [sys.executable, "-c", WORKQUEUE_RUN], env=env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["ok", "True"], done.stdout


def test_ids_and_refusals_of_ranked_tasks_hold():
    with pytest.raises(TaskError, match="r types of m"):
        validate({"family": "card_guessing", "deck": [4, 3], "method": "ranked"})
    validate({"family": "card_guessing", "deck": [4] * 13, "method": "ranked"})  # no limit


DECK6 = "study.grids.0.grid.deck=[[4,4,4,4,4,4]]"
OPTIMAL_ONLY = ("~study.grids.0.strategies.greedy", "~study.grids.0.strategies.persistent")


def pipeline(monkeypatch, capsys, outputs, *args: str) -> subprocess.CompletedProcess:
    """``python -m pipeline study=ranks_exact`` on 6 types, optimal only, in this process."""
    from tests.helpers.commands import cli_run_in_process

    return cli_run_in_process(monkeypatch, capsys, "study=ranks_exact", DECK6, *OPTIMAL_ONLY,
                              f"paths.outputs={outputs}", "run.progress=false", *args)  # fmt: skip


def test_the_pipeline_runs_a_ranked_task_out_of_core_when_its_budget_is_short(
    tmp_path, monkeypatch
):
    """cluster=sync, a budget below the in-memory need (367 MB for 6 types) and above the
    out-of-core one (364 MB): the solve runs out of core with the task's checkpoint folder,
    the row is in_memory.py's, and the folder is cleared once the row is stored."""
    import pandas as pd

    from pipeline.run import run_study
    from tests.helpers.runs import compose_config

    folders = []
    real = out_of_core.solve

    def spy(*args, **kwargs):
        folders.append(kwargs["checkpoints"].folder)
        return real(*args, **kwargs)

    monkeypatch.setattr(out_of_core, "solve", spy)
    overrides = ["study=ranks_exact", DECK6, *OPTIMAL_ONLY, f"paths.outputs={tmp_path}"]
    overrides += ["run.progress=false", "cluster=sync", "stage=run", "run.memory_budget=366MB"]
    run_study(compose_config(*overrides), log=lambda *_: None)
    row = pd.read_parquet(tmp_path / "ranks_exact" / "results").iloc[0]
    sol = in_memory.solve([4] * 6)
    assert row["expected_score"] == sol.expected_score and row["n_states"] == sol.n_states
    assert folders == [tmp_path / "ranks_exact" / "checkpoints" / row["task_id"]]
    assert not folders[0].exists()  # cleared once the row was stored


def test_a_budget_below_the_least_need_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    done = pipeline(monkeypatch, capsys, tmp_path, "cluster=sync", "stage=plan",
                    "run.memory_budget=300MB")  # fmt: skip
    assert done.returncode == 2
    assert "needs 364.2 MB of memory per process" in done.stderr
    assert "300.0 MB from run.memory_budget" in done.stderr
    assert not (tmp_path / "ranks_exact").exists()
