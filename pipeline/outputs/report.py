"""The study's HTML report: one self-contained file beside summary.md.

``<study>/report.html`` opens from disk with no server and no network: the styles, the table
script and Plotly's JavaScript are inlined (Plotly gzip-compressed and base64-encoded, 1.96
MB instead of 4.8 with plotly 7.1, unpacked by the browser's DecompressionStream).  It holds
the study's description, its resolved config and provenance (package versions, code
version, when each batch ran), every family's sections (from the family's registered report
function, or a generic table of its rows), its result rows and its failures with their
messages (up to REPORT_ROWS of each: beyond, the page says how many exist and how to read
them all).

Tables become JSON that the inlined script renders: sortable by any column (exact ``p/q``
columns sort exactly, with big integers), filterable per column (text, or ``>x``, ``<=x``,
``a..b`` on numbers) and paged.  The pipeline knows no game here: game-specific content comes
from :func:`solvers.registry.family_report`.
"""

from __future__ import annotations

import base64
import functools
import gzip
import html
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from pipeline.outputs.column_words import column_words
from pipeline.outputs.report_about import about_html
from pipeline.storage.own_files import html_head
from pipeline.storage.safe_paths import write_replacing
from pipeline.storage.store import LARGE_ROWS, family_rows, files_metadata, ok_rows
from pipeline.storage.store_layout import family_dir
from pipeline.storage.store_overview import StoreCounts, frame_counts, status_line, store_counts
from pipeline.storage.study_folder import StudyFolder
from solvers.kit.stored_rows import StoredRows, accepts_stored_rows
from solvers.kit.words import counted
from solvers.registry import family_report, get_family

ASSETS = Path(__file__).resolve().parents[1] / "assets"


# The most rows of a family the page embeds (its "All results" and "Failed tasks" tables).
# Every row of a 10^6-row store made a report.html of 189 MB (43 s, 2.7 GiB to write); the
# first 20,000 rows of that store made 5.8 MB in all (1.5 MB of it Plotly, whose script
# takes 1.96 MB with plotly 7.1).
# The page says how many rows exist and gives the line that reads them all (measured:
# docs/faults-and-load.md, "Summaries of large stores").
REPORT_ROWS = 20_000

Rows = pd.DataFrame | StoredRows


def write_report(
    folder: StudyFolder,
    study: Mapping[str, Any],
    rows: pd.DataFrame | None = None,
    *,
    oks: Mapping[str, Rows] | None = None,
    counts: StoreCounts | None = None,
    report_rows: int = REPORT_ROWS,
    large_rows: int = LARGE_ROWS,
    notes: Mapping[str, list[str]] | None = None,
    left_out: int = 0,
) -> Path:
    """Write the study ``folder``'s report.html (self-contained) from its store; its path.

    ``rows``: the store already loaded (``load_results``), else it is read family by family
    (DuckDB counts, ``oks``: the ok rows the summary stage read, reused); each family's
    tables embed at most ``report_rows`` rows.  From the summary stage, ``counts`` counts the
    rows the tables show, ``left_out`` the store's other rows (of other versions of code),
    and ``notes`` (family -> HTML sentences) say whose they are, under each family.
    """
    results = folder.results
    if rows is not None:
        counts = frame_counts(rows)
    counts = counts if counts is not None else store_counts(results)
    page = Page(title=f"Study {study['name']}")
    page.add_html(f"<h1>Study <code>{esc(study['name'])}</code></h1>")
    if study.get("description"):
        page.add_html(
            f"<p class='description'>{esc(' '.join(str(study['description']).split()))}</p>"
        )
    page.add_html(f"<p class='status'>{esc(status_line(counts, left_out))}</p>")
    add_searches(page, folder)  # a search's best heads the report, as it heads the summary
    notes = notes or {}
    batches = add_provenance(page, folder)
    page.add_html(about_html(folder, sorted({*counts.families, *notes}), batches))
    for family in sorted({*counts.families, *notes}):
        if rows is not None:
            fam_rows = rows[rows["family"] == family]
            ok: Rows = fam_rows[fam_rows["status"] == "ok"].reset_index(drop=True)
            errors: Rows = fam_rows[fam_rows["status"] == "error"]
        else:
            ok = (oks or {}).get(family)
            if ok is None:
                report_fn = family_report(family)  # none: the generic table reads 1 slice
                lazy_ok = report_fn is None or accepts_stored_rows(report_fn)
                ok = ok_rows(results, family, lazy_ok=lazy_ok, large_rows=large_rows)
            errors = family_rows(results, family, "error")
        add_family(page, family, ok, errors, results, report_rows, notes.get(family, []))
    return write_atomic(folder.report, page.html())


