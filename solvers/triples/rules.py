"""What a task of ``triples`` is: its deck, its analysis and the levels it reads (the
family's :class:`~solvers.family.Rules`)."""

from __future__ import annotations

from solvers.family import Rules
from solvers.params import IntCheck, OrAbsent, Param, max_states_param, one_of
from solvers.registry import Task, TaskError
from solvers.triples import win

ANALYSES = ("win_probability", "monte_carlo", "hitting_times", "distribution", "equilibrium")
USES: dict[str, tuple[str, ...]] = {  # analysis -> the optional parameters it requires
    "win_probability": ("n",),
    "monte_carlo": ("n", "games"),
    "hitting_times": ("start",),
    "distribution": ("start", "rounds"),
    "equilibrium": (),
}
OPTIONAL = ("n", "start", "rounds", "games")
MAX_ROUNDS = 200
MAX_GAMES = 10_000_000
DEFAULT_MAX_STATES = 1_000_000


_positive = IntCheck(low=1)


def _optional(low: int, high: int | None = None) -> OrAbsent:
    return OrAbsent(IntCheck(low, high))


def check_task(task: Task) -> None:
    """Refuse impossible decks, levels out of range and parameters the analysis does not use."""
    ranks, suits, k = task["ranks"], task["suits"], task["k"]
    if k + 1 > suits:
        raise TaskError(
            "k",
            k,
            f"k + 1 = {k + 1} > suits = {suits}: no rank can reach k + 1 of a kind (no quartet "
            "is possible), so B could never win; use k <= suits - 1",
        )
    states = win.tally_state_count(ranks, k)
    if states > task["max_states"]:
        raise TaskError(
            "ranks",
            ranks,
            f"too large for the exact solver: {states:,} tally states for k={k}, limit "
            f"max_states={task['max_states']:,} (raise max_states to try anyway)",
        )
    used = USES[task["analysis"]]
    for name in OPTIONAL:
        if name in used and task[name] is None:
            raise TaskError(name, None, f"required by analysis {task['analysis']!r}")
        if name not in used and task[name] is not None:
            users = [a for a, names in USES.items() if name in names]
            raise TaskError(
                name,
                task[name],
                f"does not apply to analysis {task['analysis']!r} (only to {', '.join(users)})",
            )
    top = ranks + 1
    for name in ("n", "start"):
        if task[name] is not None and not 1 <= task[name] <= top:
            raise TaskError(name, task[name], f"levels run from 1 to ranks + 1 = {top}")


RULES = Rules(
    params=(
        Param("ranks", _positive, 13, "number of ranks (face values)", dtype="int64"),
        Param("suits", _positive, 4, "cards per rank", dtype="int64"),
        Param("k", _positive, 3, "size of a kind (3: triples; B wins on k+1)", dtype="int64"),
        Param("analysis", one_of(ANALYSES), "win_probability", "what the task computes"),
        Param("n", _optional(0), None, "level: kinds A needs", dtype="int64"),
        Param("start", _optional(0), None, "starting level of the chain", dtype="int64"),
        Param("rounds", _optional(0, MAX_ROUNDS), None, "rounds of the chain", dtype="int64"),
        Param("games", _optional(1, MAX_GAMES), None, "Monte Carlo games", dtype="int64"),
        max_states_param(DEFAULT_MAX_STATES, "refuse decks with more tally states than this"),
    ),
    check_task=check_task,
)
