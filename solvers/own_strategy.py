"""Strategies of one's own: a class a study names by ``_target_``, checked once, built on the
worker, and evaluated by the family's own solvers beside the built-in strategies.

A study names a strategy of the user's own the way Hydra names a class::

    strategies:
      optimal: {}
      switch:
        _target_: mystrat.SwitchAfterNo   # importable from sys.path
        patience: [1, 2]                  # constructor arguments, grid axes like any other

The study key (``switch``) is the strategy's name in every row.  A task of such a strategy
carries three parameters of its own, declared by a family that accepts them with
:func:`own_params`:

- ``strategy_target``: the class's dotted path;
- ``strategy_params``: the constructor's keyword arguments as JSON text with sorted keys (one
  value per task: a study's list of values per argument is a grid axis);
- ``strategy_code``: a fingerprint of the code the class comes from
  (:func:`solvers.own_code.code_fingerprint`),
  filled in when the task is checked, so that an edited module gives new task ids and is
  computed again, never served the rows of the code before.

A family says what such a class must offer with a :class:`Protocol`; its solver builds the
instance with :func:`build`, which refuses a process whose copy of the code differs from the
study's (a worker importing another file, a file edited during the run), and calls the
user's methods through :func:`call`, which turns anything they raise into a
:class:`StrategyError` naming the strategy, the move and the values.

The user's code is a guest: whatever it raises is its task's error, ``SystemExit`` (a
``sys.exit()``) and a ``KeyboardInterrupt`` it raises itself included; only a signal's
KeyboardInterrupt (the user's Ctrl-C, :mod:`solvers.kit.interrupts`) goes through, to stop
the run.  Its beliefs are held as :class:`Held` keys, their hash taken once and checked, so
that a belief's own ``__hash__`` and ``__eq__`` failing, or a belief changed in place, is
named as the strategy's fault; and its answers are asked twice (:func:`twice`): a strategy
is a function of the belief it is given, and one whose answers differ (drawn at random,
or read from a state it keeps on ``self``) has no exact value to store.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from solvers.kit.interrupts import raised_by_code
from solvers.own_code import code_fingerprint, files_fingerprint, source_files
from solvers.params import Param, described
from solvers.registry import Task, TaskError

OWN = "own"  # in Param.strategies: the parameter applies to strategies of one's own
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z")
TARGET = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+\Z")
SHOWN = 160  # characters of a value quoted in a message


@dataclass(frozen=True)
class Protocol:
    """What a family asks of a strategy class of one's own: the methods it must have (each
    one line of text for the reference and the messages)."""

    methods: Mapping[str, str]

    def missing(self, cls: type) -> list[str]:
        """The methods ``cls`` lacks (not callable counts as lacking)."""
        return [m for m in self.methods if not callable(getattr(cls, m, None))]

    @staticmethod
    def valid_name(name: Any) -> bool:
        """Whether ``name`` can name a strategy of one's own (a study's key for it)."""
        return isinstance(name, str) and NAME.match(name) is not None

    def check(self, family: str, task: Task) -> None:
        """:func:`check_strategy` of a task of this protocol's family (the registry calls it
        through the family, importing nothing of this module)."""
        check_strategy(family, self, task)


class StrategyError(Exception):
    """A strategy of one's own failed: the message names it, the move and the values."""


def is_own(task: Mapping[str, Any]) -> bool:
    """Whether ``task`` runs a strategy of one's own (it names a ``strategy_target``)."""
    return task.get("strategy_target") is not None


def guest_fault(exc: BaseException) -> bool:
    """Whether ``exc``, raised in the user's code, is that code's fault: anything but a
    signal's KeyboardInterrupt (the user's Ctrl-C, which stops the run)."""
    return not isinstance(exc, KeyboardInterrupt) or raised_by_code(exc)


