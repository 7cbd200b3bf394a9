"""Benchmark: info / playable strategies (exact) and the Monte Carlo path of card_guessing.

Prints timings: exact info and playable evaluations on small decks; Monte Carlo greedy on the
52-card decks (13 ranks x 4 and 4 suits x 13) with the Numba float path; info's Monte Carlo
on 52 cards (a few games, extrapolated); the no_repeat scan at N = 300.

Run: python benchmarks/bench_card_guessing_info.py [--quick]
"""

from __future__ import annotations

import argparse
import platform
import signal
import time

import numpy as np

from solvers import no_repeat, solve
from solvers.card_guessing import montecarlo, partial, partial_run, players
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
    montecarlo.greedy_scores([3, 3, 3], 10, np.random.default_rng(0))  # compile / load cache
    for name, deck in DECKS_52.items():
        (scores, exact_calls), sec = timed(
            montecarlo.greedy_scores, deck, n_games, np.random.default_rng(1)
        )
        se = scores.std(ddof=1) / np.sqrt(n_games)
        print(
            f"{name:13s} mean {scores.mean():.4f} +- {se:.4f}  {sec:6.1f} s  "
            f"({sec / n_games * 1e6:.0f} us/game; {exact_calls:,} decisions made exactly)"
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
        player = partial_run.player(validate({**task, "method": "monte_carlo", "n_games": 1}))
        order = montecarlo.shuffled_orders(deck, 1, np.random.default_rng(2))[0].tolist()
        state, start, marks, done = partial.initial_state(deck), time.perf_counter(), [], 0
        signal.signal(signal.SIGALRM, _time_up)
        signal.alarm(cap)  # a single decision late in the game can take far longer than cap
        try:
            for pos, card in enumerate(order):
                a = player.guesses(state, None)[0]
                state = (partial.after_yes if a == card else partial.after_no)(state, a)
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
        montecarlo.play_games, [4, 4, 4], partial_run.player(task), 20_000, np.random.default_rng(3)
    )
    print(f"20,000 games {sec:.1f} s, mean {scores.mean():.4f}")


def bench_float_counts() -> None:
    print("\n## Yes-weights of the 52 states of one greedy game (4 x 13), one Python call each")
    deck = [13] * 4
    order = montecarlo.shuffled_orders(deck, 1, np.random.default_rng(4))[0].tolist()
    states = []
    state = partial.initial_state(deck)
    player = players.StatePlayer(partial.greedy_chooser("lowest"))
    for card in order:
        states.append(state)
        a = player.guesses(state, None)[0]
        state = (partial.after_yes if a == card else partial.after_no)(state, a)
    partial._arrangements.cache_clear()
    _, exact_sec = timed(lambda: [partial.yes_counts(s) for s in states])
    _, float_sec = timed(
        lambda: [
            montecarlo.float_yes_weights([c for c, _ in s[1]], [p for _, p in s[1]]) for s in states
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
    args = parser.parse_args()
    print(f"# card_guessing info / Monte Carlo benchmark ({platform.processor() or 'cpu'})")
    bench_exact(args.quick)
    bench_greedy_mc(args.quick)
    bench_float_counts()
    bench_info_small_mc()
    bench_info_mc(args.quick)
    bench_no_repeat()


if __name__ == "__main__":
    main()
