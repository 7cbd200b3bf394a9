"""How guesslab is cited: CITATION.cff at the root, and the changelog that says which
version of each family a stored value comes from (shown in the manual)."""

from __future__ import annotations

import datetime
import re
import tomllib

import yaml

from solvers import families, get_family
from tests.helpers.repository import ROOT


def test_the_citation_file_is_valid_cff_with_the_package_s_version():
    """CITATION.cff holds the keys CFF 1.2.0 requires, and the version pyproject declares."""
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0"
    assert {"message", "title", "authors", "version", "date-released"} <= set(cff)
    assert all("name" in a or "family-names" in a for a in cff["authors"])
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert cff["version"] == version
    datetime.date.fromisoformat(str(cff["date-released"]))


def test_the_changelog_gives_the_package_s_and_every_family_s_current_version():
    """CHANGELOG.md has a section for the package's version and lists every family of the
    package with the version its task ids and results files carry."""
    text = (ROOT / "CHANGELOG.md").read_text()
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert f"## guesslab {version}" in text
    listed = dict(re.findall(r"^\| `(\w+)` \| (\S+) \|$", text, flags=re.M))
    builtin = [
        f for f in families() if not f.startswith("test_") and "+" not in get_family(f).version
    ]
    assert listed == {f: get_family(f).version for f in builtin}


def test_the_bibliography_links_each_work_that_has_an_address():
    """The bibliography gives the address of each source document published on the web and
    the DOI (a doi.org link) of each journal article that has one."""
    bib = (ROOT / "docs" / "bibliography.md").read_text(encoding="utf-8")
    entries = {
        m.group(1): m.group(2)
        for m in re.finditer(r"^- \*\*(.+?)\*\*(.*?)(?=^- \*\*|^## |\Z)", bib, re.M | re.S)
    }
    for source in ("Gural", "Norvig", "Holmes", "Juraszek", "Ville", "Diaconis, Graham, He"):
        entry = next(text for name, text in entries.items() if name.startswith(source))
        assert re.search(r"<https://[^>]+>|\]\(https://[^)]+\)", entry), source
    for doi in ("10.1111/cogs.12613", "10.1214/aos/1176345329", "10.1109/18.272494"):
        assert f"doi:[{doi}](https://doi.org/{doi})" in bib
