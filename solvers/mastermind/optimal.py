"""The optimal Mastermind strategy: least expected number of guesses, by branch and bound.

The cost of a set S of candidate codes (jar-weighted, integer weights w) is the least total
``sum over s in S of w(s) * guesses(s)`` over every strategy, counted from the next guess on:

    cost(S) = W(S) + min over queries q of  sum over answers a != win of  cost(S_a(q))

where W(S) is the weight of S and S_a(q) the codes of S that answer a to q.  Any code may be
played (not only a still-feasible one).  This is the expected-case optimum that Koyama & Lai
(1993), *An optimal Mastermind strategy*, computed for 4 pegs and 6 colours (5625 guesses over
the 1296 codes) and Ville (2013), *An optimal mastermind (4,7) strategy and more results in
the expected case*, for 4 pegs and 7 colours, both by depth-first search with pruning.

The search here (a Numba kernel) is a depth-first branch and bound:

* a lower bound on cost(S) from the size and weights of S alone: one code can be won with the
  next guess, at most b with the guess after (b = number of non-winning answers), at most b^2
  with the third..., the heaviest codes first (:func:`part_bound`);
* every query is first scored by the sum of its parts' bounds; queries are tried in increasing
  order of that bound and the search stops at the first whose bound reaches the best cost
  found; a part is searched only with the budget the best cost leaves it;
* queries that split S into the same parts (same partition, same winning code) are tried once;
  queries that neither split S nor can win are never tried; a colour in no code of S ("dead")
  answers nothing wherever it is played, so only the least dead colour is ever played;
* a code of S that every other code of S answers differently, and that is the heaviest, meets
  the bound: it is taken without looking at the other queries;
* symmetry: a permutation of the positions together with a permutation of equally weighted
  colours that maps every guess played so far to itself maps S to itself, so of the queries it
  maps onto each other only one is tried (the classic pruning of Koyama & Lai; here at every
  depth, as long as the history keeps a non-trivial symmetry);
* memoisation: the cost of a candidate set (keyed by a 128-bit hash of its codes and the guesses
  left) is stored once known, and a proven lower bound when the search of it was cut off.

A ``guess_limit`` bounds the number of guesses of every game (Koyama & Lai's 5626 for at most
five guesses on 4 x 6).  :func:`brute_force_cost` is the plain recursion without any pruning,
used by the tests as the reference on small games.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

import numpy as np
from numba import types
from numba.typed import Dict

from solvers.kit.compile_once import njit
from solvers.mastermind.rules import (
    code_weights,
    feedback_table,
    feedbacks,
    jar_weights,
)

INF = 1 << 60  # "no strategy within the guess limit"; every real cost is far smaller
NO_LIMIT = 63  # guesses left when the number of guesses is not limited
KEY = types.UniTuple(types.uint64, 3)


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


# ----------------------------------------------------------------------------- bounds


@njit(cache=True, nogil=True)
def part_bound(m: int, w_sum: int, w_max: int, w_min: int, left: int, b: int) -> int:
    """Lower bound on the cost of m codes with ``left`` guesses left (INF: not enough)."""
    if m == 0:
        return 0
    if left <= 0:
        return INF
    if m == 1:
        return w_sum
    if left == 1:
        return INF
    bound = 2 * w_sum - w_max  # one code may be won at once, all others need a second guess
    beyond = m - 1 - b  # codes the next two guesses cannot all win
    level, capacity = 3, b * b
    while beyond > 0:
        if level > left:
            return INF
        bound += beyond * w_min
        beyond -= capacity
        capacity *= b
        level += 1
    return bound


@njit(cache=True, nogil=True)
def _canonical_hash(row: np.ndarray, s: np.ndarray, win: int, z: np.ndarray) -> np.uint64:
    """Hash of the partition of s by row (labels renumbered by first occurrence, win = 0)."""
    rename = np.full(win + 1, -1, np.int64)
    rename[win] = 0
    nxt = 1
    h = np.uint64(0)
    for i in range(s.size):
        lab = row[s[i]]
        if rename[lab] < 0:
            rename[lab] = nxt
            nxt += 1
        h += np.uint64(rename[lab] + 1) * z[i]
    return h


@njit(cache=True, nogil=True)
def _same_partition(row_a: np.ndarray, row_b: np.ndarray, s: np.ndarray, win: int) -> bool:
    """Whether two queries split s into the same parts with the same winning code."""
    ab = np.full(win + 1, -1, np.int64)
    ba = np.full(win + 1, -1, np.int64)
    for i in range(s.size):
        a, b = row_a[s[i]], row_b[s[i]]
        if (a == win) != (b == win):
            return False
        if ab[a] < 0 and ba[b] < 0:
            ab[a], ba[b] = b, a
        elif ab[a] != b or ba[b] != a:
            return False
    return True


# ----------------------------------------------------------------------------- search


@njit(cache=True, nogil=True)
def _search(
    s, bound, left, table, weights, win, perms, masks, zobrist, exact, lower, choice, stats
) -> int:
    """cost(s) if it is below ``bound``, else a lower bound >= ``bound`` (INF: infeasible).

    s: the candidate codes (int32 indices), ``left`` guesses left; the game: table[query, code]
    the answer's id, the codes' integer weights, win the winning answer's id (= the number of
    other answers), each code's colours as a bit mask, zobrist (3, codes) odd random words;
    perms: the symmetries that fix every guess played so far (code permutations, one a row);
    the memo (keyed by :func:`_memo_key`): exact costs, proven lower bounds, chosen queries;
    stats: [sets searched, queries scored], counted up.
    """
    w_sum, w_max, w_min = _weight_range(s, weights)
    if s.size <= 2 or left <= 1:
        return _small_cost(s.size, w_sum, w_min, left)
    key = _memo_key(s, left, zobrist)
    if key in exact:
        return exact[key]
    known = lower.get(key, 0)
    if known >= bound:
        return known
    stats[0] += 1
    best, best_q = bound, -1
    # a candidate answered differently by every other code is the best guess once it is the
    # heaviest: every other code then needs exactly one more guess (the bound)
    q, w_q = _perfect_candidate(s, table, weights, win)
    if q >= 0 and 2 * w_sum - w_q < bound:
        best, best_q = 2 * w_sum - w_q, q
        if w_q == w_max:
            return _remembered(key, best, best_q, known, bound, exact, lower, choice)
    q_ids, q_lb, q_hash = _scored_queries(
        s, left, table, weights, win, perms, masks, zobrist, w_sum, stats
    )
    count = np.zeros(win + 1, np.int64)  # codes per answer to the query tried
    prev = -1
    for j in _trial_order(q_lb, q_hash):
        if q_lb[j] >= best:
            break
        if prev >= 0 and _same_query(prev, j, q_ids, q_lb, q_hash, table, s, win):
            continue
        prev = j
        q = q_ids[j]
        members, start = _parts(table[q], s, count)
        sub_perms = _stabilizer(perms, q)
        partial = q_lb[j]
        for a in np.argsort(-count[:win]):
            if count[a] <= 2:
                break  # parts of one or two codes: their bound is their cost
            part = members[start[a] : start[a + 1]]
            w_part, w_hi, w_lo = _weight_range(part, weights)
            part_lb = part_bound(count[a], w_part, w_hi, w_lo, left - 1, win)
            cost = _search(
                part,
                best - partial + part_lb,
                left - 1,
                table,
                weights,
                win,
                sub_perms,
                masks,
                zobrist,
                exact,
                lower,
                choice,
                stats,
            )
            if cost >= INF:
                partial = INF
                break
            partial += cost - part_lb
            if partial >= best:
                break
        if partial < best:
            best, best_q = partial, q
    return _remembered(key, best, best_q, known, bound, exact, lower, choice)


@njit(cache=True, nogil=True)
def _weight_range(s: np.ndarray, weights: np.ndarray) -> tuple[int, int, int]:
    """(total, heaviest, lightest) weight of the codes of s."""
    w_sum, w_max, w_min = 0, 0, INF
    for i in range(s.size):
        w = weights[s[i]]
        w_sum += w
        w_max = max(w_max, w)
        w_min = min(w_min, w)
    return w_sum, w_max, w_min


@njit(cache=True, nogil=True)
def _small_cost(m: int, w_sum: int, w_min: int, left: int) -> int:
    """cost of a set of m codes when m <= 2 or at most one guess is left (INF: infeasible)."""
    if m == 1:
        return w_sum if left >= 1 else INF
    if left <= 1:
        return INF
    return w_sum + w_min  # two codes: guess the heavier, then the other


# ------------------------------------------------------------------------------ memo


@njit(cache=True, nogil=True)
def _memo_key(s: np.ndarray, left: int, zobrist: np.ndarray) -> tuple:
    """The memo's key of the candidate set s with ``left`` guesses left: two 64-bit Zobrist
    hashes of its codes and ``left``."""
    h1, h2 = np.uint64(0), np.uint64(0)
    for i in range(s.size):
        h1 += zobrist[0, s[i]]
        h2 += zobrist[1, s[i]]
    return (h1, h2, np.uint64(left))


@njit(cache=True, nogil=True)
def _remembered(
    key: tuple,
    best: int,
    best_q: int,
    known: int,
    bound: int,
    exact: Dict,
    lower: Dict,
    choice: Dict,
) -> int:
    """The outcome of a search, stored: its cost and query if a query beat the bound, else the
    proven lower bound."""
    if best_q >= 0:
        exact[key] = best
        choice[key] = best_q
        return best
    lower[key] = max(known, bound)
    return max(known, bound)


@njit(cache=True, nogil=True)
def _chosen(s: np.ndarray, left: int, zobrist: np.ndarray, choice: Dict) -> int:
    """The optimal query stored for the candidate set s with ``left`` guesses left, or -1."""
    return choice.get(_memo_key(s, left, zobrist), -1)


# ------------------------------------------------------------------------ queries


@njit(cache=True, nogil=True)
def _scored_queries(
    s: np.ndarray,
    left: int,
    table: np.ndarray,
    weights: np.ndarray,
    win: int,
    perms: np.ndarray,
    masks: np.ndarray,
    zobrist: np.ndarray,
    w_sum: int,
    stats: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(queries worth trying on s, the lower bound of each, the hash of its partition of s), in
    query order: one query per symmetry orbit, no dead colour but the least, none that learns
    nothing or cannot finish within the guesses left."""
    n, k = table.shape[0], perms.shape[0]
    q_ids = np.empty(n, np.int64)
    q_lb = np.empty(n, np.int64)
    q_hash = np.empty(n, np.uint64)
    count = np.zeros(win + 1, np.int64)
    mass = np.zeros(win + 1, np.int64)
    heavy = np.zeros(win + 1, np.int64)
    light = np.zeros(win + 1, np.int64)
    other_dead = _dead_but_least(s, masks)
    found = 0
    for q in range(n):
        if masks[q] & other_dead or k > 1 and not _least_of_orbit(perms, q):
            continue
        row = table[q]
        count[:] = 0
        mass[:] = 0
        heavy[:] = 0
        light[:] = INF
        for i in range(s.size):
            lab = row[s[i]]
            w = weights[s[i]]
            count[lab] += 1
            mass[lab] += w
            heavy[lab] = max(heavy[lab], w)
            light[lab] = min(light[lab], w)
        lb = _split_bound(count, mass, heavy, light, w_sum, left)
        if lb >= INF:
            continue
        stats[1] += 1
        q_ids[found] = q
        q_lb[found] = lb
        q_hash[found] = _canonical_hash(table[q], s, win, zobrist[2])
        found += 1
    return q_ids[:found], q_lb[:found], q_hash[:found]


