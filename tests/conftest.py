"""Shared test helpers."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import settings

# property tests draw the same examples on every run (CI stays reproducible), with no
# per-example deadline (the machine may be busy)
settings.register_profile("guesslab", derandomize=True, deadline=None)
settings.load_profile("guesslab")

ROOT = Path(__file__).resolve().parent.parent


def compositions(n_cards: int) -> list[tuple[int, ...]]:
    """Every deck (ordered tuple of positive counts) with exactly ``n_cards`` cards."""
    out = []
    for cuts in range(n_cards):
        for idx in itertools.combinations(range(1, n_cards), cuts):
            bounds = (0, *idx, n_cards)
            out.append(tuple(b - a for a, b in itertools.pairwise(bounds)))
    return out


@pytest.fixture
def outputs(tmp_path: Path) -> Path:
    """A fresh results root."""
    return tmp_path / "outputs"
