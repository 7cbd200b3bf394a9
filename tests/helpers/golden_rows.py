"""Golden rows: per family and version, the schema of its rows and the rows of a few small
tasks, in ``tests/golden/<family>-v<version>.json``; ``tests/test_contract.py`` computes
them again and compares.  A change to a family's schema or values therefore fails until the
family gets a new version, and the new version's file is written by

    python -m tests.helpers.golden_rows FAMILY [FAMILY ...]

which writes the file of each family's current version and refuses to replace one that
exists (the rows of a version never change).  Floats compare to 12 significant digits (a
kernel compiled for another CPU may round its last bit otherwise); every other value, exact
fractions included, compares equal.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from tests.helpers.repository import ROOT

GOLDEN = ROOT / "tests" / "golden"
RELATIVE = 1e-12  # float values: to 12 significant digits

# small tasks (a second or less each once compiled) covering each family's kinds of rows:
# exact, float and Monte Carlo values, the strategies whose rows have columns of their own
TASKS: dict[str, tuple[dict[str, Any], ...]] = {
    "card_guessing": (
        {"deck": [2, 2, 1], "strategy": "greedy"},
        {"deck": [3, 3, 3], "strategy": "optimal"},
        {"deck": [3, 3, 3], "strategy": "greedy", "method": "monte_carlo", "n_games": 500},
        {"deck": [2, 2, 2], "feedback": "complete", "strategy": "optimal"},
    ),
    "hand_guessing": (
        {"cards": 1, "ranks": 4, "suits": 2, "strategy": "min_expected_size"},
        {"cards": 2, "ranks": 3, "suits": 2, "strategy": "sharma_mittal"},
    ),
    "high_low": (
        {"n": 6, "strategy": "optimal"},
        {"ranks": 3, "suits": 2, "strategy": "optimal"},
        {"ranks": 3, "suits": 2, "strategy": "majority", "method": "monte_carlo", "n_games": 500},
    ),
    "mastermind": (
        {"pegs": 2, "colours": 3, "strategy": "minimax"},
        {"pegs": 2, "jar": [1, 2, 3], "strategy": "minimax"},
        {"pegs": 2, "colours": 3, "strategy": "sharma_mittal"},
    ),
    "no_repeat": ({"N": 6}, {"N": 8}),
    "triples": (
        {"ranks": 4, "suits": 4, "k": 2, "n": 2},
        {"ranks": 4, "suits": 4, "k": 2, "n": 2, "analysis": "monte_carlo", "games": 2000},
    ),
}
UNTIMED = ("seconds",)  # columns that measure the run, not the game: left out


def golden_path(family: str, version: str | None = None) -> Path:
    """The golden file of ``family``'s ``version`` (its current one by default)."""
    from solvers import get_family

    return GOLDEN / f"{family}-v{version or get_family(family).version}.json"


def schema(family: str) -> dict[str, str]:
    """Every column of the family's results files, in order, with its Arrow type."""
    from pipeline.storage.store_layout import family_schema

    return {f.name: str(f.type) for f in family_schema(family)}


def computed(family: str) -> dict[str, Any]:
    """The golden content of ``family``'s current version as this code computes it: its
    version, schema, and each task of :data:`TASKS` with its id and rows."""
    from solvers import get_family, solve, validate
    from solvers.task_ids import task_id

    tasks = []
    for given in TASKS[family]:
        task = validate({"family": family, **given})
        rows = [
            {k: v for k, v in row.items() if k not in UNTIMED}
            for row in solve(task, canonical=True)
        ]
        tasks.append({"task": given, "task_id": task_id(task), "rows": rows})
    return {
        "family": family,
        "version": get_family(family).version,
        "schema": schema(family),
        "tasks": tasks,
    }


def differences(stored: Any, computed: Any, where: str = "") -> list[str]:
    """Where ``computed`` differs from ``stored`` (JSON values), one line each: floats to
    :data:`RELATIVE`, NaN equal to NaN, everything else equal and of the same type."""
    if isinstance(stored, dict) and isinstance(computed, dict):
        out = [f"{where}.{k}: stored only" for k in stored.keys() - computed.keys()]
        out += [f"{where}.{k}: new" for k in computed.keys() - stored.keys()]
        for k in stored.keys() & computed.keys():
            out += differences(stored[k], computed[k], f"{where}.{k}")
        return sorted(out)
    if isinstance(stored, list) and isinstance(computed, list):
        if len(stored) != len(computed):
            return [f"{where}: {len(stored)} items stored, {len(computed)} computed"]
        return [
            d
            for i, (a, b) in enumerate(zip(stored, computed, strict=True))
            for d in differences(a, b, f"{where}[{i}]")
        ]
    if isinstance(stored, float) and isinstance(computed, float):
        same = (math.isnan(stored) and math.isnan(computed)) or math.isclose(
            stored, computed, rel_tol=RELATIVE, abs_tol=0.0
        )
        return [] if same else [f"{where}: {stored!r} stored, {computed!r} computed"]
    if type(stored) is not type(computed) or stored != computed:
        return [f"{where}: {stored!r} stored, {computed!r} computed"]
    return []


def read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def as_json(content: dict[str, Any]) -> str:
    """The golden file's text: JSON (NaN written as NaN), one task's rows per block."""
    return json.dumps(content, indent=1, allow_nan=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the golden rows of families' versions.")
    parser.add_argument("families", nargs="+", choices=sorted(TASKS))
    args = parser.parse_args(argv)
    status = 0
    for family in args.families:
        path = golden_path(family)
        if path.exists():
            print(
                f"{path}: exists; the rows of a version never change: give the family a new version"
            )
            status = 1
            continue
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(as_json(computed(family)), encoding="utf-8")
        print(f"{path}: written")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
