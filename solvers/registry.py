"""The family registry: every game registers its parameters, strategies and solver here.

A *task* is a plain dict such as ``{"family": "card_guessing", "deck": [3, 3, 3],
"strategy": "optimal"}``.  :func:`validate` checks it against the family's declared
parameters and returns the canonical task (defaults filled in, parameters that do not
apply to the chosen strategy set to ``None``); :func:`solve` runs it and returns rows.

Nothing here knows about Hydra, Dask or files: solvers stay pure.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

Task = dict[str, Any]
Row = dict[str, Any]

REQUIRED = object()  # sentinel: the parameter has no default


class TaskError(ValueError):
    """A task (or a study grid) is invalid; the message names the key and the value."""

    def __init__(self, key: str, value: Any, reason: str):
        self.key, self.value, self.reason = key, value, reason
        super().__init__(f"{key}={value!r}: {reason}")


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
    dtype: str = "string"  # the row column's type (see DTYPES); lists are stored as "3,3,3"

    def applies_to(self, strategy: str | None) -> bool:
        return self.strategies is None or strategy in self.strategies


@dataclass(frozen=True)
class Family:
    """A game family: parameters, strategies, and the function that solves a checked task."""

    name: str
    version: str  # bump when results change: it is part of every task id
    params: tuple[Param, ...]
    run: Callable[[Task], list[Row]]
    strategies: tuple[str, ...] = ()
    default_strategy: str | None = None
    # whole-task checks (size limits...); may fill in a parameter (a new value, not a change
    # made in place: planning re-encodes for the task id only the values it sees replaced)
    check_task: Callable[[Task], None] | None = None
    columns: Mapping[str, str] = field(default_factory=dict)  # result column -> dtype
    doc: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    # "module:function" of the family's summary section, ``(ok_rows, out_dir) -> Markdown``;
    # named, not imported, so that workers never load the plotting libraries it needs
    summary: str | None = None
    # "module:function" of the family's HTML report content, ``(ok_rows) -> list[Section]``
    # (see solvers.kit.report_sections); None: the report shows a generic table of the rows
    report: str | None = None
    # a distributed mode: ``splits(task)`` says whether a checked task spreads its work over a
    # Dask cluster; then "module:function" ``split`` runs it as ``(task, cluster) -> rows``,
    # where ``cluster`` is what the caller hands in (the pipeline: a zero-argument callable
    # giving a context manager that yields a client of the cluster the task runs on), or
    # None (the family brings up a cluster of its own)
    splits: Callable[[Task], bool] | None = None
    split: str | None = None
    # the solver seconds a checked task should take on one core (a model of its size, for
    # ``stage=plan``), None for a task it cannot estimate; None: the family gives none
    estimate: Callable[[Task], float | None] | None = None
    # what a checked task needs at its peak given ``workers`` processes (a
    # ``solvers.kit.budget.Need``: memory per process, checkpoint disk), or None for a task too
    # small to matter; the pipeline compares it with the budget of where the run executes and
    # refuses the study before any work (stage=plan and run).  It is called once per class of
    # tasks agreeing on the parameters it reads (as check_task), so read only those it needs.
    needs: Callable[[Task, int], Any] | None = None
    # small tasks for the contract tests, each valid and quick (a second or less)
    examples: tuple[Mapping[str, Any], ...] = ()
    # strategies of one's own (solvers/own_strategy.py): what their class must offer, or None
    # for a family that takes none; such a family declares own_strategy.own_params() too
    own: Any = None

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)


_FAMILIES: dict[str, Family] = {}

# Column types a row may use; the pipeline maps them to Arrow types.  Every row of a family
# has exactly the columns of :func:`row_columns`, so every Parquet file of a family shares
# one schema and plain ``pandas.read_parquet(<results>/family=<name>)`` works.
DTYPES = ("string", "int64", "float64", "bool", "list<float64>", "list<int64>")
COMMON_COLUMNS: dict[str, str] = {
    "task_id": "string",
    "study": "string",
    "family": "string",
    "strategy": "string",
    "status": "string",
    "error": "string",
    "seconds": "float64",
}


def register(family: Family) -> Family:
    """Add a family to the registry (its name must be new) and return it."""
    if family.name in _FAMILIES:
        raise ValueError(f"family {family.name!r} is registered twice")
    bad = {k: v for k, v in row_columns(family).items() if v not in DTYPES}
    if bad:
        raise ValueError(f"family {family.name!r}: unknown column dtypes {bad}; valid: {DTYPES}")
    _FAMILIES[family.name] = family
    return family


def row_columns(family: Family | str) -> dict[str, str]:
    """Every column of a family's rows with its dtype: common, parameters, results."""
    fam = get_family(family) if isinstance(family, str) else family
    cols = dict(COMMON_COLUMNS)
    cols.update({p.name: p.dtype for p in fam.params})
    cols.update(fam.columns)
    return cols


def family_summary(name: str) -> Callable[..., str] | None:
    """The summary function the family ``name`` names (imported now), or None."""
    ref = get_family(name).summary
    return None if ref is None else named_function(ref)


