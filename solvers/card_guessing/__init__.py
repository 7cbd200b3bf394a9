"""Family ``card_guessing``: name the next card of a shuffled deck (Gural, Simper & So 2019).

Parameters: ``deck`` (cards per type), ``feedback`` (``partial`` = yes/no, ``complete``, ``none``;
see tasks/feedback_tasks.py, with strategy ``sequence`` and its ``sequence``), ``strategy``,
``tie_break``, ``method`` (``exact``, ``monte_carlo`` with ``n_games``, or ``float``:
tasks/float_tasks.py, with the knob ``workers``; or ``ranked``: uniform decks,
tasks/ranked_tasks.py, with strategy ``persistent``, window 0.1) and the execution knob
``max_states``;
strategy ``info`` adds ``gamma``, ``entropy`` (a preset) or ``entropy_r`` and ``entropy_t``,
``log_base``; ``constant_decrement`` adds ``decrement`` (see yes_no_tasks.py).
"""

from __future__ import annotations

from solvers.card_guessing.rules import RULES
from solvers.card_guessing.scheduling import SCHEDULING
from solvers.card_guessing.tasks import SOLVER
from solvers.family import Presentation
from solvers.registry import Family, register

VERSION = "2"  # of its rows: what each version changed is in CHANGELOG.md

FAMILY = register(
    Family(
        name="card_guessing",
        version=VERSION,
        doc=__doc__,
        rules=RULES,
        solver=SOLVER,
        scheduling=SCHEDULING,
        presentation=Presentation(
            summary="solvers.card_guessing.summary:summarize",
            report="solvers.card_guessing.report:report",
        ),
        examples=({"deck": [2, 2, 1], "strategy": "greedy"},),
    )
)
