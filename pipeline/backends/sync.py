"""``cluster=sync``: every task in this process, one after another (for debugging: pdb works).

Imports nothing from Dask.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from pipeline.backends.base import Runner, Workers
from solvers.kit.budget import Budget, available_memory
from solvers.kit.words import format_bytes


def check(cluster: Any) -> None:
    """Nothing can be wrong with running in this process."""


def workers(cluster: Any) -> Workers:
    """One process, this one, with this machine's available memory (psutil), of its memory."""
    import psutil

    free = available_memory()
    budget = Budget(free, f"available memory under cluster=sync ({format_bytes(free)})")
    memory = int(psutil.virtual_memory().total)
    total = Budget(memory, f"this machine's memory ({format_bytes(memory)})")
    return Workers(1, budget, serial=True, memory=total)


@contextlib.contextmanager
def open(cluster: Any, workers: Workers) -> Iterator[Runner]:  # noqa: A001 - the backend interface's name
    """A Runner without a client: the driver runs the batches itself."""
    yield Runner(None, 1, "in-process (sync)")
