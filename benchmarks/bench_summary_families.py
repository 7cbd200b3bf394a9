"""The summary stage on a large store of each family other than card_guessing.

``python benchmarks/bench_summary_families.py [--family NAME ...] [--rows 1000000]``
builds, per family, a store of ``--rows`` rows under ``--outputs`` (default
``/tmp/summary_families``) and times ``stage=summary`` (summary.md, report.html) on it in a
fresh process: wall time, CPU time and peak RSS.  Exit status 1 if a family's wall time is
over 60 s (its target) or its peak RSS over 1 GiB.

The stores are **synthetic**: a few real rows of one task (solved once, here) stamped over
the axis along which that family's studies grow, with fresh task ids, 1,500 rows per file
(a batch).  The numbers are the template's, so the summary's content is meaningless; its
cost is what is measured, with every row distinct where the family's tables and figures
have one line, cell or point per row:

- ``no_repeat``: the N = 6 row at N = 4, 5, ... (one table line and plot point per N);
- ``triples``: one distribution task's rows (one per level) after j = 0, 1, ... rounds (one
  heat map column per round);
- ``hand_guessing``: one exact chunk of 4 ranks x 2 suits, 2 cards, as chunk 0, 1, ... of
  as many chunks (DuckDB adds them up to one line);
- ``high_low``: the n = 5 optimal row at n = 2, 3, ... (one table line and point per n);
- ``mastermind``: a 2 pegs x 3 colours Sharma-Mittal row over a square (r, t) grid of that
  many points (one heat map cell each), and the game's minimax row.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from _fresh import ROOT, fresh_json  # noqa: E402 - a sibling script module

sys.path.insert(0, str(ROOT))

LIMIT_S = 60.0
LIMIT_RSS_MB = 1024.0
BATCH = 1_500
DEFAULT_OUTPUTS = Path("/tmp/summary_families")

ROUND = r"""
import json, sys, time
from pathlib import Path
start = time.perf_counter(), time.process_time()
from pipeline.outputs.summary import write_summary
from pipeline.storage.study_folder import StudyFolder
write_summary(StudyFolder(Path(sys.argv[1])), {"name": sys.argv[2]})
print(json.dumps({"wall": time.perf_counter() - start[0], "cpu": time.process_time() - start[1]}))
"""


def template(family: str, task: dict) -> list[dict]:
    """The rows of one real task of ``family``."""
    from solvers import solve

    rows = solve({"family": family, **task})
    assert all(r["status"] == "ok" for r in rows), rows
    return rows


def swept_rows(family: str, n_rows: int) -> Iterator[dict]:
    """``n_rows`` rows of ``family`` along its growing axis (see the module docstring)."""
    if family == "no_repeat":
        (row,) = template(family, {"N": 6})
        stamps = ({"N": 4 + i} for i in itertools.count())
        rows = [row]
    elif family == "triples":
        deck = {"ranks": 4, "suits": 3, "k": 2, "analysis": "distribution", "start": 1}
        last = template(family, {**deck, "rounds": 1})
        rows = [r for r in last if r["after_rounds"] == 1]
        stamps = ({"after_rounds": j} for j in itertools.count())
    elif family == "hand_guessing":
        game = {"ranks": 4, "suits": 2, "cards": 2, "n_chunks": 2, "answer_chunk": 0}
        rows = template(family, game)
        stamps = ({"n_chunks": n_rows, "answer_chunk": c} for c in itertools.count())
    elif family == "high_low":
        rows = template(family, {"n": 5, "strategy": "optimal"})
        stamps = ({"n": 2 + i} for i in itertools.count())
    elif family == "mastermind":
        game = {"pegs": 2, "colours": 3}
        yield from template(family, {**game, "strategy": "minimax"})
        n_rows -= 1
        rows = template(family, {**game, "strategy": "sharma_mittal"})
        side = math.isqrt(n_rows)
        values = [round(0.01 * i, 2) for i in range(side)]
        stamps = ({"entropy_r": r, "entropy_t": t} for r, t in itertools.product(values, values))
        n_rows = side * side
    else:
        raise SystemExit(f"--family={family}: unknown; valid: {', '.join(FAMILIES)}")
    made = 0
    for stamp in stamps:
        for row in rows:
            if made == n_rows:
                return
            yield {**row, **stamp}
            made += 1


FAMILIES = ("no_repeat", "triples", "hand_guessing", "high_low", "mastermind")


def build_store(study_dir: Path, family: str, n_rows: int) -> int:
    """Write the family's swept rows, BATCH per file, as study ``study_dir.name``; return
    how many rows."""
    from pipeline.running.driver import write_encoded
    from pipeline.running.worker import encode_rows, metadata_bytes
    from pipeline.storage.study_folder import StudyFolder

    if study_dir.exists():
        shutil.rmtree(study_dir)
    rows = swept_rows(family, n_rows)
    written = 0
    meta = {"written_at": "2026-11-24T00:00:00", "benchmark": "bench_summary_families"}
    while batch := list(itertools.islice(rows, BATCH)):
        for row in batch:
            row.update(task_id=f"{written:020d}", study=study_dir.name)
            written += 1
        write_encoded(StudyFolder(study_dir), encode_rows(batch, metadata_bytes(meta)))
    return written


def main() -> int:
    """Build each family's store and time its summary; 1 if one is over the limits."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", nargs="+", default=list(FAMILIES), choices=FAMILIES)
    parser.add_argument("--rows", type=int, default=10**6)
    parser.add_argument("--outputs", type=Path, default=DEFAULT_OUTPUTS)
    args = parser.parse_args()
    if args.rows < 2:
        parser.error(f"--rows={args.rows}: give at least 2")
    over = False
    for family in args.family:
        study_dir = args.outputs / family
        start = time.perf_counter()
        rows = build_store(study_dir, family, args.rows)
        built = time.perf_counter() - start
        out, peak = fresh_json(ROUND, study_dir, family)
        report = study_dir / "report.html"
        print(
            f"{family}: {rows:,} rows (built in {built:.0f} s); stage=summary {out['wall']:.1f} "
            f"s wall, {out['cpu']:.1f} s CPU, peak RSS {peak:.0f} MiB; summary.md "
            f"{(study_dir / 'summary.md').stat().st_size:,} bytes, report.html "
            f"{report.stat().st_size:,} bytes",
            flush=True,
        )
        over |= out["wall"] > LIMIT_S or peak > LIMIT_RSS_MB
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    print(f"machine: {os.cpu_count()} cores, load average {load} at the end")
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
