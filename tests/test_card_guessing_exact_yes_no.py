"""Yes/no card guessing (family card_guessing, feedback partial): exact values (exact/yes_no.py).

Published figures are from Gural, Simper & So (2019, "Information Theory in a
Card-Guessing Game").
"""

from __future__ import annotations

from fractions import Fraction
from math import factorial

import pytest

from solvers import TaskError, solve
from solvers.card_guessing.brute_force import yes_no_orders
from solvers.card_guessing.exact import yes_no
from solvers.card_guessing.rules import estimated_states
from tests.helpers.decks import compositions


def exact(deck, strategy="optimal", **params):
    """The row of one exact solve."""
    (row,) = solve({"family": "card_guessing", "deck": list(deck), "strategy": strategy, **params})
    return row


def solver_policy(deck, strategy, tie_break="lowest"):
    """The solver's policy as a brute-force Policy (history -> guess)."""
    ev = yes_no.evaluation(strategy, tie_break)

    def policy(history, belief, position):
        state = yes_no.initial_state(deck)
        for guess, ok in history:
            state = (yes_no.after_yes if ok else yes_no.after_no)(state, guess)
        return ev.guess(state)

    return policy


# ------------------------------------------------------------------ published figures


def test_seed_000_figures_for_333():
    """Gural, Simper & So (2019), sections 5.4-5.5: greedy 475/112 (ties to the lowest type),
    optimal 2383/560."""
    assert exact((3, 3, 3), "optimal")["expected_score_exact"] == "2383/560"
    assert exact((3, 3, 3), "greedy", tie_break="lowest")["expected_score_exact"] == "475/112"


@pytest.mark.parametrize("n", range(1, 11))
def test_distinct_cards_score_sum_of_inverse_factorials(n):
    """Gural, Simper & So (2019), section 3: n distinct cards score 1 + 1/2! + ... + 1/n! (greedy
    is optimal)."""
    expected = sum(Fraction(1, factorial(k)) for k in range(1, n + 1))
    deck = (1,) * n
    assert Fraction(exact(deck, "optimal")["expected_score_exact"]) == expected
    assert Fraction(exact(deck, "greedy")["expected_score_exact"]) == expected


def test_posterior_and_optimal_guess_in_the_seed_example():
    """Gural, Simper & So (2019), section 2.3: after a yes to a, three no and two yes to b on
    (3,3,3), the
    remaining three cards are (0,1,2), (1,1,1), (2,1,0) with probabilities 3/10, 3/5, 1/10;
    c is the likeliest next card (2/5) but the optimal guess is b (1/3)."""
    state = yes_no.initial_state((3, 3, 3))
    for guess, ok in [(0, True), (1, False), (1, False), (1, False), (1, True), (1, True)]:
        state = (yes_no.after_yes if ok else yes_no.after_no)(state, guess)
    posterior = yes_no.composition_posterior(state)
    assert posterior == {
        (0, 1, 2): Fraction(3, 10),
        (1, 1, 1): Fraction(3, 5),
        (2, 1, 0): Fraction(1, 10),
    }
    probs = yes_no.next_card_probabilities(state)
    assert probs[1] == Fraction(1, 3) and probs[2] == Fraction(2, 5)
    assert yes_no.evaluation("optimal").guess(state) == 1


# ------------------------------------------------------------ brute-force cross-checks


def _decks_up_to(n_cards):
    return [d for n in range(1, n_cards + 1) for d in compositions(n)]


@pytest.mark.parametrize("deck", _decks_up_to(6), ids=str)
def test_solvers_equal_enumeration_of_every_order(deck):
    """Every deck of <= 6 cards: the solver's values and pmfs equal playing its own policy on
    every order; its greedy equals an independent greedy computed from the orders."""
    for strategy in ("optimal", "greedy"):
        row = exact(deck, strategy)
        mean, pmf = yes_no_orders.policy_value(deck, solver_policy(deck, strategy))
        assert Fraction(row["expected_score_exact"]) == mean
        assert row["score_pmf"] == pytest.approx([float(q) for q in pmf], abs=1e-15)
    for tie_break in ("lowest", "highest"):
        mean, _ = yes_no_orders.policy_value(deck, yes_no_orders.greedy_policy(tie_break))
        assert Fraction(exact(deck, "greedy", tie_break=tie_break)["expected_score_exact"]) == mean


