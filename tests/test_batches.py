"""Batches: how the driver cuts the tasks to run into batches sized by their solver time
(pipeline/running/driver.py), and how a worker encodes and counts a finished batch's rows
(pipeline/running/worker.py)."""

from __future__ import annotations

import io

import pyarrow.parquet as pq
import pytest

from pipeline.running.plan import plan, planned
from pipeline.running.worker import ENCODE_CHUNK, done_batch, metadata_bytes
from pipeline.storage import store_layout
from pipeline.storage.ids import IdSet, id_array
from pipeline.storage.store_newest import StoredIds
from solvers import solve


def test_a_batch_s_rows_are_encoded_chunk_by_chunk_as_they_arrive():
    """Rows of two families, interleaved and many chunks long, come out as one file per
    family (in the order they first appear) holding every row in order; the counts a batch
    reports are read on the way; the rows are read from an iterator once."""
    from pipeline.running.worker import done_batch

    n = 3 * ENCODE_CHUNK + 7

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
    for family, blob in done.files:
        table = pq.read_table(io.BytesIO(blob))
        want = [r["task_id"] for r in rows() if r["family"] == family]
        assert table["task_id"].to_pylist() == want
        assert table.schema.metadata[store_layout.METADATA_KEY] == b'{"run": 1}'


def auto_batching():
    """The run settings of auto batching, ~1 s of solver time a batch."""
    from pipeline.config import RunConfig

    return RunConfig(
        batch_size="auto",
        batch_seconds=1.0,
        max_batch=10_000,
        max_in_flight=4,
        task_timeout_s=None,
        progress=False,
        quiet=False,
        memory_budget=None,
    )


def test_batches_cover_every_task_to_run_once_in_order_and_follow_the_solver_time():
    """BatchCutter: single tasks until a time is known, then ~batch_seconds of solver time,
    shrinking at the end but not below a tenth of that; never across two grids; a task the
    store holds is never in a batch; the first task of each grid, then the study's order."""
    from pipeline.running.driver import BatchCutter

    study = {
        "name": "cut",
        "family": "card_guessing",
        "grid": {"deck": [[2, 1], [1, 1, 1]], "feedback": ["partial"]},
        "strategies": {
            "info": {"gamma": [i / 100 for i in range(1, 100)], "entropy_t": [0.5, 1.0, 2.0]},
            "greedy": {},
        },
    }
    ids = [t.task_id for t in plan(study)]
    strategy = {t.task_id: t.task["strategy"] for t in plan(study)}
    stored = IdSet(id_array(ids[5::7]))
    tasks = planned(study).left_to_run(StoredIds(stored, stored))
    run_cfg = auto_batching()
    cutter = BatchCutter(tasks, 2, run_cfg)
    sizes, seen = [], []
    while (batch := cutter.next_batch()) is not None:
        pairs = batch.pairs()
        assert len({task["strategy"] for _, task in pairs}) == 1  # one grid a batch
        sizes.append(len(pairs))
        seen += [tid for tid, _ in pairs]
        cutter.observe(len(pairs) * 0.01, len(pairs))  # 10 ms a task: the target is 100
    kept = [tid for i, tid in enumerate(ids) if (i - 5) % 7 or i < 5]
    firsts = [next(tid for tid in kept if strategy[tid] == s) for s in ("info", "greedy")]
    assert seen == firsts + [tid for tid in kept if tid not in firsts]  # then study order
    assert sizes[0] == 1 and max(sizes) == 100
    assert min(sizes[2:-2]) >= 10  # the tail stops at a tenth of the target (the last


