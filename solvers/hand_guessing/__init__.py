"""Family ``hand_guessing``: find a hidden hand of cards from 5-number feedback (Juraszek 2014).

The answer is a set of ``cards`` (1 to 4) distinct cards from a deck of ``ranks`` x ``suits``
cards (default the 52-card deck, ranks 2..10, J, Q, K, A with ace high).  Each guess is a
hand of the same size, answered with (correct cards, lower ranks, correct ranks, higher ranks,
correct suits); the score is the number of guesses, the last (right)
one included.  See :mod:`.cards` for the numbering and the feedback, :mod:`.strategies` for the
strategies and their tie rule.

Parameters: ``cards``, ``strategy`` (``min_expected_size``, ``sharma_mittal``),
``entropy_r``/``entropy_t`` (Sharma-Mittal only; r cannot change a choice, see :mod:`.strategies`),
``first_guess`` (a card list such as ``["6C", "TD"]``, or ``search``), ``ranks``, ``suits``
(smaller decks for exhaustive checks), ``answer_chunk``/``n_chunks`` (evaluate one contiguous
chunk of the answers; a study fans the chunks out and the summary adds them up exactly) and
``sample`` (evaluate that many answers drawn with the task's seeded generator instead of all;
absent: every answer).  Execution knob ``max_answers`` refuses exact runs over more answers.

A strategy of one's own (a class named by ``_target_``; protocol and evaluation in
:mod:`solvers.hand_guessing.own`) is evaluated the same way, over every answer, a chunk or a
sample, with the same columns; it makes its first guess itself (``first_guess`` is the
built-ins').
"""

from __future__ import annotations

from solvers.family import Presentation
from solvers.hand_guessing.rules import RULES
from solvers.hand_guessing.scheduling import SCHEDULING
from solvers.hand_guessing.tasks import SOLVER
from solvers.registry import Family, register

VERSION = "2"  # of its rows: what each version changed is in CHANGELOG.md

FAMILY = register(
    Family(
        name="hand_guessing",
        version=VERSION,
        doc=__doc__,
        rules=RULES,
        solver=SOLVER,
        scheduling=SCHEDULING,
        presentation=Presentation(
            summary="solvers.hand_guessing.summary:summarize",
            report="solvers.hand_guessing.report:report",
        ),
        examples=({"cards": 1, "ranks": 4, "suits": 2, "strategy": "min_expected_size"},),
    )
)
