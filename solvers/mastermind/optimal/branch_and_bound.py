"""The depth-first branch and bound over candidate sets (a Numba kernel, :func:`_search`)."""

from __future__ import annotations

import numpy as np

from solvers.kit.compile_once import njit
from solvers.mastermind.optimal.bounds import INF, part_bound
from solvers.mastermind.optimal.memo import _memo_key, _remembered
from solvers.mastermind.optimal.partitions import _parts, _stabilizer
from solvers.mastermind.optimal.queries import (
    _perfect_candidate,
    _same_query,
    _scored_queries,
    _trial_order,
)


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
