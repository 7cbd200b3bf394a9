"""Rows written straight into a study's store, as the pipeline stores a finished batch: the
tests build stores this way without running a study."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pipeline.running.driver import write_encoded
from pipeline.running.worker import encode_rows, metadata_bytes
from pipeline.storage.study_folder import StudyFolder
from solvers.registry import Row, families, get_family


def write_rows(results: Path, rows: Iterable[Row], metadata: Mapping[str, Any]) -> list[Path]:
    """Write ``rows`` (grouped by family) as new files, atomically; return their paths.  Each
    file's metadata records its family's current version, as a run's does, unless
    ``metadata`` names a ``solver_version`` of its own."""
    by_family: dict[str, list[Row]] = {}
    for row in rows:
        by_family.setdefault(row["family"], []).append(row)
    encoded = []
    for family, own in by_family.items():
        version = {"solver_version": get_family(family).version} if family in families() else {}
        encoded += encode_rows(own, metadata_bytes({**version, **metadata}))
    folder = StudyFolder(Path(results).parent)
    assert folder.results == Path(results), f"{results} is no study folder's results/"
    return write_encoded(folder, encoded)
