"""``stage=plan``'s run-time estimate against a measured run of every shipped study.

``python benchmarks/bench_plan_estimate.py [--measure NAME ...|--measure-all] [--code DIR]``

With ``--measure``: each study named is run twice, ``python -m pipeline study=NAME``, each
time on a fresh output folder (an empty store), on the default cluster (2 Dask workers).  The
first run compiles the Numba kernels the study uses that the cache lacks; the second finds
them all in the cache (a warm cache, as every run after the first on a machine) and is the
one measured: its wall time, its CPU time (user + system of the command and every process it
started, from ``getrusage(RUSAGE_CHILDREN)``) and the machine's load average before and after.
The first run's wall and CPU time are kept beside it (``--once``: no first run, for kernels
compiled already).  ``--code DIR``: run the studies from
a copy of the code in DIR (so that editing the worktree while the runs go on cannot change
them).

Every call (with or without ``--measure``) then writes ``docs/data/plan_estimates.yaml``:
for each measured study, the plan's estimate from the code as it is now
(:func:`study_estimate`: the numbers ``stage=plan`` prints) beside the
measurement, and the ratio estimate / measured CPU time.  The machine is shared, so wall
time depends on what else runs; the CPU time of a run on two workers is close to what the
run takes on an idle machine and is what the estimate is held against
(``tests/test_plan_estimate.py``).  Studies that take longer than ten minutes are not run;
the data file lists them, and any other study not measured, with the reason.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT / "docs" / "data" / "plan_estimates.yaml"

# Shipped studies not run (each with why): those that take longer than ten minutes here, and
# a shorter one the last measurement left out (take it off the list to measure it).
NOT_MEASURED = {
    "suits52": "about 15 min of wall time on 2 workers (the usage page's study times)",
    "hand_guessing_four": "48 tasks of 20-40 s of one core each, 20-30 min on 2 workers",
    "ranks_exact": "hours: the 10 x 4 and 11 x 4 decks exactly",
    "ranks52_exact": "days, and more disk than this machine has (754 GB of checkpoints)",
    "high_low_exact": "about 1.5 h: the 14 x 4 and 15 x 4 decks",
    "mastermind_4x7": "hours: the optimal 4 x 7 strategy, 57 subtree searches",
}


def machine() -> str:
    """The CPU model, its cores and the memory of this machine, in a line."""
    model = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f", {kib / 2**20:.0f} GiB"
    except (OSError, ValueError, IndexError):
        memory = ""
    return f"{model}, {os.cpu_count()} cores{memory}, {platform.system()}"


def timed_run(name: str, code: Path, outputs: Path) -> dict[str, Any]:
    """Run the study once in a fresh process on an empty output folder: wall and CPU
    seconds (the whole process tree) and the 1-minute load average before and after."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_before = os.getloadavg()[0]
    env = {**os.environ, "PYTHONPATH": str(code)}
    start = time.monotonic()
    res = subprocess.run(
        [sys.executable, "-m", "pipeline", f"study={name}", f"paths.outputs={outputs}"],
        cwd=code,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        raise SystemExit(f"study={name} exited {res.returncode}:\n{res.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "load": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }


def measure(name: str, code: Path, keep: Path | None = None, once: bool = False) -> dict[str, Any]:
    """The study's first run (kernels compiled as needed) and its second (the measurement);
    ``once``: the measured run alone (the kernels it needs already compiled)."""
    with tempfile.TemporaryDirectory(prefix=f"plan-estimate-{name}-") as tmp:
        first = None if once else timed_run(name, code, Path(tmp) / "first")
        shutil.rmtree(Path(tmp) / "first", ignore_errors=True)
        second = timed_run(name, code, Path(tmp) / "second")
        if keep is not None:  # the rows (their per-task seconds), for fitting a model
            shutil.copytree(Path(tmp) / "second", keep / name, dirs_exist_ok=True)
    print(f"{name}: first {first}, warm {second}", flush=True)
    return {
        **second,
        "first_run": None if first is None else {k: first[k] for k in ("wall_s", "cpu_s")},
        "date": dt.date.today().isoformat(),
        "machine": machine(),
    }


def shipped() -> list[str]:
    return sorted(p.stem for p in (ROOT / "conf" / "study").glob("*.yaml"))


def study_estimate(name: str) -> dict[str, float]:
    """The estimate ``stage=plan`` gives of a run of the shipped study ``name`` on the
    default cluster on an empty store, as numbers: tasks, CPU and wall seconds."""
    from pipeline.run import estimated_run, prepared
    from pipeline.study import composed

    with tempfile.TemporaryDirectory() as tmp:
        cfg = composed([f"study={name}", f"paths.outputs={tmp}/outputs"])
        tasks, found = estimated_run(prepared(cfg, log=lambda *_: None))
    if found is None:
        raise ValueError(f"study {name}: the family has no model for its tasks")
    return {"tasks": tasks, "cpu_s": found.cpu_s, "wall_s": found.wall_s}


def estimates(names: list[str]) -> dict[str, dict[str, float]]:
    """The plan's estimate of each study, from the code as it is."""
    return {name: study_estimate(name) for name in names}


def write(measured: dict[str, dict[str, Any]], with_estimates: bool = True) -> None:
    """The data file: each measured study's estimate beside its measurement (unless not
    ``with_estimates``: the measurements alone, as the runs go), and the studies not
    measured."""
    found = estimates(sorted(measured)) if with_estimates and _has_model() else {}
    studies = {}
    for name in sorted(measured):
        m = measured[name]
        studies[name] = {
            k: m[k] for k in ("cpu_s", "wall_s", "load", "first_run", "date", "machine")
        }
        if name in found:
            e = found[name]
            studies[name] = {
                "tasks": e["tasks"],
                "estimate_cpu_s": round(e["cpu_s"], 1),
                "estimate_wall_s": round(e["wall_s"], 1),
                **studies[name],
                "ratio": round(e["cpu_s"] / m["cpu_s"], 2),
            }
    head = (
        "# benchmarks/bench_plan_estimate.py: stage=plan's estimate of each shipped study against\n"
        "# a run of it (python -m pipeline study=NAME, 2 Dask workers, a fresh output folder,\n"
        "# Numba's cache warm: the second run of two).  cpu_s: user + system seconds of the run's\n"
        "# processes; wall_s on a machine shared with other jobs at the load given (1-minute load\n"
        "# average before and after); CPU time on two workers stands for the time of the run on\n"
        "# an idle machine.  ratio: estimate_cpu_s / cpu_s (tests/test_plan_estimate.py holds it\n"
        "# within [0.5, 2]).  first_run: the same study's first run, compiling the kernels the\n"
        "# cache lacked (null: measured alone, --once, the kernels compiled by an earlier run of\n"
        "# the same code).  A study measured with an earlier estimate of the code differs from\n"
        "# it only there, which decides when the LocalCluster starts.\n"
    )
    body = {"studies": studies, "not_measured": dict(sorted(NOT_MEASURED.items()))}
    DATA.write_text(head + yaml.safe_dump(body, sort_keys=False, width=100), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measure", nargs="*", default=[], help="studies to run and measure")
    parser.add_argument("--measure-all", action="store_true", help="every shipped study but "
                        "those listed as not measured")  # fmt: skip
    parser.add_argument("--code", type=Path, default=ROOT, help="the code the runs use")
    parser.add_argument("--keep", type=Path, help="copy each measured run's output folder here")
    parser.add_argument("--once", action="store_true", help="the measured run only, no first "
                        "run (the kernels the studies need are compiled already)")  # fmt: skip
    args = parser.parse_args()
    names = args.measure
    if args.measure_all:
        names = [n for n in shipped() if n not in NOT_MEASURED]
    old = yaml.safe_load(DATA.read_text(encoding="utf-8")) if DATA.exists() else None
    measured = dict((old or {}).get("studies") or {})
    for name in names:
        if name in NOT_MEASURED:
            raise SystemExit(f"{name}: listed as not measured ({NOT_MEASURED[name]})")
        measured[name] = measure(name, args.code.resolve(), args.keep, args.once)
        write(measured, with_estimates=False)
    write(measured)


def _has_model() -> bool:
    try:
        from pipeline.run import estimated_run  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    main()