def family_report(name: str) -> Callable[..., list[Any]] | None:
    """The report function the family ``name`` names (imported now), or None."""
    ref = get_family(name).report
    return None if ref is None else named_function(ref)


def named_function(ref: str) -> Callable[..., Any]:
    """The function a "module:function" reference names (its module imported now)."""
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


def families() -> tuple[str, ...]:
    """Names of all registered families, sorted."""
    return tuple(sorted(_FAMILIES))


def get_family(name: Any) -> Family:
    """The registered family called ``name``; an unknown name lists the valid ones."""
    if name not in _FAMILIES:
        raise TaskError("family", name, f"unknown family; valid: {', '.join(families())}")
    return _FAMILIES[name]


def validate(task: Mapping[str, Any]) -> Task:
    """The canonical form of ``task``: checked values, defaults filled, unused params None."""
    fam, out = checked_params(task)
    if fam.check_task is not None:
        fam.check_task(out)
    return out


def checked_params(task: Mapping[str, Any]) -> tuple[Family, Task]:
    """(family, task with every parameter checked): validate before the whole-task checks."""
    if not isinstance(task, Mapping):
        raise TaskError("task", task, "a task is a mapping of parameter names to values")
    fam = get_family(task.get("family"))
    strategy = None
    own = task.get("strategy_target") is not None
    if own:
        strategy = own_strategy_name(fam, task)
    elif fam.strategies:
        strategy = task.get("strategy", fam.default_strategy)
        if strategy not in fam.strategies:
            raise TaskError(
                "strategy", strategy, f"unknown strategy; valid: {', '.join(fam.strategies)}"
            )
    elif task.get("strategy") is not None:
        raise TaskError("strategy", task["strategy"], f"family {fam.name!r} has no strategies")
    known = set(fam.param_names) | {"family", "strategy"}
    unknown = sorted(set(task) - known)
    if unknown:
        raise TaskError(
            unknown[0],
            task[unknown[0]],
            f"unknown parameter for family {fam.name!r}; valid: {', '.join(fam.param_names)}",
        )
    out: Task = {"family": fam.name, "strategy": strategy}
    kind = "own" if own else strategy  # the default strategy when the task names none
    for p in fam.params:
        out[p.name] = param_value(fam, p, kind, task)
    if own:  # the class imports, has the protocol's methods, takes the arguments
        fam.own.check(fam.name, out)
    return fam, out


def own_strategy_name(fam: Family, task: Mapping[str, Any]) -> str:
    """The name of a task's strategy of one's own (the study's key for it), checked."""
    if fam.own is None:
        raise TaskError(
            "strategy_target",
            task["strategy_target"],
            f"family {fam.name!r} takes no strategies of one's own",
        )
    name = task.get("strategy")
    if name in fam.strategies:
        raise TaskError(
            "strategy",
            name,
            "is a built-in strategy's name: a strategy of one's own needs a name of its own",
        )
    if not fam.own.valid_name(name):
        raise TaskError(
            "strategy",
            name,
            "a strategy of one's own is named by a letter or _ then letters, digits, _ "
            "(at most 64)",
        )
    return name


def strategy_kind(task: Mapping[str, Any]) -> str | None:
    """What ``Param.strategies`` is matched against: the strategy's name, or ``"own"`` for a
    strategy of one's own (:mod:`solvers.own_strategy`)."""
    if task.get("strategy_target") is not None:
        return "own"
    return task.get("strategy")


def param_value(fam: Family, p: Param, strategy: str | None, task: Mapping[str, Any]) -> Any:
    """The canonical value of parameter ``p`` in ``task`` (its default when not given).

    None where ``p`` does not apply to ``strategy`` (a name, or ``"own"``: see
    :func:`strategy_kind`), and a value given there is refused.
    """
    if not p.applies_to(strategy):
        if task.get(p.name) is not None:
            which = "strategies of one's own" if strategy == "own" else f"strategy {strategy!r}"
            only = ", ".join("strategies of one's own" if s == "own" else s for s in p.strategies)
            raise TaskError(p.name, task[p.name], f"does not apply to {which} (only to {only})")
        return None
    value = task.get(p.name, p.default)
    if value is REQUIRED:
        raise TaskError(p.name, None, f"required parameter of family {fam.name!r}")
    try:
        return p.check(value)
    except TaskError:
        raise
    except (ValueError, TypeError) as exc:
        raise TaskError(p.name, value, str(exc)) from None


def fresh_copy(value: Any) -> Any:
    """A copy of the lists in ``value`` (each task gets its own, as validate gives)."""
    if type(value) is list:
        return [fresh_copy(v) if type(v) is list else v for v in value]
    return value


def param_columns(task: Task) -> Row:
    """Row columns for a canonical task's parameters (lists become "3,3,3" strings)."""
    return {k: _column_value(v) for k, v in task.items()}


