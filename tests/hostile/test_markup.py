"""Text that is not the pipeline's own (a study's name and description, parameter values,
task errors, study folder names) is shown as text: summary.md carries no raw HTML, link or
image of it when rendered by Python-Markdown (what MkDocs uses), and index.html's links
reach the folder they name (percent-encoded, never a ``javascript:`` URL).

The same links in a real browser: tests/test_report_browser.py.
"""

from __future__ import annotations

import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import markdown
import pandas as pd
import pytest

from pipeline.outputs.index import write_index
from pipeline.outputs.summary import write_summary
from pipeline.storage import store
from pipeline.storage.study_folder import StudyFolder
from solvers.kit.summary_parts import markdown_code, markdown_table, markdown_text
from solvers.registry import solve
from tests.helpers.folders import copy_outputs
from tests.helpers.store_rows import write_rows

HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[click](javascript:alert(1))",
    "![image](https://example.invalid/x.png)",
    "<javascript:alert(1)>",
    "a `code` span and a | bar",
    "two\nlines <b>bold</b>",
    "back\\slash \\[not a link](x)",
    "r \\ t, a\\|b, a\\\\b",
    "&lt;script&gt; as entities",
    "```",
    "Gural, Simper & So (2019), AT&T;x, &#60;",
]
# what Python-Markdown makes of the summaries' own Markdown (headings, tables, plots)
SUMMARY_TAGS = {"h1", "h2", "h3", "h4", "p", "table", "thead", "tbody", "tr", "th", "td"}
SUMMARY_TAGS |= {"code", "img", "strong", "em", "br", "hr", "ul", "ol", "li"}


class Tags(HTMLParser):
    """Every tag, its attributes and the text of an HTML fragment."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def rendered(text: str) -> Tags:
    return Tags(markdown.markdown(text, extensions=["tables"]))


def assert_inert(page: Tags, allowed: set[str]) -> None:
    """No tag but ``allowed``, no event attribute, no link, no image but the summary's own."""
    for tag, attrs in page.tags:
        assert tag in allowed, (tag, attrs)
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        if tag == "img":
            assert attrs["src"].startswith("summary/"), attrs


@pytest.mark.parametrize("value", HOSTILE)
def test_markdown_text_and_code_show_a_value_as_its_characters(value):
    one_line = " ".join(value.split("\n"))
    for source, allowed in [
        (markdown_text(value), {"p"}),
        (f"# {markdown_code(value)}", {"h1", "code"}),
        (markdown_table(pd.DataFrame({"cell": [value]})), {"table", "thead", "tbody", "tr"}),
    ]:
        page = rendered(source)
        assert_inert(page, allowed | {"th", "td"})
        assert one_line in "".join(page.text), (source, page.text)


def test_an_ampersand_of_plain_text_reads_as_itself_in_the_markdown_source(paper_outputs):
    """summary.md is read as text too: "&" stays "&" unless it would start an entity."""
    assert markdown_text("Gural, Simper & So") == "Gural, Simper & So"
    assert markdown_text("&amp; &#60;") == "&amp;amp; &amp;#60;"
    summary = (paper_outputs / "paper" / "summary.md").read_text()
    assert "Gural, Simper & So" in summary and "&amp;" not in summary


@pytest.fixture
def hostile_study(paper_outputs, tmp_path) -> Path:
    """The default study's store, one failed task added whose error and deck hold HTML."""
    study_dir = copy_outputs(paper_outputs, tmp_path / "outputs") / "paper"
    (ok,) = solve({"family": "card_guessing", "deck": [2, 1], "strategy": "greedy"})
    bad = {**ok, "task_id": "f" * 20, "study": "paper", "status": "error", "seconds": 0.0}
    bad.update(deck="<img src=x onerror=alert('deck')>", error="<script>alert('error')</script>")
    bad.update(expected_score=None, expected_score_exact=None, score_pmf=None)
    meta = store.file_metadata(store.result_files(study_dir / "results")[0])
    write_rows(study_dir / "results", [bad], meta)
    return study_dir


def test_summary_md_carries_no_html_from_a_description_a_parameter_or_an_error(hostile_study):
    study = {
        "name": "paper`<b onmouseover=alert('name')>x</b>",
        "description": "<script>alert('description')</script> [click](javascript:alert(3)) "
        "<img src=x onerror=alert(4)>",
    }
    text = write_summary(StudyFolder(hostile_study), study).read_text()
    page = rendered(text)
    assert_inert(page, SUMMARY_TAGS)
    shown = " ".join(page.text)
    for value in [
        "<script>alert('description')</script>",
        "[click](javascript:alert(3))",
        "<img src=x onerror=alert('deck')>",
        "<script>alert('error')</script>",
        "paper`<b onmouseover=alert('name')>x</b>",
    ]:
        assert value in shown, value


# folder names a study can have (any but "/" and NUL), each a dead or hostile link when
# pasted into href as it is
FOLDER_NAMES = [
    "javascript:alert(1)",
    "a#b",
    "100%",
    "back\\slash",
    'it\'s "quoted"',
    "q?x=1",
    "sp ace",
    "<img src=x onerror=alert(1)>",
]


@pytest.fixture
def hostile_outputs(hostile_study) -> Path:
    """An outputs folder of the default study copied under every name of FOLDER_NAMES."""
    out = hostile_study.parent
    for name in FOLDER_NAMES:
        shutil.copytree(hostile_study, out / name)
    write_index(out)
    return out


def test_index_links_reach_the_folder_they_name_and_are_never_a_scheme(hostile_outputs):
    page = Tags((hostile_outputs / "index.html").read_text())
    hrefs = [attrs["href"] for tag, attrs in page.tags if tag == "a" and "href" in attrs]
    assert len(hrefs) == 2 * (len(FOLDER_NAMES) + 1)  # report and summary.md of each
    reached = set()
    for href in hrefs:
        parts = urlsplit(href)
        assert (parts.scheme, parts.netloc, parts.query, parts.fragment) == ("", "", "", ""), href
        assert href.startswith("./"), href
        target = hostile_outputs / unquote(parts.path)
        assert target.is_file(), (href, target)
        reached.add(target.parent.name)
    assert reached == {"paper", *FOLDER_NAMES}
