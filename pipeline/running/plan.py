"""A study's grid: checked as a whole, expanded into canonical solver tasks with ids.

A study config (conf/study/NAME.yaml) names a family and a grid::

    name: mine
    family: my_game       # a registered family (solvers.families())
    grid:                 # axes shared by every strategy: parameter -> list of values
      deck: [[3, 3, 3]]
    strategies:           # per-strategy axes; a strategy's axes multiply only its own rows
      optimal: {}
      greedy: {tie_break: [lowest]}

Every axis is a list of values; the tasks are the product of the grid axes times, for each
strategy, the product of its own axes.  A study mixing kinds of task (distinct cards and real
decks, say) lists several grids, each with its own axes and strategies; ``grid`` then holds
the axes shared by all of them::

    grids:
      - grid: {n: [2, 3, 4]}
        strategies: {optimal: {}}
      - grid: {ranks: [3, 4], suits: [2, 4]}
        strategies: {optimal: {}, majority: {}}
"""

from __future__ import annotations

import copy
import itertools
import json
import math
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from pipeline.config import GridPart, StudyConfig, checked_study
from pipeline.errors import StudyError
from pipeline.heap import no_cyclic_gc
from pipeline.storage.ids import IdSet
from solvers import family_import_errors
from solvers.grid import Axes, Grid
from solvers.kit.words import counted, format_duration
from solvers.own_code import TARGET
from solvers.registry import Family, Task, TaskError, get_family
from solvers.task_ids import ID_LENGTH

if TYPE_CHECKING:
    from pipeline.storage.store_newest import StoredIds

CHUNK = 65_536  # tasks hashed at a time when ids are needed in bulk (bounded memory)


class PlannedTask(NamedTuple):
    """A canonical task with its id."""

    task_id: str
    task: Task


