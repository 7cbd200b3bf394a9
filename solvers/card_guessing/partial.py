"""Yes/no (partial) feedback card guessing: the (c, p) statistic and exact evaluation.

A deck holds ``c_i`` cards of type ``i``; it is shuffled uniformly and before each card the
player names a type and hears only "yes" or "no".  Everything the player knows is the
statistic (c, p): ``c_i`` = cards of type ``i`` not yet confirmed by a yes, ``p_i`` = "no"
answers received when naming ``i`` (Gural, Simper, So 2019, section 2 = seed 000).

The unconfirmed cards fill the past "no" positions (a "no" for ``i`` cannot hold an ``i``)
and the cards still to come.  Every filling consistent with the answers is equally likely,
so probabilities are ratios of *arrangement counts* :func:`arrangements`.

Exact evaluation runs on integers only: for a state and a policy, the *score counts*
``D[k]`` = number of consistent arrangements on which the policy scores ``k`` more points.
Children partition the arrangements (next card = a, or not), so ``D(state)`` is the sum of
the children's counts (the yes child shifted by one) and the expected score is
``sum k D[k] / N``.  No fractions are needed until the very end.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import lru_cache
from math import comb, factorial

Deck = tuple[int, ...]  # c_1..c_r, cards per type
Pairs = tuple[tuple[int, int], ...]  # (c_i, p_i) per type
State = tuple[int, Pairs]  # (cards still to come, pairs)
Guess = int  # index of the named type
Counts = tuple[int, ...]  # D[k]: arrangements on which k more cards are called right


def initial_state(deck: Sequence[int]) -> State:
    """The state before the first guess: nothing confirmed, no "no" heard."""
    return sum(deck), tuple((int(c), 0) for c in deck)


def canonical(state: State) -> State:
    """The state up to relabelling types: sorted pairs, exhausted types dropped."""
    n, pairs = state
    return n, tuple(sorted(pr for pr in pairs if pr[0] > 0))


@lru_cache(maxsize=1 << 20)
def _arrangements(pairs: Pairs) -> int:
    total = sum(c for c, _ in pairs)
    # rook polynomial of the forbidden board: block i is c_i cards x p_i "no" slots
    rook = [1]
    for c, p in pairs:
        block = [comb(c, k) * comb(p, k) * factorial(k) for k in range(min(c, p) + 1)]
        rook = [
            sum(rook[j] * block[k - j] for j in range(len(rook)) if 0 <= k - j < len(block))
            for k in range(len(rook) + len(block) - 1)
        ]
    labelled = sum((-1) ** k * factorial(total - k) * r for k, r in enumerate(rook))
    for c, _ in pairs:
        labelled //= factorial(c)
    return labelled


def arrangements(pairs: Pairs) -> int:
    """Number of type sequences filling the "no" slots and the unseen cards consistently."""
    return _arrangements(tuple(sorted(pr for pr in pairs if pr[0] > 0)))


def after_yes(state: State, a: Guess) -> State:
    """The state after naming type ``a`` and hearing "yes"."""
    n, pairs = state
    c, p = pairs[a]
    return n - 1, pairs[:a] + ((c - 1, p if c > 1 else 0),) + pairs[a + 1 :]


def after_no(state: State, a: Guess) -> State:
    """The state after naming type ``a`` and hearing "no"."""
    n, pairs = state
    c, p = pairs[a]
    return n - 1, pairs[:a] + ((c, p + 1 if c > 0 else 0),) + pairs[a + 1 :]


def yes_counts(state: State) -> list[int]:
    """For each type ``a``: arrangements in which the next card is an ``a``."""
    _, pairs = state
    return [arrangements(after_yes(state, a)[1]) if c > 0 else 0 for a, (c, _) in enumerate(pairs)]


def next_card_probabilities(state: State) -> list[Fraction]:
    """P(next card is type a | c, p) for every type ``a``, exactly."""
    ys = yes_counts(state)
    total = sum(ys)
    return [Fraction(y, total) for y in ys]


def composition_posterior(state: State) -> dict[Deck, Fraction]:
    """The exact posterior over the composition (cards per type) of the cards still to come."""
    n, pairs = state
    total = arrangements(pairs)
    out: dict[Deck, Fraction] = {}
    for comp in _compositions(n, [c for c, _ in pairs]):
        # the other unconfirmed cards fill the past "no" slots, respecting every "no"
        past = tuple((c - k, p) for (c, p), k in zip(pairs, comp, strict=True))
        ways = _multinomial(comp) * arrangements(past)
        if ways:
            out[tuple(comp)] = Fraction(ways, total)
    return out


def _compositions(n: int, caps: Sequence[int]):
    if not caps:
        if n == 0:
            yield []
        return
    for k in range(min(n, caps[0]) + 1):
        for rest in _compositions(n - k, caps[1:]):
            yield [k, *rest]


def _multinomial(ks: Sequence[int]) -> int:
    out, total = 1, 0
    for k in ks:
        total += k
        out *= comb(total, k)
    return out


# ----------------------------------------------------------------------------- evaluation

Chooser = Callable[[State, list[int]], list[Guess]]  # -> the tied guesses to average over


class Evaluation:
    """Exact score counts of a policy from every reachable state, memoised."""

    def __init__(self, chooser: Chooser | None, *, canonical_states: bool):
        self.chooser = chooser  # None: the optimal policy
        self.canonical_states = canonical_states
        self.memo: dict[State, tuple[int, Counts | tuple[Fraction, ...]]] = {}

    def counts(self, state: State) -> tuple[int, Counts]:
        """(N, D): arrangements consistent with ``state`` and their future-score counts."""
        key = canonical(state) if self.canonical_states else state
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        result = self._counts(key)
        self.memo[key] = result
        return result

    def _counts(self, state: State) -> tuple[int, Counts]:
        n, pairs = state
        total = arrangements(pairs)
        if n == 0:
            return total, (total,)
        ys = yes_counts(state)
        if self.chooser is None:
            branches = [self._branch(state, a, ys[a], total) for a, y in enumerate(ys) if y > 0]
            best = max(_score_sum(d) for d in branches)
            # lowest (canonical) index among the maximisers: a fixed, documented choice
            return total, next(d for d in branches if _score_sum(d) == best)
        picks = self.chooser(state, ys)
        if len(picks) == 1:
            return total, self._branch(state, picks[0], ys[picks[0]], total)
        mixed = [Fraction(0)] * (n + 1)
        for a in picks:
            for k, v in enumerate(self._branch(state, a, ys[a], total)):
                mixed[k] += Fraction(v, len(picks))
        return total, tuple(mixed)

    def _branch(self, state: State, a: Guess, n_yes: int, total: int) -> Counts:
        """Score counts when naming ``a``: the yes child shifted by one, plus the no child."""
        d = [0] * (state[0] + 1)
        if n_yes:
            for k, v in enumerate(self.counts(after_yes(state, a))[1]):
                d[k + 1] += v
        if total - n_yes:
            for k, v in enumerate(self.counts(after_no(state, a))[1]):
                d[k] += v
        return tuple(d)


def _score_sum(d: Sequence[int | Fraction]) -> int | Fraction:
    return sum(k * v for k, v in enumerate(d))


def greedy_chooser(tie_break: str) -> Chooser:
    """Name a type most likely to be next; ``tie_break`` picks among equally likely types."""

    def choose(state: State, ys: list[int]) -> list[Guess]:
        best = max(ys)
        tied = [a for a, y in enumerate(ys) if y == best]
        return _break_tie(tied, tie_break)

    return choose


def _break_tie(tied: list[Guess], tie_break: str) -> list[Guess]:
    if tie_break == "lowest":
        return tied[:1]
    if tie_break == "highest":
        return tied[-1:]
    return tied  # "uniform": average over all of them


def score_distribution(deck: Sequence[int], chooser: Chooser | None, *, symmetric: bool):
    """(pmf, n_states): the exact score distribution of a policy on a shuffled ``deck``.

    ``chooser`` None is the optimal policy.  ``symmetric`` policies (those that never look at
    type labels) are memoised on canonical states, the others on labelled states.
    """
    ev = Evaluation(chooser, canonical_states=symmetric)
    total, d = ev.counts(initial_state(deck))
    return [Fraction(v) / total for v in d], len(ev.memo)


def optimal_value(deck: Sequence[int]) -> tuple[Fraction, int]:
    """(best expected score, states visited) for yes/no feedback on a shuffled ``deck``."""
    pmf, n_states = score_distribution(deck, None, symmetric=True)
    return sum(k * q for k, q in enumerate(pmf)), n_states