def add_searches(page: Page, folder: StudyFolder) -> None:
    """Each search stored in the study folder: its best beside the reference and the gap,
    and the objective against each searched parameter (pipeline.search.outputs)."""
    from pipeline.outputs.searches import search_figures, search_headlines

    found = search_headlines(folder)
    if not found:
        return
    page.add_html("<h2>Searches</h2>")
    for path, headline in found:
        if isinstance(headline, str):
            page.add_html(f"<p class='note'><code>search/{esc(path.name)}</code>: left out "
                          f"({esc(headline)})</p>")  # fmt: skip
            continue
        best = headline.get("best") or "no trial succeeded"
        page.add_html(
            f"<p><strong>{esc(headline['name'])}</strong> ({headline['n_trials']} trials): "
            f"best {esc(best)}</p>"
        )
        for title, figure in search_figures(headline):
            page.add_figure(title, figure)


def first_rows(rows: Rows, n: int) -> pd.DataFrame:
    """The first ``n`` of ``rows`` (store order) as a DataFrame."""
    if isinstance(rows, pd.DataFrame):
        return rows.head(n)
    return rows.frame(limit=n)


# ------------------------------------------------------------------------------ provenance


def provenance(folder: StudyFolder) -> tuple[pd.DataFrame, dict[str, Any], pd.DataFrame]:
    """(the batch table, the newest file's metadata, every package version recorded), from
    one read of each file's footer (two passes took 6.3 s at 5,790 files)."""
    lines, seen = [], {}
    files = folder.result_files()
    metas = files_metadata(files)
    for path, meta in zip(files, metas, strict=True):
        lines.append(
            {
                "stored_at": stored_at(path),
                "run_started": meta.get("written_at"),
                "family": path.parent.name.partition("=")[2],
                "file": path.name,
                "code_version": meta.get("code_version"),
                "solver_version": meta.get("solver_version"),
                "python": meta.get("python"),
            }
        )
        for pkg, version in (meta.get("packages") or {}).items():
            seen.setdefault(pkg, set()).add(str(version))
    table = pd.DataFrame(lines)
    if len(table):
        table = table.sort_values("stored_at", kind="stable").reset_index(drop=True)
    newest = newest_metadata(metas.__getitem__, len(metas))
    packages = pd.DataFrame(
        [{"package": p, "version": ", ".join(sorted(v))} for p, v in sorted(seen.items())]
    )
    return table, newest, packages


def newest_metadata(metadata_at: Callable[[int], dict[str, Any]], n: int) -> dict[str, Any]:
    """The metadata of the newest of ``n`` files (oldest first; ``metadata_at(i)`` the i-th
    file's) that holds a run config, else the oldest file's ({} for none): read from the
    newest back, so a store written by the pipeline costs one footer."""
    for i in range(n - 1, -1, -1):
        meta = metadata_at(i)
        if meta.get("config"):
            return meta
    return metadata_at(0) if n else {}


def stored_at(path: Path) -> str:
    """When a results file was stored (UTC, from the nanoseconds in its name part-<ns>-...)."""
    import datetime as dt

    ns = path.name.split("-")[1]
    if not ns.isdigit():
        return ""
    when = dt.datetime.fromtimestamp(int(ns) / 1e9, dt.UTC)
    return when.isoformat(timespec="milliseconds")


