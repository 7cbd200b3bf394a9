"""When and where a task of ``card_guessing`` runs: its estimated seconds, its peak needs
and its distributed modes (the family's :class:`~solvers.family.Scheduling`).
"""

from __future__ import annotations

from solvers.card_guessing.rules import estimated_states
from solvers.card_guessing.tasks import own_tasks, ranked_tasks
from solvers.family import Scheduling
from solvers.own_strategy import is_own
from solvers.registry import Task

# solver seconds per estimated state of the exact partial-feedback solver, one core, measured
# with benchmarks/bench_estimate.py (decks (2,1) to (4,4,4,4), cold and warm caches: optimal
# 18-48 us, greedy 9-25 us, info 44-170 us), plus a fixed cost per task (the load
# benchmark's info tasks on 3-card decks: ~0.26 ms); estimates within a factor of ~3
SECONDS_PER_STATE = {"optimal": 30e-6, "greedy": 15e-6, "info": 80e-6}
SECONDS_PER_TASK = 0.2e-3


def estimated_seconds(task: Task) -> float | None:
    """Roughly the solver seconds of a checked task on one core (``stage=plan``), or None
    where no model was measured (other feedback, methods and strategies)."""
    if task["method"] == "ranked":
        return ranked_tasks.estimated_seconds(task)
    if is_own(task):
        states = estimated_states(task["deck"]) if task["feedback"] == "partial" else 0
        return SECONDS_PER_TASK + own_tasks.estimated_seconds(task, states)
    per_state = SECONDS_PER_STATE.get(task["strategy"])
    exact = task["method"] == "exact" or task["strategy"] == "optimal"
    if (
        per_state is None
        or task["feedback"] != "partial"
        or not exact
        or ranked_tasks.applies(task)
    ):
        return None
    return SECONDS_PER_TASK + per_state * estimated_states(task["deck"])


def splits_over_cluster(task: Task) -> bool:
    """Whether a checked task is a distributed mode: method=float with workers > 1
    (tasks/float_tasks.py), or method=ranked out of core (tasks/ranked_tasks.py)."""
    return (task["method"] == "float" and (task["workers"] or 1) > 1) or ranked_tasks.splits(task)


SCHEDULING = Scheduling(
    estimate=estimated_seconds,
    needs=ranked_tasks.needs,
    spreads_over_cluster=splits_over_cluster,
    run_over_cluster="solvers.card_guessing.tasks:split_rows",
)
