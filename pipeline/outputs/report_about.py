"""The report's "About and how to cite" paragraph: each game's page of the manual and the
citation of guesslab, with the code and solver versions that computed the study's rows.

The report opens from disk anywhere, with no server: the manual's page is named by its path
in the guesslab repository (``docs/games/<page>.md``; ``games/<page>.html`` in the manual
``mkdocs build`` writes), linked relatively where the repository's docs/ is on this machine.
The citation is CITATION.cff's where the repository is here, else the installed package's
name and version.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import yaml

from pipeline.outputs.page_text import esc

if TYPE_CHECKING:
    from pipeline.storage.study_folder import StudyFolder

ROOT = Path(__file__).resolve().parents[2]  # the repository, for an install from it
DOCS = ROOT / "docs"


@functools.cache
def manual_pages() -> dict[str, Path]:
    """family -> the manual page that holds its parameter table (``<!-- params: NAME -->``,
    docs/hooks.py), from the repository's docs/ ({} where it is not on this machine)."""
    found: dict[str, Path] = {}
    marker = re.compile(r"<!--\s*params:\s*([A-Za-z_][A-Za-z0-9_]*)\s*-->")
    for page in sorted(DOCS.rglob("*.md")) if DOCS.is_dir() else []:
        for name in marker.findall(page.read_text(encoding="utf-8", errors="replace")):
            found.setdefault(name, page)
    return found


@functools.cache
def citation() -> str:
    """How to cite guesslab: authors (year), title, version, from CITATION.cff; the package's
    name and installed version where the file is not here."""
    try:
        cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
        authors = ", ".join(a.get("name") or a.get("family-names", "") for a in cff["authors"])
        year = str(cff.get("date-released", ""))[:4]
        return f"{authors} ({year}). {cff['title']}. Version {cff['version']}."
    except (OSError, KeyError, TypeError, AttributeError, yaml.YAMLError):
        try:
            version = importlib.metadata.version("guesslab")
        except importlib.metadata.PackageNotFoundError:
            version = "unknown"
        return f"guesslab, version {version}."


def about_html(folder: StudyFolder, families: Iterable[str], batches: pd.DataFrame) -> str:
    """The paragraph: per family, its manual page (linked relative to the study ``folder`` where
    the repository's docs/ is here) and the solver versions of its rows; how to cite."""
    pages = manual_pages()
    games = []
    for family in families:
        page = pages.get(family)
        if page is None:
            games.append(f"<code>{esc(family)}</code>: the manual's page of this game")
            continue
        where = page.relative_to(ROOT).as_posix()
        built = page.relative_to(DOCS).with_suffix(".html").as_posix()
        try:
            link = Path(os.path.relpath(page, folder.path.resolve())).as_posix()
        except ValueError:  # another drive (Windows): no relative path leads there
            link = page.as_uri()
        games.append(
            f"<code>{esc(family)}</code>: <a href='{esc(link)}'>{esc(where)}</a> in the guesslab "
            f"repository (<code>{esc(built)}</code> of the built manual)"
        )
    versions = version_words(batches)
    where = (
        f"<p class='cite'>The game, its rules, parameters and sources: {'; '.join(games)}.</p>"
        if games
        else ""
    )
    return (
        "<h2 id='about'>About and how to cite</h2>"
        + where
        + f"<p class='cite'>To cite these results: <q>{esc(citation())}</q>{esc(versions)} Cite "
        "the source of the game too (the manual's bibliography lists them).</p>"
    )


def version_words(batches: pd.DataFrame) -> str:
    """ " Computed by code version X; solver version of F: N." from the batch table ("" for
    none): the versions a citation of these values names."""
    if not len(batches):
        return ""
    codes = sorted(set(map(str, batches["code_version"].dropna())))
    solvers = [
        f"{family} {', '.join(sorted(set(map(str, part['solver_version'].dropna()))))}"
        for family, part in batches.groupby("family", sort=True)
    ]
    return f" Computed by code version {', '.join(codes)}; solver version: {'; '.join(solvers)}."
