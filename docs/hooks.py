"""MkDocs hook: each game page's parameter table, generated from the solver registry.

A page marks the place of a family's parameter table with ``<!-- params: FAMILY -->``, of its
strategies and description with ``<!-- strategies: FAMILY -->`` and of its result columns with
``<!-- columns: FAMILY -->``; :func:`on_page_markdown` replaces the markers
with Markdown built from :mod:`solvers` at build time, so the manual cannot drift from the code.
This module imports ``solvers`` only (never ``pipeline``).
"""

from __future__ import annotations

import inspect
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `mkdocs build` from a checkout that is not installed
    sys.path.insert(0, str(ROOT))

import solvers  # noqa: E402, F401  (importing it registers every family)
from docs.quoted import expand_quotes  # noqa: E402  (the numbers pages quote from docs/data)
from solvers.params import REQUIRED, Param, check_markdown  # noqa: E402
from solvers.registry import Family, get_family  # noqa: E402

KNOB = "an execution knob: not in the task id"
MARKER = re.compile(r"<!--\s*(params|strategies|columns):\s*([A-Za-z_][A-Za-z0-9_]*)\s*-->")


def on_page_markdown(markdown: str, page: Any = None, **_: Any) -> str:
    """The page's Markdown with every ``params``/``strategies`` marker and every quoted value
    (:mod:`docs.quoted`) replaced (MkDocs hook)."""
    name = getattr(getattr(page, "file", None), "src_uri", "")
    return expand_quotes(expand_markers(markdown), name)


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
    table inside ``<div class="param-table">``, which docs/stylesheets/extra.css lays out."""
    head = [
        "| parameter | default | meaning | accepted values | strategies | dtype |",
        "|---|---|---|---|---|---|",
    ]
    rows = [
        "| "
        + " | ".join(
            [
                f"`{p.name}`",
                default_text(p),
                cell(p.doc) + ("" if p.identity else f" ({KNOB})"),
                cell(check_text(p)),
                strategies_of(p, fam),
                f"`{p.dtype}`",
            ]
        )
        + " |"
        for p in fam.params
    ]
    table = "\n".join(head + rows)
    return f'<div class="param-table" markdown>\n\n{table}\n\n</div>\n'


def columns_table(fam: Family) -> str:
    """A Markdown table of ``fam``'s declared result columns and their dtypes."""
    rows = [f"| `{name}` | `{dtype}` |" for name, dtype in fam.columns.items()]
    return "\n".join(["| result column | dtype |", "|---|---|", *rows]) + "\n"


def strategies_text(fam: Family) -> str:
    """The family's doc string and its strategies (the default marked), as Markdown."""
    doc = plain(inspect.cleandoc(fam.doc)) if fam.doc else ""
    if fam.strategies:
        names = ", ".join(
            f"`{s}`" + (" (default)" if s == fam.default_strategy else "") for s in fam.strategies
        )
        listing = f"**Strategies** (`strategy`): {names}."
    else:
        listing = "This family has no `strategy` parameter."
    quoted = "\n".join("> " + line if line else ">" for line in doc.splitlines())
    source = f"`solvers.get_family({fam.name!r}).doc`"
    return f"{listing}\n\nThe family's own description ({source}):\n\n{quoted}\n"


def default_text(p: Param) -> str:
    """A parameter's default as table text: required, absent, or the value as a study file
    writes it, in code (``lose``, ``0.15``, ``[3, 3, 3]``)."""
    if p.default is REQUIRED:
        return "required"
    if p.default is None:
        return "absent"
    if isinstance(p.default, bool):
        return f"`{str(p.default).lower()}`"
    return f"`{p.default}`"


def strategies_of(p: Param, fam: Family) -> str:
    """Which strategies a parameter applies to, as table text."""
    if p.strategies is None:
        return "all" if fam.strategies else "-"
    return ", ".join(
        "[your own](../own-strategy.md)" if s == "own" else f"`{s}`" for s in p.strategies
    )


def check_text(p: Param) -> str:
    """What the parameter accepts, in the words its checker gives (see ``solvers.params.Check``).

    A checker that gives none (a family registered from elsewhere with a plain function) is
    described by the first line of its doc string, or not at all.
    """
    words = check_markdown(p.check)
    if words is not None:
        return words
    doc = inspect.getdoc(p.check)
    return plain(doc.splitlines()[0]) if doc else "-"


def plain(text: str) -> str:
    """reStructuredText inline code (two backticks) and roles (``:mod:`` before a name in
    backticks) as Markdown code spans."""
    return re.sub(r":[a-z]+:`", "`", text.replace("``", "`"))


def cell(text: str) -> str:
    """``text`` fit for one Markdown table cell (one line, pipes escaped)."""
    return " ".join(textwrap.dedent(text).split()).replace("|", "\\|") or "-"
