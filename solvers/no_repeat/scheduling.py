"""What the pipeline weighs before it places a task of ``no_repeat``: its solver seconds on
one core, for ``stage=plan`` (the family's :class:`~solvers.family.Scheduling`)."""

from __future__ import annotations

from solvers.family import Scheduling
from solvers.registry import Task

# CPU seconds of a task on one core (stage=plan): the scan of its (n, k, m) tuples, about N^3
# of them (N = 111 to 300: 9.6-15 ns a tuple), and a fixed cost
SECONDS_PER_TASK = 1e-3
SECONDS_PER_TUPLE = 1.1e-8


def estimated_seconds(task: Task) -> float:
    """Roughly the solver seconds of a checked task on one core (``stage=plan``)."""
    return SECONDS_PER_TASK + SECONDS_PER_TUPLE * task["N"] ** 3


SCHEDULING = Scheduling(estimate=estimated_seconds)
