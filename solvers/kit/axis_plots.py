"""A strategy's score against a numeric parameter of its grid: what every family's summary
and report draw where a strategy's parameter takes MIN_VALUES or more numeric values.

A family describes its headline score once (:class:`Score`: the column, in words, the
columns that make a deck, which way is better, the strategy whose score is the optimum) and
calls :func:`axis_sections` from its summary and :func:`axis_report_sections` from its
report.  A strategy's parameters are the family's parameters that apply to some strategies
only (``gamma``, ``entropy_r``, ``guess_limit`` ...) and the arguments of a strategy of one's
own (the JSON of ``strategy_params``).  Each figure has one panel per deck (stacked, one x
axis), one line per combination of the strategy's other parameters that vary (up to
MAX_LINES; beyond, the best over them at each value), the optimum of the deck as a dotted
line and the best point ringed; the points drawn are written to ``summary/`` as Parquet.

Imported only by the summaries and reports (matplotlib and Plotly are loaded inside).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from solvers.kit.summary_parts import (
    MARKERS,
    MAX_SERIES,
    PALETTE,
    WIDTH,
    file_name,
    markdown_code,
    markdown_text,
    save_figure,
    styled,
    subplots,
    wrapped,
)
from solvers.registry import get_family

MIN_VALUES = 3  # a parameter with this many numeric values in a strategy's rows is drawn
MAX_LINES = MAX_SERIES - 2  # lines of a panel (its optimum and its best point are series too)
MAX_PANELS = 6  # decks drawn per figure (the first); the Parquet beside it holds every one
NUMERIC = ("int64", "float64")
LEGEND_WIDTH = 36  # characters of a legend entry's line (two entries a row fill the width)
OWN_COLUMNS = ("strategy_target", "strategy_params", "strategy_code")


@dataclass(frozen=True)
class Score:
    """A family's headline score, as its summary and report draw it."""

    family: str
    column: str  # a numeric result column, e.g. "expected_score"
    words: str  # the column in words, the y axis's label
    decks: tuple[str, ...]  # the columns that make one game (a panel each)
    higher_is_better: bool = True
    optimum: str | None = None  # the strategy whose best score on a deck is the optimum
    # columns besides the parameters that tell a strategy's rows apart (e.g. "method")
    keys: tuple[str, ...] = ()
    # strategies whose parameters a section of the family's own draws already
    leave_out: tuple[str, ...] = ()

    @property
    def exact(self) -> str:
        return f"{self.column}_exact"

    def best(self, values: pd.Series) -> Any:
        """The index of the best of ``values``."""
        return values.idxmax() if self.higher_is_better else values.idxmin()


@dataclass(frozen=True)
class Axis:
    """A numeric parameter of one strategy taking MIN_VALUES values or more: ``param``, and
    the strategy's other parameters that vary (``others``); ``own``: an argument of a
    strategy of one's own."""

    strategy: str
    param: str
    others: tuple[str, ...]
    own: bool = False

    def describe(self) -> str:
        """ "its argument patience" or "its parameter gamma"."""
        return f"its {'argument' if self.own else 'parameter'} {self.param}"

    def words(self, family: str) -> str:
        """The x axis's title: a built-in parameter's doc up to its first ";", without the
        name of the strategy it is for ("Sharma-Mittal degree t", "entropy weight
        (gamma)", "at most this many guesses per game (guess limit)": words, as the report's
        figures title their axes); an argument of one's own: "patience (an argument of
        switch)"."""
        if self.own:
            return f"{self.param} (an argument of {self.strategy})"
        doc = get_family(family).rules.param(self.param).doc.split(";")[0]
        doc = re.sub(r"\s*\([^)]*\)", "", doc).strip()  # no parenthesis
        head, colon, rest = doc.partition(": ")
        doc = rest if colon and " " not in head else doc
        name = self.param.replace("_", " ")
        if not doc:
            return name
        return doc if self.param.rsplit("_", 1)[-1] in doc.split() else f"{doc} ({name})"


