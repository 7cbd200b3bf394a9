"""What each result column of the family's rows holds, in a line (the registry's
``column_docs``: the report's tooltips and column lists, the manual's column tables)."""

from __future__ import annotations

from solvers.card_guessing.tasks import feedback_tasks

COLUMN_DOCS = {
    "expected_score": "expected number of correct guesses (float)",
    "expected_score_exact": "expected_score as an exact fraction p/q (exact solvers only)",
    "score_variance": "variance of the number of correct guesses",
    "score_variance_exact": "score_variance as an exact fraction p/q",
    "score_std": "standard deviation of the number of correct guesses",
    "score_pmf": "probability of each number of correct guesses, from 0 up",
    "n_states": "states the solver visited (exact and float methods)",
    "std_error": "Monte Carlo standard error of expected_score (empty when exact)",
    "first_moves": "method=float, optimal: the optimal first moves as an indented decision tree",
    **feedback_tasks.COLUMN_DOCS,
}
