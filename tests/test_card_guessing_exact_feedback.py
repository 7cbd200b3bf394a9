"""Card guessing with complete feedback and with no feedback, and the entropy bounds
(exact/complete_feedback.py, exact/no_feedback.py, exact/entropy_bounds.py).

Published figures are from Gural, Simper & So (2019, "Information Theory in a
Card-Guessing Game"), section 4.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from math import comb

import pytest

from solvers import TaskError, solve
from solvers.card_guessing.brute_force import feedback_orders
from solvers.card_guessing.exact import complete_feedback, entropy_bounds, no_feedback
from tests.helpers.decks import compositions


def row(deck, feedback, strategy="optimal", **params):
    """The single row of one solve."""
    task = {"family": "card_guessing", "deck": list(deck), "feedback": feedback}
    (out,) = solve({**task, "strategy": strategy, **params})
    return out


def exact(r) -> Fraction:
    return Fraction(r["expected_score_exact"])


def mean(pmf) -> Fraction:
    return sum((k * q for k, q in enumerate(pmf)), Fraction(0))


# --------------------------------------------------------------------- complete feedback


@pytest.mark.parametrize("n", range(1, 11))
def test_complete_distinct_cards_score_the_harmonic_number(n):
    """n distinct cards: the k-th last card is guessed right with chance 1/k, total H_n."""
    for strategy in ("optimal", "greedy"):
        assert exact(row((1,) * n, "complete", strategy)) == complete_feedback.harmonic(n)


@pytest.mark.parametrize("n", range(1, 13))
def test_complete_two_equal_types_closed_form(n):
    """(n, n): n + (4^n / C(2n, n) - 1) / 2."""
    expected = n + (Fraction(4**n, comb(2 * n, n)) - 1) / 2
    assert exact(row((n, n), "complete")) == expected == complete_feedback.two_type_score(n)


@pytest.mark.parametrize("deck", [d for k in range(1, 7) for d in compositions(k)])
def test_complete_equals_brute_force_over_every_order_and_policy(deck):
    """Optimum over every adaptive policy, and greedy's whole distribution, by enumeration."""
    pmf, _ = complete_feedback.score_distribution(deck)
    assert mean(pmf) == feedback_orders.complete_optimum(deck)
    assert pmf == feedback_orders.complete_greedy_pmf(deck)
    assert pmf == feedback_orders.complete_greedy_pmf(deck, highest=True)


@pytest.mark.parametrize("deck", [(2, 3, 2), (3, 1, 3), (2, 2, 2, 1)])
def test_complete_brute_force_seven_cards(deck):
    pmf, _ = complete_feedback.score_distribution(deck)
    assert mean(pmf) == feedback_orders.complete_optimum(deck)
    assert pmf == feedback_orders.complete_greedy_pmf(deck)


def test_complete_row_mean_variance_states():
    r = row((3, 3, 3), "complete")
    pmf, n_states = complete_feedback.score_distribution((3, 3, 3))
    assert r["expected_score_exact"] == "4021/840"
    var = sum(k * k * q for k, q in enumerate(pmf)) - mean(pmf) ** 2
    assert Fraction(r["score_variance_exact"]) == var
    assert r["score_pmf"] == [float(q) for q in pmf]
    assert r["n_states"] == n_states == complete_feedback.state_count((3, 3, 3)) == 20
    assert row((3, 3, 3), "complete", "greedy", tie_break="uniform")["expected_score_exact"] == (
        "4021/840"
    )


@pytest.mark.parametrize("deck", [(13, 13, 13, 13), (4,) * 13])
def test_complete_full_deck_exact(deck):
    """52 cards, suits and ranks: exact, and equal to the sum of per-step success chances."""
    r = row(deck, "complete")
    value = exact(r)
    assert value == complete_feedback.expected_score(deck)  # a second, independent exact path
    assert value.denominator > 1 and math.isclose(sum(r["score_pmf"]), 1.0)
    assert r["n_states"] == complete_feedback.state_count(deck) == 2380
    assert r["bound_lower_chords"] <= r["expected_score"] <= r["bound_upper"]


def test_complete_full_deck_values():
    """Reference values of the 52-card decks (computed here, checked two ways above)."""
    assert exact(row((13,) * 4, "complete")) == Fraction(59553955444965917, 3236505359891300)
    assert round(row((4,) * 13, "complete")["expected_score"], 6) == 9.194049


