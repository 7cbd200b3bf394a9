"""Benchmark: info / playable strategies (exact) and the Monte Carlo path of card_guessing.

Prints timings: exact info and playable evaluations on small decks; Monte Carlo greedy and
info on the 52-card decks (13 ranks x 4 and 4 suits x 13) with their Numba float paths (info:
games/s on 4 suits x 13; on 13 ranks x 4 the size of the composition posterior along a game,
which is what stops it); method float for info on 4 x m decks (4 types of m cards); with
--python-info, info's Python path on 52 cards; the no_repeat scan at N = 300.

Run: python benchmarks/bench_card_guessing_info.py [--quick] [--python-info]
"""

from __future__ import annotations

import argparse
import platform
import signal
import time

import numpy as np

from solvers import no_repeat, solve
from solvers.card_guessing.exact import belief_players, yes_no
from solvers.card_guessing.info_policy import evaluation, posterior
from solvers.card_guessing.info_policy.monte_carlo import InfoPlay
from solvers.card_guessing.simulation import shuffled_decks
from solvers.card_guessing.tasks import yes_no_tasks
from solvers.registry import validate

DECKS_52 = {"13 ranks x 4": [4] * 13, "4 suits x 13": [13] * 4}


def timed(fn, *args, **kwargs):
    """(result, seconds) of one call."""
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def bench_exact(quick: bool) -> None:
    print("\n## Exact evaluation (expected score, states memoised, seconds)")
    decks = [(3, 3, 3), (4, 4, 4)] + ([] if quick else [(3, 3, 3, 3), (5, 5, 5)])
    for deck in decks:
        for strategy, params in (
            ("info", {"gamma": 0.15}),
            ("count_tracker", {}),
            ("constant_decrement", {}),
            ("greedy", {}),
            ("optimal", {}),
        ):
            task = {"family": "card_guessing", "deck": list(deck), "strategy": strategy, **params}
            (row,), sec = timed(solve, task)
            print(
                f"{str(deck):14s} {strategy:19s} {row['expected_score_exact']:>22s} "
                f"= {row['expected_score']:.6f}  states {row['n_states']:>7,}  {sec:7.3f} s"
            )


def bench_greedy_mc(quick: bool) -> None:
    n_games = 10_000 if quick else 100_000
    print(f"\n## Monte Carlo greedy, {n_games:,} games, one core (Numba float path)")
    shuffled_decks.greedy_scores([3, 3, 3], 10, np.random.default_rng(0))  # compile / load cache
    for name, deck in DECKS_52.items():
        (scores, exact_calls), sec = timed(
            shuffled_decks.greedy_scores, deck, n_games, np.random.default_rng(1)
        )
        se = scores.std(ddof=1) / np.sqrt(n_games)
        print(
            f"{name:13s} mean {scores.mean():.4f} +- {se:.4f}  {sec:6.1f} s  "
            f"({sec / n_games * 1e6:.0f} us/game; {exact_calls:,} decisions made exactly)"
        )


def bench_info_fast_mc(quick: bool) -> None:
    n_games = 10_000 if quick else 100_000
    print(f"\n## Monte Carlo info, {n_games:,} games, one core (Numba float filter, info_policy/)")
    shuffled_decks.info_scores(
        [3, 3, 3], 10, np.random.default_rng(0), 0.15
    )  # compile / load cache
    for label, (r, t) in (("Shannon bits", (1.0, 1.0)), ("Renyi-2 (r=2, t=1) bits", (2.0, 1.0))):
        deck = DECKS_52["4 suits x 13"]
        (scores, play), sec = timed(
            shuffled_decks.info_scores, deck, n_games, np.random.default_rng(1), 0.15, r, t, 2.0
        )
        se = scores.std(ddof=1) / np.sqrt(n_games)
        print(
            f"4 suits x 13, gamma 0.15, {label}: mean {scores.mean():.4f} +- {se:.4f}  "
            f"{sec:6.1f} s ({n_games / sec:,.0f} games/s); {play.exact_calls} exact decisions, "
            f"largest posterior {play.largest_support:,} compositions, "
            f"{len(play.dcache):,} moves and {len(play.hcache):,} entropies cached",
            flush=True,
        )


def bench_info_rank_deck(quick: bool) -> None:
    cap = 10 if quick else 60
    deck = DECKS_52["13 ranks x 4"]
    print(f"\n## 13 ranks x 4: composition posterior size along a greedy game (stop after {cap} s)")
    order = shuffled_decks.shuffled_orders(deck, 1, np.random.default_rng(2))[0].tolist()
    state, start = yes_no.initial_state(deck), time.perf_counter()
    for pos, card in enumerate(order):
        if pos % 4 == 0:
            (_, probs), sec = timed(posterior.float_posterior, state)
            print(f"after {pos:2d} cards: {probs.size:>11,} compositions ({sec:.2f} s)", flush=True)
            if time.perf_counter() - start > cap:
                break
        c, p = [x for x, _ in state[1]], [y for _, y in state[1]]
        a = int(np.argmax(shuffled_decks.float_yes_weights(c, p)[0]))
        state = (yes_no.after_yes if a == card else yes_no.after_no)(state, a)
    play = InfoPlay(deck, 0.15)
    orders = shuffled_decks.shuffled_orders(deck, 1, np.random.default_rng(3))
    try:
        _, sec = timed(play.scores, orders, np.zeros(1, np.int64))
        print(f"one info game: {sec:.1f} s")
    except ValueError as exc:
        print(f"info Monte Carlo: {exc}")


