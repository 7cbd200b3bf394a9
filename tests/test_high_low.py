"""Tests of family ``high_low`` (the higher/lower game of Norvig (2020), *Flipping Cards: A
Guessing Game*)."""

from __future__ import annotations

import math
from fractions import Fraction

import pandas as pd
import pytest

from solvers import get_family, solve
from solvers.high_low import deck, distinct
from solvers.high_low.tasks import distinct_expected
from solvers.kit.summary_parts import saved_check
from solvers.registry import TaskError, row_columns
from tests.helpers.repository import ROOT


def row(**task) -> dict:
    return solve({"family": "high_low", **task})[0]


# ------------------------------------------------------------------ published figures


def test_seed_nine_cards_exact():
    """Norvig (2020), "The Answer": 9 cards (2..10), about 17%: 0.17085537918871252 = 775/4536."""
    r = row(n=9)
    assert r["p_perfect_exact"] == "775/4536"
    assert distinct.p_perfect(9) == Fraction(775, 4536)
    assert r["p_perfect"] == 0.17085537918871252


@pytest.mark.parametrize(
    "n, published",
    [(9, 0.17085537918871252), (19, 0.008419397002884993), (99, 6.67213407124781e-14)],
)
def test_seed_extra_credit_values(n, published):
    """Norvig (2020), "Extra Credit": P_all(19) and P_all(99) (the source's floats, to ~1e-12)."""
    for method in ("exact", "float"):
        assert row(n=n, method=method)["p_perfect"] == pytest.approx(published, rel=1e-12)


@pytest.mark.parametrize("n", [3, 4, 5, 9, 10, 20, 40])
def test_seed_state_count(n):
    """Norvig (2020), "Computational Complexity": the memoised recursion caches n(n+1)/2 - 1
    states."""
    p, cached = distinct.p_perfect_memo(n)
    assert cached == n * (n + 1) // 2 - 1 == distinct.n_states(n) == row(n=n)["n_states"]
    assert p == pytest.approx(float(distinct.p_perfect(n)), rel=1e-12)


@pytest.mark.parametrize(
    "n, shown",
    [
        (3, 8.33e-01),
        (8, 2.28e-01),
        (10, 1.28e-01),
        (50, 4.71e-07),
        (100, 4.83e-14),
        (150, 4.49e-21),
    ],
)
def test_seed_table_three_digits(n, shown):
    """Norvig (2020), "Computational Complexity" table: P_all(n) printed to three digits."""
    assert row(n=n, method="float")["p_perfect"] == pytest.approx(shown, rel=6e-3)


# ------------------------------------------------------------------ distinct cards


@pytest.mark.parametrize("n", range(2, 8))
def test_distinct_against_brute_force(n):
    """Exact P(perfect) and expected right calls equal enumeration over all n! orders."""
    p, e = distinct.brute_force(n)
    assert distinct.p_perfect(n) == p
    assert distinct.expected_correct(n) == e == distinct_expected(n)


@pytest.mark.slow
@pytest.mark.parametrize("n", [8, 9])
def test_distinct_against_brute_force_slow(n):
    """As above for 8 and 9 cards (9! = 362,880 orders)."""
    p, e = distinct.brute_force(n)
    assert distinct.p_perfect(n) == p
    assert distinct.expected_correct(n) == e


def test_expected_correct_three_ways():
    """The closed per-step sum, the plain sum and the full recursion agree for n <= 40."""
    for n in range(2, 41):
        assert (
            distinct_expected(n) == distinct.expected_correct(n) == distinct.expected_correct_dp(n)
        )


def test_majority_is_optimal_up_to_200():
    """Solving the game's own optimum, the majority call is best in every state (n <= 200)."""
    never_worse, strict, checked = distinct.majority_optimality(200)
    assert never_worse and strict
    assert checked == distinct.n_states(200)
    assert all(
        distinct.p_perfect(n, distinct.majority_call) == distinct.p_perfect(n) for n in range(2, 60)
    )


def test_float_path_against_exact():
    """The NumPy layers agree with the exact fractions to ~1e-12 relative (n <= 300)."""
    for n in list(range(2, 40)) + [100, 200, 300]:
        p, log10_p = distinct.p_perfect_float(n)
        exact = distinct.p_perfect(n)
        assert p == pytest.approx(float(exact), rel=1e-11)
        assert log10_p == pytest.approx(math.log10(exact.numerator) - math.log10(exact.denominator))


