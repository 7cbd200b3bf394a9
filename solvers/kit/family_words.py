"""A family's parameters and strategies in words, from the registry: what the manual's
parameter tables print (docs/hooks.py, as Markdown) and ``python -m pipeline.describe`` (as
plain text), so the two say the same.

Each phrase is Markdown (literal values in code spans); :func:`solvers.params.plain_words`
unmarks it for a terminal.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from dataclasses import dataclass

from solvers.params import REQUIRED, Param, check_markdown
from solvers.registry import Family

KNOB = "an execution knob: not in the task id"


@dataclass(frozen=True)
class ParamWords:
    """One parameter as the manual's table gives it (each field Markdown, one line)."""

    name: str
    default: str  # "required", "absent", or the value in code: `lose`, `[3, 3, 3]`
    meaning: str  # the parameter's doc, with KNOB for an execution knob
    accepts: str  # what its checker accepts, in its own words
    strategies: tuple[str, ...] | None  # None: every strategy; "own": strategies of one's own
    dtype: str


def param_words(fam: Family) -> list[ParamWords]:
    """Every parameter of ``fam``, in order, in words."""
    return [
        ParamWords(
            p.name,
            default_text(p),
            cell(p.doc) + ("" if p.identity else f" ({KNOB})"),
            cell(check_text(p)),
            p.strategies,
            p.dtype,
        )
        for p in fam.rules.params
    ]


def family_doc(fam: Family) -> str:
    """The family's own description (its ``doc``), as Markdown ("" when it has none)."""
    return plain(inspect.cleandoc(fam.doc)) if fam.doc else ""


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
