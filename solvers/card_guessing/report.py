"""HTML report sections of ``card_guessing`` rows: scores per deck, the gamma sweep and the
(r, t) entropy grid, as sortable tables and interactive Plotly figures.

The tables are the summary's (:mod:`solvers.card_guessing.summary` and
:mod:`solvers.card_guessing.summary.info`); each figure's hover shows the row's parameters
and its exact ``p/q`` score.  Sources: Gural, Simper & So (2019), *Information Theory in a
Card-Guessing Game* (the gamma sweep of their figure 3, the entropy-weighted strategy).
"""

from __future__ import annotations

import textwrap
from fractions import Fraction

import pandas as pd
import plotly.graph_objects as go

from solvers.card_guessing.summary import SCORE, info, score_table
from solvers.card_guessing.summary import feedback as feedback_models
from solvers.card_guessing.summary import suits52 as suits
from solvers.card_guessing.summary.rows import summary_rows
from solvers.entropy import preset_name
from solvers.kit.axis_plots import axis_report_sections
from solvers.kit.report_sections import Figure, Section, Table, heatmap, hover_fields, scatter
from solvers.kit.stored_rows import StoredRows, takes_stored_rows

HOVER = ["deck", "feedback", "strategy", "tie_break", "gamma", "entropy_r", "entropy_t"]


@takes_stored_rows
def report(rows: pd.DataFrame | StoredRows) -> list[Section]:
    """Sections: scores per deck (table and bars); the gamma sweep, the entropy grid, the
    feedback models and the equal decks where the rows hold them (of stored rows, from the
    rows :func:`rows.summary_rows` reads)."""
    if not len(rows):
        return []
    rows = summary_rows(rows)
    out = [score_section(rows)]
    if "feedback" in rows and rows["feedback"].nunique() >= 2:
        out.append(feedback_section(rows))
    gaps = suits.gap_table(rows)
    if not gaps.empty:
        out.append(equal_decks_section(gaps))
    exact_info = info._exact_info(rows)
    if not exact_info.empty:
        points = exact_info[["entropy_r", "entropy_t", "log_base"]].drop_duplicates()
        if len(points) == 1 and exact_info["gamma"].nunique() >= 3:
            out.append(gamma_section(rows, exact_info))
        if len(points) >= 4:
            out += entropy_grid_sections(rows, exact_info)
    return out + axis_report_sections(rows, SCORE)


BARS_MAX = 6  # more (deck, feedback) groups than this: the dot plot is left out (unreadable)

# The score table's columns, in words (the report's column definitions: a header's tooltip
# and the table's "Columns" list).
SCORE_WORDS = {
    "label": "the strategy, with the parameters that tell its rows apart",
    "ratio_to_optimal": "expected_score / the exact optimum's expected score on the same "
    "deck and feedback",
    "below_optimal": "the exact optimum's expected score - expected_score (the gap)",
    "above_greedy": "expected_score - greedy's best exact expected score on the same deck "
    "and feedback",
}
# the score table in the report: what a reader compares first (a phone shows these without
# scrolling sideways), then the deck and the strategy's parameters
SCORES_FIRST = [
    *("label", "expected_score", "expected_score_exact", "ratio_to_optimal", "below_optimal"),
    *("above_greedy", "std_error", "deck", "feedback"),
]


def score_section(rows: pd.DataFrame) -> Section:
    """Every strategy's score per (deck, feedback) with its ratio to the optimum; a dot plot
    whose axis spans the scores (not 0), each score's gap to the optimum written by it."""
    table = score_table(info.compact(rows)).dropna(axis=1, how="all")
    first = [c for c in SCORES_FIRST if c in table]
    shown = table[first + [c for c in table.columns if c not in first]]
    items: list = [
        "One line per result (info variants reduced to the best per deck when there are "
        f"more than {info.MANY}); ratio_to_optimal is score / the exact optimum, "
        "below_optimal the optimum - score, above_greedy score - greedy's best exact score.",
        Table(
            "Scores",
            shown.reset_index(drop=True),
            {"ratio_to_optimal": ".8f", "below_optimal": ".10f", "above_greedy": ".10f"},
            columns=SCORE_WORDS,
        ),
    ]
    if table.groupby(["deck", "feedback"]).ngroups <= BARS_MAX:
        items.append(
            Figure(
                "Expected correct guesses per strategy",
                score_dots(table, exact_optima(rows)),
                "Each panel's axis spans its scores (it does not start at 0); beside each "
                "strategy, its gap to the exact optimum (exact where both scores are).",
            )
        )
    return Section("Expected scores per deck", items)