def test_float_path_far_below_underflow():
    """Past about n = 1700 the probability underflows, the log10 column still holds it."""
    r = row(n=3000, method="float")
    assert r["p_perfect"] == 0.0 and -450 < r["log10_p_perfect"] < -400


def test_distinct_is_a_one_suit_deck():
    """n distinct cards = a deck of n ranks x 1 suit, whatever the tie rule (no ties occur)."""
    for n in range(2, 10):
        for ties in deck.TIES:
            assert deck.p_perfect(n, 1, ties)[0] == distinct.p_perfect(n)
            assert deck.expected_correct(n, 1, ties) == distinct.expected_correct(n)


# ------------------------------------------------------------------ real decks

TINY = [(2, 2), (3, 2), (2, 3), (1, 3), (4, 2), (2, 4)]


@pytest.mark.parametrize("ranks, suits", TINY)
@pytest.mark.parametrize("ties", deck.TIES)
def test_deck_against_brute_force(ranks, suits, ties):
    """Canonical-state solver = plain game-tree search over every order (<= 8 cards)."""
    p_brute, e_brute = deck.brute_force(ranks, suits, ties)
    assert deck.p_perfect(ranks, suits, ties)[0] == p_brute
    assert deck.expected_correct(ranks, suits, ties) == e_brute
    assert deck.expected_correct_dp(ranks, suits, ties) == e_brute


@pytest.mark.parametrize("ranks, suits", TINY)
@pytest.mark.parametrize("ties", deck.TIES)
def test_deck_majority_against_orders(ranks, suits, ties):
    """The majority rule's exact value = counting perfect orders of labelled cards."""
    assert deck.p_perfect(ranks, suits, ties, "majority")[0] == deck.majority_by_orders(
        ranks, suits, ties
    )


def test_sorted_tuples_are_not_a_valid_state():
    """Sorting the counts below/above (forgetting their order) gives 1/6 on 3 ranks x 2 suits
    (ties lose) where the game's value is 8/45 (brute force and the exact solver); the high/low
    page quotes both values, in those words, twice."""

    def sorted_value(state, memo={}):  # noqa: B006 - a private memo
        below, same, above = state
        key = (tuple(sorted(below)), same, tuple(sorted(above)))
        key = min(key, (key[2], same, key[0]))
        if not below and not above and same == 0:
            return 1
        if key not in memo:
            higher = lower = 0
            for cards, side, child in deck.children(state):
                v = cards * sorted_value(child)
                higher += v if side == "a" else 0
                lower += v if side == "b" else 0
            memo[key] = max(higher, lower)
        return memo[key]

    total = sum(2 * sorted_value(s) for s in deck.start_states(3, 2))
    wrong, right = Fraction(total, math.factorial(6)), deck.brute_force(3, 2, "lose")[0]
    assert (wrong, right) == (Fraction(1, 6), Fraction(8, 45))
    assert deck.p_perfect(3, 2, "lose")[0] == right
    page = " ".join((ROOT / "docs" / "games" / "high_low.md").read_text().split())
    assert page.count(f"{wrong} instead of {right} on 3 ranks x 2 suits") == 2


def test_win_and_push_share_perfect_games():
    """An equal card is never a miss under win or push, so P(perfect) is the same."""
    for ranks, suits in [(3, 3), (4, 2), (5, 2)]:
        assert deck.p_perfect(ranks, suits, "win") == deck.p_perfect(ranks, suits, "push")
        lose = deck.expected_correct(ranks, suits, "lose")
        assert deck.expected_correct(ranks, suits, "push") == lose
        # win adds E[equal cards / m] = (suits - 1) / (N - 1) at each of the N - 1 calls
        assert deck.expected_correct(ranks, suits, "win") == lose + suits - 1


def test_majority_is_not_optimal_on_real_decks():
    """With repeated ranks the majority rule can lose: 5 x 3, ties lose (a new finding)."""
    optimal = deck.p_perfect(5, 3, "lose")[0]
    majority = deck.p_perfect(5, 3, "lose", "majority")[0]
    assert majority < optimal


def test_state_estimate_is_close():
    """The size estimate that refuses big decks is within 20% of the states solved."""
    for ranks, suits in [(5, 2), (6, 3), (5, 4), (10, 2)]:
        solved = deck.p_perfect(ranks, suits)[1]
        assert 0.8 < deck.estimated_states(ranks, suits) / solved < 1.2


