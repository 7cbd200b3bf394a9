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
- ``strategy_code``: a fingerprint of the code the class comes from (:func:`code_fingerprint`),
  filled in when the task is checked, so that an edited module gives new task ids and is
  computed again, never served the rows of the code before.

A family says what such a class must offer with a :class:`Protocol`; its solver builds the
instance with :func:`build`, which refuses a process whose copy of the code differs from the
study's (a worker importing another file), and calls the user's methods through
:func:`call`, which turns anything they raise into a :class:`StrategyError` naming the
strategy, the move and the values.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def shown(value: Any) -> str:
    """``repr(value)`` for a one-line message, cut to SHOWN characters (the length said)."""
    try:
        text = repr(value)
    except Exception as exc:  # a user's __repr__ may raise too
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
        on_disk = files_fingerprint(source_files(module_name))
        if _LOADED.setdefault(module_name, on_disk) != on_disk:
            module = importlib.reload(module)
            _LOADED[module_name] = on_disk
    except Exception as exc:  # any error of the user's module, said in one line
        raise ValueError(
            f"module {module_name!r} cannot be imported ({type(exc).__name__}: {shown_text(exc)})"
        ) from None
    cls = getattr(module, attr, None)
    if cls is None:
        raise ValueError(f"module {module_name!r} has no {attr!r}")
    if not isinstance(cls, type):
        raise ValueError(f"{target} is not a class (a {type(cls).__name__})")
    return cls


def shown_text(exc: BaseException) -> str:
    """An exception's message on one line, cut like :func:`shown`."""
    text = " ".join(str(exc).split())
    return text if len(text) <= SHOWN else f"{text[: SHOWN - 20]}... ({len(text):,} characters)"


def source_files(module_name: str) -> list[Path]:
    """The files whose bytes make a module's code: its own file, or, for a module inside a
    package, every ``.py`` file of the package's top folder (an edit to a helper module the
    strategy imports from the same package counts too)."""
    module = sys.modules[module_name]
    top = sys.modules.get(module_name.partition(".")[0], module)
    folder = getattr(top, "__path__", None)
    if folder:
        root = Path(list(folder)[0])
        return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
    file = getattr(module, "__file__", None)
    if not file:
        raise ValueError(f"module {module_name!r} has no source file to fingerprint")
    return [Path(file)]


def code_fingerprint(cls: type) -> str:
    """16 hex digits of the SHA-256 over the files of :func:`source_files` (each file's name
    relative to the first one's folder, then its bytes): the code a task's id depends on."""
    return files_fingerprint(source_files(cls.__module__))


def files_fingerprint(files: list[Path]) -> str:
    """See :func:`code_fingerprint` (read again only when a file's size or time changed)."""
    stamp = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files)
    if stamp not in _DIGESTS:
        _DIGESTS[stamp] = _digest(files)
    return _DIGESTS[stamp]


_DIGESTS: dict[tuple, str] = {}


def _digest(files: list[Path]) -> str:
    base = files[0].parent
    digest = hashlib.sha256()
    for path in files:
        name = path.relative_to(base) if path.is_relative_to(base) else path.name
        digest.update(str(name).encode() + b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


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
        reason = f"{target}() does not take them: {exc}"
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
    if code != task["strategy_code"]:
        raise StrategyError(
            f"{who}: this process imports code {code}, the study checked {task['strategy_code']}: "
            f"every worker must import the same file (same PYTHONPATH or installed package)"
        )
    return call(who, "the constructor", lambda: cls(**json.loads(task["strategy_params"])))


def call(who: str, move: str, fn: Callable[[], Any]) -> Any:
    """``fn()``, a call into the user's code; StrategyError naming ``who`` and ``move`` (the
    method, its arguments and where in the game) for anything it raises."""
    try:
        return fn()
    except StrategyError:
        raise
    except Exception as exc:
        raise StrategyError(
            f"{who}: {move} raised {type(exc).__name__}: {shown_text(exc)}"
        ) from exc


def hashable(who: str, move: str, belief: Any) -> Any:
    """``belief`` if it can be a key of the exact solvers' memo; StrategyError otherwise."""
    try:
        hash(belief)
    except Exception as exc:
        raise StrategyError(
            f"{who}: {move} returned a belief that is not hashable ({type(exc).__name__}: "
            f"{shown_text(exc)}): {shown(belief)}; use tuples, frozensets, numbers, text"
        ) from None
    return belief


def same_belief(a: Any, b: Any) -> bool:
    """Whether two beliefs are equal (a user's ``__eq__`` that raises: not equal)."""
    try:
        return bool(a == b)
    except Exception:
        return False


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

    def start(self) -> Any:
        move = f"start({', '.join(map(str, self.start_args))})"
        belief = call(self.who, move, lambda: self.strategy.start(*self.start_args))
        return hashable(self.who, move, belief)

    def guess(self, belief: Any, number: int) -> int:
        """The index of the checked guess (its number in the game: ``number``)."""
        hit = self.guesses.get(belief)
        if hit is not None:
            return hit
        move = f"guess(belief={shown(belief)}) at guess {number}"
        index = self.checked(call(self.who, move, lambda: self.strategy.guess(belief)), move)
        self.guesses[belief] = index
        return index

    def update(self, belief: Any, index: int, answer: Any, number: int) -> Any:
        key = (belief, answer)
        if key in self.updates:
            return self.updates[key]
        told, said = self.query(index), self.feedback(answer)
        move = f"update(belief={shown(belief)}, guess={told}, feedback={said}) at guess {number}"
        out = call(self.who, move, lambda: self.strategy.update(belief, told, said))
        self.updates[key] = hashable(self.who, move, out)
        return self.updates[key]
