"""The tutorial (docs/tutorial/) works as written: its steps' commands, run in order in one
fresh folder as a reader runs them, print what the pages show.

A ```console block is a command (``$ ...``) and what it prints; ``...`` in a printed line
stands for text of the reader's own (a folder, a time), a line ``...`` for any lines.  The
files a step tells the reader to save are its titled blocks (``title="PATH"``), or those of
the page it links to for them (docs/own-strategy.md).  Step 7's scheduler and worker are
started by the test (tests/helpers/dask_cluster.py), at a free port in place of 8786.
Slow: about two minutes of wall time on 2 cores (a dozen commands, nbconvert and a cluster).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import dask_cluster
from tests.helpers.repository import ROOT

pytestmark = pytest.mark.slow

DOCS = ROOT / "docs"
STEPS = sorted((DOCS / "tutorial").glob("0*.md"))
CONSOLE = re.compile(r"^```console\n(.*?)^```", flags=re.S | re.M)
TITLED = re.compile(r'^```\w+ title="([^"]+)"\n(.*?)^```', flags=re.S | re.M)
DEFAULT_ADDRESS = "tcp://127.0.0.1:8786"


def console_blocks(page: Path) -> list[tuple[str, str]]:
    """(command, what it prints) of each console block of ``page``."""
    out = []
    for block in CONSOLE.findall(page.read_text(encoding="utf-8")):
        first, _, shown = block.partition("\n")
        assert first.startswith("$ "), f"{page.name}: a console block starts with '$ '"
        out.append((first[2:], shown.rstrip("\n")))
    return out


BLOCKS = [(page.stem, command, shown) for page in STEPS for command, shown in console_blocks(page)]


def files_to_save(page: Path) -> dict[str, str]:
    """The files step ``page`` has the reader save: its own titled blocks, and those of a page
    it links to whose titles it names."""
    text = page.read_text(encoding="utf-8")
    files = dict(TITLED.findall(text))
    for target in re.findall(r"\]\(\.\./([\w-]+\.md)[#)]", text):
        for title, body in TITLED.findall((DOCS / target).read_text(encoding="utf-8")):
            if f"`{title}`" in text:
                files[title] = body
    return files


def pattern(shown: str) -> re.Pattern[str]:
    """What a block shows as a pattern of the output: ``...`` as any text, a line ``...`` as
    any lines, runs of spaces as any run of spaces (columns and tabs)."""
    parts = []
    for line in shown.splitlines():
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
            continue
        words = [re.escape(w).replace(r"\.\.\.", r"[^\n]*?") for w in line.split()]
        parts.append(r"[ \t]*" + r"[ \t]+".join(words) + r"[ \t]*\n")
    return re.compile("".join(parts))


def matches(shown: str, printed: str) -> bool:
    """Whether ``printed`` is what ``shown`` shows, line for line."""
    text = "\n".join(line.rstrip() for line in printed.strip("\n").splitlines()) + "\n"
    return pattern(shown).fullmatch(text) is not None


@pytest.fixture(scope="module")
def tutorial_run(tmp_path_factory) -> dict[int, tuple[int, str]]:
    """Every step's commands run in order in one fresh folder (the repository's docs/ linked
    into it, as a checkout has it): (exit status, output) by block."""
    folder = tmp_path_factory.mktemp("tutorial")
    (folder / "docs").symlink_to(DOCS)
    env = {k: v for k, v in os.environ.items() if k != "GUESSLAB_OUTPUTS"}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = str(ROOT)
    env["PYTHONUNBUFFERED"] = "1"
    address, procs = dask_cluster.start_cluster(1)
    results: dict[int, tuple[int, str]] = {}
    try:
        index = 0
        for page in STEPS:
            for name, body in files_to_save(page).items():
                (folder / name).parent.mkdir(parents=True, exist_ok=True)
                (folder / name).write_text(body, encoding="utf-8")
            for command, _ in console_blocks(page):
                command = command.replace(DEFAULT_ADDRESS, address)
                command = re.sub(r"^PYTHONPATH=\. ", f"PYTHONPATH=.:{ROOT} ", command)
                out = subprocess.run(
                    ["bash", "-c", command],
                    cwd=folder,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                    timeout=600,
                )
                results[index] = (out.returncode, out.stdout.replace(address, DEFAULT_ADDRESS))
                index += 1
        results[-1] = (0, (folder / "study.ipynb").read_text(encoding="utf-8"))
    finally:
        dask_cluster.stop(procs)
    return results


def test_the_tutorial_has_a_command_in_every_step():
    assert len(STEPS) == 7
    assert {page for page, _, _ in BLOCKS} == {p.stem for p in STEPS}


@pytest.mark.parametrize("index", range(len(BLOCKS)), ids=[f"{p}: {c[:50]}" for p, c, _ in BLOCKS])
def test_each_tutorial_command_prints_what_its_page_shows(tutorial_run, index):
    page, command, shown = BLOCKS[index]
    status, printed = tutorial_run[index]
    refused = shown.startswith("error:")
    assert (status == 2) if refused else (status == 0), f"{page}: {command}\n{printed}"
    assert matches(shown, printed), f"{page}: {command}\nshown:\n{shown}\nprinted:\n{printed}"


def test_the_notebook_step_writes_the_notebook_with_the_outputs_its_page_names(tutorial_run):
    """Step 6's nbconvert writes study.ipynb here with every cell's output: the run on the
    notebook's own client, as the page says."""
    cells = json.loads(tutorial_run[-1][1])["cells"]
    outputs = json.dumps([c.get("outputs", []) for c in cells])
    page = " ".join((DOCS / "tutorial" / "06-notebook.md").read_text(encoding="utf-8").split())
    named = re.search(r"`(running 4 tasks on the given Dask client) \(scheduler", page).group(1)
    assert named in outputs


def test_the_pattern_holds_what_a_page_shows_and_nothing_else():
    """``...`` stands for text within a line or for whole lines; the rest must be as shown."""
    shown = "study paper: 2 tasks\n...\nstore .../outputs/paper"
    assert matches(shown, "study paper: 2 tasks\nx\ny\nstore /tmp/a/outputs/paper\n")
    assert matches(shown, "study paper:  2 tasks\nstore /b/outputs/paper")
    assert not matches(shown, "study paper: 3 tasks\nstore /b/outputs/paper")
    assert not matches(shown, "study paper: 2 tasks\nstore /b/outputs/paper\nmore")
