"""Family ``no_repeat``: Gural, Simper & So (2019)'s conjecture 3.1 on decks of N distinct cards
(yes/no feedback).

Setting (Gural, Simper & So 2019, section 3.1 and appendix A): n guesses made, k of them right
(those k
cards' positions are known), and the last m guesses named card ``a``, all "no"; the other
n - k - m "no" answers were for cards confirmed later, so they only say that a past slot
holds some unknown card.  ``b`` is a card never named.  The conjecture: naming ``a`` again
leaves no more Shannon entropy about the set of cards still to come than naming ``b``:
``H(c_{n+1} | X_{n+1}(a)) <= H(c_{n+1} | X_{n+1}(b))``.

By exchangeability of the never-named cards, given the answer every remaining set with the
same membership of ``a`` (and ``b``) is equally likely, so each entropy is the entropy of the
membership class plus the mean log of its class size (closed forms in closed_forms.py; counts
derived there and checked against enumeration of every deck order for N <= 7 in the tests).  The
appendix's version has slips: the weight of the "a already passed" class after a "no" to
``a`` is (n-k-m)/(N-k-m-1), not (n-k)/(N-k-m-1), and case 4 after a "no" to ``b`` has
probability (N-n-1)(n-k)/A like the others, with A = (N-k-1) + (N-k-m-1)(N-k-2).

Valid tuples: 1 <= k <= n <= N - 2, 0 <= m < n - k (m = 0: a is a fresh card too, the two
entropies are equal), and at least one never-named card b (k <= N - 2).  One task scans every
valid (n, k, m) for one N in vectorised float64 (log-factorials) and returns the number of
violations, the smallest gap H(b) - H(a) over m >= 1 and the curves of the source's figure 1.
"""

from __future__ import annotations

from solvers.family import Presentation
from solvers.no_repeat.rules import RULES
from solvers.no_repeat.scheduling import SCHEDULING
from solvers.no_repeat.tasks import SOLVER
from solvers.registry import Family, register

VERSION = "1"  # of its rows: what each version changed is in CHANGELOG.md

FAMILY = register(
    Family(
        name="no_repeat",
        version=VERSION,
        doc=__doc__,
        rules=RULES,
        solver=SOLVER,
        scheduling=SCHEDULING,
        presentation=Presentation(summary="solvers.no_repeat.summary:summarize"),
        examples=({"N": 6},),
    )
)