def shown(value: Any) -> str:
    """``repr(value)`` for a one-line message, cut to SHOWN characters (the length said); a
    :class:`Held` belief shown as the user's value."""
    if isinstance(value, Held):
        value = value.value
    try:
        text = repr(value)
    except BaseException as exc:  # a user's __repr__ may raise too, sys.exit() included
        if not guest_fault(exc):
            raise
        return f"<{type(value).__name__}: repr raised {type(exc).__name__}>"
    text = text.encode("unicode_escape").decode("ascii")  # control characters made visible
    if len(text) <= SHOWN:
        return text
    return f"{text[: SHOWN - 20]}... ({len(text):,} characters)"


# -------------------------------------------------------------------- the three parameters


@described("a dotted path `module.Class`, importable from `sys.path`")
def check_target(value: Any) -> str:
    """A class's dotted path (its syntax; importing it is :func:`check_strategy`'s)."""
    if not isinstance(value, str) or not TARGET.match(value.strip()):
        raise check_target.refused()
    return value.strip()


@described("a mapping of the class's keyword arguments to JSON values (stored as JSON text)")
def check_params(value: Any) -> str:
    """The constructor's keyword arguments as canonical JSON text (sorted keys); None (none
    given) is filled in as ``{}`` by :func:`check_strategy`."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise check_params.refused() from None
    if not isinstance(value, Mapping):
        raise check_params.refused()
    try:
        return json.dumps(dict(value), sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"must hold JSON values only (numbers, text, lists, mappings): {exc}"
        ) from None


@described("a fingerprint of the class's code, filled in when the task is checked")
def check_code(value: Any) -> str | None:
    """The code fingerprint (hex digits) or None (filled in by :func:`check_strategy`)."""
    if value is None:
        return None
    if not isinstance(value, str) or not re.fullmatch(r"[0-9a-f]{16}", value):
        raise check_code.refused()
    return value


def own_params() -> tuple[Param, ...]:
    """The parameters of a strategy of one's own, for a family that accepts them; left out of
    the ids of built-in strategies' tasks (None there), so their ids do not change."""
    common = {"strategies": (OWN,), "omit_none_from_id": True}
    return (
        Param("strategy_target", check_target, None, "own strategy: its class", **common),
        Param("strategy_params", check_params, None, "own strategy: its arguments", **common),
        Param("strategy_code", check_code, None, "own strategy: its code's fingerprint", **common),
    )


# ------------------------------------------------------------------ the class and its code


_LOADED: dict[str, str] = {}  # module name -> fingerprint of its files when it was loaded


def target_class(target: str) -> type:
    """The class ``target`` names, imported now; ValueError saying why not.  A module
    already imported whose files changed since is loaded again (a notebook's kernel, a
    long-lived worker), so the class is always the code on disk that its fingerprint names."""
    module_name, _, attr = target.rpartition(".")
    try:
        module = importlib.import_module(module_name)
        built_in = not _has_source(module)  # Python's own (builtins): no file of the user's
        if not built_in:
            on_disk = files_fingerprint(source_files(module_name))
            if _LOADED.setdefault(module_name, on_disk) != on_disk:
                module = importlib.reload(module)
                _LOADED[module_name] = on_disk
    except BaseException as exc:  # any error of the user's module (sys.exit() too), one line
        if not guest_fault(exc):
            raise
        raise ValueError(f"module {module_name!r} cannot be imported ({raised(exc)})") from None
    cls = getattr(module, attr, None)
    if cls is None:
        raise ValueError(f"module {module_name!r} has no {attr!r}")
    if built_in:
        raise ValueError(_not_a_strategy_class(target, cls, module_name))
    if not isinstance(cls, type):
        raise ValueError(f"{target} is not a class (a {type(cls).__name__})")
    return cls


def _has_source(module: Any) -> bool:
    """Whether ``module`` is read from files (a package, or a module with a file)."""
    return bool(getattr(module, "__path__", None) or getattr(module, "__file__", None))


