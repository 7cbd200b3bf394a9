"""guesslab's Hydra sweeper, ``hydra/sweeper=guesslab``: a search over a strategy's
parameters with current Optuna (pipeline.search does the work)."""
