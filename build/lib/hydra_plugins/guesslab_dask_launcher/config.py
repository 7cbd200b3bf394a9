"""The ``hydra/launcher=dask`` config node (registered when Hydra scans hydra_plugins)."""

from dataclasses import dataclass

from hydra.core.config_store import ConfigStore


@dataclass
class DaskLauncherConf:
    """Options of the dask launcher; the cluster itself is the app's ``cluster`` config."""

    _target_: str = "hydra_plugins.guesslab_dask_launcher.dask_launcher.DaskLauncher"


ConfigStore.instance().store(
    group="hydra/launcher", name="dask", node=DaskLauncherConf, provider="guesslab"
)
