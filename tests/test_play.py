"""The terminal game ``python -m solvers.card_guessing.play`` (Gural, Simper & So 2019).

Pure rendering and parsing functions are tested directly; whole games are driven as a person
would, through a pseudo-terminal (pexpect) and through a pipe (plain text).
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
from collections import Counter
from fractions import Fraction
from io import StringIO
from pathlib import Path

import numpy as np
import pytest

from solvers import solve
from solvers.card_guessing import play, play_screen
from solvers.card_guessing.exact import yes_no
from solvers.registry import TaskError, get_family, validate
from tests.helpers.own_strategy_source import SWITCH_AFTER_NO
from tests.helpers.repository import ROOT
from tests.helpers.terminal import interruptible

F = Fraction
JQK = ["J", "Q", "K"]


def state_after(deck, steps):
    """The (c, p) state after (guess, yes) steps from a fresh ``deck``."""
    state = yes_no.initial_state(deck)
    for guess, yes in steps:
        state = play.after(state, guess, yes)
    return state


# ------------------------------------------------------------------ published figures


def test_one_no_splits_the_belief_as_in_figure_4():
    """Gural, Simper & So (2019) section 7, Fig. 4: J right gives (2,3,3) for sure; then a wrong Q
    splits it
    into (1,3,3) (J was the card) and (2,3,2) (K was), (1,3,3) being the less likely."""
    assert play_screen.belief_bars(
        yes_no.composition_posterior(state_after((3, 3, 3), [(0, 1)]))
    ) == [("(2,3,3)", F(1), "top")]
    state = state_after((3, 3, 3), [(0, True), (1, False)])
    bars = play_screen.belief_bars(yes_no.composition_posterior(state))
    assert bars == [("(2,3,2)", F(3, 5), "top"), ("(1,3,3)", F(2, 5), "rest")]


def test_section_2_3_example_belief_chances_and_guess():
    """Gural, Simper & So (2019) section 2.3: on (3,3,3) after a yes, b no x3, b yes, b yes the
    remaining three
    cards are (0,1,2) 3/10, (1,1,1) 3/5, (2,1,0) 1/10; c is likeliest (2/5) yet the optimal
    guess is b (chance 1/3)."""
    a, b, c = 0, 1, 2
    steps = [(a, True), (b, False), (b, False), (b, False), (b, True), (b, True)]
    state = state_after((3, 3, 3), steps)
    lines = play_screen.belief_lines(state, JQK)
    assert lines[0] == "Computer's belief about the 3 cards still to come (J,Q,K):"
    assert [line.split()[0] for line in lines[1:]] == ["(1,1,1)", "(0,1,2)", "(2,1,0)"]
    assert [line.split()[-2:] for line in lines[1:]] == [
        ["60.0%", "3/5"],
        ["30.0%", "3/10"],
        ["10.0%", "1/10"],
    ]
    setup = play.make_setup((3, 3, 3), JQK, "optimal", {})
    probs, guess = play.computer_step(setup.computer(), state)
    assert probs[c] == F(2, 5) and probs[b] == F(1, 3) and guess == b
    note = " ".join(play_screen.guess_note(probs, JQK, guess, "optimal"))
    assert "K is likelier at 40.0%" in note and "naming Q scores more" in note


def test_final_screen_gives_the_exact_expectations():
    """Gural, Simper & So (2019): (3,3,3) optimal 2383/560, greedy (lowest tie-break)
    475/112."""
    setup = play.make_setup((3, 3, 3), JQK, "greedy", {})
    assert (setup.optimal, setup.own) == (F(2383, 560), F(475, 112))
    text = "\n".join(play_screen.expectation_lines(setup.deck, "greedy", setup.optimal, setup.own))
    assert text == (
        "On average the optimal strategy gets 4.255 of 9 right (exactly 2383/560).\n"
        "The greedy strategy gets 4.241 (exactly 475/112)."
    )


def test_every_yes_no_strategy_of_the_family_is_offered():
    """The game offers each strategy the family defines for yes/no feedback; ``sequence``
    (no feedback) is the one left out, and the family itself refuses it with yes/no."""
    family = list(get_family("card_guessing").rules.strategies)
    assert play.strategy_names() == [s for s in family if s != "sequence"]
    with pytest.raises(TaskError, match="only defined for feedback=none"):
        validate({"family": "card_guessing", "deck": [3, 3, 3], "strategy": "sequence"})
    for strategy in play.strategy_names():  # each sets up on the default deck
        setup = play.make_setup((3, 3, 3), JQK, strategy, {})
        assert setup.own is not None and setup.optimal == F(2383, 560)


def test_help_lists_the_playable_strategies_one_line_each(monkeypatch):
    """--help lists every playable strategy and a class of one's own, one line each, in 80
    columns."""
    monkeypatch.setenv("COLUMNS", "80")
    text = play.parser().format_help()
    listed = text[text.index("strategies (--strategy):") :].splitlines()[1:]
    assert [line.split()[0] for line in listed] == [*play.strategy_names(), "module.Class"]
    assert all(len(line.split()) > 3 for line in listed)  # a description on the same line
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "sequence" not in text and "PLAYERS" not in text
    for option in ("--gamma G", "--entropy NAME|R,T", "--decrement D"):
        assert option in text


# ------------------------------------------------------------------ pure rendering


def test_belief_bars_fold_the_rest_into_other():
    no_to_each = [(0, False), (1, False), (2, False), (0, False)]
    belief = yes_no.composition_posterior(state_after((3, 3, 3), no_to_each))
    assert len(belief) > 6
    bars = play_screen.belief_bars(belief, rows=4)
    assert len(bars) == 4 and bars[-1][0] == f"other ({len(belief) - 3})"
    assert sum(p for _, p, _ in bars) == 1
    shown = [p for _, p, _ in bars[:-1]]
    assert shown == sorted(shown, reverse=True) and shown[-1] >= max(
        p for c, p in belief.items() if play_screen.composition_label(c) not in {b[0] for b in bars}
    )
    # exactly ``rows`` compositions: all shown, nothing folded
    assert [b[2] for b in play_screen.belief_bars(dict(list(belief.items())[:4]), rows=4)][
        -1
    ] != "other"


def test_bar_chart_scales_to_probability_one_and_fits_80_columns():
    bars = [
        ("(1,1,1)", F(1), "top"),
        ("(0,1,2)", F(1, 2), "rest"),
        ("other (3)", F(1, 10**6), "other"),
    ]
    for style in (play_screen.Style(False), play_screen.Style(True)):
        lines = play_screen.bar_chart(bars, style)
        plain = [play_screen.visible(line) for line in lines]
        assert all(len(line) <= 80 for line in plain)
        full, half, tiny = (line.count("#") for line in plain)
        assert full > 40 and abs(half - full / 2) <= 1 and tiny == 1  # possible != impossible
    assert "\x1b[" in play_screen.bar_chart(bars, play_screen.Style(True))[0]
    assert "\x1b[" not in "".join(play_screen.bar_chart(bars, play_screen.Style(False)))


def test_wide_decks_still_fit_80_columns():
    deck = (1,) * 13
    names = play.default_names(13)
    state = state_after(deck, [(0, False), (1, False)])
    probs = yes_no.next_card_probabilities(state)
    lines = [
        *play_screen.belief_lines(state, names),
        *play_screen.chances_lines(probs, names, 2, play_screen.Style(True)),
        *play_screen.history_lines(names, [(a % 13, a % 2 == 0) for a in range(40)]),
        play_screen.rule("Card 13 of 13", play_screen.Style(True)),
    ]
    assert len(lines) > 4 and all(len(play_screen.visible(line)) <= 80 for line in lines)
    long_label = play_screen.bar_chart(
        [("(" + ",".join("10" for _ in range(20)) + ")", F(1), "top")]
    )
    assert len(long_label[0]) <= 80 and "~" in long_label[0]


def test_chances_mark_the_guess():
    line = play_screen.chances_lines([F(1, 5), F(1, 3), F(7, 15)], JQK, 1)[0]
    assert line == "Chances for the next card: J 20.0%  [Q 33.3%]  K 46.7%"


def test_numbers_and_labels():
    assert play_screen.percent(F(1, 3)) == "33.3%"
    assert [play_screen.fraction_text(p) for p in (F(3, 10), F(1), F(0))] == ["3/10", "1", "0"]
    assert play_screen.fraction_text(F(1, 123456789012)) == ""
    assert play_screen.composition_label((2, 3, 2)) == "(2,3,2)"
    assert play_screen.rule("Card 1 of 9") == "--- Card 1 of 9 " + "-" * 64
    assert play_screen.score_line([("you", 1), ("computer", 2)], 3, 9) == (
        "Score after 3 of 9 cards: you 1, computer 2"
    )
    assert play_screen.history_lines(JQK, [(0, True), (1, False)]) == [
        "  Your guesses so far: J+  Q-"
    ]


@pytest.mark.parametrize(
    ("choice", "tty", "env", "want"),
    [
        ("auto", True, {"TERM": "xterm"}, True),
        ("auto", False, {"TERM": "xterm"}, False),
        ("auto", True, {"TERM": "xterm", "NO_COLOR": "1"}, False),
        ("auto", True, {"TERM": "xterm", "NO_COLOR": ""}, True),
        ("auto", True, {"TERM": "dumb"}, False),
        ("always", False, {"NO_COLOR": "1"}, True),
        ("never", True, {"TERM": "xterm"}, False),
    ],
)
def test_color_only_on_a_capable_terminal(choice, tty, env, want):
    assert play_screen.color_wanted(choice, tty, env) is want


# ------------------------------------------------------------------ input


def test_parse_guess():
    assert [play.parse_guess(t, JQK) for t in ("J", " q ", "k", "1", "3")] == [0, 1, 2, 0, 2]
    with pytest.raises(play.InputError, match=r"Unknown card 'A': type one of J, Q, K"):
        play.parse_guess("A", JQK)
    with pytest.raises(play.InputError, match="Type a card name"):
        play.parse_guess("", JQK)
    with pytest.raises(play.InputError, match="Unknown card '4'"):
        play.parse_guess("4", JQK)
    with pytest.raises(play.Quit):
        play.parse_guess("QUIT", JQK)


def test_parse_answer():
    assert [play.parse_answer(t) for t in ("y", "YES", "n", "No", "undo")] == [
        True,
        True,
        False,
        False,
        "undo",
    ]
    with pytest.raises(play.InputError, match="Please answer y or n"):
        play.parse_answer("maybe")
    with pytest.raises(play.Quit):
        play.parse_answer("exit")


def test_contradictions_are_explained():
    probs = [F(0), F(1, 2), F(1, 2)]
    assert "no J can be next (chance 0)" in play.contradiction(probs, 0, True, JQK)
    assert play.contradiction(probs, 0, False, JQK) is None
    assert play.contradiction(probs, 1, True, JQK) is None
    certain = [F(0), F(1), F(0)]
    assert "must be a Q" in play.contradiction(certain, 1, False, JQK)
    with pytest.raises(play.InputError, match="must be a Q"):
        play._answer("n", certain, 1, JQK)


def test_names():
    assert play.default_names(3) == JQK
    assert play.default_names(5) == ["A", "B", "C", "D", "E"]
    assert play.default_names(30)[-1] == "T30"
    assert play.parse_names("Jack, Queen,King", 3) == ["Jack", "Queen", "King"]
    for text, why in [
        ("J,Q", "2 names given for a deck of 3 types"),
        ("J,j,K", "must differ"),
        ("J,undo,K", "reserved"),
        ("J,2,K", "reserved"),
        ("J,,K", "1 to 8 characters"),
    ]:
        with pytest.raises(ValueError, match=why):
            play.parse_names(text, 3)


# ------------------------------------------------------------------ games, scripted


def scripted(lines):
    """A plain Console reading ``lines`` in turn (EOFError after the last) and its output."""
    feed, out = iter(lines), StringIO()

    def read(prompt):
        out.write(prompt)
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None

    return play.Console(out=out, read=read), out


def brute_belief(deck, guesses, answers):
    """Composition of the unseen cards over every deck order consistent with the answers."""
    cards = [a for a, c in enumerate(deck) for _ in range(c)]
    seen = Counter()
    for order in set(itertools.permutations(cards)):
        if all((order[i] == g) == y for i, (g, y) in enumerate(zip(guesses, answers, strict=True))):
            rest = order[len(guesses) :]
            seen[tuple(rest.count(a) for a in range(len(deck)))] += 1
    total = sum(seen.values())
    return {c: F(k, total) for c, k in seen.items()}


@pytest.mark.parametrize("strategy", ["optimal", "greedy"])
def test_human_game_scores_and_beliefs_match_brute_force(strategy):
    deck, seed = (2, 2, 1), 3
    setup = play.make_setup(deck, JQK, strategy, {})
    order = play.shuffled_order(deck, seed)
    assert sorted(order) == [0, 0, 1, 1, 2] and order == play.shuffled_order(deck, seed)
    mine = ["J", "Q", "K", "Q", "J"]
    console, out = scripted(mine)
    you, cpu = play.play_human(setup, order, console)
    assert you == sum(JQK.index(m) == c for m, c in zip(mine, order, strict=True))
    # replay the computer's moves and check every belief it showed against enumeration
    state, guesses, answers = yes_no.initial_state(deck), [], []
    text = out.getvalue()
    computer = setup.computer()
    for card in order:
        guess = computer.guess(state)
        guesses.append(guess)
        answers.append(guess == card)
        state = play.after(state, guess, guess == card)
        if state[0]:
            assert yes_no.composition_posterior(state) == brute_belief(deck, guesses, answers)
            for line in play_screen.belief_lines(state, JQK):
                assert line in text
    assert cpu == sum(answers)
    assert f"Computer ({strategy}): {cpu} of 5" in text
    assert "The deck was: " + "  ".join(JQK[c] for c in order) in text


def test_computer_game_undo_and_contradiction():
    console, out = scripted(["n", "undo", "y", "maybe", "n", "n", "y"])
    cpu = play.play_computer(play.make_setup((1, 1, 1), JQK, "optimal", {}), console)
    text = out.getvalue()
    assert "Took back the answer for card 1." in text
    assert "That can't be right" in text and "Please answer y or n" in text
    assert cpu == 2 and "Computer (optimal): 2 of 3" in text


def test_eof_mid_game_raises_for_main_to_handle():
    console, _ = scripted(["J"])
    with pytest.raises(EOFError):
        play.play_human(play.make_setup((3, 3, 3), JQK, "optimal", {}), [0] * 9, console)


# ------------------------------------------------------------------ each strategy, scripted

# (strategy, the options a player gives, the family parameters they set)
PLAYED = [
    ("optimal", [], {}),
    ("greedy", [], {}),
    ("greedy", ["--param", "tie_break=highest"], {"tie_break": "highest"}),
    ("greedy", ["--param", "tie_break=pair"], {"tie_break": "pair"}),
    ("info", [], {}),
    ("info", ["--gamma", "0.6", "--entropy", "collision"], {"gamma": 0.6, "entropy": "collision"}),
    (
        "info",
        ["--gamma", "0.3", "--entropy", "2,2"],
        {"gamma": 0.3, "entropy_r": 2, "entropy_t": 2},
    ),
    ("count_tracker", [], {}),
    ("constant_decrement", ["--decrement", "0.3"], {"decrement": 0.3}),
    ("persistent", [], {}),
]
PLAYED_IDS = [" ".join([s, *o]) for s, o, _ in PLAYED]


def solver_game(task, order):
    """(guesses, score) of the task's strategy on ``order``, move by move from the policy the
    family's own solver or simulator uses: the exact Evaluation (optimal, greedy, info), the
    estimate players of the exact runs, the decision function of the persistent Monte Carlo."""
    from solvers.card_guessing.exact import belief_players
    from solvers.card_guessing.simulation import persistent
    from solvers.card_guessing.tasks import yes_no_tasks

    strategy, tie_break = task["strategy"], task["tie_break"] or "lowest"
    belief, update = None, lambda b, a, yes: None
    if strategy == "persistent" or tie_break == "pair":
        code = persistent.POLICY_CODES["persistent" if strategy == "persistent" else "pairs"]
        window = 0.1 if strategy == "persistent" else 0.0

        def pick(state, _):
            c, p = (np.array([pair[k] for pair in state[1]], np.int64) for k in (0, 1))
            return int(
                persistent._choice(c, p, window, code, np.zeros(c.size), np.zeros(c.size))[0]
            )

    elif strategy in ("count_tracker", "constant_decrement"):
        player = (
            belief_players.count_tracker(tie_break)
            if strategy == "count_tracker"
            else belief_players.constant_decrement(task["decrement"], tie_break)
        )
        belief, update = player.start(task["deck"]), player.update
        pick = lambda state, b: player.guesses(state, b)[0]  # noqa: E731
    else:
        ev = (
            yes_no_tasks.info_evaluation(task)
            if strategy == "info"
            else yes_no.evaluation(strategy, tie_break)
        )
        pick = lambda state, b: ev.guess(state)  # noqa: E731
    state, guesses, score = yes_no.initial_state(task["deck"]), [], 0
    for card in order:
        guess = pick(state, belief)
        guesses.append(guess)
        score += guess == card
        belief = update(belief, guess, guess == card)
        state = play.after(state, guess, guess == card)
    return guesses, score


def simulated_score(task, order):
    """The score the family's Monte Carlo game loop gives the strategy on ``order``."""
    from solvers.card_guessing.simulation import persistent, shuffled_decks
    from solvers.card_guessing.tasks import yes_no_tasks

    if task["strategy"] == "persistent" or task["tie_break"] == "pair":
        policy = "persistent" if task["strategy"] == "persistent" else "pairs"
        window = 0.1 if policy == "persistent" else 0.0
        orders, deck = np.array([order], np.int64), np.array(task["deck"], np.int64)
        return int(persistent._games(orders, deck, window, persistent.POLICY_CODES[policy])[0][0])
    rng = np.random.default_rng(0)
    return shuffled_decks.play_one(order, task["deck"], yes_no_tasks.player(task), rng, {})


