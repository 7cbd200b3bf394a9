"""Benchmark: exact yes/no card guessing, our (c, p) solver against a belief-dictionary baseline.

The baseline follows the approach Gural, Simper & So (2019) describes (section 5): the belief is a
dictionary
{composition of the unseen cards: exact Fraction}, updated by Bayes' rule and copied at every
node of the recursion, memoised on the belief.  Written here from that description.

Run: python benchmarks/bench_card_guessing.py [--quick]
"""

from __future__ import annotations

import argparse
import platform
import time
from fractions import Fraction

from solvers.card_guessing.exact import yes_no


def baseline_optimal(deck: tuple[int, ...]) -> Fraction:
    """Optimal expected score by recursion over belief dictionaries (the source's method)."""
    memo: dict = {}

    def update(belief: dict, guess: int, correct: bool) -> tuple[dict, Fraction]:
        p_yes = sum(q * Fraction(c[guess], sum(c)) for c, q in belief.items())
        p = p_yes if correct else 1 - p_yes
        out: dict = {}
        if p == 0:
            return out, p
        for comp, q in belief.items():
            n = sum(comp)
            if correct:
                if comp[guess]:
                    nxt = list(comp)
                    nxt[guess] -= 1
                    key = tuple(nxt)
                    out[key] = out.get(key, 0) + q * Fraction(comp[guess], n) / p
            else:
                rest = n - comp[guess]
                for other, k in enumerate(comp):
                    if other == guess or not k:
                        continue
                    nxt = list(comp)
                    nxt[other] -= 1
                    key = tuple(nxt)
                    weight = q * Fraction(rest, n) * Fraction(k, rest) / p
                    out[key] = out.get(key, 0) + weight
        return out, p

    def value(belief: dict) -> Fraction:
        key = frozenset(belief.items())
        if key in memo:
            return memo[key]
        if sum(next(iter(belief))) == 0:
            return Fraction(0)
        best = Fraction(-1)
        for guess in range(len(deck)):
            yes, p_yes = update(dict(belief), guess, True)
            no, p_no = update(dict(belief), guess, False)
            v = (p_yes * (1 + value(yes)) if p_yes else 0) + (p_no * value(no) if p_no else 0)
            best = max(best, v)
        memo[key] = best
        return best

    return value({tuple(deck): Fraction(1)})


def timed(fn, *args):
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip the slow baseline on (4,4,4)")
    args = ap.parse_args()
    print(f"machine: {platform.machine()}, Python {platform.python_version()}")
    print(f"{'deck':>14} {'strategy':>9} {'value':>28} {'states':>8} {'seconds':>8}")
    for deck in [(3, 3, 3), (4, 4, 4), (4, 4, 4, 4), (5, 5, 5, 5), (6, 6, 6), (5, 3, 2, 1)]:
        for strategy in ("optimal", "greedy"):
            yes_no._arrangements.cache_clear()
            yes_no._rook_polynomial.cache_clear()
            (v, n), t = timed(yes_no.expected_score, yes_no.evaluation(strategy), deck)
            print(f"{str(deck):>14} {strategy:>9} {str(v):>28} {n:>8} {t:>8.3f}")
    decks = [(3, 3, 3)] if args.quick else [(3, 3, 3), (4, 4, 4)]
    for deck in decks:
        v, t = timed(baseline_optimal, deck)
        print(f"{str(deck):>14} {'baseline':>9} {str(v):>28} {'':>8} {t:>8.3f}  (belief dicts)")


if __name__ == "__main__":
    main()
