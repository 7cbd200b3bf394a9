"""guesslab pipeline: grid expansion, Dask execution, the Parquet store, summaries, plots."""
