"""The optimal first moves of yes/no card guessing as an indented decision tree.

Both engines of optimal play draw it (any_deck/optimal.py from its hashed layers,
uniform_deck/decision_tree.py from its ranked ones); only how a state's entry is looked up
differs, so the walk and the text live here, once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

TREE_DEPTH = 4  # the layers a float row's decision tree shows
Pairs = list[tuple[int, int]]  # (c, p) per type: cards not yet confirmed, "no"s heard
# (depth, pairs) -> (chosen (c, p) pair, log A, expected future score), or None where the
# engine kept no entry for that state (deeper than the tree, or never reached)
Lookup = Callable[[int, Pairs], tuple[tuple[int, int], float, float] | None]


def tree_lines(deck: Sequence[int], lookup: Lookup, names: str = "ABCDEFGHIJ") -> list[str]:
    """The first moves as indented lines: what to name after each answer so far."""
    n_cards = sum(deck)
    lines: list[str] = []

    def walk(pairs: Pairs, depth: int, indent: str) -> None:
        entry = lookup(depth, pairs)
        if entry is None or depth == n_cards:
            return
        (c, p), log_a, value = entry
        a = next(i for i, pr in enumerate(pairs) if pr == (c, p))  # lowest type of that class
        yes = [(cc - (i == a), pp if cc - (i == a) else 0) for i, (cc, pp) in enumerate(pairs)]
        no = [(cc, pp + (i == a)) for i, (cc, pp) in enumerate(pairs)]
        after = {word: lookup(depth + 1, child) for word, child in (("yes", yes), ("no", no))}
        q = math.exp(after["yes"][1] - log_a) if after["yes"] is not None else None
        chance = f", P(yes) = {q:.4f}" if q is not None else ""
        lines.append(f"{indent}card {depth + 1}: name {names[a]} (expected {value:.6f}{chance})")
        for word, child in (("yes", yes), ("no", no)):
            if after[word] is not None:
                lines.append(f"{indent}  after {word}:")
                walk(child, depth + 1, indent + "    ")

    walk([(c, 0) for c in deck], 0, "")
    return lines
