"""``python -m pipeline.describe FAMILY`` (pipeline/describe.py): a family's parameters and
strategies in the words of the manual's parameter tables (solvers/kit/family_words.py, which
docs/hooks.py builds them from), without building the manual."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pipeline.describe import main
from solvers import families, get_family
from solvers.kit.family_words import param_words
from solvers.params import plain_words
from tests.helpers.repository import ROOT


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
    for strategy in fam.strategies:
        assert strategy in out
    for column, dtype in fam.columns.items():
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
    shipped = [f for f in families() if get_family(f).run.__module__.startswith("solvers.")]
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
    assert out.startswith("usage: python -m pipeline.describe [FAMILY]"), out
    assert "``" not in out and ":mod:" not in out
