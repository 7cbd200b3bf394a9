"""The queries worth trying on a candidate set, scored by the bound of their split, and the
order they are tried in."""

from __future__ import annotations

import numpy as np

from solvers.kit.compile_once import njit
from solvers.mastermind.optimal.bounds import INF, part_bound
from solvers.mastermind.optimal.partitions import _canonical_hash, _same_partition


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
