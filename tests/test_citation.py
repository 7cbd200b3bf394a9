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
