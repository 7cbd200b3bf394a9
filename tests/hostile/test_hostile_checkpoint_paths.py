"""Nothing below a study's ``checkpoints/`` is followed, opened or written through.

A long task's checkpoint folder keeps, beside its pieces, entries of its own: ``.seals``,
``damaged``, ``.partial`` (folders), ``.computing`` and a shared folder's ``.lock``
(files).  Each is checked (``lstat``) before anything below it is read, written, renamed
or deleted: one that is a link, a FIFO, or a file where a folder belongs (or the reverse) is
moved as it is into the task's ``damaged/`` with one line naming it, and the task goes on,
recomputing what it cannot check; a piece or a seal that is a link or a FIFO is set
aside the same way.  A file outside the study that such a link points to keeps its bytes
and its place, and the task's value is bit for bit an uninterrupted run's.  An entry of
``<study>/checkpoints/`` or ``<study>/checkpoints/shared/`` that is not a real folder is
refused before the run does anything (exit 2, naming it).
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import numpy as np
import pytest

from pipeline.errors import StudyError
from pipeline.storage.study_folder import StudyFolder
from solvers.card_guessing.uniform_deck import out_of_core
from solvers.kit.budget import Budget
from solvers.kit.checkpoints import DAMAGED, SEALS, Checkpoints
from solvers.kit.current_task import using
from solvers.kit.hold import HELD
from solvers.kit.safe_folders import kind
from solvers.kit.task_context import TaskContext
from tests.helpers.folders import copy_outputs, snapshot
from tests.helpers.runs import run

DECK = (4,) * 5  # 21 layers; a solve stopped once layer 12 is committed
STOP = 12


class Stop(Exception):
    pass


def stop_at(line: str) -> None:
    if line.startswith(f"layer {STOP}:"):
        raise Stop(line)


@pytest.fixture(scope="module")
def stopped(tmp_path_factory):
    """(a study folder whose task ``t`` stopped after committing layer STOP, the
    uninterrupted solution)."""
    root = tmp_path_factory.mktemp("stopped")
    store = Checkpoints(root / "study" / "checkpoints" / "t", root=root / "study")
    with pytest.raises(Stop):
        out_of_core.solve(DECK, checkpoints=store, chunk=4096, log=stop_at)
    return root / "study", out_of_core.solve(DECK, chunk=4096)


@pytest.fixture
def never_hangs():
    """A test blocked opening a FIFO fails after a minute instead of hanging the suite."""

    def hung(*_):
        raise AssertionError("blocked for a minute: a FIFO was opened")

    before = signal.signal(signal.SIGALRM, hung)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, before)


def task_and_outside(stopped, tmp_path) -> tuple[Checkpoints, Path]:
    """A copy of the stopped task's folder, and a folder outside its study holding a copy
    of the task's seals and pieces with the user's own files among them (named like a seal,
    like a piece set aside, like a piece being written)."""
    study, _ = stopped
    shutil.copytree(study, tmp_path / "study")
    store = Checkpoints(tmp_path / "study" / "checkpoints" / "t", root=tmp_path / "study")
    outside = tmp_path / "outside"
    shutil.copytree(store.folder / SEALS, outside / "seals")
    shutil.copytree(store.folder, outside / "pieces", ignore=shutil.ignore_patterns(".*"))
    for name in ("meta.json.json", f"layer-{STOP:03d}", f"layer-{STOP - 1:03d}"):
        (outside / "seals" / name).write_text("the user's own file")
    return store, outside


def replaced(path: Path, by: str, outside: Path) -> None:
    """Put at ``path`` (after removing what is there) a link into ``outside``, a FIFO, a
    file or a folder."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    if by == "link-to-folder":
        path.symlink_to(outside / "seals", target_is_directory=True)
    elif by == "link-to-file":
        path.symlink_to(outside / "seals" / "meta.json.json")
    elif by == "fifo":
        os.mkfifo(path)
    elif by == "file":
        path.write_text("not a folder")
    else:
        path.mkdir()


def resumed(store: Checkpoints, held: bool = False) -> tuple[object, list[str]]:
    """The solve of the task resumed from its folder, and the lines it said."""
    lines: list[str] = []
    again = Checkpoints(store.folder, root=store.root)
    if held:
        again.hold(lines.append)
    try:
        solution = out_of_core.solve(DECK, checkpoints=again, chunk=4096, warn=lines.append)
    finally:
        again.release()
    return solution, lines


def same_bits(a, b) -> None:
    assert a.expected_score == b.expected_score and a.score_variance == b.score_variance
    assert a.score_pmf == b.score_pmf and a.n_states == b.n_states


# entry of the task's folder, what is put there, what the line says it belongs to
OWN = [
    (SEALS, "link-to-folder", "the folder of the pieces' seals"),
    (SEALS, "file", "the folder of the pieces' seals"),
    (SEALS, "fifo", "the folder of the pieces' seals"),
    (DAMAGED, "link-to-folder", "the folder of pieces set aside"),
    (DAMAGED, "file", "the folder of pieces set aside"),
    (DAMAGED, "fifo", "the folder of pieces set aside"),
    (".partial", "link-to-folder", "the folder of pieces being written"),
    (".partial", "file", "the folder of pieces being written"),
    (".partial", "fifo", "the folder of pieces being written"),
    (HELD, "link-to-file", "the file that holds the folder for one computation"),
    (HELD, "fifo", "the file that holds the folder for one computation"),
    (HELD, "folder", "the file that holds the folder for one computation"),
]