def test_state_count_bounds_the_states_and_is_exact_for_equal_counts():
    for deck in [(3, 3, 3), (2, 2, 2, 2, 2), (1, 2, 2, 5), (4, 1, 4)]:
        _, n_states = complete_feedback.score_distribution(deck)
        assert n_states <= complete_feedback.state_count(deck)
        assert (n_states == complete_feedback.state_count(deck)) == (len(set(deck)) == 1)


# --------------------------------------------------------------------------- no feedback


SMALL_NONE = [
    d
    for k in range(1, 6)
    for d in compositions(k)
    if len(d) ** k * complete_feedback.orders(d) <= 40_000
]


@pytest.mark.parametrize("deck", SMALL_NONE)
def test_none_optimum_is_the_largest_count_over_every_sequence(deck):
    """Brute force over every guess sequence: the best is max_i c_i (always name it)."""
    assert feedback_orders.none_optimum(deck) == max(deck) == exact(row(deck, "none"))
    assert exact(row(deck, "none", "greedy")) == max(deck)


@pytest.mark.parametrize("deck", [(2, 1), (1, 2, 1), (2, 2), (3, 1, 1)])
def test_none_distribution_equals_enumeration_for_every_sequence(deck):
    for seq in feedback_orders.all_sequences(deck):
        m = no_feedback.guess_counts(seq, len(deck))
        assert no_feedback.score_distribution(deck, m) == feedback_orders.sequence_pmf(deck, seq)


def test_none_named_sequences():
    """blocks names each type as often as it occurs: sum c_i^2 / N; constant: max c_i."""
    deck = (4, 2, 1)
    assert exact(row(deck, "none", "sequence", sequence="blocks")) == Fraction(21, 7)
    assert exact(row(deck, "none", "sequence", sequence="constant")) == 4
    cycle = no_feedback.named_sequence("cycle", deck)
    assert cycle == [0, 1, 2, 0, 1, 2, 0]
    r = row(deck, "none", "sequence", sequence=cycle)
    assert exact(r) == Fraction(3 * 4 + 2 * 2 + 2 * 1, 7)
    assert r["sequence"] == "0,1,2,0,1,2,0"
    assert r["score_pmf"] == [float(q) for q in feedback_orders.sequence_pmf(deck, cycle)]
    assert row(deck, "none", "sequence", sequence="0,0,0,0,0,0,0")["expected_score"] == 4


def test_none_greedy_tie_breaks():
    """Ties to one type repeat it; uniform ties average over every sequence of tied types."""
    deck = (2, 1, 2)
    low = row(deck, "none", "greedy", tie_break="lowest")
    high = row(deck, "none", "greedy", tie_break="highest")
    assert low["score_pmf"] == high["score_pmf"]
    uniform = row(deck, "none", "greedy", tie_break="uniform")
    seqs = list(itertools.product((0, 2), repeat=5))
    pmfs = [feedback_orders.sequence_pmf(deck, s) for s in seqs]
    averaged = [sum(p[k] for p in pmfs) / len(seqs) for k in range(6)]
    assert uniform["score_pmf"] == [float(q) for q in averaged]
    assert exact(uniform) == 2


def test_none_full_deck_distribution():
    r = row((13,) * 4, "none", "sequence", sequence="cycle")
    assert exact(r) == 13 and math.isclose(sum(r["score_pmf"]), 1.0)


# ---------------------------------------------------------------------------- bounds


def test_seed_000_section_4_bounds_for_333():
    """Gural, Simper & So (2019), section 4: on (3,3,3) the lower bound is 4.70 against the exact
    4.78.

    4.70 comes from the step entropies averaged over the compositions (H_j = sum_s P(s) H(s))
    and Feder and Merhav's least-entropy curve on every segment, any log base used for both
    entropy and curve.  The exact complete-feedback optimum is 4021/840 = 4.7869..., which
    the seed prints truncated as 4.78.
    """
    r = row((3, 3, 3), "complete")
    assert f"{r['bound_lower']:.2f}" == "4.70"
    assert r["expected_score_exact"] == "4021/840"
    assert math.floor(r["expected_score"] * 100) / 100 == 4.78
    assert r["bound_lower"] < r["expected_score"] < r["bound_upper"]
    assert f"{r['bound_upper']:.2f}" == "5.54"


