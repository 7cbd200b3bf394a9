"""A Hydra sweeper that searches a strategy's parameters (``hydra/sweeper=guesslab``).

Thin over Hydra's Sweeper interface: the overrides split into fixed ones (composed once into
the study's config, as a run composes it) and sweeps (``interval``, ``range``, ``choice``),
then :func:`pipeline.search.command.search` runs the search on the study's cluster.  Unlike
Hydra's Optuna sweeper, a trial is not a Hydra job: trials are asked in batches and solved as
tasks of the study (see :mod:`pipeline.search.runner`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hydra.plugins.sweeper import Sweeper
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig


class GuesslabSweeper(Sweeper):
    """Hydra sweeper: a search over the objective strategy's parameters."""

    def __init__(self, **settings: Any) -> None:
        self.settings = settings
        self.config: DictConfig | None = None
        self.hydra_context: HydraContext | None = None

    def setup(
        self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig
    ) -> None:
        self.config = config
        self.hydra_context = hydra_context

    def sweep(self, arguments: Sequence[str]) -> Any:
        from pipeline.search.command import search

        assert self.config is not None and self.hydra_context is not None
        return search(self.config, self.hydra_context.config_loader, arguments, self.settings)
