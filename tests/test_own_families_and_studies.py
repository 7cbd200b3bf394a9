"""A game and a study from the user's own folders, outside the package: a toy family
registered through GUESSLAB_FAMILIES, its study found through Hydra's --config-dir."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers.commands import own_family_env, own_study_command

TOY_GAME = '''
"""A toy family: the sum 1 + ... + n, as a game in a dozen lines."""
from solvers.params import Param, as_int
from solvers.registry import Family, Presentation, Rules, Solver, register


def run(task):
    return [{"total": task["n"] * (task["n"] + 1) // 2}]


def summarize(rows, out_dir):
    return f"{len(rows)} sums; the largest is {rows['total'].max()}"


register(Family(
    name="toy_sum", version="1", solver=Solver(run=run, columns={"total": "int64"}),
    rules=Rules(params=(Param("n", lambda v: as_int(v, low=1), 3, "how many numbers",
                              dtype="int64"),)),
    presentation=Presentation(summary="toygame:summarize"), examples=({"n": 3},),
))
'''


def toy_folder(tmp_path: Path, grid: str = "[1, 2, 3, 4]") -> Path:
    """<tmp>/toygame.py and <tmp>/studies/study/toy.yaml, as a user would keep them."""
    (tmp_path / "toygame.py").write_text(textwrap.dedent(TOY_GAME))
    studies = tmp_path / "studies" / "study"
    studies.mkdir(parents=True)
    (studies / "toy.yaml").write_text(f"name: toy\nfamily: toy_sum\ngrid:\n  n: {grid}\n")
    return tmp_path


def guesslab(folder: Path, study: str, *args: str) -> subprocess.CompletedProcess:
    """``python -m pipeline --config-dir studies study=STUDY ...`` run from ``folder``, the toy
    game on its path and named in GUESSLAB_FAMILIES."""
    cmd, env = own_study_command(folder, study, *args), own_family_env(folder, "toygame")
    return subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("cluster", ["sync", "local"])
def test_a_new_family_runs_end_to_end_from_its_own_folder(tmp_path, cluster):
    folder = toy_folder(tmp_path)
    res = guesslab(folder, "toy", f"cluster={cluster}", "paths.outputs=out")
    assert res.returncode == 0, res.stderr
    import pandas as pd

    rows = pd.read_parquet(folder / "out" / "toy" / "results")
    assert sorted(rows["total"]) == [1, 3, 6, 10]
    assert set(rows["family"]) == {"toy_sum"} and set(rows["status"]) == {"ok"}
    summary = (folder / "out" / "toy" / "summary.md").read_text()
    assert "4 sums; the largest is 10" in summary


def test_an_unknown_study_lists_the_user_s_studies_too(tmp_path):
    folder = toy_folder(tmp_path)
    res = guesslab(folder, "nonesuch", "paths.outputs=out")
    assert res.returncode == 2
    assert "study='nonesuch': unknown study; valid:" in res.stderr
    assert "toy" in res.stderr and "paper" in res.stderr
    assert not (folder / "out").exists()


def test_a_bad_value_in_the_user_s_study_names_the_file_and_key(tmp_path):
    folder = toy_folder(tmp_path, grid="[2, 0]")
    res = guesslab(folder, "toy", "cluster=sync", "paths.outputs=out")
    assert res.returncode == 2, res.stderr
    line = res.stderr.strip()
    assert "study.grid.n=0: must be >= 1" in line
    assert str(folder / "studies" / "study" / "toy.yaml") in line
    assert len(line.splitlines()) == 1
    assert not (folder / "out").exists()


def test_a_study_file_that_is_not_yaml_names_the_file_and_line(tmp_path):
    folder = toy_folder(tmp_path, grid="[1, 2")
    res = guesslab(folder, "toy", "cluster=sync", "paths.outputs=out")
    assert res.returncode == 2, res.stderr
    assert str(folder / "studies" / "study" / "toy.yaml") in res.stderr
    assert "not valid YAML" in res.stderr and "line " in res.stderr
    assert not (folder / "out").exists()


def test_an_edited_family_is_computed_again_and_summarised_alone(tmp_path):
    """A family from GUESSLAB_FAMILIES carries its code's fingerprint in its version: after
    an edit to its module the next run computes every task again, and the summary reads the
    new code's rows only, counting those in its first line and saying that the store keeps
    the other version's files."""
    folder = toy_folder(tmp_path, grid="[1, 2, 3, 4]")
    first = guesslab(folder, "toy", "cluster=sync", "paths.outputs=out")
    assert first.returncode == 0 and "4 computed" in first.stdout, first.stdout + first.stderr
    game = folder / "toygame.py"
    game.write_text(game.read_text().replace('task["n"] * (task["n"] + 1) // 2', 'task["n"] ** 2'))
    second = guesslab(folder, "toy", "cluster=sync", "paths.outputs=out")
    assert "0 already stored, 4 computed" in second.stdout, second.stdout + second.stderr
    summary = (folder / "out" / "toy" / "summary.md").read_text()
    assert "4 sums; the largest is 16" in summary
    assert "`toy_sum`: the store keeps " in summary
    assert "written by other versions of its code, left out here" in summary
    assert "4 tasks, 4 result rows: 4 ok, 0 failed; " in summary  # the rows it shows
    assert "The store keeps 4 more rows, computed by other versions of the code" in summary
    again = guesslab(folder, "toy", "cluster=sync", "paths.outputs=out", "stage=plan")
    assert "4 already stored, 0 to run" in again.stdout, again.stdout


RULES_APART = '''
"""The toy game's rules, in a module of their own."""


def total(n):
    return n * (n + 1) // 2
'''

GAME_OVER_RULES = """
from solvers.registry import Family, Rules, Solver, register
from toyrules_apart import total
from solvers.params import Param, as_int


def run(task):
    return [{"total": total(task["n"])}]


register(Family(
    name="toy_apart", version="1", solver=Solver(run=run, columns={"total": "int64"}),
    rules=Rules(params=(Param("n", lambda v: as_int(v, low=1), 3, "how many numbers",
                              dtype="int64"),)),
    examples=({"n": 3},),
))
"""


def test_a_family_s_version_follows_every_module_of_its_own_that_its_import_brings(
    tmp_path, monkeypatch
):
    """A family from elsewhere whose solver imports its rules from another module of the
    user's: an edit to the rules' module alone gives the family another version (its task
    ids change, so its rows are computed again), and the same code the same version."""
    import importlib

    import solvers
    from solvers import registry

    (tmp_path / "toyrules_apart.py").write_text(RULES_APART)
    (tmp_path / "toygame_apart.py").write_text(GAME_OVER_RULES)
    monkeypatch.syspath_prepend(str(tmp_path))

    def version() -> str:
        for name in ("toygame_apart", "toyrules_apart"):
            sys.modules.pop(name, None)
        registry._FAMILIES.pop("toy_apart", None)
        importlib.invalidate_caches()
        solvers._import_family("test", lambda: importlib.import_module("toygame_apart"))
        return registry._FAMILIES.pop("toy_apart").version

    try:
        first, same = version(), version()
        rules = tmp_path / "toyrules_apart.py"
        rules.write_text(rules.read_text().replace("n * (n + 1) // 2", "n * n"))
        edited = version()
    finally:
        for name in ("toygame_apart", "toyrules_apart"):
            sys.modules.pop(name, None)
    assert first.startswith("1+code.") and first == same
    assert edited.startswith("1+code.") and edited != first