def _not_a_strategy_class(target: str, found: Any, module_name: str) -> str:
    """Why ``target``, in a module built into Python (``builtins.print``), is no strategy:
    what it names is Python's own, never a class of the user's."""
    if isinstance(found, type):
        what = "a class"
    elif callable(found):
        what = "a built-in function"
    else:
        what = f"a {type(found).__name__}"
    return (
        f"{target} is {what} of Python's built-in module {module_name!r}, not a strategy "
        "class: a strategy is a class written in a .py file of your own"
    )


def raised(exc: BaseException) -> str:
    """``Name: message`` of an exception raised in the user's code, on one line; a
    ``SystemExit`` and a KeyboardInterrupt the code raised itself said as what they are."""
    name, text = type(exc).__name__, shown_text(exc)
    if isinstance(exc, SystemExit):
        code = "" if exc.code is None else f"({shown(exc.code)})"
        return f"{name}{code} (sys.exit: a strategy's code cannot end the run)"
    if isinstance(exc, KeyboardInterrupt):
        return f"{name}, raised by the code itself (not a Ctrl-C)"
    return f"{name}: {text}" if text else name


def shown_text(exc: BaseException) -> str:
    """An exception's message on one line, cut like :func:`shown`."""
    text = " ".join(str(exc).split())
    return text if len(text) <= SHOWN else f"{text[: SHOWN - 20]}... ({len(text):,} characters)"


_CHECKED: set[tuple[str, str]] = set()  # (target, code) this process checked (a run's driver)


def check_strategy(family: str, protocol: Protocol, task: Task) -> None:
    """Check an own strategy's task before any work: the class imports, has the protocol's
    methods and takes the arguments; fill in its code fingerprint.  TaskError otherwise."""
    target = task["strategy_target"]
    try:
        cls = target_class(target)
    except ValueError as exc:
        raise TaskError("strategy_target", target, str(exc)) from None
    missing = protocol.missing(cls)
    if missing:
        raise TaskError(
            "strategy_target",
            target,
            f"lacks {', '.join(m + '()' for m in missing)}; a {family} strategy has "
            f"{', '.join(m + '()' for m in protocol.methods)} (see 'Your own strategy')",
        )
    if task["strategy_params"] is None:
        task["strategy_params"] = "{}"
    params = json.loads(task["strategy_params"])
    try:
        inspect.signature(cls).bind(**params)
    except TypeError as exc:
        given = ", ".join(f"{k}={json.dumps(v)}" for k, v in params.items())
        reason = (
            f"{target}() does not take the arguments {given}: {exc}"
            if given
            else f"{target}() cannot be made without arguments: {exc}"
        )
        raise TaskError("strategy_params", params, reason) from None
    except ValueError:  # no signature to read (a class made in C): its constructor will say
        pass
    try:
        code = code_fingerprint(cls)
    except (OSError, ValueError) as exc:
        raise TaskError("strategy_target", target, f"its code cannot be read: {exc}") from None
    if task["strategy_code"] is not None and task["strategy_code"] != code:
        raise TaskError(
            "strategy_code",
            task["strategy_code"],
            f"{target}'s code has the fingerprint {code} here: the file was edited",
        )
    task["strategy_code"] = code
    _CHECKED.add((target, code))


def strategy_words(task: Mapping[str, Any]) -> str:
    """``strategy 'switch' (mystrat.SwitchAfterNo, patience=2)``: how messages name it."""
    params = json.loads(task.get("strategy_params") or "{}")
    args = "".join(f", {k}={shown(v)}" for k, v in params.items())
    return f"strategy {task['strategy']!r} ({task['strategy_target']}{args})"