def setup_of(argv):
    """The Setup the command line ``argv`` starts a game with."""
    p = play.parser()
    return play.setup_from_args(p.parse_args(argv), p)


@pytest.mark.parametrize(("strategy", "options", "params"), PLAYED, ids=PLAYED_IDS)
def test_each_strategy_plays_its_own_guesses(strategy, options, params):
    """A scripted game per strategy and deck order: the guesses the screen shows are the
    strategy's own, move by move, and the computer's score is the solver's and the Monte
    Carlo game loop's; the average shown is the family's exact value (persistent: the exact
    count of its game tree, checked against the ranked solver in the slow test below)."""
    deck = (3, 3, 2)
    setup = setup_of(["3,3,2", "--strategy", strategy, *options])
    task = play.player_task(deck, strategy, params)
    assert setup.label == play.strategy_label(task)
    for seed in (1, 2, 3, 4):
        order = play.shuffled_order(deck, seed)
        console, out = scripted(["J"] * len(order))
        _, cpu = play.play_human(setup, order, console, seed)
        shown = re.findall(r"Computer guessed (\w): (yes|no)\.", out.getvalue())
        guesses, score = solver_game(task, order)
        assert [JQK.index(name) for name, _ in shown] == guesses
        assert [yes == "yes" for _, yes in shown] == [
            g == c for g, c in zip(guesses, order, strict=True)
        ]
        assert cpu == score == simulated_score(task, order)
        assert f"Computer ({strategy}): {cpu} of 8" in out.getvalue()
        # a count-keeper keeps estimates only: the exact odds shown are not called its own
        keeps = strategy in ("count_tracker", "constant_decrement")
        assert ("Computer's estimated counts:" in out.getvalue()) == keeps
        assert ("exact odds (not the computer's):" in out.getvalue()) == keeps
        assert ("Exact chances for card 1:" in out.getvalue()) == keeps
        assert ("Computer's belief about" in out.getvalue()) != keeps
        assert ("Computer's chances for card 1:" in out.getvalue()) != keeps
    if strategy != "persistent" and task["tie_break"] != "pair":  # the family's exact row
        row = solve({"family": "card_guessing", "deck": list(deck), "strategy": strategy, **params})
        assert setup.own == Fraction(row[0]["expected_score_exact"])


