"""The README stays true: its query examples run, and CI runs its test command."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT
from tests_support import compose_config

from pipeline.run import run_study

README = (ROOT / "README.md").read_text()


def section(title: str) -> str:
    start = README.index(f"## {title}")
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else None]


def test_ci_runs_exactly_the_readme_test_command():
    commands = re.findall(r"^(pip install .*pytest)\s", README, flags=re.M)
    assert commands, "the README gives no test command"
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert commands[0].strip() in [line.strip() for line in ci]


def test_query_examples_run_on_a_real_store(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    cfg = compose_config("paths.outputs=outputs", "cluster=sync", "run.progress=false")
    run_study(cfg, log=lambda *_: None)
    blocks = re.findall(r"```python\n(.*?)```", section("Querying results"), flags=re.S)
    assert len(blocks) >= 5
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "2383/560" in out and "475/112" in out


@pytest.mark.parametrize("study", ["paper", "high_low"])
def test_studies_named_in_the_readme_exist(study):
    assert f"study={study}" in README
    assert (ROOT / "conf" / "study" / f"{study}.yaml").exists()
