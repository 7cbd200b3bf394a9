"""From a checked task of ``no_repeat`` to its row: the scan of every valid (n, k, m) of
one deck size and the curves of the source's figure 1 (the family's
:class:`~solvers.family.Solver`)."""

from __future__ import annotations

import numpy as np

from solvers.family import Solver
from solvers.no_repeat.closed_forms import entropies, log_factorials
from solvers.registry import Row, Task

TOLERANCE = 1e-9  # |gap| below this (nats) counts as equality in float64
FIGURE_K, FIGURE_OFFSET = 1, 3  # figure 1a: k = 1, n = m + 3
FIXED = (5, 1, 2)  # figure 1b: (n, k, m) fixed while N grows


def scan(N: int) -> Row:
    """Counts, the smallest gap (m >= 1) and figure-1 curves for one deck size N."""
    from solvers.no_repeat.tuple_scan import _scan  # compiled: imported where a task runs

    lf = log_factorials(N)
    stats = _scan(N, lf, TOLERANCE)
    n_tuples, n_violations, n_equal, min_gap, arg_n, arg_k, arg_m, max_gap = stats
    found = arg_n >= 0
    row: Row = {
        "n_tuples": int(n_tuples),
        "n_violations": int(n_violations),
        "n_equal": int(n_equal),
        "min_gap": float(min_gap) if found else None,
        "min_gap_n": int(arg_n) if found else None,
        "min_gap_k": int(arg_k) if found else None,
        "min_gap_m": int(arg_m) if found else None,
        "max_gap": float(max_gap) if found else None,
    }
    row.update(figure_curves(N, lf))
    return row


def figure_curves(N: int, lf: np.ndarray) -> Row:
    """Figure 1a (k = 1, n = m + 3, m = 1..N-5) and figure 1b's point (n, k, m) = FIXED."""
    m = np.arange(1, max(N - FIGURE_OFFSET - 1, 1))
    h_a, h_b = entropies(N, m + FIGURE_OFFSET, np.full(len(m), FIGURE_K), m, lf)
    n0, k0, m0 = FIXED
    fixed_gap = None
    if n0 <= N - 2:
        fa, fb = entropies(N, n0, k0, m0, lf)
        fixed_gap = float(fb - fa)
    return {
        "curve_m": m.tolist(),
        "curve_h_a": np.asarray(h_a, dtype=float).tolist(),
        "curve_h_b": np.asarray(h_b, dtype=float).tolist(),
        "fixed_gap": fixed_gap,
    }


def run(task: Task) -> list[Row]:
    """One row: the scan of every valid (n, k, m) for the task's N."""
    return [scan(task["N"])]


# each result column in a line (the report's tooltips and column lists); gaps in nats
COLUMN_DOCS = {
    "n_tuples": "valid (n, k, m) tuples scanned for this N",
    "n_violations": "tuples where naming a gives more entropy than naming b (the conjecture fails)",
    "n_equal": "tuples where the two entropies are equal (within 1e-9 nats)",
    "min_gap": "the smallest gap H(b) - H(a) over the tuples with m of 1 or more (nats)",
    "min_gap_n": "n of the tuple with the smallest gap",
    "min_gap_k": "k of the tuple with the smallest gap",
    "min_gap_m": "m of the tuple with the smallest gap",
    "max_gap": "the largest gap H(b) - H(a) over the tuples with m of 1 or more (nats)",
    "fixed_gap": "the gap at (n, k, m) = (5, 1, 2), the source's figure 1b (nats)",
    "curve_m": "m of the source's figure 1a curve (k = 1, n = m + 3)",
    "curve_h_a": "H(a) along that curve, for each m (nats)",
    "curve_h_b": "H(b) along that curve, for each m (nats)",
}

SOLVER = Solver(
    run=run,
    column_docs=COLUMN_DOCS,
    columns={
        "n_tuples": "int64",
        "n_violations": "int64",
        "n_equal": "int64",
        "min_gap": "float64",
        "min_gap_n": "int64",
        "min_gap_k": "int64",
        "min_gap_m": "int64",
        "max_gap": "float64",
        "fixed_gap": "float64",
        "curve_m": "list<int64>",
        "curve_h_a": "list<float64>",
        "curve_h_b": "list<float64>",
    },
)