def test_count_keepers_show_their_estimates_and_undo_takes_them_back():
    """The computer (constant_decrement) guesses a deck known only through the answers; one
    answer is taken back.  Its guesses and the estimates it shows are the strategy's own."""
    from solvers.card_guessing.exact import belief_players

    deck, order = (2, 2, 2), [2, 1, 1, 0, 2, 0]
    asked, out = Counter(), StringIO()

    def read(prompt):
        out.write(prompt)
        k, name = re.search(r"Is card (\d) a (\w)\?", prompt).groups()
        asked[k] += 1
        if k == "4" and asked[k] == 1:
            return "undo"  # takes back the answer for card 3
        return "y" if order[int(k) - 1] == JQK.index(name) else "n"

    setup = play.make_setup(deck, JQK, "constant_decrement", {})
    cpu = play.play_computer(setup, play.Console(out=out, read=read))
    text = out.getvalue()
    assert "Took back the answer for card 3." in text
    guesses, score = solver_game(play.player_task(deck, "constant_decrement", {}), order)
    assert cpu == score
    shown = re.findall(r"The computer guesses (\w)\.", text)
    assert shown == [JQK[g] for g in guesses[:4] + guesses[2:]]
    player, want = belief_players.constant_decrement(), []
    belief, state = player.start(deck), yes_no.initial_state(deck)
    for guess, card in zip(guesses, order, strict=True):
        belief = player.update(belief, guess, guess == card)
        state = play.after(state, guess, guess == card)
        want += play_screen.estimate_lines(belief, state, JQK)
    assert want[0] == "Computer's estimated counts: J 2.00  Q 1.45  K 1.45"  # no to J: -0.55
    got = [line for line in text.splitlines() if line.startswith("Computer's estimated")]
    assert got == want[:3] + want[2:]  # card 3 answered twice, from the same estimates


