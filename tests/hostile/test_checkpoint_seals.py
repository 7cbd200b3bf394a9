"""Checkpoint pieces are sealed when committed and checked before they are used.

A stored file is evidence, not truth: every piece a long task commits (the ranked solver's
layers, choices and counts; high/low's float layers) carries its size and an XXH3-128
checksum, and a resumed solve uses a piece only if it matches.  Each way a piece can go
wrong on a shared file system (bytes overwritten, a page flipped, truncation by a full
quota, deletion, another task's piece copied in, a piece from before seals existed) is
tried here on a solve stopped part-way: the resumed value is bit for bit the value of an
uninterrupted solve, one line names the piece, and the piece is set aside under the task's
``damaged/`` folder, never used and never silently deleted.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from solvers.card_guessing.uniform_deck import out_of_core
from solvers.high_low.float_layers import solver
from solvers.kit import checkpoints
from solvers.kit.budget import Budget
from solvers.kit.checkpoints import DAMAGED, SEALS, Checkpoints
from solvers.kit.current_task import using
from solvers.kit.seals import SEAL_MAX
from solvers.kit.task_context import TaskContext
from solvers.kit.words import format_bytes

# ----------------------------------------------------------------- the seal of one piece


def committed(tmp_path: Path, task: str = "task-a", under: str = "ck") -> Checkpoints:
    """A folder with a file piece ``a`` (1 MB) and a folder piece ``b`` of two files."""
    cp = Checkpoints(tmp_path / under / task, root=tmp_path)
    cp.path("a").write_bytes(np.arange(2**17, dtype=np.float64).tobytes())
    cp.commit("a")
    folder = cp.path("b")
    folder.mkdir()
    (folder / "w.f64").write_bytes(b"\x01" * 5000)
    (folder / "meta.npz").write_bytes(b"meta")
    cp.commit("b")
    return cp


def test_a_committed_piece_is_sealed_with_its_sizes_and_checksums(tmp_path):
    cp = committed(tmp_path)
    assert cp.sealed() == cp.finished() == {"a", "b"}
    seal = json.loads((cp.folder / SEALS / "a.json").read_text())
    assert seal["piece"] == "a" and seal["task"] == "task-a"
    assert seal["algorithm"] == "xxh3_128" and seal["kind"] == "file"
    ((rel, size, digest),) = seal["files"]
    assert (rel, size) == ("", 2**20) and len(digest) == 32
    folder = json.loads((cp.folder / SEALS / "b.json").read_text())
    assert [f[:2] for f in folder["files"]] == [["meta.npz", 4], ["w.f64", 5000]]
    assert cp.check("a") is None and cp.check("b") is None
    assert cp.trusted("a", warn=pytest.fail) and cp.trusted("b", warn=pytest.fail)


def overwrite(path: Path, offset: int, data: bytes) -> None:
    with open(path, "r+b") as fh:
        fh.seek(offset)
        fh.write(data)


@pytest.mark.parametrize(
    "damage, reason",
    [
        (lambda cp: overwrite(cp.folder / "a", 8000, np.full(6000, 0.5).tobytes()), "checksum"),
        (lambda cp: overwrite(cp.folder / "a", 4096, b"\xff" * 4096), "checksum"),
        (lambda cp: overwrite(cp.folder / "a", 2**20 - 1, b"\x00"), "checksum"),
        (lambda cp: Path(cp.folder / "a").unlink(), "deleted"),
        (lambda cp: (cp.folder / "a").write_bytes(b""), "0 bytes, 1,048,576 when it was"),
        (lambda cp: (cp.folder / SEALS / "a.json").unlink(), "has no seal"),
        (lambda cp: (cp.folder / SEALS / "a.json").write_text("{"), "unreadable"),
        (lambda cp: (cp.folder / "a").unlink() or (cp.folder / "a").mkdir(), "is a folder"),
    ],
    ids=[
        "overwritten",
        "flipped",
        "last-byte",
        "deleted",
        "truncated",
        "unsealed",
        "bad-seal",
        "a-folder",
    ],  # fmt: skip
)
def test_a_piece_that_fails_its_seal_is_set_aside_with_one_line(tmp_path, damage, reason):
    cp = committed(tmp_path)
    before = (cp.folder / "a").read_bytes()
    damage(cp)
    lines: list[str] = []
    assert not cp.trusted("a", lines.append)
    assert len(lines) == 1 and reason in lines[0], lines
    assert lines[0].startswith("checkpoint a of task task-a is not used: ")
    assert lines[0].endswith("it is recomputed")
    assert "a" not in cp.finished() and "a" not in cp.sealed()
    if "deleted" not in reason:
        assert f"set aside as {cp.folder / DAMAGED / 'a'}" in lines[0]
        assert (cp.folder / DAMAGED / "a").exists()  # kept as evidence
        if reason == "checksum":
            assert (cp.folder / DAMAGED / "a").read_bytes() != before
    assert cp.trusted("b", pytest.fail)  # the other piece is untouched
    assert not cp.trusted("a", pytest.fail)  # gone now: simply not there, no second line
    cp.path("a").write_bytes(before)  # recomputed and committed again: trusted
    cp.commit("a")
    assert cp.trusted("a", pytest.fail)


def reseal(cp: Checkpoints, change) -> None:
    """Replace the seal of piece ``a`` by ``change(seal)`` (bytes, or JSON of its result)."""
    path = cp.folder / SEALS / "a.json"
    new = change(json.loads(path.read_text()))
    path.write_bytes(new if isinstance(new, bytes) else json.dumps(new).encode())


BAD_SEALS = {
    "nested-open": lambda seal: b"[" * 200_000,
    "nested-whole": lambda seal: b"[" * 100_000 + b"]" * 100_000,
    "nested-in-a-field": lambda seal: {**seal, "files": [[[[[[[]]]]]]] * 3},
    "a-list": lambda seal: [seal],
    "null": lambda seal: None,
    "empty": lambda seal: b"",
    "not-utf8": lambda seal: b"\xff\xfe{",
    "no-files": lambda seal: {k: v for k, v in seal.items() if k != "files"},
    "files-a-dict": lambda seal: {**seal, "files": {"abc": 1}},
    "size-a-string": lambda seal: {**seal, "files": [["", "1048576", seal["files"][0][2]]]},
    "size-negative": lambda seal: {**seal, "files": [["", -1, seal["files"][0][2]]]},
    "size-a-bool": lambda seal: {**seal, "files": [["", True, seal["files"][0][2]]]},
    "file-twice": lambda seal: {**seal, "files": seal["files"] * 2},
    "piece-a-number": lambda seal: {**seal, "piece": 7},
    "huge-integer": lambda seal: json.dumps(seal).replace("1048576", "9" * 5000).encode(),
}


@pytest.mark.parametrize("shape", BAD_SEALS)
def test_a_seal_of_any_other_shape_is_unreadable_and_its_piece_set_aside(tmp_path, shape):
    cp = committed(tmp_path)
    reseal(cp, BAD_SEALS[shape])
    lines: list[str] = []
    assert not cp.trusted("a", lines.append)
    assert len(lines) == 1, lines
    assert f"its seal {cp.folder / SEALS / 'a.json'} is unreadable (" in lines[0]
    assert lines[0].endswith(f"set aside as {cp.folder / DAMAGED / 'a'}; it is recomputed")
    assert cp.trusted("b", pytest.fail)


def test_a_seal_larger_than_any_seal_is_unreadable_unread(tmp_path):
    cp = committed(tmp_path)
    os.truncate(cp.folder / SEALS / "a.json", SEAL_MAX + 1)  # sparse: nothing read
    lines: list[str] = []
    assert not cp.trusted("a", lines.append)
    assert f"is unreadable ({SEAL_MAX + 1:,} bytes, more than any seal)" in lines[0]


class Killed(BaseException):
    pass


def dropped_until(cp: Checkpoints, piece: str, stop: int, monkeypatch) -> bool:
    """Drop ``piece``, the process killed before its file-system step number ``stop`` (each
    rename, unlink or rmdir); whether the drop ended first."""
    done = {"n": 0}

    def counted(real):
        def step(*args, **kwargs):
            if done["n"] == stop:
                raise Killed
            done["n"] += 1
            return real(*args, **kwargs)

        return step

    for name in ("replace", "rename", "unlink", "rmdir", "remove"):
        monkeypatch.setattr(os, name, counted(getattr(os, name)))
    try:
        cp.drop(piece)
        return True
    except Killed:
        return False
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("piece", ["a", "b"], ids=["file", "folder"])
def test_a_kill_at_any_point_of_a_drop_leaves_nothing_said_and_nothing_trusted(
    tmp_path, monkeypatch, piece
):
    """A drop stopped after any of its file-system steps leaves the piece whole and sealed,
    or dropped once the folder is next used: a later check says no line (the piece was
    neither damaged nor committed without a seal)."""
    for stop in range(100):
        cp = committed(tmp_path / str(stop))
        finished = dropped_until(cp, piece, stop, monkeypatch)
        again = Checkpoints(cp.folder, root=cp.root)
        whole = again.trusted(piece, pytest.fail)  # never a line
        assert whole == (stop == 0)  # only a kill before the first step leaves it whole
        left = {"a", "b"} if whole else {"a", "b"} - {piece}
        assert again.finished() == again.sealed() == left
        assert not (cp.folder / DAMAGED).exists()
        if finished:
            break
    assert stop >= 2  # the seal, the piece and the mark each had their step


@pytest.mark.parametrize("with_seal", [False, True], ids=["data", "data-and-seal"])
def test_another_task_s_piece_is_not_trusted(tmp_path, with_seal):
    mine, theirs = committed(tmp_path, "task-a"), committed(tmp_path, "task-b")
    theirs.path("a").write_bytes(b"\x02" * 2**20)  # a piece of the same size, other bytes
    theirs.commit("a")
    shutil.copyfile(theirs.folder / "a", mine.folder / "a")
    if with_seal:
        shutil.copyfile(theirs.folder / SEALS / "a.json", mine.folder / SEALS / "a.json")
    lines: list[str] = []
    assert not mine.trusted("a", lines.append)
    expected = "piece a of task task-b (a piece copied here)" if with_seal else "checksum"
    assert len(lines) == 1 and expected in lines[0]


def test_a_folder_piece_with_a_file_added_or_damaged_is_not_trusted(tmp_path):
    cp = committed(tmp_path)
    (cp.folder / "b" / "extra").write_bytes(b"")
    lines: list[str] = []
    assert not cp.trusted("b", lines.append) and "holds the files" in lines[0]
    cp = committed(tmp_path, "task-c")
    overwrite(cp.folder / "b" / "w.f64", 10, b"\x00")
    assert not cp.trusted("b", lines.append) and "checksum of w.f64" in lines[1]


def test_pieces_set_aside_twice_keep_both(tmp_path):
    cp = committed(tmp_path)
    for _ in range(2):
        overwrite(cp.folder / "a", 0, b"\x07")
        assert not cp.trusted("a", lambda line: None)
        cp.path("a").write_bytes(b"again")
        cp.commit("a")
    kept = sorted(p.name for p in (cp.folder / DAMAGED).iterdir())
    assert kept == ["a", "a.1", "a.1.seal.json", "a.seal.json"]
    assert cp.finished() == {"a", "b"}  # damaged/ is not a piece


def test_a_kill_between_committing_and_sealing_leaves_an_unsealed_piece(tmp_path, monkeypatch):
    cp = committed(tmp_path)
    cp.path("a").write_bytes(b"new bytes")

    def killed(*args, **kwargs):
        raise KeyboardInterrupt  # the process stops after the rename, before the seal

    monkeypatch.setattr(checkpoints.json, "dumps", killed)
    with pytest.raises(KeyboardInterrupt):
        cp.commit("a")
    monkeypatch.undo()
    lines: list[str] = []
    assert (cp.folder / "a").read_bytes() == b"new bytes"  # the new piece, not the old seal's
    assert not cp.trusted("a", lines.append) and "has no seal" in lines[0]


def test_warnings_go_to_the_current_task_or_to_the_guesslab_logger(tmp_path, caplog):
    cp = committed(tmp_path)
    overwrite(cp.folder / "a", 0, b"\x07")
    said: list[str] = []
    ctx = TaskContext(Budget(10**9, "test"), warnings=said.append)
    with using(ctx):
        assert not cp.trusted("a")
    assert len(said) == 1 and said[0].startswith("checkpoint a of task task-a")
    overwrite(cp.folder / "b" / "w.f64", 0, b"\x07")
    with caplog.at_level("WARNING", logger="guesslab"):
        assert not cp.trusted("b")
    assert [r.name for r in caplog.records] == ["guesslab"]
    assert "checkpoint b of task task-a" in caplog.records[0].getMessage()


def test_the_name_damaged_is_not_a_piece_name(tmp_path):
    with pytest.raises(ValueError, match="not 'damaged'"):
        Checkpoints(tmp_path / "t").path(DAMAGED)


# ---------------------------------------------------------------- the ranked solver's layers

DECK = (4,) * 5  # 21 layers, 176,096 ranks; layer 12 holds 3,380 ranks (81,120 bytes)
STOP = 12


class Stop(Exception):
    pass


def stop_after(layer: int):
    def log(line: str) -> None:
        if line.startswith(f"layer {layer}:"):
            raise Stop(line)

    return log


def ranked_folder(root: Path, task: str, policy: str = "optimal") -> Checkpoints:
    """The checkpoints of a solve of DECK stopped once layer STOP was committed."""
    store = Checkpoints(root / "ck" / task, root=root)
    with pytest.raises(Stop):
        out_of_core.solve(DECK, policy, checkpoints=store, chunk=4096, log=stop_after(STOP))
    return store


@pytest.fixture(scope="module")
def ranked(tmp_path_factory):
    """The uninterrupted solution, and stopped folders of two tasks (optimal, greedy)."""
    root = tmp_path_factory.mktemp("ranked")
    whole = out_of_core.solve(DECK, chunk=4096)
    ranked_folder(root, "optimal-task")
    ranked_folder(root, "greedy-task", "greedy")
    return root, whole


def same_bits(a, b) -> None:
    assert a.expected_score == b.expected_score and a.score_variance == b.score_variance
    assert a.score_pmf == b.score_pmf and a.n_states == b.n_states
    assert a.layer_sizes == b.layer_sizes


def value_layer(store: Checkpoints) -> Path:
    return store.folder / f"layer-{STOP:03d}"


RANKED_DAMAGE = {
    "overwritten": (
        lambda s, o: overwrite(value_layer(s), 24_000, np.full(6000, 0.5).tobytes()),
        f"layer-{STOP:03d}",
        "checksum",
    ),
    "flipped": (
        lambda s, o: overwrite(value_layer(s), 8192, b"\xff" * 4096),
        f"layer-{STOP:03d}",
        "checksum",
    ),
    "truncated": (
        lambda s, o: os.truncate(value_layer(s), 70_000),
        f"layer-{STOP:03d}",
        "70,000 bytes, 81,120 when it was sealed",
    ),
    "deleted": (lambda s, o: value_layer(s).unlink(), f"layer-{STOP:03d}", "deleted"),
    "another-task-s": (
        lambda s, o: shutil.copyfile(value_layer(o), value_layer(s)),
        f"layer-{STOP:03d}",
        "checksum",
    ),
    "another-task-s-with-seal": (
        lambda s, o: [
            shutil.copyfile(value_layer(o), value_layer(s)),
            shutil.copyfile(
                o.folder / SEALS / f"layer-{STOP:03d}.json",
                s.folder / SEALS / f"layer-{STOP:03d}.json",
            ),  # fmt: skip
        ],
        f"layer-{STOP:03d}",
        "of task greedy-task (a piece copied here)",
    ),
    "choices": (
        lambda s, o: overwrite(s.folder / "best-016", 100, b"\x05" * 50),
        "best-016",
        "checksum",
    ),
    "last-layer": (
        lambda s, o: overwrite(s.folder / "last-t", 5, b"\x03"),
        "last-t",
        "checksum",
    ),
    "nested-seal": (
        lambda s, o: (s.folder / SEALS / f"layer-{STOP:03d}.json").write_text("[" * 200_000),
        f"layer-{STOP:03d}",
        "is unreadable (JSON nested too deeply)",
    ),
}


@pytest.mark.parametrize("kind", RANKED_DAMAGE)
def test_ranked_layers_resume_to_the_uninterrupted_value(ranked, tmp_path, kind):
    root, whole = ranked
    shutil.copytree(root / "ck", tmp_path / "ck")
    store = Checkpoints(tmp_path / "ck" / "optimal-task", root=tmp_path)
    other = Checkpoints(tmp_path / "ck" / "greedy-task", root=tmp_path)
    damage, piece, reason = RANKED_DAMAGE[kind]
    damage(store, other)
    lines: list[str] = []
    said: list[str] = []
    again = out_of_core.solve(DECK, checkpoints=store, chunk=4096, warn=lines.append,
                                log=said.append)  # fmt: skip
    same_bits(again, whole)
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"checkpoint {piece} of task optimal-task is not used: ")
    assert reason in lines[0]
    # nothing usable below the damage: the solve falls back to the last layer (kept to the
    # end) or, when the last layer is the damaged piece, to the start
    redone = [line for line in said if line.startswith("layer ") and "(last)" not in line]
    assert len(redone) == len(DECK) * 4  # layers 19..0, each computed again
    last = [line for line in said if line.startswith(f"layer {len(DECK) * 4} (last): ")]
    assert len(last) == (kind == "last-layer")  # the last layer computed again only if damaged
    if kind != "deleted":
        assert (store.folder / DAMAGED / piece).is_file()


def test_an_undamaged_stopped_solve_resumes_where_it_stopped(ranked, tmp_path):
    root, whole = ranked
    shutil.copytree(root / "ck", tmp_path / "ck")
    store = Checkpoints(tmp_path / "ck" / "optimal-task", root=tmp_path)
    said: list[str] = []
    again = out_of_core.solve(DECK, checkpoints=store, chunk=4096, warn=pytest.fail,
                                log=said.append)  # fmt: skip
    same_bits(again, whole)
    assert said[0].startswith(f"resuming: layers {STOP}..{len(DECK) * 4} committed")
    assert "checked against their seals" in said[0]
    assert [int(x.split(":")[0].split()[1]) for x in said if x.startswith("layer ")] == list(
        range(STOP - 1, -1, -1)
    )


def test_a_damaged_layer_falls_back_to_the_next_layer_that_verifies(ranked, tmp_path):
    """A kill between committing layer L and dropping layer L + 1 leaves both: when L is
    damaged, L + 1 (sealed, with its counts and choices) is where the solve resumes."""
    root, whole = ranked
    folder = tmp_path / "ck" / "t"
    store = Checkpoints(folder, root=tmp_path)
    kept = {}

    def log(line: str) -> None:
        if line.startswith(f"layer {STOP + 1}:"):
            kept["next"] = value_layer(store).with_name(f"layer-{STOP + 1:03d}").read_bytes()
            kept["seal"] = (folder / SEALS / f"layer-{STOP + 1:03d}.json").read_bytes()
        if line.startswith(f"layer {STOP}:"):
            raise Stop

    with pytest.raises(Stop):
        out_of_core.solve(DECK, checkpoints=store, chunk=4096, log=log)
    (folder / f"layer-{STOP + 1:03d}").write_bytes(kept["next"])  # as a kill would leave it
    (folder / SEALS / f"layer-{STOP + 1:03d}.json").write_bytes(kept["seal"])
    overwrite(value_layer(store), 0, b"\x00" * 8)
    lines: list[str] = []
    said: list[str] = []
    again = out_of_core.solve(DECK, checkpoints=store, chunk=4096, warn=lines.append,
                                log=said.append)  # fmt: skip
    same_bits(again, whole)
    assert len(lines) == 1 and f"layer-{STOP:03d}" in lines[0]
    assert said[0].startswith(f"resuming: layers {STOP + 1}..")


def test_a_folder_from_before_seals_is_recomputed(ranked, tmp_path):
    root, whole = ranked
    shutil.copytree(root / "ck", tmp_path / "ck")
    store = Checkpoints(tmp_path / "ck" / "optimal-task", root=tmp_path)
    shutil.rmtree(store.folder / SEALS)  # as written by a guesslab without seals
    lines: list[str] = []
    again = out_of_core.solve(DECK, checkpoints=store, chunk=4096, warn=lines.append)
    same_bits(again, whole)
    named = [line.split()[1] for line in lines]
    assert named[0] == "meta.json" and f"layer-{STOP:03d}" in named
    assert all("has no seal" in line for line in lines)


# ------------------------------------------------------------------------ high/low layers

HL = (6, 3, "lose", "optimal", True)  # ranks, suits, ties, policy, departures: 18 layers


def hl_context(folder: Path, warn=None, stop: int | None = None) -> TaskContext:
    def sink(report) -> None:
        if stop is not None and report.note.startswith(f"layer {stop} of"):
            raise Stop

    ckpt = Checkpoints(folder / "ck" / "task", root=folder)
    return TaskContext(Budget(10**12, "test"), checkpoints=ckpt, sink=sink, interval=0.0,
                       warnings=warn)  # fmt: skip


@pytest.fixture(scope="module")
def high_low(tmp_path_factory):
    """The uninterrupted solution, and folders of solves stopped after layer 9 (layers in
    memory and on disk; and another tie rule's, on disk)."""
    root = tmp_path_factory.mktemp("high_low")
    whole = solver.solve(*HL, "memory", hl_context(root / "whole"))
    for storage in ("memory", "disk"):
        with pytest.raises(Stop):
            solver.solve(*HL, storage, hl_context(root / storage, stop=9))
    ranks, suits, _, policy, departures = HL
    with pytest.raises(Stop):
        solver.solve(ranks, suits, "win", policy, departures, "disk",
                           hl_context(root / "win", stop=9))  # fmt: skip
    return root, whole


def same_result(a, b) -> None:
    assert a.p == b.p and a.states == b.states
    assert (a.checked, a.departures, a.uneven) == (b.checked, b.departures, b.uneven)
    assert a.top == b.top and a.top_uneven == b.top_uneven


def layer9(folder: Path) -> Path:
    return folder / "ck" / "task" / "layer-009"


HL_DAMAGE = {
    "overwritten": (
        lambda f: overwrite(layer9(f) / "w.f64", 800, np.full(50, 0.5).tobytes()),
        "checksum of w.f64",
    ),  # fmt: skip
    "flipped": (lambda f: overwrite(layer9(f) / "w.f64", 0, b"\xff" * 1024), "checksum"),
    "truncated": (lambda f: os.truncate(layer9(f) / "w.f64", 4000), "w.f64: 4,000"),
    "counts": (lambda f: overwrite(layer9(f) / "meta.npz", 300, b"\x01"), "checksum of meta"),
    "deleted": (lambda f: shutil.rmtree(layer9(f)), "deleted"),
    "another-task-s": (
        lambda f: shutil.copyfile(layer9(f.parent / "win") / "w.f64", layer9(f) / "w.f64"),
        "checksum of w.f64",
    ),
    "unsealed": (lambda f: shutil.rmtree(f / "ck" / "task" / SEALS), "has no seal"),
}


@pytest.mark.parametrize("storage", ["memory", "disk"])
@pytest.mark.parametrize("kind", HL_DAMAGE)
def test_high_low_layers_resume_to_the_uninterrupted_value(high_low, tmp_path, storage, kind):
    root, whole = high_low
    shutil.copytree(root / storage, tmp_path / storage)
    shutil.copytree(root / "win", tmp_path / "win")
    damage, reason = HL_DAMAGE[kind]
    damage(tmp_path / storage)
    lines: list[str] = []
    again = solver.solve(*HL, storage, hl_context(tmp_path / storage, lines.append))
    same_result(again, whole)
    assert again.resumed_from == 0  # only the last layer is kept: the solve starts over
    assert len(lines) == 1 and reason in lines[0], lines
    assert lines[0].startswith("checkpoint layer-009 of task task is not used: ")
    if kind != "deleted":
        assert (tmp_path / storage / "ck" / "task" / DAMAGED / "layer-009").is_dir()


def test_high_low_resumes_from_a_layer_that_verifies(high_low, tmp_path):
    root, whole = high_low
    shutil.copytree(root / "disk", tmp_path / "disk")
    again = solver.solve(*HL, "disk", hl_context(tmp_path / "disk", pytest.fail))
    same_result(again, whole)
    assert again.resumed_from == 9


# ------------------------------------------------------------------------- through the pipeline

DECK6 = (4,) * 6  # the smallest uniform deck a budget sends out of core (367 MB in memory)
RANKS6 = ["study=ranks_exact", "study.grids.0.grid.deck=[[4,4,4,4,4,4]]", "stage=run"]
RANKS6 += ["~study.grids.0.strategies.greedy", "~study.grids.0.strategies.persistent"]
RANKS6 += ["run.progress=false", "run.memory_budget=366MB"]  # out of core: 367 MB in memory


@pytest.fixture(scope="module")
def stopped_study(tmp_path_factory):
    """A ranks_exact study of 6 types (optimal) whose task stopped after committing layer
    12, run under cluster=sync: an error row stored, the task's checkpoints kept."""
    import pandas as pd

    from pipeline.run import run_study
    from tests.helpers.runs import compose_config

    outputs = tmp_path_factory.mktemp("stopped")
    real = out_of_core.solve
    try:
        out_of_core.solve = lambda *a, **k: real(*a, **{**k, "log": stop_after(STOP)})
        run_study(compose_config(*RANKS6, f"paths.outputs={outputs}", "cluster=sync"),
                  log=lambda *_: None)  # fmt: skip
    finally:
        out_of_core.solve = real
    (row,) = pd.read_parquet(outputs / "ranks_exact" / "results").itertuples()
    assert row.status == "error" and "Stop" in row.error
    return outputs, row.task_id


@pytest.mark.parametrize("results", ["written", "full too"])
def test_a_full_disk_at_the_first_checkpoint_names_the_checkpoints_and_the_run_resumes(
    tmp_path, monkeypatch, capsys, results
):
    """The disk full as a task writes its first checkpoint (and then for the results too, or
    not): one line naming paths.outputs and the task's checkpoint folder, what failed first
    (not the results), exit 2, the run stopped; the same command then stores the task."""
    import errno

    from pipeline.running import driver
    from pipeline.storage.store import load_results
    from tests.helpers.commands import cli_in_process

    calls = []

    def full(path, *args, **kwargs):  # a piece's bytes reach the disk at its commit
        calls.append(path)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(checkpoints, "fsync_tree", full)
    if results == "full too":
        monkeypatch.setattr(driver, "replace_file", full)
    outputs = tmp_path / "out"
    args = [*RANKS6, f"paths.outputs={outputs}", "cluster=sync"]
    status, err = cli_in_process(monkeypatch, capsys, *args)
    assert status == 2 and len(calls) == 1 + (results == "full too"), err
    (line,) = err.strip().splitlines()
    (tid,) = [p.name for p in (outputs / "ranks_exact" / "checkpoints").iterdir()]
    folder = outputs / "ranks_exact" / "checkpoints" / tid
    assert line.startswith(
        f"error: paths.outputs='{outputs}': cannot write a task's checkpoints to {folder} "
        "(No space left on device); the stored results are intact"
    ), line
    assert "results/family=" not in line and "run the same command again to resume" in line
    monkeypatch.undo()  # the disk has room again
    status, err = cli_in_process(monkeypatch, capsys, *args)
    assert status == 0, err
    rows = load_results(outputs / "ranks_exact" / "results")  # each task's newest rows
    assert list(rows["task_id"]) == [tid] and list(rows["status"]) == ["ok"]


def damaged_copy(stopped_study, tmp_path) -> tuple[Path, Path]:
    outputs, tid = stopped_study
    shutil.copytree(outputs, tmp_path / "out")
    folder = tmp_path / "out" / "ranks_exact" / "checkpoints" / tid
    overwrite(folder / f"layer-{STOP:03d}", 24_000, np.full(6000, 0.5).tobytes())
    return tmp_path / "out", folder


def the_row(outputs: Path):
    import pandas as pd

    rows = pd.read_parquet(outputs / "ranks_exact" / "results")
    return rows[rows["status"] == "ok"].iloc[0], len(rows)


def test_a_damaged_piece_is_named_under_sync_and_kept_in_quarantine_once_stored(
    stopped_study, tmp_path
):
    """The piece is named on the terminal and the task stored with the uninterrupted value;
    the task's folder then goes, but not its ``damaged/``: that is moved to
    ``<study>/quarantine/checkpoints/<task id>/``, which guesslab never removes, and one line
    says where, how much and until when."""
    from pipeline.run import run_study
    from solvers.card_guessing.uniform_deck import in_memory
    from tests.helpers.runs import compose_config

    outputs, folder = damaged_copy(stopped_study, tmp_path)
    said: list[str] = []
    run_study(compose_config(*RANKS6, f"paths.outputs={outputs}", "cluster=sync"),
              log=said.append)  # fmt: skip
    named = [line for line in said if line.startswith("checkpoint ")]
    assert named == [
        f"checkpoint layer-{STOP:03d} of task {folder.name} is not used: the xxh3_128 "
        "checksum differs from the one sealed at commit (its bytes changed); set aside as "
        f"{folder / DAMAGED / f'layer-{STOP:03d}'}; it is recomputed"
    ]
    row, n = the_row(outputs)
    sol = in_memory.solve(DECK6)
    assert row["expected_score"] == sol.expected_score and row["n_states"] == sol.n_states
    assert n == 1 and not folder.exists()  # the ok row replaced the error row; cleared
    kept = outputs / "ranks_exact" / "quarantine" / "checkpoints" / folder.name
    piece = f"layer-{STOP:03d}"
    assert sorted(p.name for p in kept.iterdir()) == [piece, f"{piece}.seal.json"]
    size = (kept / piece).stat().st_size + (kept / f"{piece}.seal.json").stat().st_size
    assert [line for line in said if "kept as evidence" in line] == [
        f"warning: task {folder.name} is stored and its checkpoints removed, but for what was "
        f"set aside from them (2 entries, {format_bytes(size)}), kept as evidence in "
        f"{kept} until you delete it (guesslab never does)"
    ]


def test_what_is_kept_from_a_task_twice_never_overwrites_the_first(tmp_path):
    from pipeline.storage.checkpoints import StudyCheckpoints

    said: list[str] = []
    for text in ("first", "second"):
        cp = committed(tmp_path / "study", "0123456789abcdef0123", under="checkpoints")
        overwrite(cp.folder / "a", 0, text.encode())
        assert not cp.trusted("a", said.append)
        StudyCheckpoints(tmp_path / "study").clear([cp.folder.name], said.append)
        assert not cp.folder.exists()
    kept = tmp_path / "study" / "quarantine" / "checkpoints"
    assert sorted(p.name for p in kept.iterdir()) == [cp.folder.name, f"{cp.folder.name}.1"]
    assert (kept / cp.folder.name / "a").read_bytes()[:5] == b"first"
    assert (kept / f"{cp.folder.name}.1" / "a").read_bytes()[:6] == b"second"
    assert len([line for line in said if "kept as evidence" in line]) == 2


def test_a_linked_seals_folder_is_set_aside_and_the_task_stored_under_sync(stopped_study, tmp_path):
    """A linked seals folder through the pipeline: the task's ``.seals`` replaced by a link to a
    copy outside the study, a user's file among it; the run reads, moves and deletes nothing
    there, says one line, stores the uninterrupted value, and keeps the link as evidence."""
    from pipeline.run import run_study
    from solvers.card_guessing.uniform_deck import in_memory
    from tests.helpers.runs import compose_config

    outputs, tid = stopped_study
    shutil.copytree(outputs, tmp_path / "out")
    folder = tmp_path / "out" / "ranks_exact" / "checkpoints" / tid
    outside = tmp_path / "outside"
    shutil.copytree(folder / SEALS, outside)
    (outside / "meta.json.json").write_text("the user's own file")
    shutil.rmtree(folder / SEALS)
    (folder / SEALS).symlink_to(outside, target_is_directory=True)
    before = {p.name: p.read_bytes() for p in outside.iterdir()}
    said: list[str] = []
    run_study(compose_config(*RANKS6, f"paths.outputs={tmp_path / 'out'}", "cluster=sync"),
              log=said.append)  # fmt: skip
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == before
    named = [line for line in said if line.startswith("checkpoint")]
    assert len(named) == 1 and named[0].startswith(
        f"checkpoints of task {tid}: {folder / SEALS} is a symbolic link (to {outside}), "
    ), said
    row, n = the_row(tmp_path / "out")
    assert row["expected_score"] == in_memory.solve(DECK6).expected_score and n == 1
    kept = tmp_path / "out" / "ranks_exact" / "quarantine" / "checkpoints" / tid / SEALS
    assert kept.is_symlink() and os.readlink(kept) == str(outside)


@pytest.mark.slow
def test_a_damaged_piece_is_named_on_the_terminal_from_a_dask_worker(stopped_study, tmp_path):
    """The same on a LocalCluster of two workers: the task runs on a worker and its chunks
    on both; the line travels as a worker event and is printed once by the driver."""
    import subprocess
    import sys

    from solvers.card_guessing.uniform_deck import in_memory

    outputs, folder = damaged_copy(stopped_study, tmp_path)
    cmd = [sys.executable, "-m", "pipeline", *RANKS6, f"paths.outputs={outputs}"]
    cmd += ["cluster=local", "cluster.n_workers=2"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    named = [line for line in done.stdout.splitlines() if line.startswith("checkpoint ")]
    assert len(named) == 1 and named[0].startswith(
        f"checkpoint layer-{STOP:03d} of task {folder.name} is not used: the xxh3_128 checksum"
    ), done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    row, n = the_row(outputs)
    assert row["expected_score"] == in_memory.solve(DECK6).expected_score and n == 1