def test_full_deck_expected_correct():
    """Full 13 x 4 deck: exact best expected right calls (this project's own figure)."""
    r = row(ranks=13, suits=4, method="monte_carlo", strategy="majority", n_games=200)
    assert r["expected_correct_exact"] == "323033687701805769053/8564536257482558925"
    assert r["expected_correct"] == pytest.approx(37.7175924054944)


# ------------------------------------------------------------------ Monte Carlo


@pytest.mark.parametrize(
    "task", [dict(n=9), dict(ranks=6, suits=3), dict(ranks=4, suits=3, ties="win")]
)
def test_monte_carlo_within_four_standard_errors(task):
    """Seeded importance sampling lands near the majority rule's exact value."""
    exact = row(strategy="majority", **task)["p_perfect"]
    r = row(strategy="majority", method="monte_carlo", n_games=20_000, **task)
    assert r["p_perfect_se"] > 0
    assert abs(r["p_perfect"] - exact) < 4 * r["p_perfect_se"]
    assert r == {
        **row(strategy="majority", method="monte_carlo", n_games=20_000, **task),
        "seconds": r["seconds"],
    }  # seeded from the task id


# ------------------------------------------------------------------ contract and errors


def test_rows_hold_declared_columns():
    fam = get_family("high_low")
    for task in [
        dict(n=5),
        dict(n=5, method="float"),
        dict(ranks=3, suits=2, ties="push"),
        dict(ranks=3, suits=2, method="monte_carlo", strategy="majority", n_games=50),
    ]:
        r = row(**task)
        assert set(r) == set(row_columns(fam)) - {"task_id", "study"}


@pytest.mark.parametrize(
    "task, key",
    [
        (dict(n=1), "n"),
        (dict(n="x"), "n"),
        (dict(), "n"),
        (dict(n=5, ranks=3), "ranks"),
        (dict(ranks=3), "suits"),
        (dict(ranks=0, suits=4), "ranks"),
        (dict(ranks=4, suits=0), "suits"),
        (dict(ranks=1, suits=1), "suits"),
        (dict(n=5, ties="maybe"), "ties"),
        (dict(n=5, method="guess"), "method"),
        (dict(ranks=32, suits=4, method="float"), "ranks"),
        (dict(ranks=200, suits=4, method="float"), "ranks"),
        (dict(ranks=13, suits=4), "ranks"),
        (dict(n=5000), "n"),
        (dict(ranks=13, suits=4, method="monte_carlo"), "strategy"),
        (dict(n=5, method="monte_carlo", n_games=1), "n_games"),
        (dict(n=5, strategy="lucky"), "strategy"),
    ],
)
def test_bad_parameters_name_their_key(task, key):
    with pytest.raises(TaskError) as err:
        solve({"family": "high_low", **task})
    assert err.value.key == key


def test_too_large_message_offers_monte_carlo():
    with pytest.raises(ValueError, match=r"ranks=13.*13x4.*monte_carlo.*max_states"):
        row(ranks=13, suits=4)


# ------------------------------------------------------------------ summary


def test_summary_writes_plot_and_tables(tmp_path):
    from solvers.registry import family_summary as get_summary

    rows = [row(n=n) for n in range(2, 12)] + [row(n=200, method="float")]
    rows += [
        row(ranks=r, suits=s, ties=t, strategy=st)
        for r in (2, 3)
        for s in (1, 2)
        for t in ("lose", "win")
        for st in ("optimal", "majority")
    ]
    rows += [row(ranks=4, suits=4, method="monte_carlo", strategy="majority", n_games=100)]
    text = get_summary("high_low")(pd.DataFrame(rows), tmp_path)
    assert "775/4536" in text and "high_low_p_perfect.png" in text
    assert (tmp_path / "high_low_p_perfect.png").stat().st_size > 0
    for png in tmp_path.glob("*.png"):  # readable at the manual's width (summary_parts)
        assert saved_check(png)[0] == "ok", png.name
    assert (tmp_path / "high_low_decks.parquet").exists()


def test_summary_of_monte_carlo_rows_only(tmp_path):
    """The store may drop all-null columns (no exact P for Monte Carlo rows)."""
    from solvers.registry import family_summary as get_summary

    rows = pd.DataFrame(
        [row(ranks=5, suits=4, method="monte_carlo", strategy="majority", n_games=100)]
    ).drop(columns=["p_perfect_exact", "n_states", "n"])
    text = get_summary("high_low")(rows, tmp_path)
    assert "monte_carlo" in text
