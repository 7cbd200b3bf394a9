"""What a task of ``mastermind`` is: its parameters, strategies and whole-task checks (the
family's :class:`~solvers.family.Rules`).  The game itself (codes, feedback, the jar's
weights) is :mod:`solvers.mastermind.codes`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from fractions import Fraction

from solvers.family import Rules
from solvers.mastermind import own
from solvers.mastermind.codes import Jar
from solvers.mastermind.strategies import STRATEGIES
from solvers.own_strategy import own_params
from solvers.params import IntCheck, OrAbsent, Param, described, sharma_mittal_params
from solvers.registry import Task, TaskError

DEFAULT_MAX_CODES = 4096  # 4096 x 4096 feedback table: 16 MiB, a few seconds per strategy
HARD_MAX_CODES = 16384  # the feedback table would take 256 MiB


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


RULES = Rules(
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
    check_task=check_task,
)
