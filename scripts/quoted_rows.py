"""Write the manual's data files that are a study's rows (docs/data/<name>.csv).

The manual quotes these values through ``{{ FILE.KEY.FIELD }}`` (docs/quoted.py), so the
rows of a run are their one source: after running the study, this script copies the rows it
names, with their task ids, to the data file, and every page quoting them follows.

    python -m pipeline study=ranks52                       # or only its Monte Carlo tasks
    python scripts/quoted_rows.py ranks52_monte_carlo --outputs outputs

Exit status: 0 written, 1 the study's rows are missing or incomplete, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "docs" / "data"


@dataclass(frozen=True)
class RowsFile:
    study: str  # the study whose rows the file holds
    keep: Callable[[pd.DataFrame], pd.Series]  # which of its rows
    key: Callable[[pd.Series], str]  # the row's key in quotes
    columns: tuple[str, ...]  # copied as stored


def monte_carlo_key(row: pd.Series) -> str:
    """``greedy_lowest``, ``greedy_pair``, ``persistent``: the strategy and its tie rule."""
    tie = row["tie_break"]
    return row["strategy"] if pd.isna(tie) or tie is None else f"{row['strategy']}_{tie}"


FILES = {
    # the 52-card deck read as 13 types of 4, seeded Monte Carlo (card guessing, ranks page)
    "ranks52_monte_carlo": RowsFile(
        study="ranks52",
        keep=lambda rows: rows["method"] == "monte_carlo",
        key=monte_carlo_key,
        columns=(
            "task_id",
            "strategy",
            "tie_break",
            "deck",
            "n_games",
            "expected_score",
            "std_error",
            "score_variance",
        ),
    ),
}


def rows_file(name: str, outputs: Path) -> pd.DataFrame:
    """The data file ``name``'s table from the study's stored rows under ``outputs``."""
    spec = FILES[name]
    results = outputs / spec.study / "results"
    files = sorted(results.rglob("*.parquet"))
    if not files:
        raise SystemExit(f"no stored rows of study {spec.study} under {results}")
    rows = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    rows = rows[spec.keep(rows) & (rows["status"] == "ok")]
    table = rows[list(spec.columns)].copy()
    table.insert(0, "key", rows.apply(spec.key, axis=1).to_numpy())
    return table.sort_values("key").reset_index(drop=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", choices=sorted(FILES))
    parser.add_argument("--outputs", type=Path, default=ROOT / "outputs")
    args = parser.parse_args(argv)
    table = rows_file(args.name, args.outputs)
    target = DATA / f"{args.name}.csv"
    table.to_csv(target, index=False)
    print(f"{target.relative_to(ROOT)}: {len(table)} rows of study {FILES[args.name].study}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
