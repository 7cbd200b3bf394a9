"""Summary sections of strategy ``optimal``: heuristic minus optimum, and subtree totals.

Two sections of the mastermind summary (called from :mod:`solvers.mastermind.summary`):

* per game with a whole-game optimum, every other strategy's expected guesses minus the
  optimum (exact differences of rationals), the best Sharma-Mittal (r, t) of the grid among
  them, as a table and one grouped bar chart;
* rows that each hold one subtree (a first guess and an answer, parameter ``subtree``) added
  up per first guess (a study fanned out by subtrees, such as 4 pegs x 7 colours); the least
  total over the first guesses is the optimum once every symmetry class of first guesses has
  all its subtrees.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

from solvers.kit.summary_parts import PALETTE, WIDTH, save_figure, styled, subplots

CLASSICS = ("minimax", "expected_size", "most_parts", "first_feasible")
BUILT_IN = (*CLASSICS, "sharma_mittal", "optimal")  # other names: strategies of one's own


def _column(rows: pd.DataFrame, name: str) -> pd.Series:
    """A column of rows, or a column of None where the rows have none."""
    return rows[name] if name in rows else pd.Series([None] * len(rows), index=rows.index)


def _absent(value: object) -> bool:
    """Whether a cell holds no value (None or NaN)."""
    return value is None or (
        not isinstance(value, list | tuple | np.ndarray) and bool(pd.isna(value))
    )


def whole_game_optima(rows: pd.DataFrame) -> pd.DataFrame:
    """The optimal rows over a whole game without a guess limit."""
    opt = rows[rows["strategy"] == "optimal"]
    keep = [
        _absent(s) and _absent(g)
        for s, g in zip(_column(opt, "subtree"), _column(opt, "guess_limit"), strict=True)
    ]
    return opt[keep]


def gap_table(table: pd.DataFrame) -> pd.DataFrame:
    """Per game (pegs, colours, jar_label): each classic strategy's and the best Sharma-Mittal
    point's expected guesses minus the optimum's, exact and as a float, with the optimum."""
    optima = whole_game_optima(table)
    out = []
    for _, best in optima.iterrows():
        game = (table["pegs"] == best["pegs"]) & (table["colours"] == best["colours"])
        game &= table["jar_label"] == best["jar_label"]
        others = table[game & (table["strategy"] != "optimal")]
        value = Fraction(best["expected_guesses_exact"])
        line = {
            "game": f"{best['pegs']}x{best['colours']} {best['jar_label']}",
            "optimum": float(value),
            "optimum_exact": str(value),
            "optimal_first_guess": best["first_guess"],
        }
        for s in CLASSICS:
            hit = others[others["strategy"] == s]
            line[s] = _gap(hit, value)
        sm = others[others["strategy"] == "sharma_mittal"]
        line["best_sharma_mittal"] = _gap(sm, value)
        if len(sm):
            top = sm.loc[sm["expected_guesses"].idxmin()]
            line["best_(r, t)"] = f"({top['entropy_r']:g}, {top['entropy_t']:g})"
        own = others[~others["strategy"].isin(BUILT_IN)]  # strategies of one's own
        for name, rows in own.groupby("label", sort=True):
            line[name] = _gap(rows, value)
        out.append(line)
    return pd.DataFrame(out)


def _gap(rows: pd.DataFrame, optimum: Fraction) -> float:
    """The least expected guesses among rows minus the optimum (exact, then float); NaN: none."""
    if not len(rows):
        return float("nan")
    least = min(Fraction(v) for v in rows["expected_guesses_exact"])
    if least < optimum:
        raise ValueError(f"a strategy beats the optimum: {least} < {optimum}")
    return float(least - optimum)


@styled
def gap_plot(gaps: pd.DataFrame, path: Path) -> Path:
    """Grouped bars: heuristic minus optimum (expected guesses) per game and strategy."""
    names = [*CLASSICS, "best_sharma_mittal"]
    fig, ax = subplots(figsize=(WIDTH, 4.4), layout="constrained")
    width = 0.8 / len(names)
    x = np.arange(len(gaps))
    for i, name in enumerate(names):
        ax.bar(x + (i - (len(names) - 1) / 2) * width, gaps[name], width, label=name,
               color=PALETTE[i % len(PALETTE)])  # fmt: skip
    ax.set_xticks(x, [g.replace(" ", "\n", 1) for g in gaps["game"]])
    ax.set_xlabel("game (pegs x colours) and colour jar")
    ax.set_ylabel("expected guesses over the optimum")
    ax.grid(True, axis="y", alpha=0.3)
    fig.legend(loc="outside upper center", ncol=3, frameon=False)
    return save_figure(fig, path, tight=False)


def subtree_totals(rows: pd.DataFrame) -> pd.DataFrame:
    """Per game and first guess: the subtrees' rows added up (exact), and whether complete."""
    opt = rows[(rows["strategy"] == "optimal") & ~_column(rows, "subtree").map(_absent)]
    opt = opt[opt["subtree"].str.contains(":")]
    if not len(opt):
        return pd.DataFrame()
    opt = opt.assign(
        first=opt["subtree"].str.partition(":")[0],
        limit=[None if _absent(g) else int(g) for g in _column(opt, "guess_limit")],
    )
    out = []
    keys = ["pegs", "colours", "jar_label", "limit", "first"]
    for key, group in opt.groupby(keys, sort=True, dropna=False):
        group = group.drop_duplicates("subtree")
        mass = sum(Fraction(m) for m in group["subtree_mass_exact"])
        mean = sum(
            Fraction(m) * Fraction(e)
            for m, e in zip(
                group["subtree_mass_exact"], group["expected_guesses_exact"], strict=True
            )
        )
        hists = [_counts(h) for h in group["histogram"]]
        hist = np.zeros(max(len(h) for h in hists), dtype=np.int64)
        for h in hists:
            hist[: len(h)] += h
        totals = [None if _absent(t) else int(t) for t in group["total_guesses"]]
        out.append(
            {
                **dict(zip(keys, key, strict=True)),
                "subtrees": len(group),
                "complete": mass == 1,
                "codes": int(group["n_codes"].sum()),
                "expected_guesses": float(mean / mass) if mass else float("nan"),
                "expected_guesses_exact": str(mean / mass) if mass else "",
                "total_guesses": None if None in totals else sum(totals),
                "max_guesses": int(group["max_guesses"].max()),
                "histogram": ",".join(map(str, hist)),
                "search_nodes": int(group["search_nodes"].sum()),
                "seconds": float(group["seconds"].sum()),
                "slowest_subtree_s": float(group["seconds"].max()),
            }
        )
    return pd.DataFrame(out)