def test_uniform_ties_are_drawn_among_the_strategys_ties_reproducibly():
    deck = (2, 2, 2)
    setup = play.make_setup(deck, JQK, "greedy", {"tie_break": "uniform"})
    assert setup.own == Fraction(
        solve({"family": "card_guessing", "deck": [2, 2, 2], "strategy": "greedy",
               "tie_break": "uniform"})[0]["expected_score_exact"]
    )  # fmt: skip
    order = play.shuffled_order(deck, 9)
    games = []
    for _ in range(2):
        console, out = scripted(["J"] * 6)
        play.play_human(setup, order, console, seed=9)
        games.append(re.findall(r"Computer guessed (\w)", out.getvalue()))
    assert games[0] == games[1]  # the same seed, the same draws
    state, choose = yes_no.initial_state(deck), yes_no.greedy_chooser("uniform")
    for name, card in zip(games[0], order, strict=True):
        guess = JQK.index(name)
        assert guess in choose(state, yes_no.yes_counts(state))
        state = play.after(state, guess, guess == card)


def test_the_average_of_a_strategy_too_costly_to_count_is_left_out():
    setup = play.make_setup((2, 2, 2), JQK, "count_tracker", {})
    assert play.own_expectation(setup.player, setup.deck, budget=10) is None
    assert play.own_expectation(setup.player, setup.deck) == setup.own
    lines = play_screen.expectation_lines(setup.deck, "count_tracker", setup.optimal, None)
    assert lines[-1] == "The count_tracker strategy's average is not computed on a deck this large."