def build(task: Mapping[str, Any]) -> Any:
    """The task's strategy instance, made in this process from the code the study checked:
    StrategyError when the class cannot be had, its code differs from the task's fingerprint
    (this process imports another copy of the file) or its constructor raises."""
    who = strategy_words(task)
    try:
        cls = target_class(task["strategy_target"])
        code = code_fingerprint(cls)
    except (OSError, ValueError) as exc:
        raise StrategyError(f"{who}: {exc}") from None
    checked = task["strategy_code"]
    if code != checked and (task["strategy_target"], checked) in _CHECKED:
        raise StrategyError(
            f"{who}: its code was edited after this run checked it (the file's code is now "
            f"{code}, the run checked {checked}): not computed, so that no row is stored under "
            f"the id of other code; run again to compute the edited code"
        )
    if code != checked:
        raise StrategyError(
            f"{who}: this process imports code {code}, the study checked {checked}: the file "
            "was edited since the run checked it, or this worker imports another copy of it "
            "(every worker must import the same file: same PYTHONPATH or installed package)"
        )
    return call(who, "the constructor", lambda: cls(**json.loads(task["strategy_params"])))


def call(who: str, move: str, fn: Callable[[], Any]) -> Any:
    """``fn()``, a call into the user's code; StrategyError naming ``who`` and ``move`` (the
    method, its arguments and where in the game) for anything it raises, ``SystemExit`` and
    a KeyboardInterrupt it raises itself included (a signal's, the user's Ctrl-C, goes
    through: :func:`guest_fault`)."""
    try:
        return fn()
    except StrategyError:
        raise
    except BaseException as exc:
        if not guest_fault(exc):
            raise
        raise StrategyError(f"{who}: {move} raised {raised(exc)}") from exc


class Held:
    """A belief of the user's as the solvers hold it (a key of their memos; the user's
    methods are given the value itself): its hash taken once, when the strategy returned it,
    and its ``==`` called through :func:`call`, so that a belief's own ``__hash__`` or
    ``__eq__`` failing is named as the strategy's fault, not the solver's.  Two held beliefs
    are equal when their values are, as the values would be as keys."""

    __slots__ = ("value", "hash", "who")

    def __init__(self, value: Any, digest: int, who: str):
        self.value, self.hash, self.who = value, digest, who

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Held):
            return NotImplemented
        a, b = self.value, other.value
        if a is b:
            return True
        try:
            return bool(a == b)
        except BaseException as exc:  # as call() does, its message made only when it fails
            if not guest_fault(exc):
                raise
            raise StrategyError(
                f"{self.who}: the belief's == comparing {shown(a)} with {shown(b)} raised "
                f"{raised(exc)}"
            ) from exc

    def __repr__(self) -> str:
        return f"Held({shown(self.value)})"


def held(who: str, move: str, belief: Any) -> Held:
    """``belief``, returned by ``move``, held for the solvers' memos; StrategyError when it
    is not hashable, or its hash is not the same twice (a ``__hash__`` that is random, or
    reads what is not the belief's value)."""
    try:
        first, second = hash(belief), hash(belief)
    except BaseException as exc:
        if not guest_fault(exc):
            raise
        raise StrategyError(
            f"{who}: {move} returned a belief that is not hashable ({raised(exc)}): "
            f"{shown(belief)}; use tuples, frozensets, numbers, text"
        ) from None
    if first != second:
        raise StrategyError(
            f"{who}: {move} returned a belief whose hash is not the same twice ({first}, then "
            f"{second}): {shown(belief)}; a belief's __hash__ must depend on its value alone "
            "(use tuples, frozensets, numbers, text)"
        )
    return Held(belief, first, who)


def asked(who: str, move: str, fn: Callable[[], Any], given: Held) -> Any:
    """``fn()``, a method of the user's given the belief ``given``, through :func:`call`;
    StrategyError when the call changed that belief in place (its hash is not what it was):
    the solvers keep every belief as a key, and one changed under them is a different key."""
    out = call(who, move, fn)
    try:
        now = hash(given.value)
    except BaseException as exc:
        if not guest_fault(exc):
            raise
        now = f"not to be had: {type(exc).__name__}"
    if now != given.hash:
        raise StrategyError(
            f"{who}: {move} changed the belief it was given, in place (its hash was "
            f"{given.hash}, now {now}); return a new belief and leave the one given as it was"
        )
    return out