@pytest.mark.slow
@pytest.mark.parametrize("n_cards", [7, 8])
def test_solvers_equal_enumeration_for_7_and_8_cards(n_cards):
    """Every deck of 7 and 8 cards (ordered counts), as above."""
    for deck in compositions(n_cards):
        for strategy in ("optimal", "greedy"):
            row = exact(deck, strategy)
            mean, _ = yes_no_orders.policy_value(deck, solver_policy(deck, strategy))
            assert Fraction(row["expected_score_exact"]) == mean, (deck, strategy)
        mean, _ = yes_no_orders.policy_value(deck, yes_no_orders.greedy_policy("lowest"))
        assert Fraction(exact(deck, "greedy")["expected_score_exact"]) == mean, deck


@pytest.mark.parametrize("deck", [d for d in _decks_up_to(5)] + [(2, 2, 2), (4, 2), (3, 2, 1)])
def test_optimum_equals_brute_force_over_belief_sets(deck):
    """The optimum equals a recursion over sets of consistent orders (no (c, p) statistic)."""
    assert Fraction(exact(deck)["expected_score_exact"]) == yes_no_orders.optimal_value(deck)


@pytest.mark.slow
@pytest.mark.parametrize("deck", [(2, 2, 1, 1), (4, 2, 1), (3, 3), (2, 2, 2, 1), (3, 2, 2)])
def test_optimum_equals_brute_force_over_belief_sets_slow(deck):
    assert Fraction(exact(deck)["expected_score_exact"]) == yes_no_orders.optimal_value(deck)


def test_uniform_tie_break_averages_lowest_and_other_choices():
    """(2,2): the first guess is a tie; uniform averages the mirrored games exactly."""
    lowest = Fraction(exact((2, 2), "greedy", tie_break="lowest")["expected_score_exact"])
    uniform = Fraction(exact((2, 2), "greedy", tie_break="uniform")["expected_score_exact"])
    assert uniform == lowest  # symmetric deck: every tie-break gives the same value
    row = exact((3, 3, 3), "greedy", tie_break="uniform")
    assert Fraction(row["expected_score_exact"]) <= Fraction(2383, 560)


# ---------------------------------------------------------------------- row contents


def test_row_has_distribution_variance_and_states():
    row = exact((3, 3, 3))
    assert sum(row["score_pmf"]) == pytest.approx(1.0, abs=1e-15)
    mean = sum(k * q for k, q in enumerate(row["score_pmf"]))
    assert mean == pytest.approx(row["expected_score"], rel=1e-14)
    var = sum(k * k * q for k, q in enumerate(row["score_pmf"])) - mean**2
    assert var == pytest.approx(row["score_variance"], rel=1e-12)
    assert row["deck"] == "3,3,3" and row["method"] == "exact" and row["feedback"] == "partial"
    assert row["n_states"] == 569 and row["tie_break"] is None


@pytest.mark.parametrize("deck", [(3, 3, 3), (4, 4, 4), (2, 2, 2, 2), (5, 3, 2, 1), (1,) * 12])
def test_state_estimate_is_within_a_small_factor(deck):
    real = yes_no.optimal_value(deck)[1]
    assert real / 5 <= estimated_states(list(deck)) <= real * 5


# ------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("task", "key"),
    [
        ({"deck": [3, -1, 3]}, "deck"),
        ({"deck": [3, 2.5]}, "deck"),
        ({"deck": []}, "deck"),
        ({"deck": "three"}, "deck"),
        ({"deck": [3, 3], "strategy": "clairvoyant"}, "strategy"),
        ({"deck": [3, 3], "colour": "red"}, "colour"),
        ({"deck": [3, 3], "feedback": "telepathic"}, "feedback"),
        ({"deck": [3, 3], "strategy": "optimal", "tie_break": "lowest"}, "tie_break"),
        ({"deck": [3, 3], "strategy": "greedy", "tie_break": "coin"}, "tie_break"),
        ({"deck": [13, 13, 13, 13]}, "deck"),
    ],
)
def test_bad_tasks_name_the_key(task, key):
    with pytest.raises(TaskError) as err:
        solve({"family": "card_guessing", **task})
    assert err.value.key == key
    assert key in str(err.value)


def test_size_limit_states_estimate_and_can_be_raised():
    with pytest.raises(TaskError, match=r"about [\d,]+ states.*max_states=3,000,000"):
        solve({"family": "card_guessing", "deck": [13, 13, 13, 13]})
    with pytest.raises(TaskError, match="max_states=10"):
        solve({"family": "card_guessing", "deck": [3, 3, 3], "max_states": 10})
