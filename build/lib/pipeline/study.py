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

import contextlib
import gc
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from solvers.registry import Task, TaskError, get_family, grid_tasks


class StudyError(ValueError):
    """A study config is invalid; the message names the config key and the value."""


class PlannedTask(NamedTuple):
    """A canonical task with its id."""

    task_id: str
    task: Task


def plan(study: Mapping[str, Any]) -> list[PlannedTask]:
    """Every task of the study's grid, validated and with ids, in grid order (no duplicates).

    Raises StudyError naming the offending config key and value before anything runs.
    """
    name = study.get("name")
    if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
        raise StudyError(f"study.name={name!r}: must be a plain, non-empty name")
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
    with _no_cyclic_gc():
        return _planned(family.name, shared, parts_found)


@contextlib.contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Pause Python's cycle collector: planning keeps ~3 tracked containers per task, and the
    collections they trigger (the full ones walking every object the process holds) took
    10-25% of the planning time of 100,000 tasks.  Nothing made here forms a cycle."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _planned(family: str, shared: Mapping[str, Any], parts_found) -> list[PlannedTask]:
    """The tasks of every part of the study (parts_found: (config prefix, part) pairs)."""
    out: dict[str, PlannedTask] = {}
    for prefix, part in parts_found:
        own = {} if prefix == "study" else _mapping(part.get("grid") or {}, f"{prefix}.grid")
        axes = {f"study.grid.{k}": v for k, v in shared.items()}
        for k, v in own.items():
            if k in shared:
                raise StudyError(f"{prefix}.grid.{k}: also a shared axis study.grid.{k}")
            axes[f"{prefix}.grid.{k}"] = v
        for task, tid in _part_tasks(family, axes, part.get("strategies"), prefix):
            if tid not in out:
                out[tid] = PlannedTask(tid, task)
    return list(out.values())


def _part_tasks(
    family: str, grid: dict[str, Any], strategies: Any, prefix: str
) -> list[tuple[Task, str]]:
    """The validated tasks of one grid, with their ids: its axes times each strategy's own
    axes."""
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
    tasks = []
    for strategy, own in per_strategy.items():
        all_axes = dict(grid)
        for key, values in own.items():
            if any(k.rsplit(".", 1)[1] == key for k in grid):
                raise StudyError(f"{prefix}.strategies.{strategy}.{key}: also a grid axis")
            all_axes[f"{prefix}.strategies.{strategy}.{key}"] = values
        keys = list(all_axes)
        names = [k.rsplit(".", 1)[1] for k in keys]
        axes = [(name, _axis(all_axes[k], k)) for name, k in zip(names, keys, strict=True)]
        fixed = {"family": family} if strategy is None else {"family": family, "strategy": strategy}
        try:
            tasks += grid_tasks(fixed, axes)
        except TaskError as exc:
            where = f"{prefix}.strategies.{strategy}"
            raise StudyError(_config_message(exc, keys, where)) from None
    return tasks


def _config_message(exc: TaskError, keys: list[str], strategy: str) -> str:
    """The error with the task key replaced by the config key it came from."""
    for k in keys:
        if k.rsplit(".", 1)[1] == exc.key:
            return f"{k}={exc.value!r}: {exc.reason}"
    if exc.key == "strategy":
        return f"{strategy}: {exc.reason}"
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
