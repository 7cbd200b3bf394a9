"""Tests of the code-jar Mastermind family (Hofer & Nelson 2016; Knuth 1977)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from solvers import TaskError, solve, validate
from solvers import entropy as E
from solvers.mastermind import codes as R
from solvers.mastermind import rules as MR
from solvers.mastermind import strategies as M
from solvers.mastermind import tasks as MT

# ------------------------------------------------------------- brute-force reference player


def brute_score(query, feasible, probs, strategy, r, t) -> float:
    """The strategy's score of one query from plain dict partitions (lower is better)."""
    parts: dict[tuple[int, int], list] = {}
    for code in feasible:
        parts.setdefault(R.feedback(query, code), []).append(code)
    if strategy == "minimax":
        return max(len(p) for p in parts.values())
    if strategy == "most_parts":
        return -len(parts)
    total = sum(probs[c] for c in feasible)
    if strategy == "expected_size":
        return float(sum(sum(probs[c] for c in p) / total * len(p) for p in parts.values()))
    return sum(
        float(sum(probs[c] for c in p) / total)
        * E.sharma_mittal([float(probs[c]) for c in p], r, t, normalize=True)
        for p in parts.values()
    )


def brute_guess(codes, feasible, probs, strategy, r, t):
    """The strategy's guess by scanning every code in order with the family's tie rule."""
    if strategy == "first_feasible" or len(feasible) == 1:
        return feasible[0]
    scored = []
    for q in codes:
        splits = len({R.feedback(q, c) for c in feasible}) > 1
        if splits or q in feasible:
            scored.append((brute_score(q, feasible, probs, strategy, r, t), q))
    best = min(s for s, _ in scored)
    tied = [q for s, q in scored if s <= best + 1e-9 * max(abs(best), 1e-3)]
    return next((q for q in tied if q in feasible), tied[0])


def brute_guesses(pegs, colours, jar, strategy, r=1.0, t=1.0) -> dict[tuple, int]:
    """Guesses needed for each secret, playing every game separately from scratch."""
    codes = list(itertools.product(range(colours), repeat=pegs))
    weights = R.jar_weights(jar, colours)
    probs = {c: Fraction(math.prod(weights[x] for x in c), sum(weights) ** pegs) for c in codes}
    out = {}
    for secret in codes:
        feasible, n = codes, 0
        while True:
            guess = brute_guess(codes, feasible, probs, strategy, r, t)
            n += 1
            answer = R.feedback(guess, secret)
            if guess == secret:
                break
            feasible = [c for c in feasible if R.feedback(guess, c) == answer]
        out[secret] = n
    return out


def row(**task):
    return solve({"family": "mastermind", **task})[0]


# ------------------------------------------------------------------------ the game rules


def test_feedback_of_a_few_codes() -> None:
    assert R.feedback((0, 0, 1, 1), (0, 1, 2, 3)) == (1, 1)
    assert R.feedback((0, 1, 2, 3), (3, 2, 1, 0)) == (0, 4)
    assert R.feedback((0, 0, 0, 0), (0, 0, 0, 0)) == (4, 0)
    assert R.feedback((1, 1, 2, 2), (2, 2, 2, 1)) == (1, 2)


@pytest.mark.parametrize(("pegs", "colours"), [(1, 3), (2, 3), (3, 2), (3, 4), (4, 3)])
def test_feedback_table_matches_plain_counting(pegs, colours) -> None:
    table = R.feedback_table(pegs, colours)
    fbs = R.feedbacks(pegs)
    codes = list(itertools.product(range(colours), repeat=pegs))
    for i, g in enumerate(codes):
        for j, s in enumerate(codes):
            assert fbs[table[i, j]] == R.feedback(g, s)


def test_feedback_set_for_three_pegs_hofer_nelson_section_1_1() -> None:
    """Hofer & Nelson (2016) section 1.1 lists R_3; it omits (1, 0), which occurs (guess 122, code
    133).

    Its recurrence |R_l| = |R_(l-1)| + l with |R_1| = 3 follows that slip; the counts that
    occur are (l+1)(l+2)/2 - 1 (every b + w <= l except b = l-1, w = 1): 2, 5, 9, 14.
    """
    listed = {(0, 0), (0, 1), (0, 2), (0, 3), (1, 1), (1, 2), (2, 0), (3, 0)}
    assert set(R.feedbacks(3)) == listed | {(1, 0)}
    assert R.feedback((0, 1, 1), (0, 2, 2)) == (1, 0)
    for pegs in range(1, 6):
        seen = {
            R.feedback(g, s)
            for g in itertools.product(range(3), repeat=pegs)
            for s in itertools.product(range(3), repeat=pegs)
        }
        assert seen == set(R.feedbacks(pegs))
        assert len(seen) == (pegs + 1) * (pegs + 2) // 2 - 1
    assert R.feedbacks(4)[-1] == (4, 0)


