"""guesslab's Hydra launcher ``dask``: a multirun's jobs as tasks on a Dask cluster."""
