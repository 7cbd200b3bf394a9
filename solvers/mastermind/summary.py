"""Summary of ``mastermind`` rows: per game, the classic strategies and an (r, t) heatmap."""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from solvers.entropy import PRESETS, preset_name
from solvers.kit.axis_plots import Score, axis_sections
from solvers.kit.stored_rows import StoredRows, quoted, takes_stored_rows
from solvers.kit.summary_parts import WIDTH, file_name, save_figure, styled, subplots

GAME = ["pegs", "colours", "jar"]
# A game's (r, t) grid is shown as a Markdown table up to this many orders and degrees; a
# denser sweep (100 x 100 points, say) gets its best points there and the whole grid in
# Parquet.  The heatmap writes each cell's value in it up to ANNOTATED cells (beyond, the
# numbers overlap, and matplotlib's text objects would dominate the summary's time), and
# labels every k-th order and degree, at most TICKS of each.
GRID_SHOWN = 12
ANNOTATED = GRID_SHOWN * GRID_SHOWN
# A value written in its cell is read at the manual's width (summary_parts.MIN_TEXT_PX) only
# in a cell at least this many wide: up to 9 degrees across; a wider grid marks its best.
ANNOTATED_COLUMNS = 9
TICKS = 15
# The score the summary and the report draw against a strategy's numeric parameter (r or t
# of Sharma-Mittal, the optimum's guess limit, an argument of one's own: kit.axis_plots)
SCORE = Score(
    "mastermind",
    "expected_guesses",
    "expected number of guesses",
    decks=("pegs", "colours", "jar"),
    higher_is_better=False,
    optimum="optimal",
)
RESULTS = ["expected_guesses", "expected_guesses_exact", "total_guesses", "max_guesses"]
# What the summary and the report read of a large store (StoredRows): no ids, no messages,
# no guess_pmf (a list per row), no execution knobs; every row (each is a point of a grid).
SUMMARY_COLUMNS = [
    *("pegs", "colours", "jar", "strategy", "entropy_r", "entropy_t", "guess_limit", "subtree"),
    *RESULTS,
    *("first_guess", "histogram", "n_codes", "subtree_mass_exact", "search_nodes", "seconds"),
    "strategy_params",  # a strategy of one's own: its arguments (JSON)
]


@takes_stored_rows
def summarize(rows: pd.DataFrame | StoredRows, out_dir: Path) -> str:
    """Markdown: per game, reference strategies, named entropies, (r, t) table and heatmap."""
    if not len(rows):
        return "No successful results."
    from solvers.kit.summary_parts import markdown_table

    table = results(rows)
    table.to_parquet(out_dir / "mastermind_results.parquet", index=False)
    parts = []
    whole = table[[not isinstance(s, str) for s in table["subtree"]]]  # subtrees: see below
    for game, group in whole.groupby(["pegs", "colours", "jar_label"], sort=True):
        title = game_title(*game)
        parts += [f"### {title}", ""]
        ref = group[group["strategy"] != "sharma_mittal"]
        sm = group[group["strategy"] == "sharma_mittal"]
        shown = ["label", *RESULTS, "first_guess", "histogram"]
        is_grid = sm["entropy_r"].nunique() > 1 and sm["entropy_t"].nunique() > 1
        # a grid's points are in the grid table below; a line or a point of (r, t) is here
        members = named_members(sm) if is_grid else labelled_members(sm)
        lines = pd.concat([ref, members]).sort_values("expected_guesses")
        parts += [markdown_table(lines[[c for c in shown if c in lines]]), ""]
        if is_grid:
            grid = sm.pivot_table(
                index="entropy_r", columns="entropy_t", values="expected_guesses"
            ).sort_index()
            name = file_name(f"mastermind_{game[0]}x{game[1]}_{game[2].replace(',', '-')}.png")
            heatmap(grid, ref, title, out_dir / name)
            best = sm.nsmallest(1, "expected_guesses").iloc[0]
            line = (
                f"Sharma-Mittal over {len(sm)} (r, t) points: best {best['expected_guesses']:.6f} "
                f"at (r, t) = ({fmt(best['entropy_r'])}, {fmt(best['entropy_t'])}), worst "
                f"{sm['expected_guesses'].max():.6f}"
            )
            if max(grid.shape) <= GRID_SHOWN:
                table_md = markdown_table(grid_table(grid), floatfmt=".4f")
                parts += [f"{line}; rows r, columns t:", "", table_md]
            else:  # a dense sweep: the whole grid in Parquet, the heatmap, the best points here
                grid_file = name.removesuffix(".png") + "_grid.parquet"
                grid_table(grid).to_parquet(out_dir / grid_file, index=False)
                top = sm.nsmallest(GRID_SHOWN, "expected_guesses")
                parts += [
                    f"{line}. The grid ({grid.shape[0]} orders r x {grid.shape[1]} degrees t) "
                    f"is in `summary/{grid_file}` (rows r, columns t); its best "
                    f"{len(top)} points:",
                    "",
                    markdown_table(top[["entropy_r", "entropy_t", *RESULTS]], ".6g"),
                ]
            parts += ["", f"![{title}](summary/{name})", ""]
    from solvers.mastermind.optimal_summary import gap_section, subtree_section

    parts += axis_sections(whole, out_dir, SCORE)
    parts += [gap_section(whole, out_dir), subtree_section(table, out_dir)]
    return "\n".join(parts)


