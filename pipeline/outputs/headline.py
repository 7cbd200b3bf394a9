"""The study's headline on the terminal: the first table of ``summary.md`` (with the heading
above it), as the run's last lines, fitted to the terminal's width.

The table is read back from the Markdown the summary wrote (every family writes its own, and
this is the one form they share).  A table wider than the terminal is shown turned (its rows
as columns) when that fits, else with the columns that fit, the others named; a long table
shows its first :data:`MOST_ROWS` rows.  Every cell is shown as text: a character a terminal
would act on is shown as its escape.
"""

from __future__ import annotations

import html
import re
import shutil
import textwrap

from solvers.kit.words import counted

FAILED_TASKS = "Failed tasks"  # the heading of a summary's table of failed tasks
MOST_ROWS = 12  # rows of the headline table a terminal shows; summary.md has them all
FALLBACK_WIDTH = 80  # not a terminal (a pipe, a file, a notebook): this many columns
SEPARATOR = re.compile(r"^\|?(\s*:?-+:?\s*\|)+\s*(:?-+:?\s*)?$")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")  # Markdown's backslash escapes (markdown_text)
NUMBER = re.compile(r"^[-+]?(\d[\d,]*\.?\d*(e[-+]?\d+)?|\.\d+|\d+/\d+|nan|inf)%?$", re.I)


def terminal_width() -> int:
    """Columns of the terminal (``COLUMNS`` if set), else FALLBACK_WIDTH."""
    return shutil.get_terminal_size((FALLBACK_WIDTH, 24)).columns


def headline_lines(markdown: str, width: int | None = None) -> list[str]:
    """The lines that show the first table of ``markdown`` (a summary) in ``width`` columns
    (default: the terminal's): the heading above the table, the table, and a line for what
    it leaves out; none when the summary has no table."""
    found = first_table(markdown)
    if found is None:
        return []
    title, header, rows = found
    width = width or terminal_width()
    lines = [shown_text(title)] if title else []
    more = len(rows) - MOST_ROWS
    table, left_out = fitted(header, rows[:MOST_ROWS], width)
    lines += table
    said = []
    if more > 0:
        said.append(counted(more, "more row"))
    if left_out:
        said.append(f"the {'columns' if len(left_out) > 1 else 'column'} {', '.join(left_out)}")
    lines = [line if len(line) <= width else line[: max(width - 3, 1)] + "..." for line in lines]
    if said:
        lines += textwrap.wrap(f"({' and '.join(said)} in summary.md)", max(width, 20))
    return lines


def first_table(markdown: str) -> tuple[str, list[str], list[list[str]]] | None:
    """(the heading above it, its header, its rows) of the first Markdown table of
    ``markdown`` that is not of failed tasks, cells as the text they show; None when it
    has none."""
    lines = markdown.splitlines()
    title = ""
    for i, line in enumerate(lines):
        if heading := HEADING.match(line):
            title = heading.group(1)
        at_table = line.lstrip().startswith("|") and i + 1 < len(lines)
        if at_table and SEPARATOR.match(lines[i + 1].strip()):
            if title == FAILED_TASKS:  # no answer: the terminal has its own lines for these
                continue
            header = cells(line)
            rows = []
            for row in lines[i + 2 :]:
                if not row.lstrip().startswith("|"):
                    break
                rows.append((cells(row) + [""] * len(header))[: len(header)])
            return title, header, rows
    return None


def cells(line: str) -> list[str]:
    """The cells of a Markdown table's row, as the text they show (a ``\\|`` inside a cell
    is its character, not a border)."""
    body = line.strip().removeprefix("|")
    out, cell, i = [], "", 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            cell += body[i : i + 2]
            i += 2
        elif body[i] == "|":
            out.append(cell)
            cell, i = "", i + 1
        else:
            cell += body[i]
            i += 1
    if cell.strip():
        out.append(cell)
    return [shown_text(c.strip()) for c in out]


def shown_text(markdown: str) -> str:
    """Markdown text (of :func:`solvers.kit.summary_parts.markdown_text`) as the characters
    it shows, and those a terminal would act on as their escapes."""
    text = html.unescape(ESCAPED.sub(r"\1", markdown))
    if text.startswith("`") and text.endswith("`"):  # a code span: its text
        text = text.strip("`").strip()
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


def fitted(header: list[str], rows: list[list[str]], width: int) -> tuple[list[str], list[str]]:
    """(the table's lines, the columns left out): the table as it is when it fits in
    ``width``, else turned (a column per row) when that fits, else the first column (wrapped
    if that keeps more columns) and those of the others that fit, in order."""
    whole = rendered(header, rows)
    if widest(whole) <= width:
        return whole, []
    turned = rendered(
        [header[0], *(row[0] for row in rows)],
        [[name, *(row[k] for row in rows)] for k, name in enumerate(header) if k],
    )
    if widest(turned) <= width:
        return turned, []
    best: tuple[list[int], int | None] = ([0], None)
    for first in (None, max(width // 3, 12)):  # the first column (rows' names) wrapped or not
        kept = [0]
        for k in range(1, len(header)):
            if widest(rendered(*_columns(header, rows, [*kept, k]), first)) <= width:
                kept.append(k)
        if len(kept) > len(best[0]):
            best = kept, first
    kept, first = best
    left_out = [name for k, name in enumerate(header) if k not in kept]
    return rendered(*_columns(header, rows, kept), first), left_out


def _columns(
    header: list[str], rows: list[list[str]], kept: list[int]
) -> tuple[list[str], list[list[str]]]:
    return [header[k] for k in kept], [[row[k] for k in kept] for row in rows]


def rendered(header: list[str], rows: list[list[str]], first: int | None = None) -> list[str]:
    """A plain text table: a column of numbers aligned right, others left; the first column
    wrapped at ``first`` characters, if given."""
    from tabulate import tabulate

    align = [
        "right" if rows and all(NUMBER.match(row[k]) or not row[k] for row in rows) else "left"
        for k in range(len(header))
    ]
    wrap = [first, *[None] * (len(header) - 1)] if first else None
    text = tabulate(
        rows,
        headers=header,
        tablefmt="simple",
        disable_numparse=True,
        colalign=align,
        maxcolwidths=wrap,
    )
    return [line.rstrip() for line in text.splitlines()]


def widest(lines: list[str]) -> int:
    return max((len(line) for line in lines), default=0)
