"""Family ``hand_guessing`` (Juraszek 2014): feedback, strategies, exact evaluation.

Hand-worked feedback examples, the vectorised table against the plain reference, a brute-force
player on small decks, chunk and sample evaluation, the source's figures, and bad input.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from functools import cache

import numpy as np
import pandas as pd
import pytest

from solvers import TaskError, entropy, solve, validate
from solvers.hand_guessing import strategies as S
from solvers.hand_guessing import table as T
from solvers.hand_guessing.cards import Deck, feedback, hand_count, hand_index, hands
from solvers.kit.summary_parts import saved_check

FULL = Deck()


def fb(guess: str, answer: str) -> tuple[int, ...]:
    """Feedback on the full deck for space-separated card names."""
    return feedback(
        FULL, [FULL.parse(c) for c in guess.split()], [FULL.parse(c) for c in answer.split()]
    )


def one(**task) -> dict:
    """The single row of a hand_guessing task."""
    (row,) = solve({"family": "hand_guessing", **task})
    return row


# ------------------------------------------------------------------ feedback, by hand


def test_a_worked_example_with_all_five_numbers() -> None:
    # answer 3H 7H QS, guess 7H 9S JC: 7H is right (1); 3 is below the guess's lowest rank 7
    # (1); rank 7 is shared (1); Q is above the guess's highest rank J (1); hearts match once
    # and spades once (2)
    assert fb("7H 9S JC", "3H 7H QS") == (1, 1, 1, 1, 2)


def test_correct_cards_count_shared_cards_in_any_order() -> None:
    assert fb("2C 3D", "3D 4H")[0] == 1
    assert fb("3D 2C", "2C 3D")[0] == 2  # the order of the cards does not matter
    assert fb("2C 3D", "2D 3C")[0] == 0  # same ranks and suits, different cards


def test_lower_ranks_are_strictly_below_the_lowest_guessed_rank() -> None:
    assert fb("5H 9S", "2C 4C")[1] == 2
    assert fb("5H 9S", "5C 4D")[1] == 1  # a 5 is not below 5
    assert fb("5H 9S", "6C 8D")[1] == 0


def test_higher_ranks_are_strictly_above_the_highest_guessed_rank() -> None:
    assert fb("2C KD", "AS QH")[3] == 1  # ace high: A is above K, Q is not
    assert fb("2C KD", "KS KH")[3] == 0  # a K is not above K
    assert fb("2C", "AH") == (0, 0, 0, 1, 0)
    assert fb("AC", "KD") == (0, 1, 0, 0, 0)  # ace high: K is below A, nothing is above A


def test_correct_ranks_count_duplicates_by_the_smaller_count() -> None:
    # guess {7: 2, K: 1}, answer {7: 3}: min(2, 3) = 2
    assert fb("7C 7D KS", "7H 7S 7C")[2] == 2
    # guess {7: 2, K: 1}, answer {7: 1, K: 2}: 1 + 1 = 2
    assert fb("7C 7D KS", "7H KC KD")[2] == 2
    # guess {7: 1, 8: 1}, answer {7: 2}: 1
    assert fb("7C 8D", "7H 7S")[2] == 1


def test_correct_suits_count_duplicates_by_the_smaller_count() -> None:
    # guess {C: 2, D: 1}, answer {C: 1, D: 2}: 1 + 1 = 2
    assert fb("2C 3C 4D", "5C 6D 7D")[4] == 2
    assert fb("2C 3C 4C 5C", "6C 7C 8D 9H")[4] == 2
    assert fb("2C 3C", "4D 5H")[4] == 0


def test_a_right_guess_and_a_one_card_game() -> None:
    assert fb("4S 9H", "9H 4S") == (2, 0, 2, 0, 2)
    assert fb("8C", "8D") == (0, 0, 1, 0, 0)
    assert fb("8C", "3C") == (0, 1, 0, 0, 1)


def test_card_names() -> None:
    assert FULL.parse("10d") == FULL.parse("TD") == 8 * 4 + 1
    assert FULL.name(0) == "2C" and FULL.name(51) == "AS"
    assert FULL.hand_name([FULL.parse("TD"), FULL.parse("6C")]) == "6C,TD"


# ------------------------------------------------------------- vectorised feedback table


@pytest.mark.parametrize(
    ("ranks", "suits", "cards"), [(4, 3, 2), (5, 2, 3), (3, 3, 4), (4, 2, 4), (2, 4, 4), (13, 4, 1)]
)
def test_the_code_table_matches_the_reference_on_every_pair(ranks, suits, cards) -> None:
    deck = Deck(ranks, suits)
    f = T.features(deck, cards)
    hs = hands(deck, cards)
    table = T.codes(f, np.arange(len(hs)), np.arange(len(hs)))
    for i, g in enumerate(hs):
        for j, a in enumerate(hs):
            assert T.decode(cards, int(table[i, j])) == feedback(deck, g, a)


def test_the_code_table_matches_the_reference_on_full_deck_samples() -> None:
    rng = np.random.default_rng(8)
    for cards in (2, 3):
        f = T.features(FULL, cards)
        hs = hands(FULL, cards)
        g = rng.choice(len(hs), 40, replace=False)
        a = rng.choice(len(hs), 300, replace=False)
        table = T.codes(f, g, a)
        for i, j in itertools.product(range(len(g)), range(len(a))):
            assert table[i, j] == T.encode(cards, feedback(FULL, hs[g[i]], hs[a[j]]))


def test_hand_indices_follow_the_enumeration() -> None:
    deck = Deck(5, 3)
    for cards in (1, 2, 3):
        for i, h in enumerate(hands(deck, cards)):
            assert hand_index(deck, tuple(reversed(h))) == i
    assert hand_count(FULL, 4) == 270_725


def test_class_minima_cover_every_class() -> None:
    deck = Deck(4, 3)
    reps = set(S.class_minima(deck, 2).tolist())
    hs = hands(deck, 2)
    classes = set()
    for h in hs:
        key = min(
            tuple(sorted(r(c // 3) * 3 + perm[c % 3] for c in h))
            for perm in itertools.permutations(range(3))
            for r in (lambda x: x, lambda x: 3 - x)
        )
        classes.add(key)
        assert hs.index(key) in reps
    assert len(reps) == len(classes)


def test_hands_of_a_class_score_alike() -> None:
    deck = Deck(5, 3)
    f = T.features(deck, 2)
    every = np.arange(len(f))
    score = S.scores(f, every, every, S.Rule())
    mirrored = [
        hand_index(deck, [(4 - c // 3) * 3 + (c + 1) % 3 for c in h]) for h in hands(deck, 2)
    ]
    np.testing.assert_array_equal(score, score[mirrored])


# ------------------------------------------------------------- brute-force cross-check


def brute_guesses(deck: Deck, cards: int, strategy: str, t: float, first) -> list[int]:
    """Guesses for every answer by playing each game with plain Python (no NumPy tables)."""
    hs = hands(deck, cards)

    def size(n: int) -> float:
        # entropy of n equally likely hands, from the shared module (r = 3: any r will do)
        return entropy.sharma_mittal([1 / n] * n, 3.0, t)

    def score(g, cands) -> float:
        groups: dict[tuple, int] = {}
        for a in cands:
            key = feedback(deck, g, a)
            groups[key] = groups.get(key, 0) + 1
        if strategy == "min_expected_size":
            return sum(n * n for n in groups.values())
        return sum(n * size(n) for n in groups.values())

    @cache
    def choose(cands: tuple) -> tuple:
        scored = [(score(g, cands), i) for i, g in enumerate(cands)]
        low = min(s for s, _ in scored)
        return cands[min(i for s, i in scored if s <= low + 1e-9 * max(1.0, abs(low)))]

    if first == "search":
        first_hand = choose(tuple(hs))
    else:
        first_hand = tuple(sorted(deck.parse(c) for c in first))
    out = []
    for answer in hs:
        cands, guess, n = tuple(hs), first_hand, 1
        while guess != answer:
            heard = feedback(deck, guess, answer)
            cands = tuple(c for c in cands if feedback(deck, guess, c) == heard)
            guess, n = choose(cands), n + 1
        out.append(n)
    return out


@pytest.mark.parametrize(
    ("ranks", "suits", "cards", "strategy", "t", "first"),
    [
        (4, 2, 1, "min_expected_size", 1.0, "search"),
        (4, 2, 2, "min_expected_size", 1.0, "search"),
        (3, 3, 2, "sharma_mittal", 1.0, "search"),
        (3, 3, 3, "min_expected_size", 1.0, ["2C", "3D", "4H"]),
        (4, 2, 3, "sharma_mittal", 2.0, "search"),
        (3, 2, 4, "sharma_mittal", 0.5, "search"),
        (4, 2, 2, "sharma_mittal", 0.0, ["2C", "2D"]),
    ],
)
def test_exact_evaluation_matches_brute_force(ranks, suits, cards, strategy, t, first) -> None:
    brute = brute_guesses(Deck(ranks, suits), cards, strategy, t, first)
    task = {"cards": cards, "ranks": ranks, "suits": suits, "strategy": strategy}
    if strategy == "sharma_mittal":
        task["entropy_t"] = t
    row = one(**task, first_guess=first)
    assert row["total_guesses"] == sum(brute)
    mean = Fraction(sum(brute), len(brute))
    assert row["average_guesses_exact"] == f"{mean.numerator}/{mean.denominator}"
    assert row["max_guesses"] == max(brute)
    assert row["histogram"] == [brute.count(k) for k in range(1, max(brute) + 1)]
    assert row["answers"] == row["total_answers"] == len(brute)


def test_every_answer_is_found_and_the_right_first_guess_takes_one() -> None:
    f = T.features(Deck(4, 3), 2)
    first = hand_index(Deck(4, 3), (0, 5))
    result = S.play(f, first, S.Rule())
    assert result.guesses.min() == 1 and np.sum(result.guesses == 1) == 1
    assert result.guesses[first] == 1


# ------------------------------------------------------------------ strategy identities


def test_sharma_mittal_at_t0_ranks_guesses_like_min_expected_size() -> None:
    # H_{r,0} of n equally likely hands is n - 1, and sum n_g (n_g - 1) = sum n_g^2 - n
    a = one(cards=2, first_guess="search")
    b = one(cards=2, strategy="sharma_mittal", entropy_t=0.0, first_guess="search")
    assert (a["total_guesses"], a["histogram"], a["first_guess"]) == (
        b["total_guesses"],
        b["histogram"],
        b["first_guess"],
    )


def test_the_order_r_does_not_change_a_choice() -> None:
    rows = [
        one(cards=2, ranks=6, strategy="sharma_mittal", entropy_r=r, entropy_t=1.5)
        for r in (0.0, 1.0, math.inf)
    ]
    assert len({(r["total_guesses"], r["first_guess"]) for r in rows}) == 1


def test_uniform_lookup_equals_the_grouped_entropy() -> None:
    labels = np.array([[0, 0, 1, 2, 2, 2], [0, 1, 2, 3, 4, 4]])
    for r, t in [(1.0, 1.0), (2.0, 0.5), (0.5, 3.0)]:
        h, mass = entropy.sharma_mittal_grouped(np.ones(6), labels, 5, r, t)
        expected = (mass * h).sum(axis=1)
        counts = np.stack([np.bincount(row, minlength=5) for row in labels])
        score = S.scorer(S.Rule("sharma_mittal", t), 6)(counts)
        np.testing.assert_allclose(score, expected, rtol=1e-12)


# ----------------------------------------------------------------- chunks and samples


def test_chunks_add_up_to_the_whole() -> None:
    whole = one(cards=2, first_guess=["6C", "TD"])
    parts = [one(cards=2, first_guess=["6C", "TD"], n_chunks=3, answer_chunk=c) for c in range(3)]
    assert sum(p["answers"] for p in parts) == 1326
    assert sum(p["total_guesses"] for p in parts) == whole["total_guesses"]
    hist = np.zeros(len(whole["histogram"]), dtype=int)
    for p in parts:
        hist[: len(p["histogram"])] += p["histogram"]
    assert hist.tolist() == whole["histogram"]


def test_a_sample_is_seeded_and_reports_its_standard_error() -> None:
    a = one(cards=2, ranks=8, sample=60)
    b = one(cards=2, ranks=8, sample=60)
    whole = one(cards=2, ranks=8)
    assert a["total_guesses"] == b["total_guesses"] and a["answers"] == 60
    assert a["average_guesses_exact"] is None and a["standard_error"] > 0
    assert abs(a["average_guesses"] - whole["average_guesses"]) < 5 * a["standard_error"]
    everything = one(cards=2, ranks=8, sample=whole["total_answers"])
    assert everything["total_guesses"] == whole["total_guesses"]
    assert everything["standard_error"] == 0.0


# ------------------------------------------------------------------ the source's figures


def test_one_card_best_first_guess_is_the_middle_rank() -> None:
    """Juraszek (2014), sections 3 and 4.1: rating by feedback groups picks 8C for one card."""
    row = one(cards=1)
    assert row["first_guess"] == "8C"
    assert row["average_guesses_exact"] == "45/13"  # under the rules as specified


def test_two_card_search_finds_the_seed_programs_first_guess() -> None:
    """The source's program (Cardguess.hs, linked from Juraszek (2014) section 6) opens with 6C
    TD."""
    row = one(cards=2)
    assert row["first_guess"] == "6C,TD"
    assert row["average_guesses_exact"] == "182/51"  # 4732 / 1326 = 3.5686...
    assert row["total_guesses"] == 4732 and row["max_guesses"] == 5
    assert row["histogram"] == [1, 37, 534, 715, 39]
    # Juraszek (2014): the published program averaged 4.19 guesses on two-card hands
    assert row["average_guesses"] < 4.19


def positional_correct_codes(f: T.Features, first: int) -> np.ndarray:
    """Feedback codes of ``first`` against every hand as the source's C program computed them.

    Its "correct cards" compares the two hands position by position, each sorted by suit then
    rank (initial/feedback.c in the repository linked from Juraszek (2014)), instead of as sets.
    """
    k = f.cards
    right = T.code_row(f, first, np.arange(len(f))).astype(np.int64)
    h = f.hands.astype(np.int64)
    by_suit = np.sort((h % 4) * 13 + h // 4, axis=1)
    positional = (by_suit == by_suit[first][None, :]).sum(axis=1)
    return right + (positional - right // (k + 1) ** 4) * (k + 1) ** 4


def test_the_seed_programs_correct_card_count_explains_its_two_card_rating() -> None:
    """The published program (Juraszek 2014)'s output for 6C TD (out/initial-2 in the linked
    repository) rates it 96780 (sum of squared group sizes); the rules as specified give
    94156 over the same 38 groups."""
    f = T.features(FULL, 2)
    first = hand_index(FULL, [FULL.parse("6C"), FULL.parse("TD")])
    seed = np.bincount(positional_correct_codes(f, first))
    ours = np.bincount(T.code_row(f, first, np.arange(len(f))))
    assert (int((seed.astype(np.int64) ** 2).sum()), int(np.count_nonzero(seed))) == (96780, 38)
    assert (int((ours.astype(np.int64) ** 2).sum()), int(np.count_nonzero(ours))) == (94156, 38)


def test_the_seed_programs_swapped_rating() -> None:
    """The published program (Juraszek 2014) rates a guess by grouping the candidates on
    feedback(guess=candidate,
    answer=rated guess) (Optimalguess.hs in the repository linked from Juraszek (2014)): lower and
    higher ranks swap roles.  With that rating and its tie order, opening 6C TD, two-card
    games take 4773 guesses in all; under the rules as specified 4732."""
    f = T.features(FULL, 2)
    first = hand_index(FULL, [FULL.parse("6C"), FULL.parse("TD")])
    order = S.juraszek_program_order(f)
    seed = S.play(f, first, S.Rule(swapped_scoring=True, priority=order))
    assert int(seed.guesses.sum()) == 4773
    assert int(S.play(f, first, S.Rule(priority=order)).guesses.sum()) == 4732
    assert int(S.play(f, first, S.Rule()).guesses.sum()) == 4732


@pytest.mark.slow
def test_the_seed_programs_largest_four_card_group() -> None:
    """Juraszek (2014), section 3: the largest group after the four-card first guess holds 11844
    hands.  That is the seed program's count (positional correct cards) for its first guess
    5C 9C 9D TD; under the rules as specified the largest group holds 8376 hands (287 groups)."""
    f = T.features(FULL, 4)
    first = hand_index(FULL, [FULL.parse(c) for c in ("5C", "9C", "9D", "TD")])
    assert np.bincount(positional_correct_codes(f, first)).max() == 11844
    ours = np.bincount(T.code_row(f, first, np.arange(len(f))))
    assert ours.max() == 8376 and np.count_nonzero(ours) == 287


@pytest.mark.slow
def test_three_card_table_beats_the_seed_program() -> None:
    """Juraszek (2014): the published program averaged 4.41 guesses on three-card hands."""
    row = one(cards=3)
    assert row["first_guess"] == "5C,6C,TD"
    assert row["total_guesses"] == 86427 and row["answers"] == 22100
    assert row["average_guesses_exact"] == "86427/22100"
    assert row["max_guesses"] == 6
    assert row["histogram"] == [1, 116, 4815, 14221, 2817, 130]
    assert row["average_guesses"] < 4.41


# ------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("task", "key"),
    [
        ({"cards": 0}, "cards"),
        ({"cards": 5}, "cards"),
        ({"cards": "two"}, "cards"),
        ({"cards": 2, "first_guess": ["2C", "1X"]}, "first_guess"),
        ({"cards": 2, "first_guess": "2C ZZ"}, "first_guess"),
        ({"cards": 2, "first_guess": ["2C", "2c"]}, "first_guess"),
        ({"cards": 2, "first_guess": ["2C"]}, "first_guess"),
        ({"cards": 2, "first_guess": ["2C", "3C", "4C"]}, "first_guess"),
        ({"cards": 2, "first_guess": []}, "first_guess"),
        ({"cards": 2, "first_guess": 7}, "first_guess"),
        ({"cards": 2, "ranks": 4, "first_guess": ["2C", "AS"]}, "first_guess"),
        ({"cards": 2, "n_chunks": 3, "answer_chunk": 3}, "answer_chunk"),
        ({"cards": 2, "n_chunks": 3, "answer_chunk": -1}, "answer_chunk"),
        ({"cards": 2, "n_chunks": 0}, "n_chunks"),
        ({"cards": 1, "n_chunks": 53}, "n_chunks"),
        ({"cards": 4}, "n_chunks"),  # 270,725 answers in one task: over max_answers
        ({"cards": 2, "sample": 0}, "sample"),
        ({"cards": 2, "sample": 2000}, "sample"),
        ({"cards": 2, "sample": 10, "n_chunks": 2}, "sample"),
        ({"cards": 2, "ranks": 14}, "ranks"),
        ({"cards": 2, "suits": 5}, "suits"),
        ({"cards": 3, "ranks": 1, "suits": 2}, "cards"),
        ({"cards": 2, "strategy": "sharma_mittal", "entropy_t": -1}, "entropy_t"),
        ({"cards": 2, "entropy_t": 1.0}, "entropy_t"),  # not a sharma_mittal task
        ({"cards": 2, "strategy": "greedy"}, "strategy"),
    ],
)
def test_bad_input_names_the_key(task, key) -> None:
    with pytest.raises(TaskError) as err:
        validate({"family": "hand_guessing", **task})
    assert err.value.key == key
    assert str(err.value).startswith(f"{key}=")


def test_first_guess_is_canonical() -> None:
    task = validate({"family": "hand_guessing", "cards": 2, "first_guess": "td 6c"})
    assert task["first_guess"] == ["6C", "TD"]
    assert validate({"family": "hand_guessing", "cards": 2, "first_guess": ["10D", "6c"]})[
        "first_guess"
    ] == ["6C", "TD"]


# ---------------------------------------------------------------------------- summary


def test_summary_tables_plot_and_chunk_aggregation(tmp_path) -> None:
    from solvers.registry import family_summary as get_summary

    rows = []
    for cards in (1, 2):
        rows += solve({"family": "hand_guessing", "cards": cards, "ranks": 5})
        rows += solve(
            {"family": "hand_guessing", "cards": cards, "ranks": 5, "strategy": "sharma_mittal"}
        )
    rows += [
        r
        for c in range(4)
        for r in solve(
            {"family": "hand_guessing", "cards": 3, "ranks": 5, "n_chunks": 4, "answer_chunk": c}
        )
    ]
    rows += solve({"family": "hand_guessing", "cards": 3, "ranks": 5, "sample": 100})
    whole = one(cards=3, ranks=5)
    text = get_summary("hand_guessing")(pd.DataFrame(rows), tmp_path)
    assert "sharma_mittal" in text and "min_expected_size" in text
    assert whole["average_guesses_exact"] in text  # the four chunks add up to the exact table
    assert "±" in text  # the sample with its standard error
    table = pd.read_parquet(tmp_path / "hand_guessing_results.parquet")
    chunked = table[(table["cards"] == 3) & (table["method"] == "exact")]
    assert chunked["total_guesses"].tolist() == [whole["total_guesses"]]
    assert chunked["chunks"].tolist() == ["4/4"]
    assert (tmp_path / "hand_guessing_histograms_5x4.png").stat().st_size > 0
    assert saved_check(tmp_path / "hand_guessing_histograms_5x4.png")[0] == "ok"


def test_summary_of_no_rows(tmp_path) -> None:
    from solvers.registry import family_summary as get_summary

    assert "No successful" in get_summary("hand_guessing")(pd.DataFrame(), tmp_path)
