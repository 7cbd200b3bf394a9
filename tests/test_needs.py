"""What the tasks left to run need (pipeline/needs.py): asked once per class of tasks, how
many tasks' checkpoints fit on the disk at once, and the disk check in a study folder that holds
checkpoints: a task's need is met by the free disk plus what its own checkpoint folder (and
the shared folder of its key) already holds, since a resumed task keeps those pieces.
Counted: committed pieces with a seal, regular files found without following links, on
the study folder's file system, whose every hard link is among the checkpoints; not
counted: pieces set aside, half-written, unsealed, links, files hard-linked elsewhere."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pipeline import needs
from pipeline.config import StudyError
from pipeline.run import prepared
from solvers.kit.checkpoints import DAMAGED, SEALS, SHARED
from tests.helpers.runs import compose_config

STUDY = ["study=ranks_exact", "study.grids.0.grid.deck=[[4,4,4,4,4,4]]", "cluster=sync"]
STUDY += ["~study.grids.0.strategies.greedy", "~study.grids.0.strategies.persistent"]
STUDY += ["run.memory_budget=366MB"]  # out of core: the task keeps layer files
MB = 10**6


def piece(folder: Path, name: str, size: int, sealed: bool = True) -> Path:
    """A committed piece of ``size`` bytes (written, not sparse), with a seal when asked."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(b"\1" * size)
    if sealed:
        (folder / SEALS).mkdir(exist_ok=True)
        (folder / SEALS / f"{name}.json").write_text("{}")
    return path


@pytest.fixture
def study(tmp_path):
    """The one-task study prepared in this process, its task id and its need."""
    run = prepared(compose_config(*STUDY, f"paths.outputs={tmp_path / 'out'}"))
    (row,) = needs.check_needs(run.plan, run.workers, run.folder).rows
    return run, row.tid, row.need


@pytest.fixture
def check(monkeypatch):
    """check(run, free): the needs of ``run``'s tasks left, ``free`` bytes free on its disk."""

    def checked(run, free: int) -> needs.Needed:
        monkeypatch.setattr(needs, "free_disk", lambda path: free)
        return needs.check_needs(run.plan, run.workers, run.folder)

    return checked


def test_a_task_s_kept_checkpoints_count_toward_its_disk_need(study, check):
    """A task stopped after committing some layers resumes where the free disk alone is
    below its need but the free disk and its pieces cover it; a byte less is refused, the
    line saying what its checkpoints hold."""
    run, tid, need = study
    assert need.disk > 4 * MB and need.shared
    own = run.folder / "checkpoints" / tid
    piece(own, "layer-010", 3 * MB)
    piece(run.folder / "checkpoints" / SHARED / need.shared, "last-t", 1 * MB)
    needed = check(run, need.disk - 4 * MB)
    assert needed.shortage is None and needed.kept == 4 * MB
    assert "4.0 MB in the checkpoints the tasks left keep" in needed.lines()[0]
    with pytest.raises(StudyError) as refused:
        check(run, need.disk - 4 * MB - 1)
    (line,) = str(refused.value).splitlines()
    assert f"(task {tid}) needs" in line and "the 4.0 MB its checkpoints already hold" in line


def test_only_the_task_s_own_sealed_pieces_are_counted(study, check, tmp_path):
    """Beside 3 MB of sealed pieces: a piece set aside, a half-written one, one without a
    seal, a link to a file outside, a file hard-linked outside the checkpoints, a folder
    piece holding a link, another task's folder and a folder not named like a task: none
    counts."""
    run, tid, need = study
    own = run.folder / "checkpoints" / tid
    piece(own, "layer-010", 3 * MB)
    outside = piece(tmp_path / "elsewhere", "big", 8 * MB, sealed=False)
    piece(own / DAMAGED, "layer-011", 8 * MB, sealed=False)
    piece(own / ".partial", "layer-012", 8 * MB, sealed=False)
    piece(own, "layer-013", 8 * MB, sealed=False)
    (own / "layer-014").symlink_to(outside)
    os.link(outside, own / "layer-015")
    (own / "layer-016").mkdir()
    (own / "layer-016" / "part").symlink_to(outside)
    for name in ("layer-014", "layer-015", "layer-016"):
        (own / SEALS / f"{name}.json").write_text("{}")
    piece(run.folder / "checkpoints" / ("0" * 20), "layer-001", 8 * MB)  # not a task left
    piece(run.folder / "checkpoints" / "notes", "layer-001", 8 * MB)
    assert check(run, need.disk - 3 * MB).kept == 3 * MB
    with pytest.raises(StudyError):
        check(run, need.disk - 3 * MB - 1)


def test_needs_is_asked_once_per_class_of_the_tasks_left_to_run():
    """A grid of 3 sizes x 1000 seeds, whose need reads the size only: asked once per size,
    on the first task of its class left to run (one more ask learns what it reads)."""
    import numpy as np

    from pipeline.needs import grid_needs
    from solvers.grid import Grid
    from solvers.kit.budget import Need
    from solvers.params import Param, as_int
    from solvers.registry import Family, Rules, Solver, families, register

    if "test_sized" not in families():
        register(
            Family(
                name="test_sized",
                version="1",
                rules=Rules(
                    params=(
                        Param("size", as_int, 1, "size", dtype="int64"),
                        Param("seed", as_int, 0, "seed", dtype="int64"),
                    )
                ),
                solver=Solver(run=lambda task: [{}]),
            )
        )
    grid = Grid.checked({"family": "test_sized"}, [("size", [1, 2, 3]), ("seed", range(1000))])
    asked = []

    def needs(task, workers):
        asked.append((task["size"], task["seed"] if task["size"] == 9 else None))
        return Need(task["size"] * workers)

    got = list(grid_needs(grid, None, needs, 2))
    assert [(n.memory, count) for _, _, n, count in got] == [(2, 1000), (4, 1000), (6, 1000)]
    assert len(asked) == 4  # the first ask learns that needs reads the size
    keep = np.ones(len(grid), bool)
    keep[:1500] = False  # size 1 stored, size 2 half stored
    got = list(grid_needs(grid, keep, needs, 1))
    assert [(t["size"], t["seed"], count) for _, t, _, count in got] == [
        (2, 500, 500),
        (3, 0, 1000),
    ]


@pytest.mark.parametrize(
    ("disks", "free", "fit"),
    [
        ([(40, 3)], 130, None),  # all three fit
        ([(46, 3)], 75, 1),  # the 11-type study on this machine's disk
        ([(46, 3)], 95, 2),
        ([(30, 1), (10, 4)], 50, 3),  # the largest first: 30 + 10 + 10
        ([(10, 2)], 15, 1),
    ],
)
def test_how_many_tasks_checkpoints_fit_at_once(disks, free, fit):
    from pipeline.needs import fitting

    assert fitting(disks, free) == fit
