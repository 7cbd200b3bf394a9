"""What a game's HTML report is made of: sections holding tables, figures and text.

A family's report function (:attr:`solvers.family.Presentation.report`, ``(ok_rows) ->
list[Section]``) returns these; the pipeline renders them, without knowing the game, into
one self-contained HTML file (tables sortable and filterable, figures interactive).  Figures
are Plotly figures: build them with :func:`scatter` / :func:`heatmap` below so that hovering
a point shows the row's parameters and its exact ``p/q`` value.

Imported only by the reports (:mod:`solvers` does not load it, and with it Plotly, on
workers).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import plotly.graph_objects as go


@dataclass(frozen=True)
class Table:
    """A table: a DataFrame shown whole (sortable, filterable), floats in ``formats``."""

    title: str
    frame: pd.DataFrame
    # column -> how to show it: a Python float format (".6g"), or "exact" for "p/q" strings;
    # columns not named: floats ".10g", columns ending in "_exact" as "exact"
    formats: Mapping[str, str] = field(default_factory=dict)
    note: str = ""
    # column -> what it holds, in words (the report shows it as the header's tooltip and in
    # the table's list of columns); the family's parameters and the common result columns
    # are defined already (pipeline.outputs.report.ColumnWords)
    columns: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Figure:
    """An interactive Plotly figure (zoom, hover) with a title and an optional note."""

    title: str
    figure: go.Figure
    note: str = ""


@dataclass(frozen=True)
class Section:
    """A titled group of tables, figures and paragraphs (plain strings), in order."""

    title: str
    items: Sequence[Table | Figure | str] = ()


def hover_fields(frame: pd.DataFrame, columns: Sequence[str]) -> tuple[list[list[str]], str]:
    """(customdata, hovertemplate lines) showing ``columns`` of each row of ``frame``.

    Every value is pre-formatted as text (floats as repr, so the hover is exact to the last
    digit; "p/q" strings whole up to 60 characters), one line "name = value" per column.
    """
    present = [c for c in columns if c in frame]
    data = [[hover_text(v) for v in row] for row in frame[present].itertuples(index=False)]
    lines = "<br>".join(f"{c} = %{{customdata[{i}]}}" for i, c in enumerate(present))
    return data, lines


def hover_text(value: Any, limit: int = 60) -> str:
    """One value as hover text: floats exact (repr), long "p/q" strings cut with their length."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return "inf" if math.isinf(value) and value > 0 else repr(value)
    text = str(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


# A trace of a report's scatter plot keeps at most so many points (every k-th): 10^6 points
# of a dense sweep made a 100 MB page that no browser draws.
TRACE_POINTS = 5_000


def scatter(
    frame: pd.DataFrame,
    *,
    x: str,
    y: str,
    group: str | None = None,
    hover: Sequence[str] = (),
    mode: str = "lines+markers",
    title: str = "",
    x_title: str | None = None,
    y_title: str | None = None,
    log_x: bool = False,
    log_y: bool = False,
    style: str | None = None,
    facet: str | None = None,
) -> go.Figure:
    """One trace per value of ``group`` (or one trace): y against x, hover showing the
    row's ``hover`` columns (its parameters and exact value) besides x and y; a trace of
    more than TRACE_POINTS points shows every k-th of them (and its last), and says so.

    ``group`` values take a colour each; ``style`` values a marker and a line dash each (one
    trace per group and style), so that no two series of one panel look alike; ``facet``
    values a panel each, stacked, sharing the x axis (each panel titled by its value, every
    y axis titled ``y_title``).  Every trace keeps its colour and style in every panel, and
    the legend names each once.
    """
    facets = list(dict.fromkeys(frame[facet])) if facet else [None]
    fig = facet_figure([str(f) for f in facets] if facet else [])
    colours = {g: PALETTE[i % len(PALETTE)] for i, g in enumerate(distinct(frame, group))}
    looks = {v: STYLES[i % len(STYLES)] for i, v in enumerate(distinct(frame, style))}
    named = set()
    for row, value in enumerate(facets, start=1):
        panel = frame[frame[facet] == value] if facet else frame
        keys = [k for k in (group, style) if k]
        parts = panel.groupby(keys, sort=False) if keys else [((), panel)]
        for key, part in parts:
            key = key if isinstance(key, tuple) else (key,)
            g = key[0] if group else None
            v = key[-1] if style else None
            name = ", ".join(str(k) for k in key) if keys else y
            part = part.sort_values(x, kind="stable")
            shown = name
            if len(part) > TRACE_POINTS:
                step = math.ceil(len(part) / TRACE_POINTS)
                shown = f"{name} (1 point in {step} of {len(part):,})"
                part = part.iloc[every_kth(range(len(part)), step)]
            data, lines = hover_fields(part, [x, y, *[h for h in hover if h not in (x, y)]])
            symbol, dash, size = looks.get(v, ("circle", "solid", 5))
            colour = colours.get(g, PALETTE[0])
            fig.add_trace(
                go.Scatter(
                    x=part[x].tolist(),
                    y=part[y].tolist(),
                    mode=mode,
                    name=shown,
                    legendgroup=name,
                    showlegend=False if name in named else None,  # each name once
                    customdata=data,
                    hovertemplate=lines + "<extra>%{fullData.name}</extra>",
                    marker={"size": size, "symbol": symbol, "color": colour},
                    line={"dash": dash, "color": colour},
                ),
                row=row if facet else None,
                col=1 if facet else None,
            )
            named.add(name)
    height = 450 if len(facets) == 1 else 120 + 260 * len(facets)
    fig.update_layout(title=title, hovermode="closest", margin={"t": 50, "r": 20}, height=height)
    fig.update_xaxes(type="log" if log_x else None)
    fig.update_xaxes(
        title=x_title or x, row=len(facets) if facet else None, col=1 if facet else None
    )
    fig.update_yaxes(title=y_title or y, type="log" if log_y else None, exponentformat="e")
    return fig


# The colours of a report's series (Plotly's default ten) and the (marker, line dash, marker
# size) that tell series of one colour apart (at most len(PALETTE) x len(STYLES) series look
# unlike each other): a large open marker, then a small filled one, so that a second series
# on the same points shows inside the first.
PALETTE = [
    *("#636efa", "#ef553b", "#00cc96", "#ab63fa", "#ffa15a"),
    *("#19d3f3", "#ff6692", "#b6e880", "#ff97ff", "#fecb52"),
]
STYLES = [
    ("circle-open", "solid", 11),
    ("circle", "dot", 5),
    ("diamond-open", "dash", 11),
    ("x", "dashdot", 6),
]


def distinct(frame: pd.DataFrame, column: str | None) -> list[Any]:
    """The values of ``column`` in order of first appearance ([] for no column)."""
    return list(dict.fromkeys(frame[column])) if column else []


def facet_figure(titles: Sequence[str]) -> go.Figure:
    """A figure of one panel per title, stacked, sharing the x axis (no title: one panel)."""
    if not titles:
        return go.Figure()
    from plotly.subplots import make_subplots

    fig = make_subplots(
        rows=len(titles),
        cols=1,
        shared_xaxes=True,
        vertical_spacing=min(0.3 / len(titles), 0.12),
        subplot_titles=list(titles),
    )
    for note in fig.layout.annotations:  # each panel's title at its left, off the toolbar
        note.update(x=0, xanchor="left", font={"size": 13})
    return fig


# A report's heatmap shows at most so many cells (every k-th row and column beyond): each
# cell carries its hover text, and a 1000 x 1000 (r, t) sweep made a 150 MB page.
HEATMAP_CELLS = 10_000


def heatmap(
    frame: pd.DataFrame,
    *,
    x: str,
    y: str,
    z: str,
    hover: Sequence[str] = (),
    title: str = "",
    colorscale: str = "Viridis",
    reverse: bool = False,
    x_title: str | None = None,
    y_title: str | None = None,
    z_title: str | None = None,
) -> go.Figure:
    """A heatmap of ``z`` over the (x, y) values of ``frame`` (categorical axes, in sorted
    order), hover showing each cell's row: x, y, z and the ``hover`` columns; of more than
    HEATMAP_CELLS cells, every k-th x and y value (and the last), as the title says.  The
    axes and the colour bar are titled ``x_title``, ``y_title`` and ``z_title`` (the quantity
    in words; by default the column's name)."""
    xs = sorted(frame[x].unique())
    ys = sorted(frame[y].unique())
    if len(xs) * len(ys) > HEATMAP_CELLS:
        step = math.ceil(math.sqrt(len(xs) * len(ys) / HEATMAP_CELLS))
        title += f" (1 {x} and 1 {y} value in {step} of {len(xs):,} x {len(ys):,})"
        xs, ys = every_kth(xs, step), every_kth(ys, step)
        frame = frame[frame[x].isin(xs) & frame[y].isin(ys)]
    records = frame.to_dict("records")
    cells = {(a, b): row for a, b, row in zip(frame[x], frame[y], records, strict=True)}
    names = [x, y, z, *[h for h in hover if h not in (x, y, z)]]
    zs = [[_cell_value(cells.get((a, b)), z) for a in xs] for b in ys]
    custom = [
        [[hover_text((cells.get((a, b)) or {}).get(c)) for c in names] for a in xs] for b in ys
    ]
    lines = "<br>".join(f"{c} = %{{customdata[{i}]}}" for i, c in enumerate(names))
    fig = go.Figure(
        go.Heatmap(
            x=[label(v) for v in xs],
            y=[label(v) for v in ys],
            z=zs,
            customdata=custom,
            hovertemplate=lines + "<extra></extra>",
            colorscale=colorscale,
            reversescale=reverse,
            colorbar={"title": {"text": z_title or z}},
        )
    )
    fig.update_layout(title=title, margin={"t": 50, "r": 20})
    fig.update_xaxes(title=x_title or x, type="category")
    fig.update_yaxes(title=y_title or y, type="category")
    return fig


def every_kth(values: Sequence[Any], step: int) -> list[Any]:
    """Every ``step``-th of ``values`` from the first, and the last."""
    kept = list(values[::step])
    return [*kept, values[-1]] if (len(values) - 1) % step else kept


def _cell_value(row: Mapping[str, Any] | None, z: str) -> float | None:
    """The heatmap value of one cell (None: an empty cell)."""
    if row is None:
        return None
    value = row.get(z)
    return None if value is None or value != value else float(value)


def label(value: Any) -> str:
    """A number as an axis label: integers without decimals, infinity as 'inf'."""
    if isinstance(value, float):
        return "inf" if math.isinf(value) else f"{value:g}"
    return str(value)