def score_dots(table: pd.DataFrame, optima: dict[tuple[str, str], Fraction]) -> go.Figure:
    """A dot plot, one panel per (deck, feedback) with its own score axis (so that a gap of
    0.014 in 4.25 shows): one dot per strategy label (wrapped in lines of at most LABEL_WIDTH
    characters, the gap to the optimum on its last line), Monte Carlo standard errors as
    whiskers, the exact optimum (``optima``: (deck, feedback) -> score) a dashed line."""
    from plotly.subplots import make_subplots

    groups = list(table.groupby(["deck", "feedback"], sort=False))
    # px per panel: its dots are evenly spaced, each as tall as the panel's longest label
    # (the gap's line among them) and at least 34 px
    heights = [
        40 + len(part) * max(34, 17 * max(wrapped(x).count("<br>") + 3 for x in part["label"]))
        for _, part in groups
    ]
    plot = sum(heights) + PANEL_GAP * (len(groups) - 1)
    fig = make_subplots(
        rows=len(groups),
        cols=1,
        row_heights=heights,
        vertical_spacing=PANEL_GAP / plot if len(groups) > 1 else 0,
        subplot_titles=[f"deck ({deck}), {feedback} feedback" for (deck, feedback), _ in groups],
    )
    for note in fig.layout.annotations:  # each panel's title at its left, off the toolbar
        note.update(x=0, xanchor="left", font={"size": 13})
    for i, ((deck, feedback), part) in enumerate(groups, start=1):
        optimum = optima.get((deck, feedback))
        data, lines = hover_fields(
            part, ["label", "deck", "feedback", "expected_score", "expected_score_exact"]
        )
        labels = [
            wrapped(label) + gap_line(row, optimum)
            for label, row in zip(part["label"], part.to_dict("records"), strict=True)
        ]
        fig.add_trace(
            go.Scatter(
                x=part["expected_score"].tolist(),
                y=labels,
                error_x=error_bars(part),
                mode="markers",
                marker={"size": 11, "color": "#1f77b4"},
                name=f"({deck}) {feedback}",
                showlegend=False,
                customdata=data,
                hovertemplate=lines + "<extra></extra>",
            ),
            row=i,
            col=1,
        )
        if optimum is not None:
            fig.add_vline(
                x=float(optimum), line={"dash": "dash", "color": "#888", "width": 1}, row=i, col=1
            )
        fig.update_xaxes(title_text="expected correct guesses", row=i, col=1)
        fig.update_yaxes(title_text="strategy", automargin=True, autorange="reversed", row=i, col=1)
    # the top margin keeps the first panel's title below the toolbar (modebar)
    fig.update_layout(hovermode="closest", height=plot + 150, margin={"t": 70, "b": 80, "l": 10})
    return fig


PANEL_GAP = 110  # px between two panels: the upper one's ticks and axis title, the next title


def exact_optima(rows: pd.DataFrame) -> dict[tuple[str, str], Fraction]:
    """(deck, feedback) -> the exact optimum's score, where an exact optimal row is stored."""
    method = rows["method"] if "method" in rows else pd.Series("exact", index=rows.index)
    found = rows[(rows["strategy"] == "optimal") & (method.fillna("exact") == "exact")]
    found = found.dropna(subset=["expected_score_exact"])
    optima: dict[tuple[str, str], Fraction] = {}
    for deck, feedback, score in zip(
        found["deck"], found["feedback"], found["expected_score_exact"], strict=True
    ):
        optima[deck, feedback] = max(Fraction(score), optima.get((deck, feedback), Fraction(0)))
    return optima