@pytest.mark.parametrize(("entry", "by", "role"), OWN, ids=[f"{e}-{b}" for e, b, _ in OWN])
def test_an_odd_entry_of_a_task_s_folder_is_set_aside_and_the_task_resumes(
    stopped, tmp_path, never_hangs, entry, by, role
):
    _, whole = stopped
    store, outside = task_and_outside(stopped, tmp_path)
    path = store.folder / entry
    replaced(path, by, outside)
    what = kind(path)
    said = {"file": "a file", "folder": "a folder"}.get(what, what)
    if entry == DAMAGED:  # and a piece fails its check: it goes into a real damaged/
        with open(store.folder / f"layer-{STOP:03d}", "r+b") as fh:
            fh.write(np.full(100, 0.5).tobytes())
    before = snapshot(outside)

    solution, lines = resumed(store, held=entry == HELD)

    same_bits(solution, whole)
    assert snapshot(outside) == before  # every byte and every entry outside in place
    where = store.folder / DAMAGED / entry
    assert lines[0] == (
        f"checkpoints of task t: {path} is {said}, where {role} belongs; set aside as "
        f"{where}, never followed or opened"
        + (
            ", with the 21 pieces beside it (none can be checked without its seal): they "
            "are recomputed"
            if entry == SEALS
            else ""
        )
    )
    assert kind(where) == what  # the entry itself, moved as it is
    assert kind(store.folder / entry) in (None, "folder" if entry != HELD else "file")
    if entry == DAMAGED:
        assert len(lines) == 2 and lines[1].startswith(f"checkpoint layer-{STOP:03d} of task t")
        assert (store.folder / DAMAGED / f"layer-{STOP:03d}").is_file()
    else:
        assert len(lines) == 1, lines


PIECES = {
    "seal-link": (lambda s, o: s.folder / SEALS / f"layer-{STOP:03d}.json", "link-to-file"),
    "seal-fifo": (lambda s, o: s.folder / SEALS / f"layer-{STOP:03d}.json", "fifo"),
    "piece-link": (lambda s, o: s.folder / f"layer-{STOP:03d}", "link-to-file"),
    "piece-fifo": (lambda s, o: s.folder / f"layer-{STOP:03d}", "fifo"),
}


@pytest.mark.parametrize("case", PIECES)
def test_a_piece_or_a_seal_that_is_a_link_or_a_fifo_is_set_aside(
    stopped, tmp_path, never_hangs, case
):
    _, whole = stopped
    store, outside = task_and_outside(stopped, tmp_path)
    where, by = PIECES[case]
    path = where(store, outside)
    replaced(path, by, outside)
    what = kind(path)
    before = snapshot(outside)

    solution, lines = resumed(store)

    same_bits(solution, whole)
    assert snapshot(outside) == before
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"checkpoint layer-{STOP:03d} of task t is not used: ")
    if case.startswith("seal"):
        assert f"its seal {path} is {what} (never followed or opened)" in lines[0]
        moved = store.folder / DAMAGED / f"layer-{STOP:03d}.seal.json"
    else:
        assert f"it is {what}, where a piece belongs (never followed or opened)" in lines[0]
        moved = store.folder / DAMAGED / f"layer-{STOP:03d}"
    assert kind(moved) == what


def folder_piece(tmp_path: Path) -> tuple[Checkpoints, Path]:
    cp = Checkpoints(tmp_path / "study" / "checkpoints" / "t", root=tmp_path / "study")
    piece = cp.path("layer-009")
    piece.mkdir()
    (piece / "w.f64").write_bytes(b"\x01" * 4096)
    (piece / "meta.npz").write_bytes(b"meta")
    cp.commit("layer-009")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "w.f64").write_bytes(b"\x01" * 4096)  # the same bytes: only the link differs
    return cp, outside


@pytest.mark.parametrize("by", ["link", "fifo", "folder"])
def test_a_folder_piece_holding_a_link_or_a_fifo_is_set_aside_unread(tmp_path, never_hangs, by):
    cp, outside = folder_piece(tmp_path)
    inner = cp.folder / "layer-009" / "w.f64"
    inner.unlink()
    if by == "link":
        inner.symlink_to(outside / "w.f64")
    elif by == "fifo":
        os.mkfifo(inner)
    else:
        inner.mkdir()
    before = snapshot(outside)
    lines: list[str] = []
    assert not cp.trusted("layer-009", lines.append)
    assert snapshot(outside) == before
    assert len(lines) == 1 and lines[0].startswith("checkpoint layer-009 of task t is not used")
    expected = "holds the files" if by == "folder" else f"{inner} is a"
    assert expected in lines[0], lines
    assert (cp.folder / DAMAGED / "layer-009").is_dir()


