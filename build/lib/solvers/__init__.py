"""guesslab solvers: the games, their strategies and exact/float/Monte Carlo evaluators.

``solve(task)`` is the single entry point that Dask workers, tests and notebooks call::

    >>> from solvers import solve
    >>> solve({"family": "card_guessing", "deck": [3, 3, 3], "strategy": "optimal"})[0][
    ...     "expected_score_exact"]
    '2383/560'

Every module of this package is imported once, so a family registers itself simply by
living here and calling :func:`solvers.registry.register` at import time.  Families from
elsewhere register the same way from their own module, found through the entry point group
``guesslab.families`` (an installed package) or the environment variable
``GUESSLAB_FAMILIES`` (module names, comma-separated, importable from ``sys.path``).
"""

import importlib
import os
import pkgutil
from importlib.metadata import entry_points

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

for _entry in entry_points(group="guesslab.families"):
    _entry.load()
for _name in filter(None, (n.strip() for n in os.environ.get("GUESSLAB_FAMILIES", "").split(","))):
    importlib.import_module(_name)
