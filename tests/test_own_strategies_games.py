"""Strategies of one's own for high_low, mastermind and hand_guessing (solvers/<game>/own.py):
a built-in rule rewritten as one's own gives the built-in's exact values, brute force over
every deal agrees, Monte Carlo agrees within 3 standard errors, bad moves are error rows
naming the strategy, the move and the value, and a study naming one is run and summarised.
"""

from __future__ import annotations

import itertools
import re
import textwrap
from fractions import Fraction

import pytest

from pipeline.storage.store import load_results
from solvers import solve
from solvers.own_strategy import StrategyError
from tests.helpers.commands import cli_run_in_process

STRATEGIES = '''
import itertools


class Majority:
    """high_low: the majority rule, from the cards left of each rank ("higher" on a tie)."""

    def start(self, ranks, suits):
        return (suits,) * ranks

    def update(self, left, card):
        return left[: card - 1] + (left[card - 1] - 1,) + left[card:]

    def call(self, left, card):
        return "higher" if sum(left[card:]) >= sum(left[: card - 1]) else "lower"


class Middle:
    """high_low: "higher" below the middle rank, "lower" above, on a tie "higher" after an
    even number of cards seen (what it keeps: the cards seen)."""

    def __init__(self, flip=True):
        self.flip = flip

    def start(self, ranks, suits):
        return ranks, 0

    def update(self, belief, card):
        return belief[0], belief[1] + 1

    def call(self, belief, card):
        ranks, seen = belief
        if 2 * card == ranks + 1:
            return "higher" if seen % 2 == 0 or not self.flip else "lower"
        return "higher" if 2 * card < ranks + 1 else "lower"


class Remembers(Majority):
    """The majority rule, keeping every card seen in order (beliefs multiply the states)."""

    def start(self, ranks, suits):
        return (suits,) * ranks, ()

    def update(self, belief, card):
        return super().update(belief[0], card), belief[1] + (card,)

    def call(self, belief, card):
        return super().call(belief[0], card)


class SaysUp(Majority):
    def call(self, left, card):
        return "up"


class RaisesAtThree(Majority):
    def call(self, left, card):
        if card == 3:
            raise KeyError("no three")
        return super().call(left, card)


class ListBelief(Majority):
    def update(self, left, card):
        return list(super().update(left, card))


def mastermind_feedback(guess, secret):
    black = sum(g == s for g, s in zip(guess, secret))
    common = sum(min(guess.count(c), secret.count(c)) for c in set(guess))
    return black, common - black


class FirstFeasible:
    """mastermind: the lowest code still feasible (what it keeps: the feasible codes)."""

    def start(self, pegs, colours):
        return tuple(itertools.product(range(colours), repeat=pegs))

    def guess(self, feasible):
        return feasible[0]

    def update(self, feasible, guess, feedback):
        return tuple(c for c in feasible if mastermind_feedback(guess, c) == feedback)


class Minimax(FirstFeasible):
    """mastermind: Knuth's minimax over every code, as the family breaks ties (a code that
    neither splits nor can win is never chosen; ties to a feasible code, then the lowest)."""

    def start(self, pegs, colours):
        return super().start(pegs, colours), tuple(itertools.product(range(colours), repeat=pegs))

    def guess(self, belief):
        feasible, codes = belief
        if len(feasible) == 1:
            return feasible[0]
        best = None
        for code in codes:
            parts = {}
            for c in feasible:
                fb = mastermind_feedback(code, c)
                parts[fb] = parts.get(fb, 0) + 1
            if len(parts) == 1 and code not in feasible:
                continue
            key = (max(parts.values()), code not in feasible, code)
            best = key if best is None or key < best else best
        return best[2]

    def update(self, belief, guess, feedback):
        return super().update(belief[0], guess, feedback), belief[1]


class Stubborn(FirstFeasible):
    """Guesses 0, 0, ... forever, counting its guesses (the belief changes)."""

    def start(self, pegs, colours):
        return 0

    def guess(self, belief):
        return (0, 0)

    def update(self, belief, guess, feedback):
        return belief + 1


class Repeats(FirstFeasible):
    """Forgets every answer: guesses the lowest code forever."""

    def update(self, feasible, guess, feedback):
        return feasible


class BadCode(FirstFeasible):
    def guess(self, feasible):
        return (0, 3)


class BadUpdate(FirstFeasible):
    def update(self, feasible, guess, feedback):
        if feedback == (0, 0):
            raise ValueError("nothing in common")
        return super().update(feasible, guess, feedback)


class SetBelief(FirstFeasible):
    def update(self, feasible, guess, feedback):
        return set(super().update(feasible, guess, feedback))


class MinExpectedSize:
    """hand_guessing: the candidate with the least sum of squared group sizes, ties to the
    lowest hand (or, with lowest=False, the highest)."""

    def __init__(self, lowest=True):
        self.lowest = lowest

    def start(self, cards, ranks, suits):
        from solvers.hand_guessing.cards import Deck

        deck = Deck(ranks, suits)
        return deck, tuple(itertools.combinations(range(deck.size), cards))

    def guess(self, belief):
        from collections import Counter

        from solvers.hand_guessing.cards import feedback

        deck, candidates = belief
        scored = []
        for hand in candidates:
            parts = Counter(feedback(deck, hand, answer) for answer in candidates)
            scored.append((sum(v * v for v in parts.values()), hand))
        low = min(score for score, _ in scored)
        tied = [hand for score, hand in scored if score == low]
        return tied[0] if self.lowest or len(candidates) <= 2 else tied[-1]

    def update(self, belief, guess, answer):
        from solvers.hand_guessing.cards import feedback

        deck, candidates = belief
        return deck, tuple(h for h in candidates if feedback(deck, guess, h) == answer)


class TooMany(MinExpectedSize):
    def guess(self, belief):
        return belief[1][0] + (7,)


class Twice(MinExpectedSize):
    def guess(self, belief):
        return [1, 1]


class Lost(MinExpectedSize):
    def update(self, belief, guess, answer):
        raise RuntimeError(f"lost at {answer}")


class Stuck(MinExpectedSize):
    def update(self, belief, guess, answer):
        return belief


class SameHand(MinExpectedSize):
    """Guesses the two lowest cards forever, counting its guesses (the belief changes)."""

    def start(self, cards, ranks, suits):
        return 0

    def guess(self, belief):
        return {0, 1}

    def update(self, belief, guess, answer):
        return belief + 1
'''


