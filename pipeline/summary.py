"""The summary stage: read a study's store, write summary.md, tables and plots.

Re-run it alone with ``python -m pipeline study=NAME stage=summary``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from pipeline.index import write_index
from pipeline.report import write_report
from pipeline.store import load_results
from solvers._report import markdown_table
from solvers.registry import COMMON_COLUMNS, family_summary, get_family

GENERIC_ROWS = 200


def write_summary(study_dir: Path, study: Mapping[str, Any]) -> Path:
    """Write <study_dir>/summary.md (and summary/ files) from the store; return its path."""
    out_dir = study_dir / "summary"
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = load_results(study_dir / "results")
    parts = [f"# Study `{study['name']}`", ""]
    if study.get("description"):
        parts += [" ".join(str(study["description"]).split()), ""]
    parts += [status_line(rows), ""]
    for family in sorted(rows["family"].dropna().unique()) if len(rows) else []:
        fam_rows = rows[rows["family"] == family]
        ok = fam_rows[fam_rows["status"] == "ok"].reset_index(drop=True)
        fn = family_summary(family) or generic_summary
        parts += [f"## Family `{family}`", "", fn(ok, out_dir).rstrip(), ""]
        errors = fam_rows[fam_rows["status"] == "error"]
        if len(errors):
            parts += ["### Failed tasks", "", markdown_table(_error_table(errors)), ""]
    path = study_dir / "summary.md"
    tmp = study_dir / ".summary.md.tmp"
    tmp.write_text("\n".join(parts))
    os.replace(tmp, path)
    write_report(study_dir, study, rows)  # report.html beside it (pipeline/report.py)
    write_index(study_dir.parent)  # and <outputs>/index.html, every study (pipeline/index.py)
    return path


def status_line(rows: pd.DataFrame) -> str:
    """How many rows the store holds, by status, and their compute time."""
    if not len(rows):
        return "The store holds no results yet."
    ok = int((rows["status"] == "ok").sum())
    err = len(rows) - ok
    secs = float(rows["seconds"].fillna(0).sum())
    return f"{len(rows)} results: {ok} ok, {err} failed; {secs:.2f} s of solver time in total."


def _error_table(errors: pd.DataFrame) -> pd.DataFrame:
    family = errors["family"].iloc[0]
    cols = ["task_id", "strategy", *parameter_columns(family), "error"]
    return errors[[c for c in dict.fromkeys(cols) if c in errors]].head(GENERIC_ROWS)


def parameter_columns(family: str) -> list[str]:
    """The parameter columns of a family that identify a result (no execution knobs)."""
    fam = get_family(family)
    return [p.name for p in fam.params if p.identity]


def generic_summary(rows: pd.DataFrame, out_dir: Path) -> str:
    """A table of every result (parameters and scalar results), for families without one."""
    if not len(rows):
        return "No successful results."
    family = rows["family"].iloc[0]
    fam = get_family(family)
    params = [c for c in parameter_columns(family) if c in rows]
    values = [c for c, t in fam.columns.items() if c in rows and not t.startswith("list")]
    cols = [c for c in ["strategy", *params, *values] if c in rows and c not in COMMON_COLUMNS]
    cols = ["strategy", *cols] if "strategy" in rows and rows["strategy"].notna().any() else cols
    table = rows[list(dict.fromkeys(cols))].head(GENERIC_ROWS)
    more = f"\n\n({len(rows) - GENERIC_ROWS} more rows in the store.)" if len(rows) > 200 else ""
    return markdown_table(table) + more
