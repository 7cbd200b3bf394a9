"""Family ``mastermind``: code-jar Mastermind with Sharma-Mittal query selection (Hofer & Nelson
2016).

A hidden code of ``pegs`` positions is drawn position by position, independently, from a jar
of ``colours`` colours with the given weights (Hofer & Nelson 2016, section 1.2 and equation 2; no
jar:
uniform, i.e. standard Mastermind).  Every guess is answered with (black, white).  A strategy
picks each guess among ALL codes (not only the feasible ones); ties go to a code that is still
feasible, then to the lowest code in lexicographic order.  Queries that neither split the
feasible set nor can win are never chosen.

Strategies (scores are over the partition of the feasible set by the feedback):
``sharma_mittal`` (least expected Sharma-Mittal entropy H_{r,t} of the jar-weighted
feasible set after the feedback, Hofer & Nelson (2016) equation 1), ``minimax`` (Knuth 1977: least
worst-case number of feasible codes), ``expected_size`` (least jar-expected number of feasible
codes), ``most_parts`` (most non-empty parts), ``first_feasible`` (the lowest feasible code);
``optimal``: the least expected number of guesses, by branch and bound (see
:mod:`solvers.mastermind.optimal`; Koyama & Lai 1993, Ville 2013), optionally with at most
``guess_limit`` guesses per game, or only over one ``subtree`` (first guess, answer).

The evaluation is exact: the strategy's decision tree is built over every code at once, and the
expected number of guesses is a rational number under the jar's distribution.  Scores are
compared in floating point with a relative tolerance of 1e-12 so that mathematically equal
scores computed in a different order still tie.

A strategy of one's own (a class named by ``_target_``; protocol and evaluation in
:mod:`solvers.mastermind.own`) is evaluated exactly the same way, its decision tree
followed over every code; it fills the columns the built-in heuristics fill.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from solvers import entropy
from solvers.mastermind import own
from solvers.mastermind.rules import (
    Jar,
    code_label,
    code_weights,
    feedback_table,
    feedbacks,
)
from solvers.own_strategy import is_own, own_params
from solvers.params import IntCheck, OrAbsent, Param, described, sharma_mittal_params
from solvers.registry import Family, Row, Task, TaskError, exact_columns, register

VERSION = "2"  # of its rows: what each version changed is in CHANGELOG.md
STRATEGIES = (
    "sharma_mittal",
    "minimax",
    "expected_size",
    "most_parts",
    "first_feasible",
    "optimal",
)
DEFAULT_MAX_CODES = 4096  # 4096 x 4096 feedback table: 16 MiB, a few seconds per strategy
HARD_MAX_CODES = 16384  # the feedback table would take 256 MiB
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


# ----------------------------------------------------------------------------- the family


MAX_WEIGHT_DIGITS = 100  # a weight's numerator and denominator have fewer digits
WEIGHT_RANGE = f"numerator and denominator below 10^{MAX_WEIGHT_DIGITS}"


def _quoted(text: str) -> str:
    """``repr(text)``, its middle left out past 40 characters."""
    return repr(text) if len(text) <= 40 else f"{text[:20]!r}...({len(text)} characters)"


@described(
    "a list of positive weights, one per colour: integers or fractions such as `1/3`, their "
    f"{WEIGHT_RANGE}; or absent"
)
def check_jar(value: object) -> Jar | None:
    """A jar as a list of positive weights (ints or rationals such as "1/3"); None: uniform."""
    if value is None:
        return None
    if isinstance(value, str):
        value = [v for v in value.replace(" ", "").split(",") if v]
    if not isinstance(value, Sequence) or not value:
        raise ValueError("must be a non-empty list of positive weights, one per colour")
    fracs = []
    for v in value:
        try:
            if isinstance(v, bool):
                raise ValueError
            text = str(v)  # ValueError for an int of more than 4300 digits
        except ValueError:
            raise ValueError(f"weight {v!r} is not a number") from None
        exponent = re.search(r"[eE]\s*([-+]?\d+)", text)
        if len(text) > MAX_WEIGHT_DIGITS or exponent and abs(int(exponent[1])) > MAX_WEIGHT_DIGITS:
            raise ValueError(f"weight {_quoted(text)} is out of range: {WEIGHT_RANGE}")
        try:
            f = Fraction(text)
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"weight {v!r} is not a number") from None
        if max(abs(f.numerator), f.denominator) >= 10**MAX_WEIGHT_DIGITS:
            raise ValueError(f"weight {_quoted(text)} is out of range: {WEIGHT_RANGE}")
        fracs.append(f)
    if any(f < 0 for f in fracs):
        raise ValueError("weights must not be negative")
    if all(f == 0 for f in fracs):
        raise ValueError("weights must not all be zero")
    if any(f == 0 for f in fracs):
        raise ValueError("every weight must be > 0 (leave a colour out by lowering colours)")
    if all(f.denominator == 1 for f in fracs):
        return [int(f) for f in fracs]
    return [f"{f.numerator}/{f.denominator}" for f in fracs]


def check_task(task: Task) -> None:
    """Fill colours from the jar, and refuse a wrong-length jar or too many codes."""
    jar, colours = task["jar"], task["colours"]
    if colours is None:
        task["colours"] = colours = len(jar) if jar is not None else 6
    if jar is not None and len(jar) != colours:
        raise TaskError("jar", jar, f"needs one weight per colour: {len(jar)} != colours={colours}")
    n = colours ** task["pegs"]
    if n > task["max_codes"]:
        raise TaskError(
            "pegs",
            task["pegs"],
            f"{colours}^{task['pegs']} = {n:,} codes is too many for the exact evaluation "
            f"(limit max_codes={task['max_codes']:,}, at most {HARD_MAX_CODES:,})",
        )
    if task["strategy"] == "optimal":
        from solvers.mastermind.optimal_task import check_optimal

        check_optimal(task)


# CPU seconds of a task on one core (stage=plan), over its n = colours^pegs codes: a heuristic
# scores every code as a guess against the feasible ones, ~n^2 feedbacks (4 x 6: 0.05-0.35 s,
# benchmarks/bench_mastermind.py); the optimum's branch and bound grows faster, ~n^2.5
# (4 x 6: 12.2 s alone); fitted to the shipped mastermind study (34 s of CPU, two thirds of
# it in the 68 heuristics and 2 optima of 4 x 6; benchmarks/bench_plan_estimate.py)
SECONDS_PER_TASK = 5e-3
HEURISTIC_SECONDS_PER_PAIR = 1e-7
OPTIMAL_SECONDS = 1.6e-7  # times n^2.5


def estimated_seconds(task: Task) -> float | None:
    """Roughly the solver seconds of a checked task on one core (``stage=plan``); None for
    a strategy of one's own."""
    if is_own(task):
        return None
    n = task["colours"] ** task["pegs"]
    if task["strategy"] == "optimal":
        return SECONDS_PER_TASK + OPTIMAL_SECONDS * n**2.5
    return SECONDS_PER_TASK + HEURISTIC_SECONDS_PER_PAIR * n * n


