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

import functools
import importlib
import os
import pkgutil
import sys
import sysconfig
from importlib.metadata import entry_points
from pathlib import Path

from solvers.params import Param
from solvers.registry import (
    Family,
    Presentation,
    Rules,
    Scheduling,
    Solver,
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
    "Presentation",
    "Rules",
    "Scheduling",
    "Solver",
    "TaskError",
    "families",
    "get_family",
    "register",
    "solve",
    "validate",
]

for _mod in pkgutil.iter_modules(__path__):
    if not _mod.name.startswith("_") and _mod.name not in ("registry", "family"):
        importlib.import_module(f"{__name__}.{_mod.name}")

_IMPORT_ERRORS: dict[str, str] = {}


def family_import_errors() -> dict[str, str]:
    """The families from elsewhere that failed to import: {where they were named: why}.

    A module named in ``GUESSLAB_FAMILIES`` (or an entry point) that raises on import does
    not break ``import solvers``; the pipeline refuses to run while one is listed here
    (exit 2, one line naming the setting and the error)."""
    return dict(_IMPORT_ERRORS)


def _import_family(where: str, load) -> None:
    before, modules = set(families()), set(sys.modules)
    try:
        load()
        brought = sorted(m for m in set(sys.modules) - modules if _own_module(m))
        _version_with_code(set(families()) - before, brought)
    except Exception as exc:  # any error of a user's module, said in one line
        _IMPORT_ERRORS[where] = f"cannot be imported ({type(exc).__name__}: {exc})"


def _own_module(name: str) -> bool:
    """Whether the module ``name`` is the user's own code: a source file outside Python's
    library, the installed packages and guesslab's own folders."""
    file = getattr(sys.modules.get(name), "__file__", None)
    if not file:
        return False
    path = Path(file).resolve()
    return not any(path.is_relative_to(folder) for folder in _shipped_folders())


@functools.cache
def _shipped_folders() -> tuple[Path, ...]:
    """Python's library, the installed packages' folders and guesslab's own packages (found
    once: a family's import may bring in hundreds of modules)."""
    paths = sysconfig.get_paths()
    shipped = [Path(paths[k]).resolve() for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    ours = Path(__file__).resolve().parent  # guesslab's own packages, wherever installed
    return (*shipped, ours, ours.parent / "pipeline", ours.parent / "hydra_plugins")


def _version_with_code(names: set[str], brought: list[str]) -> None:
    """Give each family registered from elsewhere the version ``VERSION+code.FINGERPRINT``:
    the fingerprint (solvers.own_code.files_fingerprint) of the code its import brought
    in (``brought``: the user's own modules imported with it, each its file or its package's
    files, solvers.own_code.source_files) and of its solver's module becomes part of
    every task id, so a family edited anywhere in its own modules (its rules, its solver,
    its scheduling, a helper they import) is computed again, never served the rows of the
    code before.  A module the family imports only later, inside a call, is not counted."""
    import dataclasses

    from solvers import registry
    from solvers.own_code import files_fingerprint, source_files

    for name in names:
        fam = registry._FAMILIES[name]
        modules = {fam.solver.run.__module__, *brought}
        files = sorted({f for m in modules for f in source_files(m)})
        code = files_fingerprint(files)
        registry._FAMILIES[name] = dataclasses.replace(fam, version=f"{fam.version}+code.{code}")


for _entry in entry_points(group="guesslab.families"):
    _import_family(f"entry point guesslab.families {_entry.name!r}", _entry.load)
_env = os.environ.get("GUESSLAB_FAMILIES", "")
for _name in filter(None, (n.strip() for n in _env.split(","))):
    _import_family(
        f"GUESSLAB_FAMILIES={_env!r}: module {_name!r}",
        lambda name=_name: importlib.import_module(name),
    )