@pytest.mark.slow
def test_persistent_plays_the_ranked_solvers_policy():
    """On 3 types of 3, in every state the game's persistent player reaches (every deck
    order), it names a type of the (c, p) class the ranked solver (uniform_deck/) chose; its
    average is the solver's."""
    from solvers.card_guessing.uniform_deck import decision_tree, in_memory, ranks

    deck = (3, 3, 3)
    setup = play.make_setup(deck, JQK, "persistent", {})
    sol = in_memory.solve(deck, "persistent", window=0.1, keep_layers=sum(deck))
    assert abs(float(setup.own) - sol.expected_score) < 1e-12
    cd = ranks.codes(deck)
    args = (cd.m, cd.r, cd.exhausted, cd.weight, cd.eq, cd.le, cd.offsets)
    checked = set()
    for order in sorted(set(itertools.permutations([0, 0, 0, 1, 1, 1, 2, 2, 2]))):  # 1,680
        state, computer = yes_no.initial_state(deck), setup.computer()
        for card in order:
            guess = computer.guess(state)
            depth = sum(deck) - state[0]
            if depth < sum(deck) - 1:  # the last card has one choice
                seq = decision_tree.code_sequence(state[1], cd)
                _, _, best = sol.top_layers[depth]
                code = int(seq[best[ranks.rank_of(seq, depth, *args)]])
                assert state[1][guess] == (code // cd.n_p + 1, code % cd.n_p), state
                checked.add(state)
            state = play.after(state, guess, guess == card)
            computer.update(guess, guess == card)
    assert len(checked) > 150  # states before the last card the policy reaches: 158


# ------------------------------------------------------------------ bad options


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["3,x"], "deck '3,x': must be a list of positive integers"),
        (["3,0"], "deck '3,0': must be a list of positive integers"),
        (["--names", "J,Q"], "--names 'J,Q': 2 names given for a deck of 3 types"),
        (["--strategy", "magic"], "--strategy 'magic': unknown; valid: optimal, greedy"),
        (["--strategy", "greedy", "--param", "tie_break=sideways"], "tie_break"),
        (["--param", "tie_break=lowest"], "--param tie_break='lowest': does not apply to --st"),
        (["--param", "colour=red"], "colour"),
        (["--param", "oops"], "expected KEY=VALUE"),
        (["--mode", "robot"], "invalid choice: 'robot'"),
        (["6,6,6,6,6"], "deck '6,6,6,6,6': too large for the exact solver"),
        (
            ["--strategy", "info", "--gamma", "x"],
            "--gamma 'x': must be a finite number of at least 0",
        ),
        (
            ["--strategy", "info", "--gamma", "-1"],
            "--gamma '-1': must be a finite number of at least 0",
        ),
        (["--gamma", "0.2"], "--gamma '0.2': does not apply to --strategy optimal"),
        (["--strategy", "info", "--entropy", "nope"], "--entropy 'nope': unknown entropy preset"),
        (["--strategy", "info", "--entropy", "2,x"], "--entropy '2,x': entropy_t='x'"),
        (["--strategy", "info", "--entropy", "2,1", "--param", "entropy_t=2"], "by --entropy"),
        (["--strategy", "constant_decrement", "--decrement", "-1"], "--decrement '-1': must be"),
        (["--strategy", "persistent", "--param", "tie_break=highest"], "does not apply to --st"),
        (["--strategy", "info", "--param", "tie_break=pair"], "only greedy breaks ties by pair"),
        (["--param", "method=exact"], "--param method='exact': not a setting of the game"),
        (["--strategy", "sequence"], "--strategy 'sequence': unknown; valid: optimal, greedy"),
        (["--strategy", "nosuch_module_q.Mine"], "module 'nosuch_module_q' cannot be imported"),
    ],
)
def test_bad_options_are_usage_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        play.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1 and err.startswith("python -m solvers.card_guessing.play: error: ")


