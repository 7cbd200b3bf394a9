"""Per-family summary sections.

A family's summary is a function ``(rows, out_dir) -> str``: ``rows`` is a pandas DataFrame
of the family's ``status == "ok"`` rows in the study's store, ``out_dir`` is the study's
summary folder (write PNG plots and Parquet tables there); it returns the Markdown section
for ``summary.md`` (link files by their name relative to ``out_dir``'s parent).

Register with ``@summary_for("family_name")``; every module here is imported once.
A family without a registered summary gets the generic table of :mod:`pipeline.summary`.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from pathlib import Path

import pandas as pd

SummaryFn = Callable[[pd.DataFrame, Path], str]
_SUMMARIES: dict[str, SummaryFn] = {}


def summary_for(family: str) -> Callable[[SummaryFn], SummaryFn]:
    """Decorator: register ``fn`` as the summary section of ``family``."""

    def deco(fn: SummaryFn) -> SummaryFn:
        _SUMMARIES[family] = fn
        return fn

    return deco


def get_summary(family: str) -> SummaryFn | None:
    """The summary function registered for ``family``, or None."""
    return _SUMMARIES.get(family)


for _mod in pkgutil.iter_modules(__path__):
    if not _mod.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_mod.name}")
