"""The family registry: every game registers here, by name, its :class:`Family` (its rules,
solver, scheduling and presentation, declared in :mod:`solvers.family`).

A *task* is a plain dict such as ``{"family": "card_guessing", "deck": [3, 3, 3],
"strategy": "optimal"}``.  :func:`validate` checks it against the family's declared
parameters (:mod:`solvers.params`) and returns the canonical task (defaults filled in,
parameters that do not apply to the chosen strategy set to ``None``); :func:`solve` runs it
and returns rows.  A task's id and seed: :mod:`solvers.task_ids`.

Nothing here knows about Hydra, Dask or files: solvers stay pure.
"""

from __future__ import annotations

import functools
import importlib
import math
import time
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from solvers.family import Family, Presentation, Row, Rules, Scheduling, Solver, Task
from solvers.params import REQUIRED, Param


class TaskError(ValueError):
    """A task (or a study grid) is invalid; the message names the key and the value."""

    def __init__(self, key: str, value: Any, reason: str):
        self.key, self.value, self.reason = key, value, reason
        super().__init__(f"{key}={value!r}: {reason}")


_FAMILIES: dict[str, Family] = {}

# Column types a row may use; the pipeline maps them to Arrow types.  Every row of a family
# has exactly the columns of :func:`row_columns`, so every Parquet file of a family shares
# one schema and plain ``pandas.read_parquet(<results>/family=<name>)`` works.
DTYPES = ("string", "int64", "float64", "bool", "list<float64>", "list<int64>")
COMMON_COLUMNS: dict[str, str] = {
    "task_id": "string",
    "study": "string",
    "family": "string",
    "strategy": "string",
    "status": "string",
    "error": "string",
    "seconds": "float64",
}


PARTS = {"rules": Rules, "solver": Solver, "scheduling": Scheduling, "presentation": Presentation}


def register(family: Family) -> Family:
    """Add a family to the registry (its name must be new, each part of its declared kind,
    its column dtypes of :data:`DTYPES`) and return it."""
    if family.name in _FAMILIES:
        raise ValueError(f"family {family.name!r} is registered twice")
    for attr, kind in PARTS.items():
        part = getattr(family, attr)
        if not isinstance(part, kind):
            raise TypeError(
                f"family {family.name!r}: {attr}={part!r:.80} is not a {kind.__name__} "
                f"(solvers.family.{kind.__name__})"
            )
    bad = {k: v for k, v in row_columns(family).items() if v not in DTYPES}
    if bad:
        raise ValueError(f"family {family.name!r}: unknown column dtypes {bad}; valid: {DTYPES}")
    _FAMILIES[family.name] = family
    return family


def row_columns(family: Family | str) -> dict[str, str]:
    """Every column of a family's rows with its dtype: common, parameters (and the list
    column of a parameter that declares one, :attr:`Param.list_column`), results."""
    fam = get_family(family) if isinstance(family, str) else family
    cols = dict(COMMON_COLUMNS)
    cols.update({p.name: p.dtype for p in fam.rules.params})
    cols.update({p.list_column: "list<int64>" for p in fam.rules.params if p.list_column})
    cols.update(fam.solver.columns)
    return cols


def std_column(column: str) -> str | None:
    """The standard deviation column beside a variance column (``score_variance`` and
    ``score_variance_exact``: ``score_std``), or None for a column that is not a variance."""
    if "variance" not in column:
        return None
    return column.removesuffix("_exact").replace("variance", "std")


def standard_deviations(fam: Family, row: Row) -> Row:
    """The standard deviation columns of ``row`` that its family's solver left empty: the
    square root of each float variance column (an exact variance's root is generally
    irrational, so the std is a float even where the variance is exact)."""
    out = {}
    for name, std in _variances(tuple(fam.solver.columns)):
        variance = row.get(name)
        if variance is not None and row.get(std) is None:
            out[std] = math.sqrt(variance) if variance >= 0 else math.nan
    return out