def test_the_first_task_of_each_grid_goes_out_first_then_the_study_order():
    """The first task of each grid goes out first, alone (so the first tasks the workers run
    are of different kinds, and on a new machine compile different kernels at once), even
    once a time per task is known; then the study's order; every task in exactly one batch;
    one batch out per worker until a batch has finished."""
    from pipeline.running.driver import BatchCutter

    study = {
        "name": "turns",
        "family": "card_guessing",
        "grid": {"deck": [[2, 1], [1, 1, 1], [2, 2]], "feedback": ["partial"]},
        "strategies": {"optimal": {}, "greedy": {}, "info": {"gamma": [0.1, 0.2]}},
    }
    ids = [t.task_id for t in plan(study)]
    cutter = BatchCutter(planned(study), 2, auto_batching())
    assert cutter.out_at_once() == 2  # one a worker: none has finished
    first = [cutter.next_batch() for _ in range(2)]
    cutter.observe(0.01, 1)  # a batch finished: the time per task is known
    assert cutter.out_at_once() == cutter.in_flight > 2
    first += [cutter.next_batch() for _ in range(3)]
    assert [len(b) for b in first[:3]] == [1] * 3
    strategies = [b.pairs()[0][1]["strategy"] for b in first]
    assert strategies == ["optimal", "greedy", "info", "optimal", "greedy"]  # grid by grid
    seen = [tid for b in first for tid, _ in b.pairs()]
    while (batch := cutter.next_batch()) is not None:
        pairs = batch.pairs()
        assert len({task["strategy"] for _, task in pairs}) == 1  # one grid a batch
        seen += [tid for tid, _ in pairs]
    assert sorted(seen) == sorted(ids) and len(seen) == len(ids)
    later = seen[3:]
    assert later == [tid for tid in ids if tid not in seen[:3]]  # the study's order


def one_task_parts(n: int, optimum: bool = True) -> dict:
    """A study of ``n`` grid parts of one info task each (a search's trials over two
    parameters: a part a trial), after a part of the optimum's task when asked."""
    parts = [{"strategies": {"optimal": {}}}] if optimum else []
    parts += [
        {"strategies": {"info": {"gamma": [i / 10], "entropy_r": [1.0 + i / 10]}}} for i in range(n)
    ]
    return {
        "name": "trials",
        "family": "card_guessing",
        "grid": {"deck": [[2, 1]], "feedback": ["partial"]},
        "grids": parts,
    }


@pytest.mark.parametrize(("workers", "sizes"), [(1, [8]), (2, [4, 4]), (3, [3, 3, 2])])
def test_small_grid_parts_of_one_kind_share_batches_split_evenly_among_the_workers(workers, sizes):
    """Grid parts of one task each, of one strategy and the same axes, go out together: with
    the time per task known from an earlier run (a search's batch before), the eight info
    tasks are one batch a worker, each task once, in study order; the optimum's task, of
    another kind (other kernels, another file's columns), never shares their batch."""
    from pipeline.running.driver import BatchCutter

    study = one_task_parts(8, optimum=False)
    cutter = BatchCutter(planned(study), workers, auto_batching(), per_task=0.01)
    batches = []
    while (batch := cutter.next_batch()) is not None:
        batches.append(batch.pairs())
    assert [len(b) for b in batches] == sizes
    assert [tid for b in batches for tid, _ in b] == [t.task_id for t in plan(study)]
    study = one_task_parts(8)
    cutter = BatchCutter(planned(study), workers, auto_batching(), per_task=0.01)
    batches = []
    while (batch := cutter.next_batch()) is not None:
        batches.append(batch.pairs())
    assert [task["strategy"] for _, task in batches[0]] == ["optimal"]
    assert [len({task["strategy"] for _, task in b}) for b in batches] == [1] * len(batches)
    assert [tid for b in batches for tid, _ in b] == [t.task_id for t in plan(study)]


