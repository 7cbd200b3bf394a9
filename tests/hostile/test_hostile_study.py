"""Study files are checked like the run config: typed, strict, once, before any work; the
messages say where a bad value came from; the program names itself."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pipeline.config import checked_config, checked_study, plain
from pipeline.errors import StudyError
from pipeline.running.plan import plan
from tests.helpers.commands import cli, cli_in_process, cli_run_in_process
from tests.helpers.repository import ROOT
from tests.helpers.runs import compose_config

VALID_STUDY_KEYS = "valid: name, family, description, grid, strategies, grids"


def own_study(folder: Path, text: str, name: str = "mine") -> Path:
    """``<folder>/study/<name>.yaml`` holding ``text``: a user's study folder."""
    (folder / "study").mkdir(parents=True, exist_ok=True)
    path = folder / "study" / f"{name}.yaml"
    path.write_text(text)
    return path


def refused(monkeypatch, capsys, tmp_path, *args: str) -> str:
    """The one line of a run refused with exit 2 that wrote nothing."""
    outputs = tmp_path / "out"
    status, err = cli_in_process(
        monkeypatch, capsys, *args, "cluster=sync", f"paths.outputs={outputs}"
    )
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and lines[0].startswith("error: "), err
    assert not outputs.exists()
    return lines[0]


GOOD = "name: mine\nfamily: high_low\ngrid:\n  n: [4]\nstrategies:\n  optimal: {}\n"


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("stratagies:\n  majority: {}\n", "study.stratagies={'majority': {}}"),
        ("descripton: a typo\n", "study.descripton='a typo'"),
        ("colour: red\n", "study.colour='red'"),
    ],
)
def test_a_misspelled_key_in_a_study_file_is_refused_naming_it(
    tmp_path, monkeypatch, capsys, line, key
):
    """A misspelled top-level key of a study file is refused in one line naming the key,
    the valid keys and the file."""
    path = own_study(tmp_path / "studies", GOOD + line)
    line = refused(
        monkeypatch, capsys, tmp_path, "--config-dir", str(path.parents[1]), "study=mine"
    )
    assert line.startswith(f"error: {key}: unknown key; {VALID_STUDY_KEYS}"), line
    assert f"(in {path})" in line


def test_an_added_study_key_on_the_command_line_is_refused(tmp_path, monkeypatch, capsys):
    """``+study.foo=1`` is refused as an unknown key, as ``+run.foo=1`` is, naming the
    override it came from."""
    line = refused(monkeypatch, capsys, tmp_path, "+study.foo=1")
    assert line.startswith(f"error: study.foo=1: unknown key; {VALID_STUDY_KEYS}"), line
    assert line.endswith("(from the command line override +study.foo=1)"), line


def test_a_family_inside_a_grid_part_is_refused(tmp_path, monkeypatch, capsys):
    """A ``family:`` inside a grid part is refused up front in one line, an unknown key of
    the part (a study has one family, at its top)."""
    text = (
        "name: mine\nfamily: card_guessing\ngrids:\n"
        "  - grid: {deck: [[2, 2]]}\n    strategies: {optimal: {}}\n"
        "  - family: high_low\n    grid: {n: [4]}\n    strategies: {optimal: {}}\n"
    )
    path = own_study(tmp_path / "studies", text)
    line = refused(
        monkeypatch, capsys, tmp_path, "--config-dir", str(path.parents[1]), "study=mine"
    )
    assert line.startswith(
        "error: study.grids[1].family='high_low': unknown key; valid: grid, strategies"
    ), line


@pytest.mark.parametrize(
    ("study", "message"),
    [
        ({"grids": [{"grid": {"n": [4]}, "family": "x"}]}, "study.grids[0].family='x'"),
        ({"grid": [4]}, "study.grid=[4]: must be a mapping of names to values"),
        ({"grids": [3]}, "study.grids[0]=3: must be a mapping of names to values"),
        ({"description": 5}, "study.description=5: must be a valid string"),
        ({"grid": {1: [4]}}, "study.grid.1: a key must be a name, not 1"),
        ({"name": "a/b"}, "study.name='a/b': must be a plain, non-empty name"),
    ],
)
def test_a_study_from_python_is_checked_by_the_same_model(study, message):
    base = {"name": "mine", "family": "high_low", "grid": {"n": [4]}}
    with pytest.raises(StudyError) as err:
        plan({**base, **study})
    assert str(err.value).startswith(message), err.value


STUDIES = sorted(p.stem for p in (ROOT / "conf" / "study").glob("*.yaml"))


@pytest.mark.parametrize("name", STUDIES)
def test_every_shipped_study_passes_the_strict_model(name):
    raw = yaml.safe_load((ROOT / "conf" / "study" / f"{name}.yaml").read_text())
    assert checked_study(raw).plain() == raw
    checked = checked_config(plain(compose_config(f"study={name}", "cluster=sync")))
    assert checked.study.name == name


# ---------------------------------------------------------------- messages that mislead


def test_a_value_from_the_command_line_is_said_to_come_from_there(tmp_path, monkeypatch, capsys):
    """A bad value given on the command line is said to come from the override, not from
    the study file."""
    line = refused(monkeypatch, capsys, tmp_path, "study.grid.deck=[[3,-1]]")
    assert "study.grid.deck=[3, -1]: must be a list of positive integers" in line
    assert line.endswith("(from the command line override study.grid.deck=[[3,-1]])"), line
    assert "paper.yaml" not in line


