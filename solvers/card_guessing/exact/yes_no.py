"""Yes/no (partial) feedback card guessing: the (c, p) statistic and exact evaluation.

A deck holds ``c_i`` cards of type ``i``; it is shuffled uniformly and before each card the
player names a type and hears only "yes" or "no".  Everything the player knows is the
statistic (c, p): ``c_i`` = cards of type ``i`` not yet confirmed by a yes, ``p_i`` = "no"
answers received when naming ``i`` (Gural, Simper & So 2019, section 2).

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

from bisect import bisect_left
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import cache, lru_cache
from math import comb, factorial

Deck = tuple[int, ...]  # c_1..c_r, cards per type
Pairs = tuple[tuple[int, int], ...]  # (c_i, p_i) per type
State = tuple[int, Pairs]  # (cards still to come, pairs)
Guess = int  # index of the named type
Counts = tuple[int, ...]  # D[k]: arrangements on which k more cards are called right
Picks = tuple[tuple[Guess, int], ...]  # the guesses made in a state, with their yes-counts


def initial_state(deck: Sequence[int]) -> State:
    """The state before the first guess: nothing confirmed, no "no" heard."""
    return sum(deck), tuple((int(c), 0) for c in deck)


def canonical(state: State) -> State:
    """The state up to relabelling types: sorted pairs, exhausted types dropped."""
    n, pairs = state
    return n, tuple(sorted(pr for pr in pairs if pr[0] > 0))


_FACT = [factorial(i) for i in range(256)]


@cache
def _rook_block(c: int, p: int) -> tuple[int, ...]:
    """Rook numbers of a c x p board: ways to put k non-attacking rooks on it."""
    return tuple(comb(c, k) * comb(p, k) * _FACT[k] for k in range(min(c, p) + 1))


@lru_cache(maxsize=1 << 20)
def _rook_polynomial(pairs: Pairs) -> tuple[int, ...]:
    """Rook numbers of the forbidden board (block i: c_i cards x p_i "no" slots).

    Built from the polynomial of all pairs but the last, which is shared by many states.
    """
    if not pairs:
        return (1,)
    rook = _rook_polynomial(pairs[:-1])
    c, p = pairs[-1]
    if p == 0:
        return rook
    block = _rook_block(c, p)
    out = [0] * (len(rook) + len(block) - 1)
    for j, r in enumerate(rook):
        for k, b in enumerate(block):
            out[j + k] += r * b
    return tuple(out)


@lru_cache(maxsize=1 << 21)
def _arrangements(pairs: Pairs) -> int:
    total = 0
    labels = 1
    for c, _ in pairs:
        total += c
        labels *= _FACT[c]
    rook = _rook_polynomial(pairs)
    # inclusion-exclusion over the rooks, then forget the labels of equal cards
    labelled = sum(_FACT[total - k] * r for k, r in enumerate(rook) if not k & 1)
    labelled -= sum(_FACT[total - k] * r for k, r in enumerate(rook) if k & 1)
    return labelled // labels


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
    """Every list k with 0 <= k_i <= caps_i and sum(k) = n (prefixes that cannot finish are cut)."""
    room = [0] * (len(caps) + 1)  # room[i]: the most the types from i on can still take
    for i in range(len(caps) - 1, -1, -1):
        room[i] = room[i + 1] + caps[i]
    yield from _fill(n, caps, room, 0)


def _fill(n: int, caps: Sequence[int], room: list[int], i: int):
    if i == len(caps):
        if n == 0:
            yield []
        return
    for k in range(max(0, n - room[i + 1]), min(n, caps[i]) + 1):
        for rest in _fill(n - k, caps, room, i + 1):
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
    """Exact evaluation of a policy from every reachable state, memoised.

    ``value(state)`` = (N, S, picks): N consistent arrangements, S = sum of the future scores
    over them (the expected future score is S / N), and the guesses the policy makes there
    with their yes-counts (several when a uniform tie-break averages over them).
    ``counts(state)`` = D with D[k] = arrangements scoring k more; it follows the stored
    picks, so the values are found first.
    """

    def __init__(self, chooser: Chooser | None, *, canonical_states: bool):
        self.chooser = chooser  # None: the optimal policy
        self.canonical_states = canonical_states
        self.memo: dict[State, tuple[int, int | Fraction, Picks]] = {}
        self.memo_counts: dict[State, Counts] = {}

    def yes_child(self, state: State, a: Guess) -> State:
        """The (canonical, if so memoised) state after "yes" to ``a``."""
        if not self.canonical_states:
            return after_yes(state, a)
        n, pairs = state
        c, p = pairs[a]
        return n - 1, _reinsert(pairs, a, (c - 1, p))

    def no_child(self, state: State, a: Guess) -> State:
        """The (canonical, if so memoised) state after "no" to ``a``."""
        if not self.canonical_states:
            return after_no(state, a)
        n, pairs = state
        c, p = pairs[a]
        return n - 1, _reinsert(pairs, a, (c, p + 1))

    def value(self, state: State) -> tuple[int, int | Fraction, Picks]:
        """(N, S, picks) for ``state`` (see the class docstring)."""
        hit = self.memo.get(state)
        if hit is None:
            hit = self.memo[state] = self._value(state)
        return hit

    def _value(self, state: State) -> tuple[int, int | Fraction, Picks]:
        n, pairs = state
        total = _arrangements(pairs) if self.canonical_states else arrangements(pairs)
        if n == 0:
            return total, 0, ()
        ys = self._yes_counts(state)
        if self.chooser is None:
            return (total, *self._best_guess(state, ys, total))
        picks = tuple((a, ys[a]) for a in self.chooser(state, ys))
        sums = [self._score_sum(state, a, y, total) for a, y in picks]
        score_sum = sums[0] if len(sums) == 1 else Fraction(sum(sums), len(sums))
        return total, score_sum, picks

    def _yes_counts(self, state: State) -> list[int]:
        if not self.canonical_states:
            return yes_counts(state)
        ys: list[int] = []
        pairs = state[1]
        for a, pair in enumerate(pairs):  # equal pairs sit together: reuse the last one
            same = a and pairs[a - 1] == pair
            ys.append(ys[-1] if same else _arrangements(self.yes_child(state, a)[1]))
        return ys

    def _score_sum(self, state: State, a: Guess, n_yes: int, total: int) -> int | Fraction:
        """S when naming ``a``: every yes arrangement scores now, plus both children's S."""
        score_sum = n_yes
        if n_yes:
            score_sum += self.value(self.yes_child(state, a))[1]
        if total - n_yes:
            score_sum += self.value(self.no_child(state, a))[1]
        return score_sum

    def _best_guess(self, state: State, ys: list[int], total: int):
        """(S, (guess,)) of the optimal guess; ties go to the lowest (canonical) index."""
        best, best_sum = -1, -1
        for a, y in enumerate(ys):
            if y == 0 or (self.canonical_states and a and state[1][a - 1] == state[1][a]):
                continue  # impossible, or the same as an equal type already tried
            score_sum = self._score_sum(state, a, y, total)
            if score_sum > best_sum:
                best, best_sum = a, score_sum
        return best_sum, ((best, ys[best]),)

    def guess(self, state: State) -> Guess:
        """The policy's guess in a labelled ``state`` (the first pick when several tie)."""
        if not self.canonical_states:
            return self.value(state)[2][0][0]
        key = canonical(state)
        a, _ = self.value(key)[2][0]
        return state[1].index(key[1][a])  # the lowest type in that (c, p) class

    def counts(self, state: State) -> Counts:
        """D[k] = consistent arrangements on which the policy scores k more, from ``state``."""
        hit = self.memo_counts.get(state)
        if hit is not None:
            return hit
        total, _, picks = self.value(state)
        if not picks:
            d: Counts = (total,)
        elif len(picks) == 1:
            d = self._branch_counts(state, *picks[0], total)
        else:
            mixed = [Fraction(0)] * (state[0] + 1)
            for a, y in picks:
                for k, v in enumerate(self._branch_counts(state, a, y, total)):
                    mixed[k] += Fraction(v, len(picks))
            d = tuple(mixed)
        self.memo_counts[state] = d
        return d

    def _branch_counts(self, state: State, a: Guess, n_yes: int, total: int) -> Counts:
        """D when naming ``a``: the yes child's counts shifted by one, plus the no child's."""
        d = [0] * (state[0] + 1)
        if n_yes:
            for k, v in enumerate(self.counts(self.yes_child(state, a))):
                d[k + 1] += v
        if total - n_yes:
            for k, v in enumerate(self.counts(self.no_child(state, a))):
                d[k] += v
        return tuple(d)


