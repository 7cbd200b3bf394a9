"""Decks of card guessing enumerated for exhaustive tests."""

from __future__ import annotations

import itertools


def compositions(n_cards: int) -> list[tuple[int, ...]]:
    """Every deck (ordered tuple of positive counts) with exactly ``n_cards`` cards."""
    out = []
    for cuts in range(n_cards):
        for idx in itertools.combinations(range(1, n_cards), cuts):
            bounds = (0, *idx, n_cards)
            out.append(tuple(b - a for a, b in itertools.pairwise(bounds)))
    return out
