"""Sizes and times in words a person writes: what messages, tables and progress lines say.

Plain words, nothing of a game or a solver: the pipeline (its backends, the plan, the
progress bars) and the solvers' long tasks both import it.
"""

from __future__ import annotations


def format_bytes(n: float) -> str:
    """``n`` bytes for a message: "512 B", "8.0 GB", "1.2 TB", "72.4 EB" (powers of 1000;
    past 1,000 YB a whole number of YB with its thousands marked)."""
    if n < 1000:
        return f"{int(n)} B"
    for unit in ("kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"):
        n /= 1000
        if n < 1000:
            return f"{n:.1f} {unit}"
    return f"{n:,.0f} YB"
