"""Family ``mastermind``: code-jar Mastermind with Sharma-Mittal query selection (Hofer & Nelson
2016).

A hidden code of ``pegs`` positions is drawn position by position, independently, from a jar
of ``colours`` colours with the given weights (Hofer & Nelson 2016, section 1.2 and equation 2; no
jar:
uniform, i.e. standard Mastermind).  Every guess is answered with (black, white).  A strategy
picks each guess among ALL codes (not only the feasible ones); ties go to a code that is still
feasible, then to the lowest code in lexicographic order.  Queries that neither split the
feasible set nor can win are never chosen.

Strategies (scores are over the partition of the feasible set by the feedback):
``sharma_mittal`` (least expected Sharma-Mittal entropy H_{r,t} of the jar-weighted
feasible set after the feedback, Hofer & Nelson (2016) equation 1), ``minimax`` (Knuth 1977: least
worst-case number of feasible codes), ``expected_size`` (least jar-expected number of feasible
codes), ``most_parts`` (most non-empty parts), ``first_feasible`` (the lowest feasible code);
``optimal``: the least expected number of guesses, by branch and bound (see
:mod:`solvers.mastermind.optimal`; Koyama & Lai 1993, Ville 2013), optionally with at most
``guess_limit`` guesses per game, or only over one ``subtree`` (first guess, answer).

The evaluation is exact: the strategy's decision tree is built over every code at once, and the
expected number of guesses is a rational number under the jar's distribution.  Scores are
compared in floating point with a relative tolerance of 1e-12 so that mathematically equal
scores computed in a different order still tie.

A strategy of one's own (a class named by ``_target_``; protocol and evaluation in
:mod:`solvers.mastermind.own`) is evaluated exactly the same way, its decision tree
followed over every code; it fills the columns the built-in heuristics fill.
"""

from __future__ import annotations

from solvers.family import Presentation
from solvers.mastermind.rules import RULES
from solvers.mastermind.scheduling import SCHEDULING
from solvers.mastermind.tasks import SOLVER
from solvers.registry import Family, register

VERSION = "2"  # of its rows: what each version changed is in CHANGELOG.md

FAMILY = register(
    Family(
        name="mastermind",
        version=VERSION,
        doc=__doc__,
        rules=RULES,
        solver=SOLVER,
        scheduling=SCHEDULING,
        presentation=Presentation(
            summary="solvers.mastermind.summary:summarize",
            report="solvers.mastermind.report:report",
        ),
        examples=(
            {"pegs": 2, "colours": 3, "strategy": "minimax"},
            # colours left out: the whole-task check fills it in from the jar
            {"pegs": 2, "jar": [1, 2, 3], "strategy": "minimax"},
        ),
    )
)