def test_code_probabilities_are_products_of_jar_probabilities_seed_002_eq_2() -> None:
    """Hofer & Nelson (2016) equation 2: P(code) is the product of the jar probabilities of its
    pegs."""
    weights = R.code_weights(3, 4, [10, 6, 4, 2])
    assert len(weights) == 64 and sum(weights) == 22**3
    assert weights[0] == 10**3 and weights[-1] == 2**3  # codes 111 and 444
    assert weights[int("012", 4)] == 10 * 6 * 4
    assert R.code_weights(2, 2, ["1/3", "2/3"]) == [1, 2, 2, 4]


def test_a_peaked_feasible_set_has_less_entropy_than_a_flat_one_seed_002_section_3_1() -> None:
    """Hofer & Nelson (2016) section 3.1: {0.6, 0.1 x 5} is preferable to six equally likely codes.

    (The document's numbers sum to 1.1 and 1.2; they are read here as weights.)
    """
    for r, t in itertools.product([0, 0.5, 1, 2, math.inf], [0, 0.5, 1, 2, 5]):
        peaked = E.sharma_mittal([0.6] + [0.1] * 5, r, t, normalize=True)
        flat = E.sharma_mittal([0.2] * 6, r, t, normalize=True)
        assert peaked <= flat + 1e-12
        if r > 0:
            assert peaked < flat


# ---------------------------------------------------------------- published figures


def test_knuth_minimax_on_standard_mastermind() -> None:
    """Knuth (1977): 4 pegs, 6 colours, minimax with feasible-then-lowest ties, first guess
    1122: 5801 guesses over the 1296 codes, at most 5 per game."""
    out = row(pegs=4, colours=6, strategy="minimax")
    assert out["total_guesses"] == 5801
    assert out["n_codes"] == 1296
    assert out["max_guesses"] == 5
    assert out["histogram"] == [1, 6, 62, 533, 694]
    assert out["first_guess"] == "1122"
    assert out["expected_guesses_exact"] == str(Fraction(5801, 1296))


# ------------------------------------------------------- exact evaluation vs brute force

SMALL_GAMES = [
    (2, 3, None),
    (3, 2, None),
    (2, 4, [3, 1, 1, 2]),
    (3, 3, [10, 6, 4]),
    (2, 3, ["1/2", "1/3", "1/6"]),
]
STRATEGY_CASES = [
    ("minimax", 1.0, 1.0),
    ("expected_size", 1.0, 1.0),
    ("most_parts", 1.0, 1.0),
    ("first_feasible", 1.0, 1.0),
    ("sharma_mittal", 1.0, 1.0),
    ("sharma_mittal", 0.0, 1.0),
    ("sharma_mittal", 2.0, 2.0),
    ("sharma_mittal", math.inf, 1.0),
    ("sharma_mittal", 0.5, 5.0),
]


@pytest.mark.parametrize(("pegs", "colours", "jar"), SMALL_GAMES)
@pytest.mark.parametrize(("strategy", "r", "t"), STRATEGY_CASES)
def test_tree_evaluation_matches_playing_every_game(pegs, colours, jar, strategy, r, t) -> None:
    fast, _, _ = M.guesses_per_code(pegs, colours, jar, strategy, r, t)
    slow = brute_guesses(pegs, colours, jar, strategy, r, t)
    assert fast.tolist() == list(slow.values())


def test_exact_columns_of_a_jar_game() -> None:
    out = row(pegs=2, colours=3, jar=[2, 1, 1], strategy="minimax")
    guesses = brute_guesses(2, 3, [2, 1, 1], "minimax")
    w = R.code_weights(2, 3, [2, 1, 1])
    expected = Fraction(sum(g * x for g, x in zip(guesses.values(), w, strict=True)), sum(w))
    assert out["expected_guesses_exact"] == f"{expected.numerator}/{expected.denominator}"
    assert out["expected_guesses"] == pytest.approx(float(expected))
    assert out["total_guesses"] is None
    assert sum(out["histogram"]) == 9 and len(out["histogram"]) == out["max_guesses"]
    assert sum(out["guess_pmf"]) == pytest.approx(1.0)


def test_uniform_jar_weights_give_the_standard_game() -> None:
    a = row(pegs=3, colours=3, jar=[2, 2, 2], strategy="sharma_mittal", entropy_r=2)
    b = row(pegs=3, colours=3, strategy="sharma_mittal", entropy_r=2)
    assert a["total_guesses"] == b["total_guesses"] is not None
    assert a["histogram"] == b["histogram"]


def test_jar_changes_the_sharma_mittal_strategy() -> None:
    """With 3 pegs and the jar 10, 6, 4, 2 the entropy strategy does better than ignoring it."""
    jar = row(pegs=3, jar=[10, 6, 4, 2], strategy="sharma_mittal")
    flat = M.guesses_per_code(3, 4, None, "sharma_mittal")[0]
    w = R.code_weights(3, 4, [10, 6, 4, 2])
    assert jar["colours"] == 4
    assert Fraction(jar["expected_guesses_exact"]) <= M.expected_guesses(flat, w)


