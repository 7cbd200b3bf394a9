"""Rows and up-front checks for the ranked solver (``method: ranked``) and the persistent policy.

``method: ranked`` solves a uniform deck (r types of m cards) with uniform_deck/: strategy
``optimal``, ``greedy`` with ``tie_break: pair`` (ties to the smallest (c, p) pair) or
``persistent`` (window PERSISTENT_WINDOW).  ``method: monte_carlo`` plays ``persistent`` or
greedy with pair ties on shuffled decks (simulation/persistent.py), seeded from the task id.

Where a ranked solve runs is sized by where it runs (solvers/kit/task_context.py): in this process's
memory when its arrays (in_memory.estimated_bytes) fit the task's memory budget and the
knob ``workers`` is 1; otherwise out of core (uniform_deck/out_of_core.py): layers on disk in the
task's checkpoint folder, each split into chunks spread where the task's context says (the Dask
workers of the cluster the task runs on, or one after another in this process).
:func:`needs` tells the pipeline the least memory per process and the disk that takes, before
any work.
"""

from __future__ import annotations

from solvers.registry import Row, Task, TaskError
from solvers.task_ids import task_rng

STRATEGIES = ("optimal", "greedy", "persistent")
# ties to the smallest (c, p) pair: greedy's only, on these methods (the parameter table's
# words for tie_break are made from the same two constants)
PAIR_STRATEGIES = ("greedy",)
PAIR_METHODS = ("ranked", "monte_carlo")
# persistent's window, fixed (a new family parameter would change every existing task id);
# chosen as the best of 0.05..0.16 on 4 to 6 types of 4 (uniform_deck/in_memory.py): see the manual
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
    from solvers.card_guessing.uniform_deck import ranks

    if task.get("tie_break") == "pair" and task["strategy"] not in PAIR_STRATEGIES:
        raise TaskError(
            "tie_break",
            "pair",
            f"pair ties are {', '.join(PAIR_STRATEGIES)}'s only; {task['strategy']} breaks ties "
            "by lowest, highest or uniform",
        )
    if task["feedback"] != "partial":
        raise TaskError("feedback", task["feedback"], "ranked and persistent need partial")
    if task["method"] not in PAIR_METHODS:
        what = "pair ties run" if task.get("tie_break") == "pair" else f"{task['strategy']} runs"
        raise TaskError("method", task["method"], f"{what} as {' or '.join(PAIR_METHODS)} only")
    if task["strategy"] not in STRATEGIES:
        raise TaskError("strategy", task["strategy"], f"method=ranked solves {STRATEGIES}")
    if task["strategy"] == "greedy" and task["tie_break"] != "pair":
        raise TaskError("tie_break", task["tie_break"], "ranked greedy breaks ties by pair")
    if task["strategy"] == "optimal" and task["method"] != "ranked":
        raise TaskError("method", task["method"], "optimal Monte Carlo: not through ranked")
    if task["method"] != "ranked":
        return
    try:
        ranks.codes(task["deck"])
    except ValueError as exc:
        raise TaskError("deck", task["deck"], str(exc)) from None


def in_memory_bytes(deck) -> int:
    """Peak bytes of a process solving ``deck`` in memory: its arrays and the process's own."""
    from solvers.card_guessing.uniform_deck import in_memory, out_of_core

    return in_memory.estimated_bytes(deck) + out_of_core.BASE_BYTES


