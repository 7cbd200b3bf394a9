"""What a run says of its failed tasks: each one's strategy, parameters and first error line
(the first :data:`SHOWN` of them, then how many more), on the terminal, in ``Study.run``'s
warning and in a multirun job's failure (each line :func:`pipeline.cli.exit_lines.abbreviated`:
:func:`pipeline.cli.exit_lines.failed_tasks_lines`).

A worker keeps the first few error rows of each batch (:func:`kept`, in
:class:`pipeline.running.worker.DoneBatch`), so the driver has them without reading the store back;
every failed row stays in the store (status ``'error'``), the summary and the report.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from numbers import Number
from pathlib import Path
from typing import Any

from solvers.kit.words import counted

SHOWN = 3  # failed tasks a message names; the rest are counted
ERROR_CHARS = 300  # of a failed task's first error line
# identity parameters a message leaves out: the error names the class, a fingerprint says
# nothing to a reader
UNSAID = ("strategy_target", "strategy_code")


def kept(row: Mapping[str, Any]) -> dict[str, Any]:
    """What a message needs of an error row: its scalar values (no list of results), the
    error cut to its first line."""
    out = {
        k: v
        for k, v in row.items()
        if v is None or isinstance(v, str | bool | Number)  # a numpy scalar is a Number
    }
    out["error"] = first_line(out.get("error"))
    return out


def first_line(error: Any) -> str:
    """The first non-blank line of an error text (at most ERROR_CHARS characters)."""
    lines = [line.strip() for line in str(error or "").splitlines() if line.strip()]
    line = lines[0] if lines else "(no error text)"
    return line if len(line) <= ERROR_CHARS else f"{line[: ERROR_CHARS - 3]}..."


def described(row: Mapping[str, Any]) -> str:
    """A failed task in one line: its strategy, its parameters (those that name it, set),
    its first error line."""
    from solvers.registry import get_family

    try:
        names = list(get_family(str(row.get("family"))).rules.identity_names)
    except (KeyError, ValueError):  # a family not registered here: its row's own columns
        names = [k for k in row if k not in ("task_id", "study", "family", "status")]
    params = []
    for name in names:
        value = row.get(name)
        if name in UNSAID or name in ("strategy", "error", "seconds") or value in (None, ""):
            continue
        if name == "strategy_params":  # JSON of the arguments of a strategy of one's own
            params += [f"{k}={v}" for k, v in _arguments(value).items()]
            continue
        params.append(f"{name}={value}")
    strategy = row.get("strategy") or "(no strategy)"
    where = f" ({', '.join(params)})" if params else ""
    return f"{strategy}{where}: {row.get('error')}"


def _arguments(text: Any) -> dict[str, Any]:
    try:
        value = json.loads(str(text))
    except ValueError:
        return {"strategy_params": text}
    return value if isinstance(value, dict) else {"strategy_params": text}


def failed_lines(
    n_failed: int, failures: Sequence[Mapping[str, Any]], results: Path, summary: Path | None
) -> list[str]:
    """The lines saying ``n_failed`` tasks failed: the first SHOWN of ``failures`` (kept
    error rows), indented, then how many more, then where every failed row is."""
    lines = [f"{counted(n_failed, 'task')} failed:"]
    shown = list(failures)[:SHOWN]
    lines += [f"  {described(row)}" for row in shown]
    if n_failed > len(shown):
        lines.append(f"  and {n_failed - len(shown):,} more")
    where = f"{results}" + (f" and {summary}" if summary is not None else "")
    lines.append(f"every failed task's row (status 'error') is in {where}")
    return lines
