"""Where a study's rows came from, from its results files: when each file (a batch) was
stored and by which run, code, solver and Python; the newest run config; every package
version.  The report's "Config and provenance" and the index's status lines read it; the
files' footers are read by the caller (pipeline.storage.store), once each.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd


def provenance(
    files: Sequence[Path], metas: Sequence[dict[str, Any]]
) -> tuple[pd.DataFrame, dict[str, Any], pd.DataFrame]:
    """(the batch table, the newest file's metadata, every package version recorded) of a
    store's results ``files`` (oldest first) from their footers' metadata ``metas``."""
    lines, seen = [], {}
    for path, meta in zip(files, metas, strict=True):
        lines.append(
            {
                "stored_at": stored_at(path),
                "run_started": meta.get("written_at"),
                "family": path.parent.name.partition("=")[2],
                "file": path.name,
                "code_version": meta.get("code_version"),
                "solver_version": meta.get("solver_version"),
                "python": meta.get("python"),
            }
        )
        for pkg, version in (meta.get("packages") or {}).items():
            seen.setdefault(pkg, set()).add(str(version))
    table = pd.DataFrame(lines)
    if len(table):
        table = table.sort_values("stored_at", kind="stable").reset_index(drop=True)
    newest = newest_metadata(metas.__getitem__, len(metas))
    packages = pd.DataFrame(
        [{"package": p, "version": ", ".join(sorted(v))} for p, v in sorted(seen.items())]
    )
    return table, newest, packages


def newest_metadata(metadata_at: Callable[[int], dict[str, Any]], n: int) -> dict[str, Any]:
    """The metadata of the newest of ``n`` files (oldest first; ``metadata_at(i)`` the i-th
    file's) that holds a run config, else the oldest file's ({} for none): read from the
    newest back, so a store written by the pipeline costs one footer."""
    for i in range(n - 1, -1, -1):
        meta = metadata_at(i)
        if meta.get("config"):
            return meta
    return metadata_at(0) if n else {}


def stored_at(path: Path) -> str:
    """When a results file was stored (UTC, from the nanoseconds in its name part-<ns>-...)."""
    import datetime as dt

    ns = path.name.split("-")[1]
    if not ns.isdigit():
        return ""
    when = dt.datetime.fromtimestamp(int(ns) / 1e9, dt.UTC)
    return when.isoformat(timespec="milliseconds")