@pytest.fixture
def lab(tmp_path, monkeypatch):
    """A user's folder: a module of strategies (a name of its own, the same in every
    session: the Monte Carlo seeds, from the task ids, do not change) on sys.path, and a
    studies folder."""
    name = "games_" + re.sub(r"\W", "_", tmp_path.name)
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(STRATEGIES))
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "studies" / "study").mkdir(parents=True)
    return tmp_path, name


def own(family: str, module: str, cls: str, **params) -> dict:
    """A task of ``family`` running the strategy of one's own ``module.cls``, named ``mine``."""
    task = {"family": family, "strategy": "mine", "strategy_target": f"{module}.{cls}"}
    args = params.pop("args", {})
    return {**task, **params, "strategy_params": args}


def run_study(monkeypatch, capsys, folder, family: str, body: str):
    """A study ``lab`` of ``family`` (``body``: its grid(s) and strategies) run in this
    process; (completed process, its rows, its summary.md text)."""
    text = f"name: lab\nfamily: {family}\n{textwrap.dedent(body)}"
    (folder / "studies" / "study" / "lab.yaml").write_text(text)
    outputs = folder / "out"
    done = cli_run_in_process(
        monkeypatch, capsys, "--config-dir", str(folder / "studies"), "study=lab",
        f"paths.outputs={outputs}", "cluster=sync", "run.progress=false",
    )  # fmt: skip
    rows = load_results(outputs / "lab" / "results")
    summary = outputs / "lab" / "summary.md"
    return done, rows, summary.read_text() if summary.exists() else None


# ---------------------------------------------------------------------------- high_low

DECKS = [
    {"n": 6},
    {"ranks": 3, "suits": 2, "ties": "lose"},
    {"ranks": 3, "suits": 2, "ties": "win"},
    {"ranks": 2, "suits": 3, "ties": "push"},
]


