"""A study's grid: checked as a whole, expanded into canonical solver tasks with ids.

A study config (conf/study/NAME.yaml) names a family and a grid::

    name: paper
    family: card_guessing
    grid:                 # axes shared by every strategy: parameter -> list of values
      deck: [[3, 3, 3]]
    strategies:           # per-strategy axes; a strategy's axes multiply only its own rows
      optimal: {}
      greedy: {tie_break: [lowest]}

Every axis is a list of values; the tasks are the product of the grid axes times, for each
strategy, the product of its own axes.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from solvers.registry import Task, TaskError, get_family, task_id, validate


class StudyError(ValueError):
    """A study config is invalid; the message names the config key and the value."""


@dataclass(frozen=True)
class PlannedTask:
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
    grid = _mapping(study.get("grid", {}), "study.grid")
    strategies = study.get("strategies")
    if strategies is None:
        per_strategy: dict[str | None, Mapping[str, Any]] = {None: {}}
    else:
        strategies = _mapping(strategies, "study.strategies")
        if not strategies:
            raise StudyError("study.strategies={}: name at least one strategy")
        per_strategy = {
            s: _mapping(axes or {}, f"study.strategies.{s}") for s, axes in strategies.items()
        }
    for key in grid:
        if key in ("family", "strategy"):
            raise StudyError(f"study.grid.{key}: set it with study.{key}, not as a grid axis")
    out: dict[str, PlannedTask] = {}
    for strategy, axes in per_strategy.items():
        for key in axes:
            if key in grid:
                raise StudyError(
                    f"study.strategies.{strategy}.{key}: also a shared axis study.grid.{key}"
                )
        all_axes = {**{f"study.grid.{k}": v for k, v in grid.items()}}
        all_axes.update({f"study.strategies.{strategy}.{k}": v for k, v in axes.items()})
        keys = list(all_axes)
        values = [_axis(all_axes[k], k) for k in keys]
        for combo in itertools.product(*values):
            raw: dict[str, Any] = {"family": family.name}
            if strategy is not None:
                raw["strategy"] = strategy
            raw.update({k.rsplit(".", 1)[1]: v for k, v in zip(keys, combo, strict=True)})
            try:
                task = validate(raw)
            except TaskError as exc:
                raise StudyError(_config_message(exc, keys, strategy)) from None
            tid = task_id(task)
            out.setdefault(tid, PlannedTask(tid, task))
    return list(out.values())


def _config_message(exc: TaskError, keys: list[str], strategy: str | None) -> str:
    """The error with the task key replaced by the config key it came from."""
    for k in keys:
        if k.rsplit(".", 1)[1] == exc.key:
            return f"{k}={exc.value!r}: {exc.reason}"
    if exc.key == "strategy":
        return f"study.strategies.{strategy}: {exc.reason}"
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
