"""Rows and up-front checks for the ranked solver (``method: ranked``) and the persistent policy.

``method: ranked`` solves a uniform deck (r types of m cards) with ranked_states.py: strategy
``optimal``, ``greedy`` with ``tie_break: pair`` (ties to the smallest (c, p) pair) or
``persistent`` (window PERSISTENT_WINDOW).  ``method: monte_carlo`` plays ``persistent`` or
greedy with pair ties on shuffled decks (simulation/persistent.py), seeded from the task id.  A deck
whose ranked arrays would pass MAX_BYTES is refused before any work, naming its states and
memory.
"""

from __future__ import annotations

from solvers.registry import Row, Task, TaskError, task_rng

MAX_BYTES = 6 * 10**9  # one process of the shared 24 GB machine
STRATEGIES = ("optimal", "greedy", "persistent")
# persistent's window, fixed (a new family parameter would change every existing task id);
# chosen as the best of 0.05..0.16 on 4 to 6 types of 4 (exact, ranked_states.py): see the manual
PERSISTENT_WINDOW = 0.1


def applies(task: Task) -> bool:
    """Whether this module runs (and checks) ``task``."""
    return (
        task["method"] == "ranked"
        or task["strategy"] == "persistent"
        or task.get("tie_break") == "pair"
    )


def check_task(task: Task) -> None:
    """Refuse, before any work, a task the ranked solver or persistent play cannot do."""
    from solvers.card_guessing.floating import ranked_states

    if task["feedback"] != "partial":
        raise TaskError("feedback", task["feedback"], "ranked and persistent need partial")
    if task["method"] not in ("ranked", "monte_carlo"):
        raise TaskError(
            "method", task["method"], "persistent and pair ties run as ranked or monte_carlo"
        )
    if task["strategy"] not in STRATEGIES:
        raise TaskError("strategy", task["strategy"], f"method=ranked solves {STRATEGIES}")
    if task["strategy"] == "greedy" and task["tie_break"] != "pair":
        raise TaskError("tie_break", task["tie_break"], "ranked greedy breaks ties by pair")
    if task["strategy"] == "optimal" and task["method"] != "ranked":
        raise TaskError("method", task["method"], "optimal Monte Carlo: not through ranked")
    if task["method"] != "ranked":
        return
    try:
        cd = ranked_states.codes(task["deck"])
    except ValueError as exc:
        raise TaskError("deck", task["deck"], str(exc)) from None
    need = ranked_states.estimated_bytes(task["deck"])
    if need > MAX_BYTES:
        raise TaskError(
            "deck",
            task["deck"],
            f"too large for the ranked solver: about {int(cd.sizes.sum()):,} states, "
            f"{need / 1e9:.1f} GB of arrays (limit {MAX_BYTES / 1e9:.0f} GB)",
        )


def window(task: Task) -> float:
    """The task's window: PERSISTENT_WINDOW for persistent, 0 for greedy with pair ties."""
    return PERSISTENT_WINDOW if task["strategy"] == "persistent" else 0.0


def rows(task: Task) -> list[Row]:
    """One row: the ranked solve's mean, variance, pmf and states, or Monte Carlo play."""
    if task["method"] == "monte_carlo":
        from solvers.card_guessing.simulation import persistent, shuffled_decks

        policy = "persistent" if task["strategy"] == "persistent" else "pairs"
        scores, _ = persistent.policy_scores(
            task["deck"], task["n_games"], task_rng(task), policy, window(task)
        )
        return [shuffled_decks.summary(scores, sum(task["deck"]))]
    from solvers.card_guessing.floating import ranked_states
    from solvers.card_guessing.floating.layer_kernels import solution_row

    return [solution_row(ranked_states.solve(task["deck"], task["strategy"], window=window(task)))]
