"""A game's optimum: the search over first guesses, one first guess or one subtree, and the
decision tree replayed to each code's number of guesses."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numba import types
from numba.typed import Dict

from solvers.mastermind.codes import (
    code_weights,
    feedback_table,
    feedbacks,
    jar_weights,
)
from solvers.mastermind.optimal.bounds import INF, NO_LIMIT, part_bound
from solvers.mastermind.optimal.branch_and_bound import _search
from solvers.mastermind.optimal.memo import KEY, _chosen
from solvers.mastermind.optimal.symmetries import Symmetries, identity_perms


@dataclass(frozen=True)
class Optimum:
    """The optimal strategy's exact totals (weights are the jar's integer code weights)."""

    total: int  # sum over the codes of weight x guesses
    weight: int  # sum of the weights of the codes counted
    guesses: np.ndarray  # guesses needed for each code counted (code order)
    codes: np.ndarray  # indices of the codes counted
    first_guess: int  # index of the optimal first guess
    nodes: int  # candidate sets searched (memo misses with 3 or more codes)
    queries: int  # queries whose partition was scored
    tree_nodes: int  # guesses in the optimal strategy's decision tree

    @property
    def expected(self) -> Fraction:
        """The exact expected number of guesses."""
        return Fraction(self.total, self.weight)


class Searcher:
    """The branch and bound on one game (pegs, colours, jar, guess limit), memo shared."""

    def __init__(self, pegs: int, colours: int, jar: Sequence[object] | None, limit: int | None):
        self.pegs, self.colours = pegs, colours
        self.table = feedback_table(pegs, colours)
        self.weights = np.asarray(code_weights(pegs, colours, jar), dtype=np.int64)
        self.win = len(feedbacks(pegs)) - 1
        self.left = NO_LIMIT if limit is None else limit
        seeds = np.random.default_rng(20261123).integers(0, 2**63, (3, len(self.table)))
        self.zobrist = (seeds.astype(np.uint64) << np.uint64(1)) | np.uint64(1)
        self.exact = Dict.empty(KEY, types.int64)
        self.lower = Dict.empty(KEY, types.int64)
        self.choice = Dict.empty(KEY, types.int64)
        self.stats = np.zeros(2, dtype=np.int64)
        codes = np.array(list(itertools.product(range(colours), repeat=pegs)), dtype=np.int64)
        self.masks = np.bitwise_or.reduce(np.left_shift(1, codes), axis=1).astype(np.int64)
        self.played = 0  # guesses of the decision tree replayed so far
        self.symmetries = Symmetries(pegs, colours, jar_weights(jar, colours))

    def cost(self, s: np.ndarray, bound: int, left: int, perms: np.ndarray) -> int:
        """cost(s) below ``bound`` (else a lower bound >= bound), ``left`` guesses left."""
        return int(
            _search(
                np.ascontiguousarray(s, dtype=np.int32),
                bound,
                left,
                self.table,
                self.weights,
                self.win,
                perms,
                self.masks,
                self.zobrist,
                self.exact,
                self.lower,
                self.choice,
                self.stats,
            )
        )

    def parts(self, q: int, s: np.ndarray) -> list[np.ndarray]:
        """The parts of s by the answer to q, the winning part (if any) left out."""
        labels = self.table[q, s]
        return [s[labels == a] for a in np.unique(labels) if a != self.win]

    def first_guess_total(self, q: int, bound: int = INF) -> int:
        """The least total over all codes when the first guess is q (>= bound: pruned)."""
        s = np.arange(len(self.table))
        perms = self.symmetries.stabilizer([q])
        total = int(self.weights.sum())
        for part in sorted(self.parts(q, s), key=len, reverse=True):
            total += self.cost(part, INF if bound >= INF else bound - total, self.left - 1, perms)
            if total >= bound:
                return total
        return total

    def subtree_total(self, q: int, answer: int) -> tuple[int, np.ndarray]:
        """(least total over the codes answering ``answer`` to first guess q, those codes)."""
        s = np.arange(len(self.table))
        part = s[self.table[q] == answer]
        if answer == self.win:
            return int(self.weights[q]), part
        perms = self.symmetries.stabilizer([q])
        return int(self.weights[part].sum()) + self.cost(part, INF, self.left - 1, perms), part

    def first_guesses(self) -> list[int]:
        """One first guess per symmetry class, in increasing order of their lower bound."""
        s = np.arange(len(self.table))
        total = int(self.weights.sum())
        bounds = []
        for q in self.symmetries.representatives():
            lb = total
            for part in self.parts(int(q), s):
                w = self.weights[part]
                lb += part_bound(
                    len(part), int(w.sum()), int(w.max()), int(w.min()), self.left - 1, self.win
                )
            bounds.append((lb, int(q)))
        return [q for lb, q in sorted(bounds) if lb < INF]

    def guesses(self, s: np.ndarray, left: int, depth: int, out: dict[int, int]) -> None:
        """Fill out[code] = guesses the optimal strategy needs, for the codes of s."""
        if len(s) == 0:
            return
        if len(s) == 1:
            out[int(s[0])] = depth
            self.played += 1
            return
        if len(s) == 2:
            heavy = s[0] if self.weights[s[0]] >= self.weights[s[1]] else s[1]
            out[int(heavy)] = depth
            out[int(s[0] + s[1] - heavy)] = depth + 1
            self.played += 2
            return
        s32 = np.ascontiguousarray(s, dtype=np.int32)
        q = _chosen(s32, left, self.zobrist, self.choice)
        if q < 0:
            self.cost(s, INF, left, identity_perms(len(self.table)))
            q = _chosen(s32, left, self.zobrist, self.choice)
        self.play(int(q), s, left, depth, out)

    def play(self, q: int, s: np.ndarray, left: int, depth: int, out: dict[int, int]) -> None:
        """Fill ``out`` for the codes of s when q is guessed at guess number ``depth``."""
        self.played += 1
        if np.any(s == q):
            out[q] = depth
        for part in self.parts(q, s):
            self.guesses(part, left - 1, depth + 1, out)


def optimum(
    pegs: int,
    colours: int,
    jar: Sequence[object] | None = None,
    guess_limit: int | None = None,
) -> Optimum:
    """The optimal strategy's totals over every code (exact); size limit: see max_codes."""
    search = Searcher(pegs, colours, jar, guess_limit)
    best, best_q = INF, -1
    for q in search.first_guesses():
        total = search.first_guess_total(q, best)
        if total < best:
            best, best_q = total, q
    if best_q < 0:
        raise ValueError(f"no strategy wins every game within {guess_limit} guesses")
    s = np.arange(len(search.table))
    return _finish(search, best, best_q, s, search.left)


