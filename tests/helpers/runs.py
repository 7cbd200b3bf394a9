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


def run_first_left_study(tmp_path: Path, monkeypatch, capsys, decks: str = "[[2, 2]]") -> Path:
    """The study ``mine`` (the optimum and FirstLeft, a strategy of one's own written to a
    file of ``tmp_path``, on the decks ``decks``) run on cluster=sync,
    stage=run, into ``tmp_path/outputs``, as the command runs it in this process; that
    outputs folder."""
    from tests.helpers.commands import cli_run_in_process
    from tests.helpers.own_strategy_source import FIRST_LEFT

    (tmp_path / "mine_first.py").write_text(FIRST_LEFT)
    monkeypatch.syspath_prepend(str(tmp_path))
    studies = tmp_path / "studies" / "study"
    studies.mkdir(parents=True)
    (studies / "mine.yaml").write_text(
        f"name: mine\nfamily: card_guessing\ngrid:\n  deck: {decks}\n"
        "strategies:\n  optimal: {}\n  first:\n    _target_: mine_first.FirstLeft\n"
    )
    outputs = tmp_path / "outputs"
    args = ("--config-dir", str(tmp_path / "studies"), "study=mine", "cluster=sync")
    done = cli_run_in_process(monkeypatch, capsys, *args, f"paths.outputs={outputs}", "stage=run")
    assert done.returncode == 0, done.stderr
    return outputs