def test_rows_have_exactly_the_declared_columns() -> None:
    out = row(pegs=2, colours=2, strategy="most_parts")
    assert set(out) >= set(MT.SOLVER.columns)
    assert out["entropy_r"] is None and out["strategy"] == "most_parts"


# ------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("task", "key"),
    [
        ({"pegs": 0}, "pegs"),
        ({"pegs": 2.5}, "pegs"),
        ({"colours": 1}, "colours"),
        ({"colours": 0}, "colours"),
        ({"pegs": 5, "colours": 6}, "pegs"),  # 7776 codes > 4096
        ({"pegs": 4, "colours": 6, "max_codes": 10**6}, "max_codes"),
        ({"jar": [1, -1, 2], "colours": 3}, "jar"),
        ({"jar": [0, 0, 0], "colours": 3}, "jar"),
        ({"jar": [1, 0, 2], "colours": 3}, "jar"),
        ({"jar": [1, 2], "colours": 3}, "jar"),
        ({"jar": ["x", 1]}, "jar"),
        ({"jar": []}, "jar"),
        ({"strategy": "sharma_mittal", "entropy_r": -1}, "entropy_r"),
        ({"strategy": "sharma_mittal", "entropy_r": math.nan}, "entropy_r"),
        ({"strategy": "sharma_mittal", "entropy_t": -0.5}, "entropy_t"),
        ({"strategy": "sharma_mittal", "entropy_t": math.inf}, "entropy_t"),
        ({"strategy": "minimax", "entropy_r": 2}, "entropy_r"),
        ({"strategy": "knuth"}, "strategy"),
    ],
)
def test_bad_input_names_the_key(task, key) -> None:
    with pytest.raises(TaskError) as err:
        validate({"family": "mastermind", **task})
    assert err.value.key == key


def test_too_large_names_the_size_and_the_limit() -> None:
    with pytest.raises(TaskError, match="7,776 codes.*max_codes=4,096"):
        validate({"family": "mastermind", "pegs": 5, "colours": 6})


def test_canonical_task_fills_colours_and_keeps_infinity() -> None:
    task = validate(
        {"family": "mastermind", "pegs": 3, "jar": "10,6,4,2", "strategy": "sharma_mittal"}
    )
    assert task["colours"] == 4 and task["jar"] == [10, 6, 4, 2]
    task = validate({"family": "mastermind", "strategy": "sharma_mittal", "entropy_r": "inf"})
    assert task["entropy_r"] == math.inf and task["colours"] == 6
    assert MR.check_jar(["1/2", 0.25]) == ["1/2", "1/4"]


def test_feedback_table_is_cached_and_read_only() -> None:
    assert R.feedback_table(3, 3) is R.feedback_table(3, 3)
    assert not R.feedback_table(3, 3).flags.writeable
    assert R.feedback_table(3, 3).dtype == np.uint8


@pytest.mark.parametrize(("r", "t"), [(1.0, 1.0), (0.5, 3.0), (math.inf, 2.0), (0.0, 0.0)])
def test_uniform_lookup_scores_equal_the_general_grouped_scores(r, t) -> None:
    table = R.feedback_table(3, 3)
    feasible = np.arange(0, 27, 2)
    labels = table[:, feasible]
    weights = np.full(len(feasible), 7.0)
    fast = M.query_scores(labels, weights, len(R.feedbacks(3)), "sharma_mittal", r, t)
    h, mass = E.sharma_mittal_grouped(weights, labels, len(R.feedbacks(3)), r, t)
    np.testing.assert_allclose(fast * 7.0, (mass * h).sum(axis=1), rtol=1e-12, atol=1e-12)


# ------------------------------------------------- identities between the strategies


def test_uniform_jar_only_the_degree_t_matters_and_meets_the_classics() -> None:
    """Uniform jar: every part is uniform, so H_{r,t} of a part is ln_t(size) for every r.

    t = 0 scores a part of n codes as n - 1 (expected_size), t = 2 as 1 - 1/n (most_parts).
    """

    def hist(strategy, r=1.0, t=1.0):
        return M.guesses_per_code(3, 4, None, strategy, r, t)[0].tolist()

    for t in (0.0, 0.5, 1.0, 2.0, 5.0):
        base = hist("sharma_mittal", 1.0, t)
        for r in (0.0, 0.5, 3.0, math.inf):
            assert hist("sharma_mittal", r, t) == base
    assert hist("sharma_mittal", 1.0, 0.0) == hist("expected_size")
    assert hist("sharma_mittal", 1.0, 2.0) == hist("most_parts")


def test_origin_entropy_is_expected_size_for_any_jar() -> None:
    """(r, t) = (0, 0) scores a part by its number of codes minus one, whatever the jar."""
    jar = [10, 6, 4, 2]
    a = M.guesses_per_code(3, 4, jar, "sharma_mittal", 0.0, 0.0)[0]
    b = M.guesses_per_code(3, 4, jar, "expected_size")[0]
    assert a.tolist() == b.tolist()
