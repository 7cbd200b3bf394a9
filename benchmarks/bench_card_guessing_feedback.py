"""Benchmark: card guessing with complete and no feedback, and the entropy bounds.

Times the exact complete-feedback distribution (integer score counts on sorted compositions)
for 52-card decks, its second exact path (per-step success chances, Fractions), the entropy
bounds, and the exact no-feedback distributions.  Prints one line per case.

Run: python benchmarks/bench_card_guessing_feedback.py [--quick]
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable
from typing import Any

from solvers.card_guessing.exact import complete_feedback, entropy_bounds, no_feedback

SUITS = (13, 13, 13, 13)
RANKS = (4,) * 13


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """(best wall time in seconds over ``repeat`` runs, the last result)."""
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repeat, smaller decks")
    args = parser.parse_args()
    repeat = 1 if args.quick else 3
    decks = [(3, 3, 3), (4, 4, 4, 4)] + ([] if args.quick else [SUITS, RANKS, (26, 26)])
    print(f"python {platform.python_version()} on {platform.machine()}, best of {repeat}")
    print(f"{'deck':<28}{'case':<34}{'seconds':>10}  result")
    for deck in decks:
        name = f"({','.join(map(str, deck))})" if len(deck) < 6 else f"{len(deck)} types of 4"
        t, (pmf, n_states) = timed(lambda d=deck: complete_feedback.score_distribution(d), repeat)
        mean = sum(k * q for k, q in enumerate(pmf))
        print(f"{name:<28}{'complete: score counts (pmf)':<34}{t:>10.4f}  {float(mean):.6f}")
        print(f"{'':<28}{'  states (sorted compositions)':<34}{'':>10}  {n_states}")
        t, value = timed(lambda d=deck: complete_feedback.expected_score(d), repeat)
        print(f"{'':<28}{'complete: step chances (Fraction)':<34}{t:>10.4f}  {float(value):.6f}")
        t, b = timed(lambda d=deck: entropy_bounds.score_bounds(d), repeat)
        shown = f"[{b.lower:.4f} (chords {b.lower_chords:.4f}), {b.upper:.4f}]"
        print(f"{'':<28}{'entropy bounds (bisection 1e-12)':<34}{t:>10.4f}  {shown}")
        cycle = no_feedback.guess_counts(no_feedback.named_sequence("cycle", deck), len(deck))
        t, pmf = timed(lambda d=deck, m=cycle: no_feedback.score_distribution(d, m), repeat)
        mean = sum(k * q for k, q in enumerate(pmf))
        print(f"{'':<28}{'none: cycle sequence pmf':<34}{t:>10.4f}  {float(mean):.6f}")
    deck = (13, 13, 13, 13) if not args.quick else (3, 3, 3)
    tied = list(range(len(deck)))
    t, pmf = timed(lambda: no_feedback.mixed_score_distribution(deck, tied), 1)
    print(f"{str(deck):<28}{'none: uniform ties (mixture)':<34}{t:>10.4f}  {len(pmf) - 1} cards")


if __name__ == "__main__":
    main()