def bench_info_float(quick: bool) -> None:
    top = 7 if quick else 10
    print(f"\n## method float, info (gamma 0.15, Shannon bits), 4 x m for m = 1..{top}")
    evaluation.evaluate([2, 2], 0.15)  # compile / load cache
    for m in range(1, top + 1):
        value, sec = timed(evaluation.evaluate, [m] * 4, 0.15)
        print(
            f"4 x {m:2d}: {value.expected_score:.9f}  labelled states {value.n_states:>10,}  "
            f"canonical {value.n_canonical:>8,}  largest posterior {value.largest_support:>5,}  "
            f"exact decisions {value.exact_calls}  {sec:7.2f} s",
            flush=True,
        )


class _TimeUp(Exception):
    pass


def _time_up(signum, frame):
    raise _TimeUp


def bench_info_mc(quick: bool) -> None:
    cap = 20 if quick else 60
    print(f"\n## Monte Carlo info on 52 cards: one game, step by step, stopped after {cap} s")
    for name, deck in DECKS_52.items():
        task = {"family": "card_guessing", "deck": deck, "strategy": "info", "gamma": 0.15}
        player = yes_no_tasks.player(validate({**task, "method": "monte_carlo", "n_games": 1}))
        order = shuffled_decks.shuffled_orders(deck, 1, np.random.default_rng(2))[0].tolist()
        state, start, marks, done = yes_no.initial_state(deck), time.perf_counter(), [], 0
        signal.signal(signal.SIGALRM, _time_up)
        signal.alarm(cap)  # a single decision late in the game can take far longer than cap
        try:
            for pos, card in enumerate(order):
                a = player.guesses(state, None)[0]
                state = (yes_no.after_yes if a == card else yes_no.after_no)(state, a)
                done = pos + 1
                if done % 5 == 0:
                    marks.append(f"{done} cards {time.perf_counter() - start:.1f} s")
        except _TimeUp:
            marks.append(f"stopped during card {done + 1} after {cap} s")
        finally:
            signal.alarm(0)
        print(f"{name:13s} " + "; ".join(marks), flush=True)


def bench_info_small_mc() -> None:
    print("\n## Monte Carlo info on (4,4,4) (exact decisions, memoised per state)")
    task = validate(
        {"family": "card_guessing", "deck": [4, 4, 4], "strategy": "info", "gamma": 0.15}
    )
    scores, sec = timed(
        shuffled_decks.play_games,
        [4, 4, 4],
        yes_no_tasks.player(task),
        20_000,
        np.random.default_rng(3),
    )
    print(f"20,000 games {sec:.1f} s, mean {scores.mean():.4f}")


def bench_float_counts() -> None:
    print("\n## Yes-weights of the 52 states of one greedy game (4 x 13), one Python call each")
    deck = [13] * 4
    order = shuffled_decks.shuffled_orders(deck, 1, np.random.default_rng(4))[0].tolist()
    states = []
    state = yes_no.initial_state(deck)
    player = belief_players.StatePlayer(yes_no.greedy_chooser("lowest"))
    for card in order:
        states.append(state)
        a = player.guesses(state, None)[0]
        state = (yes_no.after_yes if a == card else yes_no.after_no)(state, a)
    yes_no._arrangements.cache_clear()
    _, exact_sec = timed(lambda: [yes_no.yes_counts(s) for s in states])
    _, float_sec = timed(
        lambda: [
            shuffled_decks.float_yes_weights([c for c, _ in s[1]], [p for _, p in s[1]])
            for s in states
        ]
    )
    print(f"{len(states)} states: exact {exact_sec * 1e3:.1f} ms, float {float_sec * 1e3:.1f} ms")


def bench_no_repeat() -> None:
    print("\n## no_repeat scan (every valid (n, k, m)) ")
    no_repeat.scan(10)  # compile / load cache
    for n in (100, 200, 300):
        row, sec = timed(no_repeat.scan, n)
        print(f"N = {n}: {row['n_tuples']:,} tuples in {sec:.2f} s, min gap {row['min_gap']:.3g}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument(
        "--python-info", action="store_true", help="also time info's Python path on 52 cards"
    )
    args = parser.parse_args()
    print(f"# card_guessing info / Monte Carlo benchmark ({platform.processor() or 'cpu'})")
    bench_exact(args.quick)
    bench_greedy_mc(args.quick)
    bench_info_fast_mc(args.quick)
    bench_info_rank_deck(args.quick)
    bench_info_float(args.quick)
    bench_float_counts()
    bench_info_small_mc()
    if args.python_info:
        bench_info_mc(args.quick)
    bench_no_repeat()


if __name__ == "__main__":
    main()
