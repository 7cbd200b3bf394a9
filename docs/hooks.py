"""MkDocs hook: each game page's parameter table, generated from the solver registry.

A page marks the place of a family's parameter table with ``<!-- params: FAMILY -->``, of its
strategies and description with ``<!-- strategies: FAMILY -->`` and of its result columns with
``<!-- columns: FAMILY -->``; :func:`on_page_markdown` replaces the markers
with Markdown built from :mod:`solvers` at build time, so the manual cannot drift from the code.
This module imports ``solvers`` only (never ``pipeline``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `mkdocs build` from a checkout that is not installed
    sys.path.insert(0, str(ROOT))

import solvers  # noqa: E402, F401  (importing it registers every family)
from docs.notebook_cells import expand_notebooks  # noqa: E402
from docs.page_layout import powers, readable  # noqa: E402  (pages readable at any width)
from docs.quoted import expand_quotes  # noqa: E402  (the numbers pages quote from docs/data)
from solvers.kit.family_words import ParamWords, family_doc, param_words  # noqa: E402
from solvers.registry import Family, get_family  # noqa: E402

MARKER = re.compile(r"<!--\s*(params|strategies|columns):\s*([A-Za-z_][A-Za-z0-9_]*)\s*-->")


def on_page_markdown(markdown: str, page: Any = None, **_: Any) -> str:
    """The page's Markdown with every ``params``/``strategies`` marker and every quoted value
    (:mod:`docs.quoted`) replaced (MkDocs hook)."""
    name = getattr(getattr(page, "file", None), "src_uri", "")
    return powers(expand_quotes(expand_notebooks(expand_markers(markdown)), name))


def on_page_content(html: str, **_: Any) -> str:
    """The page's HTML made to read at any width (:mod:`docs.page_layout`; MkDocs hook)."""
    return readable(html)


def expand_markers(markdown: str) -> str:
    """``markdown`` with each marker replaced by the family's table; unknown family: an error."""

    def replace(match: re.Match[str]) -> str:
        kind, name = match.groups()
        fam = get_family(name)  # a TaskError naming the valid families fails the build
        builders = {"params": params_table, "strategies": strategies_text, "columns": columns_table}
        return builders[kind](fam)

    return MARKER.sub(replace, markdown)


def params_table(fam: Family) -> str:
    """``fam``'s parameters (default, meaning, accepted values, strategies, dtype) as a Markdown
    table inside ``<div class="param-table">``, which docs/stylesheets/extra.css lays out; the
    words are :func:`solvers.kit.family_words.param_words`'."""
    head = [
        "| parameter | default | meaning | accepted values | strategies | dtype |",
        "|---|---|---|---|---|---|",
    ]
    rows = [
        f"| `{w.name}` | {w.default} | {w.meaning} | {w.accepts} | {strategies_of(w, fam)} "
        f"| `{w.dtype}` |"
        for w in param_words(fam)
    ]
    table = "\n".join(head + rows)
    return f'<div class="param-table" markdown>\n\n{table}\n\n</div>\n'


def columns_table(fam: Family) -> str:
    """A Markdown table of ``fam``'s declared result columns, their dtypes and what each
    holds (:attr:`Solver.column_docs`)."""
    rows = [
        f"| `{name}` | `{dtype}` | {fam.solver.column_docs.get(name, '')} |"
        for name, dtype in fam.solver.columns.items()
    ]
    return "\n".join(["| result column | dtype | meaning |", "|---|---|---|", *rows]) + "\n"


def strategies_text(fam: Family) -> str:
    """The family's doc string and its strategies (the default marked), as Markdown."""
    doc = family_doc(fam)
    if fam.rules.strategies:
        names = ", ".join(
            f"`{s}`" + (" (default)" if s == fam.rules.default_strategy else "")
            for s in fam.rules.strategies
        )
        listing = f"**Strategies** (`strategy`): {names}."
    else:
        listing = "This family has no `strategy` parameter."
    quoted = "\n".join("> " + line if line else ">" for line in doc.splitlines())
    source = f"`solvers.get_family({fam.name!r}).doc`"
    return f"{listing}\n\nThe family's own description ({source}):\n\n{quoted}\n"


def strategies_of(p: ParamWords, fam: Family) -> str:
    """Which strategies a parameter applies to, as table text."""
    if p.strategies is None:
        return "all" if fam.rules.strategies else "-"
    return ", ".join(
        "[your own](../own-strategy.md)" if s == "own" else f"`{s}`" for s in p.strategies
    )
