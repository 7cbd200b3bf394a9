"""The adaptive-difficulty game as a Markov chain on levels, in exact rational arithmetic.

Levels run from 1 to L = ranks + 1.  After a round at level n the level becomes n + 1 with
probability p(n) (A won) and n - 1 with probability 1 - p(n) (A lost).  The ends need no
special rule: A always wins at level 1 (the first rank to reach k cards makes a k-of-a-kind
before any rank can reach k + 1) and never at level ranks + 1 (there are only ``ranks``
ranks), so the chain reflects at both ends, as in Holmes (2016).  Every step changes the level by
one, so the parity of the level alternates: the chain has period 2.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

Probs = Sequence[Fraction]  # p[n] = P(A wins at level n), index 0 unused
Matrix = list[list[Fraction]]  # rows and columns are levels 1..L (index level - 1)
Dist = list[Fraction]  # probability of each level 1..L (index level - 1)


def check_chain(p: Probs) -> int:
    """The top level L of a chain given p[0..L]; refuses ends that would leave 1..L."""
    top = len(p) - 1
    if top < 2 or p[1] != 1 or p[top] != 0:
        raise ValueError("a chain needs levels 1..L (L >= 2) with p(1) = 1 and p(L) = 0")
    return top


def transition_matrix(p: Probs) -> Matrix:
    """The exact L x L transition matrix: up one level with p(n), down one with 1 - p(n)."""
    top = check_chain(p)
    mat = [[Fraction(0)] * top for _ in range(top)]
    for n in range(1, top + 1):
        if n < top:
            mat[n - 1][n] = p[n]
        if n > 1:
            mat[n - 1][n - 2] = 1 - p[n]
    return mat


# --------------------------------------------------------------------- hitting times


def solve_exact(a: Matrix, b: list[Fraction]) -> list[Fraction]:
    """The solution x of a x = b by Gaussian elimination over the rationals (a invertible)."""
    size = len(a)
    rows = [list(r) + [v] for r, v in zip(a, b, strict=True)]
    for col in range(size):
        pivot = next(r for r in range(col, size) if rows[r][col] != 0)
        rows[col], rows[pivot] = rows[pivot], rows[col]
        head = rows[col]
        for r in range(size):
            if r != col and rows[r][col] != 0:
                f = rows[r][col] / head[col]
                rows[r] = [x - f * y for x, y in zip(rows[r], head, strict=True)]
    return [rows[i][size] / rows[i][i] for i in range(size)]


def hitting_times_to(mat: Matrix, target: int) -> list[Fraction]:
    """Expected rounds to first reach ``target`` from each level 1..L (0 at the target).

    Solves (I - P) x = 1 with the target's row and column deleted, exactly; any chain.
    """
    top = len(mat)
    keep = [i for i in range(top) if i != target - 1]
    a = [[(1 if i == j else 0) - mat[i][j] for j in keep] for i in keep]
    x = solve_exact(a, [Fraction(1)] * len(keep))
    out = [Fraction(0)] * top
    for i, v in zip(keep, x, strict=True):
        out[i] = v
    return out


def step_times(p: Probs) -> tuple[list[Fraction], list[Fraction]]:
    """(up, down): up[n] = E rounds from n to n+1, down[n] = E rounds from n to n-1.

    Birth-death recursions: up[n] = (1 + (1 - p(n)) up[n-1]) / p(n) with up[1] = 1, and
    down[n] = (1 + p(n) down[n+1]) / (1 - p(n)) with down[L] = 1.  Index 0 (and the levels
    where a step is impossible) hold None-like zeros.
    """
    top = check_chain(p)
    up = [Fraction(0)] * (top + 1)
    down = [Fraction(0)] * (top + 2)
    for n in range(1, top):
        up[n] = (1 + (1 - p[n]) * up[n - 1]) / p[n]
    for n in range(top, 1, -1):
        down[n] = (1 + p[n] * down[n + 1]) / (1 - p[n])
    return up, down[: top + 1]


def hitting_times_from(p: Probs, start: int) -> list[Fraction]:
    """Expected rounds to first reach each level 1..L from ``start`` (birth-death sums)."""
    top = check_chain(p)
    up, down = step_times(p)
    out = []
    for target in range(1, top + 1):
        if target >= start:
            out.append(sum(up[start:target], Fraction(0)))
        else:
            out.append(sum(down[target + 1 : start + 1], Fraction(0)))
    return out


# ---------------------------------------------------------------------- distributions


def point_mass(top: int, level: int) -> Dist:
    """The distribution sitting at ``level``."""
    return [Fraction(int(i == level - 1)) for i in range(top)]


def step(p: Probs, dist: Dist) -> Dist:
    """The distribution one round after ``dist``."""
    top = len(dist)
    out = [Fraction(0)] * top
    for i, q in enumerate(dist):
        if q:
            n = i + 1
            if n < top:
                out[i + 1] += q * p[n]
            if n > 1:
                out[i - 1] += q * (1 - p[n])
    return out


def distributions(p: Probs, start: int, rounds: int) -> list[Dist]:
    """The exact distribution of the level after j = 0..rounds rounds from ``start``."""
    top = check_chain(p)
    out = [point_mass(top, start)]
    for _ in range(rounds):
        out.append(step(p, out[-1]))
    return out


def matrix_power_row(mat: Matrix, start: int, rounds: int) -> Dist:
    """Row ``start`` of P^rounds by plain matrix products (the slow check of ``distributions``)."""
    top = len(mat)
    row = [Fraction(int(i == start - 1)) for i in range(top)]
    for _ in range(rounds):
        row = [sum((row[i] * mat[i][j] for i in range(top)), Fraction(0)) for j in range(top)]
    return row


# ------------------------------------------------------------------------ equilibrium


def stationary(p: Probs) -> Dist:
    """The exact stationary distribution: detailed balance pi(n+1)(1-p(n+1)) = pi(n) p(n)."""
    top = check_chain(p)
    weights = [Fraction(1)]
    for n in range(1, top):
        weights.append(weights[-1] * p[n] / (1 - p[n + 1]))
    total = sum(weights)
    return [w / total for w in weights]


def parity_limit(p: Probs, start: int, odd: bool) -> Dist:
    """The limit of the distribution after 2j (odd: 2j + 1) rounds from ``start``, j -> oo.

    The chain has period 2, so the level's parity after j rounds is fixed; the limit is twice
    the stationary distribution on the levels of that parity and 0 elsewhere.
    """
    pi = stationary(p)
    parity = (start + int(odd)) % 2
    return [2 * q if (i + 1) % 2 == parity else Fraction(0) for i, q in enumerate(pi)]


def crossing_level(p: Probs) -> int:
    """The largest level at which A wins with probability at least 1/2."""
    return max(n for n in range(1, len(p)) if p[n] >= Fraction(1, 2))


def mode_level(pi: Dist) -> int:
    """The most likely level under ``pi`` (the lowest one on a tie)."""
    return 1 + max(range(len(pi)), key=lambda i: (pi[i], -i))


def mean_level(pi: Dist) -> Fraction:
    """The expected level under ``pi``."""
    return sum(((i + 1) * q for i, q in enumerate(pi)), Fraction(0))
