"""Task parameters: their declaration (:class:`Param`), the checkers that give a value its
canonical form and say in words what they accept, and the parameters several families share.

A parameter's checker is any callable returning the canonical value or raising
ValueError(reason).  The checkers here also say in words what they accept: ``words``, a noun
phrase made from the very bounds the checker enforces ("an integer from 2 to 1,000,000"), is
what the manual's parameter tables print and what the reason of a refused value says.
"""

from __future__ import annotations

import functools
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

REQUIRED = object()  # sentinel: the parameter has no default


@dataclass(frozen=True)
class Param:
    """One task parameter: its default, how to check it, and which strategies use it."""

    name: str
    check: Callable[[Any], Any]  # returns the canonical value or raises ValueError(reason)
    default: Any = REQUIRED
    doc: str = ""
    strategies: tuple[str, ...] | None = None  # None: applies to every strategy
    identity: bool = True  # False: an execution knob (a size limit...) left out of task ids
    # True: left out of task ids while None (a parameter added later keeps the old ids)
    omit_none_from_id: bool = False
    dtype: str = "string"  # the row column's type (registry.DTYPES); lists stored as "3,3,3"
    # a list of integers: the name of a second column holding it as list<int64> (the
    # parameter's own column holds the text "3,3,3", which sorts as text); None: no such column
    list_column: str | None = None

    def applies_to(self, strategy: str | None) -> bool:
        return self.strategies is None or strategy in self.strategies


