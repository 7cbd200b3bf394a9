"""The heuristic strategies of ``mastermind`` and their exact evaluation: each strategy's
score of every query, its tie rule, and the decision tree followed over every code at once.

Strategy ``optimal`` is the branch and bound of :mod:`solvers.mastermind.optimal`.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from solvers import entropy
from solvers.mastermind.codes import code_label, code_weights, feedback_table, feedbacks
from solvers.registry import Row, exact_columns

STRATEGIES = (
    "sharma_mittal",
    "minimax",
    "expected_size",
    "most_parts",
    "first_feasible",
    "optimal",
)
TIE_RTOL = 1e-12


def _part_sums(labels: np.ndarray, n_parts: int, weights: np.ndarray | None) -> np.ndarray:
    """(queries, n_parts): count (or total weight) of the feasible codes in each part."""
    m = labels.shape[0]
    flat = (labels.astype(np.int64) + n_parts * np.arange(m)[:, None]).ravel()
    w = None if weights is None else np.broadcast_to(weights, labels.shape).ravel()
    return np.bincount(flat, weights=w, minlength=m * n_parts).reshape(m, n_parts)


def query_scores(
    labels: np.ndarray, weights: np.ndarray, n_parts: int, strategy: str, r: float, t: float
) -> np.ndarray:
    """Score of every query (lower is better) from labels[query, feasible code] = feedback id."""
    counts = _part_sums(labels, n_parts, None)
    if strategy == "minimax":
        return counts.max(axis=1)
    if strategy == "most_parts":
        return -(counts > 0).sum(axis=1).astype(float)
    if strategy == "expected_size":
        return (_part_sums(labels, n_parts, weights) * counts).sum(axis=1)
    if strategy == "sharma_mittal" and np.all(weights == weights[0]):
        # equally likely codes: every part is uniform, and H_{r,t} of a uniform part of n
        # codes depends on t only; a lookup by part size is exact and fast
        lookup = entropy.uniform_entropy(np.arange(labels.shape[1] + 1), t)
        return (counts * lookup[counts]).sum(axis=1)
    if strategy == "sharma_mittal":
        h, mass = entropy.sharma_mittal_grouped(weights, labels, n_parts, r, t)
        return (mass * h).sum(axis=1)
    raise ValueError(f"strategy={strategy!r}: no score; valid: {', '.join(STRATEGIES)}")


def choose(
    feasible: np.ndarray, table: np.ndarray, weights: np.ndarray, strategy: str, r: float, t: float
) -> int:
    """The guess for a sorted array of feasible code indices, with the family's tie rule."""
    if strategy == "first_feasible" or len(feasible) == 1:
        return int(feasible[0])
    n_parts = int(table.max()) + 1
    labels = table[:, feasible]
    w = weights[feasible]
    score = np.asarray(query_scores(labels, w, n_parts, strategy, r, t), dtype=float)
    is_feasible = np.zeros(len(table), dtype=bool)
    is_feasible[feasible] = True
    splits = labels.min(axis=1) != labels.max(axis=1)
    score[~(splits | is_feasible)] = np.inf
    best = score.min()
    tied = score <= best + TIE_RTOL * max(abs(best), 1e-3 * float(w.sum()))
    preferred = tied & is_feasible
    return int(np.argmax(preferred) if preferred.any() else np.argmax(tied))


# ------------------------------------------------------------------------ exact evaluation


def guesses_per_code(
    pegs: int, colours: int, jar: Sequence[object] | None, strategy: str, r=1.0, t=1.0
) -> tuple[np.ndarray, int, int]:
    """(guesses needed for every code, first guess, nodes of the decision tree)."""
    table = feedback_table(pegs, colours)
    weights = np.asarray(code_weights(pegs, colours, jar), dtype=float)
    win = len(feedbacks(pegs)) - 1
    n = len(table)
    guesses = np.zeros(n, dtype=np.int64)
    stack = [(np.arange(n), 1)]
    nodes, first = 0, -1
    while stack:
        feasible, depth = stack.pop()
        if depth > n:
            raise RuntimeError("the strategy did not finish within one guess per code")
        q = choose(feasible, table, weights, strategy, r, t)
        nodes += 1
        first = q if first < 0 else first
        labels = table[q, feasible]
        for k in np.unique(labels):
            part = feasible[labels == k]
            if k == win:
                guesses[part] = depth
            else:
                stack.append((part, depth + 1))
    return guesses, first, nodes


def expected_guesses(guesses: np.ndarray, weights: Sequence[int]) -> Fraction:
    """The exact jar-weighted mean of the guesses."""
    return Fraction(sum(int(g) * w for g, w in zip(guesses, weights, strict=True)), sum(weights))


def evaluate(
    pegs: int, colours: int, jar: Sequence[object] | None, strategy: str, r=1.0, t=1.0
) -> Row:
    """The result columns of one strategy on one game (exact)."""
    guesses, first, nodes = guesses_per_code(pegs, colours, jar, strategy, r, t)
    return result_columns(pegs, colours, jar, guesses, first, nodes)


def result_columns(
    pegs: int,
    colours: int,
    jar: Sequence[object] | None,
    guesses: np.ndarray,
    first: int,
    nodes: int,
) -> Row:
    """The result columns of a decision tree: guesses needed for every code, its first guess
    and its nodes (a built-in strategy's, or one of one's own: own.py)."""
    weights = code_weights(pegs, colours, jar)
    mean = expected_guesses(guesses, weights)
    top = int(guesses.max())
    hist = np.bincount(guesses, minlength=top + 1)[1:]
    mass = [Fraction(0)] * top
    total = sum(weights)
    for g, w in zip(guesses, weights, strict=True):
        mass[g - 1] += Fraction(w, total)
    return {
        **exact_columns("expected_guesses", mean),
        "total_guesses": int(guesses.sum()) if len(set(weights)) == 1 else None,
        "max_guesses": top,
        "histogram": [int(h) for h in hist],
        "guess_pmf": [float(m) for m in mass],
        "first_guess": code_label(first, pegs, colours),
        "n_codes": len(guesses),
        "tree_nodes": nodes,
    }
