"""The optimal first moves of a uniform deck: the decision tree of first_moves.py, looked up in
the first layers an in-memory solve keeps (``in_memory.solve(..., keep_layers=d)``).

A state's entry is found by ranking its canonical code sequence in its layer (ranks.py): no
keys, no hash tables, as in the solve itself.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from solvers.card_guessing import first_moves
from solvers.card_guessing.uniform_deck.in_memory import Solution, last_layer_log_counts
from solvers.card_guessing.uniform_deck.ranks import Codes, codes, rank_of


def code_sequence(pairs: first_moves.Pairs, cd: Codes) -> np.ndarray:
    """The canonical (non-increasing) code sequence of a state given its (c, p) per type."""
    seq = [cd.exhausted if c == 0 else (c - 1) * cd.n_p + p for c, p in pairs]
    return np.array(sorted(seq, reverse=True), np.int64)


def decision_tree(
    sol: Solution,
    deck: Sequence[int],
    names: str = "ABCDEFGHIJ",
    tree_depth: int = first_moves.TREE_DEPTH,
) -> list[str]:
    """The first moves of a solve kept with ``keep_layers=tree_depth``, as indented lines (the
    last card's layer counts as a layer of the tree, as in any_deck/optimal.py)."""
    cd = codes(deck)
    args = (cd.m, cd.r, cd.exhausted, cd.weight, cd.eq, cd.le, cd.offsets)

    last: list[np.ndarray] = []  # the last layer's log A, for a tree reaching the last card

    def lookup(depth: int, pairs: first_moves.Pairs):
        if any(p >= cd.n_p for _, p in pairs):
            return None  # more "no"s than slots: no such state
        seq = code_sequence(pairs, cd)
        if depth == cd.n_cards and depth < tree_depth:
            if not last:
                last.append(last_layer_log_counts(cd))
            log_a = last[0][rank_of(seq, depth, *args)]
            return None if log_a == -np.inf else ((0, 0), float(log_a), 0.0)
        if depth >= len(sol.top_layers):
            return None
        logs, vals, best = sol.top_layers[depth]
        i = rank_of(seq, depth, *args)
        if best[i] < 0 or logs[i] == -np.inf:
            return None  # infeasible, or the last card
        code = int(seq[best[i]])
        return (code // cd.n_p + 1, code % cd.n_p), float(logs[i]), float(vals[i])

    return first_moves.tree_lines(deck, lookup, names)