def gap_line(row: dict, optimum: Fraction | None) -> str:
    """A dot's label's last lines: the gap to the exact optimum ``optimum``, as "gap 0.0143"
    and, where the row's score is exact, "(8/560)" below it; "" where no optimum is known."""
    if optimum is None or pd.isna(row["expected_score"]):
        return ""
    exact = row.get("expected_score_exact")
    if isinstance(exact, str) and exact:
        gap = optimum - Fraction(exact)
        if gap == 0:
            return "<br>gap 0"
        fraction = fraction_text(gap, optimum)  # on a line of its own: a phone's width
        if fraction:
            return f"<br>gap {float(gap):.3g}<br>({fraction})"
        return f"<br>gap {float(gap):.3g}"
    return f"<br>gap {float(optimum) - row['expected_score']:.3g}"


def fraction_text(gap: Fraction, optimum: Fraction) -> str:
    """``gap`` as p/q over the optimum's denominator where that holds it whole (8/560 rather
    than 1/70, to read against 2383/560), else reduced; "" when longer than LABEL_WIDTH."""
    q = optimum.denominator
    text = f"{gap.numerator}/{gap.denominator}"
    if (gap * q).denominator == 1:
        text = f"{gap.numerator * (q // gap.denominator)}/{q}"
    return text if len(text) <= LABEL_WIDTH - 2 else ""


LABEL_WIDTH = 22  # characters of a bar's label on one line


def wrapped(label: str) -> str:
    """A bar's label in lines of at most LABEL_WIDTH characters (broken at spaces)."""
    return "<br>".join(textwrap.wrap(str(label), LABEL_WIDTH)) or str(label)


def error_bars(part: pd.DataFrame) -> dict | None:
    """Monte Carlo standard errors as whiskers, or None where every row is exact."""
    if "std_error" not in part or not part["std_error"].notna().any():
        return None
    return {"type": "data", "array": part["std_error"].fillna(0).tolist(), "visible": True}


def gamma_section(rows: pd.DataFrame, exact_info: pd.DataFrame) -> Section:
    """Info's exact score against gamma per deck, greedy and the optimum as references."""
    curves = exact_info.assign(series="info")
    refs = reference_rows(rows, exact_info)
    frame = pd.concat([curves, refs], ignore_index=True)
    frame["panel"] = "deck (" + frame["deck"] + ")"
    hover = [*HOVER, "expected_score_exact"]
    fig = scatter(
        frame,
        x="gamma",
        y="expected_score",
        group="series",
        facet="panel",
        hover=hover,
        title="Info strategy against gamma, one panel per deck (references: greedy, optimal)",
        x_title="gamma (weight of the entropy term)",
        y_title="expected correct guesses",
    )
    return Section(
        "Info strategy against gamma",
        [
            "Gural, Simper & So (2019), figure 3: exact expected score of the entropy-weighted "
            "strategy over gamma; greedy and the optimum drawn across the same gammas.",
            Figure("Expected score against gamma", fig),
            Table("Gamma intervals where info is optimal", info.gamma_table(rows, exact_info)),
        ],
    )


def reference_rows(rows: pd.DataFrame, exact_info: pd.DataFrame) -> pd.DataFrame:
    """Greedy and optimal rows repeated at every gamma of the sweep (flat reference lines)."""
    gammas = sorted(exact_info["gamma"].unique())
    out = []
    for name in ("greedy", "optimal"):
        ref = info._reference(rows, name)
        for deck, score in ref.items():
            if deck not in set(exact_info["deck"]):
                continue
            for g in (gammas[0], gammas[-1]):
                out.append(
                    {
                        "deck": deck,
                        "strategy": name,
                        "series": name,
                        "gamma": g,
                        "expected_score": float(score),
                        "expected_score_exact": f"{score.numerator}/{score.denominator}",
                    }
                )
    return pd.DataFrame(out)