@pytest.mark.parametrize("deck", DECKS)
def test_high_low_majority_as_one_s_own_gives_the_builtin_values(lab, deck):
    """The majority rule written as one's own: the built-in's P(perfect game) exactly, and
    its expected right calls (the majority call is the likelier side: the best possible)."""
    _, module = lab
    mine = solve(own("high_low", module, "Majority", **deck))[0]
    theirs = solve({"family": "high_low", "strategy": "majority", **deck})[0]
    assert mine["p_perfect_exact"] == theirs["p_perfect_exact"]
    assert mine["expected_correct_exact"] == theirs["expected_correct_exact"]
    assert mine["strategy"] == "mine" and mine["method"] == "exact"


def high_low_brute_force(ranks, suits, ties, strategy) -> tuple[Fraction, Fraction]:
    """(P(no miss), expected right calls) of a strategy instance over every order of the
    labelled cards, played by the protocol's flow."""
    perfect = right = count = 0
    for order in itertools.permutations([r for r in range(1, ranks + 1) for _ in range(suits)]):
        belief = strategy.update(strategy.start(ranks, suits), order[0])
        ok = True
        for showing, card in itertools.pairwise(order):
            higher = strategy.call(belief, showing) == "higher"
            if card == showing:
                right += ties == "win"
                ok &= ties != "lose"
            else:
                right += (card > showing) == higher
                ok &= (card > showing) == higher
            belief = strategy.update(belief, card)
        perfect += ok
        count += 1
    return Fraction(perfect, count), Fraction(right, count)


@pytest.mark.parametrize("deck", [(5, 1, "lose"), (3, 2, "lose"), (3, 2, "win"), (3, 2, "push")])
def test_high_low_exact_is_brute_force_over_every_order(lab, deck):
    """A strategy whose belief is not the counts (the cards seen): the exact rationals are
    those of brute force over every order of the labelled cards, under each ties rule."""
    _, module = lab
    ranks, suits, ties = deck
    cards = {"n": ranks} if suits == 1 else {"ranks": ranks, "suits": suits, "ties": ties}
    row = solve(own("high_low", module, "Middle", **cards))[0]
    strategy = __import__(module).Middle()
    p, right = high_low_brute_force(ranks, suits, ties, strategy)
    assert Fraction(row["p_perfect_exact"]) == p
    assert Fraction(row["expected_correct_exact"]) == right


def test_high_low_monte_carlo_agrees_within_3_standard_errors(lab):
    """Seeded Monte Carlo of a strategy of one's own: P(perfect game) and the expected right
    calls within 3 standard errors of the exact values; a second run gives the same row."""
    _, module = lab
    task = own("high_low", module, "Middle", ranks=3, suits=3, ties="push")
    exact = solve(task)[0]
    mc = {**task, "method": "monte_carlo", "n_games": 2000}
    row = solve(mc)[0]
    assert abs(row["p_perfect"] - exact["p_perfect"]) < 3 * row["p_perfect_se"]
    assert abs(row["expected_correct"] - exact["expected_correct"]) < 3 * row["expected_correct_se"]
    assert row["p_perfect_exact"] is None and row["expected_correct_exact"] is None
    assert solve(mc)[0]["p_perfect"] == row["p_perfect"]


def test_high_low_a_deck_too_large_for_the_exact_evaluation_is_refused(lab):
    """Before any work: the (counts, card showing) states past max_states; a belief that
    multiplies them stops the task while it runs."""
    from solvers import TaskError, validate

    _, module = lab
    with pytest.raises(TaskError, match="too large for the exact evaluation"):
        validate(own("high_low", module, "Majority", n=17))
    with pytest.raises(TaskError, match="runs exact or monte_carlo"):
        validate(own("high_low", module, "Majority", n=6, method="float"))
    with pytest.raises(StrategyError, match="passed max_states=100 .counts, card showing, belief"):
        solve(own("high_low", module, "Remembers", n=5, max_states=100))  # 80 states, 205 triples


