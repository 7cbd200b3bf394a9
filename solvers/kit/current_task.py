"""Which task context is current in this process: the one the pipeline set around the task
it runs (:func:`using`, or :func:`set_current` in a hot loop), or one made on the task's first
ask (:class:`Deferred`).  A solver asks :func:`solvers.kit.task_context.current`; this
module holds only the context variable, so the checkpoints can reach the running task's
warnings without importing the context that holds them.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["CURRENT", "Deferred", "reset_current", "running", "set_current", "using"]


class Deferred:
    """A context made on first use: ``make(key)`` runs when the task first asks
    :func:`~solvers.kit.task_context.current` (a task that never asks costs the pipeline a
    contextvar set and reset, not the making of a context); ``ctx`` is the context made, or
    None."""

    __slots__ = ("ctx", "key", "make")

    def __init__(self, make: Callable[[Any], Any], key: Any = None):
        self.make, self.key = make, key
        self.ctx: Any = None

    def get(self) -> Any:
        if self.ctx is None:
            self.ctx = self.make(self.key)
        return self.ctx


# the TaskContext (solvers.kit.task_context) or Deferred set around the running task; None:
# none is (outside the pipeline)
CURRENT: contextvars.ContextVar[Any] = contextvars.ContextVar("guesslab_task_context", default=None)


def running() -> Any:
    """The context set around the task running in this process (a :class:`Deferred` made
    now), or None when none is (outside the pipeline)."""
    ctx = CURRENT.get()
    return ctx.get() if type(ctx) is Deferred else ctx


@contextlib.contextmanager
def using(ctx: Any) -> Iterator[Any]:
    """Make ``ctx`` (or the context a :class:`Deferred` makes on first use) the
    :func:`~solvers.kit.task_context.current` context inside the ``with`` block."""
    token = CURRENT.set(ctx)
    try:
        yield ctx
    finally:
        CURRENT.reset(token)


def set_current(ctx: Any) -> contextvars.Token:
    """:func:`using` without the ``with`` block (a hot loop): the token for
    :func:`reset_current`."""
    return CURRENT.set(ctx)


def reset_current(token: contextvars.Token) -> None:
    """Undo the :func:`set_current` that gave ``token``."""
    CURRENT.reset(token)