def entropy_grid_sections(rows: pd.DataFrame, exact_info: pd.DataFrame) -> list[Section]:
    """Per deck, a heatmap of the best ratio to the optimum over (r, t), and the named points."""
    ratios = exact_ratios(rows, exact_info)
    if ratios.empty:
        return []
    items: list = [
        "For every (r, t): the best ratio of info's exact score to the optimum over the gamma "
        "grid; hover a cell for the best gamma, its exact score and the exact ratio."
    ]
    for deck, part in ratios.groupby("deck", sort=False):
        fig = heatmap(
            part,
            x="entropy_r",
            y="entropy_t",
            z="best_ratio",
            hover=["deck", "best_gamma", "best_score_exact", "ratio_exact", "reaches_optimum"],
            title=f"deck ({deck}): best score / optimum",
            x_title="order r of the Sharma-Mittal entropy",
            y_title="degree t of the Sharma-Mittal entropy",
            z_title="best score / optimum",
        )
        items.append(Figure(f"Deck ({deck})", fig))
    items.append(Table("Best ratio per deck and (r, t)", ratios, {"best_ratio": ".12g"}))
    worst = ratios.groupby(["entropy_r", "entropy_t"], as_index=False).agg(
        worst_deck_ratio=("best_ratio", "min"), optimal_on_all=("reaches_optimum", "all")
    )
    worst["member"] = [
        preset_name(r, t) or "" for r, t in zip(worst["entropy_r"], worst["entropy_t"], strict=True)
    ]
    items.append(Table("Every (r, t): worst deck's best ratio", worst))
    return [Section("Which entropies make info optimal", items)]


def exact_ratios(rows: pd.DataFrame, exact_info: pd.DataFrame) -> pd.DataFrame:
    """Per deck and (r, t): the best ratio (float and exact), its gamma and exact score."""
    ratios = info.best_ratios(rows, exact_info)
    if ratios.empty:
        return ratios
    best = info._reference(rows, "optimal")
    keys = ["deck", "entropy_r", "entropy_t", "gamma"]
    scores = exact_info.drop_duplicates(keys).set_index(keys)["expected_score_exact"]
    found = [
        scores.get((d, r, t, g))
        for d, r, t, g in zip(
            ratios["deck"],
            ratios["entropy_r"],
            ratios["entropy_t"],
            ratios["best_gamma"],
            strict=True,
        )
    ]
    ratios["best_score_exact"] = found
    ratios["ratio_exact"] = [
        str(Fraction(s) / best[d]) if s is not None else None
        for d, s in zip(ratios["deck"], found, strict=True)
    ]
    return ratios


# the feedback models' table's columns, in words
MODEL_WORDS = {
    "cards": "cards in the deck",
    **{m: f"best expected score under {m} feedback" for m in feedback_models.MODELS},
    **{f"{m}_strategy": f"the strategy of the best {m} score" for m in feedback_models.MODELS},
    **{
        f"{m}_std_error": f"Monte Carlo standard error of the best {m} score (empty: exact)"
        for m in feedback_models.MODELS
    },
    "bound_lower": "complete feedback: Feder and Merhav's curve as Gural, Simper & So (2019) "
    "publish it (not a bound at every step)",
    "bound_lower_chords": "complete feedback: the chords of that curve, a rigorous lower bound",
    "bound_upper": "complete feedback: Fano's upper bound",
}


def feedback_section(rows: pd.DataFrame) -> Section:
    """The best score per deck under each feedback model, with the entropy bounds."""
    return Section(
        "Feedback models compared",
        [
            "Best available strategy per deck and feedback model (an exact optimum where one "
            "is computed, else the best Monte Carlo estimate); for complete feedback the "
            "entropy bounds of Gural, Simper & So (2019) (bound_lower, bound_lower_chords) "
            "and Fano's bound (bound_upper).",
            Table("Feedback models", feedback_models.comparison_table(rows), columns=MODEL_WORDS),
        ],
    )


def equal_decks_section(gaps: pd.DataFrame) -> Section:
    """Optimal minus greedy on equal decks (m cards of r types), against m, one line per r."""
    frame = gaps.assign(types=[f"r = {int(r)}" for r in gaps["r"]])
    fig = scatter(
        frame,
        x="m",
        y="gap",
        group="types",
        hover=["r", "cards", "optimal", "greedy", "states"],
        title="Optimal minus greedy, yes/no feedback (float solver)",
        x_title="m (cards of each type)",
        y_title="optimal - greedy",
    )
    return Section(
        "Equal decks (m cards of each of r types)",
        [
            "From the layered float solver (checked against the exact solver to 1e-12 where "
            "both run); gap = optimal - greedy.",
            Figure("Optimal minus greedy against m", fig),
            Table("Equal decks", gaps),
        ],
    )