def add_provenance(page: Page, folder: StudyFolder) -> pd.DataFrame:
    """The resolved config, package versions, code versions and the batches' times; return
    the batch table."""
    batches, newest, packages = provenance(folder)
    page.add_html("<h2 id='provenance'>Config and provenance</h2>")
    if not len(batches):
        page.add_html("<p>No results stored yet.</p>")
        return batches
    codes = ", ".join(sorted(set(map(str, batches["code_version"].dropna()))))
    page.add_html(
        f"<p>{counted(len(batches), 'batch')} stored from {esc(batches['stored_at'].iloc[0])} "
        f"to {esc(batches['stored_at'].iloc[-1])} (UTC) by "
        f"{counted(batches['run_started'].nunique(), 'run')}; code version {esc(codes)}; Python "
        f"{esc(', '.join(sorted(set(map(str, batches['python'].dropna())))))}.</p>"
    )
    config = yaml.safe_dump(newest.get("config", {}), sort_keys=False, default_flow_style=None)
    page.add_html(
        "<details><summary>Resolved config of the newest batch</summary>"
        f"<pre class='config'>{esc(config)}</pre></details>"
    )
    page.add_table("Package versions", packages, open_=False, words=column_words([*packages]))
    page.add_table(
        "Batches (one results file each)", batches, open_=False, words=column_words([*batches])
    )
    return batches


# ------------------------------------------------------------------------------ families


def add_family(
    page: Page,
    family: str,
    ok: Rows,
    errors: Rows,
    results: Path,
    report_rows: int,
    notes: Sequence[str] = (),
) -> None:
    """A family's sections (its report function, or a generic table), its first
    ``report_rows`` rows and failures, and how to read every row when there are more;
    ``notes`` (HTML) say which of its stored rows are left out."""
    page.add_html(f"<h2 id='family-{esc(family)}'>Family <code>{esc(family)}</code></h2>")
    report = family_report(family)
    n_ok = len(ok)
    if report is not None and n_ok:
        if isinstance(ok, StoredRows) and not accepts_stored_rows(report):
            ok = ok.frame()
        for section in report(ok):
            add_section(page, section, report_rows, family)
    shown = result_columns(family, first_rows(ok, report_rows))
    page.add_table(
        f"All results ({family})",
        shown,
        note=capped_note(family, len(shown), n_ok, results, "ok"),
        total=n_ok,
        words=column_words([*shown], family),
    )
    for note in notes:
        page.add_html(f"<p class='note'>{note}</p>")
    n_errors = len(errors)
    if n_errors:
        shown = failure_table(family, first_rows(errors, report_rows))
        page.add_table(
            f"Failed tasks ({family})",
            shown,
            note=capped_note(family, len(shown), n_errors, results, "error"),
            css="failures",
            total=n_errors,
            words=column_words([*shown], family),
        )


def html_code(value: Any) -> str:
    """``value`` as HTML code, shown as typed."""
    return f"<code>{esc(str(value))}</code>"


def capped_note(family: str, shown: int, total: int, results: Path, status: str) -> str:
    """ "" when every row is shown, else how many are and the one line that reads them all."""
    if shown >= total:
        return ""
    folder = family_dir(results.resolve(), family)
    return (
        f"The first {shown:,} of {total:,} rows (this page keeps at most {shown:,} per table; "
        f'the store holds every row). All of them, in Python: duckdb.sql("SELECT * FROM '
        f"read_parquet('{folder}/*.parquet') WHERE status = '{status}'\").df() or "
        f"pandas.read_parquet('{folder}', filters=[('status', '==', '{status}')])."
    )


def add_section(
    page: Page, section: Any, report_rows: int = REPORT_ROWS, family: str | None = None
) -> None:
    """One family section: its title, then its tables (the first ``report_rows`` rows of
    each; each column in words, :mod:`pipeline.outputs.column_words`), figures and paragraphs in
    order."""
    page.add_html(f"<h3>{esc(section.title)}</h3>")
    for item in section.items:
        if isinstance(item, str):
            page.add_html(f"<p>{esc(item)}</p>")
        elif hasattr(item, "figure"):
            page.add_figure(item.title, item.figure, item.note)
        else:
            total = len(item.frame)
            note = item.note
            if total > report_rows:  # a dense sweep's table: the summary's Parquet has it all
                capped = f"The first {report_rows:,} of {total:,} rows; summary/*.parquet and "
                note = " ".join([note, capped + "the store hold every one."]).strip()
            frame = item.frame.head(report_rows)
            words = column_words([*map(str, frame)], family, getattr(item, "columns", None))
            page.add_table(item.title, frame, item.formats, note, total=total, words=words)


