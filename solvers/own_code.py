"""Code a study's values depend on beyond the built-in solvers, and its fingerprint: the
strategies of one's own a study names (by ``_target_``), the files a module's code is read
from, and the fingerprint of those files.

A fingerprint names code by its bytes: the ``strategy_code`` of a strategy of one's own (part
of its tasks' ids, :mod:`solvers.own_strategy`), the version of a family from elsewhere
(``GUESSLAB_FAMILIES``, :mod:`solvers`), the code a run records that it ran (its results
files' ``own_code``, :mod:`pipeline.running.provenance`), and guesslab's own packages as a
caller's Dask client runs them (:mod:`pipeline.backends.given_client`).
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

TARGET = "_target_"  # the key of a study's strategy naming its class, as Hydra names one


def own_strategies(study: Mapping[str, Any]) -> dict[str, str]:
    """The study's strategies of one's own: name -> ``_target_``, over every grid part."""
    parts = study.get("grids") or [study]
    out = {}
    for part in parts:
        strategies = part.get("strategies") if isinstance(part, Mapping) else None
        for name, axes in (strategies or {}).items():
            if isinstance(axes, Mapping) and isinstance(axes.get(TARGET), str):
                out[name] = axes[TARGET]
    return out


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


def module_fingerprint(module: str) -> str | None:
    """The fingerprint of an imported module's files (planning imported a strategy's), or
    None where it is not imported or has no files."""
    if module not in sys.modules:
        return None
    try:
        return files_fingerprint(source_files(module))
    except (ValueError, OSError):
        return None
