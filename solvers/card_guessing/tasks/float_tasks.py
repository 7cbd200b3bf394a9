"""Tasks with ``method: float``: which engine solves each, the checks, and the rows.

- ``info``: the info policy's score distribution, forward over the states it reaches
  (info_policy/evaluation.py); lowest or highest ties, in this process.
- ``optimal`` on a uniform deck of 3 or more types, ``workers`` 1: the ranked states
  (uniform_deck/in_memory.py, first moves from uniform_deck/decision_tree.py): the same
  values as the hashed layers to 1e-12, in about a third of the time and memory.
- any other ``optimal``, and ``greedy`` (lowest or highest ties): the hashed layers
  (any_deck/); with ``workers`` > 1 (optimal only) every layer is split into ``workers``
  parts (any_deck/split_layers.py), spread where the task's context says: the cluster the task
  runs on, or threads of this process (solvers/kit/spread.py).

Every engine's row has the same columns: the float mean, variance and score distribution (no
exact columns), the states solved and, for optimal play, the first moves as a decision tree.
"""

from __future__ import annotations

from solvers.card_guessing.first_moves import TREE_DEPTH
from solvers.registry import Row, Task, TaskError

STRATEGIES = ("optimal", "greedy", "info")
TIE_BREAKS = ("lowest", "highest")


def check_task(task: Task) -> None:
    """Refuse, before any work, a ``method: float`` task no float engine can do."""
    from solvers.card_guessing.info_policy import moves
    from solvers.card_guessing.state_codes import layer_encoding

    if task["feedback"] != "partial":
        raise TaskError("method", "float", "the float solver is for feedback=partial")
    if task["strategy"] not in STRATEGIES:
        solves = ", ".join(STRATEGIES)
        raise TaskError("strategy", task["strategy"], f"method=float solves {solves}")
    if task["strategy"] != "optimal" and task["tie_break"] not in TIE_BREAKS:
        raise TaskError("tie_break", task["tie_break"], "method=float does lowest or highest")
    workers = task.get("workers") or 1
    if workers > 1 and task["strategy"] != "optimal":
        raise TaskError("workers", workers, "the distributed mode solves strategy=optimal only")
    encoding = moves.encoding if task["strategy"] == "info" else layer_encoding
    try:
        encoding(task["deck"])
    except ValueError as exc:
        raise TaskError("deck", task["deck"], str(exc)) from None


def runs_ranked(task: Task) -> bool:
    """Whether a ``method: float`` task runs on the ranked states: optimal play on a uniform
    deck in this process; other float tasks run on the hashed layers.  Decks of two types stay
    there too: the ranked space counts one feasible state more that no play reaches, so their
    ``n_states`` would differ from the rows the hashed layers stored (and two types are cheap
    either way)."""
    deck = task["deck"]
    return (
        task["strategy"] == "optimal"
        and len(deck) != 2
        and min(deck) == max(deck)
        and (task.get("workers") or 1) == 1
    )


def rows(task: Task) -> list[Row]:
    """One row of a checked ``method: float`` task, from the engine that solves it."""
    deck = task["deck"]
    if task["strategy"] == "info":
        from solvers.card_guessing.info_policy import evaluation

        value = evaluation.evaluate(
            deck,
            task["gamma"],
            task["entropy_r"],
            task["entropy_t"],
            task["log_base"],
            task["tie_break"],
        )
        return [solution_row(value)]
    if runs_ranked(task):
        from solvers.card_guessing.uniform_deck import decision_tree, in_memory

        sol = in_memory.solve(deck, keep_layers=TREE_DEPTH)
        return [tree_row(sol, decision_tree.decision_tree(sol, deck))]
    from solvers.card_guessing.any_deck import greedy, optimal

    if task["strategy"] == "optimal":
        sol = optimal.optimal(deck)
        return [tree_row(sol, optimal.decision_tree(sol, deck))]
    return [tree_row(greedy.greedy(deck, task["tie_break"]), None)]


def split_rows(task: Task) -> list[Row]:
    """The row of a ``workers > 1`` task, its layers split into ``workers`` parts spread
    where its context says (``TaskContext.spread``)."""
    from solvers.card_guessing.any_deck import optimal, split_layers
    from solvers.kit.task_context import current

    with current().spread(task["workers"]) as spread:
        sol = split_layers.optimal(spread, task["deck"], task["workers"])
    return [tree_row(sol, optimal.decision_tree(sol, task["deck"]))]


def tree_row(sol, tree: list[str] | None) -> Row:
    """The row of a float solution and its first moves (None: a policy that keeps none)."""
    return {**solution_row(sol), "first_moves": None if tree is None else "\n".join(tree)}


def solution_row(sol) -> Row:
    """The columns of a float solution (any engine's, with these fields): no exact ones."""
    return {
        "expected_score": sol.expected_score,
        "expected_score_exact": None,
        "score_variance": sol.score_variance,
        "score_variance_exact": None,
        "score_pmf": sol.score_pmf,
        "n_states": sol.n_states,
    }
