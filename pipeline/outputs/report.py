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
from :func:`solvers.registry.family_report`.  Every column of every table is said in words
(:class:`ColumnWords`): its header's tooltip and the table's list of columns.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from pipeline.outputs.page_text import (
    asset,
    esc,
    json_script,
    json_value,
    plotly_gz_base64,
    write_atomic,
)
from pipeline.outputs.provenance import provenance
from pipeline.outputs.report_about import about_html
from pipeline.outputs.searches import add_searches
from pipeline.storage.own_files import html_head
from pipeline.storage.store import LARGE_ROWS, family_rows, files_metadata, ok_rows
from pipeline.storage.store_layout import family_dir
from pipeline.storage.store_overview import StoreCounts, frame_counts, status_line, store_counts
from pipeline.storage.study_folder import StudyFolder
from solvers.family import Family
from solvers.kit.stored_rows import StoredRows, accepts_stored_rows
from solvers.kit.words import counted
from solvers.params import plain_words
from solvers.registry import family_report, get_family, row_columns

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
    for name in sorted({*counts.families, *notes}):
        family = get_family(name)  # looked up once, handed on
        show, dtypes = family_report(name), row_columns(family)
        if rows is not None:
            fam_rows = rows[rows["family"] == name]
            ok: Rows = fam_rows[fam_rows["status"] == "ok"].reset_index(drop=True)
            errors: Rows = fam_rows[fam_rows["status"] == "error"]
        else:
            errors = family_rows(results, name, "error")
            ok = (oks or {}).get(name)
            if ok is None:  # no report function: the generic table reads 1 slice
                lazy_ok = show is None or accepts_stored_rows(show)
                ok = ok_rows(results, name, lazy_ok=lazy_ok, large_rows=large_rows)
        words = ColumnWords(family, dtypes)
        add_family(page, family, ok, errors, show=show, words=words, results=results,
                   report_rows=report_rows, notes=notes.get(name, []))  # fmt: skip
    return write_atomic(folder.report, page.html())


def first_rows(rows: Rows, n: int) -> pd.DataFrame:
    """The first ``n`` of ``rows`` (store order) as a DataFrame."""
    if isinstance(rows, pd.DataFrame):
        return rows.head(n)
    return rows.frame(limit=n)


# ------------------------------------------------------------------------------ provenance


def add_provenance(page: Page, folder: StudyFolder) -> pd.DataFrame:
    """The resolved config, package versions, code versions and the batches' times, from one
    read of each results file's footer (two passes took 6.3 s at 5,790 files); return the
    batch table."""
    files = folder.result_files()
    batches, newest, packages = provenance(files, files_metadata(files))
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
    words = ColumnWords()
    page.add_table("Package versions", packages, open_=False, words=words.of([*packages]))
    page.add_table(
        "Batches (one results file each)", batches, open_=False, words=words.of([*batches])
    )
    return batches


# ------------------------------------------------------------------------------ families


def add_family(
    page: Page,
    family: Family,
    ok: Rows,
    errors: Rows,
    *,
    show: Callable[..., list[Any]] | None,
    words: ColumnWords,
    results: Path,
    report_rows: int,
    notes: Sequence[str] = (),
) -> None:
    """A family's sections (``show``, its report function, or a generic table), its first
    ``report_rows`` rows and failures, and how to read every row when there are more; every
    column in ``words``; ``notes`` (HTML) say which of its stored rows are left out."""
    name = family.name
    page.add_html(f"<h2 id='family-{esc(name)}'>Family <code>{esc(name)}</code></h2>")
    n_ok = len(ok)
    if show is not None and n_ok:
        if isinstance(ok, StoredRows) and not accepts_stored_rows(show):
            ok = ok.frame()
        for section in show(ok):
            add_section(page, section, report_rows, words)
    shown = result_columns(family, first_rows(ok, report_rows))
    page.add_table(
        f"All results ({name})",
        shown,
        note=capped_note(name, len(shown), n_ok, results, "ok"),
        total=n_ok,
        words=words.of([*shown]),
    )
    for note in notes:
        page.add_html(f"<p class='note'>{note}</p>")
    n_errors = len(errors)
    if n_errors:
        shown = failure_table(family, first_rows(errors, report_rows))
        page.add_table(
            f"Failed tasks ({name})",
            shown,
            note=capped_note(name, len(shown), n_errors, results, "error"),
            css="failures",
            total=n_errors,
            words=words.of([*shown]),
        )


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
    page: Page, section: Any, report_rows: int = REPORT_ROWS, words: ColumnWords | None = None
) -> None:
    """One family section: its title, then its tables (the first ``report_rows`` rows of
    each; each column in ``words``, the family's), figures and paragraphs in order."""
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
            about = (words or ColumnWords()).of([*map(str, frame)], getattr(item, "columns", None))
            page.add_table(item.title, frame, item.formats, note, total=total, words=about)


