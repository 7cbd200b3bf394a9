"""The long-task facility's interface (solvers.kit: budget, checkpoints, hold, task_progress,
current_task, task_context): budget, need, checkpoints, progress and the task context, on their
own (the pipeline's wiring is tested in tests/test_longtask_pipeline.py)."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time
from contextlib import nullcontext
from pathlib import Path

import pytest

from solvers.kit import budget, checkpoints, current_task, task_context
from solvers.kit.budget import Budget, Need, available_memory
from solvers.kit.checkpoints import Checkpoints
from solvers.kit.current_task import using
from solvers.kit.hold import HELD
from solvers.kit.spread import InProcess, in_process
from solvers.kit.task_context import TaskContext, current
from solvers.kit.task_progress import Progress
from solvers.kit.words import format_bytes


def test_format_bytes():
    assert format_bytes(512) == "512 B"
    assert format_bytes(8 * 10**9) == "8.0 GB"
    assert format_bytes(55.9e9) == "55.9 GB"
    assert format_bytes(1.2e12) == "1.2 TB"


@pytest.mark.parametrize(
    ("n", "said"),
    [(72417.4e15, "72.4 EB"), (1e30, "1,000,000 YB"), (1e35, "100,000,000,000 YB")],
)
def test_format_bytes_says_any_size_in_a_unit_a_person_writes(n, said):
    """No size is a run of digits and a decimal point in petabytes."""
    assert format_bytes(n) == said


def test_need_and_budget_are_frozen_values():
    need = Need(10**9, disk=5, note="n")
    assert (need.memory, need.disk, need.note) == (10**9, 5, "n")
    assert Need(1) == Need(1, 0, "")
    with pytest.raises(AttributeError):
        need.memory = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        Budget(1, "x").bytes = 2  # type: ignore[misc]


def test_current_outside_the_pipeline_is_the_machine_default():
    ctx = current()
    assert ctx.workers == 1 and ctx.checkpoints is None
    with ctx.spread() as spread:  # pieces one after another in this process
        assert isinstance(spread, InProcess) and (spread.places, spread.threads) == (1, 1)
    assert 0 < ctx.budget.bytes <= available_memory() * 2
    assert ctx.budget.source.startswith("available memory of this machine (")
    ctx.progress(1, 2, "states", "nothing listens")  # a no-op


def test_using_sets_and_restores_the_context():
    ctx = TaskContext(Budget(123, "run.memory_budget=123B"), workers=3)
    with using(ctx) as got:
        assert got is ctx and current() is ctx
        inner = TaskContext(Budget(1, "inner"))
        with using(inner):
            assert current() is inner
        assert current() is ctx
    assert current() is not ctx


def test_checkpoints_commit_finished_load_and_clear(tmp_path):
    root = tmp_path / "study" / "checkpoints"
    cp = Checkpoints(root / "abc123", root=root)
    assert cp.finished() == set() and not cp.folder.exists()  # made on first use
    p = cp.path("layer-000")
    p.write_bytes(b"zero")
    assert cp.finished() == set()  # written, not committed: does not exist
    with pytest.raises(FileNotFoundError, match="not committed"):
        cp.load_path("layer-000")
    cp.commit("layer-000")
    assert cp.finished() == {"layer-000"}
    assert cp.load_path("layer-000").read_bytes() == b"zero"
    # a piece may be a folder of files (several arrays)
    d = cp.path("layer-001")
    d.mkdir()
    (d / "values.npy").write_bytes(b"v")
    cp.commit("layer-001")
    assert cp.finished() == {"layer-000", "layer-001"}
    assert (cp.load_path("layer-001") / "values.npy").read_bytes() == b"v"
    # committed again: replaced
    cp.path("layer-000").write_bytes(b"again")
    cp.commit("layer-000")
    assert cp.load_path("layer-000").read_bytes() == b"again"
    cp.clear()
    assert not cp.folder.exists() and cp.finished() == set() and root.is_dir()


def test_checkpoints_path_drops_a_leftover_of_a_killed_attempt(tmp_path):
    cp = Checkpoints(tmp_path / "cp" / "t", root=tmp_path / "cp")
    cp.path("a").write_bytes(b"half written")
    again = cp.path("a")
    assert not again.exists()  # a fresh start for the piece
    with pytest.raises(FileNotFoundError, match="nothing was written"):
        cp.commit("a")
    assert cp.finished() == set()


@pytest.mark.parametrize("name", ["", ".hidden", "a/b", "..", "x" * 201, "a b", 7])
def test_checkpoints_refuse_bad_piece_names(tmp_path, name):
    cp = Checkpoints(tmp_path / "t")
    with pytest.raises(ValueError, match="checkpoint piece name"):
        cp.path(name)


def test_checkpoints_never_follow_a_link(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("keep")
    root = tmp_path / "study" / "checkpoints"
    root.mkdir(parents=True)
    (root / "task").symlink_to(outside)
    cp = Checkpoints(root / "task", root=root)
    assert cp.finished() == set()
    with pytest.raises(OSError, match="symbolic link"):
        cp.path("layer-0")
    with pytest.raises(FileNotFoundError):
        cp.load_path("keep")
    cp.clear()  # removes the link, never its target
    assert not (root / "task").is_symlink() and (outside / "keep").read_text() == "keep"
    # a link among the pieces is not a piece, and clearing leaves its target alone
    cp.path("real").write_text("r")
    cp.commit("real")
    (cp.folder / "linked").symlink_to(outside / "keep")
    assert cp.finished() == {"real"}
    cp.clear()
    assert (outside / "keep").read_text() == "keep"


def test_checkpoints_must_lie_below_their_root(tmp_path):
    with pytest.raises(ValueError, match="is not below"):
        Checkpoints(tmp_path / "a", root=tmp_path / "b")


def test_checkpoints_pickle(tmp_path):
    cp = Checkpoints(tmp_path / "cp" / "t", root=tmp_path / "cp")
    assert pickle.loads(pickle.dumps(cp)) == cp


def test_a_committed_piece_survives_a_kill_and_an_uncommitted_one_does_not(tmp_path):
    code = f"""
