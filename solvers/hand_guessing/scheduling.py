"""What the pipeline weighs before it places a task of ``hand_guessing``: its solver seconds on
one core, for ``stage=plan`` (the family's :class:`~solvers.family.Scheduling`)."""

from __future__ import annotations

from solvers.family import Scheduling
from solvers.hand_guessing.cards import Deck, hand_count
from solvers.own_strategy import is_own
from solvers.registry import Task

# CPU seconds of a task on one core (stage=plan): the table of every hand's features (30 us a
# hand: 4 cards, 270,725 hands, ~8 s), and per answer played a cost that grows with the hands
# its guesses are scored over; fitted to the shipped studies (hand_guessing: 27 tasks of 1 to
# 3 cards, first guesses searched, 20 s of CPU; hand_guessing_four_sample: 4 samples of 1,000
# four-card answers, 39 s) with benchmarks/bench_plan_estimate.py
SECONDS_PER_TASK = 5e-3
SECONDS_PER_HAND = 3e-5
SECONDS_PER_ANSWER = 40e-6
SECONDS_PER_ANSWER_PER_HAND = 2e-9


def estimated_seconds(task: Task) -> float | None:
    """Roughly the solver seconds of a checked task on one core (``stage=plan``); None for
    a strategy of one's own."""
    if is_own(task):
        return None
    hands = hand_count(Deck(task["ranks"], task["suits"]), task["cards"])
    answers = hands // task["n_chunks"] if task["sample"] is None else task["sample"]
    per_answer = SECONDS_PER_ANSWER + SECONDS_PER_ANSWER_PER_HAND * hands
    return SECONDS_PER_TASK + SECONDS_PER_HAND * hands + answers * per_answer


SCHEDULING = Scheduling(estimate=estimated_seconds)
