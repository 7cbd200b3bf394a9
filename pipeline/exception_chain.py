"""The exception an error stands for: the first of its chain (``__cause__``, else
``__context__``) of a given kind.  A KeyboardInterrupt inside a Numba kernel's call comes back
as a SystemError caused by it (:mod:`pipeline.running.worker`); a refused connection comes back
wrapped in Dask's and asyncio's errors (:mod:`pipeline.backends.probe`)."""

from __future__ import annotations

from typing import TypeVar

Kind = TypeVar("Kind", bound=BaseException)


def raised_from(exc: BaseException | None, kind: type[Kind]) -> Kind | None:
    """``exc``, or the first exception it was raised from (cause, else context), that is a
    ``kind``; None when none is (a chain that loops is walked once)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, kind):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None