def needs(task: Task, workers: int):
    """What a checked ``method: ranked`` task needs per process (None for other tasks): in
    memory, its arrays; out of core, a worker's least chunk and the layers' disk.  The smaller
    memory is the need (the run goes out of core when the budget is below the in-memory one)."""
    if task["method"] != "ranked":
        return None
    from solvers.card_guessing.uniform_deck import out_of_core
    from solvers.kit.budget import Need
    from solvers.kit.words import format_bytes

    deck = task["deck"]
    whole = in_memory_bytes(deck)
    plan = out_of_core.plan(deck)
    largest = max(plan.sizes)
    states = f"{sum(plan.sizes):,} ranked states in {len(plan.sizes)} layers of up to {largest:,}"
    sizes = {"states": sum(plan.sizes), "largest": largest, "cpu_seconds": estimated_seconds(task)}
    if (task["workers"] or 1) == 1 and whole <= plan.memory:
        return Need(whole, 0, f"{states}; in memory", **sizes)
    workers = max(workers, 1)
    share = out_of_core.BASE_BYTES + -(-largest // workers) * out_of_core.BYTES_PER_CHUNK_STATE
    hours = estimated_seconds(task) / 3600
    return Need(
        plan.memory,
        plan.disk,
        f"{states}; in memory {format_bytes(whole)} if the budget holds it, else out of core: "
        f"{format_bytes(plan.disk)} of layer files, per worker at least "
        f"{format_bytes(plan.memory)} (chunks sized by its budget; {format_bytes(share)} takes "
        f"the largest layer in one chunk per worker of {workers}); about {hours:,.1f} CPU-hours",
        shared=shared_key(deck),
        shared_disk=out_of_core.last_layer_bytes(plan.sizes),
        shared_cpu_seconds=last_layer_seconds(deck),
        **sizes,
    )


def shared_key(deck) -> str:
    """The key of the checkpoint pieces the tasks of one deck share (its last layer, the same
    for every policy): ``uniform-11x4`` for 11 types of 4."""
    return f"uniform-{len(deck)}x{deck[0]}"


def splits(task: Task) -> bool:
    """Whether a checked task runs out of core (uniform_deck/out_of_core.py): ``method:
    ranked`` with ``workers`` > 1, or whose in-memory arrays pass this process's budget."""
    if task["method"] != "ranked":
        return False
    from solvers.kit.task_context import current

    if (task["workers"] or 1) > 1:
        return True
    return in_memory_bytes(task["deck"]) > current().budget.bytes


def split_rows(task: Task) -> list[Row]:
    """The row of a ranked task solved out of core (uniform_deck/out_of_core.py), its chunks
    spread where its context says (``TaskContext.spread``: the cluster the task runs on, or
    this process).  A chunk's kernels run on every core of their process already (Numba's
    ``prange``), so the task asks for one chunk at a time in a process: two threads
    launching parallel kernels at once would gain little, and Numba's ``workqueue``
    threading layer (where neither TBB nor OpenMP is found) ends the process when they do."""
    from solvers.card_guessing.tasks.float_tasks import solution_row
    from solvers.card_guessing.uniform_deck import out_of_core
    from solvers.kit.task_context import current

    ctx = current()
    with ctx.spread(1) as spread:
        # the budget where the task runs (run.memory_budget, the workers' limit), and never
        # past a place's own limit (Dask would end a worker there)
        limits = [ctx.budget.bytes, spread.memory_limit or ctx.budget.bytes]
        sol = out_of_core.solve(
            task["deck"],
            task["strategy"],
            window(task),
            spread=spread,
            checkpoints=ctx.checkpoints,
            budget_bytes=min(limits),
            progress=lambda done, total, note: ctx.progress(done, total, "ranks", note),
            shared=ctx.shared(shared_key(task["deck"])),
        )
    return [solution_row(sol)]


def window(task: Task) -> float:
    """The task's window: PERSISTENT_WINDOW for persistent, 0 for greedy with pair ties."""
    return PERSISTENT_WINDOW if task["strategy"] == "persistent" else 0.0


def player(task: Task):
    """``persistent``, or greedy with pair ties, as a belief_players.Player: the decision
    function the Monte Carlo runs play (simulation/persistent.py), in a labelled (c, p) state."""
    from solvers.card_guessing.simulation import persistent

    policy = "persistent" if task["strategy"] == "persistent" else "pairs"
    return persistent.ChoicePlayer(policy, window(task))


def rows(task: Task) -> list[Row]:
    """One row: the ranked solve's mean, variance, pmf and states, or Monte Carlo play."""
    if task["method"] == "monte_carlo":
        from solvers.card_guessing.simulation import persistent
        from solvers.card_guessing.tasks.yes_no_tasks import scores_row

        policy = "persistent" if task["strategy"] == "persistent" else "pairs"
        scores, _ = persistent.policy_scores(
            task["deck"], task["n_games"], task_rng(task), policy, window(task)
        )
        return [scores_row(scores, sum(task["deck"]))]
    from solvers.card_guessing.tasks.float_tasks import solution_row
    from solvers.card_guessing.uniform_deck import in_memory

    return [solution_row(in_memory.solve(task["deck"], task["strategy"], window=window(task)))]


# The cost model of ``stage=plan`` (benchmarks/bench_ranked_fit.py), r types: CPU seconds =
# SECONDS_PER_SOLVE + POLICY_SECONDS x r x ranks (every layer: the value layers and the score
# pass) + LAST_LAYER_SECONDS x r x the last layer's ranks (its T and log A, which a deck's
# policies share).  Fitted by least squares on out-of-core solves of 8, 9 and 10 types of 4
# on 2 workers (docs/data/ranked_out_of_core.yaml; the benchmarks page shows the model
# against each).  Its reach past 10 types is an extrapolation: the
# page cache holds two adjacent value layers of 10 types (7.6 GB) on a 24 GB machine, not of
# 11 types (33 GB) or 13 x 4.
POLICY_SECONDS = 0.42127e-7
LAST_LAYER_SECONDS = 0.61030e-7
SECONDS_PER_SOLVE = 1.0
# a deck whose arrays take under SMALL_BYTES, solved in memory in a worker that has loaded
# the kernels: a fixed cost of 0.05-0.4 s (ranks52_quick: 1 to 6 types of 4, the three
# policies, 5.4 s of CPU for 18 solves; benchmarks/bench_plan_estimate.py)
SECONDS_PER_SMALL_SOLVE = 0.15
SMALL_BYTES = 2**26  # 6 types of 4: 16 MiB; the out-of-core fits start at 8 types (525 MiB)


def estimated_seconds(task: Task) -> float | None:
    """CPU seconds of a checked ``method: ranked`` task computing all of its layers, by the
    cost model above."""
    if task["method"] != "ranked":
        return None
    from solvers.card_guessing.uniform_deck import in_memory

    small = in_memory.estimated_bytes(task["deck"]) < SMALL_BYTES
    return (
        (SECONDS_PER_SMALL_SOLVE if small else SECONDS_PER_SOLVE)
        + POLICY_SECONDS * policy_rank_types(task["deck"])
        + (last_layer_seconds(task["deck"]))
    )


def last_layer_seconds(deck) -> float:
    """CPU seconds of the last layer of ``deck`` (shared by its policies), by the model."""
    from solvers.card_guessing.uniform_deck.ranks import layer_sizes

    return LAST_LAYER_SECONDS * len(deck) * layer_sizes(deck)[-1]


def policy_rank_types(deck) -> int:
    """Types times ranks over every layer of ``deck``."""
    from solvers.card_guessing.uniform_deck.ranks import layer_sizes

    return len(deck) * sum(layer_sizes(deck))
