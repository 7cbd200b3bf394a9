"""``python tests/helpers/nap_driver.py N SECONDS OVERRIDES...``: the pipeline CLI on a study
of naps.

The study ``naps`` has N tasks of the test family ``test_nap`` (each sleeps SECONDS and
returns its index); the fault tests kill this driver, or its workers, in the middle.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from solvers import Family, Param, Rules, Scheduling, Solver, register  # noqa: E402
from solvers.params import as_float, as_int  # noqa: E402
from solvers.registry import families  # noqa: E402


def _nap(task: dict) -> list[dict]:
    time.sleep(task["nap"])
    return [{"woke": task["i"]}]


def register_nap(name: str = "test_nap", run=_nap, estimate=None) -> None:
    """Register the test family ``name`` (once): tasks ``i`` and ``nap`` solved by ``run``
    (``_nap``: sleep, then the row of ``i``), estimated by ``estimate`` (None: no estimate)."""
    if name in families():
        return
    register(
        Family(
            name=name,
            version="1",
            rules=Rules(
                params=(
                    Param("i", lambda v: as_int(v, low=0), dtype="int64"),
                    Param("nap", lambda v: as_float(v, low=0), dtype="float64"),
                )
            ),
            solver=Solver(run=run, columns={"woke": "int64"}),
            scheduling=Scheduling(estimate=estimate),
        )
    )


def nap_overrides(n: int, seconds: float, family: str = "test_nap") -> list[str]:
    """Command-line overrides that turn the paper study into ``n`` naps of ``seconds``."""
    return [
        "study=paper",
        "study.name=naps",
        f"study.family={family}",
        "~study.strategies",
        "~study.grid.deck",
        "~study.grid.feedback",
        f"+study.grid.i=[{','.join(map(str, range(n)))}]",
        f"+study.grid.nap=[{seconds}]",
    ]


if __name__ == "__main__":
    import runpy

    register_nap()
    n, seconds, *rest = sys.argv[1:]
    sys.argv = ["pipeline", *nap_overrides(int(n), float(seconds)), *rest]
    runpy.run_module("pipeline", run_name="__main__", alter_sys=True)  # as python -m pipeline
