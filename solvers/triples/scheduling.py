"""What the pipeline weighs before it places a task of ``triples``: its solver seconds on
one core, for ``stage=plan`` (the family's :class:`~solvers.family.Scheduling`)."""

from __future__ import annotations

from solvers.family import Scheduling
from solvers.registry import Task

# CPU seconds of a task on one core (stage=plan), measured on the shipped triples studies
# (benchmarks/bench_plan_estimate.py): the exact analyses take under a millisecond on the
# standard deck (560 tally states), Monte Carlo about 20 ns a card dealt
SECONDS_PER_TASK = 1e-3
SECONDS_PER_CARD_DEALT = 2e-8


def estimated_seconds(task: Task) -> float:
    """Roughly the solver seconds of a checked task on one core (``stage=plan``)."""
    if task["analysis"] == "monte_carlo":
        cards = task["ranks"] * task["suits"]
        return SECONDS_PER_TASK + SECONDS_PER_CARD_DEALT * cards * task["games"]
    return SECONDS_PER_TASK


SCHEDULING = Scheduling(estimate=estimated_seconds)