def _counts(histogram: object) -> np.ndarray:
    """A histogram cell (a list, or "1,5,37" as the result table writes it) as an array."""
    if isinstance(histogram, str):
        return np.array([int(x) for x in histogram.split(",") if x], dtype=np.int64)
    return np.asarray(histogram, dtype=np.int64)


def first_guess_classes(pegs: int, colours: int, jar: str) -> int:
    """How many symmetry classes of first guesses the game has."""
    from solvers.mastermind.optimal.symmetries import Symmetries

    weights = [1] * colours if jar == "uniform" else [Fraction(w) for w in jar.split(",")]
    return len(Symmetries(int(pegs), int(colours), weights).representatives())


def subtree_section(rows: pd.DataFrame, out_dir: Path) -> str:
    """Markdown: subtree totals per first guess and, when complete, the optimum."""
    from solvers.kit.summary_parts import markdown_table

    totals = subtree_totals(rows)
    if not len(totals):
        return ""
    totals.to_parquet(out_dir / "mastermind_subtree_totals.parquet", index=False)
    parts = ["### Optimal strategy from subtrees", ""]
    for key, group in totals.groupby(["pegs", "colours", "jar_label", "limit"], dropna=False):
        pegs, colours, jar, limit = key
        classes = first_guess_classes(pegs, colours, jar)
        done = group[group["complete"]]
        title = f"{pegs} pegs, {colours} colours, {'uniform jar' if jar == 'uniform' else jar}"
        if not _absent(limit):
            title += f", at most {int(limit)} guesses"
        parts += [f"#### {title}", "", markdown_table(group.drop(columns=["limit"])), ""]
        if len(done) == classes:
            best = done.loc[done["expected_guesses"].idxmin()]
            total = "" if _absent(best["total_guesses"]) else f", total {best['total_guesses']}"
            parts += [
                f"Optimum (all {classes} first-guess classes complete): "
                f"{best['expected_guesses']:.6f} = {best['expected_guesses_exact']}{total}, "
                f"first guess {best['first']}; solver wall time {group['seconds'].sum():.0f} s "
                "summed over the subtrees.",
                "",
            ]
        else:
            parts += [
                f"{len(done)} of {classes} first-guess classes have all their subtrees: "
                "no optimum claimed yet (the least complete total is only an upper bound).",
                "",
            ]
    return "\n".join(parts)


def gap_section(table: pd.DataFrame, out_dir: Path) -> str:
    """Markdown: heuristic minus optimum per game, a table and a plot."""
    from solvers.kit.summary_parts import markdown_table

    gaps = gap_table(table)
    if not len(gaps):
        return ""
    gaps.to_parquet(out_dir / "mastermind_gaps.parquet", index=False)
    gap_plot(gaps, out_dir / "mastermind_gaps.png")
    return "\n".join(
        [
            "### Heuristic minus optimum",
            "",
            "Expected guesses of each strategy minus the optimal strategy's (exact rationals, "
            "shown as floats); best_sharma_mittal is the best (r, t) point of the grid.",
            "",
            markdown_table(gaps, floatfmt=".6f"),
            "",
            "![heuristic minus optimum](summary/mastermind_gaps.png)",
            "",
        ]
    )
