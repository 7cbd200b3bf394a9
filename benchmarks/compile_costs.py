"""What compiling the Numba kernels costs a study, from an empty compile cache.

    python benchmarks/compile_costs.py kernels suits52_quick      # per kernel, one process
    python benchmarks/compile_costs.py kernels suits52_quick --write  # into docs/data
    python benchmarks/compile_costs.py kernels suits52_quick --code /path/to/other/checkout
    python benchmarks/compile_costs.py tests tests/test_high_low.py tests/test_mastermind.py

``kernels``: the study run with ``cluster=sync`` (every task in one process) on a new, empty
``NUMBA_CACHE_DIR``, each compilation timed by a listener of Numba's ``numba:compile``
events; prints each module's kernels compiled and their compile seconds (a kernel's own,
less the callees compiled inside it), and the twelve dearest kernels.  With ``--code``, the
other checkout's code runs first, then this one's, and a table puts each kernel's compile
seconds of the two side by side (the kernels dearest in either).  ``--write`` stores this
checkout's totals and dearest kernels in ``docs/data/compile_costs.yaml`` under the study's
name (the benchmarks page quotes it).
A study's first run against a cached one: benchmarks/first_use.py.

``tests``: two pytest runs at once (as pytest-xdist's two processes run two test files), each
given as one string of pytest arguments, on one new, empty ``NUMBA_CACHE_DIR``: each one's
wall and CPU seconds, compilations and cache loads, and what the two compiled both (the
duplicates the cache's lock is there to avoid).  ``--code`` runs another checkout's code
(``PYTHONPATH``) the same way after this one's, side by side.
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
DATA = ROOT / "docs" / "data" / "compile_costs.yaml"

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
        records.append({"kernel": name, "seconds": seconds, "own": seconds - inner,
                        "signature": str(event.data.get("args"))})

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


def kernel_costs(study: str, code: Path = ROOT) -> list[dict]:
    """Each compilation of the study's run with ``code`` on an empty cache: kernel, seconds,
    own seconds, the argument types compiled for."""
    with tempfile.TemporaryDirectory(prefix="compile-costs-") as tmp:
        out = Path(tmp) / "records.json"
        env = {**os.environ, "NUMBA_CACHE_DIR": f"{tmp}/cache", "PYTHONPATH": str(code)}
        cmd = [sys.executable, "-c", TIMED_RUN, study, str(out), f"{tmp}/out"]
        subprocess.run(cmd, env=env, cwd=tmp, check=True, stdout=subprocess.DEVNULL)
        return json.loads(out.read_text())


def per_kernel(records: list[dict]) -> dict[str, dict]:
    """Each kernel's compilations (one per signature) and own compile seconds, dearest
    first (Numba's own library functions, compiled on the way, as one entry)."""
    out: dict[str, dict] = {}
    for rec in records:
        name = rec["kernel"].removeprefix("solvers.")
        if not rec["kernel"].startswith("solvers."):
            name = "Numba's library functions"
        entry = out.setdefault(name, {"compilations": 0, "seconds": 0.0})
        entry["compilations"] += 1
        entry["seconds"] += rec["own"]
    for entry in out.values():
        entry["seconds"] = round(entry["seconds"], 2)
    return dict(sorted(out.items(), key=lambda kv: -kv[1]["seconds"]))


def print_kernel_costs(study: str, write: bool) -> None:
    run = kernels_run(study, ROOT)
    print(f"study {study}, cluster=sync, empty cache: {run['wall_s']} s wall, load {run['load']}")
    print(f"{run['compilations']} compilations, {run['compile_s']} s compiling\n")
    print("| module | compilations | compile s | share |")
    print("|---|---|---|---|")
    modules: dict[str, list[float]] = {}
    for rec in run["records"]:
        modules.setdefault(rec["kernel"].rsplit(".", 1)[0], []).append(rec["own"])
    for module, own in sorted(modules.items(), key=lambda kv: -sum(kv[1])):
        name = module.removeprefix("solvers.")
        print(f"| {name} | {len(own)} | {sum(own):.1f} | {sum(own) / run['compile_s']:.0%} |")
    print("\n| kernel | compilations | compile s (own) |\n|---|---|---|")
    for name, entry in list(run["kernels"].items())[:12]:
        print(f"| {name} | {entry['compilations']} | {entry['seconds']:.1f} |")
    if write:
        write_run(study, run)


def kernels_run(study: str, code: Path) -> dict:
    """The study's compilations with ``code`` on an empty cache: totals, each compilation
    (``records``) and each kernel's (``kernels``, dearest first)."""
    load_before = _load()
    start = time.perf_counter()
    records = kernel_costs(study, code)
    return {
        "code": code_label(code),
        "wall_s": round(time.perf_counter() - start, 1),
        "compile_s": round(sum(r["own"] for r in records), 1),
        "compilations": len(records),
        "load": f"{load_before} / {_load()}",
        "records": records,
        "kernels": per_kernel(records),
    }


def kernels_side_by_side(study: str, other: Path, write: bool) -> None:
    """The study's compilations with ``other``'s code, then with this checkout's: each
    kernel's own compile seconds of the two, the dearest twelve in either."""
    runs = {name: kernels_run(study, code) for name, code in (("other", other), ("this", ROOT))}
    for name, run in runs.items():
        print(f"{name} ({run['code']}): {run['compilations']} compilations, "
              f"{run['compile_s']} s compiling, load {run['load']}")  # fmt: skip
    old, new = runs["other"]["kernels"], runs["this"]["kernels"]
    dearest = sorted(
        set(old) | set(new),
        key=lambda k: -max(old.get(k, {}).get("seconds", 0), new.get(k, {}).get("seconds", 0)),
    )[:12]
    print("\n| kernel | other: compilations, s | this: compilations, s |\n|---|---|---|")
    for k in dearest:
        cells = [
            f"{d[k]['compilations']}, {d[k]['seconds']:.1f}" if k in d else "-" for d in (old, new)
        ]
        print(f"| {k} | {cells[0]} | {cells[1]} |")
    if write:
        write_run(study, runs["this"])


def write_run(study: str, run: dict) -> None:
    """This checkout's run of ``study`` into DATA (the other studies' entries kept): totals
    and the twelve dearest kernels, keyed so the manual can quote them."""
    import yaml

    kernels = {
        quote_key(name): {"kernel": name, **entry}
        for name, entry in list(run["kernels"].items())[:12]
    }
    totals = {k: v for k, v in run.items() if k not in ("records", "kernels")}
    kept = yaml.safe_load(DATA.read_text()) if DATA.exists() else {}
    kept = {k: v for k, v in (kept or {}).items() if k != study}
    kept[study] = {**totals, "kernels": kernels}
    header = (
        "# benchmarks/compile_costs.py kernels STUDY --write: the study on cluster=sync from an\n"
        "# empty Numba cache: compilations, own compile seconds, the dearest kernels'\n"
    )
    DATA.write_text(header + yaml.safe_dump(kept, sort_keys=False, width=100))
    print(f"wrote {DATA}")


def code_label(code: Path) -> str:
    """The checkout's commit, and ``+ changes`` when its solvers differ from it."""
    git = ["git", "-C", str(code)]
    commit = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    changed = subprocess.run(
        [*git, "status", "--porcelain", "solvers"], capture_output=True, text=True
    )
    label = commit.stdout.strip() or str(code)
    return f"{label} + changes" if changed.stdout.strip() else label


def quote_key(kernel: str) -> str:
    """A kernel's key in the data file, quotable by the manual (no dots): its module's last
    part and its name, ``last_layer-pass_logs``."""
    return "library" if " " in kernel else "-".join(kernel.rsplit(".", 2)[-2:])


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
    parser.add_argument("what", choices=["kernels", "tests"])
    parser.add_argument("study", nargs="+", help="a study (e.g. suits52_quick); for tests, two")
    parser.add_argument("--code", type=Path, action="append", default=[], help="another checkout")
    parser.add_argument(
        "--write", action="store_true", help=f"kernels: store this checkout's run in {DATA}"
    )
    args = parser.parse_args()
    if args.what == "kernels" and args.code:
        kernels_side_by_side(args.study[0], args.code[0].resolve(), args.write)
    elif args.what == "kernels":
        print_kernel_costs(args.study[0], args.write)
    else:
        print_pytest_pair(args.study, [ROOT, *args.code])


if __name__ == "__main__":
    main()