# ------------------------------------------------------------ a strategy of one's own

OWN = (
    SWITCH_AFTER_NO
    + """

class Breaks(SwitchAfterNo):
    def update(self, belief, guess, yes):
        raise RuntimeError("lost count")
"""
)


@pytest.fixture
def own_module(tmp_path, monkeypatch):
    """A module of the player's own strategies on sys.path (a name of its own per test)."""
    name = f"playstrat_{abs(hash(tmp_path)) % 10**8}"
    (tmp_path / f"{name}.py").write_text(OWN)
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def test_a_strategy_of_one_s_own_plays_its_guesses_and_says_why(own_module):
    """``--strategy module.Class``: the computer's guesses are the class's own (replayed
    here), its explanation follows each guess, the exact odds are not called its own, and
    the average shown is the family's exact row of that strategy."""
    deck, target = (3, 3, 2), f"{own_module}.SwitchAfterNo"
    setup = setup_of(["3,3,2", "--strategy", target, "--param", "patience=1"])
    assert setup.label == f"{target} (patience=1)"
    order = play.shuffled_order(deck, 7)
    console, out = scripted(["J"] * len(order))
    _, cpu = play.play_human(setup, order, console, 7)
    text = out.getvalue()
    strategy = sys.modules[own_module].SwitchAfterNo(patience=1)
    belief, expected = strategy.start(deck), []
    for card in order:
        g = strategy.guess(belief)
        expected.append((JQK[g], "yes" if g == card else "no", belief[1]))
        belief = strategy.update(belief, g, g == card)
    shown = re.findall(r"Computer guessed (\w): (yes|no)\.\n  Its reasoning: (\d) no", text)
    assert [(n, y, int(k)) for n, y, k in shown] == expected
    assert cpu == sum(y == "yes" for _, y, _ in expected)
    assert "exact odds (not the computer's):" in text and "Computer's belief about" not in text
    row = solve({"family": "card_guessing", "deck": list(deck), "strategy": "mine",
                 "strategy_target": target, "strategy_params": {"patience": 1}})[0]  # fmt: skip
    assert setup.own == Fraction(row["expected_score_exact"])
    assert f"(exactly {row['expected_score_exact']})." in text