@njit(cache=True, nogil=True)
def _dead_but_least(s: np.ndarray, masks: np.ndarray) -> int:
    """The bit mask of the colours in no code of s ("dead"), the least of them left out.

    A dead colour answers nothing wherever it is played: a query with a dead colour other
    than the least one splits s exactly as the query with the least dead colour in its place
    (whether such a colour is equally weighted or not: the partition of s has no weights)."""
    alive = 0
    for i in range(s.size):
        alive |= masks[s[i]]
    dead = ~alive & _all_colours(masks)
    return dead & ~(dead & -dead)


@njit(cache=True, nogil=True)
def _all_colours(masks: np.ndarray) -> int:
    """The bit mask of every colour (the union of the codes' colour masks)."""
    out = 0
    for x in masks:
        out |= x
    return out


@njit(cache=True, nogil=True)
def _least_of_orbit(perms: np.ndarray, q: int) -> bool:
    """Whether no symmetry of perms maps q to a lower code."""
    for g in range(perms.shape[0]):  # noqa: SIM110 (a loop: no generator in the kernel)
        if perms[g, q] < q:
            return False
    return True


@njit(cache=True, nogil=True)
def _split_bound(
    count: np.ndarray, mass: np.ndarray, heavy: np.ndarray, light: np.ndarray, w_sum: int, left: int
) -> int:
    """Lower bound on cost(s) when the next query splits s into parts of count[a] codes, of
    total weight mass[a], heaviest heavy[a] and lightest light[a] for each answer a (the last
    one the win); >= INF: the query learns nothing, or a part cannot be won in time."""
    win = count.size - 1
    if count[win] == 0:
        parts = 0
        for a in range(win):
            parts += count[a] > 0
        if parts <= 1:
            return INF
    lb = w_sum
    for a in range(win):
        lb += part_bound(count[a], mass[a], heavy[a], light[a], left - 1, win)
    return lb


