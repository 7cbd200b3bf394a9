"""The optimal Mastermind strategy's cost by plain recursion over every query at every node, no
pruning: the reference the branch and bound (``solvers/mastermind/optimal/``) is held to on
tiny games."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache

from solvers.mastermind.codes import code_weights, feedback_table, feedbacks
from solvers.mastermind.optimal.bounds import INF, NO_LIMIT


def brute_force_cost(
    pegs: int, colours: int, jar: Sequence[object] | None = None, guess_limit: int | None = None
) -> int:
    """The least total by plain recursion over every query at every node (no pruning).

    Only for tiny games (a few dozen codes): it tries every code as every guess.
    """
    table = feedback_table(pegs, colours)
    weights = code_weights(pegs, colours, jar)
    win = len(feedbacks(pegs)) - 1
    n = len(table)

    @cache
    def cost(s: frozenset[int], left: int) -> float:
        if left == 0:
            return math.inf
        best = math.inf
        for q in range(n):
            parts: dict[int, list[int]] = {}
            for c in s:
                parts.setdefault(int(table[q, c]), []).append(c)
            if len(parts) == 1 and win not in parts:
                continue  # learns nothing: never part of an optimal strategy
            sub = sum(cost(frozenset(p), left - 1) for a, p in parts.items() if a != win)
            best = min(best, sub)
        return sum(weights[c] for c in s) + best

    value = cost(frozenset(range(n)), NO_LIMIT if guess_limit is None else guess_limit)
    return INF if math.isinf(value) else int(value)