def _reinsert(pairs: Pairs, a: int, new: tuple[int, int]) -> Pairs:
    """Sorted ``pairs`` with entry ``a`` replaced by ``new`` (dropped if its count is 0)."""
    rest = pairs[:a] + pairs[a + 1 :]
    if new[0] == 0:
        return rest
    i = bisect_left(rest, new)
    return rest[:i] + (new,) + rest[i:]


def _score_sum(d: Sequence[int | Fraction]) -> int | Fraction:
    return sum(k * v for k, v in enumerate(d))


def greedy_chooser(tie_break: str) -> Chooser:
    """Name a type most likely to be next; ``tie_break`` picks among equally likely types."""

    def choose(state: State, ys: list[int]) -> list[Guess]:
        best = max(ys)
        tied = [a for a, y in enumerate(ys) if y == best]
        return break_tie(tied, tie_break)

    return choose


def break_tie(tied: list[Guess], tie_break: str) -> list[Guess]:
    if tie_break == "lowest":
        return tied[:1]
    if tie_break == "highest":
        return tied[-1:]
    return tied  # "uniform": average over all of them


def evaluation(strategy: str, tie_break: str = "lowest") -> Evaluation:
    """A fresh Evaluation for a named strategy (``optimal`` or ``greedy``)."""
    if strategy == "optimal":
        return Evaluation(None, canonical_states=True)
    if strategy == "greedy":
        return Evaluation(greedy_chooser(tie_break), canonical_states=tie_break == "uniform")
    raise ValueError(f"unknown strategy {strategy!r}")


def score_distribution(ev: Evaluation, deck: Sequence[int]) -> tuple[list[Fraction], int]:
    """(pmf, n_states): the exact score distribution of ``ev``'s policy on a shuffled ``deck``.

    n_states counts the states whose value was computed.
    """
    start = _start(ev, deck)
    total = ev.value(start)[0]
    n_states = len(ev.memo)
    return [Fraction(v) / total for v in ev.counts(start)], n_states


def expected_score(ev: Evaluation, deck: Sequence[int]) -> tuple[Fraction, int]:
    """(expected score, n_states) of ``ev``'s policy on a shuffled ``deck``, exactly."""
    total, score_sum, _ = ev.value(_start(ev, deck))
    return Fraction(score_sum) / total, len(ev.memo)


def _start(ev: Evaluation, deck: Sequence[int]) -> State:
    start = initial_state(deck)
    return canonical(start) if ev.canonical_states else start


def optimal_value(deck: Sequence[int]) -> tuple[Fraction, int]:
    """(best expected score, states visited) for yes/no feedback on a shuffled ``deck``."""
    return expected_score(evaluation("optimal"), deck)