HIGH_LOW_FAULTS = {
    "SaysUp": "call(belief=(0, 1, 1), card=1) at card 2 of 3 returned 'up': not 'higher' or "
    "'lower'",
    "RaisesAtThree": "call(belief=(0, 1, 0), card=3) at card 3 of 3 raised KeyError: 'no three'",
    "ListBelief": "update(belief=(1, 1, 1), card=1) at card 1 of 3 returned a belief that is not "
    "hashable (TypeError: unhashable type: 'list'): [0, 1, 1]",
}


def faulty_study(monkeypatch, capsys, folder, module, family, grid, builtin, faults):
    """A study of ``family`` with a built-in and one strategy of one's own per fault, run:
    exit 1, the built-in's row ok, each own strategy's row an error naming the strategy, the
    move and the value, and the summary written."""
    own_ones = "".join(f"  {cls.lower()}:\n    _target_: {module}.{cls}\n" for cls in faults)
    body = f"grid:\n{grid}strategies:\n  {builtin}: {{}}\n{own_ones}"
    done, rows, summary = run_study(monkeypatch, capsys, folder, family, body)
    assert done.returncode == 1, done.stdout + done.stderr
    rows = rows.set_index("strategy")
    assert rows.loc[builtin, "status"] == "ok"
    for cls, words in faults.items():
        error = rows.loc[cls.lower(), "error"]
        assert rows.loc[cls.lower(), "status"] == "error"
        assert f"strategy {cls.lower()!r} ({module}.{cls})" in error and words in error, error
    assert summary is not None


def test_high_low_a_bad_move_is_an_error_row_and_the_study_is_summarised(lab, monkeypatch, capsys):
    """A call that is not one of the two words, an exception in the user's code, a belief
    that is not hashable: that task's row is an error naming the strategy, the move and the
    value; the built-in's row is stored and the summary is written (exit 1)."""
    folder, module = lab
    grid = "  n: [3]\n"
    faulty_study(monkeypatch, capsys, folder, module, "high_low", grid, "optimal", HIGH_LOW_FAULTS)


def test_high_low_a_study_of_one_s_own_strategy_is_run_and_summarised(lab, monkeypatch, capsys):
    """Distinct cards and a real deck, exact and Monte Carlo, a grid over an argument, beside
    the built-ins: every row ok, and the summary names each own strategy (with its argument)
    and gives its values."""
    folder, module = lab
    done, rows, summary = run_study(monkeypatch, capsys, folder, "high_low", f"""\
        grids:
          - grid:
              n: [4, 5]
            strategies:
              optimal: {{}}
              majority: {{}}
              mine:
                _target_: {module}.Middle
                flip: [true, false]
          - grid:
              ranks: [3]
              suits: [2]
              ties: [lose, push]
            strategies:
              optimal: {{}}
              majority: {{}}
              mine:
                _target_: {module}.Middle
              mc:
                _target_: {module}.Majority
          - grid:
              ranks: [3]
              suits: [2]
              method: [monte_carlo]
              n_games: [200]
            strategies:
              majority: {{}}
              mc:
                _target_: {module}.Majority
    """)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert set(rows["status"]) == {"ok"} and len(rows) == 8 + 8 + 2
    assert summary is not None
    for name in ("mine (flip=true)", "mine (flip=false)", "| mine ", "| mc "):
        assert name in summary, (name, summary)
    mine = rows[(rows["strategy"] == "mine") & (rows["n"] == 5)]
    for value in mine["p_perfect_exact"]:  # each argument's own line, with its value
        assert f"| {value} " in summary, (value, summary)


# -------------------------------------------------------------------------- mastermind

GAMES = [{"pegs": 2, "colours": 3}, {"pegs": 3, "colours": 3}, {"pegs": 2, "jar": [1, 2, 3]}]


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize(("cls", "builtin"), [("FirstFeasible", "first_feasible"),
                                              ("Minimax", "minimax")])  # fmt: skip
