"""First use against a cached run: studies from an empty Numba cache, then with it warm.

    python benchmarks/first_use.py                                  # the three studies
    python benchmarks/first_use.py --studies ranks52_quick --rounds 2
    python benchmarks/first_use.py --code /path/to/other/checkout   # side by side
    python benchmarks/first_use.py --write                          # docs/data/first_use.yaml

Each study (``suits52_quick``, ``ranks52_quick`` and ``high_low`` unless ``--studies``) runs
as ``python -m pipeline study=NAME`` on the default cluster, first on a new, empty
``NUMBA_CACHE_DIR`` (a fresh temporary folder: what a new install finds), then again with that
same cache, warm, each run into a new outputs folder (compile_costs.timed_study).  Wall and
CPU seconds are the run's (CPU: user + system of this process's children, the driver and its
workers); "compiled" and "loaded" count Numba's cache log lines (``NUMBA_DEBUG_CACHE``).  The
ratio first / cached is given for both.  With ``--code``, the other checkout's runs alternate
with this one's: its empty-cache run after this one's, its cached run after this one's.
A round is every study once; ``--rounds`` repeats them, each round on new caches.

"least wall ratio" is the first run's CPU seconds over the machine's cores, over the cached
run's wall time: the ratio the first run could reach were its work spread over every core,
none idle; a target below it needs less CPU, not better packing.

The machine's load average (``os.getloadavg``, as ``uptime`` says it) is recorded before and
after every run: on a shared machine the wall times follow the load, and the CPU seconds
(what the compilations cost) are a measure less bound to the load.  The target is on wall
time (what a user waits).  ``--write`` stores, per study and code, the round whose CPU ratio
is the median one, in ``docs/data/first_use.yaml`` (the benchmarks page quotes it).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
from pathlib import Path

from compile_costs import code_label, timed_study

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "docs" / "data" / "first_use.yaml"
STUDIES = ("suits52_quick", "ranks52_quick", "high_low")
TARGET = 2.5  # first use within 2.5x of a cached run


def load() -> float:
    return round(os.getloadavg()[0], 2)


def measured(study: str, code: Path, cache: Path, outputs: Path) -> dict:
    """One run of ``study`` with ``code`` on ``cache``: its seconds, Numba's counts and the
    load average before and after."""
    before = load()
    run = timed_study(study, code, cache, outputs)
    return {
        "wall_s": round(run["wall"], 1),
        "cpu_s": round(run["cpu"], 1),
        "compiled": run["compiled"],
        "loaded": run["loaded"],
        "load_before": before,
        "load_after": load(),
    }


def one_round(study: str, codes: dict[str, Path]) -> dict[str, dict]:
    """Every code's empty-cache run, then every code's cached run (alternating the codes),
    each code on a cache of its own; per code: both runs and the ratios first / cached."""
    out: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="first-use-") as tmp:
        for kind in ("empty", "cached"):
            for name, code in codes.items():
                cache, outputs = Path(tmp) / name / "cache", Path(tmp) / name / kind
                outputs.parent.mkdir(exist_ok=True)
                run = measured(study, code, cache, outputs)
                out.setdefault(name, {})[kind] = run
                print(
                    f"  {study:14} {name:10} {kind:7} {run['wall_s']:7.1f} s wall "
                    f"{run['cpu_s']:7.1f} s CPU  compiled {run['compiled']:3} loaded "
                    f"{run['loaded']:3}  load {run['load_before']}-{run['load_after']}",
                    flush=True,
                )
    for runs in out.values():
        runs["ratio_wall"] = round(runs["empty"]["wall_s"] / runs["cached"]["wall_s"], 2)
        runs["ratio_cpu"] = round(runs["empty"]["cpu_s"] / runs["cached"]["cpu_s"], 2)
        runs["least_ratio_wall"] = least_ratio_wall(runs, os.cpu_count() or 1)
    return out


def least_ratio_wall(runs: dict, cores: int) -> float:
    """The least wall ratio first / cached that the first run's CPU seconds allow on
    ``cores``: its CPU spread over every core at once, none idle, none of it spent again."""
    return round(runs["empty"]["cpu_s"] / cores / runs["cached"]["wall_s"], 2)


def summary(rounds: list[dict[str, dict]]) -> dict:
    """Per code: the round whose CPU ratio is the median one (its runs and ratios), how many
    rounds, and whether that ratio meets the target."""
    out = {}
    for name in rounds[0]:
        by_cpu = sorted(rounds, key=lambda r: r[name]["ratio_cpu"])
        middle = by_cpu[(len(by_cpu) - 1) // 2][name]
        out[name] = {
            **middle,
            "rounds": len(rounds),
            "within_target": bool(middle["ratio_wall"] <= TARGET),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--studies", default=",".join(STUDIES))
    parser.add_argument("--code", type=Path, help="another checkout, run side by side")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--write", action="store_true", help=f"store the runs in {DATA}")
    args = parser.parse_args()
    codes = {"this": ROOT, **({"other": args.code.resolve()} if args.code else {})}
    results: dict = {}
    for k in range(args.rounds):
        print(f"round {k + 1} of {args.rounds}", flush=True)
        for study in filter(None, args.studies.split(",")):
            results.setdefault(study, []).append(one_round(study, codes))
    print(f"\n{'study':16}{'code':8}{'CPU first / cached':>20}{'wall first / cached':>21}")
    data: dict = {}
    for study, rounds in results.items():
        middle = summary(rounds)
        for name, run in middle.items():
            print(f"{study:16}{name:8}{run['ratio_cpu']:>19.2f}x{run['ratio_wall']:>20.2f}x")
        data[study] = middle
    if args.write:
        import yaml

        data["machine"] = {
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "target_ratio": TARGET,
            "codes": {k: code_label(v) for k, v in codes.items()},
        }
        header = (
            "# benchmarks/first_use.py --write: each study from an empty Numba cache, then "
            "cached;\n# seconds of the run (CPU: the driver's and its workers'), load averages "
            "before and after each run\n"
        )
        DATA.write_text(header + yaml.safe_dump(data, sort_keys=False))
        print(f"wrote {DATA}")


if __name__ == "__main__":
    sys.exit(main())
