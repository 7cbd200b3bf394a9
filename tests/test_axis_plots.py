"""A strategy's score against a numeric parameter of its grid (solvers/kit/axis_plots.py):
where a strategy's parameter (a built-in's, or an argument of a strategy of one's own) takes
three numeric values or more, the family's summary draws the headline score against it, a
panel per deck, with the deck's optimum and the best point, and the report shows the same
points; a parameter of two values gets no such figure.  The figures' data is read back from
the drawn lines, never from pixels."""

from __future__ import annotations

import sys
import textwrap

import matplotlib
import pandas as pd
import pytest

import solvers.kit.axis_plots as axis_plots
from solvers import solve
from solvers.kit.summary_parts import saved_check
from tests.helpers.own_strategy_source import SWITCH_AFTER_NO

BIAS = '''
class Bias:
    """Higher or lower: "higher" when the cards above, plus ``bias``, are at least the cards
    below plus ``slack``."""

    def __init__(self, bias=0, slack=0):
        self.bias, self.slack = bias, slack

    def start(self, ranks, suits):
        return (suits,) * ranks

    def update(self, left, card):
        return left[: card - 1] + (left[card - 1] - 1,) + left[card:]

    def call(self, left, card):
        above, below = sum(left[card:]), sum(left[: card - 1])
        return "higher" if above + self.bias >= below + self.slack else "lower"
'''


@pytest.fixture
def own_module(tmp_path, monkeypatch):
    """A user's module (the card game's SwitchAfterNo, high-low's Bias) importable as
    ``axis_own``."""
    (tmp_path / "axis_own.py").write_text(SWITCH_AFTER_NO + textwrap.dedent(BIAS))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "axis_own", raising=False)
    return "axis_own"


@pytest.fixture
def drawn(monkeypatch):
    """The figures the summaries save, by file name (each is saved as well)."""
    figures = {}
    save = axis_plots.save_figure

    def keep(fig, path, **kwargs):
        figures[path.name] = fig
        return save(fig, path, **kwargs)

    monkeypatch.setattr(axis_plots, "save_figure", keep)
    return figures


def frame(rows: list[dict], family: str) -> pd.DataFrame:
    assert all(row["status"] == "ok" for row in rows), rows
    return pd.DataFrame(rows).assign(family=family)


def panel_lines(fig) -> dict[str, dict[str, tuple[list, list]]]:
    """Per panel (its title): each labelled line's (x, y) as drawn."""
    return {
        ax.get_title(loc="left"): {
            line.get_label(): (list(line.get_xdata()), list(line.get_ydata()))
            for line in ax.get_lines()
            if not line.get_label().startswith("_")
        }
        for ax in fig.axes
    }


DECKS = ([2, 2, 1], [3, 2])


def test_an_own_strategy_s_integer_argument_is_drawn_against_the_score_per_deck(
    own_module, drawn, tmp_path
):
    """A card-guessing strategy of one's own run at patience 1..4 on two decks: one panel a
    deck whose line is its exact scores in order of patience, the optimum's line at the
    optimal strategy's score, the best point ringed; the caption quotes the best; the
    caller's rcParams are left as they were."""
    from solvers.card_guessing.summary import summarize

    rows, scores, optimum = [], {}, {}
    for deck in DECKS:
        name = f"deck {','.join(map(str, deck))}, feedback partial"
        best = solve({"family": "card_guessing", "deck": deck, "strategy": "optimal"})
        optimum[name] = best[0]["expected_score"]
        rows += best
        for patience in (1, 2, 3, 4):
            task = {"family": "card_guessing", "deck": deck, "strategy": "switch",
                    "strategy_target": f"{own_module}.SwitchAfterNo",
                    "strategy_params": {"patience": patience}}  # fmt: skip
            row = solve(task)[0]
            scores.setdefault(name, []).append(row["expected_score"])
            rows.append(row)
    before = dict(matplotlib.rcParams)
    text = summarize(frame(rows, "card_guessing"), tmp_path)
    assert dict(matplotlib.rcParams) == before
    name = "card_guessing_switch_against_patience.png"
    lines = panel_lines(drawn[name])
    assert list(lines) == list(scores)
    for deck, panel in lines.items():
        assert panel["switch"] == ([1, 2, 3, 4], pytest.approx(scores[deck]))
        assert panel["optimum (optimal)"][1] == pytest.approx([optimum[deck]] * 2)
        top = max(scores[deck])
        assert panel["best point"] == ([scores[deck].index(top) + 1], [pytest.approx(top)])
        assert f"{deck}: {top:.6g} at patience = " in text
    assert f"![switch against patience](summary/{name})" not in text  # linked from its folder
    assert f"![switch against patience]({tmp_path.name}/{name})" in text
    assert saved_check(tmp_path / name)[0] == "ok"
    points = pd.read_parquet(tmp_path / name.replace(".png", ".parquet"))
    assert points["expected_score"].tolist() == pytest.approx(sum(scores.values(), []))