import os, signal
from solvers.kit.checkpoints import Checkpoints
cp = Checkpoints({str(tmp_path / "t")!r})
cp.path("done").write_bytes(b"1" * 1000)
cp.commit("done")
with open(cp.path("half"), "wb") as fh:
    fh.write(b"2" * 10)
    fh.flush()
    os.kill(os.getpid(), signal.SIGKILL)
"""
    proc = subprocess.run([sys.executable, "-c", code], check=False)
    assert proc.returncode == -9
    cp = Checkpoints(tmp_path / "t")
    assert cp.finished() == {"done"}
    assert cp.load_path("done").read_bytes() == b"1" * 1000


def test_progress_is_rate_limited_and_reports_rate_and_time_left():
    got: list[Progress] = []
    ctx = TaskContext(Budget(1, "b"), task_id="tid", sink=got.append, interval=3600)
    ctx.progress(0, 100, "states", "start")
    for i in range(1, 99):
        ctx.progress(i, 100, "states")
    assert [p.done for p in got] == [0]  # the rest were within the interval
    time.sleep(0.01)
    ctx.progress(100, 100, "states", "done")  # the last always passes
    assert [p.done for p in got] == [0, 100]
    last = got[-1]
    assert last.task_id == "tid" and last.unit == "states" and last.note == "done"
    assert last.rate > 0 and last.seconds_left == 0
    assert set(last.as_dict()) == {
        "task_id",
        "done",
        "total",
        "unit",
        "note",
        "rate",
        "seconds_left",
        "at",
    }


def test_progress_time_left_follows_the_rate():
    got: list[Progress] = []
    ctx = TaskContext(Budget(1, "b"), sink=got.append, interval=0)
    ctx.progress(0, 10)
    time.sleep(0.05)
    ctx.progress(5, 10)
    p = got[-1]
    assert p.rate == pytest.approx(5 / 0.05, rel=0.6)
    assert p.seconds_left == pytest.approx(5 / p.rate)


def test_no_rate_or_time_left_before_a_thousandth_of_the_work():
    """The first layers of a layered solve are tiny: a rate from them promised days."""
    got: list[Progress] = []
    ctx = TaskContext(Budget(1, "b"), sink=got.append, interval=0)
    ctx.progress(0, 21 * 10**9, "states")
    time.sleep(0.01)
    ctx.progress(12, 21 * 10**9, "states")
    assert (got[-1].rate, got[-1].seconds_left) == (None, None)
    ctx.progress(21 * 10**6, 21 * 10**9, "states")
    assert got[-1].rate > 0 and got[-1].seconds_left > 0


def test_spread_asks_the_pipeline_s_spreading_with_the_task_s_pieces_at_once():
    """The context asks what the pipeline handed it (``spreading``) only when the task
    spreads, with how many pieces the task asks to run at once; without one, the pieces run
    in that many threads of this process, the threads stopped when the block ends."""
    calls = []
    ctx = TaskContext(Budget(1, "b"), spreading=lambda n: calls.append(n) or nullcontext("here"))
    assert calls == []
    with ctx.spread(3) as spread:
        assert spread == "here"
    assert calls == [3]
    with TaskContext(Budget(1, "b")).spread(2) as spread:
        assert (spread.places, spread.threads) == (1, 2)
        assert spread.map(pow, [(2, 3), (3, 2)]) == [8, 9]
    with pytest.raises(RuntimeError, match="shutdown"):
        spread.submit(abs, -1)


@pytest.mark.parametrize("threads", [1, 3])
def test_in_process_spreader_hands_results_on_and_maps_in_call_order(threads):
    """A piece handed to another piece arrives as its result (nested gathers keep their
    shape); ``map`` returns the results in the order of the calls and tells ``done`` of each
    as it finishes, in the caller's thread."""
    import threading

    with in_process(threads) as spread:
        squares = [spread.submit(pow, i, 2, place=i) for i in range(5)]
        total = spread.submit(lambda *xs: sum(xs), *squares)
        assert spread.gather([squares[:2], [total]]) == [[0, 1], [30]]
        seen: list[tuple[int, str]] = []
        done = lambda r: seen.append((r, threading.current_thread().name))  # noqa: E731
        assert spread.map(pow, [(i, 2) for i in range(6)], done) == [0, 1, 4, 9, 16, 25]
        assert sorted(r for r, _ in seen) == [0, 1, 4, 9, 16, 25]
        assert {name for _, name in seen} == {threading.current_thread().name}


