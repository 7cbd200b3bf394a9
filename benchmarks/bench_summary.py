"""The summary stage on a large store: 10^6 rows of the load benchmark's grid.

``python benchmarks/bench_summary.py --build [--tasks N] [--outputs DIR]`` runs the load
benchmark's study (:func:`bench_load.load_study`: the card_guessing ``info`` strategy on two
tiny decks, gamma x Sharma-Mittal order r x degree t, one row per task) through the pipeline
with ``stage=run`` into ``DIR/load`` (default ``/tmp/store1m``), once: about 3-5 minutes for
10^6 tasks on two cores.  Keep the folder and time the summary on it as often as needed:

``python benchmarks/bench_summary.py [--outputs DIR] [--rounds 1]``

``python benchmarks/bench_summary.py --replicate 10 --source /tmp/store1m --outputs
/tmp/store10m`` makes a 10^7-row store of that one without running anything: every file
hard-linked 10 times under new names (the same 10^6 task ids ten times, as a store holds
before compaction), to time the summary stage at 10^7 rows.

Each round runs ``stage=summary`` (summary.md, report.html, the outputs' index.html) in a
fresh process and prints its wall time, its CPU time (user + system) and its peak RSS, then
the store's rows and files and the size of report.html.  Wall times move on a shared 2-core
VM; CPU time is the steadier measure.  Exit status 1 if the best round's wall time is over
60 s (its target) or its peak RSS over 1 GiB.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from _fresh import ROOT, fresh_json  # noqa: E402 - a sibling script module

sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

LIMIT_S = 60.0
LIMIT_RSS_MB = 1024.0
DEFAULT_OUTPUTS = Path("/tmp/store1m")

ROUND = r"""
import json, sys, time
from pathlib import Path
start = time.perf_counter(), time.process_time()
sys.path.insert(0, sys.argv[1] + "/benchmarks")
from bench_load import load_study, pipeline_config
from pipeline.run import run_study
cfg = pipeline_config(load_study(int(sys.argv[3])), Path(sys.argv[2]), "summary")
run_study(cfg, log=lambda *_: None)
print(json.dumps({"wall": time.perf_counter() - start[0], "cpu": time.process_time() - start[1]}))
"""


def build_store(outputs: Path, n_tasks: int) -> None:
    """Run the load study's ``n_tasks`` tasks with stage=run into ``outputs/load``."""
    from bench_load import load_study, pipeline_config

    from pipeline.run import run_study

    start = time.perf_counter()
    cfg = pipeline_config(load_study(n_tasks), outputs, "run")
    report = run_study(cfg, log=print)
    print(f"built {report.study_dir}: {report.line()} in {time.perf_counter() - start:.0f} s")


def replicate_store(source: Path, outputs: Path, copies: int) -> int:
    """Hard-link every results file of ``source/load`` ``copies`` times into
    ``outputs/load`` under new names (part-<ns + k>-...); return how many files it made."""
    made = 0
    for path in sorted((source / "load" / "results").glob("family=*/part-*.parquet")):
        _, ns, rest = path.name.split("-", 2)
        folder = outputs / "load" / "results" / path.parent.name
        folder.mkdir(parents=True, exist_ok=True)
        for k in range(copies):
            os.link(path, folder / f"part-{int(ns) + k:020d}-{rest}")
            made += 1
    return made


def one_round(outputs: Path, n_tasks: int) -> tuple[dict, float]:
    """(wall and CPU seconds a fresh process reports for stage=summary, its peak RSS in MiB)."""
    return fresh_json(ROUND, ROOT, outputs, n_tasks)


def store_size(study_dir: Path) -> tuple[int, int]:
    """(rows, files) of the store, from the Parquet footers."""
    import pyarrow.parquet as pq

    from pipeline.storage.store import result_files

    files = result_files(study_dir / "results")
    return sum(pq.ParquetFile(f).metadata.num_rows for f in files), len(files)


def main() -> int:
    """Build the store (--build) or time the summary stage on it; 1 if over the limits."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", action="store_true", help="run the study (stage=run) first")
    parser.add_argument("--tasks", type=int, default=10**6)
    parser.add_argument("--outputs", type=Path, default=DEFAULT_OUTPUTS)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--replicate", type=int, metavar="N", help="N hard-linked copies")
    parser.add_argument("--source", type=Path, default=DEFAULT_OUTPUTS)
    args = parser.parse_args()
    study_dir = args.outputs / "load"
    if args.build:
        build_store(args.outputs, args.tasks)
        return 0
    if args.replicate is not None:
        if args.replicate < 1 or (study_dir / "results").exists():
            parser.error(f"--replicate={args.replicate}: give N >= 1 and a new --outputs")
        made = replicate_store(args.source, args.outputs, args.replicate)
        print(f"{made:,} files under {study_dir / 'results'}")
        return 0
    if not (study_dir / "results").is_dir():
        print(f"{study_dir} has no store: run this with --build first (3-5 minutes)")
        return 2
    rows, files = store_size(study_dir)
    results = []
    for i in range(args.rounds):
        out, peak = one_round(args.outputs, args.tasks)
        out["peak"] = peak
        results.append(out)
        print(
            f"round {i + 1}: stage=summary {out['wall']:.1f} s wall, {out['cpu']:.1f} s CPU, "
            f"peak RSS {peak:.0f} MiB",
            flush=True,
        )
    best = min(results, key=lambda r: r["wall"])
    report = study_dir / "report.html"
    index = args.outputs / "index.html"
    print(
        f"store: {rows:,} rows in {files:,} files; report.html {report.stat().st_size:,} bytes, "
        f"summary.md {(study_dir / 'summary.md').stat().st_size:,} bytes, "
        f"index.html {index.stat().st_size:,} bytes"
    )
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    print(f"machine: {os.cpu_count()} cores, load average {load} at the end (shared?)")
    ok_wall, ok_rss = best["wall"] < LIMIT_S, best["peak"] < LIMIT_RSS_MB
    print(
        f"best round under {LIMIT_S:.0f} s wall: {'yes' if ok_wall else 'NO'}; "
        f"peak RSS under {LIMIT_RSS_MB:.0f} MiB: {'yes' if ok_rss else 'NO'}"
    )
    return 0 if ok_wall and ok_rss else 1


if __name__ == "__main__":
    raise SystemExit(main())
