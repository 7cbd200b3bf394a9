"""A uniform deck (r types of m cards) solved in one process: two layers' values in memory.

Backward over the layers of the rank space (ranks.py), each a plain array indexed by rank:
optimal play, greedy with ties to the smallest (c, p) pair (within a window), or persistent
play (values.py); then the policy's score distribution forward.  The same values as
any_deck/ to 1e-12 (tests; any_deck/ is tested against the exact rational solver
exact/yes_no.py).  any_deck/ packs a state into a 63-bit key and so stops at 7 types of 4;
ranks have no such limit: memory is (see :func:`estimated_bytes`), and out_of_core.py runs the
same solve with its layers on disk.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from solvers.card_guessing.uniform_deck import last_layer, values
from solvers.card_guessing.uniform_deck.ranks import (
    CHUNK,
    POLICIES,
    Codes,
    codes,
    kernel,
    log_factorials,
)
from solvers.kit.compile_once import read_only
from solvers.kit.compiled import ctrl_c_held

VALUE_BYTES = 24  # log A, E[future], E[future^2] per state of a layer
Progress = Callable[[str], None]


def estimated_bytes(deck: Sequence[int], with_pmf: bool = True) -> int:
    """Peak bytes of arrays :func:`solve` holds: two layers' values, and for the score's
    distribution a code per state of every layer and the last layer's log A."""
    sizes = codes(deck).sizes
    pairs = max(int(sizes[i]) + int(sizes[i + 1]) for i in range(sizes.size - 1))
    extra = int(sizes.sum()) + 9 * int(sizes[-1]) if with_pmf else 2 * int(sizes[-1])
    return VALUE_BYTES * pairs + extra


# ------------------------------------------------------------------ the last layer: log A


def last_layer_log_counts(cd: Codes) -> np.ndarray:
    """log A of every rank of the last layer (-inf where infeasible), in order of T."""
    n = cd.n_cards
    size = int(cd.sizes[n])
    args = cd.kernel_args()
    with ctrl_c_held():
        unconfirmed = last_layer.unconfirmed(n, 0, size, *args)
    logs = np.full(size, -np.inf)
    logf = log_factorials(n)
    for t in range(n + 1):
        with ctrl_c_held():
            last_layer.pass_logs(t, 0, unconfirmed, read_only(logs), logs, *args, logf)
    return logs


# ------------------------------------------------------------ the score distribution


@kernel
def _add_paths(layer, best, paths, npaths, m, r, big, weight, eq, le, offsets, n_p, refused):
    """Add each state's policy path count to its yes and no children in ``npaths``, in the
    order values.policy_edges lists them (a chunk of ranks at a time, to hold little)."""
    for lo in range(0, paths.size, CHUNK):
        hi = min(paths.size, lo + CHUNK)
        children, counts = values.policy_edges(layer, lo, best[lo:hi], paths[lo:hi], m, r, big,
                                               weight, eq, le, offsets, n_p, refused)  # fmt: skip
        for k in range(children.size):
            npaths[children[k]] += counts[k]


def policy_pmf(cd: Codes, bests: list, last_logs: np.ndarray) -> list[float]:
    """P(final score = k), k = 0..N, of the policy ``bests`` (a chosen position per rank).

    P(reach s) = paths(s) A(s) / A(start) (the products of probabilities telescope;
    any_deck/optimal.py);
    the score of a last-layer state is N - T.  Consumes ``bests``.
    """
    n = cd.n_cards
    args = (*cd.rank_args(), cd.n_p, cd.refused)
    paths = np.ones(1)
    for layer in range(n):
        npaths = np.zeros(int(cd.sizes[layer + 1]))
        with ctrl_c_held():
            _add_paths(layer, bests[layer], paths, npaths, *args)
        bests[layer] = None
        paths = npaths
    with ctrl_c_held():
        unconfirmed = last_layer.unconfirmed(n, 0, paths.size, *cd.kernel_args())
    hit = (paths > 0) & (last_logs > -np.inf)
    logf = log_factorials(n)
    log_start = logf[n] - cd.r * logf[cd.m]
    prob = np.exp(np.log(paths[hit]) + last_logs[hit] - log_start)
    return np.bincount(
        n - unconfirmed[hit].astype(np.int64), weights=prob, minlength=n + 1
    ).tolist()


# ------------------------------------------------------------------------------ the solve


@dataclass
class Solution:
    """A ranked solve: expected score, variance, states, and the score's distribution."""

    expected_score: float
    score_variance: float
    n_states: int  # feasible canonical states (reachable or not) over all layers
    rank_space: int  # ranks allotted over all layers (feasible or not)
    layer_sizes: list[int] = field(default_factory=list)  # feasible states per layer
    score_pmf: list[float] | None = None
    # the first layers' (log A, E[future], chosen position) by rank, when asked for
    # (``keep_layers``): what decision_tree.py draws the first moves from
    top_layers: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)


def solve(
    deck: Sequence[int],
    policy: str = "optimal",
    with_pmf: bool = True,
    progress: Progress | None = None,
    window: float = 0.0,
    keep_layers: int = 0,
) -> Solution:
    """The expected score (and variance, and pmf) of the optimal or greedy-by-pairs policy
    (see values.py; ``window`` in [0, 1)) on a uniform ``deck``, in floats; memory about
    :func:`estimated_bytes`.  ``keep_layers``: keep layers 0 .. keep_layers - 1 whole
    (:attr:`Solution.top_layers`)."""
    cd = codes(deck)
    n = cd.n_cards
    args = cd.kernel_args()
    logs = last_layer_log_counts(cd)
    last_logs = logs if with_pmf else None
    feasible = [int(np.count_nonzero(logs > -np.inf))]
    rows = logs.reshape(-1, 1)  # the next layer's (log A, E, E^2); the last: log A alone
    bests: list = [None] * n
    top: list = [None] * min(keep_layers, n)
    for layer in range(n - 1, -1, -1):
        size = int(cd.sizes[layer])
        with ctrl_c_held():  # Ctrl-C stops the solve once the kernel returns
            rows, best = values.layer_values(layer, 0, size, POLICIES[policy], window, *args,
                                             read_only(rows))  # fmt: skip
        if layer < len(top):
            top[layer] = (rows[:, 0], rows[:, 1], best)
        feasible.append(int(np.count_nonzero(rows[:, 0] > -np.inf)))
        if with_pmf:
            bests[layer] = best
        if progress:
            progress(f"layer {layer}: {size:,} ranks, {feasible[-1]:,} feasible")
    mean = float(rows[0, 1])
    pmf = policy_pmf(cd, bests, last_logs) if with_pmf else None
    feasible.reverse()
    return Solution(
        mean, float(rows[0, 2]) - mean * mean, sum(feasible), int(cd.sizes.sum()), feasible, pmf,
        top,
    )  # fmt: skip
