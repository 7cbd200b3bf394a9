"""Strategy ``optimal`` as a task of the family: its ``subtree`` parameter, the refusal of a
search beyond reach (``max_search_codes``), and the row of result columns.

The search itself is :mod:`solvers.mastermind.optimal`.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from solvers.mastermind.codes import code_label, code_weights, feedback_table, feedbacks
from solvers.params import described
from solvers.registry import TaskError, exact_columns

DEFAULT_MAX_SEARCH_CODES = 1296  # 4 x 6: about 15 s of CPU and 240 MB
SECONDS_4X6 = 15  # measured (benchmarks/bench_mastermind_optimal.py), for the refusal's estimate


@described(
    "a first guess in colours from 1, such as `1123` (`1-2-10-3` past 9 colours), optionally "
    "with the answer `b,w` (black, white) it gets, as in `1123:0,2`; or absent"
)
def parse_subtree(value: object) -> str | None:
    """A subtree as "FIRST" or "FIRST:b,w" (first guess in colours from 1, answer); None: all."""
    if value is None:
        return None
    text = str(value).replace(" ", "")
    guess, _, answer = text.partition(":")
    if not guess or not all(part.isdigit() and int(part) >= 1 for part in _digits(guess)):
        raise ValueError('must be a first guess such as "1123", optionally with ":b,w"')
    if answer:
        pieces = answer.split(",")
        if len(pieces) != 2 or not all(p.isdigit() for p in pieces):
            raise ValueError('the answer must be "b,w" (black, white), as in "1123:0,2"')
        answer = ",".join(str(int(p)) for p in pieces)
        return f"{guess}:{answer}"
    return guess


def _digits(label: str) -> list[str]:
    """The colours of a code label: "1123" or, past 9 colours, "1-2-10-3"."""
    return label.split("-") if "-" in label else list(label)


def subtree_codes(task: dict) -> tuple[int | None, int | None]:
    """(first guess index, answer index) the task's subtree selects (None: not selected)."""
    pegs, colours, subtree = task["pegs"], task["colours"], task["subtree"]
    if subtree is None:
        return None, None
    guess, _, answer = subtree.partition(":")
    digits = [int(d) - 1 for d in _digits(guess)]
    if len(digits) != pegs or max(digits) >= colours:
        raise TaskError("subtree", subtree, f"the first guess needs {pegs} colours in 1..{colours}")
    q = sum(d * colours ** (pegs - 1 - i) for i, d in enumerate(digits))
    if not answer:
        return q, None
    b, w = (int(x) for x in answer.split(","))
    if (b, w) not in feedbacks(pegs):
        raise TaskError("subtree", subtree, f"({b}, {w}) is no answer with {pegs} pegs")
    return q, feedbacks(pegs).index((b, w))


def check_optimal(task: dict) -> None:
    """Refuse a search beyond reach: more candidate codes than max_search_codes."""
    q, a = subtree_codes(task)
    pegs, colours = task["pegs"], task["colours"]
    n = colours**pegs
    key, value = "pegs", pegs
    if a is not None:
        n = int((feedback_table(pegs, colours)[q] == a).sum()) if n <= task["max_codes"] else n
        key, value = "subtree", task["subtree"]
        if n == 0:
            raise TaskError(key, value, "no code gives this answer to this first guess")
    limit = task["max_search_codes"]
    if n > limit:
        raise TaskError(
            key,
            value,
            f"{n:,} candidate codes ({pegs} pegs, {colours} colours) is too many for the optimal "
            f"search (limit max_search_codes={limit:,}; the search grows much faster than the "
            f"number of codes: 1,296 codes (4 x 6) take about {SECONDS_4X6} s of CPU, 2,401 "
            "(4 x 7) about 15 min: split such a game into subtrees, as study mastermind_4x7 does)",
        )


def run_optimal(task: dict) -> dict:
    """The result columns of the optimal strategy (or of one subtree of it), exact."""
    # the search's kernels, imported where a task runs (not when the family's parameters are
    # read: the command's start-up would import Numba for them)
    from solvers.mastermind.optimal.optimum import fixed_first_optimum, optimum, subtree_optimum

    pegs, colours, jar, limit = task["pegs"], task["colours"], task["jar"], task["guess_limit"]
    q, a = subtree_codes(task)
    if q is None:
        opt = optimum(pegs, colours, jar, limit)
    elif a is None:
        opt = fixed_first_optimum(pegs, colours, jar, limit, q)
    else:
        opt = subtree_optimum(pegs, colours, jar, limit, q, a)
    weights = np.asarray(code_weights(pegs, colours, jar), dtype=np.int64)
    hist = np.bincount(opt.guesses)[1:]
    mass = np.bincount(opt.guesses, weights=weights[opt.codes].astype(float))[1:]
    uniform = bool(np.all(weights == weights[0]))
    return {
        **exact_columns("expected_guesses", opt.expected),
        "total_guesses": int(opt.guesses.sum()) if uniform else None,
        "max_guesses": int(opt.guesses.max()),
        "histogram": [int(h) for h in hist],
        "guess_pmf": [float(m / mass.sum()) for m in mass],
        "first_guess": code_label(opt.first_guess, pegs, colours),
        "n_codes": len(opt.codes),
        "tree_nodes": opt.tree_nodes,
        "search_nodes": opt.nodes,
        "subtree_mass_exact": _fraction_text(Fraction(opt.weight, int(weights.sum()))),
    }


def _fraction_text(value: Fraction) -> str:
    """A rational as "p/q"."""
    return f"{value.numerator}/{value.denominator}"
