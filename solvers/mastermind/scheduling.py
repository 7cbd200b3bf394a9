"""What the pipeline weighs before it places a task of ``mastermind``: its solver seconds on
one core, for ``stage=plan`` (the family's :class:`~solvers.family.Scheduling`)."""

from __future__ import annotations

from solvers.family import Scheduling
from solvers.own_strategy import is_own
from solvers.registry import Task

# CPU seconds of a task on one core (stage=plan), over its n = colours^pegs codes: a heuristic
# scores every code as a guess against the feasible ones, ~n^2 feedbacks (4 x 6: 0.05-0.35 s,
# benchmarks/bench_mastermind.py); the optimum's branch and bound grows faster, ~n^2.5
# (4 x 6: 12.2 s alone); fitted to the shipped mastermind study (34 s of CPU, two thirds of
# it in the 68 heuristics and 2 optima of 4 x 6; benchmarks/bench_plan_estimate.py)
SECONDS_PER_TASK = 5e-3
HEURISTIC_SECONDS_PER_PAIR = 1e-7
OPTIMAL_SECONDS = 1.6e-7  # times n^2.5


def estimated_seconds(task: Task) -> float | None:
    """Roughly the solver seconds of a checked task on one core (``stage=plan``); None for
    a strategy of one's own."""
    if is_own(task):
        return None
    n = task["colours"] ** task["pegs"]
    if task["strategy"] == "optimal":
        return SECONDS_PER_TASK + OPTIMAL_SECONDS * n**2.5
    return SECONDS_PER_TASK + HEURISTIC_SECONDS_PER_PAIR * n * n


SCHEDULING = Scheduling(estimate=estimated_seconds)
