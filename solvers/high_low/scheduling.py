"""What the pipeline weighs before it places a task of ``high_low``: the float path's
seconds and its peak memory and disk on a real deck (the family's
:class:`~solvers.family.Scheduling`)."""

from __future__ import annotations

from solvers.family import Scheduling
from solvers.high_low.float_layers import sizes
from solvers.high_low.rules import deck_states
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


# CPU seconds of an exact task on one core: per task, and per state of a real deck (the
# fractions of its counts) or of n distinct cards (the high_low study's tasks: 4-9 us a state
# of a real deck, 0.3 us of n <= 200 distinct cards)
EXACT_SECONDS_PER_TASK = 5e-5
EXACT_SECONDS_PER_STATE = 6e-6
EXACT_SECONDS_PER_DISTINCT_STATE = 3.5e-7
# Monte Carlo (the majority rule): seconds per card dealt (13 x 4, 80,000 games: 0.27 us)
MONTE_CARLO_SECONDS_PER_CARD = 2.7e-7


def estimated_seconds(task: Task) -> float | None:
    """Roughly the solver seconds of a checked task on one core (``stage=plan``): the exact
    path and the float path on a real deck from their states, Monte Carlo from the cards
    dealt; None for the float path of distinct cards and a strategy of one's own."""
    if is_own(task):
        return None
    if task["method"] == "exact":
        per = EXACT_SECONDS_PER_DISTINCT_STATE if task["n"] is not None else EXACT_SECONDS_PER_STATE
        return EXACT_SECONDS_PER_TASK + per * deck_states(task)
    if task["method"] == "monte_carlo":
        cards = task["n"] if task["n"] is not None else task["ranks"] * task["suits"]
        return EXACT_SECONDS_PER_TASK + MONTE_CARLO_SECONDS_PER_CARD * cards * task["n_games"]
    if task["method"] != "float" or task["n"] is not None:
        return None
    return SECONDS_PER_STATE * sizes.size_estimate(task["ranks"], task["suits"]).states


SCHEDULING = Scheduling(estimate=estimated_seconds, needs=needs)
