"""``<outputs>/index.html``: every study under the outputs folder, and two studies compared.

One self-contained file (styles and script inlined, no Plotly): a status table (family,
tasks planned and stored, ok, failed, last run, code version, links to each report.html and
summary.md) and a comparison view: pick a family and two of its studies to see the result
rows they share side by side (matched on strategy and identifying parameters), with the
difference of every numeric result and the rows that differ highlighted.

Written by the summary stage after each study's report; rebuild it alone with
``python -m pipeline.index [OUTPUTS]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import quote

import pandas as pd

from pipeline.outputs.page_text import asset, esc, json_script, json_value, write_atomic
from pipeline.outputs.provenance import newest_metadata, stored_at
from pipeline.outputs.report import parameter_columns
from pipeline.storage.own_files import INDEX_TITLE, html_head, not_ours
from pipeline.storage.safe_paths import INDEX_NAME
from pipeline.storage.store import family_rows, file_metadata
from pipeline.storage.store_overview import StoreCounts
from pipeline.storage.study_folder import StudyFolder
from solvers.registry import get_family

# A study's family with more ok rows than this is left out of the comparison view (its rows
# would be read into memory and embedded in index.html); the page names what was left out.
COMPARE_ROWS = 50_000


def write_index(
    outputs: Path,
    *,
    compare_rows: int = COMPARE_ROWS,
    known: Mapping[str, StoreCounts] | None = None,
) -> Path:
    """Write <outputs>/index.html from every study's store; return its path.

    Each study's line comes from DuckDB counts (no rows read; ``known``: study name ->
    counts just taken, not taken again); the comparison view reads the ok rows of the
    families two or more studies share, up to ``compare_rows`` a family.
    """
    outputs = Path(outputs)
    statuses, counts_by_study = [], {}
    for folder in StudyFolder.all_in(outputs):
        counts, status = read_study(folder, given=(known or {}).get(folder.name))
        if counts is not None:  # an unreadable store: listed, not compared
            counts_by_study[folder.name] = counts
        statuses.append(status)
    rows_by_study, left_out = comparable_rows(outputs, counts_by_study, compare_rows)
    data = {"families": comparison_data(rows_by_study)}
    body = [
        "<h1>guesslab studies</h1>",
        f"<p>{len(statuses)} studies under <code>{esc(outputs.resolve())}</code>.</p>",
        status_html(statuses),
        "<h2 id='compare'>Compare two studies of one family</h2>",
        "<p class='note'>Rows are matched on strategy and the identifying parameters "
        "(the k-th row of a task with several rows matches the k-th); differing rows are "
        "highlighted, and the difference B - A of every numeric result is shown (exact, as "
        "a fraction, for exact p/q results).</p>",
        left_out_html(left_out, compare_rows),
        "<div id='compare-view'></div>",
    ]
    page = (
        html_head(INDEX_TITLE)  # marked as guesslab's (pipeline.storage.own_files)
        + f"<style>{asset('report.css')}</style></head><body>\n"
        + "\n".join(body)
        + f"\n<script type='application/json' id='gl-data'>{json_script(data)}</script>\n"
        + f"<script>{asset('table.js')}\n{asset('index.js')}</script>\n</body></html>\n"
    )
    return write_atomic(outputs / INDEX_NAME, page)


def read_study(
    folder: StudyFolder, tries: int = 3, given: StoreCounts | None = None
) -> tuple[StoreCounts | None, dict[str, Any]]:
    """(a study's counts, its status line); another study's run may replace a file while it
    is read (compaction, atomically), so a vanished file is read again, and a store that
    stays unreadable is listed as such (no counts: nothing of it compared) instead of
    stopping this study's summary.  ``given``: the study's counts, already taken."""
    import duckdb

    error: Exception | None = None
    for _ in range(tries):
        try:
            counts = given if given is not None else folder.counts()
            return counts, study_status(folder, counts)
        except (OSError, ValueError, duckdb.Error) as exc:
            error = exc
    status = {
        "study": folder.name,
        "family": f"(store unreadable: {error})",
        "description": "",
        "planned": None,
        **dict.fromkeys(["tasks", "ok", "failed"], 0),
        "last_run": "",
        "code_version": "",
        "report": folder.report.exists(),
        "summary": folder.summary.exists(),
    }
    return None, status


def study_status(folder: StudyFolder, counts: StoreCounts) -> dict[str, Any]:
    """One study's line: families, planned and stored tasks, ok, failed, last run, links."""
    # from the files' names and the newest footers: reading every footer (the report's
    # batch table) took 1.6 s for each study of 5,790 files at every summary stage
    files = folder.result_files()
    newest = newest_metadata(lambda i: file_metadata(files[i]), len(files))
    study = (newest.get("config") or {}).get("study") or {}
    failed = counts.tasks_with("error")
    return {
        "study": folder.name,
        "family": ", ".join(counts.families),
        "description": " ".join(str(study.get("description", "")).split()),
        "planned": planned_tasks(study),
        "tasks": counts.tasks,
        "ok": counts.tasks - failed,
        "failed": failed,
        "last_run": max(map(stored_at, files), default=""),
        "code_version": newest.get("code_version", ""),
        "report": folder.report.exists(),
        "summary": folder.summary.exists(),
    }


def comparable_rows(
    outputs: Path, counts_by_study: Mapping[str, StoreCounts], compare_rows: int
) -> tuple[dict[str, pd.DataFrame], list[tuple[str, str, int]]]:
    """(study -> the ok rows of its families that another study holds too, at most
    ``compare_rows`` a family; the (study, family, ok rows) left out for their size)."""
    import duckdb

    holders: dict[str, list[str]] = {}
    for name, counts in counts_by_study.items():
        for family in counts.families:
            if counts.rows_with("ok", family):
                holders.setdefault(family, []).append(name)
    frames: dict[str, list[pd.DataFrame]] = {}
    left_out = []
    for family, names in sorted(holders.items()):
        if len(names) < 2:
            continue
        for name in names:
            n = counts_by_study[name].rows_with("ok", family)
            if n > compare_rows:
                left_out.append((name, family, n))
                continue
            try:
                rows = family_rows(outputs / name / "results", family, "ok").frame()
            except (OSError, ValueError, duckdb.Error):
                continue  # listed as unreadable in the status table
            frames.setdefault(name, []).append(rows)
    return {n: pd.concat(f, ignore_index=True) for n, f in frames.items()}, left_out


def left_out_html(left_out: list[tuple[str, str, int]], compare_rows: int) -> str:
    """A note naming the studies' families too large for the comparison view, or ""."""
    if not left_out:
        return ""
    names = ", ".join(f"{esc(s)} ({esc(f)}, {n:,} rows)" for s, f, n in left_out)
    return (
        f"<p class='note'>Left out of the comparison (more than {compare_rows:,} ok rows of a "
        f"family): {names}. Compare them in DuckDB or pandas from their results/ folders.</p>"
    )


def planned_tasks(study: Mapping[str, Any]) -> int | None:
    """How many tasks the study's grid (as last run) plans, or None if it cannot be planned."""
    from pipeline.errors import StudyError
    from pipeline.running.plan import planned

    if not study:
        return None
    try:
        return planned(study).n_tasks  # counted, not listed
    except (StudyError, ValueError, TypeError, KeyError):
        return None


def study_href(study: str, file: str = "report.html") -> str:
    """The link from index.html to ``file`` in a study's folder, as an attribute value: the
    folder's name percent-encoded as one path segment after "./" (a name such as
    ``javascript:alert(1)`` is a folder, never a scheme; ``#``, ``%``, ``?``, ``\\`` and
    quotes reach the folder they name)."""
    return esc(f"./{quote(study, safe='')}/{quote(file, safe='')}")


def status_html(statuses: list[dict[str, Any]]) -> str:
    """The status table, one row per study, with links to its report and summary, in a box
    that scrolls sideways when the window is narrower than the table (not the whole page)."""
    head = (
        "<tr><th>study</th><th>family</th><th>tasks planned</th><th>stored</th><th>ok</th>"
        "<th>failed</th><th>last run (UTC)</th><th>code version</th><th>open</th></tr>"
    )
    lines = []
    for s in statuses:
        name = esc(s["study"])
        links = []
        if s["report"]:
            links.append(f"<a class='report-link' href='{study_href(s['study'])}'>report</a>")
        if s["summary"]:
            links.append(f"<a href='{study_href(s['study'], 'summary.md')}'>summary.md</a>")
        planned = "" if s["planned"] is None else s["planned"]
        css = " class='has-failures'" if s["failed"] else ""
        lines.append(
            f"<tr{css} data-study='{name}'><td title='{esc(s['description'])}'>{name}</td>"
            f"<td>{esc(s['family'])}</td><td>{planned}</td><td>{s['tasks']}</td>"
            f"<td>{s['ok']}</td><td>{s['failed']}</td><td>{esc(s['last_run'])}</td>"
            f"<td>{esc(s['code_version'])}</td><td>{' '.join(links)}</td></tr>"
        )
    body = "".join(lines)
    return (
        "<div class='scroll-box'><table class='gl status' id='status'>"
        f"<thead>{head}</thead><tbody>{body}</tbody></table></div>"
    )


# ---------------------------------------------------------------------------- comparisons


def comparison_data(rows_by_study: Mapping[str, pd.DataFrame]) -> list[dict[str, Any]]:
    """Per family with two or more studies: the rows shared by at least two of them.

    ``{"family", "keys": [key columns], "values": [{"name", "kind"}], "studies": [names],
    "rows": {key: [key values]}, "data": {study: {key: [result values]}}}``.
    """
    out = []
    families = sorted({f for rows in rows_by_study.values() for f in rows["family"].dropna()})
    for family in families:
        parts = {
            name: rows[(rows["family"] == family) & (rows["status"] == "ok")]
            for name, rows in rows_by_study.items()
            if len(rows) and (rows["family"] == family).any()
        }
        if len(parts) >= 2:
            out.append(family_comparison(family, parts))
    return out


def family_comparison(family: str, parts: Mapping[str, pd.DataFrame]) -> dict[str, Any]:
    """The comparison data of one family (see :func:`comparison_data`)."""
    fam = get_family(family)
    keys = ["strategy", *parameter_columns(fam), "row"]
    values = [c for c, t in fam.solver.columns.items() if not t.startswith("list")]
    keyed = {name: keyed_rows(rows, keys, values) for name, rows in parts.items()}
    counts: dict[str, int] = {}
    for table in keyed.values():
        for k in table:
            counts[k] = counts.get(k, 0) + 1
    shared = {k for k, n in counts.items() if n >= 2}
    present = [c for c in values if any(c in rows for rows in parts.values())]
    kinds = {c: value_kind(c, fam.solver.columns[c]) for c in present}
    key_values: dict[str, list[Any]] = {}
    data: dict[str, dict[str, list[Any]]] = {}
    for name, table in keyed.items():
        data[name] = {}
        for k, (kv, vals) in table.items():
            if k in shared:
                key_values[k] = kv
                data[name][k] = [vals.get(c) for c in present]
    return without_empty_columns(
        {
            "family": family,
            "keys": keys,
            "values": [{"name": c, "kind": kinds[c]} for c in present],
            "studies": sorted(parts),
            "rows": key_values,
            "data": data,
        }
    )


def without_empty_columns(comp: dict[str, Any]) -> dict[str, Any]:
    """The comparison data without key or result columns that are empty in every shared row
    (and without the "row" key when no task has more than one row)."""
    keep_k = [
        i
        for i, k in enumerate(comp["keys"])
        if any(kv[i] not in (None, 0 if k == "row" else None) for kv in comp["rows"].values())
    ]
    rows_of = [vals for table in comp["data"].values() for vals in table.values()]
    keep_v = [i for i in range(len(comp["values"])) if any(v[i] is not None for v in rows_of)]
    return {
        **comp,
        "keys": [comp["keys"][i] for i in keep_k],
        "values": [comp["values"][i] for i in keep_v],
        "rows": {k: [kv[i] for i in keep_k] for k, kv in comp["rows"].items()},
        "data": {
            name: {k: [v[i] for i in keep_v] for k, v in table.items()}
            for name, table in comp["data"].items()
        },
    }


def keyed_rows(
    rows: pd.DataFrame, keys: list[str], values: list[str]
) -> dict[str, tuple[list[Any], dict[str, Any]]]:
    """key text -> (key values, result values) for every row; "row" is the row's place
    among its task's rows (tasks with several rows)."""
    rows = rows.assign(row=rows.groupby("task_id").cumcount()) if len(rows) else rows
    out = {}
    for record in rows.to_dict("records"):
        kv = [key_value(record.get(k)) for k in keys]
        vals = {c: json_value(record.get(c)) for c in values if c in record}
        out[json.dumps(kv)] = (kv, vals)
    return out


def key_value(value: Any) -> Any:
    """A key cell as JSON, integral floats as ints (a column with gaps holds 3 as 3.0)."""
    value = json_value(value)
    return int(value) if isinstance(value, float) and value.is_integer() else value


def value_kind(name: str, dtype: str) -> str:
    """How the comparison shows a result column: "exact", "number" or "text"."""
    if name.endswith("_exact"):
        return "exact"
    return "number" if dtype in ("int64", "float64") else "text"


def _folder_problem(outputs: Path) -> str | None:
    """Why ``outputs`` is no folder to index, or None: not there, not a folder, a path the
    file system cannot even look up (a name too long)."""
    try:
        if outputs.is_dir():
            return None
        return "not a folder" if outputs.exists() else "no such folder"
    except OSError as exc:  # ENAMETOOLONG: is_dir raises it
        return exc.strerror or str(exc)


class _Parser(argparse.ArgumentParser):
    """argparse, its refusals in one line (exit status 2) without the usage lines."""

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.add_argument(
            "outputs",
            nargs="?",
            type=Path,
            default=Path("outputs"),
            metavar="OUTPUTS",
            help="the outputs folder of the studies (paths.outputs; default: outputs)",
        )

    def error(self, message: str) -> NoReturn:
        print(f"error: {message} (see python -m pipeline.index --help)", file=sys.stderr)
        raise SystemExit(2)


def main(argv: list[str] | None = None) -> int:
    """``python -m pipeline.index [OUTPUTS]``: rebuild the index; print its path.  Exit
    status 2, with one line, for OUTPUTS not a folder, an ``index.html`` there that
    guesslab did not write (pipeline.storage.own_files), or an index it cannot write."""
    outputs = (
        _Parser(
            prog="python -m pipeline.index",
            description="Rebuild OUTPUTS/index.html, the index of the studies in OUTPUTS.",
        )
        .parse_args(argv)
        .outputs
    )
    problem = _folder_problem(outputs)
    if problem is not None:
        from pipeline.errors import short_path

        said = f"{short_path(outputs)}: {problem}"
        print(f"error: {said} (give the outputs folder of the studies)", file=sys.stderr)
        return 2
    where = outputs / INDEX_NAME
    what = not_ours(where, INDEX_TITLE)
    if what is not None and what != "a folder":  # a folder: cannot be written, below
        print(
            f"error: {where} is {what}: python -m pipeline.index replaces only the index "
            "guesslab writes; move it away, or give another folder",
            file=sys.stderr,
        )
        return 2
    try:
        print(write_index(outputs))
    except OSError as exc:  # index.html a folder, a full disk, no permission
        print(f"error: cannot write {where} ({exc.strerror or exc})", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