def results(rows: pd.DataFrame | StoredRows) -> pd.DataFrame:
    """:func:`result_table` of the rows (of stored rows: their SUMMARY_COLUMNS, histograms
    as text by DuckDB, built once for the summary and the report)."""
    if isinstance(rows, pd.DataFrame):
        return result_table(rows)
    have = set(rows.columns)
    cols = ", ".join(
        "array_to_string(histogram, ',') AS histogram" if c == "histogram" else quoted(c)
        for c in SUMMARY_COLUMNS
        if c in have
    )
    sql = f"SELECT {cols} FROM rows"
    return rows.memo("mastermind.result_table", lambda: result_table(rows.query(sql)))


def result_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One line per result with a readable strategy label and game label."""
    table = rows.copy()
    optional = ("jar", "entropy_r", "entropy_t", "total_guesses", "subtree", "guess_limit")
    for col in (*optional, "strategy_params"):
        if col not in table:
            table[col] = None
    table["jar_label"] = per_value(table, ["jar"], jar_label)
    named = ["strategy", "entropy_r", "entropy_t", "guess_limit", "strategy_params"]
    table["label"] = per_value(table, named, label)
    if len(table) and not isinstance(table["histogram"].iloc[0], str):  # lists, not text
        table["histogram"] = [",".join(map(str, h)) for h in table["histogram"]]
    totals = [None if v is None or v != v else int(v) for v in table["total_guesses"]]
    table["total_guesses"] = pd.Series(totals, index=table.index, dtype=object)
    keep = ["pegs", "colours", "jar", "jar_label", "strategy", "strategy_params", "entropy_r"]
    keep += ["entropy_t", "label"]
    keep += [*RESULTS, "first_guess", "histogram", "n_codes"]
    keep += ["guess_limit", "subtree", "subtree_mass_exact", "search_nodes", "seconds"]
    return table[[c for c in keep if c in table]]


def per_value(table: pd.DataFrame, columns: list[str], fn: Callable[..., str]) -> np.ndarray:
    """``fn(*values)`` for each row's values of ``columns``, computed once per distinct
    combination (a dense grid's 10^6 rows have few: a label per row took 10 s)."""
    codes = table.groupby(columns, dropna=False, sort=False).ngroup().to_numpy()
    firsts = table[columns].drop_duplicates()
    texts = [fn(*values) for values in firsts.itertuples(index=False)]
    return np.asarray(texts, dtype=object)[codes] if len(table) else np.array([], dtype=object)


def jar_label(jar: object) -> str:
    """ "uniform", or the jar's weights when they differ."""
    return "uniform" if not isinstance(jar, str) or len(set(jar.split(","))) == 1 else jar


def label(strategy: str, r: float, t: float, guess_limit: float, params: object = None) -> str:
    """A strategy's label: its name, Sharma-Mittal's (r, t), the optimum's guess limit, the
    arguments of a strategy of one's own ("mine (k=2)")."""
    text = strategy if strategy != "sharma_mittal" else f"sharma_mittal({fmt(r)}, {fmt(t)})"
    if isinstance(params, str) and params != "{}":
        own = json.loads(params)
        args = (f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in own.items())
        text += f" ({', '.join(args)})"
    return text if pd.isna(guess_limit) else f"{text} (at most {int(guess_limit)} guesses)"


def named_members(sm: pd.DataFrame) -> pd.DataFrame:
    """The Sharma-Mittal rows at named points of the (r, t) plane, labelled by their names."""
    out = []
    for name, (r, t) in PRESETS.items():
        if preset_name(r, t) != name:  # a second name of the same point (gini_simpson)
            continue
        hit = sm[(sm["entropy_r"] == r) & (sm["entropy_t"] == t)]
        if len(hit):
            line = hit.iloc[0].copy()
            line["label"] = f"sharma_mittal {name} ({fmt(r)}, {fmt(t)})"
            out.append(line)
    return pd.DataFrame(out)


def labelled_members(sm: pd.DataFrame) -> pd.DataFrame:
    """Every Sharma-Mittal row, a named point of the (r, t) plane labelled by its name."""
    named = named_members(sm)
    if named.empty:
        return sm
    points = set(zip(named["entropy_r"], named["entropy_t"], strict=True))
    others = [(r, t) not in points for r, t in zip(sm["entropy_r"], sm["entropy_t"], strict=True)]
    return pd.concat([named, sm[others]])


def game_title(pegs: int, colours: int, jar: str) -> str:
    """A readable name for a game."""
    kind = "uniform jar" if jar == "uniform" else f"jar {jar}"
    return f"{pegs} pegs, {colours} colours, {kind}"


def fmt(x: float) -> str:
    """A number for labels: integers without decimals, infinity as 'inf'."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return "inf" if math.isinf(x) else f"{x:g}"


def grid_table(grid: pd.DataFrame) -> pd.DataFrame:
    """The (r, t) grid as a table with an 'r \\ t' column."""
    out = grid.copy()
    out.columns = [f"t={fmt(t)}" for t in out.columns]
    out.insert(0, "r \\ t", [fmt(r) for r in out.index])
    return out.reset_index(drop=True)


@styled
def heatmap(grid: pd.DataFrame, ref: pd.DataFrame, title: str, path: Path) -> Path:
    """Expected guesses over (r, t) as an annotated heatmap, reference strategies in the title."""
    fig, ax = subplots(figsize=(WIDTH, 5.6))
    values = grid.to_numpy(dtype=float)
    image = ax.imshow(values, cmap="viridis_r", origin="lower", aspect="auto")
    xs, ys = tick_positions(len(grid.columns)), tick_positions(len(grid.index))
    ax.set_xticks(xs, [fmt(grid.columns[j]) for j in xs], rotation=90 if len(xs) > 8 else 0)
    ax.set_yticks(ys, [fmt(grid.index[i]) for i in ys])
    ax.set_xlabel("degree t")
    ax.set_ylabel("order r")
    best = np.nanmin(values)
    if values.size <= ANNOTATED and values.shape[1] <= ANNOTATED_COLUMNS:
        for i, j in np.ndindex(values.shape):
            v = values[i, j]
            if np.isfinite(v):
                weight = "bold" if v <= best + 1e-12 else "normal"
                colour = "white" if image.norm(v) > 0.6 else "black"
                ax.text(
                    j,
                    i,
                    f"{v:.3f}",
                    ha="center",
                    va="center",
                    fontsize=9.5,
                    weight=weight,
                    c=colour,
                )
    else:  # too many cells to write in: mark the best ones
        i, j = np.nonzero(values <= best + 1e-12)
        ax.plot(j, i, "r*", ms=8, label=f"best {best:.4f}")
        ax.legend(loc="upper right")
    refs = textwrap.fill(references(ref, ".3f"), 72)  # every reference shown, none cut
    ax.set_title(f"Expected guesses, Sharma-Mittal strategy, {title}\n{refs}", fontsize=10.5)
    fig.colorbar(image, ax=ax, label="expected number of guesses")
    return save_figure(fig, path)


def references(ref: pd.DataFrame, digits: str = ".6f") -> str:
    """The reference strategies' expected guesses, each by its label ("optimal (at most 5
    guesses)" apart from "optimal"), as "label value, ..."."""
    values = zip(ref["label"], ref["expected_guesses"], strict=True)
    return ", ".join(f"{label} {value:{digits}}" for label, value in values)


def tick_positions(n: int) -> list[int]:
    """Every k-th of the positions 0..n-1, evenly spaced, at most TICKS of them."""
    return list(range(0, n, math.ceil(n / TICKS))) if n else []
