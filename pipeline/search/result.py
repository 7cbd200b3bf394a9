"""What a search found: its trials told, the best, the reference (the optimum), in words."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from pipeline.search.objective import Objective


@dataclass
class TrialResult:
    """One trial told: its number, parameters, value (None: failed) and exact value."""

    number: int
    params: dict[str, Any]
    value: float | None
    exact: Fraction | None = None
    error: str | None = None


@dataclass
class SearchResult:
    """What a search found: every trial told, the best, the reference (the optimum)."""

    name: str
    objective: Objective
    space: dict[str, Any]
    trials: list[TrialResult] = field(default_factory=list)
    reference: float | None = None
    reference_exact: Fraction | None = None
    reference_name: str | None = None
    computed: int = 0  # tasks solved by this run (the rest were stored)
    folder: Path | None = None  # the study folder
    page: Path | None = None  # the search's page, once written

    @property
    def best(self) -> TrialResult | None:
        done = [t for t in self.trials if t.value is not None]
        if not done:
            return None
        pick = max if self.objective.maximize else min
        return pick(done, key=lambda t: (t.value, -t.number))


def best_text(best: TrialResult, result: SearchResult) -> str:
    """``4.255357142857 (2383/560) at gamma=0.1432 (trial 7); optimal 4.255357142857, gap 0``"""
    exact = f" ({best.exact})" if best.exact is not None else ""
    text = f"{best.value:.12g}{exact} at {params_text(best.params)} (trial {best.number})"
    if result.reference is not None:
        gap = result.reference - best.value
        text += f"; {result.reference_name} {result.reference:.12g}, gap {gap:.3g}"
        if best.exact is not None and result.reference_exact is not None:
            text += f" ({result.reference_exact - best.exact})"
    return text


def params_text(params: Mapping[str, Any]) -> str:
    return ", ".join(
        f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items()
    )
