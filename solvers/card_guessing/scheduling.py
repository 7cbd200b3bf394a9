"""When and where a task of ``card_guessing`` runs: its estimated seconds, its peak needs
and its distributed modes (the family's :class:`~solvers.family.Scheduling`).
"""

from __future__ import annotations

from solvers.card_guessing.rules import estimated_states
from solvers.card_guessing.tasks import feedback_tasks, float_tasks, own_tasks, ranked_tasks
from solvers.family import Scheduling
from solvers.own_strategy import is_own
from solvers.registry import Task

# solver seconds per estimated state of the exact partial-feedback solver, one core, measured
# with benchmarks/bench_estimate.py (decks (2,1) to (4,4,4,4), cold and warm caches: optimal
# 18-48 us, greedy 9-25 us), plus a fixed cost per task (the load benchmark's info tasks on
# 3-card decks: ~0.26 ms); estimates within a factor of ~3.  info: its tasks come by the
# hundred on a few decks, in a worker whose caches the previous ones filled, and follow one
# policy's states, fewer than the estimate counts on an uneven deck: 11 us a state over the
# shipped entropy_grid (36.8 s of CPU), 25 us over gamma_sweep (Shannon entropy, 14.0 s),
# 44-170 us for one task alone (benchmarks/bench_plan_estimate.py)
SECONDS_PER_STATE = {"optimal": 30e-6, "greedy": 15e-6, "info": 14e-6}
SECONDS_PER_TASK = 0.2e-3


# complete feedback: seconds per state of its exact solve (feedback_models: 54-65 us for 20
# to 2,380 states); no feedback: a fixed cost (0.25-0.4 ms, any deck); Monte Carlo: seconds
# per card played (52 cards: greedy 0.9-1.4 us over 20,000 games, persistent 0.74 us)
COMPLETE_OR_NONE = ("complete", "none")
COMPLETE_SECONDS_PER_STATE = 60e-6
NONE_SECONDS = 0.4e-3
MONTE_CARLO_SECONDS_PER_CARD = {"greedy": 1.2e-6, "persistent": 0.75e-6}
# method=float (the float engines): seconds per estimated state (suits52_quick: greedy 1.5 us,
# info 1.9 us; greedy on 6 types of 4: 5.8 us); optimal play on a uniform deck runs on the
# ranked states: the ranked model, plus its first moves' tree (0.1-0.65 s a deck in all)
FLOAT_SECONDS_PER_STATE = {"greedy": 2.5e-6, "info": 2e-6}
FLOAT_RANKED_SECONDS = 0.15


def feedback_seconds(task: Task) -> float:
    """Roughly the solver seconds of a complete- or no-feedback task on one core."""
    if task["feedback"] == "none":
        return NONE_SECONDS
    states = feedback_tasks.estimated_work(task)
    return SECONDS_PER_TASK + COMPLETE_SECONDS_PER_STATE * states


def estimated_seconds(task: Task) -> float | None:
    """Roughly the solver seconds of a checked task on one core (``stage=plan``), or None
    where no model was measured (other methods and strategies)."""
    if task["method"] == "ranked":
        return ranked_tasks.estimated_seconds(task)
    if is_own(task):
        states = estimated_states(task["deck"]) if task["feedback"] == "partial" else 0
        return SECONDS_PER_TASK + own_tasks.estimated_seconds(task, states)
    if task["feedback"] in COMPLETE_OR_NONE:
        return feedback_seconds(task)
    if task["method"] == "monte_carlo" and task["strategy"] in MONTE_CARLO_SECONDS_PER_CARD:
        per_card = MONTE_CARLO_SECONDS_PER_CARD[task["strategy"]]
        return SECONDS_PER_TASK + per_card * sum(task["deck"]) * task["n_games"]
    if task["method"] == "float" and float_tasks.runs_ranked(task):
        ranked = {**task, "method": "ranked"}
        return FLOAT_RANKED_SECONDS + ranked_tasks.estimated_seconds(ranked)
    if task["method"] == "float" and task["strategy"] in FLOAT_SECONDS_PER_STATE:
        per_state = FLOAT_SECONDS_PER_STATE[task["strategy"]]
        return SECONDS_PER_TASK + per_state * estimated_states(task["deck"])
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
