"""``python -m pipeline.describe FAMILY`` (pipeline/describe.py): a family's parameters and
strategies in the words of the manual's parameter tables (solvers/kit/family_words.py, which
docs/hooks.py builds them from), without building the manual; ``describe FOLDER``: what a
study folder stores (pipeline/readback/describe_folder.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pipeline.describe import main
from pipeline.storage.store import file_metadata, load_results, result_files
from pipeline.storage.store_overview import store_counts
from solvers import families, get_family
from solvers.kit.family_words import param_words
from solvers.params import plain_words
from tests.helpers.repository import ROOT
from tests.helpers.runs import run_first_left_study


@pytest.mark.parametrize("family", families())
def test_every_parameter_is_described_in_the_words_of_the_manual_s_table(family, capsys):
    """Each parameter's name, dtype, default, meaning and accepted values as the table gives
    them (code spans unmarked), each strategy and each result column."""
    assert main([family]) == 0
    out = " ".join(capsys.readouterr().out.split())  # lines wrapped: compared as words
    fam = get_family(family)
    assert out.startswith(f"family {family} (version {fam.version})")
    for w in param_words(fam):
        assert f"{w.name} ({w.dtype}), default {plain_words(w.default)}" in out
        assert f"meaning: {plain_words(w.meaning)}" in out
        assert f"accepts: {plain_words(w.accepts)}" in out
    for strategy in fam.rules.strategies:
        assert strategy in out
    for column, dtype in fam.solver.columns.items():
        assert f"{column} ({dtype})" in out


def test_without_a_family_the_families_are_listed(capsys):
    """Each registered family on a line, with the first sentence of its description."""
    assert main([]) == 0
    lines = capsys.readouterr().out.splitlines()[1:]
    assert [line.split(":")[0].strip() for line in lines] == list(families())
    for family in ("card_guessing", "high_low", "triples"):
        assert f"  {family}: Family {family}: " in "\n".join(lines)


def test_an_unknown_family_is_one_line_naming_it_and_the_known_ones():
    """``guesslab describe`` with a name that is no family: one line, exit 2."""
    code = "import sys; from pipeline.command import cli; sys.argv[0] = 'guesslab'; cli()"
    done = subprocess.run(
        [sys.executable, "-c", code, "describe", "no_such_game"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    shipped = [f for f in families() if get_family(f).solver.run.__module__.startswith("solvers.")]
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: family 'no_such_game': unknown; known: {', '.join(shipped)}"
    ]
    assert done.stdout == ""


def test_a_long_family_name_or_families_setting_is_said_shortened(monkeypatch, capsys):
    """A 100,000-character family name, or a module of GUESSLAB_FAMILIES that cannot be
    imported, named by a setting of 100,000 characters: each line shows the value cut, its
    length said."""
    import solvers

    long = "y" * 100_000
    assert main([long]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < 400 and "(100,000 characters)" in err, err
    where = f"GUESSLAB_FAMILIES={long!r}: module {long!r}"
    monkeypatch.setitem(solvers._IMPORT_ERRORS, where, f"cannot be imported ({long})")
    assert main(["card_guessing"]) == 0
    warning = capsys.readouterr().err
    assert warning.startswith("warning: GUESSLAB_FAMILIES='yyy") and warning.count("\n") == 1
    assert len(warning) < 2000 and "(100,000 characters)" in warning, warning


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_is_plain_text_without_markup(flag, capsys):
    """``describe --help`` says how to call it in plain words: no reStructuredText markup."""
    assert main([flag]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m pipeline.describe [FAMILY | FOLDER]"), out
    assert "``" not in out and ":mod:" not in out


def test_a_study_folder_is_described_with_its_families_versions_strategies_and_runs(
    paper_outputs, capsys
):
    """``describe FOLDER`` on the default study's folder (or its results/ folder): each
    family with its tasks and rows as the store counts them, the family version of its files
    (marked current), each strategy with its tasks and commit, each run record with the
    results files whose metadata names it, and the disk used."""
    study = paper_outputs / "paper"
    assert main([str(study)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"study folder {study}\n"), out
    counts = store_counts(study / "results")
    rows = load_results(study)
    files = result_files(study / "results")
    for family in counts.families:
        ok = counts.rows_with("ok", family)
        failed = counts.rows_with("error", family)
        tasks = rows.loc[rows["family"] == family, "task_id"].nunique()
        assert f"  {family}: {tasks} tasks, {ok + failed} rows ({ok} ok, {failed} failed)\n" in out
        version = get_family(family).version
        assert f"family version {version} (current): {len(files)} files\n" in out
    for strategy, group in rows.groupby("strategy"):
        tasks = group["task_id"].nunique()
        code = file_metadata(files[0])["code_version"]
        assert f"      {strategy}: {tasks} task{'s' * (tasks > 1)}; commit {code}\n" in out
    records = sorted(p.stem for p in (study / "runs").glob("*.yaml"))
    assert records and sorted(rows["run"].unique()) == records  # each row names its run
    for record in records:
        written = sum(file_metadata(f)["run"] == record for f in files)
        assert f"  {record}: {written} results files ({written} rows), written " in out
    assert "\ndisk used: " in out and "not read" not in out
    assert main([str(study / "results")]) == 0
    assert capsys.readouterr().out == out  # its results folder: the same study


def test_a_folder_that_is_no_study_or_no_folder_is_one_line_naming_it(tmp_path, capsys):
    """An existing folder holding neither results/ nor runs/, or a path to nothing: one line
    saying which, exit 2."""
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {str(tmp_path)!r}: not a study folder (no results/ nor runs/")
    assert err.count("\n") == 1
    assert main([str(tmp_path / "gone")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {str(tmp_path / 'gone')!r}: no such folder and no family; ")
    assert err.count("\n") == 1


def test_a_strategy_of_one_s_own_is_described_with_its_class_and_fingerprint(
    tmp_path, monkeypatch, capsys
):
    """A study of a built-in strategy and one of one's own: the latter's line names its
    class (the files' metadata) and the fingerprint its rows store (``strategy_code``)."""
    outputs = run_first_left_study(tmp_path, monkeypatch, capsys)
    rows = load_results(outputs / "mine")
    code = rows.loc[rows["strategy"] == "first", "strategy_code"].item()
    commit = file_metadata(result_files(outputs / "mine" / "results")[0])["code_version"]
    assert main([str(outputs / "mine")]) == 0
    out = capsys.readouterr().out
    assert (
        f"      first: 1 task; commit {commit}; own class mine_first.FirstLeft, files' "
        f"fingerprint {code}\n"
    ) in out, out
    assert f"      optimal: 1 task; commit {commit}\n" in out, out
