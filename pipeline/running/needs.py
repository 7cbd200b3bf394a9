"""A family's needs of the tasks left to run, checked against the budget before any work.

- **The budget** (:func:`budgeted`): the memory one process of a task may hold:
  ``run.memory_budget`` if set (refused over the most a process has there), else what the
  backend answers of its workers (``Backend.workers``, :mod:`pipeline.backends`).
- **The refusal** (:func:`check_needs`): ``stage=plan`` and ``stage=run`` ask each class of
  tasks left to run its :class:`~solvers.kit.budget.Need` through ``Scheduling.needs``; a need
  over the budget, or a disk need over the free disk of the study folder, stops the study
  with one line (a StudyError: exit status 2).  When the free disk holds the checkpoints of
  only a few tasks at once, :attr:`Needed.at_once` says how many (:func:`fitting`).
- **What the checkpoints keep** (:meth:`~pipeline.storage.checkpoints.StudyCheckpoints.kept`):
  a task resumed after a stop reuses the pieces it committed, which are part of its need; so
  each task's need is checked against the free disk plus what its own checkpoint folder (and
  the shared folder of its key) already holds.  Counted: the committed pieces with a seal,
  as regular files found without following links, on the study folder's file system, whose
  every hard link is in those folders; not counted: pieces set aside (``damaged/``),
  half-written ones (``.partial``), pieces without a seal, links, other file systems.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.backends.base import Workers
from pipeline.config import size_bytes
from pipeline.errors import StudyError
from pipeline.storage.checkpoints import Kept
from pipeline.storage.ids import IdSet, id_array
from pipeline.storage.study_folder import StudyFolder
from solvers.axes_read import call_per_class
from solvers.grid import Grid
from solvers.kit.budget import Budget, Need
from solvers.kit.words import format_bytes, format_duration
from solvers.registry import Task
from solvers.task_ids import identity_params


def budgeted(workers: Workers, memory_budget: Any) -> Workers:
    """The backend's ``workers`` with ``run.memory_budget``, when set, as their budget;
    StudyError for a budget over the most one process can hold where the run executes
    (:attr:`Workers.most`: this machine's memory, or the workers' memory limit), which a
    task sized by it would try to take."""
    if memory_budget is None:
        return workers
    given = f"run.memory_budget={memory_budget}"
    budget = Budget(size_bytes(memory_budget), given)
    most = workers.most
    if most is not None and budget.bytes > most.bytes:
        raise StudyError(
            f"{given}: more memory than one process has where the run executes, "
            f"{most.source}; give at most {format_bytes(most.bytes)}, or null (the memory "
            "of where the run executes)"
        )
    return dataclasses.replace(workers, budget=budget)


def free_disk(path: Path) -> int:
    """Free bytes on the file system of ``path`` (or of its nearest existing folder)."""
    here = path
    while not here.exists() and here != here.parent:
        here = here.parent
    return shutil.disk_usage(here).free


@dataclass(frozen=True)
class Needed:
    """The largest needs among a plan's tasks left to run, checked against ``where`` they
    run, and how many of the tasks with checkpoints the free disk under ``study_dir`` holds
    at once (``at_once``: None when it holds them all; the run then starts no more than that
    many at a time).  ``Needed()``: a family without needs."""

    disk: tuple[str, Task, Need] | None = None  # (task id, task, need) of the most disk
    at_once: int | None = None
    with_disk: int = 0  # tasks left to run that keep checkpoints
    free: int | None = None  # free bytes under the study folder, when asked
    where: Workers | None = None
    study_dir: Path | None = None
    shared: tuple[str, ...] = ()  # keys of the checkpoint pieces the tasks left share
    rows: tuple[NeedRow, ...] = ()  # each class of tasks left to run (the plan's table)
    shared_cpu: float = 0.0  # CPU seconds of shared pieces the tasks need not compute again
    kept: int = 0  # bytes the checkpoints of the tasks left already hold (part of their needs)

    @property
    def shortage(self) -> str | None:
        """The first row's short line saying what does not fit here, or None."""
        return next((row.brief for row in self.rows if row.brief), None)

    def table(self) -> list[str]:
        """``stage=plan``'s table: a row per class of tasks left to run (its states, largest
        layer, CPU time, memory per worker, checkpoint disk, whether it fits here)."""
        if not self.rows:
            return []
        labels = _labels([row.task for row in self.rows])
        head = ("tasks", "states", "largest layer", "CPU", "memory/worker", "disk", "here")
        cells = [head] + [
            (
                f"{label} ({row.tasks:,})" if row.tasks > 1 else label,
                f"{row.need.states:,}" if row.need.states else "",
                f"{row.need.largest:,}" if row.need.largest else "",
                _hours(row.need.cpu_seconds, row.tasks),
                format_bytes(row.need.memory),
                format_bytes(row.need.disk) if row.need.disk else "none",
                f"no: {row.short}" if row.short else "fits",
            )
            for label, row in zip(labels, self.rows, strict=True)
        ]
        widths = [max(len(c[k]) for c in cells) for k in range(len(head))]
        right = {1, 2, 3, 4, 5}
        return [
            "  "
            + "  ".join(
                c.rjust(w) if k in right else c.ljust(w)
                for k, (c, w) in enumerate(zip(cells[i], widths, strict=True))
            ).rstrip()  # fmt: skip
            for i in range(len(cells))
        ]

    def lines(self) -> list[str]:
        """``stage=plan``'s lines below the table: where the run executes (workers, their
        budget, the free disk), and how many tasks with checkpoints run at a time."""
        if self.where is None or not self.rows:
            return []
        where = self.where
        budget = (
            f"a budget of {format_bytes(where.budget.bytes)} a process from {where.budget.source}"
            if where.budget is not None
            else "no memory limit: each task checks its own machine"
        )
        disk = (
            "" if self.free is None else f"; {format_bytes(self.free)} free under {self.study_dir}"
        )
        if disk and self.kept:
            disk += (
                f", and {format_bytes(self.kept)} in the checkpoints the tasks left keep "
                "(counted toward their own needs)"
            )
        lines = [f"  here: {where.count} worker{'s' * (where.count != 1)}, {budget}{disk}"]
        if self.shared_cpu:  # a row's CPU is its task's alone
            alone = sum((row.need.cpu_seconds or 0.0) * row.tasks for row in self.rows)
            tasks = sum(row.tasks for row in self.rows)
            lines.insert(
                0,
                f"  CPU: {_hours(alone - self.shared_cpu, 1)} for the {tasks:,} tasks, the pieces "
                f"they share computed once ({_hours(alone, 1)} if each computed its own)",
            )
        at_once = None if self.shortage else self.at_once_line()  # none fits: no "at a time"
        return lines if at_once is None else [*lines, at_once]

    def at_once_line(self) -> str | None:
        """The line saying that the tasks with checkpoints run a few at a time, or None."""
        if self.at_once is None or self.disk is None or self.free is None:
            return None
        k = self.at_once
        serial = self.where is not None and self.where.serial  # one task at a time anyway
        return (
            f"  disk: {format_bytes(self.free)} free under {self.study_dir} holds the "
            f"checkpoints of {k:,} of the {self.with_disk:,} tasks that keep them (up to "
            f"{format_bytes(self.disk[2].disk)} each): "
            + (
                "cluster=sync runs them one at a time"
                if serial
                else "they run " + ("one at a time" if k == 1 else f"{k} at a time")
            )
        )


