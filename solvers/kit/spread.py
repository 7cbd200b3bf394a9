"""A way to spread a task's work: the pieces of a task (calls of a function) run where the
place the task runs puts them, and their results come back.

A solver that spreads its work asks its task context for a :class:`Spreader`
(``with task_context.current().spread(n) as spread:``), never for a cluster: the pipeline
decides where the pieces run (:mod:`pipeline.backends.spreading`): on the cluster the task
runs on (a Dask worker's client, with the run's own TLS), or in this process.  This module
holds the interface and the in-process spreader (:func:`in_process`): the one outside the
pipeline (a notebook, a plain ``solvers.solve`` call) and under ``cluster=sync``, where the
``n`` pieces a task asks to run at once run in ``n`` threads of this process (the kernels
release the GIL), or one after another for ``n = 1``.  No network, no second process: a
task run in this process never opens a port another account could reach.

Imports neither the pipeline nor Dask: solvers stay pure.
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from typing import Any

__all__ = ["InProcess", "Spreader", "Spreading", "in_process"]


class Spreader(abc.ABC):
    """Where a task's pieces run, as the place the task runs decides.

    :meth:`submit` a piece (``func(*args)``; an argument that is a piece of this spreader is
    replaced by its result where ``func`` runs, so results stay where they were made),
    :meth:`gather` results, :meth:`map` a function over calls as places free up.  ``places``
    the processes the pieces spread over, ``threads`` the pieces one place runs at once,
    ``memory_limit`` the bytes one place may hold (None: no limit of its own).
    """

    places: int = 1
    threads: int = 1
    memory_limit: int | None = None

    @abc.abstractmethod
    def submit(self, func: Callable[..., Any], /, *args: Any, place: int | None = None) -> Any:
        """A piece: ``func(*args)`` run at ``place`` (modulo :attr:`places`) if that place is
        free, else anywhere (a hint, not a rule; None: anywhere).  The handle is opaque: pass
        it to :meth:`gather` or to another :meth:`submit`; dropping it drops the result."""

    @abc.abstractmethod
    def gather(self, pieces: Any) -> Any:
        """The results of ``pieces`` (a piece, or lists of pieces nested as given)."""

    @abc.abstractmethod
    def map(
        self,
        func: Callable[..., Any],
        calls: Iterable[tuple],
        done: Callable[[Any], None] | None = None,
    ) -> list:
        """``[func(*args) for args in calls]``, the calls run as places free up; ``done(result)``
        is called in the caller's thread as each finishes (in the order they finish), and a
        result is let go of where it was made once it is here."""

    @property
    def description(self) -> str:
        """Words for where the pieces run."""
        return f"{self.places} places of {self.threads} threads"


# what the pipeline hands a task's context: ``spreading(at_once)`` gives a context manager
# yielding the Spreader of a task that asks to run ``at_once`` pieces at the same time
Spreading = Callable[[int], contextlib.AbstractContextManager[Spreader]]


class _Ready:
    """A piece already computed (the serial spreader's)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


class InProcess(Spreader):
    """The pieces in this process: one after another as they are submitted (``threads`` 1),
    or in a pool of ``threads`` threads (their Numba kernels release the GIL).  A thread
    waits for the pieces it is handed as arguments, which were submitted before it; the
    pool takes pieces in the order submitted, so the oldest piece running has all of its
    arguments and none waits for ever."""

    def __init__(self, threads: int = 1):
        self.threads = max(1, int(threads))
        self._pool = ThreadPoolExecutor(self.threads, "spread") if self.threads > 1 else None

    @property
    def description(self) -> str:
        if self._pool is None:
            return "this process, one piece after another"
        return f"{self.threads} threads of this process"

    def submit(self, func: Callable[..., Any], /, *args: Any, place: int | None = None) -> Any:
        if self._pool is None:
            return _Ready(func(*(_value(a) for a in args)))
        return self._pool.submit(_call, func, args)

    def gather(self, pieces: Any) -> Any:
        if isinstance(pieces, list | tuple):
            return [self.gather(p) for p in pieces]
        return _value(pieces)

    def map(
        self,
        func: Callable[..., Any],
        calls: Iterable[tuple],
        done: Callable[[Any], None] | None = None,
    ) -> list:
        if self._pool is None:
            out = []
            for args in calls:
                out.append(func(*args))
                if done is not None:
                    done(out[-1])
            return out
        futures = [self._pool.submit(func, *args) for args in calls]
        index = {f: i for i, f in enumerate(futures)}
        out = [None] * len(futures)
        try:
            for fut in as_completed(futures):
                out[index[fut]] = fut.result()
                if done is not None:
                    done(out[index[fut]])
        except BaseException:
            for fut in futures:  # a piece failed (or Ctrl-C): the ones not begun never start
                fut.cancel()
            raise
        return out

    def close(self) -> None:
        """Stop the pool: pieces not begun are dropped, those running are waited for (a
        compiled kernel cannot be stopped half-way; a piece is one chunk of a layer)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)


def _value(arg: Any) -> Any:
    if isinstance(arg, _Ready):
        return arg.value
    if isinstance(arg, Future):
        return arg.result()
    return arg


def _call(func: Callable[..., Any], args: tuple) -> Any:
    return func(*(_value(a) for a in args))


@contextlib.contextmanager
def in_process(threads: int = 1) -> Iterator[InProcess]:
    """An :class:`InProcess` spreader of ``threads`` threads, its pool stopped on exit."""
    spread = InProcess(threads)
    try:
        yield spread
    finally:
        spread.close()