def as_int(value: Any, *, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an int within [low, high]; floats with a fractional part are refused."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError("must be an integer")
    if isinstance(value, int):
        n = value  # exact, however many digits (float() of a huge int overflows)
    else:
        try:
            f = float(value)
        except ValueError:
            raise ValueError("must be an integer") from None
        if not math.isfinite(f) or f != int(f):
            raise ValueError("must be an integer")
        n = int(f)
    if low is not None and n < low:
        raise ValueError(f"must be >= {low}")
    if high is not None and n > high:
        raise ValueError(f"must be <= {high}")
    return n


def as_float(value: Any, *, low: float | None = None, allow_inf: bool = False) -> float:
    """``value`` as a float >= low; NaN (and infinity unless allowed) is refused."""
    if isinstance(value, bool):
        raise ValueError("must be a number")
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise ValueError("must be a number") from None
    if math.isnan(f) or (math.isinf(f) and not allow_inf):
        raise ValueError("must be a finite number")
    if low is not None and f < low:
        raise ValueError(f"must be >= {low}")
    return f


def one_of(choices: Sequence[Any]) -> OneOf:
    """A checker accepting exactly the listed values."""
    return OneOf(tuple(choices))


def int_list(value: Any, *, low: int = 0, min_len: int = 1) -> list[int]:
    """``value`` as a list of ints >= low, with at least ``min_len`` entries."""
    if isinstance(value, str):
        value = [v for v in value.replace(" ", "").split(",") if v]
    if not isinstance(value, Sequence):
        raise ValueError("must be a list of integers")
    out = [as_int(v, low=low) for v in value]
    if len(out) < min_len:
        raise ValueError(f"must have at least {min_len} entries")
    return out


class Check(ABC):
    """A parameter checker that says what it accepts in words.

    ``words`` is plain text (for messages); ``markdown`` is the same phrase with the literal
    values a user types in code spans (for the manual's tables).
    """

    @property
    def words(self) -> str:
        return plain_words(self.markdown)

    @property
    @abstractmethod
    def markdown(self) -> str:
        """What the check accepts: a noun phrase, literal values in backticks."""

    @abstractmethod
    def __call__(self, value: Any) -> Any:
        """The canonical value, or ValueError(reason) for a value refused."""

    def refused(self) -> ValueError:
        """The error for a value this check refuses: ``must be <words>``."""
        return ValueError(f"must be {self.words}")


def plain_words(markdown: str) -> str:
    """A phrase of :attr:`Check.markdown` as plain text (its code spans unmarked)."""
    return markdown.replace("`", "")


def number_words(x: float) -> str:
    """A bound as a reader reads it: ``1,000,000``, ``0``, ``0.5``."""
    if isinstance(x, float) and x.is_integer():
        x = int(x)
    return f"{x:,}" if isinstance(x, int) else repr(x)


def int_words(low: int | None, high: int | None, *, plural: bool = False) -> str:
    """ "an integer from 2 to 1,000,000", "integers of at least 0", "positive integers"..."""
    noun = "integers" if plural else "an integer"
    if low is not None and high is not None:
        return f"{noun} from {number_words(low)} to {number_words(high)}"
    if low is not None:
        if plural and low == 1:
            return "positive integers"
        return f"{noun} of at least {number_words(low)}"
    if high is not None:
        return f"{noun} of at most {number_words(high)}"
    return noun


@dataclass(frozen=True)
class IntCheck(Check):
    """An integer within [low, high] (a float or text of an integral value is accepted)."""

    low: int | None = None
    high: int | None = None

    @property
    def markdown(self) -> str:
        return int_words(self.low, self.high)

    def __call__(self, value: Any) -> int:
        try:
            return as_int(value, low=self.low, high=self.high)
        except ValueError:
            raise self.refused() from None


@dataclass(frozen=True)
class FloatCheck(Check):
    """A number >= low: finite, or also infinite with ``allow_inf``; NaN is refused."""

    low: float | None = None
    allow_inf: bool = False

    @property
    def markdown(self) -> str:
        noun = "a number" if self.allow_inf else "a finite number"
        bound = "" if self.low is None else f" of at least {number_words(self.low)}"
        return noun + bound + (" (`inf` allowed)" if self.allow_inf else "")

    def __call__(self, value: Any) -> float:
        try:
            return as_float(value, low=self.low, allow_inf=self.allow_inf)
        except ValueError:
            raise self.refused() from None


@dataclass(frozen=True)
class OneOf(Check):
    """Exactly one of the listed values."""

    choices: tuple[Any, ...]

    @property
    def markdown(self) -> str:
        return "one of " + ", ".join(f"`{c}`" for c in self.choices)

    def __call__(self, value: Any) -> Any:
        if value not in self.choices:
            raise self.refused()
        return value


@dataclass(frozen=True)
class IntListCheck(Check):
    """A list of integers >= low (or text such as "3,3,3"), at least ``min_len`` of them."""

    low: int = 0
    min_len: int = 1

    @property
    def markdown(self) -> str:
        words = "a list of " + int_words(self.low, None, plural=True)
        return words + (f", at least {self.min_len} of them" if self.min_len > 1 else "")

    def __call__(self, value: Any) -> list[int]:
        try:
            return int_list(value, low=self.low, min_len=self.min_len)
        except ValueError:
            raise self.refused() from None


@dataclass(frozen=True)
class OrAbsent(Check):
    """None (the parameter left out), or a value ``check`` accepts."""

    check: Callable[[Any], Any]

    @property
    def markdown(self) -> str:
        return f"{check_markdown(self.check)}, or absent"

    def __call__(self, value: Any) -> Any:
        return None if value is None else self.check(value)


class Described(Check):
    """A checker function with the words for what it accepts (see :func:`described`)."""

    def __init__(self, func: Callable[[Any], Any], markdown: str):
        functools.update_wrapper(self, func)
        self.func, self._markdown = func, markdown

    @property
    def markdown(self) -> str:
        return self._markdown

    def __call__(self, value: Any) -> Any:
        return self.func(value)


def described(markdown: str) -> Callable[[Callable[[Any], Any]], Described]:
    """A decorator giving a checker function its words: what it accepts, as a noun phrase with
    the literal values a user types in backticks; build it from the constants the function
    checks against, so that the words and the check share their bounds."""

    def wrap(func: Callable[[Any], Any]) -> Described:
        return Described(func, markdown)

    return wrap


def check_markdown(check: Callable[[Any], Any]) -> str | None:
    """What ``check`` accepts, in words (literal values in code spans); None if it does not say."""
    return check.markdown if isinstance(check, Check) else None


def max_states_param(default: int, doc: str = "refuse exact solves needing more states") -> Param:
    """The ``max_states`` execution knob: a size limit checked before any work."""
    return Param(
        "max_states",
        IntCheck(low=1),
        default,
        doc,
        identity=False,
        dtype="int64",
    )


def sharma_mittal_params(strategies: tuple[str, ...], r_note: str = "") -> tuple[Param, Param]:
    """The ``entropy_r`` and ``entropy_t`` parameters of Sharma-Mittal based strategies."""
    from solvers import entropy

    r_doc = "Sharma-Mittal order r" + (f"; {r_note}" if r_note else "")
    return (
        Param(
            "entropy_r",
            described(entropy.ORDER_WORDS)(entropy.as_order),
            1.0,
            r_doc,
            strategies,
            dtype="float64",
        ),
        Param(
            "entropy_t",
            described(entropy.DEGREE_WORDS)(entropy.as_degree),
            1.0,
            "Sharma-Mittal degree t",
            strategies,
            dtype="float64",
        ),
    )