@njit(cache=True, nogil=True)
def _trial_order(q_lb: np.ndarray, q_hash: np.ndarray) -> np.ndarray:
    """The order queries are tried in: increasing bound, equal partitions next to each other."""
    by_hash = np.argsort(q_hash, kind="mergesort")
    return by_hash[np.argsort(q_lb[by_hash], kind="mergesort")]


@njit(cache=True, nogil=True)
def _same_query(
    i: int,
    j: int,
    q_ids: np.ndarray,
    q_lb: np.ndarray,
    q_hash: np.ndarray,
    table: np.ndarray,
    s: np.ndarray,
    win: int,
) -> bool:
    """Whether scored queries i and j split s into the same parts with the same winning code."""
    return (
        q_lb[i] == q_lb[j]
        and q_hash[i] == q_hash[j]
        and _same_partition(table[q_ids[i]], table[q_ids[j]], s, win)
    )


@njit(cache=True, nogil=True)
def _perfect_candidate(
    s: np.ndarray, table: np.ndarray, weights: np.ndarray, win: int
) -> tuple[int, int]:
    """(the heaviest code of s that every other code of s answers differently, its weight);
    (-1, 0) if there is none (always when s has more codes than there are answers).  Ties go
    to the lowest code."""
    best, best_w = -1, 0
    if s.size > win + 1:
        return best, best_w
    seen = np.zeros(win + 1, np.int64)
    for j in range(s.size):
        q = s[j]
        if weights[q] <= best_w:
            continue
        seen[:] = 0
        ok = True
        for i in range(s.size):
            lab = table[q, s[i]]
            seen[lab] += 1
            if seen[lab] > 1:
                ok = False
                break
        if ok:
            best, best_w = q, weights[q]
    return best, best_w


