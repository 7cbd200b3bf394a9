"""Family ``no_repeat``: Gural, Simper & So (2019)'s conjecture 3.1 on decks of N distinct cards
(yes/no feedback).

Setting (Gural, Simper & So 2019, section 3.1 and appendix A): n guesses made, k of them right
(those k
cards' positions are known), and the last m guesses named card ``a``, all "no"; the other
n - k - m "no" answers were for cards confirmed later, so they only say that a past slot
holds some unknown card.  ``b`` is a card never named.  The conjecture: naming ``a`` again
leaves no more Shannon entropy about the set of cards still to come than naming ``b``:
``H(c_{n+1} | X_{n+1}(a)) <= H(c_{n+1} | X_{n+1}(b))``.

By exchangeability of the never-named cards, given the answer every remaining set with the
same membership of ``a`` (and ``b``) is equally likely, so each entropy is the entropy of the
membership class plus the mean log of its class size (closed forms below; counts derived
here and checked against enumeration of every deck order for N <= 7 in the tests).  The
appendix's version has slips: the weight of the "a already passed" class after a "no" to
``a`` is (n-k-m)/(N-k-m-1), not (n-k)/(N-k-m-1), and case 4 after a "no" to ``b`` has
probability (N-n-1)(n-k)/A like the others, with A = (N-k-1) + (N-k-m-1)(N-k-2).

Valid tuples: 1 <= k <= n <= N - 2, 0 <= m < n - k (m = 0: a is a fresh card too, the two
entropies are equal), and at least one never-named card b (k <= N - 2).  One task scans every
valid (n, k, m) for one N in vectorised float64 (log-factorials) and returns the number of
violations, the smallest gap H(b) - H(a) over m >= 1 and the curves of the source's figure 1.
"""

from __future__ import annotations

import numpy as np

from solvers.params import IntCheck, Param
from solvers.registry import Family, Row, Task, register

VERSION = "1"  # of its rows: what each version changed is in CHANGELOG.md
MAX_N = 2000
TOLERANCE = 1e-9  # |gap| below this (nats) counts as equality in float64
FIGURE_K, FIGURE_OFFSET = 1, 3  # figure 1a: k = 1, n = m + 3
FIXED = (5, 1, 2)  # figure 1b: (n, k, m) fixed while N grows


def _log_comb(lf: np.ndarray, n, r):
    """log C(n, r) from a log-factorial table (arrays welcome; -inf outside 0 <= r <= n)."""
    n, r = np.asarray(n), np.asarray(r)
    ok = (r >= 0) & (r <= n)
    nn, rr = np.where(ok, n, 0), np.where(ok, r, 0)
    return np.where(ok, lf[nn] - lf[rr] - lf[nn - rr], -np.inf)


def _log_factorials(n_max: int) -> np.ndarray:
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
    lf = _log_factorials(N) if lf is None else lf
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


def scan(N: int) -> Row:
    """Counts, the smallest gap (m >= 1) and figure-1 curves for one deck size N."""
    from solvers.no_repeat.tuple_scan import _scan  # compiled: imported where a task runs

    lf = _log_factorials(N)
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


# CPU seconds of a task on one core (stage=plan): the scan of its (n, k, m) tuples, about N^3
# of them (N = 111 to 300: 9.6-15 ns a tuple), and a fixed cost
SECONDS_PER_TASK = 1e-3
SECONDS_PER_TUPLE = 1.1e-8


def estimated_seconds(task: Task) -> float:
    """Roughly the solver seconds of a checked task on one core (``stage=plan``)."""
    return SECONDS_PER_TASK + SECONDS_PER_TUPLE * task["N"] ** 3


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

FAMILY = register(
    Family(
        name="no_repeat",
        version=VERSION,
        summary="solvers.no_repeat.summary:summarize",
        examples=({"N": 6},),
        doc=__doc__,
        params=(Param("N", IntCheck(low=4, high=MAX_N), doc="distinct cards", dtype="int64"),),
        run=run,
        estimate=estimated_seconds,
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
        column_docs=COLUMN_DOCS,
    )
)