class StudyPlan:
    """A study's tasks, checked and counted but never listed: one :class:`~solvers.grid.Grid`
    per strategy of each grid part, in study order, and which of their positions run.

    A position is left out when it repeats an earlier task of the study (two grid parts
    sharing tasks, or a whole-task check filling a parameter in) and, after
    :meth:`left_to_run`, when the store already holds its task.  ``keep[g]`` is None while
    every position of grid ``g`` runs, else a boolean array over the grid (1 byte a task).
    The study's :class:`~solvers.family.Family` is :attr:`fam` (looked up once, by
    :func:`planned`), its name :attr:`family`.
    """

    def __init__(self, name: str, fam: Family, grids: list[Grid], parts: int = 1):
        self.name, self.fam, self.family, self.grids = name, fam, fam.name, grids
        self.parts = parts  # the study's grids (one, or the parts of study.grids)
        self.keep: list[np.ndarray | None] = _first_occurrences(grids)
        self.repeated = sum(
            len(g) - int(k.sum()) for g, k in zip(grids, self.keep, strict=True) if k is not None
        )
        self.stored = 0  # tasks left out because the store holds them (left_to_run)
        self.outside = 0  # tasks left out as not asked for (only): no longer the plan's
        self.supersedes = False  # whether a task left to run has rows in the store

    @property
    def strategies(self) -> list[str]:
        """The study's strategies, in order (none for a family without strategies)."""
        named = (g.base.get("strategy") for g in self.grids)
        return list(dict.fromkeys(s for s in named if s is not None))

    @property
    def n_tasks(self) -> int:
        """Distinct tasks of the study (of those asked for, after :meth:`only`)."""
        return sum(len(g) for g in self.grids) - self.repeated - self.outside

    def __len__(self) -> int:
        """Tasks left to run."""
        return self.n_tasks - self.stored

    def __iter__(self) -> Iterator[PlannedTask]:
        """Every task left to run, in study order (lazily)."""
        for g, positions in self.slices():
            for tid, task in self.grids[g].tasks_at(positions):
                yield PlannedTask(tid, task)

    def slices(
        self, size: int = CHUNK, grids: Iterable[int] | None = None
    ) -> Iterator[tuple[int, np.ndarray]]:
        """(grid number, positions to run) in study order, at most ``size`` positions each;
        of the grids numbered ``grids`` only, when given."""
        for g in range(len(self.grids)) if grids is None else grids:
            grid, keep = self.grids[g], self.keep[g]
            for lo in range(0, len(grid), size):
                hi = min(lo + size, len(grid))
                if keep is None:
                    yield g, np.arange(lo, hi)
                else:
                    positions = np.flatnonzero(keep[lo:hi]) + lo
                    if len(positions):
                        yield g, positions

    def id_chunks(self) -> Iterator[np.ndarray]:
        """The ids of the tasks left to run (arrays, CHUNK tasks of a grid at a time)."""
        for g, grid in enumerate(self.grids):
            keep = self.keep[g]
            for lo, hi, ids in _id_chunks(grid):
                yield ids if keep is None else ids[keep[lo:hi]]

    def ids(self) -> np.ndarray:
        """The ids of the tasks left to run, in study order, as one array (20 bytes a task:
        :meth:`id_chunks` joined)."""
        chunks = list(self.id_chunks())
        return np.concatenate(chunks) if chunks else np.zeros(0, f"S{ID_LENGTH}")

    def left_to_run(self, stored: StoredIds, *, recompute: bool = False) -> StudyPlan:
        """This plan without the tasks the store holds ok (none with ``recompute``), as a new
        StudyPlan (this one is left as it is): its :attr:`stored` counts the tasks left out, and
        its :attr:`supersedes` says whether a task left to run has rows in the store
        (``stored.every``), which its new rows will supersede.

        Hashes every task once, CHUNK at a time, when the store is not empty.
        """
        left = copy.copy(self)
        left.keep = list(self.keep)
        if not len(stored.every):
            return left
        for g, grid in enumerate(self.grids):
            keep = self.keep[g]
            for lo, hi, ids in _id_chunks(grid):
                running = np.ones(hi - lo, bool) if keep is None else keep[lo:hi].copy()
                if not recompute:
                    found = stored.ok.contains(ids) & running
                    if found.any():
                        if keep is self.keep[g]:  # this grid's first change: a copy of its own
                            keep = left.keep[g] = (
                                np.ones(len(grid), bool) if keep is None else keep.copy()
                            )
                        keep[lo:hi] &= ~found
                        running &= ~found
                        left.stored += int(found.sum())
                if not left.supersedes:
                    left.supersedes = bool(stored.every.contains(ids[running]).any())
        return left

    def only(self, wanted: IdSet) -> StudyPlan:
        """This plan with only the tasks whose ids are in ``wanted`` (and left to run here),
        as a new StudyPlan of those tasks alone (this one is left as it is; the others count as
        :attr:`outside`): what :mod:`pipeline.reproduce` recomputes of a stored study.
        Hashes every task once, CHUNK at a time."""
        left = copy.copy(self)
        left.keep = []
        for g, grid in enumerate(self.grids):
            keep = np.zeros(len(grid), bool)
            for lo, hi, ids in _id_chunks(grid):
                keep[lo:hi] = wanted.contains(ids)
            if self.keep[g] is not None:
                keep &= self.keep[g]
            left.keep.append(keep)
        kept = sum(int(k.sum()) for k in left.keep)
        left.stored, left.outside = 0, sum(len(g) for g in self.grids) - self.repeated - kept
        return left

    def described(self, shared_seconds: float = 0.0, run_line: str | None = None) -> list[str]:
        """``stage=plan``'s lines on the plan: its tasks, how many the store holds, how many
        are left to run and the solver time to expect for them (less ``shared_seconds``, the
        work of pieces the tasks share that they need not compute again), then ``run_line``
        (the run's time, :mod:`pipeline.running.run_estimate`) when given."""
        strategies = f", {counted(len(self.strategies), 'strategy')}" if self.strategies else ""
        lines = [
            f"study {self.name}: {counted(self.n_tasks, 'task')} ({counted(self.parts, 'grid')}"
            f"{strategies}), {self.stored:,} already stored, {len(self):,} to run",
        ]
        if self.repeated:
            lines.append(f"  ({self.repeated:,} grid points repeat an earlier task and run once)")
        if not len(self):
            lines.append("  solver time: none, every task is stored")
        elif (estimate := self.estimated_seconds()) is None:
            lines.append(
                f"  solver time: no estimate (family {self.family} has no model for these tasks)"
            )
        else:
            seconds, sampled = estimate
            shared = ", pieces the tasks share computed once" if shared_seconds else ""
            lines.append(
                f"  solver time: about {format_duration(seconds - shared_seconds)} for the tasks "
                f"to run (the family's estimate, from {counted(sampled, 'sampled task')}{shared})"
            )
            if run_line:
                lines.append(run_line)
        from solvers.kit.compile_once import compiled_line  # Numba: for stage=plan only

        module = self.fam.solver.run.__module__
        parts = module.split(".")  # a built-in family's kernels: all of solvers.<family>
        package = ".".join(parts[:2]) if parts[0] == "solvers" else module
        if len(self) and (kernels := compiled_line(package)):
            lines.append(kernels)
        return lines

    def estimated_seconds(self, sample: int = 1000) -> tuple[float, int] | None:
        """(the family's estimate of the solver time of the tasks left to run, how many
        tasks it was evaluated on), or None for a family without ``estimate`` or a sampled
        task it cannot estimate.

        Each grid's estimate is its mean over up to ``sample`` evenly spaced tasks times its
        task count: exact when the estimate depends on the sampled axes only through values
        the sample covers, an extrapolation otherwise."""
        estimate = self.fam.scheduling.estimate
        if estimate is None:
            return None
        total, sampled = 0.0, 0
        for g, grid in enumerate(self.grids):
            keep = self.keep[g]
            n = len(grid) if keep is None else int(keep.sum())
            if not n:
                continue
            spaced = np.unique(np.linspace(0, n - 1, min(sample, n)).astype(np.int64))
            picked = spaced if keep is None else np.flatnonzero(keep)[spaced]
            values = [estimate(task) for _, task in grid.tasks_at(picked)]
            if any(v is None for v in values):
                return None
            total += float(np.mean(values)) * n
            sampled += len(values)
        return total, sampled