@pytest.mark.parametrize("by", ["link-to-file", "fifo", "folder"])
def test_a_shared_folder_s_lock_file_that_is_not_a_file_is_set_aside(tmp_path, never_hangs, by):
    shared = Checkpoints(tmp_path / "study" / "checkpoints" / "shared" / "k", root=tmp_path)
    shared.folder.mkdir(parents=True)
    outside = tmp_path / "outside"
    (outside / "seals").mkdir(parents=True)
    (outside / "seals" / "meta.json.json").write_text("the user's own file")
    replaced(shared.folder / ".lock", by, outside)
    before = snapshot(outside)
    lines: list[str] = []
    ctx = TaskContext(Budget(1, "test"), warnings=lines.append)
    with using(ctx), shared.lock():
        shared.path("a").write_bytes(b"a")
        shared.commit("a")
    assert snapshot(outside) == before
    assert len(lines) == 1 and f"{shared.folder / '.lock'} is " in lines[0]
    assert "where the lock file of the folder belongs; set aside as" in lines[0]
    assert shared.trusted("a", pytest.fail) and (shared.folder / ".lock").is_file()


def test_a_held_folder_names_a_lock_file_that_cannot_be_locked(tmp_path, monkeypatch):
    """Any error locking ``.computing`` other than a file system without locks is one line
    naming the file."""
    import errno
    import fcntl

    def refused(fd, op):
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))

    cp = Checkpoints(tmp_path / "checkpoints" / "t", root=tmp_path)
    cp.hold(pytest.fail)
    monkeypatch.setattr(fcntl, "flock", refused)
    with pytest.raises(OSError) as raised:
        cp.finished()
    assert str(raised.value) == (
        f"[Errno {errno.EINVAL}] cannot lock {cp.folder / HELD} (Invalid argument)"
    )


def test_a_checkpoint_folder_that_is_a_file_is_named_in_plain_words(tmp_path):
    cp = Checkpoints(tmp_path / "checkpoints" / "t", root=tmp_path)
    cp.folder.parent.mkdir()
    cp.folder.write_text("x")
    with pytest.raises(OSError) as raised:
        cp.path("a")
    assert str(raised.value) == (
        f"{cp.folder} is a file, where a checkpoint folder belongs: move it away"
    )


# ------------------------------------------------ entries of <study>/checkpoints/ and its shared/


@pytest.fixture
def outputs(paper_outputs: Path, tmp_path: Path) -> Path:
    """A copy of the stored study paper."""
    return copy_outputs(paper_outputs, tmp_path / "outputs")


@pytest.mark.parametrize("where", ["checkpoints/0123456789abcdef0123", "checkpoints/shared",
                                   "checkpoints/shared/uniform-4x4"])  # fmt: skip
@pytest.mark.parametrize("by", ["link-to-folder", "fifo", "file"])
def test_an_entry_of_checkpoints_that_is_not_a_folder_is_refused(
    outputs, tmp_path, never_hangs, where, by
):
    study = outputs / "paper"
    entry = study / where
    entry.parent.mkdir(parents=True, exist_ok=True)
    outside = tmp_path / "outside"
    (outside / "seals").mkdir(parents=True)
    (outside / "seals" / "meta.json.json").write_text("the user's own file")
    replaced(entry, by, outside)
    what = kind(entry)
    before = snapshot(outside)
    assert StudyFolder(study).unsafe_entries() == [(entry, what)]
    with pytest.raises(StudyError) as refused:
        run(outputs, "cluster=sync", "store.recompute=true")
    message = str(refused.value)
    assert message.startswith("paths.outputs=") and "\n" not in message
    article = {"file": "a file"}.get(what, what)
    assert f"{entry} is {article}, where the study needs a real folder (a checkpoint folder)" in (
        message
    )
    assert snapshot(outside) == before and kind(entry) == what


def test_a_holder_that_wrote_any_content_in_computing_is_said_unknown(tmp_path):
    """The line of a computation that waits for another names the holder from what the
    holder wrote in ``.computing``; content of any other shape (JSON nested too deeply)
    gives "holder unknown", never an error."""
    import fcntl
    import threading

    folder = tmp_path / "checkpoints" / "t"
    folder.mkdir(parents=True)
    fd = os.open(folder / HELD, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another computation holds the folder
    os.write(fd, b"[" * 4000)
    said: list[str] = []
    event = threading.Event()
    outcome: dict[str, object] = {}
    cp = Checkpoints(folder, root=tmp_path)
    cp.hold(lambda line: (said.append(line), event.set()))

    def wait() -> None:
        try:
            outcome["pieces"] = cp.finished()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            outcome["error"] = exc
        event.set()

    waiter = threading.Thread(target=wait, daemon=True)
    waiter.start()
    event.wait(60)
    os.close(fd)  # the other computation ends
    waiter.join(60)
    cp.release()
    assert "error" not in outcome, outcome
    assert said == [
        "the checkpoints of task t are held by another computation of it (holder unknown: a "
        "run stopped while its workers went on?); this one waits for it to end, then goes on "
        "from the pieces it committed"
    ]
