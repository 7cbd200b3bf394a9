"""Family ``high_low``: call each next card "higher" or "lower" than the one showing (Norvig 2020).

Decks: ``n`` distinct cards 1..n, or a real deck of ``ranks`` x ``suits`` cards where an equal
card is scored by ``ties`` (``lose``, ``win`` or ``push``).  Strategies: ``optimal`` (best chance
of a perfect game) and ``majority`` (call the side holding more unseen cards, "higher" on a
tie).  ``method``: ``exact`` (integers, then fractions), ``float`` (NumPy for distinct
cards; Numba layers for real decks, float_layers/: sized by the memory budget of where it
runs, layers on disk when short, checkpointed and resumed) or ``monte_carlo``
(``n_games`` seeded games, any deck, majority rule).  The expected
number of right calls is always the best possible when play goes on after a miss, computed
exactly by a hypergeometric sum (the call never changes what comes next).

A strategy of one's own (a class named by ``_target_``, protocol and evaluation in
:mod:`solvers.high_low.own`) runs ``exact`` (any deck whose states fit ``max_states``) or
``monte_carlo``; for it ``expected_correct`` is the strategy's own expected number of right
calls (play going on after a miss), not the best possible, and ``expected_correct_se`` its
standard error under Monte Carlo.
"""

from __future__ import annotations

from solvers.family import Presentation
from solvers.high_low.rules import RULES
from solvers.high_low.scheduling import SCHEDULING
from solvers.high_low.tasks import SOLVER
from solvers.registry import Family, register

VERSION = "2"  # of its rows: what each version changed is in CHANGELOG.md

FAMILY = register(
    Family(
        name="high_low",
        version=VERSION,
        doc=__doc__,
        rules=RULES,
        solver=SOLVER,
        scheduling=SCHEDULING,
        presentation=Presentation(
            summary="solvers.high_low.summary:summarize",
            report="solvers.high_low.report:report",
        ),
        examples=({"n": 6, "strategy": "optimal"},),
    )
)
