"""The built pages' HTML made to read at any width (the MkDocs hook's ``on_page_content``).

- A name in a table's code (``test_ctrl_c_while_held``, ``solvers/kit/words.py``) may break
  after an underscore, a slash or a dot that precedes a letter, so a table of long names wraps
  inside the text column instead of running past it; the break never falls inside a word,
  and copying the name gives it whole (``<wbr>`` is no character).
- ``10^6`` in prose is a power, written with superscript digits (10⁶), in headings and the
  table of contents too (code keeps what one types); this one works on the page's Markdown.
- A figure links to its full-size image, and sits in a box of its own (docs/stylesheets/
  extra.css keeps it wide enough to read on a phone, scrolling sideways inside the box).

Plain regular expressions over the page's HTML suffice: the pages are Python-Markdown's
output, whose tables, code spans and images have one known shape.
"""

from __future__ import annotations

import re

TABLE = re.compile(r"<table>.*?</table>", re.S)
CODE = re.compile(r"(<code>)(.*?)(</code>)", re.S)
# after "_" or "/" before a letter or digit, after "." before a letter (not inside 0.13)
BREAK_AFTER = re.compile(r"(?<=[_/])(?=[A-Za-z0-9])|(?<=[A-Za-z_)]\.)(?=[A-Za-z_])")
POWER = re.compile(r"\b10\^(-?\d+)\b")
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
# fenced code blocks, code spans and HTML comments: what the power rule leaves alone
MARKDOWN_CODE = re.compile(r"(^```.*?^```|`[^`\n]*`|<!--.*?-->)", re.S | re.M)
IMAGE = re.compile(r'<img alt="[^"]*" src="([^"]+\.png)" />')
FIGURE = re.compile(r'<p>(?:<a href="[^"]+">)?(<img alt="[^"]*" src="[^"]+\.png" />)(?:</a>)?</p>')


def breakable_names(html: str) -> str:
    """``html`` with a ``<wbr>`` at each place a name in a table's code may break."""

    def in_code(match: re.Match[str]) -> str:
        start, text, end = match.groups()
        parts = re.split(r"(&[#A-Za-z0-9]+;)", text)  # entities stay whole
        return start + "".join(p if p.startswith("&") else _breaks(p) for p in parts) + end

    return TABLE.sub(lambda t: CODE.sub(in_code, t.group(0)), html)


def _breaks(text: str) -> str:
    return BREAK_AFTER.sub("<wbr>", text)


def powers(markdown: str) -> str:
    """``markdown`` with ``10^N`` in prose written as a power, 10 and superscript digits
    (code blocks, code spans and comments left alone)."""
    parts = MARKDOWN_CODE.split(markdown)
    return "".join(
        part
        if MARKDOWN_CODE.fullmatch(part)
        else POWER.sub(lambda m: "10" + m.group(1).translate(SUPERSCRIPT), part)
        for part in parts
    )


def linked_figures(html: str) -> str:
    """``html`` with each figure (a paragraph holding one PNG image) in a
    ``<div class="figure-box">`` that links to the full-size image."""

    def boxed(match: re.Match[str]) -> str:
        image = match.group(1)
        source = IMAGE.match(image).group(1)
        return f'<div class="figure-box"><a href="{source}">{image}</a></div>'

    return FIGURE.sub(boxed, html)


def readable(html: str) -> str:
    """``html`` with the table names breakable and the figures boxed."""
    return linked_figures(breakable_names(html))
