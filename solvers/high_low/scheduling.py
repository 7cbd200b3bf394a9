"""What the pipeline weighs before it places a task of ``high_low``: the float path's
seconds and its peak memory and disk on a real deck (the family's
:class:`~solvers.family.Scheduling`)."""

from __future__ import annotations

from solvers.family import Scheduling
from solvers.high_low.float_layers import sizes
from solvers.kit.budget import Need
from solvers.own_strategy import is_own
from solvers.registry import Task

# CPU seconds per (counts, card showing) state of the float path on a real deck, both
# policies, checkpoints included: 702 s for the four solves of 14 x 4 (4.89e9 states each)
SECONDS_PER_STATE = 3.6e-8


def needs(task: Task, workers: int) -> Need | None:
    """The float path's need for a real deck: one process (Numba threads over a layer),
    whatever ``workers``; its smallest memory is with the layers on disk, and the solve
    keeps both in memory when the budget allows (:func:`float_layers.sizes.choose_storage`).
    None for the other methods (small) and for distinct cards (O(n) floats)."""
    if task["method"] != "float" or task["n"] is not None or is_own(task):
        return None
    size = sizes.sizing(task["ranks"], task["suits"])
    layers = sizes.layer_states(task["ranks"], task["suits"])
    return Need(
        memory=size.out_of_core,
        disk=size.disk,
        note=size.describe(),
        states=size.states,
        largest=max(layers),
        cpu_seconds=estimated_seconds(task),
    )


def estimated_seconds(task: Task) -> float | None:
    """Roughly the solver seconds of a checked task on one core (``stage=plan``): the float
    path on a real deck only, from its states; None for the other methods."""
    if task["method"] != "float" or task["n"] is not None or is_own(task):
        return None
    return SECONDS_PER_STATE * sizes.size_estimate(task["ranks"], task["suits"]).states


SCHEDULING = Scheduling(estimate=estimated_seconds, needs=needs)