def parameter_columns(family: str) -> list[str]:
    """The family's parameters that identify a result (no execution knobs)."""
    return [p.name for p in get_family(family).rules.params if p.identity]


def result_columns(family: str, rows: pd.DataFrame) -> pd.DataFrame:
    """Every row: strategy, identifying parameters, results (lists as short text), time, id."""
    fam = get_family(family)
    params = [c for c in parameter_columns(family) if c in rows]
    values = [c for c in fam.solver.columns if c in rows]
    cols = [c for c in ["strategy", *params, *values, "seconds", "task_id"] if c in rows]
    table = rows[list(dict.fromkeys(cols))].copy()
    if "strategy" in table and not table["strategy"].notna().any():
        table = table.drop(columns=["strategy"])
    for col in table.columns:
        if fam.solver.columns.get(col, "").startswith("list"):
            table[col] = [list_text(v) for v in table[col]]
    return table.dropna(axis=1, how="all")


LIST_SHOWN = 24  # a list result longer than this is shown by its ends and its length


def list_text(value: Any) -> str | None:
    """A list value as "1,2,3" text, floats to 6 significant digits, a long list by its
    first and last values and its length (the store keeps every value; None stays None)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    items = [f"{v:.6g}" if isinstance(v, float) else str(v) for v in list(value)]
    if len(items) > LIST_SHOWN:
        items = [*items[:12], "...", *items[-4:], f" ({len(value)} values)"]
    return ",".join(items)


def failure_table(family: str, errors: pd.DataFrame) -> pd.DataFrame:
    """The failed tasks: id, strategy, identifying parameters and the full error message."""
    cols = ["task_id", "strategy", *parameter_columns(family), "error"]
    table = errors[[c for c in dict.fromkeys(cols) if c in errors]]
    return table.dropna(axis=1, how="all").reset_index(drop=True)


# ------------------------------------------------------------------------------ the page


class Page:
    """An HTML page being assembled: body fragments, tables and figures as JSON data."""

    def __init__(self, title: str):
        self.title = title
        self.body: list[str] = []
        self.tables: list[dict[str, Any]] = []
        self.figures: list[dict[str, Any]] = []

    def add_html(self, fragment: str) -> None:
        """Append an HTML fragment (already escaped) to the body."""
        self.body.append(fragment)

    def add_table(
        self,
        title: str,
        frame: pd.DataFrame,
        formats: Mapping[str, str] | None = None,
        note: str = "",
        *,
        open_: bool = True,
        css: str = "",
        total: int | None = None,
        words: Mapping[str, str] | None = None,
    ) -> None:
        """Append a sortable, filterable table of ``frame`` (collapsed unless ``open_``);
        ``total``: how many rows exist when ``frame`` holds only the first of them;
        ``words``: what each column holds (its header's tooltip and the table's list)."""
        n = len(self.tables)
        self.tables.append(table_spec(title, frame, formats or {}, words or {}))
        tag = "open" if open_ else ""
        count = f"{len(frame):,} rows"
        if total is not None and total > len(frame):
            count = f"first {len(frame):,} of {total:,} rows"
        self.body.append(
            f"<details class='table-block {css}' {tag}><summary>{esc(title)} "
            f"<span class='count'>({count})</span></summary>"
            + (f"<p class='note'>{esc(note)}</p>" if note else "")
            + f"<div class='gl-table' data-table='{n}'></div></details>"
        )

    def add_figure(self, title: str, figure: Any, note: str = "") -> None:
        """Append an interactive Plotly figure."""
        n = len(self.figures)
        spec = figure_spec(figure)
        caption = drawn_title(spec)
        self.figures.append(spec)
        self.body.append(
            f"<div class='figure-block'><h4>{esc(title)}</h4>"
            + (f"<p class='figure-title'>{esc(caption)}</p>" if caption else "")
            + (f"<p class='note'>{esc(note)}</p>" if note else "")
            + f"<div class='gl-figure' id='figure-{n}' data-figure='{n}'></div></div>"
        )

    def html(self) -> str:
        """The whole page: styles, body, data and scripts inlined."""
        data = json_script({"tables": self.tables, "figures": self.figures})
        plotly = (
            f"<script type='application/octet-stream' id='plotly-gz'>{plotly_gz_base64()}</script>"
            if self.figures
            else ""
        )
        return (
            html_head(self.title)  # marked as guesslab's (pipeline.storage.own_files)
            + f"<style>{asset('report.css')}</style></head><body>\n"
            + "\n".join(self.body)
            + f"\n<script type='application/json' id='gl-data'>{data}</script>\n{plotly}\n"
            + f"<script>{asset('table.js')}\n{asset('report.js')}</script>\n</body></html>\n"
        )


def table_spec(
    title: str,
    frame: pd.DataFrame,
    formats: Mapping[str, str],
    words: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A table as the page's script reads it: columns (name, kind, format, and what it
    holds in ``words``) and rows."""
    columns = []
    for col in frame.columns:
        shown_as = column_kind(frame[col], str(col), formats.get(str(col)))
        fmt = formats.get(str(col), ".10g" if shown_as == "number" else "")
        column = {"name": str(col), "kind": shown_as, "format": fmt}
        if (words or {}).get(str(col)):
            column["about"] = words[str(col)]
        columns.append(column)
    rows = [[json_value(v) for v in row] for row in frame.itertuples(index=False)]
    return {"title": title, "columns": columns, "rows": rows}


