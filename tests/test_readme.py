"""The README stays a short, true front page: CI runs its test command, the studies it names
exist, and every link into the manual resolves."""

from __future__ import annotations

import re

import pytest

from tests.helpers.repository import ROOT

README = (ROOT / "README.md").read_text()


def test_ci_runs_exactly_the_readme_test_command():
    commands = re.findall(r"^(pip install .*pytest)\s", README, flags=re.M)
    assert commands, "the README gives no test command"
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert commands[0].strip() in [line.strip() for line in ci]


def test_the_readme_gives_the_default_study_command_and_its_first_result():
    assert re.search(r'^pip install -e "\.\[test\]" && python -m pipeline\s', README, flags=re.M)
    assert "475/112" in README and "2383/560" in README


@pytest.mark.parametrize("study", ["paper", "high_low"])
def test_studies_named_in_the_readme_exist(study):
    assert f"study={study}" in README
    assert (ROOT / "conf" / "study" / f"{study}.yaml").exists()


def test_the_readme_fits_two_screens():
    assert len(README.splitlines()) <= 150


def test_links_into_the_manual_resolve():
    links = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", README)
    assert len(links) >= 10
    for link in links:
        assert (ROOT / link).is_file(), link


def test_the_readme_cites_sources_by_author_not_by_file_number():
    assert not re.search(r"seed 00\d", README, flags=re.I)
