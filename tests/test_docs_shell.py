"""Every shell command in the README and the manual works as typed in bash and in zsh (the
macOS default shell): an override holding brackets (``'study.grid.deck=[[2,2,2,2]]'``) is
quoted, since zsh reads an unquoted ``[...]`` as a file pattern and stops with "no matches
found".  The quoted forms reach Hydra's override parser and the real command line intact.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.commands import cli_run_in_process
from tests.helpers.repository import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", flags=re.S | re.M)
INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
# the programs a command line of the manual starts with
PROGRAMS = ("python", "guesslab", "guesslab-play", "pip", "pytest", "mkdocs", "bash", "sbatch")
OVERRIDE = re.compile(r"""^['"]?[+~]{0,2}[A-Za-z_][\w./@-]*=""")


def strip_comment(line: str) -> str:
    """A command line without its trailing "# comment" (outside quotes)."""
    lexer = shlex.shlex(line, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        list(lexer)
    except ValueError:
        return line
    # shlex stopped at the comment: cut the line where the last token ends
    match = re.search(r"\s+#(?=[^'\"]*$)", line)
    return line[: match.start()] if match else line


def commands() -> list[tuple[str, str]]:
    """(page, command) for every shell command of the README and the manual: command lines
    of fenced blocks (a leading "$ " dropped) and inline code that is a list of overrides."""
    found = []
    for page in PAGES:
        text = page.read_text()
        name = str(page.relative_to(ROOT))
        for block in FENCE.findall(text):
            for line in block.splitlines():
                line = line.strip().removeprefix("$ ")
                words = line.split()
                while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):  # VAR=value cmd
                    words = words[1:]
                if words and words[0] in PROGRAMS:
                    found.append((name, strip_comment(line)))
        for span in INLINE.findall(FENCE.sub("", text)):
            first = span.split()[0]
            if first in PROGRAMS or OVERRIDE.match(first):
                found.append((name, span))
    return found


COMMANDS = commands()
WITH_BRACKETS = [(page, c) for page, c in COMMANDS if re.search(r"[][]", c)]


def test_the_manual_has_commands_with_brackets_to_check():
    assert len(WITH_BRACKETS) >= 8, WITH_BRACKETS  # the README's multirun, usage, clusters...
    pages = {page for page, _ in WITH_BRACKETS}
    assert {"README.md", "docs/usage.md", "docs/clusters.md"} <= pages


@pytest.mark.parametrize(("page", "command"), WITH_BRACKETS)
def test_every_word_with_brackets_is_quoted(page, command):
    """Each word holding [ or ] is inside quotes (shlex in non-POSIX mode keeps them)."""
    lexer = shlex.shlex(command, posix=False)
    lexer.whitespace_split = True
    for word in lexer:
        if re.search(r"[][]", word):
            quoted = len(word) >= 2 and word[0] in "'\"" and word[-1] == word[0]
            assert quoted, f"{page}: {word} is not quoted in: {command}"


def overrides(command: str) -> list[str]:
    """The Hydra overrides of a pipeline command line (or a list of overrides)."""
    words = shlex.split(command)
    if words[:3] == ["python", "-m", "pipeline"]:
        words = words[3:]
    elif words[:1] == ["guesslab"]:
        words = words[1:]
    elif not OVERRIDE.match(words[0]):
        return []
    out, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif word in ("--config-dir", "--config-name", "-cd", "-cn"):
            skip = True
        elif not word.startswith("-"):
            out.append(word)
    return out


PIPELINE = [(page, c) for page, c in WITH_BRACKETS if overrides(c)]


@pytest.mark.parametrize(("page", "command"), PIPELINE)
def test_the_quoted_overrides_parse_as_hydra_reads_them(page, command):
    """shlex.split (what bash and zsh pass on for a quoted word) gives words Hydra's own
    override parser reads, brackets as lists (a bad override is the manual's point, kept)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    words = overrides(command)
    parser = OverridesParser.create()
    if "[[3,3'" in command:  # docs/hostile_input.md: an override Hydra cannot parse, on purpose
        with pytest.raises(Exception, match="mismatched input|no viable|extraneous|missing"):
            parser.parse_overrides(words)
        return
    parsed = parser.parse_overrides(words)
    listed = [o for o in parsed if "[" in o.input_line]
    assert listed, (page, command, words)
    for override in listed:
        if override.is_sweep_override():
            values = list(override.sweep_iterator())
        else:
            values = [override.value()]
        assert all(isinstance(v, list) for v in values), (page, override.input_line, values)


def test_the_manuals_bracketed_override_runs_through_the_real_command_line(
    tmp_path, monkeypatch, capsys
):
    """docs/usage.md's grid override, split as a shell splits it, planned by the CLI (its
    main, in this process, given those words as its argv)."""
    (line,) = [c for p, c in COMMANDS if p == "docs/usage.md" and "[[2,2,2,2]]" in c]
    words = shlex.split(line)
    assert words[:3] == ["python", "-m", "pipeline"]
    assert words[3:] == ["study=paper", "study.grid.deck=[[2,2,2,2]]"]
    monkeypatch.chdir(tmp_path)
    out = cli_run_in_process(monkeypatch, capsys, *words[3:], "stage=plan",
                             f"paths.outputs={tmp_path}")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("study paper: 2 tasks"), out.stdout  # 1 deck x 2 strategies


def simple_commands(command: str) -> list[str]:
    """The simple commands of a command line (split at &&, ||, ; and |), as text."""
    lexer = shlex.shlex(command, posix=False, punctuation_chars=";&|")
    lexer.whitespace_split = True
    parts: list[list[str]] = [[]]
    for word in lexer:
        if set(word) <= set(";&|"):
            parts.append([])
        else:
            parts[-1].append(word)
    return [" ".join(p) for p in parts if p]


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed here")
@pytest.mark.parametrize(("page", "command"), WITH_BRACKETS)
def test_zsh_passes_every_bracketed_command_on_as_shlex_splits_it(page, command, tmp_path):
    """zsh itself (no rc files), given each simple command's words as arguments of printf
    (nothing is run), expands them: no "no matches found", and the words shlex.split gives."""
    for simple in simple_commands(command):
        assert not re.search(r"[`$]", simple), simple  # no substitution to run here
        out = subprocess.run(
            ["zsh", "-f", "-c", f"printf '%s\\0' {simple}"],
            capture_output=True,
            text=True,
            cwd=Path(tmp_path),
        )
        assert out.returncode == 0, (page, simple, out.stderr)
        assert out.stdout.split("\0")[:-1] == shlex.split(simple), (page, simple)
