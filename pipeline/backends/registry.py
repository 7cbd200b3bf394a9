"""The cluster backends by ``cluster.kind``: where the config finds each kind's settings model
and the run the backend of the kind given.

A backend registers itself as its class is defined (:class:`pipeline.backends.backend.Backend`
with a ``settings_model``); :func:`backends` first imports every module of
``pipeline/backends/``, so a built-in backend is one module there, found without a list to
keep (as Hydra finds its plugins, by importing the modules of their package).  Those modules
import nothing heavy (``cluster=sync`` never loads Dask's ``distributed``): each backend
imports Dask where it opens its executor.

This module imports no other of the project: the config (:mod:`pipeline.config`), below the
backends, asks it for the kinds.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

_BACKENDS: dict[str, Any] = {}  # kind -> backend class, in the order registered
_FOUND = [False]  # whether the modules of pipeline/backends/ were imported


def register(backend: Any) -> None:
    """Hold ``backend`` (a :class:`~pipeline.backends.backend.Backend` subclass) as the
    backend of its ``kind``; ValueError for a kind another class holds already."""
    held = _BACKENDS.get(backend.kind)
    name = f"{backend.__module__}.{backend.__qualname__}"
    if held is not None and f"{held.__module__}.{held.__qualname__}" != name:
        raise ValueError(
            f"cluster.kind={backend.kind!r}: registered by {held.__module__}.{held.__qualname__} "
            f"already, so {name} cannot take it"
        )
    _BACKENDS[backend.kind] = backend


def unregister(kind: str) -> None:
    """Drop the backend of ``kind`` (one registered for a while: a test's)."""
    _BACKENDS.pop(kind, None)


def backends() -> dict[str, Any]:
    """Every registered backend class by kind, in the order they are listed (their
    ``order``, then as registered); the built-in ones imported the first time."""
    if not _FOUND[0]:
        package = importlib.import_module(__package__)
        for module in pkgutil.iter_modules(package.__path__, f"{__package__}."):
            importlib.import_module(module.name)
        _FOUND[0] = True
    ranked = sorted(enumerate(_BACKENDS.items()), key=lambda item: (item[1][1].order, item[0]))
    return dict(pair for _, pair in ranked)
