"""A search over a strategy's parameters for the best of a study's objective (Optuna asks,
the pipeline solves and stores, Optuna is told): :func:`pipeline.search.runner.run_search`,
which guesslab's Hydra sweeper (``hydra/sweeper=guesslab``) calls."""
