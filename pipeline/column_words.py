"""What each column of the report's tables holds, in words: a header's tooltip and the
table's list of columns (pipeline/assets/table.js).

A column's words come from, in order: the table's own (:attr:`solvers.kit.report_sections.
Table.columns`), the family's result columns' (:attr:`solvers.family.Solver.column_docs`),
its parameter docs (the registry's, as the manual's parameter tables print them; a
parameter's list column says so), the common words below, and else its name's form
(``X_exact``, ``X_std``) and its dtype.
"""

from __future__ import annotations

from collections.abc import Mapping

from solvers.params import plain_words
from solvers.registry import get_family, row_columns

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


def column_words(
    columns: list[str], family: str | None = None, own: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Every one of ``columns`` in words (see the module's docstring for where from)."""
    params: dict[str, str] = {}
    dtypes: dict[str, str] = {}
    if family is not None:
        fam = get_family(family)
        params = {p.name: plain_words(p.doc) for p in fam.rules.params if p.doc}
        params.update(
            {
                p.list_column: f"{p.name} as a list of integers (sorts by value): {params[p.name]}"
                for p in fam.rules.params
                if p.list_column and p.name in params
            }
        )
        params.update(fam.solver.column_docs)
        dtypes = row_columns(fam)
    known = {**COMMON, **params, **(own or {})}
    return {name: known.get(name) or by_form(name, dtypes) for name in columns}


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
