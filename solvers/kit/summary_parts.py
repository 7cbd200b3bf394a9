"""What every game's summary shares: Markdown tables and PNG plots (matplotlib, Agg).

Imported only by the summaries (:mod:`solvers` does not load it, and with it matplotlib, on
workers).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib
import pandas as pd

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def bar_chart(
    labels: Sequence[str],
    values: Sequence[float],
    *,
    title: str,
    ylabel: str,
    path: Path,
    errors: Sequence[float] | None = None,
) -> Path:
    """A bar chart saved as PNG at ``path``: bars from 0 (a bar's length is its value, so
    two scores 0.3% apart look 0.3% apart), each labelled with its value and, below the
    highest, its difference from the highest (absolute and relative), which is what a
    reader compares."""
    fig, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(labels) + 2), 3.6))
    yerr = None
    if errors is not None and any(e == e and e for e in errors):
        yerr = [e if e == e else 0.0 for e in errors]
    ax.bar(range(len(values)), values, yerr=yerr, color="tab:blue", capsize=4)
    ax.set_xticks(range(len(labels)), labels, rotation=20, ha="right", fontsize=8)
    top = max(values)
    ax.set_ylim(min(0.0, min(values)), max(top, 0.0) * 1.22 or 1.0)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    for i, v in enumerate(values):
        ax.text(i, v, bar_label(v, top), ha="center", va="bottom", fontsize=7)
    return save_figure(fig, path)


def bar_label(value: float, top: float) -> str:
    """A bar's value, and below the highest bar ``top`` its difference from it."""
    if value >= top:
        return f"{value:.4f}"
    diff = value - top
    share = f" ({100 * diff / abs(top):+.2g}%)" if top else ""
    return f"{value:.4f}\n{diff:+.3g}{share}"


# What Markdown would read as markup in text from a study, a parameter or an error: raw HTML
# (< and > become entities, so <script> or an onerror attribute is shown, never run; & only
# where it would start an entity, so "Gural, Simper & So" stays readable as plain text),
# links, images and code spans ([, ] and ` escaped by a backslash, and a backslash before any
# ASCII punctuation, which would escape it); | too inside a table cell.
_HTML_ENTITIES = str.maketrans({"<": "&lt;", ">": "&gt;"})
_ENTITY_START = re.compile(r"&(?=#?[0-9A-Za-z]+;)")
_MARKUP = re.compile(r"(\\(?=[!-/:-@[-`{-~])|[`\[\]])")
_CELL_MARKUP = re.compile(r"(\\(?=[!-/:-@[-`{-~])|[`\[\]|])")


def markdown_text(value: Any, *, cell: bool = False) -> str:
    """``value`` as Markdown that shows it as text, on one line: no raw HTML, link, image
    or code span survives (GitHub and Python-Markdown, which MkDocs uses, render it as the
    characters it holds).  ``cell``: for a table cell (``|`` escaped too).  Every summary
    writes text that is not its own through this (tables: :func:`markdown_table`)."""
    text = _ENTITY_START.sub("&amp;", re.sub(r"[\r\n]+", " ", str(value)))
    text = text.translate(_HTML_ENTITIES)
    return (_CELL_MARKUP if cell else _MARKUP).sub(r"\\\1", text)


def markdown_code(value: Any) -> str:
    """``value`` as one Markdown code span (shown as typed, HTML included, on one line),
    fenced by more backticks than any run of them inside it."""
    text = re.sub(r"[\r\n]+", " ", str(value))
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_table(df: pd.DataFrame, floatfmt: str = ".10g") -> str:
    """A GitHub Markdown table of ``df`` (no index), rendered by tabulate; missing values are
    empty cells, floats take ``floatfmt``, and text is shown as text (:func:`markdown_text`:
    no HTML, link or image of a value survives)."""
    from tabulate import tabulate

    def cell(v: Any) -> Any:
        if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
            return None
        return markdown_text(v, cell=True) if isinstance(v, str) else v

    rows = [[cell(v) for v in row] for row in df.itertuples(index=False)]
    headers = [markdown_text(c, cell=True) for c in df.columns]
    return tabulate(rows, headers=headers, tablefmt="github", floatfmt=floatfmt, missingval="")


def left_out(shown: int, total: int, what: str, where: str) -> str:
    """ "" when a table shows all ``total`` of its ``what``, else the sentence a summary puts
    under it: how many it shows and where every one of them is."""
    if shown >= total:
        return ""
    return f"The table shows {shown} of the {total} {what}; every one is in {where}."


MAX_NAME = 120  # characters of a file name made from values (file systems allow 255 bytes)


def file_name(text: str) -> str:
    """``text`` as a safe file name: "/" (a fraction's bar) and any character but letters,
    digits, ".", "_" and "-" become "_"; past MAX_NAME characters it is cut and a hash of
    the whole added, so names made from any valid parameter value stay distinct and short."""
    stem, dot, ext = text.rpartition(".") if "." in text else (text, "", "")
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", stem).lstrip(".-") or "_"
    if len(safe) > MAX_NAME:
        digest = hashlib.sha256(stem.encode()).hexdigest()[:12]
        safe = f"{safe[: MAX_NAME - 13]}-{digest}"
    return f"{safe}{dot}{re.sub(r'[^A-Za-z0-9]', '_', ext)}"


def save_figure(fig: Any, path: Path, dpi: int = 110, tight: bool = True) -> Path:
    """Save a matplotlib figure as PNG at ``path`` (tight layout unless told not) and close it."""
    if tight:
        fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path
