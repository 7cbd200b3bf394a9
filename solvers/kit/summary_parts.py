"""What every game's summary shares: Markdown tables and PNG plots (matplotlib, Agg).

Imported only by the summaries (:mod:`solvers` does not load it, and with it matplotlib, on
workers).  A plot is a :class:`~matplotlib.figure.Figure` drawn on its own Agg canvas
(:func:`subplots`), never through pyplot, and every function that draws one is
:func:`styled`: it draws in :data:`STYLE` and leaves the caller's matplotlib as it found it
(its backend, its rcParams, a notebook's inline figures).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import matplotlib.style
import numpy as np
import pandas as pd
from cycler import cycler
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import blended_transform_factory

# Every plot is drawn to be read where the manual shows it: the theme's content column is
# PAGE_PX pixels wide (Material for MkDocs on a desktop screen), and its body text is 16 px.
# A figure WIDTH inches wide saved at DPI is scaled to that column, so a font of f points
# shows at f * PAGE_PX / (72 * WIDTH) pixels: 10.5 pt -> 16.7 px.  MIN_TEXT_PX is what
# figure_problems() accepts.  Series on one axes are told apart by colour and marker
# together; an axes holds at most len(PALETTE) of them (facet beyond that).
PAGE_PX = 688
WIDTH = 6.0  # inches
DPI = 200  # 1200 px: sharp on screens of two device pixels per CSS pixel
MIN_TEXT_PX = 15.0
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")  # Okabe & Ito
MARKERS = ("o", "s", "^", "D", "v", "P")
MAX_SERIES = len(PALETTE)
STYLE = {  # over matplotlib's defaults, whatever the caller's rcParams (see styled)
    "font.size": 10.5,
    "axes.titlesize": 11.5,
    "axes.labelsize": 10.5,
    "xtick.labelsize": 10.5,
    "ytick.labelsize": 10.5,
    "legend.fontsize": 10.5,
    "figure.titlesize": 12,
    "figure.figsize": (WIDTH, 3.6),
    "axes.prop_cycle": cycler(color=PALETTE) + cycler(marker=MARKERS),
    "lines.markersize": 5,
    "legend.framealpha": 0.9,
}

P = ParamSpec("P")
R = TypeVar("R")


def styled(draw: Callable[P, R]) -> Callable[P, R]:
    """``draw``, a function that makes figures, run in guesslab's style: matplotlib's
    defaults with :data:`STYLE` over them (so a plot looks the same whatever the caller set),
    the caller's rcParams restored after it, however it ends (:func:`matplotlib.rc_context`,
    which :func:`matplotlib.style.context` opens)."""

    @functools.wraps(draw)
    def in_style(*args: P.args, **kwargs: P.kwargs) -> R:
        with matplotlib.style.context(["default", STYLE]):
            return draw(*args, **kwargs)

    return in_style


def subplots(
    nrows: int = 1,
    ncols: int = 1,
    *,
    figsize: tuple[float, float] | None = None,
    layout: str | None = None,
    **kwargs: Any,
) -> tuple[Figure, Any]:
    """:func:`matplotlib.pyplot.subplots` without pyplot: a Figure on its own Agg canvas
    (no backend is chosen, no figure is kept open: one is freed when no longer used), and its
    axes (``kwargs``: sharex, squeeze, height_ratios, ...).  Called in a :func:`styled`
    function, whose style the figure and its axes take."""
    fig = Figure(figsize=figsize, layout=layout)
    FigureCanvasAgg(fig)
    return fig, fig.subplots(nrows, ncols, **kwargs)


@styled
def bar_chart(
    labels: Sequence[str],
    values: Sequence[float],
    *,
    title: str,
    value_name: str,
    path: Path,
    errors: Sequence[float] | None = None,
    label_name: str = "strategy",
) -> Path:
    """A horizontal bar chart of ``values`` (one bar per label, labels read across at the
    left, ``label_name`` naming what they are, ``value_name`` what the values are) saved as
    PNG at ``path``.  Bars start at 0 (a bar's length is its value, so two scores 0.3% apart
    look 0.3% apart); at the right of each bar's row, its value and, below the highest, its
    difference from the highest (absolute and relative), which is what a reader compares.
    Labels of any length and any number of bars stay readable at the page's width: the
    figure grows in height, never in width."""
    n = len(values)
    fig, ax = subplots(figsize=(WIDTH, 1.6 + 0.42 * n))
    xerr = None if errors is None else whiskers(errors)
    rows = np.arange(n)[::-1]  # the first label on top
    ax.barh(rows, values, xerr=xerr, color=PALETTE[0], capsize=4, height=0.6)
    ax.set_yticks(rows, [wrapped(label, 26) for label in labels])
    ax.set_ylim(-0.5, n - 0.5)
    top = max(values)
    ax.set_xlim(min(0.0, min(values)), max(top, 0.0) * 1.02 or 1.0)
    ax.set_xlabel(value_name)
    ax.set_ylabel(label_name)
    ax.set_title(title)
    right = blended_transform_factory(ax.transAxes, ax.transData)
    for y, v in zip(rows, values, strict=True):
        ax.text(1.03, y, bar_label(v, top), ha="left", va="center", transform=right)
    return save_figure(fig, path)


def whiskers(errors: Sequence[float | None] | np.ndarray) -> np.ndarray | None:
    """Standard errors as error bars: NaN (no whisker, not even its caps) where a value is
    exact (error 0, NaN or None); None when no value has one."""
    err = np.array([np.nan if e is None else e for e in errors], dtype=float)
    return np.where(err > 0, err, np.nan) if (err > 0).any() else None


def bar_label(value: float, top: float) -> str:
    """A bar's value, and below the highest bar ``top`` its difference from it."""
    if value >= top:
        return f"{value:.4f}"
    diff = value - top
    share = f" ({100 * diff / abs(top):+.2g}%)" if top else ""
    return f"{value:.4f}\n{diff:+.3g}{share}"


