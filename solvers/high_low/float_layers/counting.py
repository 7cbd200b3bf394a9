"""Count vectors counted, in plain Python and NumPy: how many of each length and sum, the
bits of a code's field, the ranking table of :func:`.coding._rank`, where a layer's groups
start.  Sizing a deck (:mod:`.sizes`) reads only these, so checking a task compiles and
imports no kernel."""

from __future__ import annotations

import numpy as np

CODE_BITS = 62  # a count vector's code is an int64: ranks x field_bits(suits) bits at most


def composition_counts(ranks: int, suits: int) -> list[list[int]]:
    """counts[L][m]: count vectors of L entries in 1..suits summing to m (exact integers)."""
    n = ranks * suits
    counts = [[0] * (n + 1) for _ in range(ranks + 1)]
    counts[0][0] = 1
    for length in range(1, ranks + 1):
        for m in range(n + 1):
            counts[length][m] = sum(counts[length - 1][m - v] for v in range(1, min(suits, m) + 1))
    return counts


def field_bits(suits: int) -> int:
    """Bits of one count field of a code (a count 1..suits is stored as count - 1)."""
    return max(1, (suits - 1).bit_length())


def rank_table(ranks: int, suits: int) -> np.ndarray:
    """before[j, t, d]: strings of j digits in 0..suits-1 after a digit below d, the j + 1
    digits summing to t (the ranking table of :func:`.coding._rank`)."""
    top = ranks * (suits - 1)
    cnt = np.zeros((ranks + 1, top + 1), np.int64)
    cnt[0, 0] = 1
    for j in range(1, ranks + 1):
        for t in range(top + 1):
            cnt[j, t] = sum(cnt[j - 1, t - v] for v in range(min(suits - 1, t) + 1))
    before = np.zeros((ranks + 1, top + 1, suits), np.int64)
    for j in range(ranks + 1):
        for t in range(top + 1):
            for d in range(1, suits):
                before[j, t, d] = before[j, t, d - 1] + (cnt[j, t - d + 1] if t >= d - 1 else 0)
    return before


def group_sizes(ranks: int, suits: int) -> np.ndarray:
    """sizes[m, L]: count vectors of length L in layer m."""
    counts = composition_counts(ranks, suits)
    return np.array(counts, np.int64).T.copy()


def layer_bases(sizes: np.ndarray, m: int) -> np.ndarray:
    """bases[L]: where the W of length-L vectors start in layer m; bases[-1]: its size."""
    lengths = np.arange(sizes.shape[1])
    bases = np.zeros(sizes.shape[1] + 1, np.int64)
    bases[1:] = np.cumsum(sizes[m] * lengths)
    return bases