# ------------------------------------------------------------------------ partitions


@njit(cache=True, nogil=True)
def _parts(row: np.ndarray, s: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the codes of s grouped by answer, where each answer's group starts): the codes
    answering a are members[start[a] : start[a + 1]], in their order in s; count[a] (for
    every answer, win included) is set to their number."""
    count[:] = 0
    for i in range(s.size):
        count[row[s[i]]] += 1
    start = np.zeros(count.size + 1, np.int64)
    for a in range(count.size):
        start[a + 1] = start[a] + count[a]
    members = np.empty(s.size, s.dtype)
    fill = start[:-1].copy()
    for i in range(s.size):
        lab = row[s[i]]
        members[fill[lab]] = s[i]
        fill[lab] += 1
    return members, start


@njit(cache=True, nogil=True)
def _stabilizer(perms: np.ndarray, q: int) -> np.ndarray:
    """The symmetries of perms that map q to itself (perms itself if it is the trivial group)."""
    k = perms.shape[0]
    if k == 1:
        return perms
    keep = 0
    for g in range(k):
        keep += perms[g, q] == q
    sub_perms = np.empty((keep, perms.shape[1]), perms.dtype)
    keep = 0
    for g in range(k):
        if perms[g, q] == q:
            sub_perms[keep] = perms[g]
            keep += 1
    return sub_perms


# ------------------------------------------------------------------------- symmetries


class Symmetries:
    """The game's symmetries: a permutation of the positions with a permutation of colours.

    Only colours of equal jar weight may be exchanged.  The group is kept as its two factors
    (pegs! position and prod(class size!) colour permutations); code permutations are built
    only for the subgroup that fixes given codes (:meth:`stabilizer`).
    """

    def __init__(self, pegs: int, colours: int, jar_w: Sequence[int]):
        self.codes = np.array(list(itertools.product(range(colours), repeat=pegs)), np.int64)
        self.place = colours ** np.arange(pegs - 1, -1, -1, dtype=np.int64)
        self.positions = np.array(list(itertools.permutations(range(pegs))), dtype=np.int64)
        classes: dict[int, list[int]] = {}
        for c, w in enumerate(jar_w):
            classes.setdefault(w, []).append(c)
        perms = []
        for choice in itertools.product(*(itertools.permutations(v) for v in classes.values())):
            sigma = np.arange(colours)
            for members, image in zip(classes.values(), choice, strict=True):
                sigma[list(members)] = image
            perms.append(sigma)
        self.colours = np.array(perms, dtype=np.int64)
        self.dtype = np.int16 if len(self.codes) < 2**15 else np.int32

    def images_of(self, code: int) -> np.ndarray:
        """(colour perms, position perms): the index of the image of one code under each."""
        moved = self.codes[code][self.positions]  # (position perms, pegs)
        return self.colours[:, moved] @ self.place

    def representatives(self) -> np.ndarray:
        """The codes that are the least of their orbit, in increasing order."""
        seen = np.zeros(len(self.codes), dtype=bool)
        reps = []
        for c in range(len(self.codes)):
            if not seen[c]:
                reps.append(c)
                seen[self.images_of(c).ravel()] = True
        return np.array(reps, dtype=np.int64)

    def stabilizer(self, fixed: Sequence[int]) -> np.ndarray:
        """(elements, codes): code permutations of the symmetries fixing every code in fixed."""
        keep = np.ones((len(self.colours), len(self.positions)), dtype=bool)
        for q in fixed:
            keep &= self.images_of(q) == q
        out = [
            self.colours[ci][self.codes[:, self.positions[pi]]] @ self.place
            for ci, pi in zip(*np.nonzero(keep), strict=True)
        ]
        return np.ascontiguousarray(np.array(out, dtype=self.dtype))


def identity_perms(n: int) -> np.ndarray:
    """The trivial group on n codes, as one row of code permutations."""
    return np.arange(n, dtype=np.int16 if n < 2**15 else np.int32)[None, :]


# ------------------------------------------------------------------------------ driver


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


# ------------------------------------------------------------------ brute-force reference


def brute_force_cost(
    pegs: int, colours: int, jar: Sequence[object] | None = None, guess_limit: int | None = None
) -> int:
    """The least total by plain recursion over every query at every node (no pruning).

    Only for tiny games (a few dozen codes): it tries every code as every guess.
    """
    table = feedback_table(pegs, colours)
    weights = code_weights(pegs, colours, jar)
    win = len(feedbacks(pegs)) - 1
    n = len(table)

    @cache
    def cost(s: frozenset[int], left: int) -> float:
        if left == 0:
            return math.inf
        best = math.inf
        for q in range(n):
            parts: dict[int, list[int]] = {}
            for c in s:
                parts.setdefault(int(table[q, c]), []).append(c)
            if len(parts) == 1 and win not in parts:
                continue  # learns nothing: never part of an optimal strategy
            sub = sum(cost(frozenset(p), left - 1) for a, p in parts.items() if a != win)
            best = min(best, sub)
        return sum(weights[c] for c in s) + best

    value = cost(frozenset(range(n)), NO_LIMIT if guess_limit is None else guess_limit)
    return INF if math.isinf(value) else int(value)
