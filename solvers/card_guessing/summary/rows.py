"""The rows the card_guessing summary and report read from a large store (a StoredRows).

Every row but the ``info`` strategy's exact rows, and of those (10^6 on a dense gamma x r x
t grid) only the rows that decide a table, a figure or a count, chosen by DuckDB:

- the first MANY + 1 of each (deck, feedback): the per-deck table keeps every info row of a
  deck with at most MANY of them, else its first best (:func:`info.compact`);
- the first of each entropy point (r, t, log base) and of each gamma: the sections count
  them and list the gammas;
- per (deck, r, t), the first row of each exact score within 1e-9 of the best score, and
  every row at the same (deck, r, t, gamma): the entropy grid's best ratio, whether it
  reaches the optimum, its gamma (the first best) and its exact score.

Where the reduction would change something it is not made: with two feedback models (the
comparison reads every row) or one entropy point (the gamma sweep draws every gamma).  So
the summary and the report of the reduced rows are those of every row
(tests/test_summary_large.py); of the load benchmark's 10^6 rows, 2,499 are read.
"""

from __future__ import annotations

import pandas as pd

from solvers.card_guessing.summary.info import MANY
from solvers.kit.stored_rows import StoredRows, quoted

# What the summary and the report read of a large store (StoredRows): no ids, no messages,
# no lists (score_pmf), no execution knobs.
SUMMARY_COLUMNS = [
    *("status", "strategy", "deck", "feedback", "tie_break", "method", "n_games", "gamma"),
    *("entropy_r", "entropy_t", "log_base", "decrement", "expected_score"),
    *("expected_score_exact", "n_states", "std_error", "seconds", "first_moves"),
    *("bound_lower", "bound_lower_chords", "bound_upper", "family"),
    *("strategy_target", "strategy_params", "strategy_code"),
]
EXACT_INFO = "coalesce(strategy = 'info' AND method = 'exact', false)"
NEAR_BEST = 1e-9  # relative: a score this close to the best is read, and compared exactly


def summary_rows(rows: pd.DataFrame | StoredRows) -> pd.DataFrame:
    """The rows the summary and the report read: a DataFrame as it is; of stored rows, the
    SUMMARY_COLUMNS of the rows the module docstring lists, in store order (read once)."""
    if isinstance(rows, pd.DataFrame):
        return rows
    have = set(rows.columns)
    columns = [c for c in SUMMARY_COLUMNS if c in have]
    if not reducible(rows):
        return rows.cached_frame(columns)
    return rows.cached_query(reduced_sql(columns)).reset_index(drop=True)


def reducible(rows: StoredRows) -> bool:
    """Whether the exact info rows can be reduced: one feedback model, two or more entropy
    points (see the module docstring)."""
    feedbacks = rows.cached_query("SELECT count(DISTINCT feedback) AS n FROM rows")["n"].iloc[0]
    points = rows.cached_query(
        "SELECT count(*) AS n FROM (SELECT DISTINCT entropy_r, entropy_t, log_base "
        f"FROM rows WHERE {EXACT_INFO})"
    )["n"].iloc[0]
    return int(feedbacks) <= 1 and int(points) >= 2


def reduced_sql(columns: list[str]) -> str:
    """The SQL (over ``ordered_rows``) of every row but the exact info rows the module
    docstring leaves out, in store order, ``columns`` only.  Hash aggregates and joins on
    few groups, no window: 10^6 rows in ~1 s."""
    cols = ", ".join(quoted(c) for c in columns)
    point = ["deck", "entropy_r", "entropy_t"]
    keys = [*point, "gamma"]
    return f"""
        WITH exact AS (
            SELECT _row, deck, feedback, entropy_r, entropy_t, log_base, gamma,
                expected_score, expected_score_exact
            FROM ordered_rows WHERE {EXACT_INFO}
        ), best AS (
            SELECT deck, entropy_r, entropy_t, max(expected_score) AS top
            FROM exact GROUP BY ALL
        ), near_best AS (  -- the first row of each exact score near its point's best
            SELECT min(_row) AS _row
            FROM exact JOIN best ON {same(point, "exact", "best")}
            WHERE expected_score >= top - {NEAR_BEST} * abs(top)
            GROUP BY exact.deck, exact.entropy_r, exact.entropy_t, expected_score_exact
        ), best_keys AS (
            SELECT DISTINCT deck, entropy_r, entropy_t, gamma
            FROM exact SEMI JOIN near_best USING (_row)
        ), kept AS (
            SELECT unnest(min(_row, {MANY + 1})) AS _row FROM exact GROUP BY deck, feedback
            UNION SELECT min(_row) FROM exact GROUP BY entropy_r, entropy_t, log_base
            UNION SELECT min(_row) FROM exact GROUP BY gamma
            UNION SELECT _row FROM exact JOIN best_keys ON {same(keys, "exact", "best_keys")}
        )
        SELECT {cols} FROM ordered_rows
        WHERE NOT {EXACT_INFO} OR _row IN (SELECT _row FROM kept)
        ORDER BY _row
    """


def same(columns: list[str], left: str, right: str) -> str:
    """SQL: ``left`` and ``right`` agree on ``columns`` (NULL agreeing with NULL, as in a
    pandas groupby or a SQL GROUP BY)."""
    return " AND ".join(f"{left}.{c} IS NOT DISTINCT FROM {right}.{c}" for c in columns)