def test_a_failing_piece_stops_the_map_and_the_pieces_not_begun():
    """A piece that raises ends ``map`` with its error; the pieces not yet begun never run."""
    import threading

    gate, ran = threading.Event(), []

    def piece(i: int) -> int:
        if i == 0:
            raise ValueError("piece 0 fails")
        gate.wait(5)
        ran.append(i)
        return i

    with in_process(2) as spread, pytest.raises(ValueError, match="piece 0 fails"):
        try:
            spread.map(piece, [(i,) for i in range(50)])
        finally:
            gate.set()
    assert len(ran) < 50


def test_the_long_task_modules_import_neither_the_pipeline_nor_dask():
    code = (
        "import sys, solvers.kit.task_context as m; m.current(); "
        "bad = [n for n in sys.modules if n.split('.')[0] in ('pipeline', 'distributed', 'dask')]; "
        "print(bad)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ
    )
    assert out.stdout.strip() == "[]"


def test_interface_names():
    for module, names in (
        (budget, ("Budget", "Need")),
        (checkpoints, ("Checkpoints",)),
        (task_context, ("TaskContext", "current")),
        (current_task, ("using",)),
    ):
        for name in names:
            assert hasattr(module, name)
    cp = Checkpoints(Path("/tmp/x/y"))
    for meth in ("finished", "path", "commit", "load_path", "clear"):
        assert callable(getattr(cp, meth))


