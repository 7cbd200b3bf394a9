"""MkDocs hook: the gallery of the shipped studies, generated from conf/study/.

``<!-- gallery -->`` on a page becomes one entry per study file of ``conf/study/``, grouped
by family: the study's figure (the first of scripts/manual_figures.py's figures that the
study draws, linked to the page that shows it), its headline (the ``description`` of its
study file, which its summary and report open with; and each value of
docs/data/results.yaml whose command runs the study), and the command that runs it.  A study
added to conf/study/ appears without an edit; a family with no page here fails the build.
Imports neither ``pipeline`` nor ``solvers``: the study files are YAML, the figures a list.
"""

from __future__ import annotations

import html
import importlib.util
import re
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `mkdocs build` from a checkout that is not installed
    sys.path.insert(0, str(ROOT))

from docs.quoted import data_file, shown  # noqa: E402

DOCS = ROOT / "docs"
MARKER = re.compile(r"<!--\s*gallery\s*-->")
# each family's page, in the order the manual's home page lists the games
FAMILY_PAGES = {
    "card_guessing": ("Card guessing", "games/card_guessing.md"),
    "no_repeat": (
        "Card guessing: the no-repeat conjecture",
        "games/card_guessing.md#the-no-repeat-conjecture-no_repeat",
    ),
    "high_low": ("Higher or lower", "games/high_low.md"),
    "mastermind": ("Code-jar Mastermind", "games/mastermind.md"),
    "triples": ("Three of a kind", "games/triples.md"),
    "hand_guessing": ("Hand guessing", "games/hand_guessing.md"),
}
STUDY_IN_COMMAND = re.compile(r"\bstudy=(\w+)")


class GalleryError(ValueError):
    """A shipped study the gallery cannot place (its family has no page here)."""


@cache
def manual_figures() -> ModuleType:
    """scripts/manual_figures.py, imported from its file (it is a script, not a package)."""
    path = ROOT / "scripts" / "manual_figures.py"
    spec = importlib.util.spec_from_file_location("guesslab_manual_figures", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up by name
    spec.loader.exec_module(module)
    return module


def studies() -> list[dict[str, Any]]:
    """Every shipped study file, by family (FAMILY_PAGES' order), the default study first."""
    found = [
        yaml.safe_load(p.read_text(encoding="utf-8"))
        for p in sorted((ROOT / "conf" / "study").glob("*.yaml"))
    ]
    unknown = sorted({s["family"] for s in found} - set(FAMILY_PAGES))
    if unknown:
        raise GalleryError(f"docs/gallery.py: no page for the family {unknown[0]!r}")
    order = list(FAMILY_PAGES)
    return sorted(found, key=lambda s: (order.index(s["family"]), s["name"] != "paper"))


def figure_of(study: str) -> tuple[str, str] | None:
    """The study's figure (its file under docs/img/) and the page that shows it, or None."""
    for fig in manual_figures().FIGURES:
        if fig.study == study:
            image = f"img/{fig.name}.png"
            for page in sorted(DOCS.rglob("*.md")):
                if f"{image})" in page.read_text(encoding="utf-8"):
                    return image, str(page.relative_to(DOCS))
            raise GalleryError(f"docs/img/{fig.name}.png (study {study}) is on no page")
    return None


def results_of(study: str) -> list[str]:
    """Each result of docs/data/results.yaml whose command runs ``study``, as a line."""
    out = []
    for r in data_file("results").values():
        match = STUDY_IN_COMMAND.search(r["command"])
        if match and match.group(1) == study:
            claim = "new" if r["claim"] == "new" else "as published"
            link = f"{claim}: [Results](results.md#{anchor(r)})"
            out.append(f"**{shown(r)}**: {r['title']} ({link})")
    return out


def anchor(result: dict[str, Any]) -> str:
    """The results page's anchor of a result's heading (the toc extension's slug)."""
    text = re.sub(r"[^\w\s-]", "", result["title"]).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def entry(study: dict[str, Any]) -> str:
    """One study's gallery entry (Markdown)."""
    name = study["name"]
    lines = [f"### `{name}`", ""]
    figure = figure_of(name)
    if figure is not None:
        image, page = figure
        link = f"[![the study {name}'s figure]({image})]({page})"
        lines += ['<div class="gallery-figure" markdown>', "", link, "", "</div>", ""]
    lines += [html.escape(" ".join(str(study.get("description", "")).split())), ""]
    lines += [f"- {line}" for line in results_of(name)]
    lines += ["", "```bash", f"python -m pipeline study={name}", "```", ""]
    return "\n".join(lines)


def gallery_markdown() -> str:
    """The gallery: a section per family, an entry per study."""
    parts = []
    family = None
    for study in studies():
        if study["family"] != family:
            family = study["family"]
            title, page = FAMILY_PAGES[family]
            parts += [f"## {title}", "", f"The game's page: [{title}]({page}).", ""]
        parts.append(entry(study))
    return "\n".join(parts)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """The page's Markdown with ``<!-- gallery -->`` replaced by the gallery (MkDocs hook)."""
    return MARKER.sub(lambda _: gallery_markdown(), markdown)
