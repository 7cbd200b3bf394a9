"""Entropy orders at the edge of the floats: every order r, however large,
gives the limit it should (Hofer & Nelson (2016), *Sharma-Mittal Generalized Entropy and
"Code Jar" Mastermind*, section 3.2.3: H_{r,t} tends to H_{inf,t} as r grows)."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers import entropy as E
from solvers import solve
from solvers.card_guessing.info_policy import moves

LARGEST = sys.float_info.max
huge_orders = st.one_of(
    st.floats(min_value=1e12, max_value=LARGEST),
    st.sampled_from([1e300, 1e308, 1.7e308, LARGEST]),
)
tiny_orders = st.one_of(
    st.floats(min_value=0.0, max_value=1e-13), st.sampled_from([5e-324, 1e-308])
)
distributions = st.lists(
    st.floats(min_value=0.0, max_value=1.0, allow_nan=False), min_size=1, max_size=12
).filter(lambda w: sum(w) > 1e-6)
degrees = st.one_of(
    st.floats(min_value=0.0, max_value=30.0), st.sampled_from([0.0, 1.0, 2.0, 1e300])
)


@settings(max_examples=200, deadline=None)
@given(distributions, huge_orders, degrees)
def test_a_huge_order_gives_the_min_entropy_limit(w, r, t) -> None:
    limit = E.sharma_mittal(w, math.inf, t, normalize=True)
    assert E.sharma_mittal(w, r, t, normalize=True) == pytest.approx(limit, rel=1e-9, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(distributions, tiny_orders, degrees)
def test_a_tiny_order_gives_the_hartley_limit(w, r, t) -> None:
    limit = E.sharma_mittal(w, 0.0, t, normalize=True)
    assert E.sharma_mittal(w, r, t, normalize=True) == pytest.approx(limit, rel=1e-9, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(distributions, st.one_of(huge_orders, tiny_orders), degrees)
def test_the_compiled_entropy_gives_the_same_limits(w, r, t) -> None:
    weights = np.asarray(w, dtype=float)
    limit = E.sharma_mittal(w, math.inf if r > 1 else 0.0, t, normalize=True)
    fast = moves._entropy(weights, weights.size, r, t, 1.0)
    assert fast == pytest.approx(limit, rel=1e-9, abs=1e-12)


def test_grouped_entropy_at_the_largest_orders_matches_infinity() -> None:
    weights = np.array([0.3, 0.2, 0.2, 0.1, 0.1, 0.1])  # a skewed Mastermind jar's shape
    labels = np.array([[0, 0, 0, 0, 1, 1], [0, 1, 1, 1, 1, 2]])  # groups whose top p < 1/e
    at_inf, _ = E.sharma_mittal_grouped(weights, labels, 4, math.inf, 1.0)
    for r in (1e308, 1.7e308, LARGEST):
        got, _ = E.sharma_mittal_grouped(weights, labels, 4, r, 1.0)
        np.testing.assert_allclose(got, at_inf, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("r", [1e308, 1.7e308, LARGEST])
def test_the_info_strategy_at_a_huge_order_plays_as_at_infinity(r) -> None:
    """The (3,3,3) deck of Gural, Simper & So (2019), *Information Theory in a Card-Guessing
    Game*: the info strategy at the largest finite orders scores 2383/560, as at r = inf
    (not 2329/560, what an overflow at 1.7e308 gives)."""
    task = {"family": "card_guessing", "deck": [3, 3, 3], "feedback": "partial"}
    at_inf = solve({**task, "strategy": "info", "entropy_r": math.inf})[0]
    got = solve({**task, "strategy": "info", "entropy_r": r})[0]
    assert got["expected_score_exact"] == at_inf["expected_score_exact"] == "2383/560"
