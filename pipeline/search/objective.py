"""What a search optimises: the study's ``objective:`` block, checked against the study.

    objective:
      strategy: info            # the strategy whose parameters are searched
      column: expected_score    # a numeric result column of the family's rows
      direction: maximize       # or minimize
      combine: mean             # over the trial's tasks (one per deck ...): mean, min or max
      relative_to: optimal      # optional: each task's value over this strategy's on its deck

A trial's value is its tasks' values (``column``, or its ratio to ``relative_to``'s value on
the same deck and other shared axes) combined.  Every check names the key and the value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from pipeline.config import ObjectiveConfig, StudyConfig, StudyError, short_repr
from solvers.registry import get_family

NUMERIC = ("float64", "float32", "int64", "int32")
DEFAULTS = {"column": "expected_score", "direction": "maximize", "combine": "mean"}
COMBINE = {"mean": lambda xs: sum(xs) / len(xs), "min": min, "max": max}


@dataclass(frozen=True)
class Objective:
    """A checked objective: the strategy searched, the column, the direction, how a trial's
    tasks combine, and the reference strategy (None: the column itself)."""

    strategy: str
    column: str
    direction: str
    combine: str
    relative_to: str | None

    @property
    def maximize(self) -> bool:
        return self.direction == "maximize"

    def describe(self) -> str:
        """In words: ``info's expected_score (mean over the decks), maximised``."""
        what = f"{self.strategy}'s {self.column}"
        if self.relative_to:
            what += f" / {self.relative_to}'s"
        return f"{what} ({self.combine} over the trial's tasks), {self.direction}d"

    def value(self, values: Sequence[float], references: Sequence[float] | None) -> float:
        """A trial's value from its tasks' ``values`` (and the reference's on the same
        tasks' decks, when ``relative_to``)."""
        if self.relative_to:
            values = [v / r for v, r in zip(values, references or (), strict=True)]
        return float(COMBINE[self.combine](list(values)))

    def exact(
        self, exacts: Sequence[str | None], references: Sequence[str | None] | None = None
    ) -> Fraction | None:
        """The trial's value as a fraction, where every task's value (and the reference's,
        with ``relative_to``) is exact."""
        given = list(exacts) + (list(references or ()) if self.relative_to else [])
        if not exacts or any(e is None for e in given):
            return None
        fractions = [Fraction(e) for e in exacts]
        if self.relative_to:
            fractions = [f / Fraction(r) for f, r in zip(fractions, references, strict=True)]
        return COMBINE[self.combine](fractions)


def checked_objective(study: StudyConfig) -> Objective:
    """The study's objective, checked: StudyError naming the key and the value for a study
    without one, a strategy it does not have, a column its family's rows do not have or
    that is not numeric."""
    given: ObjectiveConfig | None = study.objective
    if given is None:
        raise StudyError(
            f"study.objective: study {study.name!r} has no objective; a search needs one, e.g. "
            "objective: {strategy: info, column: expected_score, direction: maximize} in the "
            "study file, or +study.objective.strategy=info on the command line"
        )
    strategies = study_strategies(study)
    for key, name in (("strategy", given.strategy), ("relative_to", given.relative_to)):
        if name is not None and name not in strategies:
            raise StudyError(
                f"study.objective.{key}={short_repr(name)}: not a strategy of study "
                f"{study.name!r} (its strategies: {', '.join(strategies) or 'none'})"
            )
    column = given.column or DEFAULTS["column"]
    columns = dict(get_family(study.family).solver.columns)
    dtype = columns.get(column)
    if dtype is None or dtype not in NUMERIC:
        numeric = [c for c, t in columns.items() if t in NUMERIC]
        what = "not a column" if dtype is None else f"not numeric ({dtype})"
        raise StudyError(
            f"study.objective.column={short_repr(column)}: {what} of the "
            f"{study.family} rows; numeric columns: {', '.join(numeric)}"
        )
    return Objective(
        given.strategy,
        column,
        given.direction or DEFAULTS["direction"],
        given.combine or DEFAULTS["combine"],
        given.relative_to,
    )


def study_strategies(study: StudyConfig) -> list[str]:
    """The strategies the study names (its ``strategies``, or those of its ``grids``)."""
    names: dict[str, None] = dict.fromkeys((study.strategies or {}).keys())
    for part in study.grids or ():
        names.update(dict.fromkeys((part.strategies or {}).keys()))
    return list(names)


def strategy_axes(study: StudyConfig, strategy: str) -> Mapping[str, Any]:
    """The searched strategy's own axes in the study (its ``strategies`` entry)."""
    if study.grids is not None:
        raise StudyError(
            f"study.grids: study {study.name!r} has grid parts; a search takes a study with one "
            "grid and strategies (study.grid and study.strategies)"
        )
    return dict((study.strategies or {}).get(strategy) or {})
