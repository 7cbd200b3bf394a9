"""Streaming planning (solvers/grid.py, pipeline/running/plan.py StudyPlan,
pipeline/storage/ids.py): grids are checked up front and generated lazily, exactly as validating
every combination would."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.errors import StudyError
from pipeline.running.plan import plan, planned
from pipeline.storage.ids import IdSet, id_array, id_keys
from pipeline.storage.store_newest import StoredIds
from solvers import registry
from solvers.grid import Grid, _product_from, runs
from solvers.params import Param, as_int
from solvers.registry import Family, Rules, Solver, TaskError, validate
from solvers.task_ids import task_id


@given(
    shape=st.lists(st.integers(1, 4), min_size=0, max_size=4).map(tuple),
    data=st.data(),
)
@settings(max_examples=200, deadline=None)
def test_the_product_from_any_position_is_the_tail_of_itertools_product(shape, data):
    full = list(itertools.product(*(range(n) for n in shape)))
    start = data.draw(st.integers(0, len(full) - 1))
    assert list(_product_from(shape, start)) == full[start:]


@given(st.lists(st.integers(0, 60), unique=True).map(sorted))
def test_runs_cover_exactly_the_positions(positions):
    covered = [p for a, b in runs(positions) for p in range(a, b)]
    assert covered == positions
    assert all(b > a for a, b in runs(positions))


def _brute(fixed, axes):
    """Every combination validated and hashed, first occurrences, in product order."""
    out = {}
    for combo in itertools.product(*(v for _, v in axes)):
        task = validate({**fixed, **dict(zip([n for n, _ in axes], combo, strict=True))})
        out.setdefault(task_id(task), task)
    return list(out.items())


INFO_AXES = [
    ("deck", [[2, 1], [1, 1, 1], [2, 1]]),  # a repeated value counts once
    ("feedback", ["partial"]),
    ("gamma", [0.25, 0.5, 0.5000]),
    ("entropy_r", [0.5, 1.0, float("inf")]),
    ("entropy_t", [0.0, 2.0]),
]


def test_any_slice_of_a_grid_is_the_same_slice_of_the_brute_force_tasks():
    fixed = {"family": "card_guessing", "strategy": "info"}
    grid = Grid.checked(fixed, INFO_AXES)
    brute = _brute(fixed, INFO_AXES)
    assert len(grid) == len(brute) == 2 * 2 * 3 * 2
    assert list(grid.tasks()) == brute
    for start, stop in [(0, 1), (5, 17), (23, 24), (7, 100)]:
        assert list(grid.tasks(start, stop)) == brute[start:stop]
        assert grid.ids(start, stop) == [tid for tid, _ in brute[start:stop]]
    picked = [1, 2, 3, 9, 20, 21]
    assert list(grid.tasks_at(picked)) == [brute[i] for i in picked]
    # card_guessing's check reads the deck (and feedback), never gamma or (r, t)
    assert grid.check_axes == (0, 1)


def test_a_grid_s_id_array_and_a_plan_s_ids_are_the_ids_as_the_store_holds_them():
    """Grid.id_array is the grid's ids as the S20 byte strings of pipeline.storage.ids, where
    ids come from the axes' values and where they need the whole task (a parameter filled
    in); StudyPlan.ids joins them over the tasks left to run, in study order."""
    grid = Grid.checked({"family": "card_guessing", "strategy": "info"}, INFO_AXES)
    for start, stop in [(0, 24), (5, 17), (7, 7)]:
        ids = grid.id_array(start, stop)
        assert ids.dtype == np.dtype("S20")
        assert np.array_equal(ids, id_array(grid.ids(start, stop)))
    study = {
        "name": "fills",
        "family": "mastermind",
        "grid": {"pegs": [2, 3], "jar": [[1, 1, 1]], "colours": [None, 3]},
        "strategies": {"expected_size": {}},
    }
    tasks = planned(study)
    assert tasks.grids[0].fills and tasks.repeated == 2
    assert np.array_equal(tasks.grids[0].id_array(), id_array(tasks.grids[0].ids()))
    assert tasks.ids().tolist() == [t.task_id.encode() for t in tasks]
    assert tasks.fam is registry.get_family("mastermind")


@pytest.mark.parametrize(
    "axes",
    [
        [("gamma", [0.1, 0.2, 0.3]), ("feedback", ["partial"]), ("deck", [[2, 1], [1, 1, 1]])],
        [("deck", [[2, 1], [3]]), ("gamma", [0.1, 0.2]), ("max_states", [5000])],
        [("max_states", [5000]), ("deck", [[2, 1]]), ("gamma", [0.1, 0.2])],
    ],
    ids=["a list axis last", "a knob last", "a knob first"],
)
def test_slices_hold_whatever_the_last_axis_is(axes):
    fixed = {"family": "card_guessing", "strategy": "info"}
    grid, brute = Grid.checked(fixed, axes), _brute(fixed, axes)
    n = len(brute)
    assert list(grid.tasks()) == brute and grid.ids() == [tid for tid, _ in brute]
    for start in range(n):
        assert list(grid.tasks(start, start + 3)) == brute[start : start + 3]
    tasks = [task for _, task in grid.tasks()]
    tasks[0]["deck"].append(7)  # each task owns its lists
    assert all(task["deck"] != tasks[0]["deck"] for task in tasks[1:])


def _counting_family(name: str, calls: list):
    """A toy family whose whole-task check reads ``b`` only when ``a`` is odd, and refuses
    a + b > 6 there; it counts its calls."""

    def check(task):
        calls.append(1)
        if task["a"] % 2 and task["a"] + task["b"] > 6:
            raise TaskError("b", task["b"], f"too large with a={task['a']}")

    return registry.register(
        Family(
            name=name,
            version="1",
            rules=Rules(
                params=(
                    Param("a", as_int, dtype="int64"),
                    Param("b", as_int, dtype="int64"),
                    Param("c", as_int, dtype="int64"),
                ),
                check_task=check,
            ),
            solver=Solver(run=lambda task: [{}]),
        )
    )


@pytest.fixture
def toy_family():
    calls: list = []
    fam = _counting_family("toy_checked_grid", calls)
    yield fam, calls
    registry._FAMILIES.pop(fam.name)


def test_the_whole_task_check_runs_once_per_class_of_the_axes_it_reads(toy_family):
    fam, calls = toy_family
    axes = [("a", [0, 2, 4, 1]), ("b", [1, 2, 3]), ("c", list(range(50)))]
    grid = Grid.checked({"family": fam.name}, axes)
    assert len(grid) == 4 * 3 * 50
    # the walk learns the axes read: the first task (reads a), the 4 values of a (a=1 reads
    # b too), then the 4 x 3 classes of (a, b); never the 600 tasks
    assert grid.check_axes == (0, 1) and len(calls) == 1 + 4 + 12
    assert list(grid.tasks()) == _brute({"family": fam.name}, axes)


def test_a_failing_class_raises_the_error_of_the_first_failing_task_in_grid_order(toy_family):
    fam, _ = toy_family
    axes = [("c", [7, 8]), ("a", [2, 5, 3]), ("b", [1, 4, 2])]
    with pytest.raises(TaskError) as fast:
        Grid.checked({"family": fam.name}, axes)
    with pytest.raises(TaskError) as brute:
        _brute({"family": fam.name}, axes)
    assert str(fast.value) == str(brute.value) == "b=4: too large with a=5"


def test_a_check_that_fills_a_parameter_in_makes_repeats_that_run_once():
    """mastermind fills colours from the jar: colours=None and colours=3 with a 3-colour
    jar are one task, planned once (first occurrence), as the brute force keeps it."""
    study = {
        "name": "fills",
        "family": "mastermind",
        "grid": {"pegs": [2], "jar": [[1, 1, 1]], "colours": [None, 3]},
        "strategies": {"expected_size": {}},
    }
    tasks = planned(study)
    assert tasks.n_tasks == 1 and tasks.repeated == 1 and len(tasks) == 1
    fixed = {"family": "mastermind", "strategy": "expected_size"}
    axes = [(k, v) for k, v in study["grid"].items()]
    assert [(t.task_id, t.task) for t in plan(study)] == _brute(fixed, axes)


def test_two_grid_parts_sharing_tasks_run_each_once():
    study = {
        "name": "overlap",
        "family": "card_guessing",
        "grid": {"feedback": ["partial"]},
        "grids": [
            {"grid": {"deck": [[2, 2], [3, 1]]}, "strategies": {"greedy": {}}},
            {"grid": {"deck": [[1, 1], [3, 1], [2, 2, 1]]}, "strategies": {"greedy": {}}},
        ],
    }
    tasks = planned(study)
    assert tasks.n_tasks == 4 and tasks.repeated == 1
    assert [t.task["deck"] for t in tasks] == [[2, 2], [3, 1], [1, 1], [2, 2, 1]]


def test_an_execution_knob_with_several_values_is_refused_by_its_key():
    study = {
        "name": "knob",
        "family": "card_guessing",
        "grid": {"deck": [[2, 2]], "max_states": [1000, 2000]},
        "strategies": {"optimal": {}},
    }
    with pytest.raises(StudyError, match=r"study.grid.max_states=\[1000, 2000\]: an execution"):
        planned(study)
    study["grid"]["max_states"] = [1000, 1000.0]  # one value, twice: fine
    assert len(planned(study)) == 1


def test_the_store_check_skips_stored_ok_tasks_and_sees_reruns():
    study = {
        "name": "resume",
        "family": "card_guessing",
        "grid": {"deck": [[2, 2], [3, 1], [1, 1, 1]], "feedback": ["partial"]},
        "strategies": {"info": {"gamma": [0.1, 0.2, 0.3, 0.4]}},
    }
    ids = [t.task_id for t in plan(study)]
    ok, errored = IdSet(id_array(ids[::3])), IdSet(id_array(ids[::3] + ids[1:2]))
    whole = planned(study)
    tasks = whole.left_to_run(StoredIds(every=errored, ok=ok))
    assert tasks.supersedes  # task 1 has an error row: its rerun supersedes
    assert tasks.stored == len(ok) and len(tasks) == len(ids) - len(ok)
    assert whole.stored == 0 and len(whole) == len(ids)  # the plan itself is left as it is
    assert [t.task_id for t in tasks] == [t for i, t in enumerate(ids) if i % 3]
    again = planned(study).left_to_run(StoredIds(IdSet(id_array(ids)), IdSet(id_array(ids))))
    assert not again.supersedes
    assert len(again) == 0 and list(again) == []
    forced = planned(study).left_to_run(StoredIds(ok, ok), recompute=True)
    assert forced.supersedes and len(forced) == len(ids)


def test_an_id_set_never_confuses_ids_sharing_their_first_16_digits():
    a, b, c = "0123456789abcdef0000", "0123456789abcdef0001", "fedcba98765432100000"
    ids = IdSet(id_array([a, c]))
    assert ids.contains(id_array([a, b, c, "x"])).tolist() == [True, False, True, False]
    assert id_keys(id_array([a]))[0] == np.uint64(0x0123456789ABCDEF)
    assert len(IdSet(id_array([a, a, c]))) == 2


def test_stage_plan_counts_tasks_and_stored_ones_and_writes_nothing(tmp_path, monkeypatch, capsys):
    """`stage=plan` prints the tasks, how many are stored and what is left, and writes
    nothing (not even the study folder); after a run it sees the stored tasks.  The command
    runs in this process (its lines and exit status are what is checked)."""
    from tests.helpers.commands import cli_run_in_process

    def cli(*args: str):
        return cli_run_in_process(monkeypatch, capsys, *args)

    grid = "study.grid.deck=[[3,3,3],[2,2],[1,1,1]]"
    first = cli("study=paper", grid, "stage=plan", f"paths.outputs={tmp_path}")
    assert first.returncode == 0, first.stderr
    assert "study paper: 6 tasks (1 grid, 2 strategies), 0 already stored, 6 to run" in first.stdout
    assert "nothing was run or written" in first.stdout
    assert list(tmp_path.iterdir()) == []
    ran = cli(
        "study=paper",
        "study.grid.deck=[[2,2]]",
        "cluster=sync",
        "stage=run",
        f"paths.outputs={tmp_path}",
    )
    assert ran.returncode == 0, ran.stderr
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    bad = cli("study=paper", "study.grid.deck=[[3,-1]]", "stage=plan", f"paths.outputs={tmp_path}")
    assert bad.returncode == 2 and "study.grid.deck=[3, -1]" in bad.stderr
    again = cli("study=paper", grid, "stage=plan", f"paths.outputs={tmp_path}")
    assert "6 tasks (1 grid, 2 strategies), 2 already stored, 4 to run" in again.stdout
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before

    # batch of each grid holds what is left of it)


def test_the_solver_time_estimate_is_the_family_s_model_summed_over_the_tasks_to_run():
    """StudyPlan.estimated_seconds: with every task sampled, the sum of the family's estimate
    over the tasks left to run; None where the family (or a task) has no model."""
    from solvers.card_guessing.scheduling import estimated_seconds

    study = {
        "name": "estimate",
        "family": "card_guessing",
        "grid": {"deck": [[2, 1], [3, 3, 3], [4, 4, 4]], "feedback": ["partial"]},
        "strategies": {"info": {"gamma": [0.1, 0.5, 0.9]}, "optimal": {}},
    }
    everything = plan(study)
    ids = [t.task_id for t in everything]
    stored = IdSet(id_array(ids[:2]))
    tasks = planned(study).left_to_run(StoredIds(stored, stored))
    seconds, sampled = tasks.estimated_seconds()
    assert sampled == len(tasks) == len(ids) - 2
    assert seconds == pytest.approx(sum(estimated_seconds(t.task) for t in everything[2:]))
    study["strategies"] = {"optimal": {}, "count_tracker": {}}  # no model for count_tracker
    assert planned(study).estimated_seconds() is None