def fitting(disks: list[tuple[int, int]], free: int) -> int | None:
    """How many tasks' checkpoints fit in ``free`` bytes at once, the largest first, given
    (bytes > 0, number of tasks) pairs; None when all of them fit.  Every task fits alone
    (a larger one is refused before), so the answer is at least 1."""
    total = sum(d * n for d, n in disks)
    if total <= free:
        return None
    fit, used = 0, 0
    for d, n in sorted(disks, reverse=True):
        k = min(n, max(0, free - used) // d)
        fit, used = fit + k, used + k * d
        if k < n:
            break
    return max(1, fit)


@dataclass(frozen=True)
class NeedRow:
    """One class of tasks left to run, for the plan's table: its first task and its need,
    how many tasks it holds, and what does not fit where the run executes ("": it fits)."""

    tid: str
    task: Task
    need: Need
    tasks: int
    short: str = ""  # "memory", "disk" or ""
    refusal: str = ""  # the one line saying why (and what to change)
    brief: str = ""  # the same without the need's note (below the plan's table)


def check_needs(plan: Any, where: Workers, folder: StudyFolder, refuse: bool = True) -> Needed:
    """Ask ``Scheduling.needs`` of every class of tasks left to run.  A need over the budget or
    over the free disk of the study folder (plus what the task's own checkpoints already
    hold: :meth:`~pipeline.storage.checkpoints.StudyCheckpoints.kept`) raises StudyError (one
    line: the task, its need, the budget and where it came from); with ``refuse`` False it
    is kept in the result's rows and :attr:`Needed.shortage` instead (``stage=plan`` prints
    the whole table first)."""
    fam = plan.fam
    if fam.scheduling.needs is None:
        return Needed()
    study_dir = folder.path
    top_disk = None
    free: int | None = None
    kept = Kept()
    disks: list[tuple[int, int]] = []  # (bytes still to write, tasks) keeping checkpoints
    shared: dict[str, int] = {}  # bytes of the pieces kept once for the tasks of a key
    sharing: dict[str, list[float]] = {}  # CPU of a key's pieces, tasks sharing them
    rows: list[NeedRow] = []
    kept_own = 0  # bytes the checkpoints of the tasks left hold in their own folders
    for g, grid in enumerate(plan.grids):
        classes, axes = _need_classes(grid, plan.keep[g], fam.scheduling.needs, where.count)
        held: dict[tuple[int, ...], list[int]] | None = None  # class -> bytes of its kept tasks
        for tid, task, need, n, head in classes:
            if need is None:
                continue
            if need.disk and free is None:
                free = free_disk(study_dir)
                kept = folder.checkpoints.kept()
            if need.disk and held is None:
                held = _held_by_class(grid, plan.keep[g], axes, kept.own)
                kept_own += sum(map(sum, held.values()))
            part = need.shared_disk if need.shared else 0  # of need.disk, in the shared folder
            mine = held.get(_class_of(grid, axes, head), []) if need.disk and held else []
            least = min(mine) if len(mine) == n else 0  # a task of the class keeping none: 0
            has = min(least, need.disk - part) + min(kept.shared.get(need.shared, 0), part)
            row = _checked(tid, task, need, n, where.budget, free, study_dir, has)
            if row.refusal and refuse:
                raise StudyError(row.refusal)
            rows.append(row)
            if need.disk:
                if need.shared:
                    shared[need.shared] = max(shared.get(need.shared, 0), need.shared_disk)
                own = need.disk - part
                disks += [(own - min(h, own), 1) for h in mine] + [(own, n - len(mine))]
            if need.shared and need.shared_cpu_seconds:
                cpu_tasks = sharing.setdefault(need.shared, [need.shared_cpu_seconds, 0])
                cpu_tasks[1] += n
            if need.disk and (top_disk is None or need.disk > top_disk[2].disk):
                top_disk = (tid, task, need)
    # the shared pieces: once, less what their folders hold
    to_share = sum(max(0, b - kept.shared.get(key, 0)) for key, b in shared.items())
    room = None if free is None else free - to_share
    at_once = None if room is None else fitting([(d, n) for d, n in disks if d > 0 and n], room)
    with_disk = sum(n for _, n in disks)
    keys = tuple(sorted(shared))
    again = sum(cpu * (tasks - 1) for cpu, tasks in sharing.values())
    held_total = kept_own + sum(min(kept.shared.get(k, 0), b) for k, b in shared.items())
    return Needed(top_disk, at_once, with_disk, free, where, study_dir, keys,
                  tuple(rows), again, held_total)  # fmt: skip


def _held_by_class(
    grid: Grid, keep: np.ndarray | None, axes: list[int], own: dict[str, int]
) -> dict[tuple[int, ...], list[int]]:
    """The bytes each kept task folder holds (``own``: task id -> bytes), for the tasks of
    ``grid`` left to run, by class (the values of ``axes``).  Hashes the grid's ids only
    when a task folder holds something."""
    from pipeline.running.plan import CHUNK

    out: dict[tuple[int, ...], list[int]] = {}
    if not own:
        return out
    wanted = IdSet(id_array(sorted(own)))
    for lo in range(0, len(grid), CHUNK):
        hi = min(lo + CHUNK, len(grid))
        ids = grid.id_array(lo, hi)
        hit = wanted.contains(ids)
        if keep is not None:
            hit &= keep[lo:hi]
        for j in np.flatnonzero(hit).tolist():
            tid = ids[j].decode()
            out.setdefault(_class_of(grid, axes, lo + j), []).append(own[tid])
    return out


def _class_of(grid: Grid, axes: list[int], position: int) -> tuple[int, ...]:
    """The values (indices) of ``axes`` at ``position`` of ``grid``: its class."""
    if not axes:
        return ()
    coords = np.unravel_index(position, grid.shape)
    return tuple(int(coords[i]) for i in axes)


def _checked(tid, task, need, n, budget, free, study_dir, kept: int = 0) -> NeedRow:
    """The row of a class of tasks, with what does not fit here and the lines saying so;
    ``kept``: bytes of its need its checkpoints already hold (the least of its tasks')."""
    if budget is not None and need.memory > budget.bytes:
        what = f"{format_bytes(need.memory)} of memory per process"
        over = f"over the budget of {format_bytes(budget.bytes)} from {budget.source}"
        advice = (
            "set run.memory_budget or give the workers more memory (a need per process: "
            "more workers do not lower it)"
        )
        short = "memory"
    elif need.disk and free is not None and need.disk - kept > free:
        what = f"{format_bytes(need.disk)} of disk for its checkpoints"
        over = f"over the {format_bytes(free)} free under {study_dir}"
        if kept:
            over += f" and the {format_bytes(kept)} its checkpoints already hold"
        advice = "free some disk or choose another paths.outputs"
        short = "disk"
    else:
        return NeedRow(tid, task, need, n)
    refusal = f"{describe(task)} (task {tid}) needs {what}{_note(need)}, {over}; {advice}"
    brief = f"{describe(task)} needs {what}, {over}; {advice}"
    return NeedRow(tid, task, need, n, short, refusal, brief)


def shared_keys(plan: Any) -> set[str]:
    """The keys of the checkpoint pieces the plan's tasks share (``Need.shared``)."""
    fam = plan.fam
    if fam.scheduling.needs is None:
        return set()
    return {
        need.shared
        for g, grid in enumerate(plan.grids)
        for _, _, need, _ in grid_needs(grid, plan.keep[g], fam.scheduling.needs, 1)
        if need is not None and need.shared
    }


def _hours(seconds: float | None, tasks: int) -> str:
    """CPU time of a class of tasks (:func:`~solvers.kit.words.format_duration`: ``41.9 h``,
    ``12 min``, ``3.5 s``, ``396,640 years``); "" when not estimated."""
    return "" if seconds is None else format_duration(seconds * tasks)


def _labels(tasks: list[Task]) -> list[str]:
    """Short names of the table's tasks: the parameters that differ between its rows (a
    deck of r equal counts m as ``r x m``; unset ones left out), or the strategy alone; a
    single row: the whole task."""
    shown = [{k: v for k, v in identity_params(t).items() if k != "family"} for t in tasks]
    if len(shown) == 1:
        return [describe(tasks[0])]
    keys = [k for k in shown[0] if len({repr(s.get(k)) for s in shown}) > 1] or ["strategy"]
    return [" ".join(f"{k}={_compact(s[k])}" for k in keys if s.get(k) is not None) for s in shown]


def _compact(value: Any) -> str:
    if isinstance(value, list) and value and all(v == value[0] for v in value):
        return f"{len(value)}x{value[0]}"
    return str(value)


def _note(need: Need) -> str:
    return f" ({need.note})" if need.note else ""


def describe(task: Task) -> str:
    """A task as the user wrote it: ``deck=[4, 4, 4] strategy=optimal``."""
    shown = {k: v for k, v in identity_params(task).items() if k != "family" and v is not None}
    return " ".join(f"{k}={v}" for k, v in shown.items())


def grid_needs(
    grid: Grid, keep: np.ndarray | None, needs: Callable[[Task, int], Any], workers: int
) -> Iterator[tuple[str, Task, Any, int]]:
    """(task id, task, need, tasks in the class) for the first task left to run of each
    class of ``grid``'s tasks agreeing on the axes ``needs`` reads (learned as it goes, as
    the grid learns the axes of its whole-task check): a 10^6-task grid over two decks asks
    twice."""
    classes, _ = _need_classes(grid, keep, needs, workers)
    for tid, task, need, count, _ in classes:
        yield tid, task, need, count


def _need_classes(
    grid: Grid, keep: np.ndarray | None, needs: Callable[[Task, int], Any], workers: int
) -> tuple[list[tuple[str, Task, Any, int, int]], list[int]]:
    """:func:`grid_needs`'s classes, each with its first position, and the axes read."""

    def classes(axes: list[int]) -> Iterator[tuple[tuple[str, Task, int, int], Task]]:
        for position, count in _class_heads(grid, keep, axes):
            tid, task = next(grid.tasks_at([position]))
            yield (tid, task, count, position), task

    axis_of = {name: i for i, name in enumerate(grid.names)}
    axes, called = call_per_class(classes, lambda task: needs(task, workers), axis_of)
    out = [(tid, task, need, count, position) for (tid, task, count, position), _, need in called]
    return out, axes


def _class_heads(grid: Grid, keep: np.ndarray | None, axes: list[int]) -> list[tuple[int, int]]:
    """(first position left to run, tasks left to run) of each combination of ``axes``'
    values, in order of the first positions."""
    if keep is None and not axes:
        return [(0, len(grid))] if len(grid) else []
    size = 65_536
    heads: dict[tuple[int, ...], list[int]] = {}
    for lo in range(0, len(grid), size):
        hi = min(lo + size, len(grid))
        positions = np.arange(lo, hi) if keep is None else np.flatnonzero(keep[lo:hi]) + lo
        if not len(positions):
            continue
        if not axes:
            heads.setdefault((), [int(positions[0]), 0])[1] += len(positions)
            continue
        coords = np.unravel_index(positions, grid.shape)
        combos = np.stack([coords[i] for i in axes], axis=1)
        found, first, counts = np.unique(combos, axis=0, return_index=True, return_counts=True)
        for combo, i, n in zip(
            map(tuple, found.tolist()), first.tolist(), counts.tolist(), strict=True
        ):
            heads.setdefault(combo, [int(positions[i]), 0])[1] += n
    return sorted((head, n) for head, n in heads.values())