def _id_chunks(grid: Grid) -> Iterator[tuple[int, int, np.ndarray]]:
    """(lo, hi, the ids of positions lo..hi-1 as an array) over the grid, CHUNK at a time:
    no Python string outlives its chunk."""
    for lo in range(0, len(grid), CHUNK):
        hi = min(lo + CHUNK, len(grid))
        yield lo, hi, grid.id_array(lo, hi)


def _first_occurrences(grids: list[Grid]) -> list[np.ndarray | None]:
    """Per grid, None or which positions are the first occurrence of their task in the study.

    Only grids that can repeat a task are hashed: those whose check filled a parameter in,
    and those sharing a strategy with another grid (two grid parts); others cannot repeat
    (distinct canonical axis values give distinct ids).
    """
    strategies = [g.base["strategy"] for g in grids]
    suspects = [i for i, g in enumerate(grids) if g.fills or strategies.count(strategies[i]) > 1]
    keep: list[np.ndarray | None] = [None] * len(grids)
    if not suspects:
        return keep
    ids = np.concatenate([ids for i in suspects for _, _, ids in _id_chunks(grids[i])])
    first = np.zeros(len(ids), bool)
    first[np.unique(ids, return_index=True)[1]] = True
    at = 0
    for i in suspects:
        mine = first[at : at + len(grids[i])]
        at += len(grids[i])
        keep[i] = None if mine.all() else mine
    return keep


def plan(study: Mapping[str, Any]) -> list[PlannedTask]:
    """Every task of a (small) study, in study order: :func:`planned`, listed."""
    return list(planned(study))


