"""The manual in docs/ stays true: it builds strictly, its parameter tables come from the
registry, and its runnable Python blocks run against a real store."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from solvers import families, get_family
from solvers.mastermind.rules import HARD_MAX_CODES
from solvers.params import check_markdown
from tests.helpers.folders import copy_outputs
from tests.helpers.repository import ROOT

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
MANUAL_FAMILIES = sorted(f for f in families() if not f.startswith("test_"))
PYTHON_BLOCK = re.compile(r"^([ \t]*)```python\n(.*?)^\1```", flags=re.S | re.M)
# what the runnable blocks of a page must print (they read the default study's store)
EXPECTED_OUTPUT = {
    "usage.md": ["2383/560", "475/112", "410548/75075", "card_guessing"],
    "architecture.md": ["1/2"],
    "python.md": ["62929/11550", "nothing was run or written", "out/paper/report.html"],
    "entropy.md": ["(2.0, 1.0) 1.5"],
    "games/mastermind_optimal.md": ["73/27 73 4"],
}
# runs each block of a page in a fresh namespace, in one interpreter, and reports as JSON
BLOCK_RUNNER = """
import contextlib, io, json, sys, traceback
results = []
for i, code in enumerate(json.load(sys.stdin)):
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"block {i}", "exec"), {"__name__": "__main__"})
        results.append({"ok": True, "out": out.getvalue()})
    except Exception as exc:
        results.append({"ok": False, "out": out.getvalue(),
                        "error": f"{type(exc).__name__}: {exc}",
                        "trace": traceback.format_exc()})
print(json.dumps(results))
"""


def hooks_module() -> ModuleType:
    """docs/hooks.py, imported from its file as MkDocs imports it."""
    spec = importlib.util.spec_from_file_location("guesslab_docs_hooks", DOCS / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def python_blocks(page: Path) -> list[str]:
    """The page's ```python blocks (dedented: a block may sit inside a list item)."""
    return [textwrap.dedent(code) for _, code in PYTHON_BLOCK.findall(page.read_text())]


@pytest.fixture(scope="module")
def default_store(paper_outputs, tmp_path_factory) -> Path:
    """A folder holding `outputs/paper`, written by the default study as a user would."""
    folder = tmp_path_factory.mktemp("store")
    copy_outputs(paper_outputs, folder / "outputs")
    return folder


def test_mkdocs_build_is_strict_and_clean(built_site):
    site = built_site
    for name in ("card_guessing", "high_low", "mastermind", "triples", "hand_guessing"):
        # a name's break opportunities (<wbr>, docs/page_layout.py) are no characters of it
        html = (site / "games" / f"{name}.html").read_text().replace("<wbr>", "")
        assert "<!-- params:" not in html
        for p in get_family(name).rules.params:  # the generated table reached the page
            assert f"<td><code>{p.name}</code></td>" in html, (name, p.name)


@pytest.mark.parametrize("family", MANUAL_FAMILIES)
def test_every_family_has_its_generated_parameter_table_in_the_manual(family):
    marker = f"<!-- params: {family} -->"
    assert any(marker in page.read_text() for page in PAGES), f"no page holds {marker}"
    table = hooks_module().expand_markers(marker)
    fam = get_family(family)
    lines = [line for line in table.splitlines() if line.startswith("|")]
    assert len(lines) == 2 + len(fam.rules.params)
    for p, line in zip(fam.rules.params, lines[2:], strict=True):
        assert line.startswith(f"| `{p.name}` |")
        assert f"`{p.dtype}`" in line
        assert ("execution knob" in line) == (not p.identity)
        if p.strategies:  # a strategy by name; "own": strategies of one's own, by a link
            shown = [
                "[your own](../own-strategy.md)" if s == "own" else f"`{s}`" for s in p.strategies
            ]
            assert all(s in line for s in shown), line