def test_the_screen_names_a_strategy_of_one_s_own_by_its_docstring_s_first_sentence(own_module):
    """The game's header describes a strategy of one's own by the first sentence of its
    docstring, whole however many lines it spans (wrapped to the screen), and nothing of the
    sentences after it."""
    setup = setup_of(["3,3,2", "--strategy", f"{own_module}.SwitchAfterNo"])
    sentence = (
        'The type with the most cards not yet confirmed; after `patience` "no" answers in a '
        "row, the second most (ties to the lowest type)"
    )
    assert play.describe(setup) == f"a strategy of your own ({sentence})"
    header = play.intro_lines(setup, "computer", None, play.Style(False))
    assert all(len(line) <= 80 for line in header)
    assert " ".join(header).count(f"({sentence}).") == 1, header
    doc = """Name the likeliest type (e.g. the first of
        a tie).  Then the second one.

        Details nobody reads here."""
    assert play.first_sentence(doc) == "Name the likeliest type (e.g. the first of a tie)"
    assert play.first_sentence("One paragraph\n\nanother.") == "One paragraph"


def test_a_strategy_failing_mid_game_ends_it_in_one_line(own_module, capsys):
    """A strategy of one's own that raises in a move ends the game with exit 1 and one line
    naming the strategy and the move."""
    code = play.main(["1,1", "--strategy", f"{own_module}.Breaks", "--mode", "computer"])
    out = capsys.readouterr().out
    assert code == 1
    assert "The computer's strategy failed: strategy 'Breaks'" in out
    assert "raised RuntimeError: lost count" in out and "Traceback" not in out


# ------------------------------------------------------------------ as a person would

PLAY = [sys.executable, "-m", "solvers.card_guessing.play"]


def run_piped(args, text):
    """Run the game with stdin and stdout as pipes; (exit status, stdout, stderr)."""
    env = {**os.environ, "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    res = subprocess.run(
        [*PLAY, *args], input=text, capture_output=True, text=True, cwd=ROOT, env=env, timeout=60
    )
    return res.returncode, res.stdout, res.stderr


def test_piped_output_is_plain_text_with_the_answers_echoed():
    code, out, err = run_piped(["--seed", "5"], "Z\nJ\nQ\nK\nJ\nQ\nK\nJ\nQ\nK\n")
    assert code == 0 and err == ""
    assert "\x1b" not in out
    assert "Your guess for card 1 [J/Q/K]: Z\nUnknown card 'Z'" in out
    assert "Score after 9 of 9 cards: you " in out and "(exactly 2383/560)." in out
    assert all(len(line) <= 80 for line in out.splitlines())


def test_piped_persistent_game_from_the_command_line():
    order = play.shuffled_order((3, 3, 3), 5)
    code, out, err = run_piped(["--strategy", "persistent", "--seed", "5"], "K\n" * 9)
    assert (code, err) == (0, "")
    task = play.player_task((3, 3, 3), "persistent", {})
    guesses, score = solver_game(task, order)
    assert re.findall(r"Computer guessed (\w)", out) == [JQK[g] for g in guesses]
    assert f"Computer (persistent): {score} of 9" in out
    assert "The persistent strategy gets 4.248 (exactly 2379/560)." in out


