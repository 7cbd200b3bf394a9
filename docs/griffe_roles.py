"""Griffe extension for the API reference (docs/api.md, mkdocstrings): Sphinx's roles in
docstrings as Markdown, and an attribute's comments as its docstring.

The docstrings write a reference to code as reStructuredText does, ``:func:`solvers.solve``` or
``:class:`~pipeline.errors.StudyError```, and literals in double backquotes; Markdown has
no roles and would show ``:func:`` as text.  :class:`SphinxRoles` rewrites each role to the
code span of its target (``~`` keeps the last name only, as Sphinx shows it), so the pages
read as the docstrings mean.  A span, not a link: most targets are not on the reference
page, and a link to nothing fails the strict build.

A dataclass field says what it is in comments (``version: str  # bump when results
change``, or comment lines above it), which Python keeps nowhere; an attribute with no
docstring takes those comments as its docstring, so the reference shows them.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

COMMENT = re.compile(r"^\s*#\s?(.*)$")
INLINE = re.compile(r"\s#\s?(.*)$")
ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|data|exc|obj|const):`(~?)([^`]+)`")


def markdown_of(text: str) -> str:
    """``text`` with every Sphinx role written as a Markdown code span."""

    def span(match: re.Match[str]) -> str:
        short, target = match.groups()
        return f"`{target.rsplit('.', 1)[-1] if short else target}`"

    return ROLE.sub(span, text)


class SphinxRoles(griffe.Extension):
    """Rewrites the roles of every docstring griffe loads (see the module's docstring)."""

    def on_object(self, *, obj: griffe.Object, **_: Any) -> None:
        if obj.docstring is None and obj.is_attribute:
            text = comments_of(obj)
            if text:
                obj.docstring = griffe.Docstring(text, parent=obj)
        if obj.docstring is not None:
            obj.docstring.value = markdown_of(obj.docstring.value)


def comments_of(obj: griffe.Object) -> str:
    """The comment lines right above an attribute's line and the comment at its end."""
    lines = obj.lines_collection[obj.filepath] if obj.lineno else None
    if not lines:
        return ""
    above: list[str] = []
    at = obj.lineno - 2  # the line above, 0-based
    while at >= 0 and (match := COMMENT.match(lines[at])):
        above.insert(0, match.group(1))
        at -= 1
    inline = INLINE.search(lines[obj.lineno - 1])
    return " ".join([*above, *([inline.group(1)] if inline else [])]).strip()