def parameter_frame(rows: pd.DataFrame, score: Score) -> tuple[pd.DataFrame, set[str]]:
    """(the rows' strategy, decks, strategy parameters, keys and score, with one column per
    argument of a strategy of one's own, read from its JSON; the names of those columns)."""
    fam = get_family(score.family)
    params = [  # (a parameter whose row column holds a result, first_guess, is left out)
        p.name
        for p in fam.rules.params
        if p.identity
        and p.strategies is not None
        and p.name not in OWN_COLUMNS
        and p.name not in fam.solver.columns
    ]
    wanted = ["strategy", *score.decks, *params, *score.keys, score.column, score.exact]
    frame = rows[[c for c in dict.fromkeys([*wanted, "strategy_params"]) if c in rows]]
    frame = frame[frame[score.column].notna()] if score.column in frame else frame.iloc[:0]
    frame = frame.reset_index(drop=True)
    args: set[str] = set()
    if "strategy_params" in frame and len(frame):  # each JSON text read once
        codes, texts = pd.factorize(frame["strategy_params"])  # None: code -1
        own = [json.loads(t) if isinstance(t, str) else {} for t in texts] + [{}]
        for name in dict.fromkeys(k for d in own for k in d):
            column = name if name not in frame else f"{name} (argument)"
            values = np.asarray([hashable(d.get(name)) for d in own], dtype=object)
            frame = frame.assign(**{column: values[codes]})
            args.add(column)
    return frame.drop(columns=["strategy_params"], errors="ignore"), args


def hashable(value: Any) -> Any:
    """An argument's value as a row holds it: a list or a mapping as its JSON text."""
    return json.dumps(value, sort_keys=True) if isinstance(value, list | dict) else value


def is_number(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool | np.bool_
    )


def numeric_axes(frame: pd.DataFrame, args: set[str], score: Score) -> list[Axis]:
    """Each (strategy, parameter) of ``frame`` (:func:`parameter_frame`) whose numeric
    values number MIN_VALUES or more, with the strategy's other parameters that vary."""
    fam = get_family(score.family)
    numeric = {p.name for p in fam.rules.params if p.dtype in NUMERIC}
    fixed = {"strategy", *score.decks, score.column, score.exact}
    axes = []
    for strategy, part in frame.groupby("strategy", sort=False):
        if strategy in score.leave_out:
            continue
        present = [c for c in part if c not in fixed and part[c].notna().any()]
        varying = [c for c in present if part[c].nunique(dropna=False) > 1]
        for column in present:
            values = part[column].dropna()
            if column in args:
                if not all(is_number(v) for v in values.unique()):
                    continue
            elif column not in numeric or column in score.keys:
                continue
            if values.nunique() >= MIN_VALUES:
                others = tuple(c for c in varying if c != column)
                axes.append(Axis(str(strategy), column, others, own=column in args))
    return axes


def deck_label(row: dict[str, Any], decks: Sequence[str]) -> str:
    """A deck's panel title: "deck 3,3,3, feedback partial" (its columns that hold a value)."""
    said = [f"{d} {value_text(row[d])}" for d in decks if d in row and not missing(row[d])]
    return ", ".join(said) or "every game"


def missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def value_text(value: Any) -> str:
    """A parameter's value in a label: numbers as %g, integers whole."""
    if isinstance(value, float | np.floating):
        return "inf" if math.isinf(value) else f"{value:g}"
    return str(value)


def axis_points(frame: pd.DataFrame, axis: Axis, score: Score) -> pd.DataFrame:
    """The points of one axis's figure: per deck (``deck``), line (``line``) and value of
    the parameter, the score (its best where rows repeat one), its exact value where the
    family has one, the other parameters' values at it (``at``) and the deck's ``optimum``."""
    part = frame[(frame["strategy"] == axis.strategy) & frame[axis.param].notna()].copy()
    if part[axis.param].dtype.kind not in "iuf":  # an argument of one's own: JSON values
        numbers = {v for v in part[axis.param].unique() if is_number(v)}
        part = part[part[axis.param].isin(numbers)]
    part[axis.param] = part[axis.param].astype(float)
    decks = [d for d in score.decks if d in part]
    others = list(axis.others)
    # the best row of each deck, line and value, found on integer codes (10^6 rows of a
    # dense grid: labels are made for the points kept only)
    part["_deck"] = codes(part, decks)
    part["_at"] = codes(part, others)
    lines = part["_at"].nunique() <= MAX_LINES
    part["_line"] = part["_at"] if lines else 0
    order = part.sort_values(score.column, ascending=not score.higher_is_better, kind="stable")
    points = order.drop_duplicates(["_deck", "_line", axis.param]).copy()
    points["deck"] = [deck_label(r, decks) for r in points[decks].to_dict("records")]
    points["at"] = [
        ", ".join(f"{o}={value_text(r[o])}" for o in others if not missing(r[o]))
        for r in points[others].to_dict("records")
    ]
    if not axis.others:
        points["line"] = axis.strategy
    elif lines:
        points["line"] = points["at"]
    else:
        points["line"] = f"best over {', '.join(axis.others)}"
    optimum = optimum_of(frame, score, axis)
    points["optimum"] = [optimum.get(d, math.nan) for d in points["deck"]]
    cols = ["deck", "line", axis.param, score.column]
    cols += [c for c in (score.exact,) if c in points] + ["at", "optimum"]
    points = points.sort_values(["_deck", "line", axis.param], kind="stable")
    return points[cols].reset_index(drop=True)