def test_seed_printed_segment_alone_does_not_give_470():
    """The seed prints only phi's last segment; alone (clamped) it gives 3.92, not 4.70."""
    assert f"{sum(entropy_bounds.step_bounds((3, 3, 3), 'printed_last_segment')):.2f}" == "3.92"


def test_distinct_cards_lower_bounds_are_tight():
    """Every state of a deck of distinct cards is uniform, so both lower bounds equal H_n;
    Fano's curve is for M = n types and is loose once fewer types are left."""
    for n in (2, 3, 5, 8):
        b = entropy_bounds.score_bounds((1,) * n)
        h_n = float(complete_feedback.harmonic(n))
        for lower in (b.lower, b.lower_chords):
            assert math.isclose(lower, h_n, abs_tol=1e-6)
        assert b.upper > h_n + 0.1 or n == 2


@pytest.mark.parametrize(
    "deck", [(3, 3, 3), (2, 5), (1, 2, 3, 4), (4, 4, 4, 4), (2,) * 6, (6, 1, 1)]
)
def test_rigorous_bounds_hold_at_every_step(deck):
    """Fano (upper) and the chord curve (lower) bound every step's success chance."""
    success = [float(p) for p in complete_feedback.step_success(deck)]
    upper = entropy_bounds.step_bounds(deck, "fano")
    lower = entropy_bounds.step_bounds(deck, "chords")
    for lo, p, up in zip(lower, success, upper, strict=True):
        assert lo - 1e-6 <= p <= up + 1e-6


def test_seed_lower_bound_is_not_a_bound_in_general():
    """Applied to the averaged entropy, the least-entropy curve can overshoot: at step 8 of
    (3,3,3) (two cards left) it claims 0.786 against the true 5/8, and on (2,2) the summed
    "lower bound" 2.99 exceeds the exact 17/6."""
    step8 = entropy_bounds.step_bounds((3, 3, 3), "feder_merhav")[7]
    assert complete_feedback.step_success((3, 3, 3))[7] == Fraction(5, 8)
    assert step8 > 0.78
    assert entropy_bounds.score_bounds((2, 2)).lower > 17 / 6 + 0.1


def test_inverse_meets_its_tolerance():
    curve = entropy_bounds.feder_merhav_curve(4)
    for x in (0.05, 0.3, 0.5, 0.6, 0.7):
        pi = entropy_bounds.inverse(curve, curve(x), 0.0, 0.75)
        assert abs(curve(pi) - curve(x)) < 1e-9
        if x != 0.5:  # the curve is flat at 1/2 (h'(1/2) = 0): pi is ill-conditioned there
            assert abs(pi - x) < 1e-9
    assert entropy_bounds.inverse(curve, -1.0, 0.0, 0.75) == 0.0


def test_single_type_deck_bounds():
    r = row((5,), "complete")
    assert r["expected_score"] == r["bound_lower"] == r["bound_upper"] == 5


def test_partial_and_none_rows_have_no_bounds():
    for r in (row((2, 2), "none"), row((2, 2), "partial")):
        assert r["bound_lower"] is None and r["bound_upper"] is None


def test_feedback_ordering_on_333():
    """none <= partial <= complete on the same deck (partial optimum 2383/560, Gural, Simper & So
    (2019))."""
    none, part, full = (exact(row((3, 3, 3), f)) for f in ("none", "partial", "complete"))
    assert none == 3 < part == Fraction(2383, 560) < full


