"""Helpers shared by several test modules."""

from __future__ import annotations

from conftest import ROOT
from hydra import compose, initialize_config_dir


def compose_config(*overrides: str):
    """The composed config, as `python -m pipeline OVERRIDES` would see it."""
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))