def test_mastermind_a_builtin_as_one_s_own_gives_its_exact_values(lab, game, cls, builtin):
    """first_feasible and Knuth's minimax written as one's own: the built-ins' expected
    guesses (jar-weighted), histogram, first guess and the rest of their columns."""
    _, module = lab
    mine = solve(own("mastermind", module, cls, **game))[0]
    theirs = solve({"family": "mastermind", "strategy": builtin, **game})[0]
    columns = ["expected_guesses_exact", "total_guesses", "max_guesses", "histogram"]
    columns += ["guess_pmf", "first_guess", "n_codes", "tree_nodes"]
    for column in columns:
        assert mine[column] == theirs[column], column


@pytest.mark.parametrize("cls", ["FirstFeasible", "Minimax"])
def test_mastermind_exact_is_brute_force_over_every_secret(lab, cls):
    """On 2 pegs x 3 colours, each secret played through the protocol: the same mean and
    histogram of guesses."""
    _, module = lab
    row = solve(own("mastermind", module, cls, pegs=2, colours=3))[0]
    strategy = getattr(__import__(module), cls)()
    counts = []
    for secret in itertools.product(range(3), repeat=2):
        belief, n = strategy.start(2, 3), 0
        while True:
            guess = tuple(strategy.guess(belief))
            n += 1
            black = sum(g == s for g, s in zip(guess, secret, strict=True))
            common = sum(min(guess.count(c), secret.count(c)) for c in set(guess))
            if black == 2:
                break
            belief = strategy.update(belief, guess, (black, common - black))
        counts.append(n)
    assert Fraction(row["expected_guesses_exact"]) == Fraction(sum(counts), len(counts))
    assert row["histogram"] == [counts.count(k) for k in range(1, max(counts) + 1)]


MASTERMIND_FAULTS = {
    "Stubborn": "did not find the code (0, 1) within 9 guesses (one per code); its last "
    "guesses: (0, 0), (0, 0)",
    "Repeats": "repeats itself: guess(belief=((0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), "
    "(2, 0), (2, 1), (2, 2))) at guess 2 gave (0, 0), which splits none of the",
    "BadCode": "guess(belief=((0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (2, 0), (2, 1), "
    "(2, 2))) at guess 1 returned (0, 3): not a code of this game (2 pegs, colours 0 to 2)",
    "BadUpdate": "update(belief=((0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (2, 0), "
    "(2, 1), (2, 2)), guess=(0, 0), feedback=(0, 0)) at guess 1 raised ValueError: nothing in "
    "common",
}


def test_mastermind_a_bad_strategy_is_an_error_row_and_the_study_is_summarised(
    lab, monkeypatch, capsys
):
    """A strategy that never finds a code, a guess that is no code of the game, an exception
    in the user's code: that task's row is an error naming the strategy, the move and the
    value; the built-in's row is stored and the summary written (exit 1)."""
    folder, module = lab
    grid = "  pegs: [2]\n  colours: [3]\n"
    faulty_study(monkeypatch, capsys, folder, module, "mastermind", grid, "minimax",
                 MASTERMIND_FAULTS)  # fmt: skip


def test_mastermind_an_unhashable_belief_is_named(lab):
    """update returning a set: StrategyError naming the move and the value."""
    _, module = lab
    with pytest.raises(StrategyError, match=r"update\(belief=.* at guess 1 returned a belief that "
                       r"is not hashable \(TypeError: unhashable type: 'set'\)"):  # fmt: skip
        solve(own("mastermind", module, "SetBelief", pegs=2, colours=2))


def test_mastermind_a_study_of_one_s_own_strategy_is_run_and_summarised(lab, monkeypatch, capsys):
    """Own strategies beside the built-ins on uniform and jar games: every row ok, the
    summary written, naming them in each game's table and giving their gaps to the
    optimum."""
    folder, module = lab
    done, rows, summary = run_study(monkeypatch, capsys, folder, "mastermind", f"""\
        grid:
          pegs: [2]
          jar: [null, [1, 2, 3]]
        strategies:
          optimal: {{}}
          minimax: {{}}
          sharma_mittal: {{}}
          knuth:
            _target_: {module}.Minimax
          first:
            _target_: {module}.FirstFeasible
    """)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert set(rows["status"]) == {"ok"} and len(rows) == 10
    assert summary is not None
    gaps = summary[summary.index("### Heuristic minus optimum") :]
    assert "| knuth " in summary and "| first " in summary
    assert "knuth" in gaps and "first" in gaps  # each one's gap to the optimum, per game