@functools.cache
def _variances(columns: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """(float variance column, its std column) among ``columns``: found once per family,
    since every row of every task asks (a row's stds took 1.9 us scanning the columns, 0.7 us
    so, beside the load benchmark's ~220 us solves)."""
    return tuple(
        (name, std)
        for name in columns
        if (std := std_column(name)) is not None and not name.endswith("_exact")
    )


def family_summary(name: str) -> Callable[..., str] | None:
    """The summary function the family ``name`` names (imported now), or None."""
    ref = get_family(name).presentation.summary
    return None if ref is None else named_function(ref)


def family_report(name: str) -> Callable[..., list[Any]] | None:
    """The report function the family ``name`` names (imported now), or None."""
    ref = get_family(name).presentation.report
    return None if ref is None else named_function(ref)


def named_function(ref: str) -> Callable[..., Any]:
    """The function a "module:function" reference names (its module imported now)."""
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


def families() -> tuple[str, ...]:
    """Names of all registered families, sorted."""
    return tuple(sorted(_FAMILIES))


def get_family(name: Any) -> Family:
    """The registered family called ``name``; an unknown name lists the valid ones."""
    if name not in _FAMILIES:
        raise TaskError("family", name, f"unknown family; valid: {', '.join(families())}")
    return _FAMILIES[name]


def validate(task: Mapping[str, Any]) -> Task:
    """The canonical form of ``task``: checked values, defaults filled, unused params None."""
    fam, out = checked_params(task)
    if fam.rules.check_task is not None:
        fam.rules.check_task(out)
    return out


def checked_params(task: Mapping[str, Any]) -> tuple[Family, Task]:
    """(family, task with every parameter checked): validate before the whole-task checks."""
    if not isinstance(task, Mapping):
        raise TaskError("task", task, "a task is a mapping of parameter names to values")
    fam = get_family(task.get("family"))
    strategy = None
    own = task.get("strategy_target") is not None
    if own:
        strategy = own_strategy_name(fam, task)
    elif fam.rules.strategies:
        strategy = task.get("strategy", fam.rules.default_strategy)
        if strategy not in fam.rules.strategies:
            raise TaskError(
                "strategy", strategy, f"unknown strategy; valid: {', '.join(fam.rules.strategies)}"
            )
    elif task.get("strategy") is not None:
        raise TaskError("strategy", task["strategy"], f"family {fam.name!r} has no strategies")
    known = set(fam.rules.param_names) | {"family", "strategy"}
    unknown = sorted(set(task) - known)
    if unknown:
        raise TaskError(
            unknown[0],
            task[unknown[0]],
            f"unknown parameter for family {fam.name!r}; valid: {', '.join(fam.rules.param_names)}",
        )
    out: Task = {"family": fam.name, "strategy": strategy}
    kind = "own" if own else strategy  # the default strategy when the task names none
    for p in fam.rules.params:
        out[p.name] = param_value(fam, p, kind, task)
    if own:  # the class imports, has the protocol's methods, takes the arguments
        fam.rules.own.check(fam.name, out)
    return fam, out


def own_strategy_name(fam: Family, task: Mapping[str, Any]) -> str:
    """The name of a task's strategy of one's own (the study's key for it), checked."""
    if fam.rules.own is None:
        raise TaskError(
            "strategy_target",
            task["strategy_target"],
            f"family {fam.name!r} takes no strategies of one's own",
        )
    name = task.get("strategy")
    if name in fam.rules.strategies:
        raise TaskError(
            "strategy",
            name,
            "is a built-in strategy's name: a strategy of one's own needs a name of its own",
        )
    if not fam.rules.own.valid_name(name):
        raise TaskError(
            "strategy",
            name,
            "a strategy of one's own is named by a letter or _ then letters, digits, _ "
            "(at most 64)",
        )
    return name


def strategy_kind(task: Mapping[str, Any]) -> str | None:
    """What ``Param.strategies`` is matched against: the strategy's name, or ``"own"`` for a
    strategy of one's own (:mod:`solvers.own_strategy`)."""
    if task.get("strategy_target") is not None:
        return "own"
    return task.get("strategy")


def param_value(fam: Family, p: Param, strategy: str | None, task: Mapping[str, Any]) -> Any:
    """The canonical value of parameter ``p`` in ``task`` (its default when not given).

    None where ``p`` does not apply to ``strategy`` (a name, or ``"own"``: see
    :func:`strategy_kind`), and a value given there is refused.
    """
    if not p.applies_to(strategy):
        if task.get(p.name) is not None:
            which = "strategies of one's own" if strategy == "own" else f"strategy {strategy!r}"
            only = ", ".join("strategies of one's own" if s == "own" else s for s in p.strategies)
            raise TaskError(p.name, task[p.name], f"does not apply to {which} (only to {only})")
        return None
    value = task.get(p.name, p.default)
    if value is REQUIRED:
        raise TaskError(p.name, None, f"required parameter of family {fam.name!r}")
    try:
        return p.check(value)
    except TaskError:
        raise
    except (ValueError, TypeError) as exc:
        raise TaskError(p.name, value, str(exc)) from None


def param_columns(task: Task) -> Row:
    """Row columns for a canonical task's parameters (lists become "3,3,3" strings), and the
    list column of each parameter declaring one (:attr:`Param.list_column`)."""
    out = {k: _column_value(v) for k, v in task.items()}
    for p in get_family(task["family"]).rules.params:
        if p.list_column:
            value = task.get(p.name)
            out[p.list_column] = None if value is None else [int(v) for v in value]
    return out


def _column_value(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return ",".join(str(_column_value(v)) for v in value)
    return value


def solve(task: Mapping[str, Any], *, canonical: bool = False) -> list[Row]:
    """Rows of results for one task: every parameter as a column plus the measured values.

    ``canonical=True`` skips validation for a task that :func:`validate` already returned
    (the pipeline validates the whole grid before it submits anything).  A task that
    spreads its work runs through :attr:`Scheduling.run_over_cluster`.
    """
    checked = dict(task) if canonical else validate(task)
    fam = get_family(checked["family"])
    start = time.perf_counter()
    spreads = fam.scheduling.spreads_over_cluster
    if spreads is not None and spreads(checked):
        rows = named_function(fam.scheduling.run_over_cluster)(checked)
    else:
        rows = fam.solver.run(checked)
    seconds = time.perf_counter() - start
    base = param_columns(checked)
    blank = dict.fromkeys(fam.solver.columns)
    out = []
    for row in rows:
        extra = set(row) - set(fam.solver.columns)
        if extra:
            raise RuntimeError(f"family {fam.name!r} returned undeclared columns {sorted(extra)}")
        row = {**base, **blank, **row, "status": "ok", "error": None, "seconds": seconds}
        out.append({**row, **standard_deviations(fam, row)})
    return out


def exact_columns(name: str, value: Fraction | int) -> Row:
    """Columns ``name`` (float64) and ``name_exact`` ("p/q") for an exact rational value."""
    q = Fraction(value)
    return {name: q.numerator / q.denominator, f"{name}_exact": f"{q.numerator}/{q.denominator}"}
