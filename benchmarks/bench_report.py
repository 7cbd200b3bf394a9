"""Size and speed of a study's HTML report: the largest shipped study's must stay under 5 MB
and be written in under 10 s.

``python benchmarks/bench_report.py [--study entropy_grid] [--outputs outputs] [--rounds 3]``

Needs the study already run (``python -m pipeline study=entropy_grid``; 3,606 tasks, the
largest shipped study).  Each round runs, in a fresh process: import the report writer,
read the store, write report.html (what ``stage=summary`` adds to the Markdown summary,
cold: imports and the store read included), then write it again in the same process
(warm: what the summary stage itself pays, the rows already loaded), then the index.
Prints wall time AND CPU time (user + system) of each step and the child's peak RSS: the
machine's two cores may be shared with other work, so wall times move between runs and CPU
times are the steadier measure.  Exit status 1 if the size or the cold CPU time of the best
round is over the limit (the wall time is printed and judged too, with the load average).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from _fresh import ROOT, fresh_json  # noqa: E402 - a sibling script module

LIMIT_BYTES = 5 * 1024 * 1024
LIMIT_S = 10.0

ROUND = r"""
import json, sys, time
from pathlib import Path
out = {}
def clock():
    return time.perf_counter(), time.process_time()
def since(start):
    w, c = clock()
    return {"wall": w - start[0], "cpu": c - start[1]}
study_dir = Path(sys.argv[1])
start = clock()
import yaml
from pipeline.outputs.report import write_report
from pipeline.outputs.index import write_index
from pipeline.storage.store import load_results
from pipeline.storage.study_folder import StudyFolder
out["import"] = since(start)
study = yaml.safe_load(open(sys.argv[2]))
step = clock()
rows = load_results(study_dir / "results")
out["load"] = since(step)
step = clock()
path = write_report(StudyFolder(study_dir), study, rows)
out["write_cold"] = since(step)
out["cold_total"] = since(start)
step = clock()
write_report(StudyFolder(study_dir), study, rows)
out["write_warm"] = since(step)
step = clock()
index = write_index(study_dir.parent)
out["index"] = since(step)
out["rows"] = len(rows)
out["bytes"] = path.stat().st_size
out["index_bytes"] = index.stat().st_size
print(json.dumps(out))
"""


def one_round(study_dir: Path, config: Path) -> tuple[dict, float]:
    """(the timings one fresh process reports, its peak RSS in MB)."""
    return fresh_json(ROUND, study_dir, config)


def main() -> int:
    """Run the rounds, print a table, and check the limits."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--study", default="entropy_grid")
    parser.add_argument("--outputs", default=str(ROOT / "outputs"))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    study_dir = Path(args.outputs) / args.study
    config = ROOT / "conf" / "study" / f"{args.study}.yaml"
    if not (study_dir / "results").is_dir():
        print(f"{study_dir} has no results: run `python -m pipeline study={args.study}` first")
        return 2
    results = []
    for i in range(args.rounds):
        out, peak = one_round(study_dir, config)
        results.append(out)
        steps = ["import", "load", "write_cold", "cold_total", "write_warm", "index"]
        cells = "  ".join(f"{s} {out[s]['wall']:.2f}/{out[s]['cpu']:.2f}" for s in steps)
        print(f"round {i + 1}: {cells}  (wall/CPU s); peak RSS <= {peak:.0f} MB")
    best = min(results, key=lambda r: r["cold_total"]["wall"])
    size_mb = best["bytes"] / 1e6
    print(
        f"{args.study}: {best['rows']} rows; report.html {best['bytes']:,} bytes "
        f"({size_mb:.2f} MB), index.html {best['index_bytes']:,} bytes"
    )
    print(
        f"best round: cold (imports + store read + report) {best['cold_total']['wall']:.2f} s "
        f"wall, {best['cold_total']['cpu']:.2f} s CPU; the report alone, warm: "
        f"{best['write_warm']['wall']:.2f} s wall, {best['write_warm']['cpu']:.2f} s CPU"
    )
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    print(f"machine: {os.cpu_count()} cores, load average {load} at the end (shared?)")
    ok_size = best["bytes"] < LIMIT_BYTES
    ok_cpu = best["cold_total"]["cpu"] < LIMIT_S
    ok_wall = best["cold_total"]["wall"] < LIMIT_S
    print(f"size < 5 MB: {yes(ok_size)}; written in < 10 s of CPU: {yes(ok_cpu)}; ", end="")
    print(f"in < 10 s of wall time: {yes(ok_wall)}{'' if ok_wall else ' (a busy machine?)'}")
    return 0 if ok_size and ok_cpu else 1


def yes(ok: bool) -> str:
    """'yes' or 'NO'."""
    return "yes" if ok else "NO"


if __name__ == "__main__":
    raise SystemExit(main())