# ----------------------------------------------------------------------- hand_guessing

HANDS = [
    {"cards": 1, "ranks": 4, "suits": 2},
    {"cards": 2, "ranks": 4, "suits": 2},
    {"cards": 2, "ranks": 3, "suits": 3, "n_chunks": 3, "answer_chunk": 1},
]


@pytest.mark.parametrize("game", HANDS)
def test_hand_guessing_min_expected_size_as_one_s_own_gives_its_values(lab, game):
    """The built-in min_expected_size (first guess searched) written as one's own: the same
    average over every answer (or one chunk), histogram, first guess and tree."""
    _, module = lab
    mine = solve(own("hand_guessing", module, "MinExpectedSize", **game))[0]
    theirs = solve({"family": "hand_guessing", "strategy": "min_expected_size", **game})[0]
    columns = ["average_guesses_exact", "total_guesses", "max_guesses", "histogram"]
    columns += ["first_guess", "answers", "total_answers", "tree_nodes"]
    for column in columns:
        assert mine[column] == theirs[column], column
    assert mine["first_guess_searched"] is None and mine["first_guess"] is not None


def test_hand_guessing_a_sample_of_answers_gives_a_mean_and_its_standard_error(lab):
    """``sample``: that many answers drawn from the task's seed, the mean and its standard
    error (finite population), no exact value; the same row on a second run."""
    _, module = lab
    task = own("hand_guessing", module, "MinExpectedSize", cards=2, ranks=4, suits=2, sample=9)
    row = solve(task)[0]
    exact = solve({**task, "sample": None})[0]
    assert row["answers"] == 9 and row["average_guesses_exact"] is None
    assert row["standard_error"] > 0
    assert abs(row["average_guesses"] - exact["average_guesses"]) < 4 * row["standard_error"]
    assert solve(task)[0]["average_guesses"] == row["average_guesses"]


HAND_FAULTS = {
    "TooMany": "guess(belief=(Deck(ranks=3, suits=2), ((0, 1), (0, 2), (0, 3), (0, 4), (0, 5), "
    "(1, 2), (1, 3), (1, 4), (1, 5), (2, 3), (2, 4), (2, 5), (3, 4), (3, 5), (4, 5)))) at "
    "guess 1 returned (0, 1, 7): not a hand of this game (2 distinct cards numbered 0 to 5)",
    "Twice": "returned [1, 1]: not a hand of this game",
    "Lost": ", guess=(0, 2), feedback=(0, 0, 0, 2, 1)) at guess 1 raised RuntimeError: lost at "
    "(0, 0, 0, 2, 1)",
    "Stuck": "at guess 2 gave (0, 2), which splits none of the",
    "SameHand": "did not find the hand (0, 3) within 15 guesses (one per hand); its last "
    "guesses: (0, 1), (0, 1), (0, 1), (0, 1), (0, 1)",
}


def test_hand_guessing_a_bad_strategy_is_an_error_row_and_the_study_is_summarised(
    lab, monkeypatch, capsys
):
    """A guess of the wrong size or with a card twice, an exception in the user's code, a
    strategy that never finds the hand: error rows naming the strategy, the move and the
    value; the built-in's row is stored and the summary written (exit 1)."""
    folder, module = lab
    grid = "  cards: [2]\n  ranks: [3]\n  suits: [2]\n"
    faulty_study(monkeypatch, capsys, folder, module, "hand_guessing", grid,
                 "min_expected_size", HAND_FAULTS)  # fmt: skip