def codes(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """An integer per row naming its combination of ``columns`` (0, 1, ... in order of
    first appearance; missing values a value of their own)."""
    if not columns or not len(frame):
        return np.zeros(len(frame), dtype=np.int64)
    return frame.groupby(columns, dropna=False, sort=False).ngroup().to_numpy()


def optimum_of(frame: pd.DataFrame, score: Score, axis: Axis) -> dict[str, float]:
    """deck label -> the best score of the family's optimum strategy on it (none when the
    axis's strategy is that strategy)."""
    if score.optimum is None or axis.strategy == score.optimum:
        return {}
    best = frame[frame["strategy"] == score.optimum]
    decks = [d for d in score.decks if d in best]
    out: dict[str, float] = {}
    for row in best.to_dict("records"):
        deck, value = deck_label(row, decks), float(row[score.column])
        if deck not in out or (value > out[deck]) == score.higher_is_better:
            out[deck] = value
    return out


def best_points(points: pd.DataFrame, axis: Axis, score: Score) -> pd.DataFrame:
    """The best point of each deck (the first of equals in order of the parameter), and in
    ``where`` every value it is reached at, with the other parameters there ("0 (slack=0),
    1 (slack=0 and slack=1)", or "0, 1 (slack=0)" where they are the same at each)."""
    out = []
    for _, group in points.groupby("deck", sort=False):
        group = group.sort_values([axis.param, "line"], kind="stable")
        top = group.loc[score.best(group[score.column])].copy()
        same = group[np.isclose(group[score.column], top[score.column], rtol=1e-12, atol=0)]
        at: dict[str, list[str]] = {}
        for x, there in zip(map(value_text, same[axis.param]), same["at"], strict=True):
            at.setdefault(x, [])
            if there and there not in at[x]:
                at[x].append(there)
        said = {x: f" ({' and '.join(a)})" if a else "" for x, a in at.items()}
        if len(set(said.values())) == 1:  # the same other parameters at each value
            top["where"] = ", ".join(at) + next(iter(said.values()))
        else:
            top["where"] = ", ".join(x + said[x] for x in at)
        out.append(top)
    return pd.DataFrame(out).reset_index(drop=True)


def merged_lines(panel: pd.DataFrame, axis: Axis, score: Score) -> list[tuple[str, pd.DataFrame]]:
    """A panel's lines, lines through the very same points drawn once and named together
    ("tie_break=lowest = tie_break=highest")."""
    groups: dict[tuple, list[tuple[str, pd.DataFrame]]] = {}
    for line, part in panel.groupby("line", sort=False):
        key = (tuple(part[axis.param]), tuple(part[score.column]))
        groups.setdefault(key, []).append((str(line), part))
    return [(" = ".join(n for n, _ in same), same[0][1]) for same in groups.values()]


def figure_name(score: Score, axis: Axis) -> str:
    return file_name(f"{score.family}_{axis.strategy}_against_{axis.param}.png")


@styled
def draw_axis(points: pd.DataFrame, axis: Axis, score: Score) -> Any:
    """The figure of one axis (a matplotlib Figure on its own canvas): a panel per deck
    (the first MAX_PANELS), a line per line of ``points``, the deck's optimum dotted, the
    best point ringed; integers on the x axis of an integer parameter."""
    from matplotlib.ticker import MaxNLocator

    decks = list(dict.fromkeys(points["deck"]))[:MAX_PANELS]
    lines = list(dict.fromkeys(points["line"]))
    colour = {line: k for k, line in enumerate(lines)}
    fig, axes = subplots(
        len(decks), 1, figsize=(WIDTH, 1.0 + 2.1 * len(decks)), sharex=True, squeeze=False
    )
    best = best_points(points, axis, score).set_index("deck")
    for ax, deck in zip(axes[:, 0], decks, strict=True):
        panel = points[points["deck"] == deck]
        for label, part in merged_lines(panel, axis, score):
            k = colour[part["line"].iloc[0]] % MAX_LINES
            ax.plot(part[axis.param], part[score.column], color=PALETTE[k], marker=MARKERS[k],
                    lw=1.5, label=wrapped(label, LEGEND_WIDTH))  # fmt: skip
        optimum = panel["optimum"].iloc[0]
        if not math.isnan(optimum):
            ax.axhline(optimum, ls=":", lw=2, color="black", label=f"optimum ({score.optimum})")
        top = best.loc[deck]
        ax.plot([top[axis.param]], [top[score.column]], ls="none", marker="o", ms=13,
                mfc="none", mec="black", mew=1.5, label="best point")  # fmt: skip
        ax.set_title(deck, loc="left")
        ax.grid(True, alpha=0.3)
    bottom = axes[-1, 0]
    bottom.set_xlabel(wrapped(axis.words(score.family), 2 * LEGEND_WIDTH))
    if all(float(v).is_integer() for v in points[axis.param]):
        bottom.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.supylabel(score.words)
    handles: dict[str, Any] = {}
    for ax in axes[:, 0]:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    labels = list(handles)
    rows = sum(  # the legend's lines, two entries a row
        max(label.count("\n") + 1 for label in labels[i : i + 2]) for i in range(0, len(labels), 2)
    )
    fig.legend(handles.values(), handles.keys(), loc="upper center", ncol=2, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - (0.1 + 0.25 * rows) / fig.get_figheight()))
    return fig