def test_a_value_from_the_study_file_still_names_the_file(tmp_path, monkeypatch, capsys):
    path = own_study(tmp_path / "studies", "name: mine\nfamily: high_low\ngrid:\n  n: [0]\n")
    args = ["--config-dir", str(path.parents[1]), "study=mine", "study.name=mine"]
    line = refused(monkeypatch, capsys, tmp_path, *args)
    expected = "error: study.grid.n=0: must be an integer from 2 to 1,000,000"
    assert line.startswith(expected) and f"(in {path})" in line


@pytest.mark.parametrize("flag", ["--config-dir", "-cd"])
def test_a_config_dir_that_does_not_exist_is_said_to_be_missing(
    tmp_path, monkeypatch, capsys, flag
):
    """A ``--config-dir`` (or ``-cd``) that does not exist is one line saying so."""
    missing = tmp_path / "no-such-folder"
    line = refused(monkeypatch, capsys, tmp_path, flag, str(missing), "study=mine")
    assert line == f"error: {flag}='{missing}': no such folder", line


def test_stage_plan_counts_the_grids_of_a_one_grid_study(tmp_path, monkeypatch, capsys):
    """``stage=plan`` counts the grids a study lists, not one per strategy: the default
    study has 1 grid of 2 strategies.  In this process: the printed plan is what is
    checked, not the process."""

    def plan_of(*args: str):
        return cli_run_in_process(monkeypatch, capsys, *args)

    out = plan_of("stage=plan", "cluster=sync", f"paths.outputs={tmp_path}")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("study paper: 2 tasks (1 grid, 2 strategies), 0 already"), out
    two = plan_of("study=high_low", "stage=plan", "cluster=sync", f"paths.outputs={tmp_path}")
    assert "tasks (2 grids, 2 strategies)" in two.stdout, two
    none = plan_of("study=triples", "stage=plan", "cluster=sync", f"paths.outputs={tmp_path}")
    assert "study triples: 14 tasks (1 grid), " in none.stdout, none


def test_help_names_the_program(tmp_path):
    """``guesslab --help`` opens with the program's name and usage, never ``__main__``."""
    out = cli("--help", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0]
    assert first.startswith("guesslab: run a study") and "__main__" not in out.stdout
    assert "usage: guesslab [study=NAME]" in out.stdout


@pytest.mark.parametrize(
    ("study", "deleted"),
    [("high_low_full_deck", "~study.grids.1"), ("ranks_exact", "~study.grids.0")],
)
def test_deleting_an_item_of_a_list_by_override_is_one_line(
    tmp_path, monkeypatch, capsys, study, deleted
):
    """An override cannot delete an item of a list (Hydra deletes a mapping's keys): exit 2,
    one line naming the override and the list, and what to give instead."""
    line = refused(monkeypatch, capsys, tmp_path, f"study={study}", deleted, "stage=plan")
    assert line == (
        f"error: {deleted}: an item of a list (study.grids) cannot be deleted by an override, "
        "only a key of a mapping; give the list whole (study.grids=[...]) or write a study "
        "file of your own (--config-dir)"
    )


@pytest.mark.parametrize(
    ("deleted", "instead"),
    [
        ("~paths", "choose one instead: paths=NAME (default)"),
        ("~cluster", "choose one instead: cluster=NAME (address, local, slurm, sync)"),
        ("~study", "choose one instead: study=NAME (entropy_grid, "),
        ("~stage", "set it instead: stage=VALUE"),
        ("~run", "set its keys instead: run.KEY=VALUE"),
        ("~store.recompute", "set it instead: store.recompute=VALUE"),
        ("~study.name", "set it instead: study.name=VALUE"),
        ("~cluster.kind=sync", "set it instead: cluster.kind=VALUE"),
    ],
)
def test_deleting_what_every_run_needs_says_it_cannot_be_deleted(
    tmp_path, monkeypatch, capsys, deleted, instead
):
    """``~KEY`` of a config group, a section or a required key: exit 2, one line saying it
    cannot be deleted and what to give instead (never ``+KEY=...``)."""
    line = refused(monkeypatch, capsys, tmp_path, deleted)
    key = deleted[1:].partition("=")[0]
    assert line.startswith(f"error: {deleted}: {key} cannot be deleted, every run needs it; ")
    assert instead in line and "+" not in line, line


def test_deleting_an_optional_study_key_still_works(tmp_path, monkeypatch, capsys):
    """A study's optional keys and the entries of its mappings can be deleted by override
    (``~study.description``)."""
    args = ["study=ranks_exact", "~study.description", "~study.grids.0.strategies.greedy"]
    done = cli_run_in_process(monkeypatch, capsys, *args, "stage=plan", "cluster=sync",
                              f"paths.outputs={tmp_path}")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "strategy=greedy" not in done.stdout and "strategy=optimal" in done.stdout


@pytest.mark.parametrize("value", ["{name: x, bogus: 1}", "[paper, high_low]"])
def test_a_study_is_chosen_by_name_and_the_message_quotes_the_whole_value(
    tmp_path, monkeypatch, capsys, value
):
    line = refused(monkeypatch, capsys, tmp_path, f"study={value}")
    assert line.startswith(f"error: study={value!r}: a study is chosen by name, study=NAME ("), line
    assert line.endswith("; to change one of its keys: study.KEY=VALUE"), line


def test_a_list_item_set_on_the_command_line_is_said_to_come_from_there(
    tmp_path, monkeypatch, capsys
):
    line = refused(monkeypatch, capsys, tmp_path, "study=ranks_exact", "study.grids.0=5")
    assert line == (
        "error: study.grids[0]=5: must be a mapping of names to values "
        "(from the command line override study.grids.0=5)"
    )