def _column_value(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return ",".join(str(_column_value(v)) for v in value)
    return value


def solve(task: Mapping[str, Any], *, canonical: bool = False, cluster: Any = None) -> list[Row]:
    """Rows of results for one task: every parameter as a column plus the measured values.

    ``canonical=True`` skips validation for a task that :func:`validate` already returned
    (the pipeline validates the whole grid before it submits anything).  ``cluster`` goes
    to a task that splits its work over a Dask cluster (:attr:`Family.split`).
    """
    checked = dict(task) if canonical else validate(task)
    fam = get_family(checked["family"])
    start = time.perf_counter()
    if fam.splits is not None and fam.splits(checked):
        rows = named_function(fam.split)(checked, cluster)
    else:
        rows = fam.run(checked)
    seconds = time.perf_counter() - start
    base = param_columns(checked)
    blank = dict.fromkeys(fam.columns)
    out = []
    for row in rows:
        extra = set(row) - set(fam.columns)
        if extra:
            raise RuntimeError(f"family {fam.name!r} returned undeclared columns {sorted(extra)}")
        out.append({**base, **blank, **row, "status": "ok", "error": None, "seconds": seconds})
    return out


# ---------------------------------------------------------------- parameter checkers


def exact_columns(name: str, value: Fraction | int) -> Row:
    """Columns ``name`` (float64) and ``name_exact`` ("p/q") for an exact rational value."""
    q = Fraction(value)
    return {name: q.numerator / q.denominator, f"{name}_exact": f"{q.numerator}/{q.denominator}"}


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


# A parameter's checker is any callable returning the canonical value or raising
# ValueError(reason).  The checkers below also say in words what they accept: ``words``, a noun
# phrase made from the very bounds the checker enforces ("an integer from 2 to 1,000,000"),
# is what the manual's parameter tables print and what the reason of a refused value says.


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


# ------------------------------------------------------------------- identity and seeds


def identity_params(task: Task) -> Task:
    """The canonical task without execution knobs: what a result depends on."""
    knobs = knob_names(task["family"])
    omitted = omitted_if_none(task["family"])
    return {
        k: v for k, v in sorted(task.items()) if k not in knobs and not (v is None and k in omitted)
    }


@functools.cache
def knob_names(family: str) -> frozenset[str]:
    """The family's execution knobs: parameters left out of task ids."""
    return frozenset(p.name for p in get_family(family).params if not p.identity)


@functools.cache
def omitted_if_none(family: str) -> frozenset[str]:
    """The family's parameters left out of task ids while None (``omit_none_from_id``)."""
    return frozenset(p.name for p in get_family(family).params if p.omit_none_from_id)


def task_id(task: Task) -> str:
    """A deterministic id for a canonical task: hash of family, parameters, solver version.

    The hash is of ``json.dumps({"version": ..., "params": identity_params(task)},
    sort_keys=True, separators=(",", ":"), default=str)``, assembled here from each value's
    own encoding (the same text; :class:`solvers.grid.Grid` reuses the encodings across a grid).
    """
    pieces = [id_piece(k, v) for k, v in identity_params(task).items()]
    return _hashed_id(pieces, json_text(get_family(task["family"]).version))


def id_piece(key: str, value: Any) -> str:
    """``"key":value`` as the id's JSON holds it."""
    return f"{_json_str(key)}:{json_text(value)}"


def _hashed_id(pieces: list[str], version: str) -> str:
    """The id from the encoded ``"key":value`` pieces (in key order) and the version's JSON."""
    return _sha_id(id_json(pieces, version))


def id_json(pieces: list[str], version: str) -> str:
    """The JSON text an id hashes, from its ``"key":value`` pieces and the version's JSON."""
    return f'{{"params":{{{",".join(pieces)}}},"version":{version}}}'


def _sha_id(payload: str) -> str:
    """A task id: the first 20 hex digits of the SHA-256 of the id's JSON text."""
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


_JSON_ARGS: dict[str, Any] = {"sort_keys": True, "separators": (",", ":"), "default": str}
_JSON_CONSTANTS = {None: "null", True: "true", False: "false"}


@functools.lru_cache(maxsize=4096)
def _json_str(text: str) -> str:
    return json.dumps(text)


def json_text(value: Any) -> str:
    """``value`` as json.dumps(value, **_JSON_ARGS) writes it, inside or outside a container."""
    kind = type(value)
    if value is None or kind is bool:
        return _JSON_CONSTANTS[value]
    if kind is int:
        return int.__repr__(value)
    if kind is float and math.isfinite(value):
        return float.__repr__(value)  # what json writes (-0.0 stays -0.0)
    if kind is str:
        return _json_str(value)
    if kind is list and all(type(v) is int for v in value):
        return f"[{','.join(map(int.__repr__, value))}]"
    return json.dumps(value, **_JSON_ARGS)


def task_rng(task: Task) -> np.random.Generator:
    """A NumPy generator seeded from the task's id (Monte Carlo is reproducible per task)."""
    return np.random.default_rng(np.random.SeedSequence(int(task_id(task), 16)))


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