def wrapped(text: str, width: int) -> str:
    """``text`` broken at spaces into lines of at most ``width`` characters; a longer word
    (a strategy's name of 64 characters) is cut into pieces of ``width``, so that no label
    is wider than the figure has room for at its left."""
    import textwrap

    return "\n".join(textwrap.wrap(text, width)) or text


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


def series_of(ax: Any) -> list[tuple[str, Any]]:
    """The series an axes shows: its labelled artists (legend entries), with their labels."""
    handles, labels = ax.get_legend_handles_labels()
    return list(zip(labels, handles, strict=True))


def _style(handle: Any) -> tuple:
    """What tells a series apart from another: colour, marker, line style, hatch."""
    from matplotlib.colors import to_hex

    if hasattr(handle, "patches"):  # a bar container: its first bar
        handle = handle.patches[0] if handle.patches else handle
    if hasattr(handle, "lines") and isinstance(handle.lines, tuple):  # an error bar container
        handle = handle.lines[0]
    get = getattr
    colour = get(handle, "get_color", None) or get(handle, "get_facecolor", None)
    colour = colour() if colour else None
    try:
        colour = to_hex(np.asarray(colour).reshape(-1, 4)[0] if np.ndim(colour) > 1 else colour)
    except (ValueError, TypeError):
        colour = str(colour)
    marker = get(handle, "get_marker", lambda: None)()
    line = get(handle, "get_linestyle", lambda: None)()
    hatch = get(handle, "get_hatch", lambda: None)()
    return colour, str(marker), str(line), str(hatch)


def _blank_margins(fig: Any) -> dict[str, float]:
    """The share of the image, from each edge, of rows or columns with nothing drawn."""
    fig.canvas.draw()
    image = np.asarray(fig.canvas.buffer_rgba())[:, :, :3]
    inked = (image < 245).any(axis=2)
    rows, cols = inked.any(axis=1), inked.any(axis=0)
    if not rows.any():
        return {"top": 1.0, "bottom": 1.0, "left": 1.0, "right": 1.0}

    def lead(flags: np.ndarray) -> float:
        return float(np.argmax(flags)) / len(flags)

    return {
        "top": lead(rows),
        "bottom": lead(rows[::-1]),
        "left": lead(cols),
        "right": lead(cols[::-1]),
    }


def _overlapping_texts(fig: Any) -> tuple[str, str] | None:
    """Two visible texts of ``fig`` (drawn) whose boxes overlap by more than a tenth of the
    smaller one, or None."""
    renderer = fig.canvas.get_renderer()
    ticks, drawn = set(), set()  # every tick label; those of ticks inside the view (drawn)
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                ticks |= {id(tick.label1), id(tick.label2)}
            for tick in axis._update_ticks():
                drawn |= {id(tick.label1), id(tick.label2)}
    boxes = []
    for t in fig.findobj(Text):
        if id(t) in ticks and id(t) not in drawn:
            continue
        if t.get_visible() and t.get_text().strip() and t.figure is not None:
            box = t.get_window_extent(renderer)
            if box.width > 0 and box.height > 0:
                boxes.append((box, t.get_text()))
    for i, (a, ta) in enumerate(boxes):
        for b, tb in boxes[i + 1 :]:
            w = min(a.x1, b.x1) - max(a.x0, b.x0)
            h = min(a.y1, b.y1) - max(a.y0, b.y0)
            if w > 0 and h > 0 and w * h > 0.1 * min(a.width * a.height, b.width * b.height):
                return ta, tb
    return None


