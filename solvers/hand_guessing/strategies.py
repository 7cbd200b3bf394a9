"""Strategies and the exact evaluation of a strategy over every (or some) answers.

Both strategies guess a hand that is still consistent with every feedback heard (a
candidate) and score it by the partition of the candidates into groups with equal feedback:

- ``min_expected_size``: the sum of squared group sizes (the expected number of candidates
  left, times the number of candidates);
- ``sharma_mittal``: the expected Sharma-Mittal entropy H_{r,t} of the candidate set after the
  feedback, candidates equally likely.  Each group is then uniform, and H_{r,t} of a uniform
  distribution on n outcomes depends on t only, so r never changes a choice (t = 0 gives
  n - 1 per group and ranks guesses exactly as ``min_expected_size``; t = 2 counts groups).

Ties (equal integer scores; float scores within a relative 1e-12) go to the candidate with
the lowest hand index, i.e. the lexicographically smallest sorted card tuple with cards
ordered by rank, then suit.  A searched first guess uses the same score and tie rule over
every hand (computed on the lowest-index hand of each class under suit permutations and
rank reversal: all hands of a class score alike, so the overall winner is such a hand).

The evaluation walks the strategy's decision tree from the first guess, keeping only the
branches that hold a *target* answer (every answer, a contiguous chunk of them, or a random
sample), and returns the number of guesses for every target answer.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from solvers import entropy
from solvers.hand_guessing import table as T
from solvers.hand_guessing.cards import Deck, hand_indices

STRATEGIES = ("min_expected_size", "sharma_mittal")
TIE_RTOL = 1e-12
Scorer = Callable[[np.ndarray], np.ndarray]  # group counts (m, k) -> score per row (lower wins)


@dataclass(frozen=True)
class Rule:
    """How guesses are chosen: strategy, entropy degree t, and the quirks of the published program
    (Juraszek 2014)."""

    strategy: str = "min_expected_size"
    t: float = 1.0
    swapped_scoring: bool = False  # score with feedback(answer=guess, guess=candidate)
    priority: np.ndarray | None = None  # tie order per hand index (lower wins); None: index


def scorer(rule: Rule, n: int) -> Scorer:
    """The scoring function of a rule for partitions of at most ``n`` candidates."""
    if rule.strategy == "min_expected_size":
        return lambda counts: (counts.astype(np.int64) ** 2).sum(axis=1)
    if rule.strategy == "sharma_mittal":
        lookup = entropy.uniform_entropy(np.arange(n + 1), rule.t)
        return lambda counts: (counts * lookup[counts]).sum(axis=1)
    raise ValueError(f"strategy={rule.strategy!r}: unknown; valid: {', '.join(STRATEGIES)}")


def group_counts(c: T.Codes, n_codes: int) -> np.ndarray:
    """counts[i, code]: how many answers give feedback ``code`` to guess row i."""
    m = c.shape[0]
    flat = c.astype(np.int64) + n_codes * np.arange(m, dtype=np.int64)[:, None]
    return np.bincount(flat.ravel(), minlength=m * n_codes).reshape(m, n_codes)


def scores(f: T.Features, guesses: np.ndarray, answers: np.ndarray, rule: Rule) -> np.ndarray:
    """The score of each guess over the partition of ``answers`` (lower is better)."""
    score = scorer(rule, len(answers))
    out = []
    step = max(1, T.BLOCK // max(len(answers), f.n_codes))
    for lo in range(0, len(guesses), step):
        g = guesses[lo : lo + step]
        c = T.codes(f, answers, g).T if rule.swapped_scoring else T.codes(f, g, answers)
        out.append(score(group_counts(c, f.n_codes)))
    return np.concatenate(out)


def best(candidates: np.ndarray, score: np.ndarray, rule: Rule) -> int:
    """The winning hand: least score, ties (see module doc) to the first in tie order."""
    low = score.min()
    if np.issubdtype(score.dtype, np.integer):
        tied = score == low
    else:
        tied = score <= low + TIE_RTOL * max(abs(float(low)), 1.0)
    winners = candidates[tied]
    if rule.priority is None:
        return int(winners[0])
    return int(winners[np.argmin(rule.priority[winners])])


def choose(f: T.Features, candidates: np.ndarray, rule: Rule) -> int:
    """The strategy's guess among ``candidates`` (sorted hand indices)."""
    if len(candidates) <= 2:  # every guess splits two candidates into singletons
        return best(candidates, np.zeros(len(candidates), dtype=np.int64), rule)
    return best(candidates, scores(f, candidates, candidates, rule), rule)


