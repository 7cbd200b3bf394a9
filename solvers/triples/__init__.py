"""Family ``triples``: n different k-of-a-kinds before any rank reaches k+1 (Holmes 2016).

Cards of a ``ranks`` x ``suits`` deck are drawn one at a time from a uniform shuffle.  Player A
wins at level ``n`` if the pile holds ``n`` different k-of-a-kinds before any rank reaches
k + 1 cards; otherwise B wins.  In the adaptive game the level goes up by one after A wins and
down by one after A loses; levels run from 1 (A always wins) to ranks + 1 (A never wins).

Parameters: ``ranks``, ``suits``, ``k`` (deck and kind size, ``suits >= k + 1``), ``analysis``
and, by analysis, ``n`` / ``start`` / ``rounds`` / ``games``; execution knob ``max_states``.

Analyses (what one task returns):

- ``win_probability`` (``n``): one row, exact ``p_win`` at level ``n`` and the tallies visited.
- ``monte_carlo`` (``n``, ``games``): one row, the win rate over ``games`` shuffled decks
  (seeded from the task id), its standard error and its z-score against the exact value.
- ``hitting_times`` (``start``): one row per target level, the exact expected rounds to first
  reach it from ``start``.
- ``distribution`` (``start``, ``rounds``): one row per (round j = 0..rounds, level), the exact
  probability of being at that level after j rounds.
- ``equilibrium``: one row, the stationary law of the chain, its mode and mean, and the
  level where A's win probability crosses 1/2.
"""

from __future__ import annotations

from solvers.family import Presentation
from solvers.registry import Family, register
from solvers.triples.rules import RULES
from solvers.triples.scheduling import SCHEDULING
from solvers.triples.tasks import SOLVER

VERSION = "1"  # of its rows: what each version changed is in CHANGELOG.md

FAMILY = register(
    Family(
        name="triples",
        version=VERSION,
        doc=__doc__,
        rules=RULES,
        solver=SOLVER,
        scheduling=SCHEDULING,
        presentation=Presentation(summary="solvers.triples.summary:summarize"),
        examples=({"ranks": 4, "suits": 4, "k": 2, "n": 2},),
    )
)