def test_hand_guessing_a_study_over_an_own_argument_is_summarised_line_by_line(
    lab, monkeypatch, capsys
):
    """A grid over an own strategy's argument, beside the built-ins, one game in chunks:
    every row ok, and the summary gives one line per argument value (its chunks added up),
    labelled with it, with the built-in's value for the same game."""
    folder, module = lab
    done, rows, summary = run_study(monkeypatch, capsys, folder, "hand_guessing", f"""\
        grid:
          cards: [2]
          ranks: [4]
          suits: [2]
          n_chunks: [2]
          answer_chunk: [0, 1]
        strategies:
          min_expected_size: {{}}
          mine:
            _target_: {module}.MinExpectedSize
            lowest: [true, false]
    """)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert set(rows["status"]) == {"ok"} and len(rows) == 6
    builtin = solve({"family": "hand_guessing", "strategy": "min_expected_size", "cards": 2,
                     "ranks": 4, "suits": 2})[0]["average_guesses_exact"]  # fmt: skip
    lines = [line for line in summary.splitlines() if line.startswith("|") and "exact" in line]
    mine = [line for line in lines if "mine (lowest=" in line]
    assert len(mine) == 2 and all("2/2" in line for line in mine), summary
    assert any(builtin in line for line in mine), (builtin, summary)


# --------------------------------------------------------------- a long strategy name

LONG_NAME = "s" * 64  # the longest name a strategy of one's own may have
LONG_NAME_STUDIES = {
    "card_guessing": ("grid:\n  deck: [[3, 3]]\n", "optimal", "card_guessing.SwitchAfterNo"),
    "high_low": ("grid:\n  n: [4]\n", "majority", "Majority"),
    "mastermind": ("grid:\n  pegs: [2]\n  colours: [3]\n", "minimax", "Minimax"),
    "hand_guessing": (
        "grid:\n  cards: [1]\n  ranks: [4]\n  suits: [2]\n",
        "min_expected_size",
        "MinExpectedSize",
    ),
}


@pytest.mark.parametrize("family", LONG_NAME_STUDIES)
def test_a_strategy_named_with_64_characters_is_summarised_without_a_warning(
    lab, monkeypatch, capsys, family
):
    """A strategy of one's own named with the longest name there may be, beside a built-in:
    the summary's figures are laid out (its name wrapped), no matplotlib warning reaches
    the user."""
    import warnings

    from tests.test_own_strategies import STRATEGIES as CARD_STRATEGIES

    folder, module = lab
    grid, builtin, cls = LONG_NAME_STUDIES[family]
    if family == "card_guessing":
        (folder / f"{module}_cards.py").write_text(textwrap.dedent(CARD_STRATEGIES))
        cls = f"{module}_cards.SwitchAfterNo"
    else:
        cls = f"{module}.{cls}"
    body = f"{grid}strategies:\n  {builtin}: {{}}\n  {LONG_NAME}:\n    _target_: {cls}\n"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        done, rows, summary = run_study(monkeypatch, capsys, folder, family, body)
    assert done.returncode == 0, done.stdout + done.stderr
    assert set(rows["status"]) == {"ok"} and LONG_NAME in set(rows["strategy"])
    assert summary is not None and LONG_NAME in summary
    shown = [f"{w.category.__name__}: {w.message}" for w in caught]
    assert not [w for w in shown if "matplotlib" in w or "layout" in w.lower()], shown
    assert "Warning" not in done.stderr, done.stderr


# ------------------------------------------------------------------------ the door


@pytest.mark.parametrize(("family", "cls", "task", "words"), [
    ("high_low", "FirstFeasible", {"n": 4},
     "lacks call(); a high_low strategy has start(), update(), call()"),
    ("mastermind", "Majority", {"pegs": 2, "colours": 3},
     "lacks guess(); a mastermind strategy has start(), guess(), update()"),
    ("hand_guessing", "Majority", {"cards": 1, "ranks": 4, "suits": 2},
     "lacks guess(); a hand_guessing strategy has start(), guess(), update()"),
    ("hand_guessing", "MinExpectedSize", {"cards": 1, "first_guess": ["2C"]},
     "first_guess=['2C']: does not apply to strategies of one's own"),
])  # fmt: skip
def test_a_class_without_the_game_s_protocol_is_refused_before_any_work(
    lab, family, cls, task, words
):
    """A class lacking a method of the game's protocol (another game's strategy), or a
    built-in's parameter given to one's own: refused by validate, naming why."""
    from solvers import TaskError, validate

    _, module = lab
    with pytest.raises(TaskError, match=re.escape(words)):
        validate(own(family, module, cls, **task))
