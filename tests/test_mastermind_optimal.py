"""Tests of the optimal Mastermind strategy (least expected number of guesses).

References: Koyama & Lai (1993), *An optimal Mastermind strategy* (4 pegs, 6 colours: 5625
guesses over the 1296 codes, 5626 when no game may take a sixth guess); Hofer & Nelson (2016),
*Sharma-Mittal Generalized Entropy and "Code Jar" Mastermind* (the jar's code distribution).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from solvers import TaskError, solve, validate
from solvers.kit.summary_parts import saved_check
from solvers.mastermind import codes as R
from solvers.mastermind.optimal.bounds import INF
from solvers.mastermind.optimal.optimum import Searcher, optimum, subtree_optimum
from solvers.mastermind.optimal.symmetries import Symmetries
from solvers.task_ids import identity_params, seed_id, task_id
from tests.helpers.mastermind_brute_force import brute_force_cost


def row(**task):
    return solve({"family": "mastermind", "strategy": "optimal", **task})[0]


# ------------------------------------------------------- branch and bound vs brute force

JARS = {
    2: [None, [3, 1], [2, 5]],
    3: [None, [3, 1, 1], [10, 6, 4]],
    4: [None, [5, 1, 1, 1], [10, 6, 4, 2]],
}
QUICK = [(2, 3), (3, 3), (2, 4)]


@pytest.mark.parametrize(("pegs", "colours"), QUICK)
@pytest.mark.parametrize("which", [0, 1, 2], ids=["uniform", "jar1", "jar2"])
def test_branch_and_bound_equals_brute_force(pegs, colours, which) -> None:
    jar = JARS[colours][which]
    assert optimum(pegs, colours, jar).total == brute_force_cost(pegs, colours, jar)


@pytest.mark.slow
@pytest.mark.parametrize("which", [0, 1, 2], ids=["uniform", "jar1", "jar2"])
def test_branch_and_bound_equals_brute_force_3x4(which) -> None:
    jar = JARS[4][which]
    assert optimum(3, 4, jar).total == brute_force_cost(3, 4, jar)


@pytest.mark.parametrize(
    ("pegs", "colours", "jar"), [(3, 3, None), (2, 4, None), (3, 3, [10, 6, 4])]
)
def test_guess_limit_equals_brute_force(pegs, colours, jar) -> None:
    free = optimum(pegs, colours, jar)
    top = int(free.guesses.max())
    for limit in range(top - 1, top + 2):
        want = brute_force_cost(pegs, colours, jar, limit)
        if want >= INF:
            with pytest.raises(ValueError, match="within"):
                optimum(pegs, colours, jar, limit)
        else:
            got = optimum(pegs, colours, jar, limit)
            assert got.total == want and got.guesses.max() <= limit
    assert brute_force_cost(pegs, colours, jar, top - 1) >= free.total


def test_the_strategy_replays_to_its_total_and_plays_every_code_once() -> None:
    opt = optimum(3, 4, [10, 6, 4, 2])
    weights = np.array(R.code_weights(3, 4, [10, 6, 4, 2]))
    assert sorted(opt.codes.tolist()) == list(range(64))
    assert int((weights[opt.codes] * opt.guesses).sum()) == opt.total
    assert opt.expected == Fraction(opt.total, 22**3)


def test_optimum_is_at_most_every_heuristic() -> None:
    for jar in (None, [10, 6, 4, 2]):
        best = optimum(3, 4, jar).expected
        for strategy in ("minimax", "expected_size", "most_parts", "first_feasible"):
            h = solve(
                {"family": "mastermind", "pegs": 3, "colours": 4, "jar": jar, "strategy": strategy}
            )
            assert best <= Fraction(h[0]["expected_guesses_exact"])


# ------------------------------------------------------------- symmetries and subtrees


def test_symmetry_classes_of_first_guesses() -> None:
    """4 pegs, 6 colours: five first guesses up to symmetry (1111, 1112, 1122, 1123, 1234)."""
    sym = Symmetries(4, 6, [1] * 6)
    labels = [R.code_label(q, 4, 6) for q in sym.representatives()]
    assert labels == ["1111", "1112", "1122", "1123", "1234"]
    # a jar keeps only the exchanges of equally weighted colours: 2 pegs, jar 2,1,1 (brute force)
    maps = [
        lambda x, y: (x, y),
        lambda x, y: (y, x),
        lambda x, y: ({0: 0, 1: 2, 2: 1}[x], {0: 0, 1: 2, 2: 1}[y]),
        lambda x, y: ({0: 0, 1: 2, 2: 1}[y], {0: 0, 1: 2, 2: 1}[x]),
    ]
    orbits = {frozenset(f(x, y) for f in maps) for x, y in itertools.product(range(3), repeat=2)}
    reps = sorted(min(o) for o in orbits)
    got = [divmod(int(q), 3) for q in Symmetries(2, 3, [2, 1, 1]).representatives()]
    assert got == reps


def test_stabilizer_fixes_the_guess_and_keeps_the_candidate_sets() -> None:
    sym = Symmetries(4, 6, [1] * 6)
    table = R.feedback_table(4, 6)
    q = int("0012", 6)  # 1123
    perms = sym.stabilizer([q])
    assert len(perms) == 2 * 2 * 6  # swap the 1s; swap 2 and 3 with their places; 4, 5, 6
    assert np.all(perms[:, q] == q)
    for p in perms[:20]:
        assert np.array_equal(table[q, p], table[q])  # every answer's set maps onto itself


def test_subtrees_add_up_to_the_first_guess_total_and_the_optimum() -> None:
    search = Searcher(3, 4, [10, 6, 4, 2], None)
    best = min(search.first_guess_total(int(q)) for q in search.symmetries.representatives())
    assert best == optimum(3, 4, [10, 6, 4, 2]).total
    q = int(search.symmetries.representatives()[-1])
    parts = [
        subtree_optimum(3, 4, [10, 6, 4, 2], None, q, a).total
        for a in range(9)
        if (R.feedback_table(3, 4)[q] == a).any()
    ]
    assert sum(parts) == search.first_guess_total(q)


def test_family_rows_of_subtrees_add_up_to_the_whole_game() -> None:
    whole = row(pegs=3, colours=4, subtree="123")
    table = R.feedback_table(3, 4)
    q = int("012", 4)
    answers = [R.feedbacks(3)[a] for a in np.unique(table[q])]
    parts = [row(pegs=3, colours=4, subtree=f"123:{b},{w}") for b, w in answers]
    assert sum(p["total_guesses"] for p in parts) == whole["total_guesses"]
    mean = sum(
        Fraction(p["subtree_mass_exact"]) * Fraction(p["expected_guesses_exact"]) for p in parts
    )
    assert mean == Fraction(whole["expected_guesses_exact"])
    assert sum(Fraction(p["subtree_mass_exact"]) for p in parts) == 1


# ------------------------------------------------------------------ published figures


@pytest.mark.slow
def test_koyama_lai_1993_standard_mastermind_optimum() -> None:
    """Koyama & Lai (1993), *An optimal Mastermind strategy*: 4 pegs, 6 colours, 5625 guesses
    over the 1296 codes (4.3403 on average), first guess 1123; 5626 if at most 5 guesses."""
    out = row(pegs=4, colours=6)
    assert out["total_guesses"] == 5625
    assert out["expected_guesses_exact"] == str(Fraction(5625, 1296))
    assert sum(out["histogram"]) == 1296 and out["max_guesses"] == 6
    assert out["first_guess"] == "1123"
    five = row(pegs=4, colours=6, guess_limit=5)
    assert five["total_guesses"] == 5626 and five["max_guesses"] == 5


# ------------------------------------------------------------------------ the family


def test_existing_task_ids_do_not_change() -> None:
    """The new parameters are left out of the ids of the other strategies: a task's hash at
    version 1 (its seed) is its id before strategy optimal existed."""
    task = validate({"family": "mastermind", "pegs": 2, "colours": 3, "strategy": "minimax"})
    assert not {"guess_limit", "subtree", "max_search_codes"} & set(identity_params(task))
    assert seed_id(task) == "8b5c3b03ff67d176d68d"  # the id before strategy optimal existed
    opt = validate({"family": "mastermind", "pegs": 2, "colours": 3, "strategy": "optimal"})
    limited = validate({**opt, "guess_limit": 3})
    assert task_id(opt) != task_id(limited)
    assert task_id(opt) == task_id(validate({**opt, "max_search_codes": 99}))


def test_uniform_rows_have_totals_and_jar_rows_do_not() -> None:
    uniform = row(pegs=2, colours=4)
    assert uniform["total_guesses"] == brute_force_cost(2, 4)
    assert uniform["n_codes"] == 16 and sum(uniform["histogram"]) == 16
    assert abs(sum(uniform["guess_pmf"]) - 1) < 1e-12
    jar = row(pegs=2, colours=4, jar=[3, 1, 1, 2])
    assert jar["total_guesses"] is None
    assert Fraction(jar["expected_guesses_exact"]) == Fraction(
        brute_force_cost(2, 4, [3, 1, 1, 2]), 49
    )


@pytest.mark.parametrize(
    ("task", "key", "text"),
    [
        ({"pegs": 4, "colours": 7}, "pegs", "2,401 candidate codes"),
        ({"pegs": 5, "colours": 5}, "pegs", "max_search_codes=1,296"),
        (
            {"pegs": 4, "colours": 7, "subtree": "1234:0,2", "max_search_codes": 500},
            "subtree",
            "582 candidate codes",
        ),
        ({"pegs": 3, "colours": 4, "subtree": "12"}, "subtree", "3 colours"),
        ({"pegs": 3, "colours": 4, "subtree": "129"}, "subtree", "1..4"),
        ({"pegs": 3, "colours": 4, "subtree": "123:2,1"}, "subtree", "no answer"),
        ({"pegs": 3, "colours": 4, "subtree": "1x3"}, "subtree", "first guess"),
        ({"pegs": 3, "colours": 4, "subtree": "111:0,1"}, "subtree", "no code gives"),
        ({"pegs": 3, "colours": 4, "subtree": "123:1"}, "subtree", "b,w"),
        ({"pegs": 3, "colours": 4, "guess_limit": 0}, "guess_limit", "an integer of at least 1"),
        (
            {"pegs": 3, "colours": 4, "strategy": "minimax", "guess_limit": 3},
            "guess_limit",
            "optimal",
        ),
    ],
)
def test_bad_input_is_refused_up_front_naming_the_key(task, key, text) -> None:
    with pytest.raises(TaskError) as err:
        validate({"family": "mastermind", "strategy": "optimal", **task})
    assert err.value.key == key
    assert text in str(err.value)


def test_a_raised_limit_admits_the_search() -> None:
    task = validate(
        {
            "family": "mastermind",
            "strategy": "optimal",
            "pegs": 4,
            "colours": 7,
            "max_search_codes": 2401,
        }
    )
    assert task["max_search_codes"] == 2401


def test_an_infeasible_guess_limit_is_an_error() -> None:
    with pytest.raises(ValueError, match="within 2 guesses"):
        row(pegs=2, colours=3, guess_limit=2)


# ---------------------------------------------------------------------------- summary


def test_summary_shows_heuristic_minus_optimum_and_adds_up_subtrees(tmp_path) -> None:
    import pandas as pd

    from solvers.registry import family_summary

    rows = []
    for jar in (None, [3, 1, 1]):
        game = {"family": "mastermind", "pegs": 3, "colours": 3, "jar": jar}
        for strategy in ("minimax", "expected_size", "most_parts", "first_feasible", "optimal"):
            rows += solve({**game, "strategy": strategy})
        for r, t in itertools.product([1.0, 2.0], [1.0, 2.0]):
            rows += solve({**game, "strategy": "sharma_mittal", "entropy_r": r, "entropy_t": t})
    table = R.feedback_table(3, 3)
    for q in Symmetries(3, 3, [1, 1, 1]).representatives():
        label = R.code_label(int(q), 3, 3)
        for a in np.unique(table[q]):
            b, w = R.feedbacks(3)[a]
            rows += solve(
                {
                    "family": "mastermind",
                    "pegs": 3,
                    "colours": 3,
                    "strategy": "optimal",
                    "subtree": f"{label}:{b},{w}",
                }
            )
    text = family_summary("mastermind")(pd.DataFrame(rows), tmp_path)
    assert "### Heuristic minus optimum" in text
    gaps = pd.read_parquet(tmp_path / "mastermind_gaps.parquet")
    assert len(gaps) == 2 and (gaps[["minimax", "best_sharma_mittal"]] >= 0).all().all()
    assert (tmp_path / "mastermind_gaps.png").stat().st_size > 0
    assert saved_check(tmp_path / "mastermind_gaps.png")[0] == "ok"
    whole = optimum(3, 3)
    assert f"Optimum (all 3 first-guess classes complete): {float(whole.expected):.6f}" in text
    totals = pd.read_parquet(tmp_path / "mastermind_subtree_totals.parquet")
    assert totals["total_guesses"].min() == whole.total == brute_force_cost(3, 3)


def test_the_4x7_study_covers_every_first_guess_class_and_answer_once() -> None:
    """Study mastermind_4x7 proves the optimum (Ville (2013), *An optimal mastermind (4,7)
    strategy and more results in the expected case*: 4.676) only if its subtrees are every
    (first-guess class, possible answer) pair, each once."""
    import yaml

    from tests.helpers.repository import ROOT

    study = yaml.safe_load((ROOT / "conf/study/mastermind_4x7.yaml").read_text())
    listed = study["strategies"]["optimal"]["subtree"]
    table = R.feedback_table(4, 7)
    wanted = [
        f"{R.code_label(int(q), 4, 7)}:{b},{w}"
        for q in Symmetries(4, 7, [1] * 7).representatives()
        for b, w in (R.feedbacks(4)[a] for a in np.unique(table[q]))
    ]
    assert sorted(listed) == sorted(wanted) and len(set(listed)) == len(listed)