def test_a_run_within_a_batch_s_target_a_worker_is_one_batch_a_worker():
    """150 tasks of 10 ms on 2 workers (a target of 100 tasks a batch: a search's batch of
    trials) go out as one batch a worker, 75 and 75, not in batches of a tenth of the target
    (each its own file and round trip); 250 such tasks still shrink towards the end."""
    from pipeline.running.driver import BatchCutter

    def sizes(n: int) -> list[int]:
        study = {
            "name": "even",
            "family": "card_guessing",
            "grid": {"deck": [[2, 1]], "feedback": ["partial"]},
            "strategies": {"info": {"gamma": [i / 1000 for i in range(1, n + 1)]}},
        }
        cutter = BatchCutter(planned(study), 2, auto_batching(), per_task=0.01)
        out = []
        while (batch := cutter.next_batch()) is not None:
            out.append(len(batch))
        return out

    assert sizes(150) == [75, 75]
    assert sizes(250)[0] == 62 and len(sizes(250)) > 2


def test_one_worker_s_batches_keep_their_target_size_to_the_end():
    """With one worker no other is left idle by a long last batch: 250 tasks of 10 ms (a
    target of 100 a batch) go out as 100, 100 and 50, not in a tail of shrinking batches."""
    from pipeline.running.driver import BatchCutter

    study = {
        "name": "one",
        "family": "card_guessing",
        "grid": {"deck": [[2, 1]], "feedback": ["partial"]},
        "strategies": {"info": {"gamma": [i / 1000 for i in range(1, 251)]}},
    }
    cutter = BatchCutter(planned(study), 1, auto_batching(), per_task=0.01)
    sizes = []
    while (batch := cutter.next_batch()) is not None:
        sizes.append(len(batch))
    assert sizes == [100, 100, 50]


def test_without_a_time_per_task_the_first_task_of_each_kind_goes_out_alone():
    """A cold run of small grid parts: the first task of each kind alone (not of each part),
    then, the time known, the other parts' tasks together."""
    from pipeline.running.driver import BatchCutter

    cutter = BatchCutter(planned(one_task_parts(5)), 1, auto_batching())
    first = [cutter.next_batch(), cutter.next_batch()]
    assert [b.pairs()[0][1]["strategy"] for b in first] == ["optimal", "info"]
    assert [len(b) for b in first] == [1, 1]
    cutter.observe(0.01, 1)
    assert len(cutter.next_batch()) == 4 and cutter.next_batch() is None


def test_batches_grow_to_their_target_soon_after_a_cold_start():
    """A worker's first tasks run with cold caches: here the first two batches take 100 ms a
    task, the rest 10 ms (a target of 100 tasks a batch).  The size is at 90% of the target
    by the tenth batch (the mean of every task seen would take eighteen)."""
    from pipeline.running.driver import BatchCutter

    study = {
        "name": "cold",
        "family": "card_guessing",
        "grid": {"deck": [[2, 1], [1, 1, 1]], "feedback": ["partial"]},
        "strategies": {"info": {"gamma": [i / 1000 for i in range(1, 1000)]}},
    }
    run_cfg = auto_batching()
    cutter = BatchCutter(planned(study), 2, run_cfg)
    sizes = []
    while (batch := cutter.next_batch()) is not None and len(sizes) < 12:
        sizes.append(len(batch))
        cutter.observe(len(batch) * (0.1 if len(sizes) <= 2 else 0.01), len(batch))
    assert sizes[:3] == [1, 10, 10]
    assert min(sizes[9:12]) >= 90


def test_a_batch_counts_each_task_s_seconds_once():
    """Batch sizing learns from the batch's solver seconds: each task's once."""
    rows = []
    for start in (1, 2):
        task = {"family": "triples", "ranks": 5, "suits": 4, "k": 3}
        out = solve({**task, "analysis": "hitting_times", "start": start})
        rows += [{**row, "task_id": f"task{start}", "study": "s"} for row in out]
    assert len(rows) > 4
    done = done_batch(iter(rows), 2, metadata_bytes({}))
    assert done.seconds == pytest.approx(rows[0]["seconds"] + rows[-1]["seconds"])
    assert done.n_rows == len(rows)