def caption(points: pd.DataFrame, axis: Axis, score: Score, markdown: bool = True) -> str:
    """What the figure shows, in words, with each deck's best point and its gap to the
    optimum (the numbers of ``points``): Markdown (names in code spans, every other value
    as text), or plain text for the report (``markdown=False``)."""
    code = markdown_code if markdown else str
    text = markdown_text if markdown else str
    values = sorted(points[axis.param].unique())
    decks = list(dict.fromkeys(points["deck"]))
    lines = list(dict.fromkeys(points["line"]))
    others = text(", ".join(axis.others))
    said = [
        f"{code(axis.strategy)}'s {score.words} against {text(axis.describe())} "
        f"({len(values)} values, {value_text(values[0])} to {value_text(values[-1])}), "
        "one panel per deck"
    ]
    if axis.others and lines[0].startswith("best over"):
        said.append(f", at each value the best over {others}")
    elif axis.others:
        said.append(f", one line per value of {others}")
    if points["optimum"].notna().any():
        said.append(f"; the dotted line is the optimum ({code(score.optimum)})")
    said.append("; the ringed point is the best (the first of equal ones).")
    if len(decks) > MAX_PANELS:
        said.append(f" The figure shows the first {MAX_PANELS} of the {len(decks)} decks.")
    best = []
    for row in best_points(points, axis, score).to_dict("records"):
        point = f"{row['deck']}: {row[score.column]:.6g} at {axis.param} = "
        point += row["where"]
        if not math.isnan(row["optimum"]):
            gap = abs(row["optimum"] - row[score.column])
            point += f", optimum {row['optimum']:.6g} ({gap:.3g} from it)"
        best.append(point)
    return "".join(said) + " Best: " + text("; ".join(best)) + "."


def axis_facts(points: pd.DataFrame, axis: Axis, score: Score) -> dict[str, Any]:
    """The numbers a caption quotes, per deck: the best point and the optimum."""
    return {
        row["deck"]: {
            axis.param: float(row[axis.param]),
            score.column: float(row[score.column]),
            "optimum": None if math.isnan(row["optimum"]) else float(row["optimum"]),
        }
        for row in best_points(points, axis, score).to_dict("records")
    }


