"""Recompute rows of the ranks page's table (docs/games/card_guessing_ranks52.md, n types of
4 cards, three policies) in memory with the current kernels and compare them with the page
to 1e-12; the tests do n = 1 to 8, this script the rows too costly for them.

    python benchmarks/check_ranks_table.py            # n = 9: about 4 CPU minutes, 2.3 GB
    python benchmarks/check_ranks_table.py --types 8,9

Prints one line per solve (the value, the page's, the difference, CPU seconds) and exits 1
if any differs by more than 1e-12.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from solvers.card_guessing.tasks import ranked_tasks  # noqa: E402
from solvers.card_guessing.uniform_deck import in_memory  # noqa: E402
from tests.helpers.pages import ranks_table  # noqa: E402

POLICIES = [("optimal", 0.0), ("greedy", 0.0), ("persistent", ranked_tasks.PERSISTENT_WINDOW)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--types", default="9", help="n, comma-separated (1 to 9 in memory)")
    args = parser.parse_args()
    page, bad = ranks_table(), 0
    for n in (int(t) for t in args.types.split(",")):
        for policy, window in POLICIES:
            cpu = time.process_time()
            value = in_memory.solve((4,) * n, policy, window=window).expected_score
            gap = abs(value - page[n][policy])
            bad += gap > 1e-12
            print(
                f"n = {n} {policy:>10}: {value!r} page {page[n][policy]} differ {gap:.1e} "
                f"({time.process_time() - cpu:.1f} s CPU)",
                flush=True,
            )
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
