"""The two conditional entropies of Gural, Simper & So (2019)'s conjecture 3.1 in closed
form, and the valid (n, k, m) of a deck of N distinct cards (the derivation: the family's
docstring, :mod:`solvers.no_repeat`)."""

from __future__ import annotations

import numpy as np


def _log_comb(lf: np.ndarray, n, r):
    """log C(n, r) from a log-factorial table (arrays welcome; -inf outside 0 <= r <= n)."""
    n, r = np.asarray(n), np.asarray(r)
    ok = (r >= 0) & (r <= n)
    nn, rr = np.where(ok, n, 0), np.where(ok, r, 0)
    return np.where(ok, lf[nn] - lf[rr] - lf[nn - rr], -np.inf)


def log_factorials(n_max: int) -> np.ndarray:
    return np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, n_max + 1, dtype=float)))])


def _class_entropy(probs: list[np.ndarray], log_sizes: list[np.ndarray]) -> np.ndarray:
    """sum_j P_j (log size_j - log P_j): entropy of a distribution uniform within classes."""
    out = np.zeros(np.broadcast(*probs).shape)
    for p, s in zip(probs, log_sizes, strict=True):
        safe = np.where(p > 0, p, 1.0)
        out += np.where(p > 0, p * (np.where(p > 0, s, 0.0) - np.log(safe)), 0.0)
    return out


def entropies(N: int, n, k, m, lf: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(H_a, H_b) in nats: conditional entropy of the remaining set after naming a, or b."""
    lf = log_factorials(N) if lf is None else lf
    n, k, m = (np.asarray(x, dtype=np.int64) for x in (n, k, m))
    u = N - k  # cards whose place is unknown
    rest = N - n - 1  # slots still to come after the next card
    free = n - k - m  # past "no" slots that may hold a
    # naming a: yes (a is next) or no (a in a free past slot or still to come)
    p_yes = 1.0 / (u - m)
    h_yes = _log_comb(lf, u - 1, rest)
    q = rest / (u - m - 1)
    h_no = _class_entropy([q, 1 - q], [_log_comb(lf, u - 1, rest - 1), _log_comb(lf, u - 1, rest)])
    h_a = p_yes * h_yes + (1 - p_yes) * h_no
    # naming b: yes (b is next; a to come with probability q) ...
    pb_yes = (u - m - 1) / ((u - 1) * (u - m))
    hb_yes = _class_entropy(
        [q, 1 - q], [_log_comb(lf, u - 2, rest - 1), _log_comb(lf, u - 2, rest)]
    )
    # ... or no: classes by (a to come, b to come); weights in units of (u-2)!
    big_a = (u - 1) + (u - m - 1) * (u - 2)
    w = {
        (1, 1): rest * (rest - 1),
        (1, 0): rest * (n - k),
        (0, 1): rest + free * rest,
        (0, 0): (n - k) + free * (n - k - 1),
    }
    probs = [np.asarray(v / big_a, dtype=float) for v in w.values()]
    sizes = [_log_comb(lf, u - 2, rest - ia - ib) for ia, ib in w]
    hb_no = _class_entropy(probs, sizes)
    h_b = pb_yes * hb_yes + (1 - pb_yes) * hb_no
    return h_a, h_b


def valid_tuples(N: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every valid (n, k, m) for N distinct cards (see the module docstring), as arrays."""
    ns, ks, ms = [], [], []
    for n in range(2, N - 1):
        for k in range(1, min(n, N - 2) + 1):
            if n - k < 1:
                continue
            count = n - k
            ns.append(np.full(count, n))
            ks.append(np.full(count, k))
            ms.append(np.arange(count))
    if not ns:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    return tuple(np.concatenate(x).astype(np.int64) for x in (ns, ks, ms))  # type: ignore[return-value]