def fixed_first_optimum(
    pegs: int, colours: int, jar: Sequence[object] | None, guess_limit: int | None, q: int
) -> Optimum:
    """The optimum over every code when the first guess is q."""
    search = Searcher(pegs, colours, jar, guess_limit)
    total = search.first_guess_total(q)
    if total >= INF:
        raise ValueError(f"no strategy wins every game within {guess_limit} guesses")
    return _finish(search, total, q, np.arange(len(search.table)), search.left)


def subtree_optimum(
    pegs: int,
    colours: int,
    jar: Sequence[object] | None,
    guess_limit: int | None,
    first_guess: int,
    answer: int,
) -> Optimum:
    """The optimum over the codes giving ``answer`` to ``first_guess``, counted from guess 1."""
    search = Searcher(pegs, colours, jar, guess_limit)
    total, part = search.subtree_total(first_guess, answer)
    if total >= INF:
        raise ValueError(f"no strategy wins every game within {guess_limit} guesses")
    return _finish(search, total, first_guess, part, search.left)


def _finish(search: Searcher, total: int, q: int, s: np.ndarray, left: int) -> Optimum:
    """The Optimum of guessing q first on s, with each code's guesses reconstructed."""
    out: dict[int, int] = {}
    search.play(q, s, left, 1, out)
    codes = np.array(sorted(out), dtype=np.int64)
    guesses = np.array([out[c] for c in codes], dtype=np.int64)
    weights = search.weights[codes]
    replayed = int((guesses * weights).sum())
    if replayed != total or len(codes) != len(s):
        raise RuntimeError(f"the optimal strategy replays to {replayed}, not {total}")
    return Optimum(
        total=total,
        weight=int(weights.sum()),
        guesses=guesses,
        codes=codes,
        first_guess=q,
        nodes=int(search.stats[0]),
        queries=int(search.stats[1]),
        tree_nodes=search.played,
    )
