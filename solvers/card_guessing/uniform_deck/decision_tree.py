"""The ranked solver's first moves: the decision tree of floating/first_moves.py, looked up in
the first layers a ranked solve keeps (``ranked_states.solve(..., keep_layers=d)``).

A state's entry is found by ranking its canonical code sequence in its layer: no keys, no
hash tables, as in the solve itself.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from solvers.card_guessing import first_moves
from solvers.card_guessing.any_deck.optimal import solution_row
from solvers.card_guessing.uniform_deck import in_memory as ranked_states

TREE_DEPTH = 4  # the layers the float rows' decision tree shows (as floating/layer_kernels.py)


def code_sequence(pairs: first_moves.Pairs, cd: ranked_states.Codes) -> np.ndarray:
    """The canonical (non-increasing) code sequence of a state given its (c, p) per type."""
    codes = [cd.exhausted if c == 0 else (c - 1) * cd.n_p + p for c, p in pairs]
    return np.array(sorted(codes, reverse=True), np.int64)


def decision_tree(
    sol: ranked_states.Solution,
    deck: Sequence[int],
    names: str = "ABCDEFGHIJ",
    tree_depth: int = TREE_DEPTH,
) -> list[str]:
    """The first moves of a ranked solve kept with ``keep_layers=tree_depth``, as indented
    lines (the last card's layer counts as a layer of the tree, as in layer_kernels.py)."""
    cd = ranked_states.codes(deck)
    args = (cd.m, cd.r, cd.exhausted, cd.weight, cd.eq, cd.le, cd.offsets)

    last: list[np.ndarray] = []  # the last layer's log A, for a tree reaching the last card

    def lookup(depth: int, pairs: first_moves.Pairs):
        if any(p >= cd.n_p for _, p in pairs):
            return None  # more "no"s than slots: no such state
        seq = code_sequence(pairs, cd)
        if depth == cd.n_cards and depth < tree_depth:
            if not last:
                last.append(ranked_states.last_layer_log_counts(cd))
            log_a = last[0][ranked_states.rank_of(seq, depth, *args)]
            return None if log_a == -np.inf else ((0, 0), float(log_a), 0.0)
        if depth >= len(sol.top_layers):
            return None
        logs, vals, best = sol.top_layers[depth]
        i = ranked_states.rank_of(seq, depth, *args)
        if best[i] < 0 or logs[i] == -np.inf:
            return None  # infeasible, or the last card
        code = int(seq[best[i]])
        return (code // cd.n_p + 1, code % cd.n_p), float(logs[i]), float(vals[i])

    return first_moves.tree_lines(deck, lookup, names)


def runs_ranked(task: dict) -> bool:
    """Whether a ``method: float`` task runs on the ranked engine: optimal play on a uniform
    deck in this process (the same values as floating/layer_kernels.py to 1e-12, in about a
    third of the time and memory); other float tasks run on the hashed layers.  Decks of two
    types stay there too: the ranked space counts one feasible state more that no play
    reaches, so their ``n_states`` would differ from the rows the hashed layers stored (and
    two types are cheap either way)."""
    deck = task["deck"]
    return (
        task["strategy"] == "optimal"
        and len(deck) != 2
        and min(deck) == max(deck)
        and (task.get("workers") or 1) == 1
    )


def float_rows(task: dict) -> list[dict]:
    """The row of a ``method: float`` optimal task on a uniform deck, from the ranked engine:
    the columns floating/layer_kernels.py gives, its decision tree included."""
    sol = ranked_states.solve(task["deck"], keep_layers=TREE_DEPTH)
    return [{**solution_row(sol), "first_moves": "\n".join(decision_tree(sol, task["deck"]))}]