def twice(who: str, move: str, ask: Callable[[], Any]) -> Any:
    """``ask()``, a method of the user's asked through :func:`asked`, asked twice: its
    answer, or StrategyError when the two differ (:func:`agreed`)."""
    first = ask()
    agreed(who, move, first, ask(), "when asked again")
    return first


def agreed(who: str, move: str, first: Any, again: Any, when: str) -> None:
    """StrategyError when two answers of the user's to the same move differ (``when``: how
    the second was had).  A strategy's answer is a function of the belief it is given; one
    drawn at random or read from a state kept on ``self`` (a counter) has no exact value,
    and a rerun would not reproduce the row."""
    if isinstance(first, Held):
        same = first.hash == again.hash and first == again
    else:
        same = call(who, f"{move}: its two answers compared", lambda: bool(first == again))
    if not same:
        raise StrategyError(
            f"{who}: {move} returned {shown(first)}, then {shown(again)} {when}: its answers "
            "must depend on the belief alone (not drawn at random, nor kept on self between "
            "calls), or the strategy has no exact value to store"
        )


def same_belief(a: Any, b: Any) -> bool:
    """Whether two beliefs are equal (held beliefs: the user's ``__eq__`` failing is a
    StrategyError)."""
    return bool(a == b)


class QueryMoves:
    """A query game's strategy of one's own behind checks (Mastermind, hand guessing): its
    ``start``, ``guess`` and ``update`` called through :func:`call`, each answer checked,
    memoised on the belief (``guess``) and on (belief, answer) (``update``).  A game says
    how a guess becomes its index (:meth:`checked`), an index a guess (:meth:`query`) and an
    answer's code the feedback the class is told (:meth:`feedback`)."""

    def __init__(self, task: Mapping[str, Any], start_args: tuple):
        self.who = strategy_words(task)
        self.strategy = build(task)
        self.start_args = start_args
        self.guesses: dict[Any, int] = {}
        self.updates: dict[tuple[Any, Any], Any] = {}

    def checked(self, value: Any, move: str) -> int:
        """The index of the guess ``value`` the class returned; StrategyError if none."""
        raise NotImplementedError

    def query(self, index: int) -> Any:
        """The guess of index ``index``, as the class is told it."""
        raise NotImplementedError

    def feedback(self, answer: Any) -> Any:
        """The feedback the class is told for the game's answer ``answer``."""
        return answer

    def start(self) -> Held:
        move = f"start({', '.join(map(str, self.start_args))})"
        belief = call(self.who, move, lambda: self.strategy.start(*self.start_args))
        return held(self.who, move, belief)

    def guess(self, belief: Held, number: int) -> int:
        """The index of the checked guess (its number in the game: ``number``), asked twice
        (:func:`twice`) the first time the belief is met."""
        hit = self.guesses.get(belief)
        if hit is not None:
            return hit
        move = f"guess(belief={shown(belief)}) at guess {number}"
        value = twice(
            self.who,
            move,
            lambda: asked(self.who, move, lambda: self.strategy.guess(belief.value), belief),
        )
        index = self.checked(value, move)
        self.guesses[belief] = index
        return index

    def update(self, belief: Held, index: int, answer: Any, number: int) -> Held:
        key = (belief, answer)
        if key in self.updates:
            return self.updates[key]
        told, said = self.query(index), self.feedback(answer)
        move = f"update(belief={shown(belief)}, guess={told}, feedback={said}) at guess {number}"

        def ask() -> Held:
            out = asked(
                self.who, move, lambda: self.strategy.update(belief.value, told, said), belief
            )
            return held(self.who, move, out)

        self.updates[key] = twice(self.who, move, ask)
        return self.updates[key]
