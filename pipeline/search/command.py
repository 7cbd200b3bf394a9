"""``python -m pipeline -m hydra/sweeper=guesslab KEY=interval(a,b) ...``: the sweeper's
side of a search: its settings and overrides checked, the study's config composed once,
the search run, what it found said and written (:mod:`pipeline.search.outputs`).

Exit status as a run's: 0 when every trial was solved, 1 when some trial failed (its line
says why), 2 for a bad setting, objective or search space (nothing is written), 130 when
stopped by Ctrl-C (the line says what is stored; the same command goes on).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from omegaconf import DictConfig, OmegaConf, open_dict

from pipeline.errors import StudyError, short_repr
from pipeline.search.result import SearchResult, best_text
from pipeline.search.runner import SearchSettings, run_search
from pipeline.search.space import split_sweeps
from solvers.kit.words import counted

MAX_TRIALS = 1_000_000


def search(
    config: DictConfig, loader: Any, arguments: Sequence[str], given: Mapping[str, Any]
) -> SearchResult:
    """Run the search the command line asks for (``arguments``: Hydra's overrides,
    ``given``: ``hydra.sweeper``'s settings)."""
    from hydra.core.hydra_config import HydraConfig

    fixed, sweeps = split_sweeps(arguments)
    params = dict(given.get("params") or {})
    if params:
        _, from_config = split_sweeps([f"{k}={v}" for k, v in params.items()])
        sweeps = {**from_config, **sweeps}
    settings = checked_settings(given, sweeps)
    job = loader.load_sweep_config(config, fixed)
    HydraConfig.instance().set_config(job)
    with open_dict(job):
        del job["hydra"]
    result = run_search(OmegaConf.to_container(job, resolve=True), settings)
    if job.stage == "plan":
        return result
    page = result.page
    best = result.best
    if best is None:
        print(f"search {result.name}: no trial succeeded; see {page}", file=sys.stderr)
        sys.exit(1)
    print(f"search {result.name}: best {best_text(best, result)}")
    solved = counted(result.computed, "task")
    print(f"  {counted(len(result.trials), 'trial')}, {solved} solved by this run; {page}")
    failed = [t for t in result.trials if t.value is None]
    if failed:
        print(f"{len(failed)} trial(s) failed: see {page}", file=sys.stderr)
        sys.exit(1)
    return result


def checked_settings(given: Mapping[str, Any], sweeps: Mapping[str, Any]) -> SearchSettings:
    """``hydra.sweeper``'s settings, checked: StudyError naming the key and the value."""
    from pipeline.search.runner import SAMPLERS

    for key in ("n_trials", "n_jobs"):
        value = given.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_TRIALS:
            raise StudyError(
                f"hydra.sweeper.{key}={short_repr(value)}: must be a whole number from 1 to "
                f"{MAX_TRIALS:,}"
            )
    seed = given.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise StudyError(f"hydra.sweeper.seed={short_repr(seed)}: a whole number >= 0, or null")
    sampler = given.get("sampler")
    if sampler not in SAMPLERS:
        raise StudyError(
            f"hydra.sweeper.sampler={short_repr(sampler)}: valid: {', '.join(SAMPLERS)}"
        )
    name = given.get("name")
    if name is not None:
        from pipeline.config import unprintable_problem

        problem = unprintable_problem(str(name), "a search name")
        if not isinstance(name, str) or problem or "/" in name or name.startswith("."):
            raise StudyError(
                f"hydra.sweeper.name={short_repr(name)}: a plain file name "
                "(no '/', not starting with '.')"
            )
    return SearchSettings(given["n_trials"], given["n_jobs"], sampler, seed, name, dict(sweeps))