def test_the_tables_follow_the_registry_not_a_copy():
    hooks = hooks_module()
    text = hooks.expand_markers("<!-- params: high_low -->\n<!-- strategies: mastermind -->")
    assert (
        "| `ties` | `lose` | how an equal card scores (real decks) | one of `lose`, `win`, `push`"
        in text
    )
    assert "`minimax` (default)" in text and "Knuth 1977" in text
    largest = f"an integer from 1 to {HARD_MAX_CODES:,}"  # the bound the check enforces
    assert f"| {largest} |" in hooks.expand_markers("<!-- params: mastermind -->")
    assert "seed 00" not in hooks.expand_markers("<!-- strategies: card_guessing -->")
    with pytest.raises(ValueError, match="unknown family"):
        hooks.expand_markers("<!-- params: no_such_game -->")


# What a generated table must never show: a checker's source code.  A code span in a table
# holds a name or a value as a user types it (`n_games`, `monte_carlo`, `1/3`, `int64`).
CODE_IN_TABLES = [
    r"\b(as_int|as_float|int_list|one_of|check_\w+|optional_int)\(",
    r"\blambda\b",
    r"\bis None\b",
    r"\bNone\b",
    r"\bwith (high|low) =",
    r"\b(low|high|value|v)\s*=",
    r"[<>!=]=",
    r"\b(def|return|else)\b",
]
LITERAL_SPAN = re.compile(r"[\w.:/<>,\-]+")


@pytest.mark.parametrize("family", MANUAL_FAMILIES)
def test_no_generated_table_shows_code(family):
    """The parameter and column tables say in words what each parameter accepts."""
    for p in get_family(family).rules.params:
        assert check_markdown(p.check), f"{family}.{p.name}: its checker gives no words"
    tables = hooks_module().expand_markers(f"<!-- params: {family} -->\n<!-- columns: {family} -->")
    code = [m.group(0) for pat in CODE_IN_TABLES for m in re.finditer(pat, tables)]
    spans = re.findall(r"`([^`]*)`", tables)
    code += [f"`{s}`" for s in spans if not LITERAL_SPAN.fullmatch(s) or s in ("value", "v")]
    assert not code, f"{family}: {code}"


