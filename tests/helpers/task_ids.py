"""Task ids computed from their definition, independently of the registry's code."""

from __future__ import annotations

import hashlib
import json


def reference_task_id(task) -> str:
    """Task ids as defined: SHA-256 of the sorted, compact JSON of version and parameters."""
    from solvers.registry import get_family
    from solvers.task_ids import identity_params

    payload = json.dumps(
        {"version": get_family(task["family"]).version, "params": identity_params(task)},
        sort_keys=True,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:20]
