"""``cluster=sync``: every task in this process, one after another (for debugging: pdb works).

Imports nothing from Dask.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from pipeline.backends.base import Runner


def check(cluster: Any) -> None:
    """Nothing can be wrong with running in this process."""


@contextlib.contextmanager
def open(cluster: Any) -> Iterator[Runner]:  # noqa: A001 - the backend interface's name
    """A Runner without a client: the driver runs the batches itself."""
    yield Runner(None, 1, "in-process (sync)")