def test_the_hook_imports_solvers_only():
    code = (
        f"import runpy, sys; runpy.run_path({str(DOCS / 'hooks.py')!r}); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pipeline', 'dask', 'hydra'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("page", sorted(EXPECTED_OUTPUT))
def test_python_blocks_in_the_manual_run_on_a_real_store(page, default_store):
    blocks = python_blocks(DOCS / page)
    assert blocks, f"{page} has no python block"
    out = subprocess.run(
        [sys.executable, "-c", BLOCK_RUNNER],
        input=json.dumps(blocks),
        capture_output=True,
        text=True,
        cwd=default_store,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout.splitlines()[-1])
    failed = [(i, r) for i, r in enumerate(results) if not r["ok"]]
    printed = "".join(r["out"] for r in results)
    assert not failed, "\n".join(f"{page} block {i}:\n{r['trace']}" for i, r in failed)
    for expected in EXPECTED_OUTPUT[page]:
        assert expected in printed, (page, expected, printed)


def test_every_page_with_python_blocks_is_run():
    with_blocks = {str(p.relative_to(DOCS)) for p in PAGES if python_blocks(p)}
    assert with_blocks <= set(EXPECTED_OUTPUT), with_blocks - set(EXPECTED_OUTPUT)


def test_the_manual_cites_sources_by_author_not_by_file_number():
    for page in PAGES:
        assert not re.search(r"seed 00\d", page.read_text(), flags=re.I), page


def test_every_work_the_manual_cites_is_in_the_bibliography():
    """Each "Author (year)" on a page has its entry "**Author ... (year).**" in bibliography.md."""
    bib = (DOCS / "bibliography.md").read_text()
    entries = re.findall(r"^- \*\*(.+?) \((\d{4})\)\.\*\*", bib, flags=re.M)
    known = {(re.split(r",| &| et al", authors)[0].strip(), year) for authors, year in entries}
    cite = re.compile(
        r"\b([A-Z][a-zA-Z\-]+)(?: et al\.|(?:,? (?:&|and) [A-Z][a-zA-Z\-]+|, [A-Z][a-zA-Z\-]+)*)"
        r" \((\d{4})[a-z]?[),;]"
    )
    missing = {
        (m.group(1), m.group(2), page.name)
        for page in PAGES
        for m in cite.finditer(" ".join(page.read_text().split()))
        if (m.group(1), m.group(2)) not in known
    }
    assert not missing, sorted(missing)


def test_the_bibliography_says_what_each_unpublished_source_is():
    bib = " ".join((DOCS / "bibliography.md").read_text().split())
    assert "Manuscript" not in bib
    assert "The Informaticists" in bib


# Words that narrate when or in what order the work was done, who was around, or cite the
# tracker: a page says what holds now, the command, and what it costs on which machine.
NARRATION = [
    r"\bsessions?\b",
    r"\b(the )?(round before|previous round|last round)\b",
    r"\bnew this\b",
    r"\b(an hour|minutes) later\b",
    r"\bthis morning\b",
    r"\btried and not adopted\b",
    r"\bmeasured again\b",
    r"(?<![\w/])#\d+\b",
    r"\bissues? #?\d+\b",
    # the machine is shared with other jobs, not people; and the manual has no narrator
    r"\bengineers?\b",
    r"\b(we|our|ours)\b",
    r"\b(beside|with) the (full )?test suite\b|\btest suite ran\b",
    # before and after: what a change did belongs in its commit message
    r"\bnow\b",
    r"\b(GB|MB|s|x|us) before\b",
    r"\bas it stands\b",
    r"\bunchanged by this\b|\bthis work\b",
    r"\b(two|the) new ones?\b|\bnew results?\b",
    r"\b(published|gave) before\b|\bREADME gave\b",
    # how a run went
    r"\bearlier,? (interrupted )?(run|build|figure|attempt|version)s?\b",
    r"\bthe study's earlier\b",
    r"\binterrupted run\b|\bwas interrupted\b|\bfirst (run|attempt)\b",
    r"\bthe run was stopped\b|\bwere linked into\b",
    r"\bdid not settle\b",
    r"\bslow minute\b|\bquietest run\b|\bgot it there\b|\bwhat is left:",
    r"\bright after\b|\bits first \d+ minutes\b",
    r"\b(VM|machine)'s (speed|mood) moved\b",
    # which version of the code a number came from belongs in the commit, not the page
    r"\brevision [0-9a-f]{7,}\b",
    r"\bnot adopted\b|\banother build of\b|\bsecond run of the same\b",
]
DATE = r"\b20\d\d-\d\d-\d\d\b"  # a date of a run: the machine and the load qualify a figure


@pytest.mark.parametrize("page", [*PAGES, ROOT / "README.md"], ids=lambda p: p.name)
def test_no_page_narrates_the_history_of_the_work(page):
    """The manual's pages and the README say what holds, not how or when it came to be."""
    text = " ".join(page.read_text().split())
    found = [m.group(0) for pat in [*NARRATION, DATE] for m in re.finditer(pat, text, flags=re.I)]
    assert not found, f"{page.name}: {found}"


RUN_TIME = r"~?\b\d[\d.,]*\s?(s|min|minutes?|seconds?|hours?)\b|\bhours\b"


def test_figure_captions_carry_no_run_time():
    """A study's run time is quoted once, in the usage page's table of shipped studies."""
    captions = [
        (page.relative_to(DOCS), line)
        for page in PAGES
        for line in page.read_text().splitlines()
        if line.startswith("*") and "manual_figures.py" in line
    ]
    assert captions
    timed = [(str(p), m.group(0)) for p, line in captions for m in re.finditer(RUN_TIME, line)]
    assert not timed, timed


def test_every_shipped_study_has_a_row_with_its_run_time_column_in_usage():
    text = (DOCS / "usage.md").read_text()
    table = text[text.index("| study | family | what it computes | wall time |") :]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    listed = {name for row in rows for name in re.findall(r"`(\w+)`", row.split("|")[1])}
    shipped = {p.stem for p in (ROOT / "conf" / "study").glob("*.yaml")}
    assert shipped <= listed, sorted(shipped - listed)


def test_the_built_site_works_opened_from_disk(built_site):
    """Every link between pages names an HTML file that exists (through file:// a link to a
    folder shows a directory listing), and every image a page shows exists."""
    bad = []
    for page in built_site.rglob("*.html"):
        if page.name == "404.html":
            continue  # served only: its links are absolute by design
        html = page.read_text(errors="replace")
        for attr, target in re.findall(r'(href|src)="([^"#?]+)[^"]*"', html):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("//"):
                continue  # another site, mailto:, data:
            dest = (page.parent / target).resolve()
            if target.endswith("/") or dest.is_dir() or not dest.exists():
                bad.append(f"{page.relative_to(built_site)}: {attr}={target}")
    assert not bad, bad[:20]


QUOTED_TASKS = re.compile(r"(?<![\^\d,])(\d[\d,]*) tasks[;),]")


def quoted_task_counts() -> list[tuple[str, str, int]]:
    """(page, study, count) for every "(N tasks)" the manual quotes about a shipped study:
    the study is the last one named in backticks before the count in its table row or
    sentence, the nearest (the default study where the row says so); a count naming no
    study is not a study's."""
    shipped = {p.stem for p in (ROOT / "conf" / "study").glob("*.yaml")}
    found = []
    for page in PAGES:
        text = page.read_text()
        for m in QUOTED_TASKS.finditer(text):
            line_start = text.rfind("\n", 0, m.start()) + 1
            row = text[line_start : m.start()]
            if not row.startswith("|"):  # prose: the sentence, across line breaks
                row = re.split(r"[.:]\s|\n\n", text[: m.start()])[-1]
            if "Default study" in row:
                names = ["paper"]
            else:
                names = [n for n in re.findall(r"`([\w]+)`", row) if n in shipped]
            if not names:
                continue
            count = int(m.group(1).replace(",", ""))
            found.append((str(page.relative_to(DOCS)), names[-1], count))
    return found


def test_every_task_count_the_manual_quotes_is_the_study_s_plan():
    """A study's number of tasks quoted on any page is what ``stage=plan`` counts for it."""
    from omegaconf import OmegaConf

    from pipeline.study import planned
    from tests.helpers.runs import compose_config

    quotes = quoted_task_counts()
    assert {"suits52", "high_low", "mastermind", "ranks52", "paper"} <= {s for _, s, _ in quotes}
    counts: dict[str, int] = {}
    for page, study, n in quotes:
        if study not in counts:
            plain = OmegaConf.to_container(compose_config(f"study={study}").study, resolve=True)
            counts[study] = len(planned(plain))
        assert n == counts[study], (page, study, n, counts[study])


def test_the_manual_shows_the_changelog_from_its_one_file(built_site):
    """The manual's changelog page is CHANGELOG.md, included (a snippet, not a copy)."""
    assert (DOCS / "changelog.md").read_text().strip() == '--8<-- "CHANGELOG.md"'
    page = (
        (built_site / "changelog.html").read_text().replace("<wbr>", "")
    )  # breaks are no characters
    for family in ("card_guessing", "mastermind", "triples"):
        assert f"<code>{family}</code>" in page


def test_powers_of_ten_are_written_as_powers_outside_code(built_site):
    """Prose, headings and the contents write 10⁶ (superscript digits), never 10^6; code
    keeps what one types."""
    caret = []
    for page in sorted(Path(built_site).rglob("*.html")):
        text = re.sub(r"<(pre|code)\b.*?</\1>", "", page.read_text(), flags=re.S)
        caret += [f"{page.name}: {m}" for m in re.findall(r".{0,30}\b10\^-?\d.{0,10}", text)]
    assert not caret, caret[:5]
    assert "10⁶" in (Path(built_site) / "benchmarks.html").read_text()


def test_the_notebook_downloads_from_its_page_and_the_site_ships_no_build_code(built_site):
    site = Path(built_site)
    page = (site / "python.html").read_text()
    assert 'href="notebooks/study.ipynb"' in page
    notebook = json.loads((site / "notebooks" / "study.ipynb").read_text())
    assert notebook["cells"]  # the notebook itself, whole
    shipped = [p.relative_to(site) for p in site.rglob("*") if p.suffix == ".py"]
    shipped += [p.relative_to(site) for p in site.rglob("__pycache__")]
    assert not shipped, f"the hook's build code shipped in the site: {shipped}"