def parameter_columns(family: Family) -> list[str]:
    """The family's parameters that identify a result (no execution knobs)."""
    return list(family.rules.identity_names)


def result_columns(family: Family, rows: pd.DataFrame) -> pd.DataFrame:
    """Every row: strategy, identifying parameters, results (lists as short text), time, id."""
    params = [c for c in parameter_columns(family) if c in rows]
    values = [c for c in family.solver.columns if c in rows]
    cols = [c for c in ["strategy", *params, *values, "seconds", "task_id"] if c in rows]
    table = rows[list(dict.fromkeys(cols))].copy()
    if "strategy" in table and not table["strategy"].notna().any():
        table = table.drop(columns=["strategy"])
    for col in table.columns:
        if family.solver.columns.get(col, "").startswith("list"):
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


def failure_table(family: Family, errors: pd.DataFrame) -> pd.DataFrame:
    """The failed tasks: id, strategy, identifying parameters and the full error message."""
    cols = ["task_id", "strategy", *parameter_columns(family), "error"]
    table = errors[[c for c in dict.fromkeys(cols) if c in errors]]
    return table.dropna(axis=1, how="all").reset_index(drop=True)


# ------------------------------------------------------------------------------ column words


# Columns shared by the families' rows, the provenance tables and the common results.
COMMON = {
    "task_id": "the task's id: a hash of its family, strategy and identifying parameters",
    "study": "the study that stored the row",
    "family": "the game (its family in the registry)",
    "strategy": "the strategy that played (the registry's name, or one's own)",
    "status": "ok, or error when the task failed",
    "error": "the failed task's error message",
    "seconds": "wall-clock seconds the task took on its worker",
    "expected_score": "expected number of correct guesses (float)",
    "expected_score_exact": "expected_score as an exact fraction p/q (exact solvers only)",
    "score_variance": "variance of the number of correct guesses",
    "score_std": "standard deviation of the number of correct guesses",
    "score_pmf": "probability of each number of correct guesses, from 0 up",
    "std_error": "Monte Carlo standard error of expected_score (empty when exact)",
    "n_states": "states the exact solver visited",
    "method": "how the score was computed: exact, float or a simulation",
    "package": "a Python package that computed the results",
    "version": "its version(s), as recorded in the results files",
    "stored_at": "when the results file was stored (UTC)",
    "run_started": "when the run that wrote the file started (UTC)",
    "file": "the results file (Parquet) in results/family=<name>/",
    "code_version": "the guesslab commit (or version) that computed the rows",
    "solver_version": "the family's solver version (CHANGELOG.md says what each changed)",
    "python": "the Python version of the run",
}


class ColumnWords:
    """What each column of the report's tables holds, in words: a header's tooltip and the
    table's list of columns (pipeline/assets/table.js).

    A column's words come from, in order: the table's own (:attr:`solvers.kit.report_sections.
    Table.columns`), the ``family``'s result columns' (:attr:`solvers.family.Solver.
    column_docs`), its parameter docs (the registry's, as the manual's parameter tables print
    them; a parameter's list column says so), the common words above, and else its name's
    form (``X_exact``, ``X_std``) and its dtype (``dtypes``: :func:`solvers.registry.
    row_columns`).  Made once per family; no family: the common words only.
    """

    def __init__(self, family: Family | None = None, dtypes: Mapping[str, str] | None = None):
        params: dict[str, str] = {}
        if family is not None:
            params = {p.name: plain_words(p.doc) for p in family.rules.params if p.doc}
            params.update(
                {
                    p.list_column: f"{p.name} as a list of integers (sorts by value): "
                    + params[p.name]
                    for p in family.rules.params
                    if p.list_column and p.name in params
                }
            )
            params.update(family.solver.column_docs)
        self.known = {**COMMON, **params}
        self.dtypes = dict(dtypes or {})

    def of(self, columns: Sequence[str], own: Mapping[str, str] | None = None) -> dict[str, str]:
        """Every one of ``columns`` in words, a table's ``own`` words first."""
        known = {**self.known, **(own or {})}
        return {name: known.get(name) or by_form(name, self.dtypes) for name in columns}


# a column named X<suffix> where nothing defines it: what it holds of X
FORMS = {
    "_exact": "{} as an exact fraction p/q",
    "_std": "standard deviation of {}",
    "_se": "Monte Carlo standard error of {}",
    "_std_error": "Monte Carlo standard error of {}",
}


def by_form(name: str, dtypes: Mapping[str, str]) -> str:
    """A column's words from its name's form and its dtype, where nothing defines it."""
    for suffix, words in FORMS.items():
        base = name.removesuffix(suffix)
        if base and base != name:
            return words.format(base)
    dtype = dtypes.get(name)
    return f"a result column ({dtype})" if dtype else f"column {name}"


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
