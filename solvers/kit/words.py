"""Sizes, counts and times in words a person writes: what messages, tables and progress
lines say.

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


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun`` agreeing: "1 task", "2 tasks", "1 worker process", "3 worker
    processes", "2 strategies" (an English plural: ``-es`` after s, x, ch and sh, ``-ies``
    for a ``y`` after a consonant, else ``-s``)."""
    if n == 1:
        return f"1 {noun}"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
        return f"{n:,} {noun[:-1]}ies"
    return f"{n:,} {noun}" + ("es" if noun.endswith(("s", "x", "ch", "sh")) else "s")


def format_count(x: float) -> str:
    """A count or rate for a progress line, three digits and a suffix: "512", "1.23k",
    "45.6M", "7.8G", "1.2T"."""
    for size, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= size:
            return f"{x / size:.3g}{suffix}"
    return f"{x:.3g}"


YEAR = 365.25 * 24 * 3600  # seconds


def format_duration(seconds: float) -> str:
    """A time span for people: "0.02 s", "3.5 s", "42 s", then from twice a unit on one
    decimal of it, a whole number without one ("3.3 min", "12 min", "41.9 h", "4.5 days"),
    and from a year on whole years with their thousands marked ("396,596 years"), never
    billions of hours."""
    if seconds >= YEAR:
        return f"{seconds / YEAR:,.0f} years"
    for unit, size in (("days", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= 2 * size:
            return f"{seconds / size:.1f}".removesuffix(".0") + f" {unit}"
    return f"{seconds:.2g} s" if seconds < 10 else f"{seconds:.0f} s"