def juraszek_program_order(f: T.Features) -> np.ndarray:
    """Tie order of the source's program: its candidate list order (lower value comes first).

    Its hands are subsets of a deck listed suit by suit, and the subsets that leave out the
    deck's first card come before those that hold it (recursively); its fold keeps the first
    of equal ratings.  Full 52-card deck only.
    """
    h = f.hands.astype(np.int64)
    position = (h % 4) * 13 + h // 4  # the published program's card number
    return np.left_shift(np.int64(1), 51 - position).sum(axis=1)


# ------------------------------------------------------------------------- first guess


def class_minima(deck: Deck, cards: int) -> np.ndarray:
    """Sorted indices of the hands that are the lowest of their symmetry class.

    The symmetries are the permutations of the suits and the reversal of the ranks (which
    swaps lower and higher ranks): they permute the answers, so they keep every score.
    """
    f = T.features(deck, cards)
    h = f.hands.astype(np.int64)
    rank, suit = h // deck.suits, h % deck.suits
    low = np.arange(len(h))
    for r in (rank, deck.ranks - 1 - rank):
        for perm in itertools.permutations(range(deck.suits)):
            moved = np.sort(r * deck.suits + np.asarray(perm)[suit], axis=1)
            low = np.minimum(low, hand_indices(deck, moved))
    return np.flatnonzero(low == np.arange(len(h)))


@lru_cache(maxsize=32)
def searched_first_guess(deck: Deck, cards: int, strategy: str, t: float) -> int:
    """The best first guess over every hand (cached per process; 4 cards: minutes)."""
    f = T.features(deck, cards)
    rule = Rule(strategy, t)
    reps = class_minima(deck, cards)
    return best(reps, scores(f, reps, np.arange(len(f)), rule), rule)


# -------------------------------------------------------------------------- evaluation


@dataclass
class Play:
    """Guesses needed for each target answer, and the tree nodes the walk visited."""

    targets: np.ndarray  # hand indices, sorted
    guesses: np.ndarray  # guesses[i]: guesses needed when the answer is targets[i]
    nodes: int


def feedback_parts(f: T.Features, guess: int, candidates: np.ndarray):
    """(feedback code, the candidates answering ``guess`` with it) for each code met, codes
    ascending, each part's candidates in their order (one stable sort of the codes)."""
    row = T.code_row(f, guess, candidates)
    order = np.argsort(row, kind="stable")
    row, ordered = row[order], candidates[order]
    cuts = np.flatnonzero(np.diff(row)) + 1
    return zip(row[np.r_[0, cuts]], np.split(ordered, cuts), strict=True)


def play(f: T.Features, first: int, rule: Rule, targets: np.ndarray | None = None) -> Play:
    """Walk the decision tree from guess ``first`` over the branches holding ``targets``.

    ``targets``: hand indices to evaluate (None: every hand).  The whole candidate set of a
    node is always used to choose its guess, so a chunk of answers gets the same numbers as
    in the whole tree.
    """
    n = len(f)
    targets = np.arange(n) if targets is None else np.unique(np.asarray(targets))
    is_target = np.zeros(n, dtype=bool)
    is_target[targets] = True
    depth_of = np.zeros(n, dtype=np.int64)
    win = T.win_code(f.cards)
    stack: list[tuple[np.ndarray, int, int | None]] = [(np.arange(n), 1, first)]
    nodes = 0
    while stack:
        candidates, depth, guess = stack.pop()
        if guess is None:
            guess = choose(f, candidates, rule)
        nodes += 1
        for code, part in feedback_parts(f, guess, candidates):
            if code == win:
                depth_of[part] = depth
            elif is_target[part].any():
                stack.append((part, depth + 1, None))
    return Play(targets, depth_of[targets], nodes)


def sample_targets(n_hands: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` distinct hand indices drawn uniformly, sorted."""
    return np.sort(rng.choice(n_hands, size=size, replace=False))


def chunk_targets(n_hands: int, chunk: int, n_chunks: int) -> np.ndarray:
    """The hand indices of chunk ``chunk`` of ``n_chunks`` contiguous, near-equal chunks."""
    lo, hi = chunk * n_hands // n_chunks, (chunk + 1) * n_hands // n_chunks
    return np.arange(lo, hi)


def standard_error(guesses: np.ndarray, population: int) -> float:
    """Standard error of the mean of a sample without replacement (finite-population)."""
    m = len(guesses)
    if m < 2:
        return math.nan
    fpc = (population - m) / (population - 1) if population > 1 else 0.0
    return float(np.std(guesses, ddof=1) / math.sqrt(m) * math.sqrt(fpc))
