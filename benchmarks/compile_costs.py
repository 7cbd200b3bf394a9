"""What compiling the Numba kernels costs a study, from an empty compile cache.

    python benchmarks/compile_costs.py kernels suits52_quick      # per kernel, one process
    python benchmarks/compile_costs.py study suits52_quick        # first run against cached
    python benchmarks/compile_costs.py study suits52_quick --code /path/to/other/checkout
    python benchmarks/compile_costs.py tests tests/test_high_low.py tests/test_mastermind.py

``kernels``: the study run with ``cluster=sync`` (every task in one process) on a new, empty
``NUMBA_CACHE_DIR``, each compilation timed by a listener of Numba's ``numba:compile``
events; prints each module's kernels compiled and their compile seconds (a kernel's own,
less the callees compiled inside it), and the ten dearest kernels.

``study``: ``python -m pipeline study=NAME`` (the default cluster: 2 LocalCluster workers)
twice on one new ``NUMBA_CACHE_DIR``, each into a new outputs folder: the first run compiles,
the second finds the kernels cached.  Prints wall and CPU seconds (this process's children:
the driver and its workers) and the compilations and cache loads Numba logged
(``NUMBA_DEBUG_CACHE``: a "data saved" line per compilation, a "data loaded" line per
load), then first / cached.  ``--code`` runs another checkout's code (``PYTHONPATH``) the same
way after this one's, side by side.

``tests``: two pytest runs at once (as pytest-xdist's two processes run two test files), each
given as one string of pytest arguments, on one new, empty ``NUMBA_CACHE_DIR``: each one's
wall and CPU seconds, compilations and cache loads, and what the two compiled both (the
duplicates the cache's lock is there to avoid).  ``--code`` as for ``study``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# the study in this process, each compilation's seconds recorded (inclusive, and its callees'
# compiled inside it) and written as JSON to argv[2] at the end (argv: study, JSON, outputs)
TIMED_RUN = """
import json, sys, time
import numba.core.event as ev

records, stack = [], []

class Timed(ev.Listener):
    def on_start(self, event):
        func = event.data["dispatcher"].py_func
        stack.append([f"{func.__module__}.{func.__qualname__}", time.perf_counter(), 0.0])
    def on_end(self, event):
        name, start, inner = stack.pop()
        seconds = time.perf_counter() - start
        if stack:
            stack[-1][2] += seconds
        records.append({"kernel": name, "seconds": seconds, "own": seconds - inner})

ev.register("numba:compile", Timed())
from pipeline.__main__ import main
study, out, outputs = sys.argv[1:4]
sys.argv = ["pipeline", f"study={study}", "cluster=sync", f"paths.outputs={outputs}"]
try:
    main()
finally:
    with open(out, "w") as f:
        json.dump(records, f)
"""


def kernel_costs(study: str) -> list[dict]:
    """Each compilation of the study's run on an empty cache: kernel, seconds, own seconds."""
    with tempfile.TemporaryDirectory(prefix="compile-costs-") as tmp:
        out = Path(tmp) / "records.json"
        env = {**os.environ, "NUMBA_CACHE_DIR": f"{tmp}/cache", "PYTHONPATH": str(ROOT)}
        cmd = [sys.executable, "-c", TIMED_RUN, study, str(out), f"{tmp}/out"]
        subprocess.run(cmd, env=env, cwd=tmp, check=True, stdout=subprocess.DEVNULL)
        return json.loads(out.read_text())