def column_kind(values: pd.Series, name: str, fmt: str | None) -> str:
    """ "number", "exact" (a "p/q" string column) or "text"."""
    if fmt == "exact" or (name.endswith("_exact") and fmt is None):
        return "exact"
    if pd.api.types.is_bool_dtype(values):
        return "text"
    if pd.api.types.is_numeric_dtype(values):
        return "number"
    present = values.dropna()
    if len(present) and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in present
    ):
        return "number"
    return "text"


def json_value(value: Any) -> Any:
    """A cell as JSON: NaN/None as null, infinities as "inf"/"-inf", numpy scalars as Python."""
    if value is None or value is pd.NA:
        return None
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item() if getattr(value, "ndim", 0) == 0 else list(value)
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
    if isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return ",".join(map(str, value))
    return str(value)


def figure_spec(figure: Any) -> dict[str, Any]:
    """A Plotly figure as its JSON (data and layout)."""
    import plotly.io

    return json.loads(plotly.io.to_json(figure, validate=False))


def drawn_title(spec: dict[str, Any]) -> str:
    """The title a figure's layout draws, taken out of it (as text: a tag such as ``<br>`` a
    space): the
    page shows it above the figure, where it wraps at any width and no toolbar covers it."""
    layout = spec.setdefault("layout", {})
    title = layout.pop("title", None)
    text = title.get("text", "") if isinstance(title, dict) else str(title or "")
    return " ".join(re.sub(r"<[^>]*>", " ", text).split())


def json_script(data: Any) -> str:
    """``data`` as JSON safe inside a <script> element."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


@functools.cache
def plotly_gz_base64() -> str:
    """Plotly's JavaScript (from the installed plotly package), gzip-compressed, base64."""
    from plotly.offline import get_plotlyjs

    return base64.b64encode(gzip.compress(get_plotlyjs().encode(), 6, mtime=0)).decode()


@functools.cache
def asset(name: str) -> str:
    """The text of one of the report's inlined assets (pipeline/assets/NAME)."""
    return (ASSETS / name).read_text()


def esc(value: Any) -> str:
    """``value`` as escaped HTML text."""
    return html.escape(str(value), quote=True)


def write_atomic(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a new temporary file renamed into place (never
    written through a link: pipeline.storage.safe_paths)."""
    return write_replacing(path, text.encode("utf-8"))
