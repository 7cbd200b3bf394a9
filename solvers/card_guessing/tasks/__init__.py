"""From a task to its result rows: checks and rows per kind of task, and the family's
:class:`~solvers.family.Solver`, which hands each checked task to the module of its kind.
"""

from __future__ import annotations

from solvers.card_guessing.tasks import (
    columns,
    feedback_tasks,
    float_tasks,
    own_tasks,
    ranked_tasks,
    yes_no_tasks,
)
from solvers.family import Solver
from solvers.own_strategy import is_own
from solvers.registry import Row, Task


def run(task: Task) -> list[Row]:
    """The rows of a checked task, from the module of tasks/ that runs its kind."""
    if is_own(task):
        return own_tasks.rows(task)
    if ranked_tasks.applies(task):
        return ranked_tasks.rows(task)
    if task["feedback"] != "partial":
        return feedback_tasks.rows(task)
    if task["method"] == "float":
        return float_tasks.rows(task)
    return yes_no_tasks.rows(task)


def split_rows(task: Task) -> list[Row]:
    """The rows of a task that spreads its work (the family's scheduling,
    :func:`~solvers.card_guessing.scheduling.splits_over_cluster`), from its distributed
    mode (its pieces spread where the task's context says: solvers/kit/spread.py)."""
    if task["method"] == "ranked":
        return ranked_tasks.split_rows(task)
    return float_tasks.split_rows(task)


SOLVER = Solver(
    run=run,
    column_docs=columns.COLUMN_DOCS,
    columns={
        "expected_score": "float64",
        "expected_score_exact": "string",
        "score_variance": "float64",
        "score_variance_exact": "string",
        "score_std": "float64",  # the square root of score_variance (registry.solve)
        "score_pmf": "list<float64>",
        "n_states": "int64",
        "std_error": "float64",
        "first_moves": "string",  # method=float, optimal: the first moves (first_moves.py)
        **feedback_tasks.COLUMNS,
    },
)
