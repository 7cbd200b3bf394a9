"""The summary stage: read a study's store, write summary.md, tables and plots.

Counts come from DuckDB and a large family's rows reach its functions lazily (StoredRows),
so a store of 10^6-10^7 rows is never read into pandas whole (docs/faults-and-load.md,
"Summaries of large stores").  Re-run it alone with
``python -m pipeline study=NAME stage=summary``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from pipeline.outputs.headline import FAILED_TASKS
from pipeline.outputs.index import write_index
from pipeline.outputs.page_text import html_code
from pipeline.outputs.report import REPORT_ROWS, parameter_columns, write_report
from pipeline.outputs.searches import searches_section
from pipeline.storage import store
from pipeline.storage.own_files import SUMMARY_MARK
from pipeline.storage.safe_paths import ensure_dir, write_replacing
from pipeline.storage.store import family_rows
from pipeline.storage.store_overview import StoreCounts, status_line, store_counts
from pipeline.storage.study_folder import StudyFolder
from solvers.family import Family
from solvers.kit.stored_rows import StoredRows, accepts_stored_rows, takes_stored_rows
from solvers.kit.summary_parts import left_out, markdown_code, markdown_table, markdown_text
from solvers.kit.words import counted
from solvers.registry import COMMON_COLUMNS, family_summary, get_family

GENERIC_ROWS = 200


def write_summary(
    folder: StudyFolder,
    study: Mapping[str, Any],
    *,
    large_rows: int = store.LARGE_ROWS,
    report_rows: int = REPORT_ROWS,
    counts: StoreCounts | None = None,
) -> Path:
    """Write the study ``folder``'s summary.md (and summary/ files) from its store; its path.

    The store is never read into pandas whole: counts come from DuckDB (store_counts, or
    ``counts`` when the caller has them), a family's ok rows reach its functions as a
    DataFrame up to ``large_rows`` rows and as a StoredRows beyond (if they take one), and
    the report embeds at most ``report_rows`` rows of a family's rows.  Staging folders of
    summaries killed mid-write are removed first.
    """
    study_dir, results = folder.path, folder.results
    folder.remove_stale_staging()
    ensure_dir(study_dir / "summary", below=study_dir)  # a real folder, not a link
    counts = counts if counts is not None else store_counts(results)
    # the study's name and description are shown as typed (no Markdown or HTML of theirs)
    parts = [
        SUMMARY_MARK,
        f"# Study {markdown_code(study['name'])}",
        "",
    ]  # pipeline.storage.own_files
    if study.get("description"):
        parts += [markdown_text(" ".join(str(study["description"]).split())), ""]
    codes = current_codes(study)
    # each family's results files of other versions of its code, found once
    others = {
        f: store.current_version_files(store.family_files(results, f), f)[1]
        for f in counts.families
    }
    # the header counts what the tables show; the rows of other versions of code are counted
    # apart (the families' notes say whose)
    shown = store_counts(results, shown_rows(codes)) if may_leave_out(codes, others) else counts
    parts += [status_line(shown, left_out=counts.rows - shown.rows), ""]
    parts += searches_section(folder)  # a search's best heads the summary
    oks, notes = {}, {}
    for name in counts.families:
        family = get_family(name)  # looked up once, handed on
        fn = family_summary(name) or generic_summary
        where = current_code_rows(codes, family)
        facts = other_code_facts(folder, family, codes, others[name])
        oks[name] = ok = store.ok_rows(
            results, name, lazy_ok=accepts_stored_rows(fn), large_rows=large_rows, where=where
        )
        with folder.staged("summary") as staging:  # summary/ gets complete files only (a full disk)
            text = fn(ok, staging)
        parts += [f"## Family `{name}`", "", text.rstrip(), ""]
        parts += [*(note(markdown_code) for note in facts), *([""] if facts else [])]
        notes[name] = [note(html_code) for note in facts]
        if n_errors := shown.rows_with("error", name):
            errors = family_rows(results, name, "error").frame(limit=GENERIC_ROWS)
            parts += [f"### {FAILED_TASKS}", "", markdown_table(_error_table(family, errors)), ""]
            every = f"report.html (up to {report_rows:,}) and the store (status = 'error')"
            if note := left_out(len(errors), n_errors, "failed rows", every):
                parts += [note, ""]
    path = write_replacing(folder.summary, "\n".join(parts).encode())
    # report.html beside it (pipeline/outputs/report.py), and <outputs>/index.html
    # (pipeline/outputs/index.py)
    write_report(
        folder,
        study,
        oks=oks,
        counts=shown,
        report_rows=report_rows,
        large_rows=large_rows,
        notes=notes,
        left_out=counts.rows - shown.rows,
    )
    write_index(study_dir.parent, known={folder.name: counts})
    return path


def current_codes(study: Mapping[str, Any]) -> dict[str, tuple[str, str | None]]:
    """The study's strategies of one's own: name -> (``_target_``, the fingerprint of the
    code it names now, or None where it cannot be imported here)."""
    from solvers.own_code import code_fingerprint, own_strategies
    from solvers.own_strategy import target_class

    out: dict[str, tuple[str, str | None]] = {}
    for name, target in own_strategies(study).items():
        try:
            out[name] = (target, code_fingerprint(target_class(target)))
        except (OSError, ValueError):
            out[name] = (target, None)
    return out


def current_code_rows(codes: Mapping[str, tuple[str, str | None]], family: Family) -> str:
    """SQL: the rows of the study's own strategies computed by the code they name now (the
    rows of other versions of that code are kept in the store, not summarized), and every
    other row; empty where the family has no such strategies."""
    if "strategy_code" not in family.rules.param_names:
        return ""
    from solvers.kit.stored_rows import sql_text

    kept = [
        f"NOT (strategy = {sql_text(name)} AND strategy_code IS DISTINCT FROM {sql_text(code)})"
        for name, (_, code) in codes.items()
        if code is not None
    ]
    return " AND ".join(kept)


Note = Callable[[Callable[[Any], str]], str]  # a sentence, given how names are shown


def other_code_facts(
    folder: StudyFolder,
    family: Family,
    codes: Mapping[str, tuple[str, str | None]],
    others: list[Path],
) -> list[Note]:
    """Sentences saying how many results files of other versions of the family the store of
    ``folder`` keeps (``others``) and the summary leaves out, and per strategy of one's own
    how many ok rows of other versions of its code, or that its code cannot be checked;
    counted once, each to be said in Markdown (the summary) and in HTML (the report), given
    how a name or a version is shown."""
    notes: list[Note] = []
    if others:
        notes.append(other_version_note(family, others))
    if not codes or "strategy_code" not in family.rules.param_names:
        return notes  # no strategy of one's own: no rows to count
    from solvers.kit.stored_rows import sql_text

    stored = family_rows(folder.results, family.name, "ok")
    for name, (target, fingerprint) in codes.items():
        if fingerprint is None:
            notes.append(
                lambda code, name=name, target=target: (
                    f"{code(name)}: {code(target)} cannot be imported here, so rows of every "
                    "version of its code are shown."
                )
            )
            continue
        this_code = sql_text(fingerprint)
        other = stored.count(
            f"strategy = {sql_text(name)} AND strategy_code IS DISTINCT FROM {this_code}"
        )
        if other:
            notes.append(
                lambda code, name=name, target=target, fingerprint=fingerprint, other=other: (
                    f"{code(name)}: the store keeps {counted(other, 'row')} computed by other "
                    f"versions of {code(target)}'s code, left out here (this version: "
                    f"{code(fingerprint)}, the column strategy_code)."
                )
            )
    return notes


def shown_rows(codes: Mapping[str, tuple[str, str | None]]) -> Any:
    """The rows a summary shows of a family's files (for :func:`store_counts`): those of the
    files this version of its code wrote, and of its ok rows those of the current code of
    each strategy of one's own (failed rows all shown, as the failed tasks' table shows)."""

    def shown(family: str, files: list[Path]) -> tuple[list[Path], str]:
        kept, _ = store.current_version_files(files, family)
        where = current_code_rows(codes, get_family(family))
        return kept, f"status <> 'ok' OR ({where})" if where else ""

    return shown


def may_leave_out(codes: Mapping[str, Any], others: Mapping[str, list[Path]]) -> bool:
    """Whether a summary may leave rows out: the study has strategies of its own, or the
    store keeps files of another version of a family (``others``: family -> those files; an
    older version of a package family, or other code of a family from elsewhere, whose
    version carries its fingerprint)."""
    return bool(codes) or any(others.values())


def other_version_note(family: Family, others: list[Path]) -> Note:
    """The sentence saying that the store keeps ``others``, results files of ``family``
    written by other versions of it (of its code), and leaves them out of the summary."""
    import pyarrow.parquet as pq

    rows = sum(pq.read_metadata(f).num_rows for f in others)
    versions = sorted({store.file_solver_version(f) or "none recorded" for f in others})
    name, version = family.name, family.version
    return lambda code: (
        f"{code(name)}: the store keeps {counted(len(others), 'results file')} written by "
        f"other versions of its code, left out here ({', '.join(code(v) for v in versions)}; "
        f"{counted(rows, 'row')}; this version: {code(version)}, the files' solver_version); "
        "a study asking for their tasks computes them again at this version."
    )


def _error_table(family: Family, errors: pd.DataFrame) -> pd.DataFrame:
    cols = ["task_id", "strategy", *parameter_columns(family), "error"]
    return errors[[c for c in dict.fromkeys(cols) if c in errors]].head(GENERIC_ROWS)


@takes_stored_rows
def generic_summary(rows: pd.DataFrame | StoredRows, out_dir: Path) -> str:
    """A table of the first GENERIC_ROWS results (parameters and scalar results) and how
    many more the store holds, for families without a summary of their own."""
    total = len(rows)
    if not total:
        return "No successful results."
    first = (
        rows.head(GENERIC_ROWS)
        if isinstance(rows, pd.DataFrame)
        else rows.frame(limit=GENERIC_ROWS)
    )
    fam = get_family(first["family"].iloc[0])
    params = [c for c in parameter_columns(fam) if c in first]
    values = [c for c, t in fam.solver.columns.items() if c in first and not t.startswith("list")]
    cols = [c for c in ["strategy", *params, *values] if c in first and c not in COMMON_COLUMNS]
    cols = ["strategy", *cols] if "strategy" in first and first["strategy"].notna().any() else cols
    table = first[list(dict.fromkeys(cols))]
    more = f"\n\n({total - GENERIC_ROWS} more rows in the store.)" if total > GENERIC_ROWS else ""
    return markdown_table(table) + more
