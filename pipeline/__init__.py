"""guesslab pipeline: grid expansion, Dask execution, the Parquet store, summaries, plots."""

import sys

if sys.argv[:1] == ["-m"]:  # Python locates a module to run: Ctrl-C is one line from here
    from pipeline.ctrl_c import run_as_command, starting

    if run_as_command():
        starting()
