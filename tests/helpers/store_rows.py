"""Rows written straight into a study's store, as the pipeline stores a finished batch: the
tests build stores this way without running a study."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pipeline.driver import write_encoded
from pipeline.worker import encode_rows, metadata_bytes
from solvers.registry import Row


def write_rows(results: Path, rows: Iterable[Row], metadata: Mapping[str, Any]) -> list[Path]:
    """Write ``rows`` (grouped by family) as new files, atomically; return their paths."""
    return write_encoded(results, encode_rows(rows, metadata_bytes(metadata)))