def run(task: Task) -> list[Row]:
    """One row: the exact evaluation of the strategy over every code."""
    if is_own(task):  # a strategy of one's own (own.py): its decision tree, the same columns
        guesses, first, nodes = own.tree(task)
        return [result_columns(task["pegs"], task["colours"], task["jar"], guesses, first, nodes)]
    if task["strategy"] == "optimal":
        from solvers.mastermind.optimal_task import run_optimal

        return [run_optimal(task)]
    sm = task["strategy"] == "sharma_mittal"
    r, t = (task["entropy_r"], task["entropy_t"]) if sm else (1.0, 1.0)
    return [evaluate(task["pegs"], task["colours"], task["jar"], task["strategy"], r, t)]


def optimal_params() -> tuple[Param, ...]:
    """Parameters of strategy ``optimal`` (left out of the ids of the other strategies)."""
    from solvers.mastermind.optimal_task import DEFAULT_MAX_SEARCH_CODES, parse_subtree

    only = ("optimal",)
    return (
        Param(
            "guess_limit",
            OrAbsent(IntCheck(low=1)),
            None,
            "at most this many guesses per game (absent: no limit)",
            only,
            dtype="int64",
            omit_none_from_id=True,
        ),
        Param(
            "subtree",
            parse_subtree,
            None,
            "the codes that answer b,w to the first guess; a first guess alone: that first guess "
            "fixed, every answer; absent: the whole game",
            only,
            omit_none_from_id=True,
        ),
        Param(
            "max_search_codes",
            IntCheck(low=1, high=HARD_MAX_CODES),
            DEFAULT_MAX_SEARCH_CODES,
            "refuse optimal searches over more candidate codes than this",
            only,
            identity=False,
            dtype="int64",
        ),
    )


