"""guesslab solvers: the games, their strategies and exact/float/Monte Carlo evaluators.

``solve(task)`` is the single entry point that Dask workers, tests and notebooks call::

    >>> from solvers import solve
    >>> solve({"family": "card_guessing", "deck": [3, 3, 3], "strategy": "optimal"})[0][
    ...     "expected_score_exact"]
    '2383/560'

Every module of this package is imported once, so a family registers itself simply by
living here and calling :func:`solvers.registry.register` at import time.
"""

import importlib
import pkgutil

from solvers.registry import (
    Family,
    Param,
    TaskError,
    families,
    get_family,
    register,
    solve,
    validate,
)

__all__ = [
    "Family",
    "Param",
    "TaskError",
    "families",
    "get_family",
    "register",
    "solve",
    "validate",
]

for _mod in pkgutil.iter_modules(__path__):
    if not _mod.name.startswith("_") and _mod.name != "registry":
        importlib.import_module(f"{__name__}.{_mod.name}")
