"""How far ``stage=plan``'s solver-time estimates are from the time measured.

``python benchmarks/bench_estimate.py``: for each family with an ``estimate``, a set of
tasks (its examples and a ladder of sizes), the estimate next to the CPU time of one cold
solve (a fresh process: caches empty) and the ratio.  The constants of a family's model were
set from this script's output; the manual's benchmarks page gives the range of ratios.
"""

from __future__ import annotations

import multiprocessing as mp
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from solvers import get_family, solve, validate  # noqa: E402

DECKS = [[2, 1], [3, 3, 3], [4, 4, 4], [5, 5, 5], [3, 3, 3, 3], [6, 6, 6], [4, 4, 4, 4]]
TASKS = [
    {"family": "card_guessing", "strategy": s, "deck": d, "feedback": "partial", **extra}
    for s, extra in [("optimal", {}), ("greedy", {}), ("info", {"gamma": 0.5})]
    for d in DECKS
]


def cold_seconds(task: dict, queue) -> None:
    start = time.process_time()
    solve(task, canonical=True)
    queue.put(time.process_time() - start)


def main() -> None:
    ctx = mp.get_context("fork")
    ratios = []
    print(f"{'task':55} {'estimate':>10} {'measured':>10} {'ratio':>7}")
    for raw in TASKS:
        task = validate(raw)
        estimate = get_family(task["family"]).scheduling.estimate(task)
        queue = ctx.Queue()
        proc = ctx.Process(target=cold_seconds, args=(task, queue))
        proc.start()
        measured = queue.get()
        proc.join()
        ratios.append(estimate / measured)
        label = f"{task['strategy']} deck={task['deck']}"
        print(f"{label:55} {estimate:9.4f}s {measured:9.4f}s {ratios[-1]:7.2f}")
    print(f"estimate / measured: {min(ratios):.2f} to {max(ratios):.2f}")


if __name__ == "__main__":
    main()