def planned(study: Mapping[str, Any] | StudyConfig) -> StudyPlan:
    """The study's :class:`StudyPlan`: every task validated (as validate would, by class), none
    listed.  Raises StudyError naming the offending config key and value before anything
    runs: a study given as a mapping is first checked by
    :class:`pipeline.config.StudyConfig` (known keys only, typed)."""
    if not isinstance(study, StudyConfig):
        study = checked_study(study)
    study = study.plain()
    name = study["name"]
    for where, why in family_import_errors().items():
        raise StudyError(f"{where}: {why}")
    try:
        family = get_family(study.get("family"))
    except TaskError as exc:
        raise StudyError(f"study.{exc}") from None
    shared = _mapping(study.get("grid") or {}, "study.grid")
    parts = study.get("grids")
    if parts is None:
        parts_found = [("study", {"strategies": study.get("strategies")})]
    else:
        if study.get("strategies") is not None:
            raise StudyError("study.strategies: with study.grids, give strategies in each part")
        if not isinstance(parts, list | tuple) or not parts:
            raise StudyError(f"study.grids={parts!r}: must be a non-empty list of grids")
        parts_found = [
            (f"study.grids[{i}]", _mapping(part, f"study.grids[{i}]"))
            for i, part in enumerate(parts)
        ]
    with no_cyclic_gc():  # no collector passes over the objects planning makes (pipeline.heap)
        grids = _grids(family.name, shared, parts_found)
        return StudyPlan(name, family, grids, parts=len(parts_found))


def named_tasks(study: StudyConfig) -> int:
    """The most tasks the checked ``study`` names, counted from its axes alone: per grid
    part, the product of its axes' lengths times the sum over its strategies of theirs
    (repeated values counted, nothing checked or planned).  Planning a study costs work in
    proportion to its tasks; this bounds it before any is done (pipeline.running.claims)."""

    def product(axes: Mapping[str, Any] | None) -> int:
        return math.prod(
            len(v) if isinstance(v, list | tuple) else 1 for v in (axes or {}).values()
        )

    shared = product(study.grid)
    parts = study.grids or [GridPart(strategies=study.strategies)]
    total = 0
    for part in parts:
        per_strategy = [None] if part.strategies is None else list(part.strategies.values())
        total += shared * product(part.grid) * sum(product(axes) for axes in per_strategy)
    return total


def _grids(family: str, shared: Mapping[str, Any], parts_found) -> list[Grid]:
    """The grids of every part of the study (parts_found: (config prefix, part) pairs)."""
    out: list[Grid] = []
    for prefix, part in parts_found:
        own = {} if prefix == "study" else _mapping(part.get("grid") or {}, f"{prefix}.grid")
        axes = {f"study.grid.{k}": v for k, v in shared.items()}
        for k, v in own.items():
            if k in shared:
                raise StudyError(f"{prefix}.grid.{k}: also a shared axis study.grid.{k}")
            axes[f"{prefix}.grid.{k}"] = v
        out += _part_grids(family, axes, part.get("strategies"), prefix)
    return out


def _part_grids(family: str, grid: dict[str, Any], strategies: Any, prefix: str) -> list[Grid]:
    """The checked grids of one part: its axes times each strategy's own axes."""
    for key in grid:
        if key.rsplit(".", 1)[1] in ("family", "strategy"):
            raise StudyError(f"{key}: set it with study.family or strategies, not as a grid axis")
    if strategies is None:
        per_strategy: dict[str | None, Mapping[str, Any]] = {None: {}}
    else:
        strategies = _mapping(strategies, f"{prefix}.strategies")
        if not strategies:
            raise StudyError(f"{prefix}.strategies={{}}: name at least one strategy")
        per_strategy = {
            s: _mapping(axes or {}, f"{prefix}.strategies.{s}") for s, axes in strategies.items()
        }
    grids = []
    for strategy, own in per_strategy.items():
        where = f"{prefix}.strategies.{strategy}"
        if TARGET in own:  # a strategy of one's own (solvers/own_strategy.py)
            fixed, keys, axes = _own_strategy_axes(family, grid, strategy, own, where)
        else:
            fixed, keys, axes = _strategy_axes(family, grid, strategy, own, where)
        try:
            grids.append(Grid.checked(fixed, axes))
        except TaskError as exc:
            raise StudyError(_config_message(exc, keys, where, own.get(TARGET))) from None
    return grids


