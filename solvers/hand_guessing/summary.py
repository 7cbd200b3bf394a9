"""Summary of ``hand_guessing`` rows: exact tables (chunks added up), samples, histograms."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

from solvers.kit.axis_plots import Score, axis_sections
from solvers.kit.stored_rows import StoredRows, quoted, takes_stored_rows
from solvers.kit.summary_parts import WIDTH, save_figure, styled, subplots, wrapped

# The score the summary and the report draw against a strategy's numeric parameter (r or t
# of Sharma-Mittal, an argument of one's own: solvers.kit.axis_plots); the game has no optimum
SCORE = Score(
    "hand_guessing",
    "average_guesses",
    "average number of guesses",
    decks=("ranks", "suits", "cards"),
    higher_is_better=False,
    keys=("method",),
)
# strategy_params: a strategy of one's own's arguments (JSON), one line per value
GAME = ["ranks", "suits", "cards", "strategy", "entropy_r", "entropy_t", "first_guess"]
GAME += ["strategy_params"]
SHOWN = [
    "cards",
    "label",
    "first_guess",
    "method",
    "chunks",
    "answers",
    "total_guesses",
    "average_guesses",
    "standard_error",
    "average_guesses_exact",
    "max_guesses",
    "histogram",
]


@takes_stored_rows
def summarize(rows: pd.DataFrame | StoredRows, out_dir: Path) -> str:
    """Markdown: per deck, one line per strategy and hand size, then a histogram plot."""
    if not len(rows):
        return "No successful results."
    from solvers.kit.summary_parts import markdown_table

    out_dir.mkdir(parents=True, exist_ok=True)
    table = result_table(rows)
    table.to_parquet(out_dir / "hand_guessing_results.parquet", index=False)
    parts = []
    for (ranks, suits), deck in table.groupby(["ranks", "suits"], sort=True):
        name = "hand_guessing_histograms.png"
        if (ranks, suits) != (13, 4):
            name = f"hand_guessing_histograms_{ranks}x{suits}.png"
        title = f"{ranks} ranks x {suits} suits ({ranks * suits} cards)"
        histogram_plot(deck, title, out_dir / name)
        shown = deck.assign(histogram=[",".join(map(str, h)) for h in deck["histogram"]])
        parts += [
            f"### {title}",
            "",
            "Exact lines cover every answer (chunked runs are added up; `chunks` says how many "
            "of them are stored); sample lines give the mean ± its standard error.",
            "",
            markdown_table(shown[SHOWN].astype(object).where(shown[SHOWN].notna(), None)),
            "",
            f"![guesses per hand size](summary/{name})",
            "",
        ]
    parts += axis_sections(table, out_dir, SCORE)
    return "\n".join(parts)


OPTIONAL = ("entropy_r", "entropy_t", "sample", "standard_error", "strategy_params")
CHUNK = ["n_chunks", "answer_chunk", "total_guesses", "answers", "max_guesses", "histogram"]
SAMPLED = ["task_id", *GAME, "answers", "total_guesses", "average_guesses", "standard_error"]


def result_table(rows: pd.DataFrame | StoredRows) -> pd.DataFrame:
    """One line per game and strategy: exact rows (chunks summed) and sample rows."""
    if isinstance(rows, StoredRows):
        totals, sampled = stored_chunk_totals(rows), stored_samples(rows)
    else:
        rows = last_of_each_task(rows)
        is_sample = rows["sample"].notna()
        totals, sampled = chunk_totals(rows[~is_sample]), rows[is_sample]
    lines = [exact_line(total) for total in totals.to_dict("records")]
    lines += [sample_line(row) for _, row in sampled.iterrows()]
    table = pd.DataFrame(lines)
    return table.sort_values(["ranks", "suits", "cards", "method", "label"]).reset_index(drop=True)


def chunk_totals(rows: pd.DataFrame) -> pd.DataFrame:
    """Per game (GAME, in sorted order), its chunks added up: the first row's ``n_chunks``,
    ``done`` (that chunking's chunks present), answers, guesses, the longest game and the
    histogram, each chunk counted once (its last row)."""
    out = []
    for _, group in rows.groupby(GAME, dropna=False):
        first = group.iloc[0]
        group = group.drop_duplicates(["n_chunks", "answer_chunk"], keep="last")
        same = group[group["n_chunks"] == first["n_chunks"]]
        out.append(
            {
                **{k: first[k] for k in GAME},
                "n_chunks": int(first["n_chunks"]),
                "done": int(same["answer_chunk"].nunique()),
                "answers": int(group["answers"].sum()),
                "total_guesses": int(group["total_guesses"].sum()),
                "max_guesses": int(group["max_guesses"].max()),
                "histogram": add_histograms(group["histogram"]),
            }
        )
    return pd.DataFrame(out)


def stored_chunk_totals(rows: StoredRows) -> pd.DataFrame:
    """:func:`chunk_totals` of stored rows, added up by DuckDB (10^6 chunks never reach
    pandas): each task's last row, each (game, chunking, chunk)'s last, then per game."""
    have = set(rows.columns)
    game = ", ".join(quoted(c) if c in have else f"NULL AS {quoted(c)}" for c in GAME)
    names = ", ".join(quoted(c) for c in GAME)
    sample = "sample IS NULL" if "sample" in have else "true"
    last_task = "QUALIFY row_number() OVER (PARTITION BY task_id ORDER BY _row DESC) = 1"
    if "task_id" not in have:
        last_task = ""
    return rows.query(
        f"""
        WITH tasks AS (
            SELECT {game}, {", ".join(CHUNK)}, _row FROM ordered_rows WHERE {sample} {last_task}
        ), games AS (
            SELECT *, dense_rank() OVER (ORDER BY {names}) AS game_no,
                first_value(n_chunks) OVER (PARTITION BY {names} ORDER BY _row) AS first_chunks
            FROM tasks
        ), chunks AS (
            SELECT * FROM games
            QUALIFY row_number() OVER (
                PARTITION BY game_no, n_chunks, answer_chunk ORDER BY _row DESC) = 1
        ), bins AS (
            SELECT game_no, i, sum(h) AS h FROM (
                SELECT game_no, unnest(histogram) AS h,
                    unnest(generate_series(1, len(histogram))) AS i FROM chunks
            ) GROUP BY game_no, i
        ), histograms AS (
            SELECT game_no, list(h::BIGINT ORDER BY i) AS histogram FROM bins GROUP BY game_no
        )
        SELECT {", ".join(f"any_value({quoted(c)}) AS {quoted(c)}" for c in GAME)},
            any_value(first_chunks)::BIGINT AS n_chunks,
            count(DISTINCT answer_chunk) FILTER (WHERE n_chunks = first_chunks)::BIGINT AS done,
            sum(answers)::BIGINT AS answers, sum(total_guesses)::BIGINT AS total_guesses,
            max(max_guesses)::BIGINT AS max_guesses, any_value(h.histogram) AS histogram
        FROM chunks JOIN histograms h USING (game_no)
        GROUP BY game_no ORDER BY game_no
        """
    )


def stored_samples(rows: StoredRows) -> pd.DataFrame:
    """The sample rows of stored rows (each task's last), SAMPLED and ``sample``."""
    have = set(rows.columns)
    if "sample" not in have:
        return pd.DataFrame(columns=[*SAMPLED, "sample", "max_guesses", "histogram"])
    cols = [c for c in [*SAMPLED, "sample", "max_guesses", "histogram"] if c in have]
    return last_of_each_task(rows.frame(cols, where="sample IS NOT NULL"))


def last_of_each_task(rows: pd.DataFrame) -> pd.DataFrame:
    """Each task's last row (a task stored twice before compaction counts once), with the
    OPTIONAL columns a store without them lacks (as NaN)."""
    rows = rows.drop_duplicates("task_id", keep="last") if "task_id" in rows else rows
    missing = [col for col in OPTIONAL if col not in rows]
    return rows.assign(**dict.fromkeys(missing, np.nan)) if missing else rows


def exact_line(totals: dict) -> dict:
    """The chunks of one game added up exactly (partial when chunks are missing), from
    :func:`chunk_totals`' line."""
    n_chunks, done = totals["n_chunks"], totals["done"]
    total, answers = int(totals["total_guesses"]), int(totals["answers"])
    mean = Fraction(total, answers)
    return {
        **game_columns(totals),
        "method": "exact" if done == n_chunks else "exact (partial)",
        "chunks": f"{done}/{n_chunks}",
        "answers": answers,
        "total_guesses": total,
        "average_guesses": float(mean),
        "standard_error": None,
        "average_guesses_exact": f"{mean.numerator}/{mean.denominator}",
        "max_guesses": int(totals["max_guesses"]),
        "histogram": [int(x) for x in totals["histogram"]],
    }


def sample_line(row: pd.Series) -> dict:
    """A sampled game: the sample mean and its standard error."""
    return {
        **game_columns(row),
        "method": "sample",
        "chunks": "",
        "answers": int(row["answers"]),
        "total_guesses": int(row["total_guesses"]),
        "average_guesses": float(row["average_guesses"]),
        "standard_error": float(row["standard_error"]),
        "average_guesses_exact": f"{row['average_guesses']:.4f} ± {row['standard_error']:.4f}",
        "max_guesses": int(row["max_guesses"]),
        "histogram": [int(x) for x in row["histogram"]],
    }


def game_columns(row: pd.Series) -> dict:
    """The game and strategy of a row, with a readable strategy label."""
    out = {k: row[k] for k in GAME}
    out["label"] = label(row["strategy"], row["entropy_r"], row["entropy_t"])
    params = row.get("strategy_params")
    if isinstance(params, str) and params != "{}":
        out["label"] += f" ({own_arguments(params)})"
    return out


def own_arguments(params: str) -> str:
    """A strategy of one's own's arguments from their JSON: ``lowest=true, k=2``."""
    own = json.loads(params)
    return ", ".join(f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in own.items())


def label(strategy: str, r: float, t: float) -> str:
    """``min_expected_size``, ``sharma_mittal(r, t)``, or a strategy of one's own's name."""
    if strategy != "sharma_mittal":
        return strategy
    return f"sharma_mittal({fmt(r)}, {fmt(t)})"


def fmt(x: float) -> str:
    """A number for labels: integers without decimals, infinity as 'inf'."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return "inf" if math.isinf(x) else f"{x:g}"


def add_histograms(histograms: pd.Series) -> list[int]:
    """The element-wise sum of histograms of different lengths."""
    out = np.zeros(max(len(h) for h in histograms), dtype=np.int64)
    for h in histograms:
        out[: len(h)] += np.asarray(h, dtype=np.int64)
    return out.tolist()


def same_play(lines: pd.DataFrame) -> list[tuple[str, pd.Series]]:
    """Lines of one hand size grouped by their histogram (strategies that need the same number
    of guesses on every answer draw one series): (a label naming the mean and every strategy
    of the group, the first line of it), in the order of the lines."""
    groups: dict[tuple, list] = {}
    for _, line in lines.iterrows():
        key = (line["method"], tuple(int(x) for x in line["histogram"]))
        groups.setdefault(key, []).append(line)
    out = []
    for members in groups.values():
        said = [m["label"] for m in members if m["strategy"] != "sharma_mittal"]
        sm = [(m["entropy_r"], m["entropy_t"]) for m in members if m["strategy"] == "sharma_mittal"]
        rs, ts = sorted({r for r, _ in sm}), sorted({t for _, t in sm})
        if sm and len(sm) == len(rs) * len(ts):  # every r with every t: say the two lists
            said.append(
                f"sharma_mittal r = {', '.join(map(fmt, rs))}, t = {', '.join(map(fmt, ts))}"
            )
        elif sm:
            said.append("sharma_mittal " + " ".join(f"({fmt(r)}, {fmt(t)})" for r, t in sm))
        if any(m["method"] == "sample" for m in members):
            said.append("(sample)")
        out.append((f"{members[0]['average_guesses']:.4f}: {', '.join(said)}", members[0]))
    return out


LEGEND_WIDTH = 60  # characters of a legend's line: the figure's width (WIDTH) holds them


@styled
def histogram_plot(deck: pd.DataFrame, title: str, path: Path) -> Path:
    """Share of answers found in each number of guesses, one panel per hand size (stacked,
    one x axis), one series per distinct histogram, named by its mean and its strategies."""
    sizes = sorted(deck["cards"].unique())
    # a label wider than the figure (a strategy's name of 64 characters) wrapped, each of
    # its lines given the height of a legend's line
    groups = {
        c: [
            (wrapped(label, LEGEND_WIDTH), line)
            for label, line in same_play(deck[deck["cards"] == c])
        ]
        for c in sizes
    }
    lines = {c: sum(label.count("\n") + 1 for label, _ in g) for c, g in groups.items()}
    height = sum(1.55 + 0.22 * n for n in lines.values()) + 0.6
    fig, axes = subplots(
        len(sizes), 1, figsize=(WIDTH, height), sharex=True, squeeze=False, layout="constrained"
    )
    most = max(len(line.histogram) for line in deck.itertuples(index=False))
    for ax, cards in zip(axes[:, 0], sizes, strict=True):
        for i, (label, line) in enumerate(groups[cards]):
            hist = np.asarray(line["histogram"], dtype=float)
            # each marker a little smaller than the one before: close values stay visible
            ms = max(3.0, 8.0 - 1.3 * i)
            ax.plot(np.arange(1, len(hist) + 1), hist / hist.sum(), ms=ms, label=label)
        ax.set_ylabel("share of answers")
        ax.set_xticks(range(1, most + 1))
        ax.grid(True, alpha=0.3)
        ax.legend(
            title=f"{cards} card{'s' if cards > 1 else ''}: mean guesses, strategies",
            alignment="left", loc="lower left", bbox_to_anchor=(0, 1.0), frameon=False,
            borderaxespad=0.2,
        )  # fmt: skip
    axes[-1, 0].set_xlabel("guesses needed")
    fig.suptitle(f"Guesses per hidden hand, {title}")
    return save_figure(fig, path, tight=False)
