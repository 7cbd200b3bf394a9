"""The search space: Hydra's sweep overrides on a strategy's parameters, as Optuna
distributions.

``study.strategies.info.gamma=interval(0,1)`` (floats), ``tag(log, interval(1e-3,1))``
(a log scale), ``study.strategies.mine.patience=range(1,12)`` (integers 1 to 11),
``choice(a,b)`` or ``a,b`` (categories).  Only the objective's strategy's parameters are
searched, and every one of them has one value in the study or is searched (a trial is one
task per deck).  Every refusal names the override.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pipeline.errors import StudyError, short_repr

PREFIX = "study.strategies."


def distribution_of(key: str, sweep: Any) -> Any:
    """The Optuna distribution of the sweep override ``key=sweep`` (Hydra's parsed value)."""
    import optuna.distributions as dist
    from hydra.core.override_parser.types import ChoiceSweep, IntervalSweep, RangeSweep

    if isinstance(sweep, IntervalSweep):
        log = "log" in sweep.tags
        low, high = sweep.start, sweep.end
        if not (_number(low) and _number(high)) or not low < high:
            raise StudyError(f"{key}=interval({low},{high}): give two numbers, low < high")
        if log and low <= 0:
            raise StudyError(f"{key}: a log interval must start above 0 (got {low})")
        if isinstance(low, int) and isinstance(high, int):
            return dist.IntDistribution(low, high, log=log)
        return dist.FloatDistribution(float(low), float(high), log=log)
    if isinstance(sweep, RangeSweep):
        start, stop, step = sweep.start, sweep.stop, sweep.step
        if not all(_number(v) for v in (start, stop, step)) or step <= 0 or not start < stop:
            raise StudyError(f"{key}=range({start},{stop},{step}): give start < stop, step > 0")
        last = start + step * math.ceil((stop - start) / step - 1)
        if all(isinstance(v, int) for v in (start, stop, step)):
            return dist.IntDistribution(start, last, step=step)
        return dist.FloatDistribution(float(start), float(last), step=float(step))
    if isinstance(sweep, ChoiceSweep):
        choices = [_plain(c) for c in sweep.list]
        if not choices:
            raise StudyError(f"{key}: a choice needs at least one value")
        return dist.CategoricalDistribution(choices)
    raise StudyError(f"{key}={short_repr(sweep)}: not a sweep Optuna can search")


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _plain(value: Any) -> Any:
    """A choice's value as Optuna stores it (None, bool, int, float or str)."""
    return value if value is None or isinstance(value, bool | int | float | str) else str(value)


def search_space(
    sweeps: Mapping[str, Any], strategy: str, axes: Mapping[str, Any]
) -> dict[str, Any]:
    """parameter -> distribution for the sweep overrides ``sweeps`` (key -> Hydra's parsed
    sweep), each a parameter of ``strategy`` (whose study axes are ``axes``); StudyError
    naming the override otherwise, or for a parameter of the strategy with several values
    in the study that is not searched (a trial is one value of each)."""
    if not sweeps:
        raise StudyError(
            f"a search needs a parameter to search, e.g. '{PREFIX}{strategy}.gamma=interval(0,1)'"
        )
    space = {}
    for key, sweep in sweeps.items():
        param = searched_param(key, strategy)
        space[param] = distribution_of(key, sweep)
        numeric_axis(key, axes.get(param), space[param])
    for param, values in axes.items():
        several = isinstance(values, list | tuple) and len(values) > 1
        if param not in space and not param.startswith("_") and several:
            raise StudyError(
                f"{PREFIX}{strategy}.{param}={short_repr(list(values))}: a search tries one "
                "value of each parameter at a time; give it one value or search it"
            )
    return space


def searched_param(key: str, strategy: str) -> str:
    """The parameter of ``strategy`` that the override key ``key`` names; StudyError if it
    names something else."""
    parts = key.split(".")
    if not key.startswith(PREFIX) or len(parts) != 4:
        raise StudyError(
            f"{key}: a search's parameters are the objective strategy's, {PREFIX}{strategy}.PARAM"
        )
    if parts[2] != strategy:
        raise StudyError(
            f"{key}: the objective's strategy is {strategy!r} (study.objective.strategy); "
            f"search its parameters, {PREFIX}{strategy}.PARAM"
        )
    if parts[3] == "_target_":
        raise StudyError(f"{key}: a strategy's class is not a parameter to search")
    return parts[3]


def numeric_axis(key: str, values: Any, distribution: Any) -> None:
    """StudyError when an interval or range searches a parameter the study gives a
    value that is not a number (a string, a list, a deck)."""
    import optuna.distributions as dist

    if isinstance(distribution, dist.CategoricalDistribution) or values is None:
        return
    given = values if isinstance(values, list | tuple) else [values]
    odd = [v for v in given if isinstance(v, bool) or not isinstance(v, int | float)]
    if odd:
        raise StudyError(
            f"{key}: the study gives {short_repr(list(given))}, not numbers; an interval or "
            "range searches a numeric parameter"
        )


def trial_axes(axes: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, list[Any]]:
    """The strategy's axes for one trial: the study's, each searched one set to the trial's
    value."""
    out = {
        k: v if k.startswith("_") else list(v) if isinstance(v, list | tuple) else [v]
        for k, v in axes.items()  # _target_ names the class: not an axis
    }
    out.update({k: [v] for k, v in params.items()})
    return out


def split_sweeps(arguments: Sequence[str]) -> tuple[list[str], dict[str, Any]]:
    """Hydra's overrides ``arguments`` as (the fixed ones, as given; key -> parsed sweep of
    each sweep override)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    fixed, sweeps = [], {}
    for override in OverridesParser.create().parse_overrides(list(arguments)):
        if override.is_sweep_override():
            sweeps[override.get_key_element()] = override.value()
        else:
            fixed.append(override.input_line)
    return fixed, sweeps
