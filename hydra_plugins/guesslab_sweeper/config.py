"""The ``hydra/sweeper=guesslab`` config node (registered when Hydra scans hydra_plugins).

Its keys are those of Hydra's Optuna sweeper that a search of guesslab's uses: ``n_trials``
(trials in all), ``n_jobs`` (trials asked at once and solved as one batch of tasks),
``sampler`` (by name: tpe, random, cmaes, qmc, gp), ``seed``, and ``params`` (key -> sweep,
as on the command line); ``name`` names the search (its journal in the study folder).
"""

from dataclasses import dataclass, field
from typing import Any

from hydra.core.config_store import ConfigStore


@dataclass
class GuesslabSweeperConf:
    """Options of the guesslab sweeper (the objective is the study's ``objective:``)."""

    _target_: str = "hydra_plugins.guesslab_sweeper.sweeper.GuesslabSweeper"
    n_trials: int = 20
    n_jobs: int = 4
    sampler: str = "tpe"
    seed: Any = 0
    name: Any = None
    params: dict[str, str] = field(default_factory=dict)


ConfigStore.instance().store(
    group="hydra/sweeper", name="guesslab", node=GuesslabSweeperConf, provider="guesslab"
)
