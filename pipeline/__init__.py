"""guesslab pipeline: grid expansion, Dask execution, the Parquet store, summaries, plots.

``from pipeline import Study`` runs a study from Python (:mod:`pipeline.study`), and
``from pipeline import load_results`` reads its stored rows
(:func:`pipeline.storage.store.load_results`).
"""

import sys

if sys.argv[:1] == ["-m"]:  # Python locates a module to run: Ctrl-C is one line from here
    import _signal  # built into the interpreter: the stops are held before any file is read

    _caught: list[int] = []  # a Ctrl-C or SIGTERM while pipeline.ctrl_c is read

    def _hold(signum, frame):  # the handler while pipeline.ctrl_c is read
        _caught.append(signum)

    _defaults = {_signal.SIGINT: _signal.default_int_handler, _signal.SIGTERM: _signal.SIG_DFL}
    _held = [s for s, default in _defaults.items() if _signal.getsignal(s) == default]
    for _stop in _held:
        _signal.signal(_stop, _hold)

    from pipeline.ctrl_c import run_as_command, starting

    if run_as_command():
        starting(_hold, _caught)
    else:  # another module of the package run: Python's own handling, as it was
        for _stop in _held:
            _signal.signal(_stop, _defaults[_stop])


def __getattr__(name: str):
    """``pipeline.Study`` and ``pipeline.load_results``, imported when first asked for
    (the command does not load them)."""
    if name == "Study":
        from pipeline.study import Study

        return Study
    if name == "load_results":
        from pipeline.storage.store import load_results

        return load_results
    raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
