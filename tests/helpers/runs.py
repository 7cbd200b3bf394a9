"""Studies composed and run in this process, as ``python -m pipeline`` would run them."""

from __future__ import annotations

from pathlib import Path

from hydra import compose, initialize_config_dir

from tests.helpers.repository import ROOT


def compose_config(*overrides: str):
    """The composed config, as `python -m pipeline OVERRIDES` would see it."""
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


def run(outputs: Path, *overrides: str, logged: list[str] | None = None):
    """``run_study`` in this process on the composed config, results under ``outputs``, no
    progress bar; its report.  The run's log lines go to ``logged`` when given."""
    from pipeline.run import run_study

    cfg = compose_config(f"paths.outputs={outputs}", "run.progress=false", *overrides)
    if logged is None:
        return run_study(cfg, log=lambda *_: None)
    return run_study(cfg, log=lambda *a: logged.append(" ".join(map(str, a))))