def _strategy_axes(
    family: str, grid: dict[str, Any], strategy: str | None, own: Mapping[str, Any], where: str
) -> tuple[dict[str, Any], list[str], Axes]:
    """(the task every position of a strategy's grid shares, the config keys of its axes,
    its axes): the part's axes, then the strategy's own."""
    all_axes = dict(grid)
    for key, values in own.items():
        if any(k.rsplit(".", 1)[1] == key for k in grid):
            raise StudyError(f"{where}.{key}: also a grid axis")
        all_axes[f"{where}.{key}"] = values
    keys = list(all_axes)
    names = [k.rsplit(".", 1)[1] for k in keys]
    axes = [(name, _axis(all_axes[k], k)) for name, k in zip(names, keys, strict=True)]
    fixed = {"family": family} if strategy is None else {"family": family, "strategy": strategy}
    return fixed, keys, axes


def _own_strategy_axes(
    family: str, grid: dict[str, Any], name: str, own: Mapping[str, Any], where: str
) -> tuple[dict[str, Any], list[str], Axes]:
    """:func:`_strategy_axes` of a strategy of one's own: the part's axes times one axis of
    its constructor arguments (``strategy_params``: each combination of the lists given for
    them, in product order, as one mapping per task)."""
    target = own[TARGET]
    if not isinstance(target, str):
        raise StudyError(f"{where}.{TARGET}={target!r}: must be a dotted path module.Class")
    arguments = {k: v for k, v in own.items() if k != TARGET}
    for key in arguments:
        if any(k.rsplit(".", 1)[1] == key for k in grid):
            raise StudyError(f"{where}.{key}: also a grid axis")
    lists = {k: _axis(v, f"{where}.{k}") for k, v in arguments.items()}
    for key, values in lists.items():
        for value in values:
            _json_argument(value, f"{where}.{key}")
    combos = [dict(zip(lists, combo, strict=True)) for combo in itertools.product(*lists.values())]
    keys = list(grid)
    axes = [(k.rsplit(".", 1)[1], _axis(grid[k], k)) for k in keys]
    axes.append(("strategy_params", combos))
    fixed = {"family": family, "strategy": name, "strategy_target": target}
    return fixed, keys, axes


def _json_argument(value: Any, key: str) -> None:
    """StudyError naming the argument ``key`` when its ``value`` is not a JSON value (NaN,
    an infinity): the arguments are stored as JSON text."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise StudyError(
            f"{key}={value!r}: an argument of a strategy of one's own must be a JSON value "
            f"(a finite number, text, true/false, null, a list, a mapping): {exc}"
        ) from None


def _config_message(exc: TaskError, keys: list[str], where: str, target: Any = None) -> str:
    """The error with the task key replaced by the config key it came from (``where``: the
    strategy's key; ``target``: the ``_target_`` of a strategy of one's own, or None)."""
    if target is not None:
        if exc.key == "strategy_target":
            return f"{where}.{TARGET}={target!r}: {exc.reason}"
        if exc.key in ("strategy", "strategy_params", "strategy_code"):
            return f"{where}: {exc.reason}"
    for k in keys:
        if k.rsplit(".", 1)[1] == exc.key:
            return f"{k}={exc.value!r}: {exc.reason}"
    if exc.key == "strategy":
        return f"{where}: {exc.reason}"
    return f"study.grid.{exc.key}={exc.value!r}: {exc.reason}"


def _mapping(value: Any, key: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise StudyError(f"{key}={value!r}: must be a mapping of names to values")
    return value


def _axis(value: Any, key: str) -> list[Any]:
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise StudyError(f"{key}={value!r}: an axis must be a list of values, e.g. [{value!r}]")
    if not value:
        raise StudyError(f"{key}=[]: an axis needs at least one value")
    return list(value)