def axes_of(rows: pd.DataFrame, score: Score) -> list[tuple[Axis, pd.DataFrame]]:
    """Each numeric axis of ``rows`` and its points."""
    if not len(rows) or score.column not in rows or "strategy" not in rows:
        return []
    frame, args = parameter_frame(rows, score)
    return [(axis, axis_points(frame, axis, score)) for axis in numeric_axes(frame, args, score)]


def axis_sections(rows: pd.DataFrame, out_dir: Path, score: Score) -> list[str]:
    """Markdown lines of the summary: per numeric axis, a heading, the caption, the figure
    (PNG in ``out_dir``, linked as ``<out_dir's name>/<file>``) and its points (Parquet);
    [] where no strategy's parameter takes MIN_VALUES numeric values."""
    out: list[str] = []
    for axis, points in axes_of(rows, score):
        name = figure_name(score, axis)
        fig = draw_axis(points, axis, score)
        save_figure(fig, out_dir / name, tight=False, facts=axis_facts(points, axis, score))
        data = name.removesuffix(".png") + ".parquet"
        points.to_parquet(out_dir / data, index=False)
        out += [
            f"### {markdown_text(axis.strategy)} against {markdown_text(axis.param)}",
            "",
            caption(points, axis, score) + f" Every point: `{out_dir.name}/{data}`.",
            "",
            f"![{markdown_text(axis.strategy)} against {markdown_text(axis.param)}]"
            f"({out_dir.name}/{name})",
            "",
        ]
    return out


def axis_report_sections(rows: pd.DataFrame, score: Score) -> list[Any]:
    """The report's section of the same figures (Plotly: hover shows each point's exact
    score and the other parameters), [] where there is none."""
    from solvers.kit.report_sections import Figure, Section

    figures = [
        Figure(
            f"{axis.strategy} against {axis.param}",
            plotly_axis(points, axis, score),
            note=caption(points, axis, score, markdown=False),
        )
        for axis, points in axes_of(rows, score)
    ]
    return [Section("Scores against a strategy's parameter", figures)] if figures else []


def plotly_axis(points: pd.DataFrame, axis: Axis, score: Score) -> Any:
    """:func:`draw_axis` as a Plotly figure: a panel per deck, the optimum dotted, the best
    point starred."""
    import plotly.graph_objects as go

    from solvers.kit.report_sections import scatter

    hover = [c for c in (score.exact, "at", "optimum") if c in points]
    shown = list(dict.fromkeys(points["deck"]))[:MAX_PANELS]  # as draw_axis: the first
    drawn = [  # lines through the same points drawn once, named together (as draw_axis)
        part.assign(line=label)
        for _, panel in points[points["deck"].isin(shown)].groupby("deck", sort=False)
        for label, part in merged_lines(panel, axis, score)
    ]
    fig = scatter(pd.concat(drawn), x=axis.param, y=score.column, group="line", facet="deck",
                  hover=hover, x_title=axis.words(score.family),
                  y_title=score.words)  # fmt: skip
    if all(float(v).is_integer() for v in points[axis.param]):  # no tick between integers
        span = points[axis.param].max() - points[axis.param].min()
        fig.update_xaxes(dtick=max(1, math.ceil(span / 10)))
    decks = list(dict.fromkeys(points["deck"]))[:MAX_PANELS]
    best = best_points(points, axis, score).set_index("deck")
    for row, deck in enumerate(decks, start=1):
        optimum = points.loc[points["deck"] == deck, "optimum"].iloc[0]
        if not math.isnan(optimum):
            fig.add_trace(
                go.Scatter(x=[points[axis.param].min(), points[axis.param].max()],
                           y=[optimum, optimum], mode="lines", name=f"optimum ({score.optimum})",
                           legendgroup="optimum", showlegend=row == 1,
                           line={"dash": "dot", "color": "black", "width": 2},
                           hovertemplate=f"optimum = {optimum!r}<extra></extra>"),
                row=row, col=1,
            )  # fmt: skip
        top = best.loc[deck]
        fig.add_trace(
            go.Scatter(x=[top[axis.param]], y=[top[score.column]], mode="markers",
                       name="best point", legendgroup="best", showlegend=row == 1,
                       marker={"symbol": "circle-open", "size": 18, "color": "black",
                               "line": {"width": 2}},
                       hovertemplate=f"best: {axis.param} = %{{x}}, {score.column} = %{{y}}"
                       "<extra></extra>"),
            row=row, col=1,
        )  # fmt: skip
    return fig