def high_low_rows(module: str) -> list[dict]:
    """High-low on two decks: the optimum, and Bias at bias 0..3 and slack 0, 1."""
    rows = []
    for ranks in (3, 4):
        game = {"family": "high_low", "ranks": ranks, "suits": 2}
        rows += solve({**game, "strategy": "optimal"})
        for bias in (0, 1, 2, 3):
            for slack in (0, 1):
                own = {"strategy_target": f"{module}.Bias", "strategy_params":
                       {"bias": bias, "slack": slack}}  # fmt: skip
                rows += solve({**game, "strategy": "lean", **own})
    return rows


def test_high_low_draws_a_line_per_other_value_and_nothing_for_a_two_valued_axis(
    own_module, drawn, tmp_path
):
    """High-low's summary: P(every call right) of an own strategy against its argument
    ``bias`` (4 values), one line per value of ``slack`` (2 values, so no figure of its
    own), the optimal strategy's P as the optimum; the caption names where the best is."""
    from solvers.high_low.summary import summarize

    rows = frame(high_low_rows(own_module), "high_low")
    text = summarize(rows, tmp_path)
    assert "lean against bias" in text and "against slack" not in text
    assert not list(tmp_path.glob("*against_slack*"))
    lines = panel_lines(drawn["high_low_lean_against_bias.png"])
    assert list(lines) == ["ranks 3, suits 2, ties lose", "ranks 4, suits 2, ties lose"]
    for ranks, panel in zip((3, 4), lines.values(), strict=True):
        mine = rows[(rows["strategy"] == "lean") & (rows["ranks"] == ranks)]
        best = rows[(rows["strategy"] == "optimal") & (rows["ranks"] == ranks)]
        for slack in (0, 1):
            want = mine[mine["strategy_params"].str.contains(f'"slack":{slack}')]
            label = next(k for k in panel if f"slack={slack}" in k)  # lines of equal points
            assert panel[label][0] == [0, 1, 2, 3]  # are drawn once, named together
            assert panel[label][1] == pytest.approx(want["p_perfect"].tolist())
        assert panel["optimum (optimal)"][1] == pytest.approx([best["p_perfect"].iloc[0]] * 2)
        assert panel["best point"][1] == [pytest.approx(mine["p_perfect"].max())]
    # the best is reached at bias 0 with either slack and at bias 1 with slack 1 (8/45 on
    # 3 ranks): the caption names each value with the other parameters there
    assert "0.177778 at bias = 0 (slack=0 and slack=1), 1 (slack=1)" in text


def test_the_report_shows_the_points_the_summary_draws(own_module):
    """High-low's report: a figure per drawn axis whose traces hold the summary's points
    (each line's P against bias) and the optimum of each deck."""
    from solvers.high_low.report import report

    rows = frame(high_low_rows(own_module), "high_low")
    sections = [s for s in report(rows) if s.title == "Scores against a strategy's parameter"]
    assert len(sections) == 1 and [f.title for f in sections[0].items] == ["lean against bias"]
    figure = sections[0].items[0].figure
    points = {}
    for trace in figure.data:
        points.setdefault(trace.name, []).append((list(trace.x), list(trace.y)))
    mine = rows[rows["strategy"] == "lean"]
    assert sum(len(y) for name, parts in points.items() if "slack" in name
               for _, y in parts) == len(mine)  # fmt: skip
    optimal = rows[rows["strategy"] == "optimal"]["p_perfect"].tolist()
    assert [y[0] for _, y in points["optimum (optimal)"]] == pytest.approx(optimal)
    assert "lean's P(every call right) against its argument bias" in sections[0].items[0].note


def test_more_combinations_than_lines_draw_the_best_over_them(drawn, tmp_path):
    """Five values of t beside three of r: at each r the line is the best (fewest guesses)
    over t, its t named in the points; the caption says so; no deck without its optimum
    strategy gets an optimum line."""
    from solvers.kit.axis_plots import MAX_LINES, axis_sections
    from solvers.mastermind.summary import SCORE

    rs, ts = (0.5, 1.0, 2.0), (0.0, 1.0, 2.0, 3.0, 4.0)
    assert len(ts) > MAX_LINES
    rows = pd.DataFrame(
        [{"strategy": "sharma_mittal", "pegs": 2, "colours": 3, "jar": None, "entropy_r": r,
          "entropy_t": t, "expected_guesses": 3 + r + (t - 2) ** 2} for r in rs for t in ts]
    )  # fmt: skip
    text = "\n".join(axis_sections(rows, tmp_path, SCORE))
    assert "at each value the best over entropy_t" in text and "dotted line" not in text
    panel = panel_lines(drawn["mastermind_sharma_mittal_against_entropy_r.png"])
    line = panel["pegs 2, colours 3"]["best over entropy_t"]
    assert line == ([0.5, 1.0, 2.0], [3.5, 4.0, 5.0])
    assert "best over entropy_t" in text and "3.5 at entropy_r = 0.5 (entropy_t=2)" in text
    assert "against_entropy_t" in " ".join(drawn)  # t has 5 values: drawn too