# ------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("task", "key"),
    [
        ({"feedback": "complete", "strategy": "sequence"}, "strategy"),
        ({"feedback": "partial", "strategy": "sequence"}, "strategy"),
        ({"feedback": "none", "strategy": "info"}, "strategy"),
        ({"feedback": "complete", "strategy": "count_tracker"}, "strategy"),
        ({"feedback": "complete", "method": "monte_carlo", "n_games": 100}, "method"),
        ({"feedback": "none", "strategy": "sequence", "sequence": [0, 1]}, "sequence"),
        ({"feedback": "none", "strategy": "sequence", "sequence": [0] * 8 + [3]}, "sequence"),
        ({"feedback": "none", "strategy": "sequence", "sequence": "zigzag"}, "sequence"),
        ({"feedback": "none", "strategy": "sequence", "sequence": [0, -1]}, "sequence"),
        ({"feedback": "none", "strategy": "optimal", "sequence": "cycle"}, "sequence"),
        ({"feedback": "complete", "max_states": 5}, "deck"),
        ({"feedback": "sometimes"}, "feedback"),
    ],
)
def test_bad_feedback_tasks_name_the_key(task, key):
    with pytest.raises(TaskError) as err:
        solve({"family": "card_guessing", "deck": [3, 3, 3], **task})
    assert err.value.key == key
    assert key in str(err.value)


def test_bounds_unknown_curve():
    with pytest.raises(ValueError, match="unknown curve"):
        entropy_bounds.step_bounds((2, 2), "renyi")


# ------------------------------------------------------------------------------ summary


def test_feedback_summary_section(tmp_path):
    """The card_guessing summary adds a feedback comparison table and plot."""
    import pandas as pd

    from solvers.card_guessing.summary import summarize

    rows = [
        r
        for deck in ([3, 3, 3],)
        for feedback in ("none", "partial", "complete")
        for r in solve({"family": "card_guessing", "deck": deck, "feedback": feedback})
    ]
    rows += solve({"family": "card_guessing", "deck": [3, 3, 3], "strategy": "greedy"})
    text = summarize(pd.DataFrame(rows), tmp_path)
    assert "### Feedback models compared" in text
    assert (tmp_path / "card_guessing_feedback_models.png").stat().st_size > 1000
    from solvers.kit.summary_parts import saved_check

    assert saved_check(tmp_path / "card_guessing_feedback_models.png")[0] == "ok"
    table = pd.read_parquet(tmp_path / "card_guessing_feedback_models.parquet")
    line = table[table["deck"] == "3,3,3"].iloc[0]
    assert line["partial"] == 2383 / 560 and line["partial_strategy"] == "optimal"
    assert line["none"] == 3 and line["complete"] == 4021 / 840
    assert f"{line['bound_lower']:.2f}" == "4.70"


def test_single_feedback_model_has_no_comparison(tmp_path):
    import pandas as pd

    from solvers.card_guessing.summary import feedback as feedback_sections

    rows = solve({"family": "card_guessing", "deck": [2, 2], "feedback": "complete"})
    assert feedback_sections.sections(pd.DataFrame(rows), tmp_path) == []


@pytest.mark.parametrize("deck", [(13, 13, 13, 13), (4,) * 13, (3, 5, 2), (6, 1)])
def test_complete_scores_at_least_the_largest_count(deck):
    """Naming a most frequent type always scores at least max_i c_i, and that is reachable."""
    pmf, _ = complete_feedback.score_distribution(deck)
    low = min(k for k, q in enumerate(pmf) if q)
    assert low == max(deck)


def test_none_uniform_ties_are_binomial_on_a_full_deck():
    """Every position holds a tied type and is named right with chance 1/4: Binomial(52, 1/4)."""
    r = row((13,) * 4, "none", "greedy", tie_break="uniform")
    assert exact(r) == 13 and Fraction(r["score_variance_exact"]) == Fraction(39, 4)


def test_the_feedback_plot_reads_at_page_width_for_many_decks(tmp_path):
    """Ten decks (the study ranks52: n = 1 to 9 types of 4 with partial feedback, and the
    52-card deck with partial and complete): the plot grows in height, not width, and the
    check saved in the PNG names no problem."""
    import pandas as pd

    from solvers.card_guessing.summary.feedback import plot_comparison
    from solvers.kit.summary_parts import saved_check

    decks = [",".join(["4"] * n) for n in (*range(1, 10), 13)]
    table = pd.DataFrame({"deck": decks, "partial": [4.0, *[5.4] * 8, 5.37]})
    table["partial_std_error"] = [0.0] * 9 + [0.0035]
    table["complete"] = [None] * 9 + [9.2]
    table["bound_lower"], table["bound_upper"] = [None] * 9 + [7.4], [None] * 9 + [16.6]
    path = plot_comparison(table, tmp_path / "models.png")
    assert saved_check(path)[0] == "ok"