# each result column in a line (the report's tooltips and column lists)
COLUMN_DOCS = {
    "expected_guesses": "expected number of guesses to find the code under the jar's "
    "distribution, the last (right) one included",
    "expected_guesses_exact": "expected_guesses as an exact fraction p/q",
    "total_guesses": "guesses summed over every code (a uniform jar; empty for another jar)",
    "max_guesses": "the most guesses any code takes",
    "histogram": "codes found in 1, 2, 3, ... guesses",
    "guess_pmf": "probability of finding the code in 1, 2, 3, ... guesses (jar-weighted)",
    "first_guess": "the first guess of the strategy's decision tree",
    "n_codes": "codes the decision tree covers (all codes, or those of one subtree)",
    "tree_nodes": "nodes of the strategy's decision tree",
    "search_nodes": "optimal: nodes the branch and bound search visited",
    "subtree_mass_exact": "optimal: the jar probability of the codes the task covers, p/q (1 "
    "for the whole game)",
}

FAMILY = register(
    Family(
        name="mastermind",
        version=VERSION,
        summary="solvers.mastermind.summary:summarize",
        report="solvers.mastermind.report:report",
        examples=(
            {"pegs": 2, "colours": 3, "strategy": "minimax"},
            # colours left out: the whole-task check fills it in from the jar
            {"pegs": 2, "jar": [1, 2, 3], "strategy": "minimax"},
        ),
        doc=__doc__,
        strategies=STRATEGIES,
        default_strategy="minimax",
        params=(
            Param("pegs", IntCheck(low=1), 4, "code length", dtype="int64"),
            Param(
                "colours",
                OrAbsent(IntCheck(low=2)),
                None,
                "number of colours; absent: the jar's length, or 6",
                dtype="int64",
            ),
            Param("jar", check_jar, None, "colour weights, one per colour; absent: uniform"),
            *sharma_mittal_params(("sharma_mittal",)),
            *optimal_params(),
            Param(
                "max_codes",
                IntCheck(low=1, high=HARD_MAX_CODES),
                DEFAULT_MAX_CODES,
                "refuse games with more codes than this",
                identity=False,
                dtype="int64",
            ),
            *own_params(),
        ),
        own=own.PROTOCOL,
        run=run,
        check_task=check_task,
        estimate=estimated_seconds,
        columns={
            "expected_guesses": "float64",
            "expected_guesses_exact": "string",
            "total_guesses": "int64",
            "max_guesses": "int64",
            "histogram": "list<int64>",
            "guess_pmf": "list<float64>",
            "first_guess": "string",
            "n_codes": "int64",
            "tree_nodes": "int64",
            "search_nodes": "int64",
            "subtree_mass_exact": "string",
        },
        column_docs=COLUMN_DOCS,
    )
)