HOLDER = """
import sys, time
from solvers.kit.checkpoints import Checkpoints
cp = Checkpoints(sys.argv[1])
cp.hold(print)
with open(cp.path("layer-001"), "wb") as fh:
    fh.write(b"1" * 100)
cp.commit("layer-001")
print("HELD", flush=True)
time.sleep(120)  # a computation going on after its run stopped, until the test kills it
"""


def test_a_held_folder_waits_for_the_other_computation_then_uses_its_pieces(tmp_path):
    """Two computations of one task (a run stopped while its workers went on, and a new run
    of the same task): the second waits, says so once naming the first, and then goes on
    from the piece the first committed.  Unheld (the code before holding), it would write
    the folder beside the first at once."""
    import threading

    folder = tmp_path / "checkpoints" / "task-1"
    first = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert first.stdout.readline().strip() == "HELD"
        said: list[str] = []
        second = Checkpoints(folder)
        second.hold(said.append)
        seen: list[set[str]] = []
        waiter = threading.Thread(target=lambda: seen.append(second.finished()))
        waiter.start()
        waiter.join(1.0)
        assert waiter.is_alive() and not seen  # waiting while the first holds the folder
        assert len(said) == 1, said
        assert f"task-1 are held by another computation of it (pid {first.pid} on" in said[0]
        first.kill()
        first.wait()
        waiter.join(30)
        assert seen == [{"layer-001"}] and second.trusted("layer-001", warn=said.append)
        assert len(said) == 1
    finally:
        first.kill()
        first.wait()
        second.release()


def test_a_held_folder_is_held_from_first_use_to_release_and_not_by_its_pickled_copies(
    tmp_path,
):
    import fcntl

    folder = tmp_path / "task-2"

    def free() -> bool:
        fd = os.open(folder / HELD, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False
        finally:
            os.close(fd)

    cp = Checkpoints(folder)
    cp.hold(pytest.fail)  # nobody else holds it: nothing is said
    assert not folder.exists()  # made on first use, not before
    cp.path("a").write_bytes(b"x")
    cp.commit("a")
    assert not free()
    copy = pickle.loads(pickle.dumps(cp))  # a helper on another worker writes pieces too
    copy.path("b").write_bytes(b"y")
    copy.commit("b")
    assert cp.finished() == {"a", "b"}
    cp.release()
    assert free()
    cp.release()  # twice is harmless
    assert cp.finished() == {"a", "b"}  # no longer held, still readable
    assert free()


def test_a_hold_taken_after_the_folder_was_cleared_holds_the_new_folder(tmp_path):
    """The computation holding the folder ends and its run clears the folder (the task's row
    stored) while another waits: the waiter's lock is then on a removed file, which holds
    nothing; it locks the folder's new ``.computing`` instead (a third computation would
    wait for it), and says it waits only once."""
    import fcntl
    import shutil
    import threading

    folder = tmp_path / "checkpoints" / "task-3"
    first = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder)], stdout=subprocess.PIPE, text=True
    )
    second = Checkpoints(folder)
    try:
        assert first.stdout.readline().strip() == "HELD"
        said: list[str] = []
        second.hold(said.append)
        seen: list[set[str]] = []
        waiter = threading.Thread(target=lambda: seen.append(second.finished()))
        waiter.start()
        waiter.join(1.0)
        assert waiter.is_alive()
        shutil.rmtree(folder)  # the first run stored the task's row and cleared its folder
        first.kill()
        first.wait()
        waiter.join(30)
        assert seen == [set()] and len(said) == 1
        fd = os.open(folder / HELD, os.O_RDWR)
        try:
            with pytest.raises(BlockingIOError):  # held by the second computation
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)
    finally:
        first.kill()
        first.wait()
        second.release()
