"""guesslab pipeline: grid expansion, Dask execution, the Parquet store, summaries, plots.

``from pipeline import Study`` runs a study from Python (:mod:`pipeline.study_api`).
"""

import sys

if sys.argv[:1] == ["-m"]:  # Python locates a module to run: Ctrl-C is one line from here
    from pipeline.ctrl_c import run_as_command, starting

    if run_as_command():
        starting()


def __getattr__(name: str):
    """``pipeline.Study``, imported when first asked for (the command does not load it)."""
    if name == "Study":
        from pipeline.study_api import Study

        return Study
    raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