MAX_MARGIN = 0.08  # a blank band wider than this share of the image is an empty region


def figure_problems(fig: Any, dpi: int = DPI) -> list[str]:
    """What keeps ``fig`` from being read at the manual's width (PAGE_PX): text smaller than
    MIN_TEXT_PX once scaled, an axis without a label, more series on one axes than
    MAX_SERIES or two series drawn alike, a line that hides another (same points), a blank
    band along an edge.  Empty when none."""
    problems = []
    width_px = fig.get_figwidth() * dpi
    scale = min(1.0, PAGE_PX / width_px)
    small = sorted(
        {
            (round(t.get_fontsize() * dpi / 72 * scale, 1), t.get_text())
            for t in fig.findobj(Text)
            if t.get_visible() and t.get_text().strip()
        }
    )
    if small and small[0][0] < MIN_TEXT_PX:
        px, text = small[0]
        problems.append(f"text {text!r} shows at {px} px on the page (< {MIN_TEXT_PX:g} px)")
    for ax in fig.axes:
        if not ax.get_visible() or not ax.axison:
            continue
        name = ax.get_title() or f"axes {fig.axes.index(ax) + 1}"
        if getattr(ax, "_colorbar", None) is not None:
            if not (ax.get_ylabel() or ax.get_xlabel()):
                problems.append(f"{name}: the colour bar has no label")
            continue
        for which in ("x", "y"):
            siblings = getattr(ax, f"get_shared_{which}_axes")().get_siblings(ax)
            whole = getattr(fig, f"_sup{which}label", None)  # one label for every panel
            if whole is not None and whole.get_text().strip():
                continue
            if not any(getattr(a, f"get_{which}label")().strip() for a in siblings):
                problems.append(f"{name}: the {which} axis has no label")
        series = series_of(ax)
        if len(series) > MAX_SERIES:
            problems.append(f"{name}: {len(series)} series on one axes (> {MAX_SERIES})")
        styles: dict[tuple, str] = {}
        for label, handle in series:
            key = _style(handle)
            if key in styles:
                problems.append(f"{name}: {label!r} is drawn like {styles[key]!r}")
            styles.setdefault(key, label)
        seen: dict[tuple, str] = {}
        for line in ax.get_lines():
            x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
            if len(x) < 2 or line.get_label().startswith("_"):
                continue
            key = (x.tobytes(), y.tobytes())
            if key in seen:
                problems.append(f"{name}: {line.get_label()!r} hides under {seen[key]!r}")
            seen.setdefault(key, line.get_label())
    margins = _blank_margins(fig)  # draws the figure: the texts' places are known from here
    clash = _overlapping_texts(fig)
    if clash:
        problems.append(f"texts overlap: {clash[0]!r} and {clash[1]!r}")
    for side, share in margins.items():
        if share > MAX_MARGIN:
            problems.append(f"a blank band on the {side}: {share:.0%} of the figure")
    return problems


CHECK_KEY = "guesslab:check"  # PNG text: "ok", or the problems figure_problems found
FACTS_KEY = "guesslab:facts"  # PNG text: JSON of the numbers a caption may quote


@styled
def save_figure(
    fig: Any,
    path: Path,
    dpi: int = DPI,
    tight: bool = True,
    facts: dict[str, Any] | None = None,
) -> Path:
    """Save a matplotlib figure as PNG at ``path`` (tight layout unless told not).  The PNG
    carries what :func:`figure_problems` found (text ``guesslab:check``: "ok" or the
    problems) and ``facts``, the numbers a caption may quote, as JSON."""
    if tight:
        fig.tight_layout()
    problems = figure_problems(fig, dpi)
    metadata = {CHECK_KEY: "; ".join(problems) or "ok"}
    if facts is not None:
        metadata[FACTS_KEY] = json.dumps(facts, sort_keys=True)
    fig.savefig(path, dpi=dpi, metadata=metadata)
    return path


def saved_check(path: Path) -> tuple[str | None, dict[str, Any] | None]:
    """The check and the facts :func:`save_figure` wrote into the PNG at ``path`` (None
    where it holds none: a PNG not made by save_figure)."""
    from PIL import Image

    with Image.open(path) as image:
        text = dict(image.text)
    facts = text.get(FACTS_KEY)
    return text.get(CHECK_KEY), (json.loads(facts) if facts is not None else None)