def test_piped_color_always_and_input_ending_early():
    code, out, _ = run_piped(["--color", "always", "--mode", "computer"], "y\n")
    assert code == 0 and "\x1b[" in out and out.rstrip().endswith("Input ended. Bye.")


def test_quit_stops_cleanly():
    code, out, err = run_piped(["--mode", "computer"], "y\nQuit\n")
    assert (code, err) == (0, "") and out.rstrip().endswith("Stopped. Bye.")


try:
    import pexpect
except ImportError:  # the pure and piped tests above still run
    pexpect = None

needs_pexpect = pytest.mark.skipif(pexpect is None, reason="pexpect is not installed")


def spawn(args, env_extra=None):
    """The game on an 80x24 pseudo-terminal, as a person sees it."""
    env = {**os.environ, "TERM": "xterm", **(env_extra or {})}
    if not env_extra or "NO_COLOR" not in env_extra:
        env.pop("NO_COLOR", None)
    return pexpect.spawn(
        PLAY[0], [*PLAY[1:], *args], cwd=str(ROOT), env=env, dimensions=(24, 80),
        encoding="utf-8", timeout=30, preexec_fn=interruptible,
    )  # fmt: skip


def screen_lines(text):
    """What the terminal shows, line by line, without colour codes."""
    return [play_screen.visible(line) for line in text.replace("\r", "").split("\n")]


@needs_pexpect
def test_terminal_human_game_with_colour_bad_card_and_a_perfect_score():
    seed = 11
    order = play.shuffled_order((3, 3, 3), seed)
    child = spawn(["--seed", str(seed)])
    child.expect_exact("Your guess for card 1")
    child.sendline("Ace")
    child.expect("Unknown card 'Ace': type one of J, Q, K")
    child.expect_exact("Your guess for card 1")  # asked again
    for k, card in enumerate(order, 1):
        if k > 1:
            child.expect_exact(f"Your guess for card {k}")
        child.sendline(JQK[card].lower())  # the person somehow knows the deck
        child.expect(r"Score after (\d) of 9 cards: you (\d), computer (\d)")
        assert child.match.group(2) == str(k)
        if k == 2:
            shown = child.before
    child.expect(pexpect.EOF)
    tail = child.before
    child.close()
    assert child.exitstatus == 0
    assert "\x1b[" in shown  # coloured on a terminal
    belief = [line for line in screen_lines(shown) if line.startswith("  (")]
    assert belief and all("#" in line and "%" in line for line in belief)
    lines = screen_lines(tail)
    assert "You:                9 of 9" in lines
    assert any(re.fullmatch(r"Computer \(optimal\): \d of 9", line) for line in lines)
    assert "(exactly 2383/560)." in " ".join(lines)
    assert all(len(line) <= 80 for line in lines + screen_lines(shown))


@needs_pexpect
def test_terminal_computer_game_refuses_an_impossible_no():
    """Deck J, Q: a "no" to J means card 1 was the Q, so card 2 must be the J."""
    child = spawn(["1,1", "--mode", "computer"], {"NO_COLOR": "1"})
    child.expect_exact("Is card 1 a J? [y/n]: ")
    child.sendline("n")
    child.expect(r"\(1,0\) +#+ +100\.0%")  # one possibility left
    child.expect_exact("Is card 2 a J? [y/n]: ")
    child.sendline("n")
    child.expect_exact("That can't be right: after your earlier answers the next card must")
    child.expect_exact("Is card 2 a J? [y/n]: ")
    assert "\x1b[" not in child.before  # NO_COLOR honoured
    child.sendline("y")
    child.expect_exact("Computer (optimal): 1 of 2")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and "Traceback" not in child.before


@pytest.mark.parametrize(
    ("key", "message", "status"), [("\x04", "Input ended", 0), ("\x03", "Interrupted", 130)]
)
@needs_pexpect
def test_terminal_ctrl_d_and_ctrl_c_exit_cleanly(key, message, status):
    child = spawn([])
    child.expect_exact("Your guess for card 1")
    child.send(key)
    child.expect_exact(message)
    child.expect(pexpect.EOF)
    child.close()
    assert "Traceback" not in child.before
    assert child.exitstatus == status


def test_usage_names_the_command_the_player_typed():
    assert play.program_name("/venv/bin/guesslab-play") == "guesslab-play"
    assert play.program_name("/x/solvers/card_guessing/play.py") == (
        "python -m solvers.card_guessing.play"
    )
    script = Path(sys.executable).parent / "guesslab-play"
    if script.exists():  # the console script of this environment's install
        out = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and out.stdout.startswith("usage: guesslab-play"), out.stdout
