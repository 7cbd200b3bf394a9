"""Lower bounds on the cost of a candidate set from its size and weights alone."""

from __future__ import annotations

from solvers.kit.compile_once import njit

INF = 1 << 60  # "no strategy within the guess limit"; every real cost is far smaller
NO_LIMIT = 63  # guesses left when the number of guesses is not limited


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