def print_kernel_costs(study: str) -> None:
    start = time.perf_counter()
    records = kernel_costs(study)
    wall = time.perf_counter() - start
    modules: dict[str, list[dict]] = {}
    for rec in records:
        modules.setdefault(rec["kernel"].rsplit(".", 1)[0], []).append(rec)
    total = sum(r["own"] for r in records)
    print(f"study {study}, cluster=sync, empty cache: {wall:.1f} s wall, load {_load()}")
    print(f"{len(records)} compilations, {total:.1f} s compiling\n")
    print("| module | compilations | compile s | share |")
    print("|---|---|---|---|")
    for module, recs in sorted(modules.items(), key=lambda kv: -sum(r["own"] for r in kv[1])):
        own = sum(r["own"] for r in recs)
        name = module.removeprefix("solvers.")
        print(f"| {name} | {len(recs)} | {own:.1f} | {own / total:.0%} |")
    print("\n| kernel | compile s (own) |\n|---|---|")
    for rec in sorted(records, key=lambda r: -r["own"])[:10]:
        print(f"| {rec['kernel'].removeprefix('solvers.')} | {rec['own']:.1f} |")


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def timed_study(study: str, code: Path, cache: Path, outputs: Path) -> dict:
    """One ``python -m pipeline study=STUDY`` run of ``code``: wall and CPU seconds,
    compilations and cache loads."""
    env = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(cache),
        "NUMBA_DEBUG_CACHE": "1",
        "PYTHONPATH": str(code),
    }
    cmd = [sys.executable, "-m", "pipeline", f"study={study}", f"paths.outputs={outputs}"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    res = subprocess.run(cmd, env=env, cwd=outputs.parent, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        raise SystemExit(f"study={study} failed ({res.returncode}):\n{res.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    log = res.stdout + res.stderr
    return {
        "wall": wall,
        "cpu": cpu,
        "compiled": log.count("[cache] data saved to"),
        "loaded": log.count("[cache] data loaded from"),
        "load": _load(),
    }


def first_and_cached(study: str, code: Path) -> tuple[dict, dict]:
    with tempfile.TemporaryDirectory(prefix="compile-costs-") as tmp:
        cache = Path(tmp) / "cache"
        first = timed_study(study, code, cache, Path(tmp) / "first")
        cached = timed_study(study, code, cache, Path(tmp) / "cached")
    return first, cached


def print_study(study: str, codes: list[Path]) -> None:
    print("| code | run | wall s | CPU s | compiled | loaded | load after |")
    print("|---|---|---|---|---|---|---|")
    for code in codes:
        first, cached = first_and_cached(study, code)
        for name, run in (("empty cache", first), ("cached", cached)):
            print(
                f"| {code} | {name} | {run['wall']:.1f} | {run['cpu']:.1f} | "
                f"{run['compiled']} | {run['loaded']} | {run['load']} |",
                flush=True,
            )
        ratio_wall, ratio_cpu = first["wall"] / cached["wall"], first["cpu"] / cached["cpu"]
        print(f"| {code} | empty / cached | {ratio_wall:.2f}x | {ratio_cpu:.2f}x | | | |")


def pytest_pair(pair: list[str], code: Path) -> list[dict]:
    """The two pytest runs of ``pair`` at once on one empty cache, with ``code``'s tests and
    code: for each, wall and CPU seconds and the kernels' entries it compiled and loaded."""
    with tempfile.TemporaryDirectory(prefix="compile-costs-") as tmp:
        env = {
            **os.environ,
            "NUMBA_CACHE_DIR": f"{tmp}/cache",
            "NUMBA_DEBUG_CACHE": "1",
            "PYTHONPATH": str(code),
        }
        runs = []
        for i, args in enumerate(pair):
            # -s: the tests' stdout, where Numba logs its cache, reaches the log
            cmd = [sys.executable, "-m", "pytest", "-n", "0", "-q", "-s", "-p", "no:cacheprovider"]
            log = open(Path(tmp) / f"log{i}", "w")  # noqa: SIM115
            start = time.perf_counter()
            proc = subprocess.Popen(
                [*cmd, *args.split()], env=env, cwd=code, stdout=log, stderr=subprocess.STDOUT
            )
            runs.append((proc, start, log))
        out = []
        for i, (proc, start, log) in enumerate(runs):
            _, status, usage = os.wait4(proc.pid, 0)
            log.close()
            text = (Path(tmp) / f"log{i}").read_text()
            out.append(
                {
                    "wall": time.perf_counter() - start,
                    "cpu": usage.ru_utime + usage.ru_stime,
                    "status": os.waitstatus_to_exitcode(status),
                    "saved": _entries(text, "[cache] data saved to "),
                    "loaded": _entries(text, "[cache] data loaded from "),
                    "tail": text.strip().splitlines()[-1] if text.strip() else "",
                }
            )
        return out


def _entries(log: str, mark: str) -> list[str]:
    """The cache entries (file names) of the log's lines starting with ``mark``."""
    return [
        Path(line.split(mark, 1)[1].strip(" '\"")).name for line in log.splitlines() if mark in line
    ]


def print_pytest_pair(pair: list[str], codes: list[Path]) -> None:
    print(f"load {_load()}")
    print("| code | run | wall s | CPU s | compiled | loaded | compiled by both | last line |")
    print("|---|---|---|---|---|---|---|---|")
    for code in codes:
        runs = pytest_pair(pair, code)
        both = set(runs[0]["saved"]) & set(runs[1]["saved"])
        for args, run in zip(pair, runs, strict=True):
            print(
                f"| {code} | {args} | {run['wall']:.1f} | {run['cpu']:.1f} | "
                f"{len(run['saved'])} | {len(run['loaded'])} | {len(both)} | {run['tail']} |",
                flush=True,
            )
    print(f"load {_load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["kernels", "study", "tests"])
    parser.add_argument("study", nargs="+", help="a study (e.g. suits52_quick); for tests, two")
    parser.add_argument("--code", type=Path, action="append", default=[], help="another checkout")
    args = parser.parse_args()
    if args.what == "kernels":
        print_kernel_costs(args.study[0])
    elif args.what == "study":
        print_study(args.study[0], [ROOT, *args.code])
    else:
        print_pytest_pair(args.study, [ROOT, *args.code])


if __name__ == "__main__":
    main()
