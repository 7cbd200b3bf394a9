"""How guesslab is cited: CITATION.cff at the root, and the changelog that says which
version of each family a stored value comes from (shown in the manual)."""

from __future__ import annotations

import datetime
import re
import tomllib

import yaml

from solvers import families, get_family
from tests.helpers.repository import ROOT


def cff() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text())


def package_version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


RELEASE = re.compile(r"^## guesslab (\S+) \((\d{4}-\d{2}-\d{2})\)$", re.M)


def releases() -> list[tuple[str, str, str]]:
    """(version, date, the section's text) of each release in CHANGELOG.md, newest first."""
    text = (ROOT / "CHANGELOG.md").read_text()
    found = list(RELEASE.finditer(text))
    ends = [m.start() for m in found[1:]] + [len(text)]
    return [(m[1], m[2], text[m.end() : e]) for m, e in zip(found, ends, strict=True)]


def test_the_citation_file_is_valid_cff_with_the_package_s_release():
    """CITATION.cff holds the keys CFF 1.2.0 requires, the version pyproject declares and the
    version and date of the changelog's newest release; it gives an address only where the
    project declares one (pyproject's [project.urls]), never one of its own."""
    citation = cff()
    assert citation["cff-version"] == "1.2.0"
    assert {"message", "title", "authors", "version", "date-released"} <= set(citation)
    assert all("name" in a or "family-names" in a for a in citation["authors"])
    newest, date, _ = releases()[0]
    assert citation["version"] == package_version() == newest
    assert str(citation["date-released"]) == date
    datetime.date.fromisoformat(date)
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"].get("urls", {})
    addresses = {k: v for k, v in citation.items() if k in ("url", "repository-code", "doi")}
    assert set(addresses.values()) <= set(urls.values())


def test_the_changelog_gives_the_package_s_and_every_family_s_current_version():
    """The changelog's releases are dated, newest first (two may share a day; their versions
    still descend), and the newest lists every family of the package with the version its
    task ids and results files carry; each version after the first has a section saying
    what changed in its rows."""
    listed_releases = releases()
    dates = [d for _, d, _ in listed_releases]
    versions = [tuple(int(p) for p in v.split(".")) for v, _, _ in listed_releases]
    assert dates == sorted(dates, reverse=True)
    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions)
    newest = listed_releases[0][2]
    listed = dict(re.findall(r"^\| `(\w+)` \| (\S+) \|$", newest, flags=re.M))
    builtin = [
        f for f in families() if not f.startswith("test_") and "+" not in get_family(f).version
    ]
    assert listed == {f: get_family(f).version for f in builtin}
    text = (ROOT / "CHANGELOG.md").read_text()
    for family in builtin:
        for version in range(2, int(get_family(family).version) + 1):
            assert re.search(rf"^### `{family}` {version}\b", text, re.M), (family, version)


def test_the_manual_s_bibtex_entry_is_the_citation_file_s():
    """The BibTeX entry of the manual's first page cites the release CITATION.cff names: its
    title, version and year."""
    page = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    (entry,) = re.findall(r"```bibtex\n(@software\{.*?\n\})\n```", page, re.S)
    fields = dict(re.findall(r"^\s+(\w+)\s*=\s*\{(.*)\},?$", entry, re.M))
    citation = cff()
    assert fields["title"].strip("{}") == citation["title"]
    assert fields["version"] == citation["version"]
    assert fields["year"] == str(citation["date-released"])[:4]
    assert "url" not in fields  # the project declares no address


def bibliography_entries() -> dict[str, str]:
    """The manual's bibliography: each entry's bold name -> the rest of its text."""
    bib = (ROOT / "docs" / "bibliography.md").read_text(encoding="utf-8")
    return {
        m.group(1): m.group(2)
        for m in re.finditer(r"^- \*\*(.+?)\*\*(.*?)(?=^- \*\*|^## |\Z)", bib, re.M | re.S)
    }


LINK = re.compile(r"<https?://[^>]+>|\]\(https?://[^)]+\)")
NO_LINK = ("no DOI or stable URL known", "DOI is not confirmed here")


def test_every_bibliography_entry_has_an_address_or_says_it_has_none():
    """Each work in the bibliography gives a DOI or stable web address, or says that none is
    known (or that its DOI is not confirmed here, to be found by its journal reference)."""
    entries = bibliography_entries()
    assert len(entries) >= 15
    for name, text in entries.items():
        assert LINK.search(text) or any(words in " ".join(text.split()) for words in NO_LINK), name


def test_the_bibliography_links_each_source_document_itself():
    """The five source documents each link to the document (Norvig's notebook, not his
    repository; Holmes's page, not the question it answers; Hofer & Nelson's note), and each
    journal article with a known DOI links it at doi.org."""
    entries = bibliography_entries()

    def links(source: str) -> list[str]:
        text = next(text for name, text in entries.items() if name.startswith(source))
        return [m.strip("<>]()") for m in LINK.findall(text)]

    for source in (
        "Gural",
        "Norvig",
        "Hofer",
        "Holmes",
        "Juraszek",
        "Ville",
        "Diaconis, Graham, He",
    ):
        assert links(source), source
    assert any(u.endswith("/ipynb/flipping.ipynb") for u in links("Norvig"))
    assert any("logical.ai/triples/" in u for u in links("Holmes"))
    assert any(u.endswith("/report/code-jar-mm-report.pdf") for u in links("Hofer"))
    bib = (ROOT / "docs" / "bibliography.md").read_text(encoding="utf-8")
    for doi in ("10.1111/cogs.12613", "10.1214/aos/1176345329", "10.1109/18.272494"):
        assert f"doi:[{doi}](https://doi.org/{doi})" in bib
