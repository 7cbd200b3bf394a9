"""Higher/lower with a real deck: ``ranks`` ranks of ``suits`` cards each, so ranks can repeat.

An equal card is scored by the ``ties`` rule: ``lose`` (a wrong call), ``win`` (a right call)
or ``push`` (neither: the card is skipped and becomes the card showing).  A game is *perfect*
when no call is wrong.

Exact state.  Ranks with no card left never matter again, so what the player knows is the
ordered tuple of remaining counts of the ranks below the card showing, the remaining count of
its own rank, and the ordered tuple above (zeros dropped).  Reading the ranks downwards swaps
and reverses the two tuples, so the canonical state is the smaller of the two readings.  Order
inside a tuple matters (the next card splits it); sorted tuples give wrong values (a test shows
this on 3 ranks x 2 suits).

Exact values use integers only: the number of orders of the remaining (labelled) cards on which
the caller never misses.  Sizes: about ``suits * sum_L (L + 1) suits**L / 2`` states
(:func:`estimated_states`); 8 x 4 needs 335,132, the full 13 x 4 deck about 5.7e8.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import permutations

import numpy as np

Counts = tuple[int, ...]  # remaining cards per rank, zeros dropped, in rank order
State = tuple[Counts, int, Counts]  # (below, same rank as the card showing, above)
Ties = str  # "lose", "win" or "push"
Policy = str  # "optimal" or "majority"
TIES: tuple[Ties, ...] = ("lose", "win", "push")


def canonical(state: State) -> State:
    """The state up to reading the ranks in reverse order."""
    below, same, above = state
    return min(state, (above[::-1], same, below[::-1]))


def children(state: State) -> list[tuple[int, str, State]]:
    """(cards, side, next state) for every rank the next card can have; side is a, b or e."""
    below, same, above = state
    mid = (same,) if same else ()
    out = [(c, "a", (below + mid + above[:j], c - 1, above[j + 1 :])) for j, c in enumerate(above)]
    out += [(c, "b", (below[:j], c - 1, below[j + 1 :] + mid + above)) for j, c in enumerate(below)]
    if same:
        out.append((same, "e", (below, same - 1, above)))
    return out


def start_states(ranks: int, suits: int) -> list[State]:
    """The state after the first card is turned up, one per rank of that card."""
    return [((suits,) * i, suits - 1, (suits,) * (ranks - 1 - i)) for i in range(ranks)]


def majority_higher(state: State) -> bool:
    """The majority rule: call "higher" when at least as many cards are above as below."""
    return sum(state[2]) >= sum(state[0])


def perfect_counts(ranks: int, suits: int, ties: Ties, policy: Policy) -> tuple[int, int]:
    """(orders of the whole deck with no wrong call, states solved); exact integers."""
    memo: dict[State, int] = {}
    equal_ok = ties != "lose"
    # the majority rule's tie ("higher") is not mirror-symmetric: no reversal for it
    key_of = canonical if policy == "optimal" else (lambda state: state)

    def count(state: State) -> int:
        key = key_of(state)
        if key in memo:
            return memo[key]
        if not state[0] and not state[2] and state[1] == 0:
            return 1
        higher = lower = 0
        for cards, side, child in children(state):
            v = cards * count(child)
            if side == "a" or (side == "e" and equal_ok):
                higher += v
            if side == "b" or (side == "e" and equal_ok):
                lower += v
        if policy == "optimal":
            best = max(higher, lower)
        else:
            best = higher if majority_higher(state) else lower
        memo[key] = best
        return best

    total = sum(suits * count(s) for s in start_states(ranks, suits))
    return total, len(memo)


def p_perfect(ranks: int, suits: int, ties: Ties = "lose", policy: Policy = "optimal"):
    """(exact P(no wrong call), states solved); size limit: see :func:`estimated_states`."""
    total, states = perfect_counts(ranks, suits, ties, policy)
    return Fraction(total, math.factorial(ranks * suits)), states


def estimated_states(ranks: int, suits: int) -> int:
    """An estimate of the canonical states :func:`perfect_counts` solves (within about 20%)."""
    return max(1, suits * sum((k + 1) * suits**k for k in range(ranks)) // 2)


def right_cards(below: int, same: int, above: int, ties: Ties) -> int:
    """Cards that make the best immediate call right, with these counts below/same/above."""
    return max(below, above) + (same if ties == "win" else 0)


def expected_correct(ranks: int, suits: int, ties: Ties = "lose") -> Fraction:
    """Exact expected right calls, play going on after a miss, best play; any deck size.

    Whatever is called, the next card becomes the card showing, so the best play takes the
    likelier side every time.  Before the k-th call the card showing is a uniform card and the
    m cards still down a uniform m-subset of the others: a multivariate hypergeometric sum.
    """
    n = ranks * suits
    total = Fraction(0)
    for m in range(1, n):
        ways = 0
        for i in range(ranks):
            lo, hi = i * suits, (ranks - 1 - i) * suits
            for s in range(min(suits - 1, m) + 1):
                cs = math.comb(suits - 1, s)
                for b in range(max(0, m - s - hi), min(lo, m - s) + 1):
                    a = m - s - b
                    ways += cs * math.comb(lo, b) * math.comb(hi, a) * right_cards(b, s, a, ties)
        total += Fraction(ways, ranks * math.comb(n - 1, m) * m)
    return total


def expected_correct_dp(ranks: int, suits: int, ties: Ties = "lose") -> Fraction:
    """Expected right calls by the full recursion over states (cross-check; small decks)."""
    memo: dict[State, Fraction] = {}

    def value(state: State) -> Fraction:
        key = canonical(state)
        if key not in memo:
            below, same, above = state
            m = sum(below) + same + sum(above)
            if m == 0:
                return Fraction(0)
            now = Fraction(right_cards(sum(below), same, sum(above), ties), m)
            later = sum((cards * value(child) for cards, _, child in children(state)), Fraction(0))
            memo[key] = now + later / m
        return memo[key]

    return sum((value(s) for s in start_states(ranks, suits)), Fraction(0)) / ranks


def brute_force(ranks: int, suits: int, ties: Ties) -> tuple[Fraction, Fraction]:
    """(optimal P(no wrong call), best expected right calls) by plain game-tree search.

    Explores every order of the labelled cards with the full rank-count vector as the state,
    no canonical form and no memo, counting orders with integers; size limit 8 cards.
    """
    n = ranks * suits
    if n > 8:
        raise ValueError(f"ranks x suits = {n} cards: brute force explores n! orders, limit 8")

    def search(counts: list[int], up: int) -> tuple[int, int]:
        """(orders of the rest with no miss, right calls summed over orders), best calls."""
        m = sum(counts)
        if m == 0:
            return 1, 0
        best_perfect = best_right = -1
        for higher in (True, False):
            perfect = right_sum = 0
            for r, c in enumerate(counts):
                if not c:
                    continue
                if r == up:
                    right, wrong = ties == "win", ties == "lose"
                else:
                    right = (r > up) == higher
                    wrong = not right
                counts[r] -= 1
                sub_perfect, sub_right = search(counts, r)
                counts[r] += 1
                perfect += 0 if wrong else c * sub_perfect
                right_sum += c * (right * math.factorial(m - 1) + sub_right)
            best_perfect, best_right = max(best_perfect, perfect), max(best_right, right_sum)
        return best_perfect, best_right

    perfect = right_sum = 0
    for first in range(ranks):
        counts = [suits] * ranks
        counts[first] -= 1
        sub_perfect, sub_right = search(counts, first)
        perfect += suits * sub_perfect
        right_sum += suits * sub_right
    return Fraction(perfect, math.factorial(n)), Fraction(right_sum, math.factorial(n))


def majority_by_orders(ranks: int, suits: int, ties: Ties) -> Fraction:
    """P(no wrong call) of the majority rule over every order of labelled cards; <= 8 cards."""
    deck = [r for r in range(ranks) for _ in range(suits)]
    if len(deck) > 8:
        raise ValueError(f"{len(deck)} cards: enumerating orders is limited to 8")
    good = total = 0
    for order in permutations(deck):
        ok = True
        for i in range(len(order) - 1):
            up, nxt, rest = order[i], order[i + 1], order[i + 1 :]
            higher = sum(c > up for c in rest) >= sum(c < up for c in rest)
            ok = ties != "lose" if nxt == up else (nxt > up) == higher
            if not ok:
                break
        good += ok
        total += 1
    return Fraction(good, total)


CHUNK = 50_000  # games simulated at once (memory: about 40 x CHUNK x ranks bytes)


def p_perfect_monte_carlo(
    ranks: int, suits: int, ties: Ties, n_games: int, rng: np.random.Generator
) -> tuple[float, float]:
    """(estimate, standard error) of the majority rule's P(no wrong call); any deck size.

    Sequential importance sampling: each game draws its next card only among the cards that
    make the call right and carries the product of the chances of that, an unbiased estimate
    of the probability with far less variance than plain play (perfect games are rare).
    """
    weights = np.concatenate(
        [
            game_weights(ranks, suits, ties, min(CHUNK, n_games - start), rng)
            for start in range(0, n_games, CHUNK)
        ]
    )
    se = float(weights.std(ddof=1) / math.sqrt(n_games)) if n_games > 1 else math.nan
    return float(weights.mean()), se


def game_weights(
    ranks: int, suits: int, ties: Ties, n_games: int, rng: np.random.Generator
) -> np.ndarray:
    """Importance weights of ``n_games`` majority-rule games (their mean estimates P)."""
    idx = np.arange(ranks)
    counts = np.full((n_games, ranks), suits, dtype=np.int64)
    up = rng.integers(ranks, size=n_games)
    rows = np.arange(n_games)
    counts[rows, up] -= 1
    weight = np.ones(n_games)
    for m in range(ranks * suits - 1, 0, -1):
        below_mask = idx < up[:, None]
        above_mask = idx > up[:, None]
        higher = (counts * above_mask).sum(1) >= (counts * below_mask).sum(1)
        right = np.where(higher[:, None], above_mask, below_mask)
        if ties != "lose":
            right |= idx == up[:, None]
        pool = counts * right
        n_right = pool.sum(1)
        weight *= n_right / m
        pool = np.where(n_right[:, None] > 0, pool, counts)  # a lost game just plays on
        cum = np.cumsum(pool, axis=1)
        pick = (cum > rng.random(n_games)[:, None] * cum[:, -1:]).argmax(1)
        counts[rows, pick] -= 1
        up = pick
    return weight
