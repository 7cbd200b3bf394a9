"""What a game's HTML report is made of: sections holding tables, figures and text.

A family's report function (:attr:`solvers.registry.Family.report`, ``(ok_rows) ->
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
) -> go.Figure:
    """One trace per value of ``group`` (or one trace): y against x, hover showing the
    row's ``hover`` columns (its parameters and exact value) besides x and y; a trace of
    more than TRACE_POINTS points shows every k-th of them (and its last), and says so."""
    fig = go.Figure()
    groups = frame.groupby(group, sort=False) if group else [("", frame)]
    for name, part in groups:
        part = part.sort_values(x, kind="stable")
        name = str(name) if group else y
        if len(part) > TRACE_POINTS:
            step = math.ceil(len(part) / TRACE_POINTS)
            name = f"{name} (1 point in {step} of {len(part):,})"
            part = part.iloc[every_kth(range(len(part)), step)]
        data, lines = hover_fields(part, [x, y, *[h for h in hover if h not in (x, y)]])
        fig.add_trace(
            go.Scatter(
                x=part[x].tolist(),
                y=part[y].tolist(),
                mode=mode,
                name=name,
                customdata=data,
                hovertemplate=lines + "<extra>%{fullData.name}</extra>",
                marker={"size": 5},
            )
        )
    fig.update_layout(title=title, hovermode="closest", margin={"t": 50, "r": 20})
    fig.update_xaxes(title=x_title or x, type="log" if log_x else None)
    fig.update_yaxes(title=y_title or y, type="log" if log_y else None, exponentformat="e")
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
) -> go.Figure:
    """A heatmap of ``z`` over the (x, y) values of ``frame`` (categorical axes, in sorted
    order), hover showing each cell's row: x, y, z and the ``hover`` columns; of more than
    HEATMAP_CELLS cells, every k-th x and y value (and the last), as the title says."""
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
            colorbar={"title": {"text": z}},
        )
    )
    fig.update_layout(title=title, margin={"t": 50, "r": 20})
    fig.update_xaxes(title=x, type="category")
    fig.update_yaxes(title=y, type="category")
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
