"""A toy long-task family for the pipeline's tests: ``toy_layers``, from a module in a
temporary folder named in GUESSLAB_FAMILIES, as a user's own game.  It sums ``layers``
squares, one checkpoint piece a layer, reporting progress after each; every layer it computes
(not loads) leaves a marker file, so a test counts recomputations.  The environment holds it
at a layer (TOY_GATE, TOY_GATE_AT) or fails there (TOY_FAIL_AT)."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pandas as pd

from tests.helpers.commands import own_family_env, own_study_command

TOY = '''
"""A toy long task: the sum of the squares 0..layers-1, one checkpoint piece a layer."""
import os
import time
import uuid
from pathlib import Path

from solvers.kit import budget, task_context
from solvers.params import Param, as_float, as_int
from solvers.registry import Family, Rules, Scheduling, Solver, register


def needs(task, workers):
    return budget.Need(
        memory=task["mem_mb"] * 10**6, disk=task["disk_mb"] * 10**6,
        note=f"{task['layers']} layers",
    )


def run(task, spread=None):
    ctx = task_context.current()
    cp = ctx.checkpoints
    fail_at = int(os.environ.get("TOY_FAIL_AT", "-1"))
    gate, gate_at = os.environ.get("TOY_GATE"), int(os.environ.get("TOY_GATE_AT", "-1"))
    total = 0
    for i in range(task["layers"]):
        name = f"layer-{i:03d}"
        if cp is not None and cp.trusted(name):
            value = int(cp.load_path(name).read_text())
        else:
            if i == fail_at:
                raise RuntimeError(f"toy failure at layer {i}")
            while i == gate_at and os.path.exists(gate):  # held here until the test opens it
                time.sleep(0.05)
            time.sleep(task["sleep"])
            value = i * i if spread is None else spread.gather(spread.submit(pow, i, 2))
            markers = os.environ.get("TOY_MARKERS")
            if markers:
                Path(markers, f"layer-{i:03d}.{os.getpid()}.{uuid.uuid4().hex}").touch()
            if cp is not None:
                cp.path(name).write_text(str(value))
                cp.commit(name)
        total += value
        ctx.progress(i + 1, task["layers"], "layers", f"layer {i}")
    return [{
        "total": total, "budget": ctx.budget.bytes, "workers": ctx.workers,
        "kept": cp is not None,
    }]


def split(task):
    """The same sum, each layer's square computed where the context spreads (ctx.spread())."""
    with task_context.current().spread(2) as spread:
        return run(task, spread)


register(Family(
    name="toy_layers", version="1",
    solver=Solver(
        run=run, columns={"total": "int64", "budget": "int64", "workers": "int64", "kept": "bool"}
    ),
    scheduling=Scheduling(
        needs=needs,
        spreads_over_cluster=lambda task: task["split"],
        run_over_cluster="toylong:split",
    ),
    rules=Rules(params=(
        Param("layers", lambda v: as_int(v, low=1), 4, "layers", dtype="int64"),
        Param("mem_mb", lambda v: as_int(v, low=0), 1, "memory need (MB)", dtype="int64"),
        Param("disk_mb", lambda v: as_int(v, low=0), 0, "disk need (MB)", dtype="int64"),
        Param("split", lambda v: bool(v), False, "run as a split task", dtype="bool"),
        Param("sleep", lambda v: as_float(v, low=0), 0.0, "seconds a layer",
              identity=False, dtype="float64"),
    )),
))
'''


def toy_folder(tmp_path: Path, **grid) -> Path:
    """<tmp>/toylong.py and <tmp>/studies/study/toy.yaml (grid: one value per parameter)."""
    (tmp_path / "toylong.py").write_text(textwrap.dedent(TOY))
    studies = tmp_path / "studies" / "study"
    studies.mkdir(parents=True, exist_ok=True)
    axes = "".join(f"  {k}: [{v}]\n" for k, v in grid.items())
    (studies / "toy.yaml").write_text(f"name: toy\nfamily: toy_layers\ngrid:\n{axes}")
    (tmp_path / "markers").mkdir(exist_ok=True)
    return tmp_path


def toy_env(folder: Path, **extra: str) -> dict[str, str]:
    env = {**own_family_env(folder, "toylong"), "TOY_MARKERS": str(folder / "markers")}
    for name in ("TOY_FAIL_AT", "TOY_GATE", "TOY_GATE_AT"):
        env.pop(name, None)
    return {**env, **extra}


def guesslab_cmd(folder: Path, *args: str) -> list[str]:
    return own_study_command(folder, "toy", "paths.outputs=out", *args)


def guesslab(folder: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        guesslab_cmd(folder, *args),
        cwd=folder,
        env=toy_env(folder, **env),
        capture_output=True,
        text=True,
        timeout=300,
    )


def markers(folder: Path) -> list[str]:
    """The layers computed so far, one entry per computation."""
    return sorted(p.name.split(".")[0] for p in (folder / "markers").iterdir())


def stored(folder: Path) -> pd.DataFrame:
    return pd.read_parquet(folder / "out" / "toy" / "results")
