"""A candidate set split by the answers to a query: the parts, a partition's hash, whether two
queries split a set alike, and the symmetries a query keeps."""

from __future__ import annotations

import numpy as np

from solvers.kit.compile_once import njit


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
